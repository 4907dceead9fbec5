"""The release: what every method returns and what the verifier reads."""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ._arrays import gather
from ._version import __version__
from .exceptions import InfeasibleError, InvalidParameterError
from .instances.files import commit, write_csv
from .instances.files import neutralize_formulas as _neutralize
from .instances.generalization import format_number
from .instances.hierarchy import SUPPRESSED
from .instances.instance import Instance

__all__ = ["Status", "Release", "generalize_partition"]


class Status(str, enum.Enum):
    """How a method ended.

    OPTIMAL     proven optimal (exact methods)
    FEASIBLE    a release meeting the requirements the method enforces
    INFEASIBLE  no release can meet them (or the method cannot find one); see ``reason``
    UNKNOWN     time ran out before any release was found
    """

    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"
    INFEASIBLE = "INFEASIBLE"
    UNKNOWN = "UNKNOWN"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, eq=False)
class Release:
    """An anonymized table with its row -> group mapping and provenance.

    Attributes
    ----------
    table : pandas.DataFrame
        The released columns; its index holds the original record ids (every record,
        suppressed ones included, appears exactly once). Generalized quasi-identifiers
        are labels such as ``[25-34]``, hierarchy nodes or ``*``.
    groups : numpy.ndarray
        The method's group id of each row (aligned with ``table``). The verifier never
        trusts it: it regroups by released values.
    status : Status
    suppressed : tuple
        Record ids of records suppressed as a whole (all quasi-identifiers ``*``).
    objective, bound : number, optional
        The objective value and, for exact methods, the proven bound.
    reason : str, optional
        Why the status is INFEASIBLE or UNKNOWN (which requirements conflict); also
        when most of a time limit went before the method (:func:`fairanon.anonymize`'s
        first call importing it).
    provenance : mapping
        Method, parameters, requirements, seed, elapsed seconds, versions, solver data.
    """

    table: pd.DataFrame
    groups: np.ndarray
    status: Status = Status.FEASIBLE
    suppressed: tuple = ()
    objective: Any = None
    bound: Any = None
    reason: str | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "status", Status(self.status))
        groups = np.array(self.groups)  # a copy: freezing it must not freeze the caller's array
        groups.setflags(write=False)
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "suppressed", tuple(self.suppressed))
        object.__setattr__(self, "provenance", MappingProxyType(dict(self.provenance)))

    @property
    def row_ids(self) -> pd.Index:
        return self.table.index

    @property
    def n_rows(self) -> int:
        return len(self.table)

    @property
    def n_groups(self) -> int:
        return int(len(np.unique(self.groups))) if len(self.groups) else 0

    @property
    def method(self) -> str:
        return str(self.provenance.get("method", "?"))

    def with_provenance(self, **updates) -> "Release":
        """A copy whose provenance has `updates` added."""
        merged = dict(self.provenance)
        merged.update(updates)
        return dataclasses.replace(self, provenance=merged)

    def released_table(self) -> pd.DataFrame:
        """The table, refusing to hand out the table of an INFEASIBLE/UNKNOWN release."""
        if self.status in (Status.INFEASIBLE, Status.UNKNOWN):
            raise InfeasibleError(f"This release is {self.status}: {self.reason or 'no reason given'}.")
        return self.table

    def to_csv(self, path, *, index_label: str = "record_id", neutralize_formulas: bool = True) -> None:
        """Write the released table (record ids in the first column).

        With `neutralize_formulas` (the default) a cell a spreadsheet would run as a
        formula (``=``, ``+``, ``-``, ``@``, not a number) is written with a leading
        ``'``; ``fairanon verify`` and :func:`fairanon.instances.files.restore_formulas`
        read it back. Every cell a CSV reader could misread is quoted, the file is read
        back to check it, and it appears whole or not at all
        (:func:`~fairanon.instances.files.write_csv`,
        :func:`~fairanon.instances.files.commit`).
        """
        table = self.released_table()
        if neutralize_formulas:
            table = _neutralize(table)
        commit({os.fspath(path): lambda tmp: write_csv(table, tmp, index_label=index_label)})

    def summary(self) -> dict:
        """A JSON-ready description (no table)."""
        return {
            "method": self.method,
            "status": str(self.status),
            "n_rows": self.n_rows,
            "n_groups": self.n_groups,
            "n_suppressed": len(self.suppressed),
            "objective": _jsonable(self.objective),
            "bound": _jsonable(self.bound),
            "reason": self.reason,
            "provenance": {k: _jsonable(v) for k, v in self.provenance.items()},
        }

    def __repr__(self) -> str:
        return (
            f"Release(method={self.method!r}, status={self.status}, "
            f"n_rows={self.n_rows}, n_groups={self.n_groups})"
        )


def _jsonable(value):
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)


