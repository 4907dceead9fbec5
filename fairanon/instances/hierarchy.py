"""Generalization hierarchies: categorical trees and numeric interval ladders.

A :class:`Hierarchy` is a rooted tree of string labels whose leaves are the domain
values of one categorical attribute. A released cell holds a node label (a leaf is an
ungeneralized value, an inner node a generalization, the root or ``*`` a suppression).
Trees come from a nested mapping (YAML/JSON), from an ARX-style CSV (one row per leaf,
one column per level, ``;``-separated) or are flat (``*`` above every value).

An :class:`IntervalHierarchy` gives numeric attributes a ladder of fixed-width
intervals for full-domain generalization; local-recoding methods instead release the
tight ``[lo-hi]`` range of each group.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import SchemaError

__all__ = ["Hierarchy", "IntervalHierarchy", "SUPPRESSED"]

#: The label of a fully suppressed cell, accepted for every attribute.
SUPPRESSED = "*"


class Hierarchy:
    """A generalization tree over the values of a categorical attribute.

    Parameters
    ----------
    parent : mapping of str to str or None
        Each node label to its parent label; exactly one node (the root) maps to None.
    leaf_order : sequence of str, optional
        The order of the leaves (domain values); default: depth-first order of insertion.

    Notes
    -----
    Labels are unique in a tree, so a released label names exactly one node. The root
    may carry any label; ``*`` always names the root as well.

    Examples
    --------
    >>> h = Hierarchy.from_mapping({"*": {"Married": ["CF-Spouse", "Spouse Present"],
    ...                                   "Not Married": ["Divorced", "Separated"]}})
    >>> h.leaves
    ('CF-Spouse', 'Spouse Present', 'Divorced', 'Separated')
    >>> h.covers("Married", "CF-Spouse"), h.covers("Married", "Divorced")
    (True, False)
    >>> h.height, h.lca(["CF-Spouse", "Divorced"])
    (2, '*')
    """

    def __init__(self, parent: Mapping[str, str | None], leaf_order: Sequence[str] | None = None):
        self.parent: dict[str, str | None] = {str(k): (None if v is None else str(v)) for k, v in parent.items()}
        roots = [n for n, p in self.parent.items() if p is None]
        if len(roots) != 1:
            raise SchemaError(f"A hierarchy needs exactly one root; found {len(roots)}: {roots[:5]}.")
        self.root: str = roots[0]
        self.children: dict[str, list[str]] = {n: [] for n in self.parent}
        for node, par in self.parent.items():
            if par is not None:
                if par not in self.children:
                    raise SchemaError(f"Hierarchy node {node!r} has an unknown parent {par!r}.")
                self.children[par].append(node)
        self.depth: dict[str, int] = {self.root: 0}
        order: list[str] = []
        stack = [self.root]
        while stack:  # depth-first, children in insertion order
            node = stack.pop()
            order.append(node)
            for child in reversed(self.children[node]):
                self.depth[child] = self.depth[node] + 1
                stack.append(child)
        if len(order) != len(self.parent):
            raise SchemaError("A hierarchy must be a tree: some nodes are not reachable from the root.")
        dfs_leaves = [n for n in order if not self.children[n]]
        if leaf_order is None:
            leaf_order = dfs_leaves
        leaf_order = tuple(str(v) for v in leaf_order)
        if sorted(leaf_order) != sorted(dfs_leaves):
            raise SchemaError("The leaf order of a hierarchy must list each leaf exactly once.")
        self.leaves: tuple[str, ...] = leaf_order
        self.leaf_index: dict[str, int] = {v: i for i, v in enumerate(self.leaves)}
        self.height: int = max(self.depth[leaf] for leaf in self.leaves)
        # Leaf sets of every node as boolean rows over `leaves` (leaf order).
        self._node_index = {n: i for i, n in enumerate(order)}
        self._nodes = order
        mask = np.zeros((len(order), len(self.leaves)), dtype=bool)
        for leaf, j in self.leaf_index.items():
            node: str | None = leaf
            while node is not None:
                mask[self._node_index[node], j] = True
                node = self.parent[node]
        self._mask = mask

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_mapping(cls, mapping: Mapping) -> "Hierarchy":
        """Build a tree from a nested mapping ``{node: {child: ...} | [leaf, ...]}``.

        A mapping with several top-level keys gets a ``*`` root above them.
        """
        if not isinstance(mapping, Mapping) or not mapping:
            raise SchemaError(f"A hierarchy mapping must be a non-empty mapping; got {mapping!r}.")
        parent: dict[str, str | None] = {}
        leaves: list[str] = []

        def add(node, par):
            node = str(node)
            if node in parent:
                raise SchemaError(f"Hierarchy label {node!r} occurs twice; labels must be unique.")
            parent[node] = par

        def walk(sub, par):
            if isinstance(sub, Mapping):
                for key, val in sub.items():
                    add(key, par)
                    walk(val, str(key))
            elif isinstance(sub, (list, tuple)):
                for item in sub:
                    if isinstance(item, Mapping):
                        walk(item, par)
                    else:
                        add(item, par)
                        leaves.append(str(item))
            elif sub is None:
                leaves.append(par)
            else:
                add(sub, par)
                leaves.append(str(sub))

        if len(mapping) == 1:
            walk(mapping, None)
        else:
            add(SUPPRESSED, None)
            walk(mapping, SUPPRESSED)
        return cls(parent)

    @classmethod
    def from_levels(cls, rows: Iterable[Sequence[str]], *, what: str = "The hierarchy") -> "Hierarchy":
        """Build a tree from rows ``[leaf, level1, ..., top]`` (ARX's layout).

        Repeated labels on consecutive levels of a row are one node (a unary chain);
        several distinct top labels get a ``*`` root above them. Blank rows and blank
        cells at the end of a row are skipped; every other row has one cell per level,
        the same number in every row (a ragged table, with a row shorter than the others
        or an empty cell before its last level, is refused naming the row: its levels
        would not line up). `what` names the rows in messages (e.g. the file).
        """
        parent: dict[str, str | None] = {}
        leaves: list[str] = []
        rows = _level_rows(rows, what)
        if not rows:
            raise SchemaError("A hierarchy needs at least one row.")
        tops = {r[-1] for r in rows}
        extra_root = len(tops) > 1
        for row in rows:
            chain = [row[0]]
            for label in row[1:]:
                if label != chain[-1]:
                    chain.append(label)
            if extra_root:
                chain.append(SUPPRESSED)
            if chain[0] in leaves:
                raise SchemaError(f"Leaf {chain[0]!r} occurs in more than one hierarchy row.")
            leaves.append(chain[0])
            for child, par in zip(chain, chain[1:] + [None]):
                old = parent.get(child, "<unset>")
                if old != "<unset>" and old != par:
                    raise SchemaError(
                        f"Hierarchy label {child!r} has two parents ({old!r} and {par!r})."
                    )
                parent[child] = par
        return cls(parent, leaf_order=leaves)

    @classmethod
    def from_arx_csv(cls, source: str | os.PathLike | io.IOBase, sep: str = ";") -> "Hierarchy":
        """Read an ARX hierarchy CSV: one row per leaf, one column per level.

        A UTF-8 byte-order mark is skipped. A file whose every row is one field holding
        the same number of another separator (``,``, tab) is refused with a hint: it is
        almost surely written with that separator.
        """
        name = repr(os.fspath(source)) if isinstance(source, (str, os.PathLike)) else "stream"
        if isinstance(source, (str, os.PathLike)) and os.path.isfile(source):
            try:
                with open(source, newline="", encoding="utf-8-sig") as fh:
                    rows = list(csv.reader(fh, delimiter=sep))
            except UnicodeDecodeError as exc:
                raise SchemaError(f"Hierarchy file {name} is not UTF-8 text ({exc.reason}).") from None
            except csv.Error as exc:
                raise SchemaError(f"Hierarchy file {name} is not a valid CSV file: {exc}.") from None
        elif isinstance(source, (str, os.PathLike)):
            raise SchemaError(f"Hierarchy file {name} {'is a folder' if os.path.isdir(source) else 'does not exist'}.")
        else:
            rows = list(csv.reader(source, delimiter=sep))
        if rows and rows[0] and rows[0][0].startswith("\ufeff"):
            rows[0][0] = rows[0][0][1:]
        _check_separator(rows, sep, name)
        return cls.from_levels(rows, what=f"Hierarchy file {name}" if name != "stream" else "The hierarchy stream")

    @classmethod
    def flat(cls, values: Iterable) -> "Hierarchy":
        """A two-level tree: ``*`` above every value (in the given order)."""
        values = [str(v) for v in values]
        if SUPPRESSED in values:
            raise SchemaError("The value '*' is reserved for suppression.")
        parent: dict[str, str | None] = {SUPPRESSED: None}
        parent.update({v: SUPPRESSED for v in values})
        return cls(parent, leaf_order=values)

    # ------------------------------------------------------------------ queries
    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(self._nodes)

    def node(self, label: str) -> str:
        """The node a released label names (``*`` is the root)."""
        if label == SUPPRESSED:
            return self.root
        if label not in self.parent:
            raise KeyError(label)
        return label

    def __contains__(self, label: object) -> bool:
        return label == SUPPRESSED or label in self.parent

    def leaf_mask(self, label: str) -> np.ndarray:
        """Boolean mask over :attr:`leaves` of the leaves under `label`."""
        return self._mask[self._node_index[self.node(label)]]

    def covers(self, label: str, value: str) -> bool:
        """Whether the node `label` generalizes the leaf `value`."""
        return bool(self.leaf_mask(label)[self.leaf_index[value]])

    def ancestors(self, label: str) -> list[str]:
        """`label` and every ancestor up to the root."""
        out, node = [], self.node(label)
        while node is not None:
            out.append(node)
            node = self.parent[node]
        return out

    def lca(self, labels: Iterable[str]) -> str:
        """The lowest common ancestor of the given nodes."""
        labels = list(labels)
        common = self.ancestors(labels[0])
        for lab in labels[1:]:
            anc = set(self.ancestors(lab))
            common = [n for n in common if n in anc]
        return common[0]

    def generalize(self, value: str, level: int) -> str:
        """The ancestor of leaf `value` `level` steps up (clipped at the root)."""
        anc = self.ancestors(value)
        return anc[min(level, len(anc) - 1)]

    def restricted_to(self, values: Iterable[str]) -> "Hierarchy":
        """The subtree spanned by `values` (nodes with no such leaf below them are cut)."""
        keep = set()
        for v in values:
            keep.update(self.ancestors(v))
        parent = {n: p for n, p in self.parent.items() if n in keep}
        return Hierarchy(parent, leaf_order=[v for v in self.leaves if v in keep])

    def to_levels(self) -> list[list[str]]:
        """ARX's layout of the tree, what :meth:`from_levels` reads back: per leaf (in
        leaf order) the leaf and its ancestors up to the root, a leaf nearer the root
        repeated so that every row has one cell per level.

        >>> Hierarchy.from_mapping({"*": {"A": ["a1", "a2"], "b": None}}).to_levels()
        [['a1', 'A', '*'], ['a2', 'A', '*'], ['b', 'b', '*']]
        """
        return pad_levels([self.ancestors(leaf) for leaf in self.leaves])

    def to_mapping(self) -> dict:
        """The nested-mapping form accepted by :meth:`from_mapping`."""

        def sub(node):
            kids = self.children[node]
            if all(not self.children[k] for k in kids):
                return list(kids)
            return {k: (sub(k) if self.children[k] else None) for k in kids}

        return {self.root: sub(self.root)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hierarchy) and self.parent == other.parent and self.leaves == other.leaves

    def __reduce__(self):
        # Pickled as the tree itself: the node-by-leaf mask (1.1 MB for 1,000 leaves)
        # is rebuilt in milliseconds, and every task that ships a schema to a Dask
        # worker would otherwise carry it.
        return type(self), (self.parent, self.leaves)

    def __hash__(self) -> int:
        return hash((self.root, self.leaves))

    def __repr__(self) -> str:
        return f"Hierarchy(root={self.root!r}, leaves={len(self.leaves)}, height={self.height})"


def pad_levels(rows: list[list[str]]) -> list[list[str]]:
    """Rows ``[leaf, ..., top]`` made one length: a shorter row repeats its leaf (the
    value kept unchanged one level up, which :meth:`Hierarchy.from_levels` reads as one node)."""
    height = max(len(r) for r in rows)
    return [[r[0]] * (height - len(r)) + r for r in rows]


def _level_rows(rows: Iterable[Sequence[str]], what: str) -> list[list[str]]:
    """The stripped cells of the non-blank rows, blank cells at a row's end dropped;
    SchemaError naming the row when the rows do not have one cell per level each."""
    out: list[list[str]] = []
    first: tuple[int, list[str]] | None = None
    for number, row in enumerate(rows, 1):
        cells = [str(c).strip() for c in row]
        while cells and cells[-1] == "":
            cells.pop()
        if not cells:
            continue
        if "" in cells:
            level = cells.index("")
            raise SchemaError(
                f"{what} is ragged (a level missing): row {number} {_row_text(cells)} has an empty cell at "
                f"{'its leaf' if level == 0 else f'level {level}'} before its last level. Every row "
                "holds a leaf and then one label per level, up to the top; to keep a value unchanged "
                "one level up, repeat it (e.g. 'Private;Private;*')."
            )
        if first is None:
            first = (number, cells)
        elif len(cells) != len(first[1]):
            raise SchemaError(
                f"{what} is ragged (rows of different lengths): row {number} {_row_text(cells)} has "
                f"{len(cells)} cells where row {first[0]} {_row_text(first[1])} has {len(first[1])}. Every row holds a leaf and "
                "then one label per level, the same number of levels in every row; to keep a value "
                "unchanged one level up, repeat it (e.g. 'Private;Private;*')."
            )
        out.append(cells)
    return out


def _row_text(cells: list[str]) -> str:
    shown = repr(cells)
    return shown if len(shown) <= 80 else shown[:76] + "...]"


def _check_separator(rows: list[list[str]], sep: str, name: str) -> None:
    """Refuse a hierarchy read with the wrong separator (see Hierarchy.from_arx_csv)."""
    cells = [row[0] for row in rows if len(row) == 1 and row[0].strip()]
    if not cells or len(cells) != sum(1 for row in rows if any(c.strip() for c in row)):
        return
    for other in (",", "\t", ";"):
        if other != sep and len({cell.count(other) for cell in cells}) == 1 and other in cells[0]:
            shown = {"\t": "tab"}.get(other, other)
            raise SchemaError(
                f"Hierarchy file {name} looks {shown!r}-separated (every row is one field holding "
                f"{cells[0].count(other)} {shown!r}), but is read with {sep!r}: ARX hierarchies are "
                f"';'-separated. Replace the separators, or give hierarchy_sep: {other!r} in the schema "
                f"(Hierarchy.from_arx_csv(path, sep={other!r}) in Python)."
            )


def _fmt(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


@dataclass(frozen=True)
class IntervalHierarchy:
    """A ladder of fixed-width intervals for a numeric attribute.

    Level 0 is the exact value; level i (1-based) releases the half-open interval
    ``[lo-hi)`` of width ``widths[i-1]`` aligned on `origin`; the level after the last
    width is ``*``.

    >>> IntervalHierarchy(widths=(5, 10)).generalize([23, 37], 1)
    ['[20-25)', '[35-40)']
    """

    widths: tuple[float, ...]
    origin: float = 0.0
    labels: tuple = field(default=(), compare=False)

    def __post_init__(self):
        widths = tuple(float(w) for w in self.widths)
        if not widths or any(w <= 0 for w in widths) or list(widths) != sorted(widths):
            raise SchemaError(
                f"Interval widths must be positive and non-decreasing; got {self.widths!r}."
            )
        object.__setattr__(self, "widths", widths)

    @property
    def height(self) -> int:
        return len(self.widths) + 1

    def generalize(self, values: Sequence[float], level: int) -> list[str]:
        if level <= 0:
            return [_fmt(v) for v in values]
        if level > len(self.widths):
            return [SUPPRESSED] * len(values)
        w = self.widths[level - 1]
        lo = [self.origin + math.floor((float(v) - self.origin) / w) * w for v in values]
        return [f"[{_fmt(a)}-{_fmt(a + w)})" for a in lo]
