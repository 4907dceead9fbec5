"""Top-down partitioning one tree level at a time: the engine of Mondrian (LeFevre, DeWitt,
Ramakrishnan, ICDE 2006) shared by Mondrian (:mod:`fairanon.heuristics.mondrian`) and
dMondrian (Ruggieri, Trans. Data Privacy 2014; :mod:`fairanon.heuristics.dmondrian`).

It holds the integer-coded columns (ranked attributes, hierarchy columns), the split
predicates built from requirements (:class:`Checks`), the levels of the partitioning tree
and their splitting (:class:`Level`, :func:`split_level`, :class:`Leaves`), and the
frequency sets and prefix counts from which the cuts of every part of a level are
evaluated at once (:func:`frequency_runs`, :func:`prefix_counts`). The methods decide
where to cut; this module applies the cuts.

The records of every active part of a level sit in one int32 matrix, part after part
(*segments*), one row per record and one column per coded attribute (column 0 is the
record's position in the instance). Cuts are evaluated for all parts of a level at
once with numpy; the children of a part replace it in place, so the final order of the
classes is the depth-first order of the recursive algorithm, left child first. Per
level the work is linear in the number of active records (plus a stable sort of integer
keys when the parts are regrouped), so no record is ever touched by Python code and no
DataFrame is copied. Memory is O(n * columns).

Executable spec: baselines spec §2.2-§2.4 (Mondrian), tcloseness spec §2.2 (dMondrian).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.instance import Instance
from ..models import measures as M
from ..models.requirements import (
    KAnonymity,
    LDiversity,
    Requirement,
    TCloseness,
    requirement_targets,
)

__all__ = [
    "Checks",
    "HierarchyColumn",
    "Leaves",
    "Level",
    "RankedColumn",
    "Runs",
    "Target",
    "batches",
    "check_time_limit",
    "cumulative_counts",
    "dense_codes",
    "first_level",
    "first_min_per_segment",
    "frequency_runs",
    "hierarchy_column",
    "prefix_counts",
    "rank_column",
    "run_counts",
    "split_level",
]


# ------------------------------------------------------------------ coded columns
@dataclass(frozen=True)
class RankedColumn:
    """An attribute cut at values: integer ranks that respect the domain order.

    ``ranks[i]`` is row i's rank; ``values[r]`` the number a rank stands for when
    widths are measured (the value itself for numeric attributes, the rank for ordered
    ones) and ``span`` the table's range of those numbers.
    """

    name: str
    ranks: np.ndarray
    values: np.ndarray
    span: float


def _dense_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of `values` among their distinct values, and the sorted distinct values.

    Integral values over a short range are ranked by counting (O(n)); others by a sort.
    """
    if len(values):
        lo, hi = float(values.min()), float(values.max())
        if np.isfinite(lo) and np.isfinite(hi) and hi - lo <= 4 * len(values) + 1024:
            as_int = (values - lo).astype(np.int32 if hi - lo < 2**31 else np.int64)
            if np.array_equal(as_int + lo, values):  # integral values
                present = np.bincount(as_int, minlength=int(hi - lo) + 1) > 0
                rank_of = (np.cumsum(present) - 1).astype(np.int32)
                return rank_of[as_int], np.flatnonzero(present) + lo
    uniq, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(-1).astype(np.int32), uniq


