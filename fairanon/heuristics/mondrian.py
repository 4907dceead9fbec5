"""Multidimensional Mondrian, strict and relaxed (LeFevre, DeWitt, Ramakrishnan, ICDE 2006),
with k-anonymity, l-diversity and t-closeness split predicates (tMondrian, l-diverse
Mondrian).

Top-down partitioning of the quasi-identifier space: a partition is cut on its widest
allowed attribute (numeric/ordered: at a value; categorical: into the children of its
hierarchy node, or at a value of the hierarchy's leaf order) as long as every child
satisfies every requirement. The requirements must be union-monotone, so the leaves
form a valid release. The reading and the options: docs/papers.md, B-2. The partitions of a
tree level are cut together, with numpy, by the engine of
:mod:`fairanon.heuristics.topdown`.

Cut rules are plain functions kept in :data:`CUT_RULES`; a callable with the same
signature works too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .._arrays import as_index, gather
from .._validation import check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.instance import Instance
from ..models.requirements import (
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    MultiplicativeTCloseness,
    Requirement,
    StochasticTCloseness,
    TCloseness,
    validate_requirements,
)
from ..release import Release, Status, generalize_partition, provenance
from . import topdown as E
from .risksearch import smallest_k, split_risk

__all__ = [
    "CATEGORICAL_SPLITS",
    "CUT_RULES",
    "cut_balanced",
    "cut_median",
    "mondrian",
    "mondrian_parts",
    "mondrian_relaxed",
]


# ------------------------------------------------------------------ cut rules
def cut_median(counts: np.ndarray) -> np.ndarray:
    """The median cut of a frequency set [1]_ (docs/papers.md, B-2).

    Parameters
    ----------
    counts : array of int
        Counts c_1..c_u of the distinct values v_1 < ... < v_u of one attribute in a
        partition.

    Returns
    -------
    array of int
        At most one cut index j (0-based): the left child holds the values v_1..v_{j+1}.
        With half = floor(n / 2), j + 1 is the smallest s with c_1 + ... + c_s >= half;
        no cut when that value is the largest (the right child would be empty).

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
       k-anonymity. ICDE 2006. https://doi.org/10.1109/ICDE.2006.101

    Examples
    --------
    >>> cut_median(np.array([3, 8, 1])).tolist()  # docs/papers.md, B-2: 11 | 1
    [1]
    >>> cut_median(np.array([1, 4, 1])).tolist()  # half = 3: left holds 5 rows, right 1
    [1]
    >>> cut_median(np.array([5, 1])).tolist()
    [0]
    >>> cut_median(np.array([1, 5])).tolist()  # half = 3 is reached at the last value
    []
    """
    counts = np.asarray(counts)
    if len(counts) < 2:
        return np.zeros(0, dtype=np.int64)
    half = int(counts.sum()) // 2
    s = int(np.searchsorted(np.cumsum(counts), half, side="left"))
    if s >= len(counts) - 1:
        return np.zeros(0, dtype=np.int64)
    return np.array([s], dtype=np.int64)


def cut_balanced(counts: np.ndarray) -> np.ndarray:
    """Every non-trivial cut of a frequency set, most balanced first (docs/papers.md, B-2).

    Cut j leaves c_1 + ... + c_{j+1} rows on the left; cuts are ordered by
    | left - right |, ties toward the smaller j. Mondrian takes the first allowable one,
    so it also finds cuts the median rule misses when values repeat.

    >>> cut_balanced(np.array([3, 8, 1])).tolist()  # V3: 3 | 9 before 11 | 1
    [0, 1]
    >>> cut_balanced(np.array([1, 1, 1, 1])).tolist()
    [1, 0, 2]
    """
    counts = np.asarray(counts)
    if len(counts) < 2:
        return np.zeros(0, dtype=np.int64)
    left = np.cumsum(counts)[:-1]
    imbalance = np.abs(2 * left - int(counts.sum()))
    return np.argsort(imbalance, kind="stable").astype(np.int64)


#: Cut rules for numeric and ordered attributes, by name. A rule maps the frequency set
#: of a partition (counts of its distinct values, in order) to the cut indices to try,
#: in order; Mondrian takes the first allowable one.
CUT_RULES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "median": cut_median,
    "balanced": cut_balanced,
}


#: How categorical attributes are cut: "hierarchy" splits a partition into the children
#: of its current hierarchy node (Basic Mondrian); "order" cuts at a value of the
#: hierarchy's leaf order, like an ordered attribute (the release still shows the
#: lowest common ancestor of each class's values).
CATEGORICAL_SPLITS = ("hierarchy", "order")

_SUGGEST = {
    DiversityConstraint: "method='diva' or method='cpsat'",
    AlphaProtection: "method='dmondrian' (Ruggieri's dMondrian) or method='cpsat'",
    MultiplicativeTCloseness: "method='bucketization'",
    StochasticTCloseness: "method='stochastic'",
}


def _reject_non_monotone(requirements: Sequence[Requirement], caller: str) -> None:
    for req in requirements:
        hint = _SUGGEST.get(type(req), "method='cpsat'")
        if not req.union_monotone:
            raise IncompatibleRequirementError(
                f"{caller} cannot enforce {req}: it is not union-monotone, so checking the "
                f"children of each cut does not make the release satisfy it. Use {hint}."
            )
        if not isinstance(req, (KAnonymity, LDiversity, TCloseness)):
            raise IncompatibleRequirementError(
                f"{caller} cannot enforce {req}: it checks only KAnonymity, LDiversity and "
                f"TCloseness. Use {hint}."
            )


def _resolve_cut_rule(cut_rule, caller: str) -> tuple[Callable[[np.ndarray], np.ndarray], str]:
    if isinstance(cut_rule, str) and cut_rule in CUT_RULES:
        return CUT_RULES[cut_rule], cut_rule
    if callable(cut_rule):
        return cut_rule, getattr(cut_rule, "__name__", repr(cut_rule))
    names = ", ".join(repr(k) for k in sorted(CUT_RULES))
    raise InvalidParameterError(
        f"The 'cut_rule' parameter of {caller} must be one of {names} or a callable. "
        f"Got {cut_rule!r} instead."
    )


# ------------------------------------------------------------------ the engine
#: Records of the consecutive parts finished together once every part is small.
_BATCH_ROWS = 1 << 18


@dataclass(frozen=True)
class MondrianColumns:
    """The coded quasi-identifiers Mondrian cuts, in the schema's generalizable order:
    ``attrs[a]`` is ("r", j) for ``ranked[j]`` (cut at a value) or ("h", j) for
    ``hier[j]`` (split along its hierarchy)."""

    attrs: tuple[tuple[str, int], ...]
    ranked: tuple[E.RankedColumn, ...]
    hier: tuple[E.HierarchyColumn, ...]


def mondrian_columns(instance: Instance, categorical: str = "hierarchy") -> MondrianColumns:
    """The columns Mondrian cuts, coded from `instance`."""
    attrs, ranked, hier = [], [], []
    for name in instance.schema.generalizable:
        attr = instance.schema[name]
        if attr.kind == "categorical" and categorical == "hierarchy":
            attrs.append(("h", len(hier)))
            hier.append(E.hierarchy_column(instance, name))
        else:
            attrs.append(("r", len(ranked)))
            ranked.append(E.rank_column(instance, name))
    return MondrianColumns(tuple(attrs), tuple(ranked), tuple(hier))


class _Mondrian:
    """Level-synchronous Mondrian over coded columns.

    ``data`` columns: the ranked attributes, the hierarchy-split attributes, and the
    target codes of the checks. The decisions
    (:meth:`decide`) read per-part statistics only (tight ranges, frequency sets and
    their target counts), from the records (:class:`_RowSource`) or from counts
    gathered elsewhere, so a part is cut the same way wherever its records are.
    """

    def __init__(self, columns: MondrianColumns, checks: E.Checks, rule, relaxed: bool):
        self.checks = checks
        self.rule = rule
        self.relaxed = relaxed
        self.attrs = list(columns.attrs)
        self.ranked = list(columns.ranked)
        self.hier = list(columns.hier)
        d_r = len(self.ranked)
        self.hier_col0 = d_r
        self.target_col = {
            name: d_r + len(self.hier) + i for i, name in enumerate(checks.targets)
        }
        self.columns = (
            [c.ranks for c in self.ranked]
            + [h.codes for h in self.hier]
            + [t.codes for t in checks.targets.values()]
        )
        self.min_size = checks.min_size
        self.min_split = 2 * checks.min_size
        fanout = max([int(h.fanout.max()) for h in self.hier if len(h.fanout)] + [2])
        self.label_dtype = np.uint8 if fanout <= 255 else np.int32

    # ------------------------------------------------------------- the level loop
    def run(self, rows: np.ndarray, sizes, deadline: float | None, *, nodes=None, keys=None):
        """Partition the root parts whose instance positions `rows` holds part after part
        (`sizes` records each; the level takes `rows` over); `nodes` and `keys` give each
        root's hierarchy nodes and depth-first offset when it is not a root of the tree."""
        level = E.first_level(self.columns, rows, sizes, len(self.hier), nodes=nodes)
        leaves = E.Leaves(level, keys)
        return leaves, self._finish(level, leaves, deadline)

    def _finish(self, level: E.Level, leaves: E.Leaves, deadline: float | None) -> bool:
        """Split `level` down to its classes; True if the time ran out first: a level is
        not split when the longest split so far would end past `deadline`. Once every
        part is small, consecutive parts are finished a batch at a time: a batch's
        records stay in the processor's caches from level to level."""
        longest = 0.0
        while level.n_segments:
            if deadline is not None and time.perf_counter() + longest > deadline:
                leaves.add_level(level)
                return True
            if level.n_rows > _BATCH_ROWS and int(level.sizes.max()) <= _BATCH_ROWS // 2:
                timed_out = False
                for batch in E.batches(level, _BATCH_ROWS):
                    if timed_out:  # the parts of the batches left become classes
                        leaves.add_level(batch)
                    else:
                        timed_out = self._finish(batch, leaves, deadline)
                return timed_out
            clock = time.perf_counter()
            level = self._step(level, leaves)
            longest = max(longest, time.perf_counter() - clock)
        return False

    def bounds(self, level: E.Level) -> tuple[np.ndarray, np.ndarray]:
        """The tight rank box of the ranked attributes of every part."""
        d_r = len(self.ranked)
        lo = np.zeros((level.n_segments, d_r), dtype=np.int64)
        hi = np.zeros((level.n_segments, d_r), dtype=np.int64)
        for j in range(d_r):
            lo[:, j] = np.minimum.reduceat(level.column(j), level.starts)
            hi[:, j] = np.maximum.reduceat(level.column(j), level.starts)
        return lo, hi

    def widths(self, nodes: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Negated normalized widths (parts x attributes; +inf: no cut possible)."""
        neg = np.full((len(nodes), len(self.attrs)), np.inf)
        for a, (kind, j) in enumerate(self.attrs):
            if kind == "r":
                col = self.ranked[j]
                cand = np.flatnonzero(hi[:, j] > lo[:, j])
                neg[cand, a] = -((col.values[hi[cand, j]] - col.values[lo[cand, j]]) / col.span)
            else:
                h = self.hier[j]
                node = nodes[:, j]
                cand = np.flatnonzero(~h.is_leaf[node])
                neg[cand, a] = -(h.n_leaves_under[node[cand]] / h.n_leaves)
        return neg

    def decide(self, sizes: np.ndarray, nodes: np.ndarray, lo: np.ndarray, hi: np.ndarray, source):
        """Cut every part: the number of children of each (0: none) and, per hierarchy
        split, (parts, attribute, the children's nodes). `source` reads the parts'
        statistics and records the cuts."""
        neg = self.widths(nodes, lo, hi)
        # Widest first, ties to the lowest attribute index (stable sort).
        order = np.argsort(neg, axis=1, kind="stable")
        n_cand = np.isfinite(neg).sum(axis=1)
        undecided = (sizes >= self.min_split) & (n_cand > 0)
        n_children = np.zeros(len(sizes), dtype=np.int64)
        hier_children = []
        for r in range(len(self.attrs)):
            live = undecided & (n_cand > r)
            if not live.any():
                break
            choice = order[:, r]
            for a in np.unique(choice[live]):
                segs = np.flatnonzero(live & (choice == a))
                kind, j = self.attrs[a]
                if kind == "r":
                    ok = source.cut_ranked(self, segs, j, lo[segs, j], hi[segs, j])
                    n_children[segs[ok]] = 2
                else:
                    ok, n_runs, child = source.split_hierarchy(self, segs, j, nodes[segs, j])
                    n_children[segs[ok]] = n_runs[ok]
                    keep = ok[np.repeat(np.arange(len(segs)), n_runs)]
                    hier_children.append((segs[ok], j, child[keep]))
                undecided[segs[ok]] = False
        return n_children, hier_children

    def _step(self, level: E.Level, leaves: E.Leaves) -> E.Level:
        lo, hi = self.bounds(level)
        source = _RowSource(level, self.label_dtype)
        n_children, hier_children = self.decide(level.sizes, level.nodes, lo, hi, source)
        child_nodes = None
        if hier_children:
            child_nodes = child_node_table(n_children, hier_children)
        return E.split_level(level, n_children, source.label, self.min_split, leaves, child_nodes)

    # ------------------------------------------------------------- counts of candidates
    def _test_cuts(self, runs, per_run, cand, sizes_seg, left):
        """Do both children of the cuts after runs `cand` pass (targets read)?"""
        counts = {}
        seg = runs.seg[cand]
        for name in self.checks.targets:
            cum, total = E.cumulative_counts(runs, per_run(name))
            lc = cum[cand]
            counts[name] = np.vstack([lc, total[seg] - lc])
        sizes = np.concatenate([left, sizes_seg[seg] - left])
        ok = self.checks.passing(sizes, counts)
        return ok[: len(cand)] & ok[len(cand) :]

    # ------------------------------------------------------------- ranked attributes
    def ranked_cut(self, runs: E.Runs, per_run, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The allowable cut of each part from its frequency set: the run after which
        it is cut, and whether there is one. ``per_run(name)`` gives the counts of
        each run over a target's values (runs x values)."""
        reads = self.checks.reads_targets
        cum_all = np.cumsum(runs.count)
        base = cum_all[runs.first] - runs.count[runs.first]
        left_of_run = cum_all - base[runs.seg]
        if self.rule is cut_median:
            cut = np.searchsorted(cum_all, base + sizes // 2, side="left")
            left = left_of_run[cut]
            ok = (cut < runs.last) & (left >= self.min_size) & (sizes - left >= self.min_size)
            if reads and ok.any():
                which = np.flatnonzero(ok)
                ok[which] = self._test_cuts(runs, per_run, cut[which], sizes, left[which])
            return cut, ok
        if self.rule is cut_balanced:
            return self._cut_balanced(runs, per_run, sizes, left_of_run)
        return self._cut_callable(runs, per_run, sizes, left_of_run)

    def _cut_balanced(self, runs, per_run, sizes, left):
        n_runs = len(runs.count)
        seg_size = sizes[runs.seg]
        allowed = (
            (np.arange(n_runs) < runs.last[runs.seg])
            & (left >= self.min_size)
            & (seg_size - left >= self.min_size)
        )
        imbalance = np.abs(2 * left - seg_size)
        best = E.first_min_per_segment(imbalance, allowed, runs)
        tried = np.flatnonzero(best >= 0)
        if self.checks.reads_targets and len(tried):
            # The most balanced cut usually passes; where it fails, every other cut of
            # the part is tested and the most balanced passing one is taken.
            passed = self._test_cuts(runs, per_run, best[tried], sizes, left[best[tried]])
            failed = tried[~passed]
            if len(failed):
                allowed[best[failed]] = False
                retry = np.zeros(len(sizes), dtype=bool)
                retry[failed] = True
                rest = np.flatnonzero(allowed & retry[runs.seg])
                if len(rest):
                    allowed[rest] = self._test_cuts(runs, per_run, rest, sizes, left[rest])
                best = E.first_min_per_segment(imbalance, allowed, runs)
        return best, best >= 0

    def _cut_callable(self, runs, per_run, sizes, left):
        """A user's cut rule, called on each part's frequency set in turn."""
        cut = np.full(len(sizes), -1, dtype=np.int64)
        for s in range(len(sizes)):
            first, n = int(runs.first[s]), int(runs.n[s])
            tries = np.asarray(self.rule(runs.count[first : first + n]), dtype=np.int64)
            tries = tries.reshape(-1)
            tries = first + tries[(tries >= 0) & (tries < n - 1)]
            lt = left[tries]
            tries = tries[(lt >= self.min_size) & (sizes[s] - lt >= self.min_size)]
            if len(tries) and self.checks.reads_targets:
                tries = tries[self._test_cuts(runs, per_run, tries, sizes, left[tries])]
            if len(tries):
                cut[s] = tries[0]
        return cut, cut >= 0

    def _cut_relaxed(self, level, pos, lseg, x, lo, hi, sizes):
        """Relaxed cut at the median value: rows equal to it go left, in the instance's
        row order, until the left child holds floor(|P| / 2) rows."""
        runs = E.frequency_runs(lseg, x, lo, hi)
        cum_all = np.cumsum(runs.count)
        base = cum_all[runs.first] - runs.count[runs.first]
        half = sizes // 2
        cut = np.searchsorted(cum_all, base + half, side="left")
        less = cum_all[cut] - runs.count[cut] - base
        v = runs.value[cut][lseg]
        mid = x == v
        seen = np.cumsum(mid)
        begin = np.cumsum(sizes) - sizes
        rank = seen - 1 - (seen[begin] - mid[begin])[lseg]
        lab = np.where(x < v, 0, np.where(mid, rank >= (half - less)[lseg], 1)).astype(np.int64)
        ok = half >= self.min_size
        if self.checks.reads_targets and ok.any():
            counts = {}
            for name, target in self.checks.targets.items():
                codes = level.column(self.target_col[name])[pos]
                flat = np.bincount((2 * lseg + lab) * target.m + codes, minlength=2 * len(sizes) * target.m)
                counts[name] = flat.reshape(len(sizes), 2, target.m).transpose(1, 0, 2).reshape(-1, target.m)
            child = np.concatenate([half, sizes - half])
            passed = self.checks.passing(child, counts)
            ok &= passed[: len(sizes)] & passed[len(sizes) :]
        return ok, lab

    # ------------------------------------------------------------- hierarchies

    # ------------------------------------------------------------- hierarchies
    def hierarchy_split(self, runs: E.Runs, per_run, node: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Split into the children of each part's node (runs: the children present,
        by sibling position): allowable iff every non-empty child passes; a single
        non-empty child just moves the node down. Returns ok per part and the node of
        every run."""
        h = self.hier[j]
        run_ok = runs.count >= self.min_size
        if self.checks.reads_targets:
            counts = {name: per_run(name) for name in self.checks.targets}
            run_ok &= self.checks.passing(runs.count, counts)
        ok = (runs.n == 1) | np.logical_and.reduceat(run_ok, runs.first)
        return ok, h.children[h.child_start[node[runs.seg]] + runs.value]


def child_node_table(n_children: np.ndarray, hier_children) -> tuple[np.ndarray, np.ndarray]:
    """The (column, node) of every child of a level (-1: no hierarchy split)."""
    total = int(n_children.sum())
    column = np.full(total, -1, dtype=np.int64)
    node = np.zeros(total, dtype=np.int64)
    base = np.cumsum(n_children) - n_children
    for segs, j, nodes in hier_children:
        counts = n_children[segs]
        ids = np.repeat(base[segs] - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))
        column[ids] = j
        node[ids] = nodes
    return column, node


class _Lazy:
    """Per-target counts computed on first use."""

    def __init__(self, compute):
        self.compute, self.done = compute, {}

    def __call__(self, name):
        if name not in self.done:
            self.done[name] = self.compute(name)
        return self.done[name]


class _RowSource:
    """Statistics of the parts of a level read from their records, and the child
    label of every record."""

    def __init__(self, level: E.Level, dtype):
        self.level = level
        self.label = np.zeros(level.n_rows, dtype=dtype)

    def _set_labels(self, pos, lseg: np.ndarray, label_of) -> None:
        """label[pos] = label_of(lo, hi) for the records lo..hi-1 of `pos`, a chunk at a time."""
        for lo, hi in E.chunk_bounds(len(lseg)):
            where = slice(pos.start + lo, pos.start + hi) if isinstance(pos, slice) else pos[lo:hi]
            self.label[where] = label_of(lo, hi)

    def cut_ranked(self, eng: _Mondrian, segs, j, lo, hi) -> np.ndarray:
        level = self.level
        pos, lseg = level.positions(segs)
        x = level.column(j)[pos]
        sizes = level.sizes[segs]
        if eng.relaxed:
            ok, lab = eng._cut_relaxed(level, pos, lseg, x, lo, hi, sizes)
            self.label[pos] = lab
            return ok
        runs = E.frequency_runs(lseg, x, lo, hi, rows=eng.checks.reads_targets)
        per_run = _Lazy(lambda name: E.run_counts(
            runs, level.column(eng.target_col[name])[pos], eng.checks.targets[name].m))
        cut, ok = eng.ranked_cut(runs, per_run, sizes)
        threshold = runs.value[np.where(ok, cut, runs.first)]
        self._set_labels(pos, lseg, lambda lo, hi: x[lo:hi] > threshold[as_index(lseg[lo:hi])])
        return ok

    def split_hierarchy(self, eng: _Mondrian, segs, j, node):
        level = self.level
        pos, lseg = level.positions(segs)
        h = eng.hier[j]
        leaf = level.column(eng.hier_col0 + j)[pos]
        depth = h.depth[node]
        if (depth == depth[0]).all():  # the usual case: one row of the table
            sibling = gather(h.child_sibling[depth[0]], leaf)
        else:
            sibling = h.child_sibling[depth[lseg], leaf]
        runs = E.frequency_runs(
            lseg, sibling, np.zeros(len(segs), dtype=np.int64), h.fanout[node] - 1, rows=True
        )
        per_run = _Lazy(lambda name: E.run_counts(
            runs, level.column(eng.target_col[name])[pos], eng.checks.targets[name].m))
        ok, child = eng.hierarchy_split(runs, per_run, node, j)
        self._set_labels(pos, lseg, lambda lo, hi: runs.row_run[lo:hi] - runs.first[as_index(lseg[lo:hi])])
        return ok, runs.n, child


# ------------------------------------------------------------------ the method
def mondrian(
    instance,
    requirements,
    *,
    cut_rule="median",
    relaxed: bool = False,
    categorical: str = "hierarchy",
    seed=None,
    time_limit=None,
) -> Release:
    """Multidimensional Mondrian partitioning [1]_ with k, l and t split checks.

    Parameters
    ----------
    instance : Instance
        The table; only role "qi" attributes are generalized. The protected attribute
        is a quasi-identifier released unchanged, so no class mixes its values.
    requirements : sequence of Requirement
        KAnonymity, LDiversity (distinct, entropy, recursive) and TCloseness (equal,
        ordered, hierarchical EMD against the whole table), checked on every child of
        every cut; each must be union-monotone.
    cut_rule : {"median", "balanced"} or callable, default="median"
        "median" reproduces [1]_; "balanced" tries every cut of a numeric or ordered
        attribute, most balanced first, and takes the first allowable one (see Notes).
        A callable maps a frequency set (counts of the distinct values, in order) to
        cut indices to try, as :func:`cut_median` and :func:`cut_balanced` do (it is
        called once per partition, so it is much slower than the named rules).
    relaxed : bool, default=False
        Relaxed partitioning [1]_: numeric and ordered attributes are cut at the
        median value and records equal to it go to the left child, in the
        instance's row order, until it holds floor(|P| / 2) records; the two classes'
        ranges may share the median value. Needs ``cut_rule="median"``. Categorical
        attributes split along their hierarchy as in strict partitioning (or, with
        ``categorical="order"``, are cut relaxed too).
    categorical : {"hierarchy", "order"}, default="hierarchy"
        How categorical attributes are cut (:data:`CATEGORICAL_SPLITS`).
    seed : None, int or numpy.random.Generator, default=None
        Accepted for the common method signature and recorded; the algorithm uses no
        randomness, so the output is the same for every seed.
    time_limit : float, optional
        Seconds, the release's build included: no level is split when the longest
        split so far would end past the limit less the build's expected time
        (:data:`~fairanon.heuristics.topdown.RELEASE_SECONDS_PER_CELL` a cell); the
        partitions not yet split then become classes as they are (the release stays
        valid) and ``provenance["time_limit_reached"]`` is True. UCI Adult (k = 5,
        2 cores, shared): returned at 0.086 and 0.185 s for limits of 0.1 and 0.2 s
        (0.116 s for 0.1 before the look-ahead).

    Returns
    -------
    Release
        Status FEASIBLE; or INFEASIBLE, with a ``reason`` naming the requirement, when
        the whole table or the records of one protected value already violate a
        requirement (splitting cannot repair that). An INFEASIBLE release still holds
        the table of the coarsest partition (one class per protected value).
        Group ids number the classes in depth-first order, left child first.

    Raises
    ------
    IncompatibleRequirementError
        If a requirement is not union-monotone (DiversityConstraint, AlphaProtection),
        or refers to an attribute the instance cannot use.
    InvalidParameterError
        For an unknown cut rule or categorical split, a bad time limit or seed, k
        larger than the table, or ``relaxed=True`` with another cut rule than "median".

    See Also
    --------
    fairanon.models.verify.verify : re-checks every guarantee of the release.
    mondrian_relaxed : this function with ``relaxed=True``.

    Notes
    -----
    Per partition, the allowed attribute with the widest normalized width is tried
    first (numeric: value range / table range; ordered: rank span / (m - 1) over the
    attribute's order; categorical: leaves under the partition's current hierarchy
    node / all leaves; ties to the lowest attribute index). Numeric and ordered
    attributes are cut at a value (left: <= v, right: > v); categorical ones split
    into the non-empty children of the current node, all of which must pass (a single
    non-empty child just moves the node down). An attribute whose cut is not allowable
    is dropped for that partition; a partition with no allowable cut is a class,
    released with its tight summary (range or lowest common ancestor).

    Implementation: the partitions of one level of the recursion are processed
    together (:mod:`fairanon.heuristics.topdown`). Attributes are integer ranks,
    frequency sets are counted with one ``bincount`` per attribute and level (or a
    sort when a partition's value range is much larger than the partition), and the
    records are regrouped by one stable integer sort per level. A level costs
    O(a d + a log a) for its a active records and d quasi-identifiers, and median cuts
    give O(log n) levels: O(n d log n) in all, as [1]_'s O(n log n) with a linear-time
    median. Each candidate child costs O(m) per l/t requirement (m target values; a
    hierarchical EMD O(m + nodes), over the at most 2m - 1 nodes that cover some of
    the values); with ``cut_rule="balanced"`` and l/t requirements, a partition whose
    most balanced cut fails has all its cuts tested at once from prefix sums of the
    target counts. Memory O(n (d + targets)) int32
    plus an O(leaves * height) ancestor table per hierarchy. A partition is examined
    once per attribute at most, so the worst case is d failed attempts per partition.

    Departures from [1]_: (a) categorical attributes split top-down along their
    hierarchy (as in Basic Mondrian, docs/papers.md, B-2) unless
    ``categorical="order"``; (b) besides k, l-diversity and t-closeness are split
    predicates (as in tMondrian); (c) the "balanced" cut rule is ours: with repeated
    values the median cut can be unallowable while another cut is allowable
    (docs/papers.md, B-2), and with l/t predicates "median not allowable" no
    longer implies "no cut allowable"; (d) the protected attribute is never
    generalized, so the root is first split by its values; (e) a partition with
    fewer than 2 * max(k, ceil(l)) records is not examined (no cut can leave that
    many on both sides). Released classes are regrouped by released values, so two
    leaves with identical summaries merge; union-monotone requirements still hold for
    the union.

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
       k-anonymity. ICDE 2006. https://doi.org/10.1109/ICDE.2006.101

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> rel = mondrian(inst, [fa.KAnonymity(2), fa.LDiversity(2)], seed=0)
    >>> rel.status, rel.n_groups
    (<Status.FEASIBLE: 'FEASIBLE'>, 4)
    >>> fa.verify(inst, rel, [fa.KAnonymity(2), fa.LDiversity(2)]).passed
    True
    >>> mondrian(inst, [fa.KAnonymity(4)], cut_rule="balanced").provenance["params"]
    {'cut_rule': 'balanced', 'relaxed': False, 'categorical': 'hierarchy', 'time_limit': None}
    """
    return _mondrian(
        "mondrian", instance, requirements, cut_rule, relaxed, categorical, seed, time_limit
    )


def mondrian_relaxed(
    instance, requirements, *, categorical: str = "hierarchy", seed=None, time_limit=None
) -> Release:
    """Relaxed multidimensional Mondrian [1]_: :func:`mondrian` with ``relaxed=True``.

    Records equal to the median value of the cut attribute are shared out so that the
    two children differ in size by at most one; their ranges may overlap at that value
    (docs/papers.md, B-2, the vector 1, 2, 2, 2, 2, 3).

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
       k-anonymity. ICDE 2006. https://doi.org/10.1109/ICDE.2006.101

    Examples
    --------
    >>> import pandas as pd
    >>> inst = fa.Instance(pd.DataFrame({"v": [1, 2, 2, 2, 2, 3]}),
    ...                    fa.Schema([fa.Attribute("v", kind="numeric")]))
    >>> mondrian_relaxed(inst, [fa.KAnonymity(2)]).table["v"].tolist()
    ['[1-2]', '[1-2]', '[1-2]', '[2-3]', '[2-3]', '[2-3]']
    """
    return _mondrian(
        "mondrian-relaxed", instance, requirements, "median", True, categorical, seed, time_limit
    )


def mondrian_parts(
    instance: Instance, k: int, parts: Sequence[np.ndarray], *, deadline: float | None = None
) -> tuple[list[np.ndarray], bool]:
    """Mondrian's k-anonymous classes inside each of `parts`, all cut together.

    The cuts are :func:`mondrian`'s (median rule, hierarchy splits, every child at least
    k records), started from the given parts instead of one part per protected value:
    a caller that must keep some records apart (DIVA's signatures, the protected
    values) passes them as separate parts.

    Parameters
    ----------
    instance : Instance
    k : int
    parts : sequence of array of int
        Disjoint row positions, each part with at least k records (smaller parts are
        returned whole).
    deadline : float, optional
        A ``time.perf_counter`` value after which no more cuts are made (the classes
        stay valid, only larger).

    Returns
    -------
    classes : list of numpy.ndarray
        Row positions of each class, ascending.
    timed_out : bool
    """
    roots = [np.sort(np.asarray(p, dtype=np.int64)) for p in parts if len(p)]
    if not roots:
        return [], False
    checks = E.Checks(instance, [KAnonymity(int(k))])
    engine = _Mondrian(mondrian_columns(instance, "hierarchy"), checks, cut_median, False)
    leaves, timed_out = engine.run(np.concatenate(roots), [len(r) for r in roots], deadline)
    order, sizes = leaves.classes()
    return [np.sort(c.astype(np.int64)) for c in np.split(order, np.cumsum(sizes)[:-1])], timed_out


def _mondrian(method, instance, requirements, cut_rule, relaxed, categorical, seed, time_limit):
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {method} must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller=method)
    if split_risk(requirements)[0]:  # enforced by the smallest k that meets them
        E.check_time_limit(time_limit, method)
        return smallest_k(
            lambda reqs, limit: _mondrian(method, instance, reqs, cut_rule, relaxed, categorical, seed, limit),
            instance, requirements, time_limit,
        )
    _reject_non_monotone(requirements, method)
    rule, rule_name = _resolve_cut_rule(cut_rule, method)
    if not isinstance(relaxed, bool):
        raise InvalidParameterError(
            f"The 'relaxed' parameter of {method} must be a bool. Got {relaxed!r} instead."
        )
    if relaxed and rule is not cut_median:
        raise InvalidParameterError(
            f"The 'cut_rule' parameter of {method} must be 'median' when relaxed=True "
            f"(relaxed cuts always split at the median). Got {cut_rule!r} instead."
        )
    if categorical not in CATEGORICAL_SPLITS:
        raise InvalidParameterError(
            f"The 'categorical' parameter of {method} must be one of 'hierarchy', 'order'. "
            f"Got {categorical!r} instead."
        )
    limit = E.check_time_limit(time_limit, method)
    check_random_state(seed)  # validated only: nothing here is random
    deadline = E.cut_deadline(started, limit, instance)  # the release is built within the limit

    checks = E.Checks(instance, requirements)
    n = instance.n_rows
    params = {
        "cut_rule": rule_name,
        "relaxed": relaxed,
        "categorical": categorical,
        "time_limit": limit,
    }

    def release(groups, status=Status.FEASIBLE, reason=None, timed_out=False, classes=None):
        return Release(
            table=generalize_partition(instance, groups, classes=classes),
            groups=groups,
            status=status,
            reason=reason,
            provenance=provenance(
                method, params, requirements, seed, started, time_limit_reached=timed_out
            ),
        )

    # Root parts: one per protected value (the protected attribute is never generalized).
    protected = instance.schema.protected
    if protected is not None:
        domain = instance.schema[protected].domain
        narrow = np.uint16 if domain is not None and len(domain) < 2**16 else np.int64
        present, part = E.dense_codes(instance.stored_codes(protected), narrow)
        labels = [domain[int(c)] if domain is not None else c for c in present]
    else:
        part, labels = np.zeros(n, dtype=np.uint8), [None]
    sizes, counts = _root_counts(checks, part, len(labels))

    failed = checks.failures(sizes.sum(keepdims=True), {k: c.sum(axis=0, keepdims=True) for k, c in counts.items()})
    if failed:
        reason = (
            f"{failed[0]} is violated by the whole table ({n} records); every release is a "
            "partition of it and the requirement is union-monotone, so no release satisfies it."
        )
        return release(part, Status.INFEASIBLE, reason)
    for r, value in enumerate(labels):
        failed = checks.failures(sizes[r : r + 1], {k: c[r : r + 1] for k, c in counts.items()})
        if failed:
            reason = (
                f"{failed[0]} is violated by the {int(sizes[r])} records with {protected}={value!r}: "
                "the protected attribute is released unchanged, so these records only form "
                "classes among themselves and no release satisfies the requirement."
            )
            return release(part, Status.INFEASIBLE, reason)

    # Few roots: a stable sort of narrow keys is a radix sort, linear in the rows.
    order = np.argsort(part, kind="stable").astype(E.index_dtype(n))
    del part
    engine = _Mondrian(mondrian_columns(instance, categorical), checks, rule, relaxed)
    leaves, timed_out = engine.run(order, sizes, deadline)
    del order, engine
    return release(leaves.groups(n), timed_out=timed_out, classes=leaves.classes())


def _root_counts(checks: E.Checks, part: np.ndarray, n_roots: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The size of every root part (``part`` numbers each record's) and its counts over
    the values of every target of the checks (roots x values)."""
    sizes = np.bincount(part, minlength=n_roots)
    counts = {}
    for name, t in checks.targets.items():
        flat = np.zeros(n_roots * t.m, dtype=np.int64)
        for lo, hi in E.chunk_bounds(len(part)):
            flat += np.bincount(part[lo:hi].astype(np.int64) * t.m + t.codes[lo:hi], minlength=n_roots * t.m)
        counts[name] = flat.reshape(n_roots, t.m)
    return sizes, counts
