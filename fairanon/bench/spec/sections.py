"""The sections of a suite, each checked on its own, with their grids expanded.

Instances, requirement sets, algorithms and the compare settings are validated here (a
list value is a grid: one choice per element), and so are the memory sizes and method
names they give. Each check raises :class:`~fairanon.exceptions.InvalidParameterError`
naming the bad key and what is allowed.
"""

from __future__ import annotations

import importlib
import itertools
import os
import re
from collections.abc import Mapping

from ...exceptions import InvalidParameterError
from ...models.requirements import requirement_from_spec
from ..quality import BINARY_INDICES, COMPARATORS, NORMALIZATIONS, PROPERTIES, UNARY_INDICES

__all__ = ["parse_memory", "resolve_method"]

_COMPARE_KEYS = {
    "properties",
    "comparators",
    "rank_norm",
    "rank_eps",
    "hv_reference",
    "multi",
    "unit",
    "by",
}
_MULTI_KEYS = {
    "procedure",
    "name",
    "properties",
    "index",
    "weights",
    "eps",
    "goals",
    "normalization",
    "one_sided",
}
_ALGORITHM_KEYS = {
    "method",
    "name",
    "params",
    "fixed",
    "time_limit",
    "memory_limit",
    "skip_missing",
}
_INSTANCE_KEYS = {
    "dataset",
    "csv",
    "synthetic",
    "name",
    "options",
    "sep",
    "id_column",
    "missing",
    "schema",
}