def dense_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for domain indices, by counting (O(n)).

    >>> present, dense = dense_codes(np.array([4, 1, 4, 2]))
    >>> present.tolist(), dense.tolist()
    ([1, 2, 4], [2, 0, 2, 1])
    """
    if len(codes) and codes.min() >= 0 and codes.max() <= 4 * len(codes) + 1024:
        present = np.bincount(codes) > 0
        rank = np.cumsum(present) - 1
        return np.flatnonzero(present), rank[codes].astype(np.int64)
    present, inverse = np.unique(codes, return_inverse=True)
    return present, inverse.reshape(-1).astype(np.int64)


def rank_column(instance: Instance, name: str) -> RankedColumn:
    """Ranks of a numeric (by value), ordered (by its order) or categorical (by the
    order of its hierarchy's leaves) attribute."""
    attr = instance.schema[name]
    codes = instance.codes(name)
    if attr.kind == "numeric":
        ranks, uniq = _dense_ranks(codes)
        uniq = uniq.astype(float)
        return RankedColumn(name, ranks, uniq, float(uniq[-1] - uniq[0]))
    m = len(attr.domain)
    return RankedColumn(name, codes.astype(np.int32), np.arange(m, dtype=float), float(m - 1))


@dataclass(frozen=True)
class HierarchyColumn:
    """A categorical attribute split along its hierarchy.

    Nodes are numbered in the hierarchy's depth-first order. ``anc[d, leaf]`` is the
    leaf's ancestor at depth d (a shallow leaf is its own ancestor below its depth);
    ``sibling[u]`` is u's position among its parent's children,
    ``child_sibling[d, leaf]`` that of the leaf's ancestor at depth d + 1, and
    ``children[child_start[u] + j]`` u's j-th child.
    """

    name: str
    codes: np.ndarray
    anc: np.ndarray
    child_sibling: np.ndarray
    depth: np.ndarray
    n_leaves_under: np.ndarray
    is_leaf: np.ndarray
    fanout: np.ndarray
    sibling: np.ndarray
    children: np.ndarray
    child_start: np.ndarray
    n_leaves: int


def hierarchy_column(instance: Instance, name: str) -> HierarchyColumn:
    attr = instance.schema[name]
    h = attr.hierarchy
    nodes = h.nodes
    node_id = {n: i for i, n in enumerate(nodes)}
    anc = np.zeros((h.height + 1, len(h.leaves)), dtype=np.int32)
    for j, leaf in enumerate(h.leaves):
        chain = list(reversed(h.ancestors(leaf)))  # root .. leaf
        for d in range(h.height + 1):
            anc[d, j] = node_id[chain[min(d, len(chain) - 1)]]
    fanout = np.array([len(h.children[n]) for n in nodes], dtype=np.int64)
    sibling = np.zeros(len(nodes), dtype=np.int32)
    children = np.zeros(int(fanout.sum()), dtype=np.int32)
    child_start = np.cumsum(fanout) - fanout
    for u, node in enumerate(nodes):
        for j, child in enumerate(h.children[node]):
            sibling[node_id[child]] = j
            children[child_start[u] + j] = node_id[child]
    return HierarchyColumn(
        name=name,
        codes=instance.codes(name).astype(np.int32),
        anc=anc,
        child_sibling=sibling[anc[1:]] if h.height else np.zeros((0, len(h.leaves)), np.int32),
        depth=np.array([h.depth[n] for n in nodes], dtype=np.int64),
        n_leaves_under=np.array([int(h.leaf_mask(n).sum()) for n in nodes], dtype=np.int64),
        is_leaf=np.array([not h.children[n] for n in nodes], dtype=bool),
        fanout=fanout,
        sibling=sibling,
        children=children,
        child_start=child_start,
        n_leaves=len(h.leaves),
    )


# ------------------------------------------------------------------ requirements
@dataclass(frozen=True)
class Target:
    """A sensitive/decision attribute: dense codes (values present, in the attribute's
    order) and the whole table's counts."""

    name: str
    codes: np.ndarray
    m: int
    global_counts: np.ndarray
    values: tuple


def _encode_target(instance: Instance, name: str) -> Target:
    attr = instance.schema[name]
    codes = instance.codes(name)
    if attr.domain is not None:
        present, dense = dense_codes(codes)
    else:
        present, dense = np.unique(codes, return_inverse=True)
        dense = dense.reshape(-1).astype(np.int64)
    if attr.domain is not None:
        values = tuple(attr.domain[int(c)] for c in present)
    else:
        values = tuple(float(v) for v in present)
    return Target(name, dense, len(present), np.bincount(dense, minlength=len(present)), values)


@dataclass(frozen=True)
class _Check:
    """One requirement on one target attribute, as a test of count rows.

    ``test(sizes, counts)`` gets the sizes of some candidate classes and, for a
    target-reading requirement, their counts over the target's values (one row per
    class); it returns one bool per class.
    """

    requirement: Requirement
    target: str | None
    test: Callable[[np.ndarray, np.ndarray | None], np.ndarray]


def _make_check(instance: Instance, req: Requirement, target: Target | None) -> _Check:
    if isinstance(req, KAnonymity):
        k = req.k
        return _Check(req, None, lambda sizes, counts: sizes >= k)
    if isinstance(req, LDiversity):
        if req.variant == "distinct":
            l_int = int(req.l)
            return _Check(req, target.name, lambda sizes, counts: M.distinct_l(counts) >= l_int)
        if req.variant == "entropy":
            l_val = req.l
            return _Check(req, target.name, lambda sizes, counts: M.entropy_l_ok(counts, l_val))
        c, l_int = req.c, int(req.l)
        return _Check(
            req, target.name, lambda sizes, counts: M.recursive_cl_ok(counts, c, l_int)[0]
        )
    if isinstance(req, TCloseness):
        if req.distance == "equal":
            ground = M.EMDGround.equal(target.m)
        elif req.distance == "ordered":
            ground = M.EMDGround.ordered(target.m)
        else:
            hierarchy = instance.schema[target.name].hierarchy
            ground = M.EMDGround.hierarchical(hierarchy, [str(v) for v in target.values])
        glob, t = target.global_counts, req.t

        def test(sizes, counts):
            distances = M.emd(counts, glob, ground)
            return M.exact_compare(
                distances, lambda i: M.emd_exact(counts[i], glob, ground), t, "le"
            )

        return _Check(req, target.name, test)
    raise IncompatibleRequirementError(f"Cannot enforce {req} by splitting.")  # pragma: no cover


class Checks:
    """Requirements as count tests on candidate classes.

    Every target attribute (sensitive or decision attribute an l-diversity or
    t-closeness requirement protects) is one *channel*: the classes' counts over its
    values. ``min_size`` is the smallest class any requirement admits (k, or ceil(l):
    fewer records cannot hold l distinct values or reach entropy log l).
    """

    def __init__(self, instance: Instance, requirements: Sequence[Requirement], targets=None):
        """`targets` (name -> :class:`Target`) replaces the encoding of the target
        attributes from `instance`, whose schema alone is then read."""
        given = targets or {}
        self.targets: dict[str, Target] = {}
        self.checks: list[_Check] = []
        min_size = 1
        for req in requirements:
            if isinstance(req, KAnonymity):
                self.checks.append(_make_check(instance, req, None))
                min_size = max(min_size, req.k)
                continue
            if isinstance(req, LDiversity):
                min_size = max(min_size, math.ceil(req.l))
            for name in requirement_targets(instance.schema, req):
                if name not in self.targets:
                    self.targets[name] = given[name] if name in given else _encode_target(instance, name)
                self.checks.append(_make_check(instance, req, self.targets[name]))
        self.min_size = min_size
        self.reads_targets = any(c.target is not None for c in self.checks)

    def passing(self, sizes: np.ndarray, counts: dict[str, np.ndarray]) -> np.ndarray:
        """Per candidate class: does it pass every requirement?"""
        ok = np.ones(len(sizes), dtype=bool)
        for check in self.checks:
            ok &= check.test(sizes, counts.get(check.target) if check.target else None)
            if not ok.any():
                break
        return ok

    def failures(self, sizes: np.ndarray, counts: dict[str, np.ndarray]) -> list[str]:
        """The requirements (as text) some of the given classes violate."""
        out = []
        for check in self.checks:
            if not check.test(sizes, counts.get(check.target) if check.target else None).all():
                text = str(check.requirement)
                if check.target is not None and check.requirement.attribute is None:
                    text += f" of {check.target}"
                out.append(text)
        return out


# ------------------------------------------------------------------ levels
@dataclass
class Level:
    """The active parts of one tree level.

    ``rows`` holds the records' positions in the instance part after part, and ``data``
    their coded columns (the narrowest integer type that holds them); part s is
    ``data[starts[s] : starts[s] + sizes[s]]``. ``keys`` are the parts'
    offsets in the depth-first order of the whole partitioning, ``nodes`` their
    current hierarchy node per hierarchy-split attribute.
    """

    rows: np.ndarray
    data: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray
    keys: np.ndarray
    nodes: np.ndarray

    @property
    def n_segments(self) -> int:
        return len(self.sizes)

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @cached_property
    def seg_of_row(self) -> np.ndarray:
        """The part of every record."""
        return np.repeat(np.arange(self.n_segments, dtype=np.int32 if self.n_segments < 2**31 else np.int64),
                         self.sizes)

    def positions(self, segs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions (in ``data``) of the records of parts `segs` (ascending), and the
        index into `segs` of each one's part."""
        if len(segs) == self.n_segments:
            return np.arange(self.n_rows, dtype=np.int64), self.seg_of_row
        sizes = self.sizes[segs]
        lseg = np.repeat(np.arange(len(segs), dtype=np.int64), sizes)
        shift = self.starts[segs] - (np.cumsum(sizes) - sizes)
        return np.arange(int(sizes.sum()), dtype=np.int64) + shift[lseg], lseg


def first_level(
    columns: Sequence[np.ndarray],
    roots: Sequence[np.ndarray],
    n_nodes: int,
    *,
    nodes: np.ndarray | None = None,
    keys: np.ndarray | None = None,
) -> Level:
    """The level of the root parts (each an array of instance positions, ascending).

    `nodes` (parts x hierarchy columns) and `keys` start the parts from inner nodes of
    a partitioning tree: their current hierarchy nodes and depth-first offsets
    (default: the hierarchies' roots, and offsets from the parts' sizes)."""
    order = np.concatenate(roots) if roots else np.zeros(0, dtype=np.int64)
    rows = order.astype(np.int32) if len(order) < 2**31 else order
    top = max([int(c.max()) for c in columns if len(c)] + [0])
    dtype = np.int8 if top < 2**7 else np.int16 if top < 2**15 else np.int32
    data = np.empty((len(order), len(columns)), dtype=dtype)
    for j, col in enumerate(columns):
        data[:, j] = col[order]
    sizes = np.array([len(r) for r in roots], dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    keys = starts.copy() if keys is None else np.asarray(keys, dtype=np.int64)
    nodes = np.zeros((len(roots), n_nodes), np.int32) if nodes is None else np.asarray(nodes, np.int32)
    return Level(rows, data, starts, sizes, keys, nodes.reshape(len(roots), n_nodes))


def batches(level: Level, rows: int):
    """The level cut into levels of consecutive parts of about `rows` records each."""
    ends = np.cumsum(level.sizes)
    first = 0
    while first < level.n_segments:
        last = int(np.searchsorted(ends, ends[first] - level.sizes[first] + rows, side="right"))
        last = max(last, first + 1)
        lo = int(level.starts[first])
        hi = int(ends[last - 1])
        yield Level(level.rows[lo:hi], level.data[lo:hi], level.starts[first:last] - lo, level.sizes[first:last],
                    level.keys[first:last], level.nodes[first:last])
        first = last


class Leaves:
    """The classes found so far, with their depth-first keys."""

    def __init__(self):
        self._rows: list[np.ndarray] = []
        self._leaf: list[np.ndarray] = []
        self._keys: list[np.ndarray] = []
        self._count = 0

    def add(self, rows: np.ndarray, leaf: np.ndarray, keys: np.ndarray) -> None:
        """Records `rows` of classes `leaf` (indices into `keys`)."""
        if len(keys):
            self._rows.append(rows)
            self._leaf.append(leaf + self._count)
            self._keys.append(keys)
            self._count += len(keys)

    def add_level(self, level: Level) -> None:
        """Every part of `level` becomes a class."""
        self.add(level.rows, level.seg_of_row, level.keys)

    def groups(self, n: int) -> np.ndarray:
        """Group id of every instance row: classes numbered in depth-first order."""
        groups = np.zeros(n, dtype=np.int64)
        if not self._keys:
            return groups
        keys = np.concatenate(self._keys)
        rank = np.empty(len(keys), dtype=np.int64)
        rank[np.argsort(keys, kind="stable")] = np.arange(len(keys))
        groups[np.concatenate(self._rows)] = rank[np.concatenate(self._leaf)]
        return groups

    def keys_of_rows(self, n: int) -> np.ndarray:
        """The depth-first key of every instance row's class: the offset of the class's
        first record in the depth-first order of the whole partitioning."""
        out = np.zeros(n, dtype=np.int64)
        if self._keys:
            out[np.concatenate(self._rows)] = np.concatenate(self._keys)[np.concatenate(self._leaf)]
        return out


def split_level(
    level: Level,
    n_children: np.ndarray,
    label: np.ndarray,
    min_active: int,
    leaves: Leaves,
    child_nodes: tuple[np.ndarray, np.ndarray] | None = None,
) -> Level:
    """Replace every part by its children; parts and children too small to split again
    become classes.

    Parameters
    ----------
    n_children : array of int, one per part
        0 for a part that is not split (it becomes a class).
    label : array of int, one per record
        The child (0 .. n_children - 1) of each record of a split part.
    min_active : int
        Children with fewer records are classes at once.
    child_nodes : (column, node) arrays over all children, optional
        A hierarchy node that replaces the parent's on that column (-1: none).

    Notes
    -----
    The records are regrouped by one stable sort of their child's (int32) number, so
    each child keeps its records in their previous order: the records of a part stay
    in ascending instance order (relaxed cuts rely on it).
    """
    seg_of_row = level.seg_of_row
    is_split = n_children > 0
    child_base = np.cumsum(n_children) - n_children
    if is_split.all():
        pos = None
        gid = child_base[seg_of_row] + label
    else:
        row_split = is_split[seg_of_row]
        whole = np.flatnonzero(~is_split)
        idle = np.flatnonzero(~row_split)
        leaves.add(level.rows[idle], np.searchsorted(whole, seg_of_row[idle]), level.keys[whole])
        pos = np.flatnonzero(row_split)
        gid = child_base[seg_of_row[pos]] + label[pos]
    n_total = int(n_children.sum())
    gid = gid.astype(np.int32) if n_total < 2**31 else gid
    size = np.bincount(gid, minlength=n_total).astype(np.int64)
    parent = np.repeat(np.arange(level.n_segments, dtype=np.int64), n_children)
    before = np.cumsum(size) - size
    keys = level.keys[parent] + before - before[child_base[parent]]
    active = size >= min_active
    if not active.all():
        rows_active = active[gid]
        small = np.flatnonzero(~active)
        idle = ~rows_active
        idle_pos = np.flatnonzero(idle) if pos is None else pos[idle]
        leaves.add(level.rows[idle_pos], np.searchsorted(small, gid[idle]), keys[small])
        pos = np.flatnonzero(rows_active) if pos is None else pos[rows_active]
        gid = gid[rows_active]
    order = np.argsort(gid, kind="stable")
    index = order if pos is None else pos[order]
    rows = level.rows[index]
    data = np.take(level.data, index, axis=0)
    kept = np.flatnonzero(active)
    sizes = size[kept]
    nodes = level.nodes[parent[kept]]
    if child_nodes is not None and nodes.shape[1]:
        column, node = child_nodes[0][kept], child_nodes[1][kept]
        which = np.flatnonzero(column >= 0)
        nodes[which, column[which]] = node[which]
    return Level(rows, data, np.cumsum(sizes) - sizes, sizes, keys[kept], nodes)


# ------------------------------------------------------------------ frequency sets
@dataclass(frozen=True)
class Runs:
    """The frequency sets of one attribute in several parts.

    Runs are the distinct (part, value) pairs, sorted by part then value: ``seg``
    (index of the part), ``value``, ``count``. ``first[s]`` is part s's first run and
    ``n[s]`` its number of runs. ``row_run`` (if asked for) gives each record's run.
    """

    seg: np.ndarray
    value: np.ndarray
    count: np.ndarray
    first: np.ndarray
    n: np.ndarray
    row_run: np.ndarray | None

    @property
    def last(self) -> np.ndarray:
        return self.first + self.n - 1


def frequency_runs(
    lseg: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, rows: bool = False
) -> Runs:
    """Frequency sets of values `x` (in [lo[s], hi[s]] for the record's part s = lseg).

    Counts into one bin per value of each part's range when these bins are few
    (O(records + bins)), else sorts the (part, value) keys.

    >>> runs = frequency_runs(np.array([0, 0, 0, 1, 1]), np.array([3, 1, 3, 7, 7]),
    ...                       lo=np.array([1, 7]), hi=np.array([3, 7]), rows=True)
    >>> runs.value.tolist(), runs.count.tolist(), runs.first.tolist(), runs.row_run.tolist()
    ([1, 3, 7], [1, 2, 2], [0, 2], [1, 0, 1, 2, 2])
    """
    lo = lo.astype(np.int64)
    span = hi.astype(np.int64) - lo + 1
    base = np.cumsum(span) - span
    n_bins = int(span.sum())
    key = (base - lo)[lseg] + x
    if n_bins <= 4 * len(x) + 65536:
        cnt = np.bincount(key, minlength=n_bins)
        where = np.flatnonzero(cnt)
        count = cnt[where]
        row_run = (np.cumsum(cnt > 0) - 1)[key] if rows else None
    else:
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        brk = np.flatnonzero(sorted_key[1:] != sorted_key[:-1]) + 1
        starts = np.concatenate([[0], brk])
        count = np.diff(np.concatenate([starts, [len(key)]]))
        where = sorted_key[starts]
        row_run = None
        if rows:
            step = np.zeros(len(key), dtype=np.int64)
            step[brk] = 1
            row_run = np.empty(len(key), dtype=np.int64)
            row_run[order] = np.cumsum(step)
    seg = np.searchsorted(base, where, side="right") - 1
    first = np.searchsorted(seg, np.arange(len(lo)), side="left")
    n = np.diff(np.concatenate([first, [len(seg)]]))
    return Runs(seg, lo[seg] + (where - base[seg]), count, first, n, row_run)


def run_counts(runs: Runs, codes: np.ndarray, m: int) -> np.ndarray:
    """Counts of every run over a channel's m values (runs x m), from the records'
    runs (``runs.row_run``) and codes."""
    n_runs = len(runs.count)
    return np.bincount(runs.row_run * m + codes, minlength=n_runs * m).reshape(n_runs, m)


def cumulative_counts(runs: Runs, per_run: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From the counts of every run: the counts of the records up to each run within
    its part (cumulative), and of every part."""
    cum = np.cumsum(per_run, axis=0)
    before = cum[runs.first] - per_run[runs.first]
    return cum - before[runs.seg], cum[runs.last] - before


def prefix_counts(runs: Runs, codes: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts over a channel's m values of the records up to each run within its part
    (cumulative), and of every part: the children's counts of every cut at once.

    >>> runs = frequency_runs(np.array([0, 0, 0]), np.array([5, 6, 5]),
    ...                       lo=np.array([5]), hi=np.array([6]), rows=True)
    >>> upto, total = prefix_counts(runs, np.array([1, 0, 0]), 2)
    >>> upto.tolist(), total.tolist()
    ([[1, 1], [2, 1]], [[2, 1]])
    """
    return cumulative_counts(runs, run_counts(runs, codes, m))


def first_min_per_segment(values: np.ndarray, allowed: np.ndarray, runs: Runs) -> np.ndarray:
    """Per part, the first allowed run with the smallest value (-1 if none).

    >>> runs = frequency_runs(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]),
    ...                       lo=np.array([0, 0]), hi=np.array([1, 1]))
    >>> first_min_per_segment(np.array([3, 3, 2, 5]), np.array([True, True, False, False]), runs).tolist()
    [0, -1]
    """
    big = np.iinfo(np.int64).max
    masked = np.where(allowed, values, big)
    best = np.minimum.reduceat(masked, runs.first)
    n_runs = len(values)
    hit = allowed & (masked == best[runs.seg])
    index = np.minimum.reduceat(np.where(hit, np.arange(n_runs), n_runs), runs.first)
    return np.where(index < n_runs, index, -1)


# ------------------------------------------------------------------ options
def check_time_limit(time_limit, caller: str) -> float | None:
    """`time_limit` as float seconds (None: no limit)."""
    if time_limit is None:
        return None
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, numbers.Real)
        or not time_limit >= 0
    ):
        raise InvalidParameterError(
            f"The 'time_limit' parameter of {caller} must be None or a number of seconds in "
            f"[0, inf]. Got {time_limit!r} instead."
        )
    return float(time_limit)
