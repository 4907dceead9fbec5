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

Readings: docs/papers.md, B-2 (Mondrian) and the Ruggieri section (dMondrian).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._arrays import as_index
from .._memory import check_memory
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


def narrow_dtype(low: int, high: int) -> type:
    """The narrowest signed integer type holding every integer in [low, high]."""
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return dtype
    return np.int64


def index_dtype(n: int) -> type:
    """The integer type of positions (and counts) below n: int32 when it holds them."""
    return np.int32 if n < 2**31 else np.int64


def _dense_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of `values` among their distinct values (the narrowest integer type), and the
    sorted distinct values.

    Integral values over a short range are ranked by counting (O(n)); others by a sort.
    """
    if values.dtype.kind == "b":
        values = values.view(np.uint8)
    if len(values):
        exact = values.dtype.kind in "iu"
        lo, hi = (int(values.min()), int(values.max())) if exact else (values.min(), values.max())
        if np.isfinite(lo) and np.isfinite(hi) and hi - lo <= 4 * len(values) + 1024:
            width = int(hi - lo)
            if exact:  # v - lo lies in [0, width]: no overflow in the stored type
                shifted = (values - values.dtype.type(lo)).astype(narrow_dtype(0, width))
                integral = True
            else:
                shifted = (values - lo).astype(narrow_dtype(0, width))
                integral = np.array_equal(shifted + lo, values)
            if integral:
                present = np.bincount(shifted, minlength=width + 1) > 0
                rank_of = (np.cumsum(present) - 1).astype(narrow_dtype(0, int(present.sum()) - 1))
                return rank_of[shifted], np.flatnonzero(present) + lo
    uniq, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(-1).astype(narrow_dtype(0, len(uniq) - 1)), uniq


def dense_codes(codes: np.ndarray, dtype=np.int64) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for domain indices, by counting (O(n)),
    the inverse as `dtype`.

    >>> present, dense = dense_codes(np.array([4, 1, 4, 2]))
    >>> present.tolist(), dense.tolist()
    ([1, 2, 4], [2, 0, 2, 1])
    """
    if len(codes) and codes.min() >= 0 and codes.max() <= 4 * len(codes) + 1024:
        present = np.bincount(codes) > 0
        rank = (np.cumsum(present) - 1).astype(dtype)
        return np.flatnonzero(present), rank[codes]
    present, inverse = np.unique(codes, return_inverse=True)
    return present, inverse.reshape(-1).astype(dtype)


def rank_column(instance: Instance, name: str) -> RankedColumn:
    """Ranks of a numeric (by value), ordered (by its order) or categorical (by the
    order of its hierarchy's leaves) attribute."""
    attr = instance.schema[name]
    codes = instance.stored_codes(name)
    if attr.kind == "numeric":
        ranks, uniq = _dense_ranks(codes)
        uniq = uniq.astype(float)
        return RankedColumn(name, ranks, uniq, float(uniq[-1] - uniq[0]))
    m = len(attr.domain)
    return RankedColumn(name, codes, np.arange(m, dtype=float), float(m - 1))


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
        codes=instance.stored_codes(name),
        anc=anc,
        child_sibling=sibling[anc[1:]] if h.height else np.zeros((0, len(h.leaves)), np.int32),
        depth=np.array([h.depth[n] for n in nodes], dtype=np.int64),
        n_leaves_under=np.array([h.leaf_count(n) for n in nodes], dtype=np.int64),
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
    codes = instance.stored_codes(name)
    if attr.domain is not None:
        present, dense = dense_codes(codes, narrow_dtype(0, len(attr.domain) - 1))
    else:
        present, dense = np.unique(codes, return_inverse=True)
        dense = dense.reshape(-1).astype(narrow_dtype(0, len(present) - 1))
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
        ground = M.emd_ground(req.distance, target.values, instance.schema[target.name], req.ordered_domain)
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
#: Records per vectorized pass over a level: the temporaries of a pass take a few
#: bytes per record of a chunk, not of the table.
CHUNK = 1 << 18
#: Fewest records per pass: smaller tables pass in eighths of at least this many, so
#: that their temporaries stay small beside the table too, while the per-pass
#: overhead stays negligible.
MIN_CHUNK = 1 << 13


_ARANGE = np.arange(CHUNK, dtype=np.int32)


