"""The package's layering, read from its own import statements.

Data flows one way: instance -> requirements -> method -> release -> verifier -> report,
and imports flow downward with it::

    foundation   fairanon._version, fairanon.exceptions, fairanon._validation, fairanon._arrays,
                 fairanon._memory, fairanon._limits, fairanon._processes
    instances    fairanon.instances
    release      fairanon.release
    models       fairanon.models            (requirements, measures, metrics, the verifier)
    parts        fairanon.heuristics | fairanon.solver   (siblings: neither imports the other)
    methods      fairanon.methods, fairanon.distributed   (compositions; the Dask engine)
    front door   fairanon, fairanon.api, fairanon.jobs, fairanon.patterns
    tools        fairanon.cli, fairanon.bench, fairanon.patterns.command, fairanon.distributed.command,
                 fairanon.app

A module may import from its own layer or from a lower one, never from a higher one;
the two method-part packages never import each other; the verifiers import no method;
and no module-level import circle exists. Imports inside functions count as well: a
lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import functools
import shutil
from pathlib import Path

import networkx as nx
import pytest

import fairanon

PACKAGE = Path(fairanon.__file__).parent

#: (layer name, module prefixes, whether the prefixes of the layer must not import each other)
LAYERS: list[tuple[str, tuple[str, ...], bool]] = [
    ("foundation", ("fairanon._version", "fairanon.exceptions", "fairanon._validation", "fairanon._arrays",
                    "fairanon._memory", "fairanon._limits", "fairanon._processes"), False),
    ("instances", ("fairanon.instances",), False),
    ("release", ("fairanon.release",), False),
    ("models", ("fairanon.models",), False),
    ("parts", ("fairanon.heuristics", "fairanon.solver"), True),
    ("methods", ("fairanon.methods", "fairanon.distributed"), False),
    ("front door", ("fairanon.api", "fairanon.jobs", "fairanon.patterns", "fairanon"), False),
    ("tools", ("fairanon.cli", "fairanon.bench", "fairanon.patterns.command", "fairanon.distributed.command",
               "fairanon.app"), False),
]

#: Verifiers recompute everything from what they are given; they import no method.
VERIFIERS = ("fairanon.models.verify", "fairanon.patterns.verify", "fairanon.distributed.verify")
METHOD_PREFIXES = (
    "fairanon.heuristics", "fairanon.solver", "fairanon.methods", "fairanon.api",
    "fairanon.patterns.sanitize", "fairanon.patterns.dp", "fairanon.patterns.exact",
    "fairanon.patterns.publish", "fairanon.patterns.privacy", "fairanon.distributed.mondrian",
)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.lru_cache(maxsize=None)
def import_statements(text: str) -> tuple[tuple[int, int | None, str, tuple[str, ...]], ...]:
    """(line, level, module, names) of every import statement in the source `text`; level
    is None for ``import X``. Cached by text: the planted-breach tests re-read a copy of
    the package that differs from it in one file, and parsing every file is the cost."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.level, node.module or "", tuple(a.name for a in node.names)))
        elif isinstance(node, ast.Import):
            found.append((node.lineno, None, "", tuple(a.name for a in node.names)))
    return tuple(found)


def import_graph(root: Path) -> nx.DiGraph:
    """Module -> imported module, for every ``fairanon`` import in the tree at `root`.

    ``from X import name`` points at ``X.name`` when that is a module, else at ``X``.
    """
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for lineno, level, module, names in import_statements(path.read_text(encoding="utf-8")):
            targets: list[str] = []
            if level is not None:  # from X import names
                if level:
                    base = package.split(".")[: len(package.split(".")) - (level - 1)]
                    source = ".".join(base + ([module] if module else []))
                else:
                    source = module
                for alias in names:
                    sub = f"{source}.{alias}"
                    targets.append(sub if sub in files else source)
            else:
                targets = list(names)
            for target in targets:
                if target.split(".")[0] == root.name and target != name:
                    while target not in files and "." in target:
                        target = target.rpartition(".")[0]
                    graph.add_edge(name, target, line=lineno)
    return graph


def layer_of(module: str) -> tuple[int, str]:
    """(layer index, matching prefix) by the longest matching prefix."""
    best = (-1, "", "")
    for index, (_, prefixes, _) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best[2]):
                best = (index, prefix, prefix)
    if best[0] < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best[0], best[1]


def violations(root: Path) -> list[str]:
    """Every breach of the layering rules in the package at `root`, in words."""
    graph = import_graph(root)
    found = []
    for source, target, data in sorted(graph.edges(data=True)):
        (low, low_prefix), (high, high_prefix) = layer_of(target), layer_of(source)
        where = f"{source} (line {data['line']}) imports {target}"
        if low > high:
            found.append(f"{where}: upward, from layer {LAYERS[high][0]!r} into {LAYERS[low][0]!r}")
        elif low == high and LAYERS[low][2] and low_prefix != high_prefix:
            found.append(f"{where}: {high_prefix} and {low_prefix} are siblings and must not import each other")
        if source in VERIFIERS and target.startswith(METHOD_PREFIXES):
            found.append(f"{where}: a verifier imports a method")
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            cycle = [u for u, _ in nx.find_cycle(graph.subgraph(component))]
            found.append("import circle: " + " -> ".join(cycle + cycle[:1]))
    return found


def test_package_respects_its_layers():
    assert violations(PACKAGE) == []


def test_every_module_has_a_layer():
    for module in import_graph(PACKAGE):
        layer_of(module)


@pytest.mark.parametrize(
    ("module", "planted", "expected"),
    [
        ("models/verify.py", "from ..heuristics.mondrian import mondrian\n", "upward"),
        ("instances/schema.py", "from ..models.requirements import KAnonymity\n", "upward"),
        ("heuristics/mondrian.py", "from ..solver import fulldomain\n", "siblings"),
        ("models/verify.py", "def _late():\n    from ..api import anonymize\n", "upward"),
        ("instances/hierarchy.py", "from .schema import Schema\n", "import circle"),
    ],
)
def test_planted_breach_is_caught(tmp_path, module, planted, expected):
    copy = tmp_path / "fairanon"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + "\n" + planted, encoding="utf-8")
    found = violations(copy)
    assert any(expected in v and module.replace("/", ".").removesuffix(".py") in v for v in found), found