def provenance(method: str, params: Mapping[str, Any], requirements: Sequence, seed, started: float, **extra) -> dict:
    """The provenance record every method attaches to its release."""
    out = {
        "method": method,
        "params": dict(params),
        "requirements": [str(r) for r in requirements],
        "seed": seed if seed is None or isinstance(seed, int) else repr(seed),
        "elapsed_s": time.perf_counter() - started,
        "fairanon": __version__,
        "python": platform.python_version(),
        "pandas": pd.__version__,
    }
    out.update(extra)
    return out


def generalize_partition(
    instance: Instance,
    groups: np.ndarray,
    *,
    suppress: Sequence[str] = (),
    recoding: str = "tight",
    starred: Mapping[str, np.ndarray] | None = None,
    classes: tuple[np.ndarray, np.ndarray] | None = None,
) -> pd.DataFrame:
    """The released table of a partition, each group recoded to its tight summary.

    Numeric attributes become ``[min-max]``, ordered ones the range of their ranks,
    categorical ones the lowest common ancestor in their hierarchy; protected,
    sensitive, decision and insensitive columns are copied unchanged; identifiers are
    left out.

    Parameters
    ----------
    instance : Instance
    groups : array of int, one per row of ``instance.table``
    suppress : sequence of str
        Quasi-identifiers to release as ``*`` in every row.
    recoding : {"tight", "suppress"}, default="tight"
        "tight" as above; "suppress" releases a group's common value when all its
        records agree on the attribute and ``*`` otherwise (DIVA's Suppress, Milani et
        al., EDBT 2021, Alg. 2).
    starred : mapping of str to array of bool, optional
        Per quasi-identifier, the rows (aligned with ``instance.table``) whose cell is
        released as ``*`` whatever the group's summary.
    classes : (rows, sizes), optional
        The partition as the method that built it holds it: the row positions group
        after group, and the groups' sizes; `groups` must then number the groups
        0, 1, ... in that order. Each group's summary is then read from consecutive
        values instead of scattered ones.

    Notes
    -----
    Vectorized, no sort of the rows: O(n·H) for n rows and hierarchy height H, plus
    O(g log g) for g groups; each distinct label is formatted once. Reads the table's
    stored codes and writes the narrowest label codes.
    """
    if recoding not in ("tight", "suppress"):
        raise InvalidParameterError(
            "The 'recoding' parameter of generalize_partition must be one of 'suppress', "
            f"'tight'. Got {recoding!r} instead."
        )
    if classes is None:
        dense, n_groups = _dense_ids(np.asarray(groups))
        min_max = _ScatteredMinMax(dense, n_groups)
    else:
        dense = np.asarray(groups)
        min_max = _SortedMinMax(*classes)
    out = {}
    for name in instance.table.columns:
        attr = instance.schema[name]
        if not attr.released:
            continue
        if attr.role != "qi":
            out[name] = instance.table[name]
            continue
        if name in suppress:
            out[name] = pd.Categorical.from_codes(np.zeros(len(dense), dtype=np.int8), [SUPPRESSED])
            continue
        codes = instance.stored_codes(name)
        if recoding == "tight" and attr.kind == "categorical" and attr.hierarchy is not None:
            labels, key_of_group = _lca_labels(attr.hierarchy, codes, min_max)
        else:
            lo, hi = min_max(codes)
            if attr.kind == "numeric":
                lo, hi = lo.astype(float), hi.astype(float)
            # The label depends on (lo, hi) only: format each distinct pair once.
            (lo, hi), key_of_group = _distinct_pairs(lo, hi)
            labels = _range_labels(attr, lo, hi, recoding)
        cats, label_codes = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
        cats = [str(c) for c in cats]
        star = None if starred is None or name not in starred else np.asarray(starred[name], dtype=bool)
        if star is not None and SUPPRESSED not in cats:
            cats.append(SUPPRESSED)
        row_codes = gather(label_codes.reshape(-1)[key_of_group].astype(_narrow(len(cats))), dense)
        if star is not None:
            row_codes[star] = cats.index(SUPPRESSED)
        out[name] = pd.Categorical.from_codes(row_codes, cats)
    return pd.DataFrame(out, index=instance.table.index)


def _range_labels(attr, lo: np.ndarray, hi: np.ndarray, recoding: str) -> list[str]:
    """The label of each (lo, hi) pair of codes (numbers for a numeric attribute)."""
    dom = attr.domain
    if recoding == "suppress":
        return [SUPPRESSED if a != b else format_number(a) if dom is None else dom[int(a)] for a, b in zip(lo, hi)]
    if attr.kind == "numeric":
        return [format_number(a) if a == b else f"[{format_number(a)}-{format_number(b)}]" for a, b in zip(lo, hi)]
    return [dom[a] if a == b else f"[{dom[a]}-{dom[b]}]" for a, b in zip(lo, hi)]