def chunk_bounds(n: int):
    """The (lo, hi) bounds of consecutive chunks of n records: at most :data:`CHUNK`,
    and about an eighth of n (at least :data:`MIN_CHUNK`) when that is less."""
    step = min(CHUNK, max(MIN_CHUNK, -(-n // 8)))
    for lo in range(0, n, step):
        yield lo, min(lo + step, n)


@dataclass
class Level:
    """The active parts of one tree level.

    ``rows`` holds the records' positions in the instance part after part, and
    ``packed`` their coded columns, one record per row: each column in the narrowest
    integer type that holds it (``layout``, a structured type), the record padded to
    whole words of 1, 2, 4 or 8 bytes, so that moving a record moves one or a few
    words. Part s is ``column(j)[starts[s] : starts[s] + sizes[s]]``. ``keys`` are the parts' offsets in the
    depth-first order of the partitioning, ``nodes`` their current hierarchy node per
    hierarchy-split attribute.
    """

    rows: np.ndarray
    packed: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray
    keys: np.ndarray
    nodes: np.ndarray
    layout: np.dtype

    def column(self, j: int) -> np.ndarray:
        """Coded column j of the records (a view)."""
        return self.packed.view(self.layout)[:, 0][f"c{j}"]

    @property
    def n_segments(self) -> int:
        return len(self.sizes)

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @cached_property
    def seg_of_row(self) -> np.ndarray:
        """The part of every record."""
        return np.repeat(np.arange(self.n_segments, dtype=index_dtype(self.n_segments)), self.sizes)

    def positions(self, segs: np.ndarray) -> tuple[np.ndarray | slice, np.ndarray]:
        """Positions (in ``data``) of the records of parts `segs` (ascending), and the
        index into `segs` of each one's part. All the parts: a slice, so that reading
        their columns copies nothing."""
        if len(segs) == self.n_segments:
            return slice(0, self.n_rows), self.seg_of_row
        sizes = self.sizes[segs]
        lseg = np.repeat(np.arange(len(segs), dtype=np.int64), sizes)
        shift = self.starts[segs] - (np.cumsum(sizes) - sizes)
        return np.arange(int(sizes.sum()), dtype=np.int64) + shift[lseg], lseg


def first_level(
    columns: Sequence[np.ndarray],
    rows: np.ndarray,
    sizes: Sequence[int],
    n_nodes: int,
    *,
    nodes: np.ndarray | None = None,
) -> Level:
    """The level of the root parts: `rows` holds their instance positions part after
    part (each part's ascending), `sizes` the parts' sizes. The level takes `rows` over
    as its own (moving records rewrites it) when it is writeable and already in the
    narrowest position type, so the positions are not held twice.

    `nodes` (parts x hierarchy columns) starts the parts from inner nodes of the
    hierarchies (default: their roots). Keys are the parts' offsets one after another;
    :class:`Leaves` maps them to other depth-first offsets."""
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    n = int(sizes.sum())
    rows = np.asarray(rows)
    rows = rows.astype(index_dtype(int(rows.max(initial=0)) + 1), copy=not rows.flags.writeable)
    layout = record_layout(columns)
    word = next(b for b in (1, 2, 4, 8) if b >= min(layout.itemsize, 8))
    packed = np.zeros((n, layout.itemsize // word), dtype=f"u{word}")
    nodes = np.zeros((len(sizes), n_nodes), np.int32) if nodes is None else np.asarray(nodes, np.int32)
    level = Level(rows, packed, starts, sizes, starts.copy(), nodes.reshape(len(sizes), n_nodes), layout)
    for j, col in enumerate(columns):
        out = level.column(j)
        for lo, hi in chunk_bounds(n):
            out[lo:hi] = col[as_index(rows[lo:hi])]
    return level


def record_layout(columns: Sequence[np.ndarray]) -> np.dtype:
    """A structured type holding one value of every column (field ``c{j}``, the
    narrowest integer type of column j), widest fields first so that each is aligned,
    padded to a whole number of 1, 2, 4 or 8-byte words."""
    types = [np.dtype(narrow_dtype(int(c.min()), int(c.max())) if len(c) else np.int8) for c in columns]
    offsets = [0] * len(types)
    at = 0
    for j in sorted(range(len(types)), key=lambda j: -types[j].itemsize):
        offsets[j] = at
        at += types[j].itemsize
    size = max(at, 1)
    word = next(b for b in (1, 2, 4, 8) if b >= min(size, 8))
    return np.dtype({"names": [f"c{j}" for j in range(len(types))], "formats": types, "offsets": offsets,
                     "itemsize": -(-size // word) * word})


def batches(level: Level, rows: int):
    """The level cut into levels of consecutive parts of about `rows` records each
    (views: splitting a batch rewrites its records in place)."""
    ends = np.cumsum(level.sizes)
    first = 0
    while first < level.n_segments:
        last = int(np.searchsorted(ends, ends[first] - level.sizes[first] + rows, side="right"))
        last = max(last, first + 1)
        lo = int(level.starts[first])
        hi = int(ends[last - 1])
        yield Level(level.rows[lo:hi], level.packed[lo:hi], level.starts[first:last] - lo, level.sizes[first:last],
                    level.keys[first:last], level.nodes[first:last], level.layout)
        first = last


def _expand(values: np.ndarray, sizes: np.ndarray, starts: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """``np.repeat(values, sizes)[lo:hi]`` for parts of `sizes` records at `starts`."""
    first = int(np.searchsorted(starts, lo, side="right")) - 1
    last = int(np.searchsorted(starts, hi - 1, side="right"))
    begin = np.maximum(starts[first:last], lo)
    end = np.minimum(starts[first:last] + sizes[first:last], hi)
    return np.repeat(values[first:last], end - begin)


class Leaves:
    """The classes found so far, each at its place in the depth-first order.

    ``order`` holds the records (instance positions) of the root parts of `level` in the
    depth-first order of their partitioning: the class with key κ and s records is
    ``order[κ : κ + s]``. `keys`, the roots' own depth-first offsets (default: one after
    another), are what :meth:`keys_of_rows` reports.
    """

    def __init__(self, level: Level, keys: np.ndarray | None = None):
        self.order = np.empty(level.n_rows, dtype=level.rows.dtype)
        self._root_starts = level.keys.copy()
        self._root_keys = self._root_starts if keys is None else np.asarray(keys, dtype=np.int64)
        self._keys: list[np.ndarray] = []
        self._sizes: list[np.ndarray] = []

    def found(self, keys: np.ndarray, sizes: np.ndarray) -> None:
        """Classes whose records the caller writes to ``order[key : key + size]``."""
        if len(keys):
            self._keys.append(np.asarray(keys, dtype=np.int64))
            self._sizes.append(np.asarray(sizes, dtype=np.int64))

    def add_level(self, level: Level) -> None:
        """Every part of `level` becomes a class."""
        self.found(level.keys, level.sizes)
        for lo, hi in chunk_bounds(level.n_rows):
            shift = _expand(level.keys - level.starts, level.sizes, level.starts, lo, hi)
            self.order[shift + np.arange(lo, hi)] = level.rows[lo:hi]

    def classes(self) -> tuple[np.ndarray, np.ndarray]:
        """The records in depth-first order and the sizes of the classes along it."""
        if not self._keys:
            return self.order, np.zeros(0, dtype=np.int64)
        keys = np.concatenate(self._keys)
        return self.order, np.concatenate(self._sizes)[np.argsort(keys, kind="stable")]

    def _per_row(self, n: int, per_class, dtype) -> np.ndarray:
        order, sizes = self.classes()
        out = np.zeros(n, dtype=dtype)
        starts = np.cumsum(sizes) - sizes
        values = per_class(starts).astype(dtype)
        for lo, hi in chunk_bounds(len(order)):
            out[as_index(order[lo:hi])] = _expand(values, sizes, starts, lo, hi)
        return out

    def groups(self, n: int) -> np.ndarray:
        """Group id of every instance row: classes numbered in depth-first order (0 for
        rows outside the roots)."""
        n_classes = sum(len(k) for k in self._keys)
        return self._per_row(n, lambda starts: np.arange(len(starts)), index_dtype(n_classes))

    def keys_of_rows(self, n: int) -> np.ndarray:
        """The depth-first key of every instance row's class: the offset of the class's
        first record in the depth-first order of the whole partitioning."""

        def key(starts):
            root = np.searchsorted(self._root_starts, starts, side="right") - 1
            return starts - self._root_starts[root] + self._root_keys[root]

        return self._per_row(n, key, np.int64)


def _ranks_in_chunk(lab: np.ndarray, seg_start: np.ndarray, local: np.ndarray | None) -> np.ndarray:
    """Per record of a chunk, the number of earlier records of the chunk in its child.

    `lab` is the record's child within its part, `seg_start` the chunk position where
    its part begins and `local` numbers the children (ascending with the parts; None
    when every part has at most two children). Two children: counted from a running
    sum; more: one stable counting sort of the (narrow) child labels, which keeps
    every part's records in their order. Positions in a chunk fit 32 bits."""
    n = len(lab)
    if local is None:
        ones = np.cumsum(lab, dtype=np.int32)
        ones -= lab
        ones -= ones[seg_start]  # ones before the record in its part
        zeros = _ARANGE[:n] - seg_start
        zeros -= ones
        return np.where(lab.view(bool) if lab.dtype.itemsize == 1 else lab.astype(bool), ones, zeros)
    order = np.argsort(lab, kind="stable")
    sorted_child = local[order]
    fresh = np.ones(n, dtype=bool)
    fresh[1:] = sorted_child[1:] != sorted_child[:-1]
    run_start = np.maximum.accumulate(np.where(fresh, _ARANGE[:n], 0))
    out = np.empty(n, dtype=np.int32)
    out[order] = _ARANGE[:n] - run_start
    return out


def _move(column: np.ndarray, dest: np.ndarray, m: int) -> None:
    """Rewrite column[:m] in place: the value of record i goes to dest[i] (records sent
    to m and beyond are dropped). Needs one column of scratch."""
    out = np.empty(len(dest), dtype=column.dtype)
    for lo, hi in chunk_bounds(len(dest)):
        out[as_index(dest[lo:hi])] = column[lo:hi]
    column[:m] = out[:m]


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

    Returns
    -------
    Level
        The active children, whose records now fill the front of `level`'s arrays
        (rewritten in place: `level` is spent).

    Notes
    -----
    Records move by counting, with no sort: a record's place is its child's offset
    plus the number of earlier records of the part in the same child, so each child
    keeps its records in their previous order (the records of a part stay in
    ascending instance order; relaxed cuts rely on it). Records of classes go
    straight to their place in ``leaves.order``. O(records) per level, in chunks, with
    one column of scratch besides the level.
    """
    n = level.n_rows
    n_children = np.asarray(n_children, dtype=np.int64)
    is_split = n_children > 0
    n_eff = np.where(is_split, n_children, 1)  # a part not split is its own child, a class
    idx = index_dtype(n)
    child_base = np.cumsum(n_eff) - n_eff  # int64: the children's ids index arrays
    n_total = int(n_eff.sum())
    parent = np.repeat(np.arange(level.n_segments, dtype=np.int64), n_eff)
    sizes_in, starts_in = level.sizes, level.starts
    level.__dict__.pop("seg_of_row", None)  # not read from here on: its memory serves the moves
    binary = int(n_children.max(initial=0)) <= 2
    if not is_split.all():  # the records of a part that is not split go to its one child
        label[np.repeat(~is_split, sizes_in)] = 0

    def gids(lo: int, hi: int) -> np.ndarray:
        """The child of every record lo..hi-1 (children numbered across the level)."""
        return _expand(child_base, sizes_in, starts_in, lo, hi) + label[lo:hi]

    # Pass 1: each record's rank among the earlier records of its child; child sizes.
    dest = np.empty(n, dtype=idx)
    size = np.zeros(n_total, dtype=np.int64)
    for lo, hi in chunk_bounds(n):
        gid = gids(lo, hi)
        g0, g1 = int(gid.min()), int(gid.max()) + 1
        seg_start = _expand(np.maximum(starts_in - lo, 0).astype(np.int32), sizes_in, starts_in, lo, hi)
        rank = _ranks_in_chunk(label[lo:hi], seg_start, None if binary else gid - g0)
        # Only the part that begins before the chunk has records of its children before it.
        first = int(np.searchsorted(seg_start, 1))
        rank[:first] += size[gid[:first]].astype(np.int32)
        dest[lo:hi] = rank
        size[g0:g1] += np.bincount(gid - g0, minlength=g1 - g0)

    before = np.cumsum(size) - size
    keys = level.keys[parent] + before - before[child_base[parent]]
    active = is_split[parent] & (size >= min_active)
    kept = np.flatnonzero(active)
    sizes = size[kept]
    m = int(sizes.sum())
    new_start = np.zeros(n_total, dtype=idx)
    new_start[kept] = np.cumsum(sizes) - sizes
    done = np.flatnonzero(~active)
    leaves.found(keys[done], size[done])

    # Pass 2: destinations; records of classes go to their place in the leaves (and,
    # in the level's arrays, after the active ones, one after another).
    every = len(done) == 0
    n_idle = m
    for lo, hi in chunk_bounds(n):
        gid = gids(lo, hi)
        r = dest[lo:hi]
        if every:
            r += new_start[gid]
            continue
        idle = ~active[gid]
        where = np.flatnonzero(idle)
        leaves.order[keys[gid[where]] + r[where]] = level.rows[lo:hi][where]
        r += new_start[gid]
        r[where] = n_idle + _ARANGE[: len(where)]
        n_idle += len(where)

    # Pass 3: the active records to the front, child after child.
    _move(level.rows, dest, m)
    packed = level.packed
    for j in range(packed.shape[1]):
        _move(packed[:, 0] if packed.shape[1] == 1 else packed[:, j], dest, m)

    nodes = level.nodes[parent[kept]]
    if child_nodes is not None and nodes.shape[1]:
        real = np.cumsum(is_split[parent]) - 1  # index among the children of split parts
        column, node = child_nodes[0][real[kept]], child_nodes[1][real[kept]]
        which = np.flatnonzero(column >= 0)
        nodes[which, column[which]] = node[which]
    return Level(level.rows[:m], packed[:m], np.cumsum(sizes) - sizes, sizes, keys[kept], nodes, level.layout)


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
    shift = base - lo
    if n_bins <= 4 * len(x) + 65536:
        # Chunk by chunk (the parts are ascending): each chunk counts into its parts' bins.
        cnt = np.zeros(n_bins, dtype=np.int64)
        for a, b in chunk_bounds(len(x)):
            s0, s1 = int(lseg[a]), int(lseg[b - 1])
            k0, k1 = int(base[s0]), int(base[s1] + span[s1])
            cnt[k0:k1] += np.bincount(shift[as_index(lseg[a:b])] + x[a:b] - k0, minlength=k1 - k0)
        where = np.flatnonzero(cnt)
        count = cnt[where]
        row_run = None
        if rows:
            run_of_bin = (np.cumsum(cnt > 0) - 1).astype(index_dtype(len(where)))
            row_run = np.empty(len(x), dtype=run_of_bin.dtype)
            for a, b in chunk_bounds(len(x)):
                row_run[a:b] = run_of_bin[shift[as_index(lseg[a:b])] + x[a:b]]
    else:
        key = shift[lseg] + x
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
    runs (``runs.row_run``) and codes. The runs x m matrix and its cumulative sums
    (:func:`cumulative_counts`: three of that shape, 8 bytes a cell) are checked
    against the memory limit first, so a sensitive attribute of 100,000 values cut
    over thousands of runs is refused with :class:`MemoryLimitError` rather than
    killed by the system."""
    n_runs = len(runs.count)
    check_memory(3 * 8 * n_runs * m, f"The counts of {n_runs:,} candidate cuts over {m:,} values",
                 "generalize the sensitive attribute to fewer values first (a hierarchy with "
                 "fewer leaves), or use method='sabre'", caller="mondrian")
    out = np.zeros(n_runs * m, dtype=np.int64)
    for lo, hi in chunk_bounds(len(codes)):
        run = runs.row_run[lo:hi]
        r0, r1 = int(run.min()), int(run.max()) + 1
        key = np.multiply(run - r0, m, dtype=np.int64) + codes[lo:hi]
        out[r0 * m : r1 * m] += np.bincount(key, minlength=(r1 - r0) * m)
    return out.reshape(n_runs, m)


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
#: Seconds per cell (record x generalizable attribute) that a top-down heuristic keeps of
#: its time limit for building its release once it stops cutting: generalize_partition
#: took 2.4e-8 to 5.7e-8 s CPU a cell on UCI Adult (30,162 records x 7 generalizable
#: attributes, the count the formula of :func:`cut_deadline` takes: 0.005-0.012 s), and
#: wall-clock time is twice that and more on a loaded 2-core machine.
RELEASE_SECONDS_PER_CELL = 1e-7


def cut_deadline(started: float, limit: float | None, instance) -> float | None:
    """When a heuristic started at `started` (``time.perf_counter``) with `limit` seconds
    stops cutting: its limit less the release's expected build
    (:data:`RELEASE_SECONDS_PER_CELL` a cell), so that the release is returned within
    the limit. None without a limit."""
    if limit is None:
        return None
    cells = instance.n_rows * max(len(instance.schema.generalizable), 1)
    return started + limit - RELEASE_SECONDS_PER_CELL * cells


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
