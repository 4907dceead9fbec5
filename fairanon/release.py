"""The release: what every method returns and what the verifier reads."""

from __future__ import annotations

import dataclasses
import enum
import json
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from .exceptions import InfeasibleError
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
        Why the status is INFEASIBLE or UNKNOWN (which requirements conflict).
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

    def to_csv(self, path, *, index_label: str = "record_id") -> None:
        """Write the released table (record ids in the first column)."""
        self.released_table().to_csv(path, index_label=index_label)

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
    import fairanon

    out = {
        "method": method,
        "params": dict(params),
        "requirements": [str(r) for r in requirements],
        "seed": seed if seed is None or isinstance(seed, int) else repr(seed),
        "elapsed_s": time.perf_counter() - started,
        "fairanon": fairanon.__version__,
        "python": platform.python_version(),
        "pandas": pd.__version__,
    }
    out.update(extra)
    return out


def generalize_partition(instance: Instance, groups: np.ndarray, *, suppress: Sequence[str] = ()) -> pd.DataFrame:
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

    Notes
    -----
    Vectorized: O(n log n + n·H) for n rows and hierarchy height H.
    """
    groups = np.asarray(groups)
    dense = np.unique(groups, return_inverse=True)[1].reshape(-1)
    n_groups = int(dense.max()) + 1 if len(dense) else 0
    order = np.argsort(dense, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(dense[order]) != 0])
    out = {}
    for name in instance.table.columns:
        attr = instance.schema[name]
        if not attr.released:
            continue
        if attr.role != "qi":
            out[name] = instance.table[name]
            continue
        if name in suppress:
            out[name] = pd.Categorical.from_codes(np.zeros(len(dense), dtype=np.int64), [SUPPRESSED])
            continue
        codes = instance.codes(name)[order]
        lo = np.minimum.reduceat(codes, starts) if n_groups else codes[:0]
        hi = np.maximum.reduceat(codes, starts) if n_groups else codes[:0]
        if attr.kind == "numeric":
            labels = [format_number(a) if a == b else f"[{format_number(a)}-{format_number(b)}]" for a, b in zip(lo, hi)]
        elif attr.kind == "ordered" or attr.hierarchy is None:
            dom = attr.domain
            labels = [dom[a] if a == b else f"[{dom[a]}-{dom[b]}]" for a, b in zip(lo, hi)]
        else:
            labels = _lca_labels(attr.hierarchy, codes, starts, lo, hi)
        cats, group_codes = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
        out[name] = pd.Categorical.from_codes(group_codes[dense], [str(c) for c in cats])
    return pd.DataFrame(out, index=instance.table.index)


def _lca_labels(hierarchy, codes, starts, lo, hi) -> list[str]:
    """Lowest common ancestor of each group's leaves, by comparing ancestors level by level."""
    leaves = hierarchy.leaves
    labels = [leaves[a] if a == b else None for a, b in zip(lo, hi)]
    pending = [g for g, lab in enumerate(labels) if lab is None]
    if not pending:
        return labels
    # anc[d][leaf] = index of the leaf's ancestor at depth d (a shallow leaf is its own
    # ancestor below its depth), so groups agreeing at depth d share that ancestor.
    nodes = hierarchy.nodes
    node_id = {n: i for i, n in enumerate(nodes)}
    chains = [list(reversed(hierarchy.ancestors(leaf))) for leaf in leaves]
    depth_max = hierarchy.height
    anc = np.array([[node_id[c[min(d, len(c) - 1)]] for c in chains] for d in range(depth_max + 1)])
    result_depth = np.zeros(len(starts), dtype=int)
    for d in range(1, depth_max + 1):
        a = anc[d][codes]
        same = np.minimum.reduceat(a, starts) == np.maximum.reduceat(a, starts)
        result_depth = np.where(same & (result_depth == d - 1), d, result_depth)
    first_code = codes[starts]
    for g in pending:
        labels[g] = nodes[anc[result_depth[g]][first_code[g]]]
    return labels