def _narrow(n: int) -> type:
    """The narrowest signed integer type holding 0..n."""
    return np.int8 if n < 2**7 else np.int16 if n < 2**15 else np.int32 if n < 2**31 else np.int64


def _dense_ids(groups: np.ndarray) -> tuple[np.ndarray, int]:
    """Group ids renumbered 0.. in increasing order (np.unique's inverse), by counting
    when they are small non-negative integers."""
    if groups.dtype.kind in "iu" and len(groups):
        low, high = int(groups.min()), int(groups.max())
        if low >= 0 and high <= 2 * len(groups) + 1024:
            present = np.bincount(groups, minlength=high + 1) > 0
            rank = np.cumsum(present) - 1
            return rank[groups], int(rank[-1]) + 1
    uniq, dense = np.unique(groups, return_inverse=True)
    return dense.reshape(-1), len(uniq)


class _ScatteredMinMax:
    """The smallest and largest value of every group, for group ids in any order
    (unbuffered ufunc.at: no sort)."""

    def __init__(self, dense: np.ndarray, n_groups: int):
        self.dense, self.n_groups = dense, n_groups

    def __call__(self, codes: np.ndarray, lookup: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        if lookup is not None:
            codes = gather(lookup, codes)
        if codes.dtype.kind == "f":
            lo, hi = np.full(self.n_groups, np.inf), np.full(self.n_groups, -np.inf)
        else:
            info = np.iinfo(codes.dtype)
            lo = np.full(self.n_groups, info.max, dtype=codes.dtype)
            hi = np.full(self.n_groups, info.min, dtype=codes.dtype)
        np.minimum.at(lo, self.dense, codes)
        np.maximum.at(hi, self.dense, codes)
        return lo, hi


class _SortedMinMax:
    """The smallest and largest value of every group, from the rows listed group after
    group: one gather, then one pass of reduceat."""

    def __init__(self, rows: np.ndarray, sizes: np.ndarray):
        self.rows, self.starts = rows, np.cumsum(sizes) - sizes

    def __call__(self, codes: np.ndarray, lookup: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        values = gather(codes, self.rows)
        if lookup is not None:
            values = lookup[values]
        if not len(self.starts):
            return values[:0], values[:0]
        return np.minimum.reduceat(values, self.starts), np.maximum.reduceat(values, self.starts)


def _distinct_pairs(lo: np.ndarray, hi: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """The distinct (lo, hi) pairs and the pair of each entry."""
    if not len(lo):
        return (lo, hi), np.zeros(0, dtype=np.int64)
    values, rank = np.unique(np.concatenate([lo, hi]), return_inverse=True)
    rank = rank.reshape(-1)
    key = rank[: len(lo)] * len(values) + rank[len(lo) :]
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return (lo[first], hi[first]), inverse.reshape(-1)


def _lca_labels(hierarchy, codes: np.ndarray, min_max) -> tuple[list[str], np.ndarray]:
    """Lowest common ancestor of each group's leaves: the labels of the distinct ancestors found and the one of each group.

    Nodes are numbered in depth-first preorder, so each node's leaves are consecutive
    and a leaf's ancestor at any depth never decreases along that order: the leaves of
    a group share an ancestor at depth d iff its first and last leaf in preorder do.
    One min/max per group (`min_max`, of the leaves' preorder numbers), then
    O(groups x height)."""
    nodes = hierarchy.nodes
    node_id = {n: i for i, n in enumerate(nodes)}
    chains = [list(reversed(hierarchy.ancestors(leaf))) for leaf in hierarchy.leaves]
    depth_max = hierarchy.height
    # anc[d][leaf] = index of the leaf's ancestor at depth d (a shallow leaf is its own
    # ancestor below its depth).
    anc = np.array([[node_id[c[min(d, len(c) - 1)]] for c in chains] for d in range(depth_max + 1)])
    preorder = anc[depth_max]  # a leaf's own node id
    leaf_of = np.zeros(len(nodes), dtype=np.int64)
    leaf_of[preorder] = np.arange(len(preorder))
    lo, hi = min_max(codes, preorder.astype(_narrow(len(nodes))))
    if not len(lo):
        return [], np.zeros(0, dtype=np.int64)
    first, last = leaf_of[lo], leaf_of[hi]
    result_depth = np.zeros(len(lo), dtype=int)
    for d in range(1, depth_max + 1):
        result_depth = np.where((anc[d][first] == anc[d][last]) & (result_depth == d - 1), d, result_depth)
    found, key_of_group = np.unique(anc[result_depth, first], return_inverse=True)
    return [nodes[i] for i in found], key_of_group.reshape(-1)