def parse_memory(value, where: str = "memory_limit") -> int | None:
    """Bytes from ``None``, a number of megabytes or a string such as ``"4GB"``.

    >>> parse_memory("512MB"), parse_memory(2048) // 2**20, parse_memory("4 GiB") // 2**30
    (536870912, 2048, 4)
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return int(value * 2**20)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT])?(i?[bB])?\s*", value)
        if m:
            scale = {None: 2**20, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[
                (m.group(2) or "").lower() or None
            ]
            amount = float(m.group(1)) * scale
            if amount > 0:
                return int(amount)
    raise InvalidParameterError(
        f"The {where!r} of a suite must be a number of megabytes or a size such as '4GB'. Got {value!r} instead."
    )


def resolve_method(method: str):
    """The function behind a method name of :data:`fairanon.METHODS` or a
    ``"module:function"`` string, looked up now (methods registered later are found)."""
    from ...api import METHODS

    if not isinstance(method, str) or not method:
        raise InvalidParameterError(
            f"A suite's algorithm 'method' must be a string. Got {method!r} instead."
        )
    if method in METHODS:
        return METHODS[method]
    if ":" in method:
        module, _, attr = method.partition(":")
        try:
            func = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise InvalidParameterError(f"Cannot import method {method!r}: {exc}.") from None
        if not callable(func):
            raise InvalidParameterError(f"Method {method!r} is not callable.")
        return func
    raise InvalidParameterError(
        f"The 'method' of a suite's algorithm must be one of {sorted(METHODS)} or 'module:function'. "
        f"Got {method!r} instead."
    )


def _grid(mapping: Mapping) -> list[tuple[dict, dict]]:
    """Every combination of the list values of `mapping`: (full mapping, varied part)."""
    keys = list(mapping)
    choices = [mapping[k] if isinstance(mapping[k], list) else [mapping[k]] for k in keys]
    for k, c in zip(keys, choices):
        if not c:
            raise InvalidParameterError(f"The grid of {k!r} in a suite is an empty list.")
    varied = [k for k in keys if isinstance(mapping[k], list)]
    out = []
    for combo in itertools.product(*choices):
        full = dict(zip(keys, combo))
        out.append((full, {k: full[k] for k in varied}))
    return out


def _scalar_text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _is_scalar(value) -> bool:
    return isinstance(value, (int, float, str, bool)) or value is None


def _check_keys(section, allowed: set, where: str) -> dict:
    if not isinstance(section, Mapping):
        raise InvalidParameterError(f"The {where!r} section of a suite must be a mapping.")
    unknown = set(section) - allowed
    if unknown:
        raise InvalidParameterError(
            f"Unknown keys {sorted(unknown)} in {where!r}; allowed: {sorted(allowed)}."
        )
    return dict(section)


def _check_seconds(value, name: str, *, allow_none: bool = False, allow_zero: bool = False):
    if value is None and allow_none:
        return None
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and (value > 0 or (allow_zero and value == 0))
    )
    if not ok:
        raise InvalidParameterError(
            f"The {name!r} of a suite must be a {'non-negative' if allow_zero else 'positive'} number of seconds"
            f"{' or null' if allow_none else ''}. Got {value!r} instead."
        )
    return float(value)


def _check_instance(spec, base_dir: str) -> dict:
    from ...instances.datasets import DATASETS

    spec = _check_keys(spec, _INSTANCE_KEYS, "instances")
    sources = [k for k in ("dataset", "csv", "synthetic") if k in spec]
    if len(sources) != 1:
        raise InvalidParameterError(
            f"Each suite instance needs exactly one of 'dataset', 'csv' or 'synthetic'. Got {sorted(spec)} instead."
        )
    source = sources[0]
    if source == "dataset":
        if spec["dataset"] not in DATASETS:
            raise InvalidParameterError(
                f"Unknown dataset {spec['dataset']!r} in a suite; known: {sorted(DATASETS)}."
            )
        name = spec.get("name", spec["dataset"])
        return {"name": str(name), "spec": spec, "columns": {}}
    if source == "csv":
        path = spec["csv"] if os.path.isabs(spec["csv"]) else os.path.join(base_dir, spec["csv"])
        if not os.path.exists(path):
            raise InvalidParameterError(f"Data file {path!r} of a suite instance does not exist.")
        name = spec.get("name", os.path.splitext(os.path.basename(path))[0])
        return {"name": str(name), "spec": spec, "columns": {}}
    args = spec["synthetic"]
    if not isinstance(args, Mapping) or "n_rows" not in args:
        raise InvalidParameterError(
            "A 'synthetic' suite instance needs a mapping with at least 'n_rows'."
        )
    return {"name": str(spec.get("name", "synthetic")), "spec": spec, "columns": {}, "grid": True}


def _expand_instances(instances: list) -> list:
    out = []
    for inst in instances:
        if not inst.get("grid"):
            out.append(inst)
            continue
        spec = inst["spec"]
        combos = _grid(spec["synthetic"])
        for args, varied in combos:
            name = inst["name"]
            if varied:
                name += " " + ",".join(
                    f"{'n' if k == 'n_rows' else k}={_scalar_text(v)}" for k, v in varied.items()
                )
            columns = {f"i.{k}": v for k, v in args.items() if _is_scalar(v)}
            out.append({"name": name, "spec": {**spec, "synthetic": args}, "columns": columns})
    return out


def _check_reqset(entry, position: int) -> dict:
    columns: dict = {}
    if isinstance(entry, Mapping) and "set" in entry:
        extra = set(entry) - {"set", "name", "columns"}
        if extra:
            raise InvalidParameterError(
                f"Unknown keys {sorted(extra)} in requirement set {position + 1}; allowed: columns, name, set."
            )
        items, name = entry["set"], entry.get("name")
        columns = entry.get("columns") or {}
        if not isinstance(columns, Mapping) or not all(
            isinstance(k, str) and _is_scalar(v) for k, v in columns.items()
        ):
            raise InvalidParameterError(
                f"The 'columns' of requirement set {position + 1} must map names to numbers or strings "
                f"(e.g. {{sweep: cf, sweep_x: 0.2}}). Got {columns!r} instead."
            )
    elif isinstance(entry, list):
        items, name = entry, None
    else:
        items, name = [entry], None
    if not isinstance(items, list) or not items:
        raise InvalidParameterError(
            f"Requirement set {position + 1} of the suite must be a non-empty list."
        )
    per_item = []
    for item in items:
        if not isinstance(item, Mapping) or len(item) != 1:
            raise InvalidParameterError(
                f"A requirement must be a one-key mapping such as {{'k_anonymity': {{'k': 5}}}}; got {item!r}."
            )
        ((kind, args),) = item.items()
        if isinstance(args, list):
            per_item.append([({kind: a}, {kind: a}) for a in args])
        elif isinstance(args, Mapping):
            per_item.append([({kind: full}, varied) for full, varied in _grid(args)])
        else:
            per_item.append([(item, {})])
    sets = []
    for combo in itertools.product(*per_item):
        reqs = [spec for spec, _ in combo]
        built = [requirement_from_spec(r) for r in reqs]  # validates every combination now
        varied = {}
        for _, v in combo:
            for kind, value in v.items():
                if isinstance(value, Mapping):
                    varied.update(value)
                else:
                    varied[kind] = value
        if name is None:
            label = "; ".join(str(b) for b in built)
        else:
            label = name + (
                "(" + ",".join(f"{k}={_scalar_text(v)}" for k, v in varied.items()) + ")"
                if varied
                else ""
            )
        sets.append((reqs, label, {**_requirement_columns(built), **columns}))
    family = name or "+".join(requirement_from_spec(r).kind for r in sets[0][0])
    return {"name": family, "sets": sets, "named": name is not None}


def _requirement_columns(built) -> dict:
    """``p.<field>`` for every scalar field of the requirements; fields two requirements
    of the set both have are left out (they would be ambiguous)."""
    import dataclasses
    from fractions import Fraction

    seen: dict = {}
    clash = set()
    for req in built:
        for f in dataclasses.fields(req):
            value = getattr(req, f.name)
            if isinstance(value, Fraction):
                value = float(value)
            if value is None or not _is_scalar(value):
                continue
            key = f"p.{f.name}"
            if key in seen and seen[key] != value:
                clash.add(key)
            seen[key] = value
    return {k: v for k, v in seen.items() if k not in clash}


def _check_algorithm(entry) -> dict | None:
    if isinstance(entry, str):
        entry = {"method": entry}
    entry = _check_keys(entry, _ALGORITHM_KEYS, "algorithms")
    if "method" not in entry:
        raise InvalidParameterError("Each suite algorithm needs a 'method'.")
    try:
        resolve_method(entry["method"])
    except InvalidParameterError:
        if entry.get("skip_missing"):
            return None
        raise
    params = entry.get("params") or {}
    fixed = entry.get("fixed") or {}
    for what, value in (("params", params), ("fixed", fixed)):
        if not isinstance(value, Mapping):
            raise InvalidParameterError(
                f"The {what!r} of algorithm {entry['method']!r} must be a mapping."
            )
    out = {
        "method": entry["method"],
        "name": str(entry.get("name", entry["method"])),
        "params": dict(params),
        "fixed": dict(fixed),
    }
    if "time_limit" in entry:
        out["time_limit"] = _check_seconds(entry["time_limit"], "time_limit", allow_none=True)
    if "memory_limit" in entry:
        out["memory_limit"] = parse_memory(entry["memory_limit"])
    return out


def _check_compare(section) -> dict:
    section = _check_keys(section, _COMPARE_KEYS, "compare")
    props = section.get("properties")
    if props is not None:
        bad = [p for p in props if p not in PROPERTIES]
        if bad or not isinstance(props, list):
            raise InvalidParameterError(
                f"compare.properties must be a list of {sorted(PROPERTIES)}. Got {props!r} instead."
            )
    for key, allowed in (("unit", ("tuple", "group")), ("by", ("instance", "requirements"))):
        if key in section and section[key] not in allowed:
            raise InvalidParameterError(
                f"compare.{key} must be one of {list(allowed)}. Got {section[key]!r} instead."
            )
    comps = section.get("comparators")
    if comps is not None and (
        not isinstance(comps, list) or any(c not in COMPARATORS for c in comps)
    ):
        raise InvalidParameterError(
            f"compare.comparators must be a list of {list(COMPARATORS)}. Got {comps!r} instead."
        )
    multi = section.get("multi") or []
    if not isinstance(multi, list):
        raise InvalidParameterError("compare.multi must be a list of procedures.")
    checked = []
    for m in multi:
        m = _check_keys(m, _MULTI_KEYS, "compare.multi")
        if m.get("procedure") not in ("wtd", "lex", "goal", "goal_unary"):
            raise InvalidParameterError(
                f"compare.multi procedure must be one of 'wtd', 'lex', 'goal', 'goal_unary'. Got {m.get('procedure')!r} instead."
            )
        props = m.get("properties")
        if not isinstance(props, list) or not props or any(p not in PROPERTIES for p in props):
            raise InvalidParameterError(
                f"compare.multi needs 'properties', a list of {sorted(PROPERTIES)}. Got {props!r} instead."
            )
        index = m.get("index", "mean" if m["procedure"] == "goal_unary" else "cov")
        indices = index if isinstance(index, list) else [index]
        allowed = (
            UNARY_INDICES
            if m["procedure"] == "goal_unary"
            else (UNARY_INDICES + BINARY_INDICES if m["procedure"] == "lex" else BINARY_INDICES)
        )
        if any(i not in allowed for i in indices):
            raise InvalidParameterError(
                f"compare.multi {m['procedure']} index must be in {list(allowed)}. Got {index!r} instead."
            )
        if m.get("normalization", "default") not in NORMALIZATIONS:
            raise InvalidParameterError(
                f"compare.multi normalization must be one of {list(NORMALIZATIONS)}."
            )
        need = {"wtd": "weights", "goal": "goals", "goal_unary": "goals"}.get(m["procedure"])
        if need and need not in m:
            raise InvalidParameterError(f"compare.multi {m['procedure']} needs {need!r}.")
        m.setdefault("name", f"{m['procedure']}:{'>'.join(props)}")
        checked.append(m)
    section["multi"] = checked
    return section
