"""Mondrian on a Dask DataFrame, with the release of the single-machine engine.

The top of the partitioning tree is cut from distributed counts: for every part still
too large for one task, each partition of the table counts its records per value of
every quasi-identifier (and per target value, for l-diversity and t-closeness), the
counts are summed, and the client cuts each part with the decisions of
:class:`fairanon.heuristics.mondrian._Mondrian` read from those counts (exact medians
from per-value counts: no sampling). The cuts are replayed on the records of every
partition to find their part. Once a part fits one task (``max_rows``), its records
are shuffled to one partition and the single-machine engine finishes it, starting
from the part's hierarchy nodes and depth-first offset, so that for the deterministic
cut rules the release equals the single-machine release of the same data, class for
class and label for label.

One pass over the data per level of the distributed top (a few levels: the parts
halve at each), one shuffle of the whole table, and one pass that finishes the parts.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..heuristics import topdown as E
from ..heuristics.mondrian import (
    CATEGORICAL_SPLITS,
    MondrianColumns,
    _Mondrian,
    _reject_non_monotone,
    _resolve_cut_rule,
    child_node_table,
    cut_balanced,
    cut_median,
)
from ..instances.texts import value_text
from ..models.requirements import validate_requirements
from ..release import Status, generalize_partition, provenance
from .instance import Coder, DaskInstance
from .instance import compute as _compute
from .release import DistributedRelease

__all__ = ["DISTRIBUTED_METHODS", "mondrian_dask"]

#: Methods that run on a Dask DataFrame.
DISTRIBUTED_METHODS = ("mondrian",)
_GROUP = "__group"
_TIMED_OUT = "__timed_out"  # per record: the task that finished its part ran out of time
_BIN = "__bin"
_FINAL = "__final"
#: Records a task routes at once (the coded copy of a slice is a few tens of MB).
_ROUTE_SLICE = 1 << 18
_ID = "__record_id"  # the record ids while they travel as a column
#: Released cells are text, as categoricals (Parquet dictionaries): few labels per column.
_UNKNOWN = "__UNKNOWN_CATEGORIES__"  # Dask's marker of categories known per partition only


# ------------------------------------------------------------------ the plan
@dataclass
class _Plan:
    """What every task needs: the instance's schema and value statistics, the
    requirements and the cuts decided so far (shipped to the workers)."""

    coder: Coder
    requirements: tuple
    rule: object
    categorical: str
    numbers: dict  # numeric ranked attribute -> sorted distinct values
    present: dict  # target / protected attribute -> present codes (sorted) and counts
    levels: list = field(default_factory=list)
    roots: np.ndarray | None = None  # root -> frontier id (>= 0) or -(final id + 1)

    def engine(self, inst=None, n: int = 0) -> _Mondrian:
        """The single-machine engine over the records of `inst` (None: no records; the
        client only decides from counts)."""
        schema = self.coder.schema
        attrs, ranked, hier = [], [], []
        for name in schema.generalizable:
            attr = schema[name]
            if attr.kind == "categorical" and self.categorical == "hierarchy":
                attrs.append(("h", len(hier)))
                hier.append(_hierarchy_column(schema, name, inst))
            else:
                attrs.append(("r", len(ranked)))
                ranked.append(self._ranked_column(name, inst, n))
        targets = {}
        for name in self.present:
            if name == "__protected":
                continue
            present, counts = self.present[name]
            attr = schema[name]
            codes = np.zeros(0, dtype=np.int64) if inst is None else np.searchsorted(present, inst.stored_codes(name))
            values = tuple(float(v) for v in present) if attr.domain is None else tuple(attr.domain[int(c)] for c in present)
            targets[name] = E.Target(name, codes.astype(np.int64), len(present), counts, values)
        checks = E.Checks(_SchemaOnly(schema), self.requirements, targets=targets)
        return _Mondrian(MondrianColumns(tuple(attrs), tuple(ranked), tuple(hier)), checks, self.rule, False)

    def _ranked_column(self, name: str, inst, n: int) -> E.RankedColumn:
        attr = self.coder.schema[name]
        if attr.kind == "numeric":
            uniq = self.numbers[name]
            ranks = np.zeros(n, np.int32) if inst is None else np.searchsorted(uniq, inst.stored_codes(name)).astype(np.int32)
            return E.RankedColumn(name, ranks, uniq, float(uniq[-1] - uniq[0]))
        m = len(attr.domain)
        ranks = np.zeros(n, np.int32) if inst is None else inst.stored_codes(name)
        return E.RankedColumn(name, ranks, np.arange(m, dtype=float), float(m - 1))

    def root_codes(self, inst) -> np.ndarray:
        """The root (protected value, in code order) of every record."""
        protected = self.coder.schema.protected
        if protected is None:
            return np.zeros(inst.n_rows, dtype=np.int64)
        return np.searchsorted(self.present["__protected"][0], inst.stored_codes(protected)).astype(np.int64)


class _SchemaOnly:
    def __init__(self, schema):
        self.schema = schema


def _hierarchy_column(schema, name: str, inst) -> E.HierarchyColumn:
    if inst is not None:
        return E.hierarchy_column(inst, name)
    return E.hierarchy_column(_EmptyCodes(schema), name)


class _EmptyCodes:
    def __init__(self, schema):
        self.schema = schema

    def stored_codes(self, name):
        return np.zeros(0, dtype=np.int8)


@dataclass
class _Level:
    """The cuts of one level of the distributed top, over its frontier parts: kind 0
    (no cut: a class), 1 (at a rank: left <= threshold) or 2 (hierarchy children);
    ``next[offset[f] + label]`` is the child's frontier id at the next level, or
    -(final id + 1)."""

    kind: np.ndarray
    attr: np.ndarray
    threshold: np.ndarray
    depth: np.ndarray
    offset: np.ndarray
    next: np.ndarray


@dataclass
class _Final:
    """A part the distributed top leaves: finished on one task, or a class already."""

    size: int
    key: int
    nodes: np.ndarray
    leaf: bool = False
    labels: dict | None = None


# ------------------------------------------------------------------ on the workers
def _coded(frame: pd.DataFrame, plan: _Plan):
    inst = plan.coder.part(frame)
    eng = plan.engine(inst, inst.n_rows)
    return inst, eng


def _descend(plan: _Plan, eng: _Mondrian, roots: np.ndarray, upto: int) -> np.ndarray:
    """Each record's frontier id after `upto` levels (>= 0), or -(final id + 1)."""
    state = plan.roots[roots]
    for lev in plan.levels[:upto]:
        act = np.flatnonzero(state >= 0)
        if not len(act):
            break
        cur = state[act]
        label = np.zeros(len(act), dtype=np.int64)
        kind, attr = lev.kind[cur], lev.attr[cur]
        for j, col in enumerate(eng.ranked):
            m = np.flatnonzero((kind == 1) & (attr == j))
            if len(m):
                label[m] = col.ranks[act[m]] > lev.threshold[cur[m]]
        for j, h in enumerate(eng.hier):
            m = np.flatnonzero((kind == 2) & (attr == j))
            if len(m):
                label[m] = h.child_sibling[lev.depth[cur[m]], h.codes[act[m]]]
        state[act] = lev.next[lev.offset[cur] + label]
    return state


def _sparse(keys: np.ndarray, size: int):
    if size <= 1 << 22:
        counts = np.bincount(keys, minlength=size)
        where = np.flatnonzero(counts)
        return where, counts[where]
    where, counts = np.unique(keys, return_counts=True)
    return where, counts


def _histograms(frame: pd.DataFrame, plan: _Plan, upto: int, n_active: int) -> dict:
    """Counts of the records of every frontier part: sizes, per value of each
    quasi-identifier, and (targets read) per (value, target value); sparse (keys,
    counts) pairs; none for an empty partition (rows dropped for a missing value, or a
    CSV block holding no row's start), which is no instance to code."""
    if not len(frame):
        return {}
    inst, eng = _coded(frame, plan)
    state = _descend(plan, eng, plan.root_codes(inst), upto)
    rows = np.flatnonzero(state >= 0)
    part = state[rows]
    out = {"size": _sparse(part, n_active)}
    targets = eng.checks.targets if eng.checks.reads_targets else {}
    for name, t in targets.items():
        out[("t", name)] = _sparse(part * t.m + t.codes[rows], n_active * t.m)
    for j, col in enumerate(eng.ranked):
        m = len(col.values)
        key = part * m + col.ranks[rows]
        out[("r", j)] = _sparse(key, n_active * m)
        for name, t in targets.items():
            out[("r", j, name)] = _sparse(key * t.m + t.codes[rows], n_active * m * t.m)
    for j, h in enumerate(eng.hier):
        m = h.n_leaves
        key = part * m + h.codes[rows]
        out[("h", j)] = _sparse(key, n_active * m)
        for name, t in targets.items():
            out[("h", j, name)] = _sparse(key * t.m + t.codes[rows], n_active * m * t.m)
    return out


def _add(a: dict, b: dict) -> dict:
    out = {}
    for key in a.keys() | b.keys():
        parts = [x[key] for x in (a, b) if key in x]
        keys = np.concatenate([p[0] for p in parts])
        counts = np.concatenate([p[1] for p in parts])
        uniq, inverse = np.unique(keys, return_inverse=True)
        out[key] = (uniq, np.bincount(inverse.reshape(-1), weights=counts, minlength=len(uniq)).astype(np.int64))
    return out


# ------------------------------------------------------------------ on the client
class _CountSource:
    """Statistics of the frontier parts read from summed counts, for
    :meth:`_Mondrian.decide`; records each part's cut."""

    def __init__(self, hist: dict, sizes: np.ndarray, eng: _Mondrian):
        self.hist, self.sizes, self.eng = hist, sizes, eng
        p = len(sizes)
        self.kind = np.zeros(p, dtype=np.int64)
        self.attr = np.full(p, -1, dtype=np.int64)
        self.threshold = np.zeros(p, dtype=np.int64)
        self.left = np.zeros(p, dtype=np.int64)
        self.children: dict[int, np.ndarray] = {}  # hierarchy split: sizes of the present children
        self.siblings: dict[int, np.ndarray] = {}

    def _runs(self, keys, counts, m, segs, extra=None):
        part, value = keys // m, keys % m
        index = np.full(len(self.sizes), -1, dtype=np.int64)
        index[segs] = np.arange(len(segs))
        lseg = index[part]
        take = np.flatnonzero(lseg >= 0)
        lseg, value, counts = lseg[take], value[take], counts[take]
        if extra is not None:  # regroup (part, value) by a coarser value
            value = extra(segs[lseg], value)
            width = int(value.max()) + 1 if len(value) else 1
            k, inverse = np.unique(lseg * width + value, return_inverse=True)
            counts = np.bincount(inverse.reshape(-1), weights=counts, minlength=len(k)).astype(np.int64)
            lseg, value = k // width, k % width
        first = np.searchsorted(lseg, np.arange(len(segs)), side="left")
        n = np.diff(np.concatenate([first, [len(lseg)]]))
        return E.Runs(lseg, value, counts, first, n, None)

    def _per_run(self, kind, j, m, segs, runs, extra=None):
        def compute(name):
            t = self.eng.checks.targets[name]
            keys, counts = self.hist[(kind, j, name)]
            tv = keys % t.m
            base = keys // t.m
            part, value = base // m, base % m
            index = np.full(len(self.sizes), -1, dtype=np.int64)
            index[segs] = np.arange(len(segs))
            lseg = index[part]
            take = np.flatnonzero(lseg >= 0)
            lseg, value, tv, counts_ = lseg[take], value[take], tv[take], counts[take]
            if extra is not None:
                value = extra(segs[lseg], value)
            width = int(runs.value.max()) + 1 if len(runs.value) else 1
            run_of = np.searchsorted(runs.seg * width + runs.value, lseg * width + value)
            return np.bincount(run_of * t.m + tv, weights=counts_, minlength=len(runs.count) * t.m).astype(
                np.int64).reshape(len(runs.count), t.m)

        cache = {}

        def per_run(name):
            if name not in cache:
                cache[name] = compute(name)
            return cache[name]

        return per_run

    def cut_ranked(self, eng: _Mondrian, segs, j, lo, hi) -> np.ndarray:
        m = len(eng.ranked[j].values)
        keys, counts = self.hist[("r", j)]
        runs = self._runs(keys, counts, m, segs)
        cut, ok = eng.ranked_cut(runs, self._per_run("r", j, m, segs, runs), self.sizes[segs])
        chosen = np.where(ok, cut, runs.first)
        cum = np.cumsum(runs.count)
        base = cum[runs.first] - runs.count[runs.first]
        won = segs[ok]
        self.kind[won], self.attr[won] = 1, j
        self.threshold[won] = runs.value[chosen][ok]
        self.left[won] = (cum[chosen] - base)[ok]
        return ok

    def split_hierarchy(self, eng: _Mondrian, segs, j, node):
        h = eng.hier[j]
        depth_of = h.depth[node]
        position = np.full(len(self.sizes), 0, dtype=np.int64)
        position[segs] = np.arange(len(segs))

        def sibling(parts, leaves):
            return h.child_sibling[depth_of[position[parts]], leaves]

        keys, counts = self.hist[("h", j)]
        runs = self._runs(keys, counts, h.n_leaves, segs, extra=sibling)
        ok, child = eng.hierarchy_split(runs, self._per_run("h", j, h.n_leaves, segs, runs, extra=sibling), node, j)
        for s in np.flatnonzero(ok):
            part = int(segs[s])
            sl = slice(int(runs.first[s]), int(runs.first[s] + runs.n[s]))
            self.kind[part], self.attr[part] = 2, j
            self.children[part] = runs.count[sl].copy()
            self.siblings[part] = runs.value[sl].copy()
        return ok, runs.n, child


def _present_labels(plan: _Plan, eng: _Mondrian, hist: dict, part: int) -> dict:
    """The released quasi-identifier labels of a frontier part that stays one class,
    from the values present in it: the single-machine tight summary, made by
    :func:`generalize_partition` on one record per present value."""
    schema = plan.coder.schema
    values = {}
    for name in schema.generalizable:
        kind, j = eng.attrs[list(schema.generalizable).index(name)]
        attr = schema[name]
        if kind == "r":
            m = len(eng.ranked[j].values)
            keys, _ = hist[("r", j)]
        else:
            m = eng.hier[j].n_leaves
            keys, _ = hist[("h", j)]
        codes = keys[keys // m == part] % m
        if attr.kind == "numeric":
            values[name] = list(plan.numbers[name][codes])
        else:
            values[name] = [attr.domain[int(c)] for c in codes]
    length = max(len(v) for v in values.values())
    frame = {}
    for attr in schema:
        if attr.name in values:
            v = values[attr.name]
            frame[attr.name] = [v[i % len(v)] for i in range(length)]
        elif not attr.read:
            frame[attr.name] = [0] * length
        elif attr.kind == "numeric":
            frame[attr.name] = [0.0] * length
        else:
            frame[attr.name] = [attr.domain[0]] * length
    tiny = plan.coder.part(pd.DataFrame(frame))
    table = generalize_partition(tiny, np.zeros(length, dtype=np.int64))
    return {name: str(table[name].iloc[0]) for name in schema.generalizable}


# ------------------------------------------------------------------ the method
def mondrian_dask(
    instance: DaskInstance,
    requirements: Sequence,
    *,
    cut_rule="median",
    relaxed: bool = False,
    categorical: str = "hierarchy",
    max_rows: int = 2_000_000,
    seed=None,
    time_limit=None,
    progress: bool = False,
) -> DistributedRelease:
    """Strict Mondrian (median or balanced cuts) on a :class:`DaskInstance`.

    Parameters
    ----------
    instance : DaskInstance
    requirements : sequence of Requirement
        KAnonymity, LDiversity and TCloseness, as for
        :func:`fairanon.heuristics.mondrian.mondrian`.
    cut_rule : {"median", "balanced"}
        Deterministic cut rules only: the release equals the single-machine one.
    relaxed : bool
        Must be False: relaxed cuts share the median's records out in row order,
        which a distributed table does not have.
    categorical : {"hierarchy", "order"}
    max_rows : int, default=2,000,000
        A part with at most this many records is finished by one task (its records
        must fit one worker's memory: about 100 bytes per record and column).
    seed
        Accepted for the common signature; the method is deterministic.
    time_limit : float, optional
        Seconds from the call (wall clock, shared by the client and the workers). At
        the deadline the distributed top stops cutting: its parts that are still
        being cut become classes. Each task that finishes parts stops at the same
        deadline as the single-machine engine does (its parts still being cut become
        classes). The release stays valid (every class a union of records of
        classes that pass), and ``provenance["time_limit_reached"]`` says whether
        the top ran out of time; the finishing tasks run when the table is computed,
        so :meth:`DistributedRelease.compute` and
        :meth:`DistributedRelease.to_parquet` give the release with the final flag.
    progress : bool
        Show Dask's progress bar for each pass (on a terminal).

    Returns
    -------
    DistributedRelease
        The released table as a Dask DataFrame indexed by record id; ``compute()``
        gives the single-machine :class:`~fairanon.release.Release`.
    """
    started = time.perf_counter()
    if not isinstance(instance, DaskInstance):
        raise InvalidParameterError(
            f"The 'instance' parameter of mondrian_dask must be a DaskInstance. Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="mondrian", at_least_one=True)
    _reject_non_monotone(requirements, "mondrian")
    rule, rule_name = _resolve_cut_rule(cut_rule, "mondrian")
    if relaxed or rule not in (cut_median, cut_balanced):
        raise IncompatibleRequirementError(
            "Distributed Mondrian runs the deterministic cut rules 'median' and 'balanced' only (relaxed cuts "
            "and cut-rule callables depend on the order of the records); use engine='local' for those."
        )
    if categorical not in CATEGORICAL_SPLITS:
        raise InvalidParameterError(
            f"The 'categorical' parameter of mondrian must be one of 'hierarchy', 'order'. Got {categorical!r} instead."
        )
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise InvalidParameterError(f"The 'max_rows' parameter of mondrian must be a positive int. Got {max_rows!r}.")
    limit = E.check_time_limit(time_limit, "mondrian")
    # A wall-clock deadline: the workers, on other machines, compare it with their own clocks.
    deadline = None if limit is None else time.time() - (time.perf_counter() - started) + limit
    schema = instance.schema
    numbers = {n: instance.value_counts(n)[0] for n in schema.generalizable if schema[n].kind == "numeric"}
    plan = _Plan(instance.coder, requirements, rule, categorical, numbers, {})
    from ..models.requirements import LDiversity, TCloseness, requirement_targets

    for req in requirements:
        if isinstance(req, (LDiversity, TCloseness)):
            for name in requirement_targets(schema, req):
                plan.present[name] = instance.value_counts(name)
    if schema.protected is not None:
        plan.present["__protected"] = instance.value_counts(schema.protected)
    params = {"cut_rule": rule_name, "relaxed": False, "categorical": categorical, "time_limit": limit,
              "engine": "dask", "max_rows": max_rows}
    eng = plan.engine()
    timings = {}

    # Roots: one per protected value, in code order (the single-machine order).
    n_roots = len(plan.present["__protected"][0]) if schema.protected is not None else 1
    plan.roots = np.arange(n_roots, dtype=np.int64)
    clock = time.perf_counter()
    hist = _summed_histograms(instance, plan, 0, n_roots, progress)
    timings["level 0"] = time.perf_counter() - clock
    sizes = _dense(hist["size"], n_roots)
    keys = np.cumsum(sizes) - sizes
    nodes = np.zeros((n_roots, len(eng.hier)), dtype=np.int64)
    finals: list[_Final] = []

    counts = {name: _dense(hist[("t", name)], n_roots * t.m).reshape(n_roots, t.m)
              for name, t in eng.checks.targets.items()} if eng.checks.reads_targets else {}
    whole = eng.checks.failures(np.array([sizes.sum()]), {k: v.sum(axis=0, keepdims=True) for k, v in counts.items()})
    reason = None
    timed_out = False
    if whole:
        reason = (f"{whole[0]} is violated by the whole table ({int(sizes.sum())} records); every release is a "
                  "partition of it and the requirement is union-monotone, so no release satisfies it.")
    else:
        for r in range(n_roots):
            failed = eng.checks.failures(sizes[r : r + 1], {k: v[r : r + 1] for k, v in counts.items()})
            if failed:
                value = schema[schema.protected].domain[int(plan.present["__protected"][0][r])]
                reason = (f"{failed[0]} is violated by the {int(sizes[r])} records with {schema.protected}={value!r}: "
                          "the protected attribute is released unchanged, so these records only form classes among "
                          "themselves and no release satisfies the requirement.")
                break
    if reason is not None:
        for r in range(n_roots):
            finals.append(_Final(int(sizes[r]), int(keys[r]), nodes[r], leaf=True,
                                 labels=_present_labels(plan, eng, hist, r)))
        plan.roots = -(np.arange(n_roots) + 1)
        status = Status.INFEASIBLE
    else:
        status = Status.FEASIBLE
        frontier = _route(sizes, keys, nodes, eng, max_rows, finals)
        plan.roots = frontier.route
        level = 0
        while frontier.count:
            clock = time.perf_counter()
            # The roots' counts serve the first level when every root is in it.
            if level or not np.array_equal(frontier.route, np.arange(n_roots)):
                hist = _summed_histograms(instance, plan, level, frontier.count, progress)
            timings[f"level {level}"] = timings.get(f"level {level}", 0.0) + time.perf_counter() - clock
            if deadline is not None and time.time() > deadline:
                timed_out = True
                _stop_level(plan, eng, hist, frontier, finals)
                break
            frontier = _decide_level(plan, eng, hist, frontier, max_rows, finals)
            level += 1
    clock = time.perf_counter()
    table = _finish(instance, plan, finals, len(plan.levels), max_rows, deadline)
    timings["finish (graph)"] = time.perf_counter() - clock
    prov = provenance("mondrian", params, requirements, seed, started, distributed_levels=len(plan.levels),
                      distributed_parts=len(finals), phase_seconds=timings, time_limit_reached=timed_out)
    return DistributedRelease(table=table, status=status, reason=reason, provenance=prov,
                              columns=[a for a in schema.released])


def _dense(sparse, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.int64)
    out[sparse[0]] = sparse[1]
    return out


def _summed_histograms(instance: DaskInstance, plan: _Plan, upto: int, n_active: int, progress: bool) -> dict:
    import dask

    shared = dask.delayed(plan, traverse=False)  # one copy in the graph (see _finish)
    parts = [dask.delayed(_histograms)(p, shared, upto, n_active) for p in instance.data.to_delayed()]
    while len(parts) > 1:
        parts = [dask.delayed(_add)(*parts[i : i + 2]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return _compute(parts[0], progress)


@dataclass
class _Frontier:
    """The parts decided at the next level: their sizes, keys and hierarchy nodes, and
    the route (frontier id or -(final id + 1)) of each part they come from."""

    route: np.ndarray
    sizes: np.ndarray
    keys: np.ndarray
    nodes: np.ndarray
    origin: np.ndarray  # per frontier part: its index among the routed parts

    @property
    def count(self) -> int:
        return len(self.sizes)


def _route(sizes, keys, nodes, eng, max_rows, finals) -> _Frontier:
    """Parts too large for one task stay in the frontier; the others are finished."""
    route = np.zeros(len(sizes), dtype=np.int64)
    frontier = []
    for i in range(len(sizes)):
        if sizes[i] > max_rows and sizes[i] >= eng.min_split:
            route[i] = len(frontier)
            frontier.append(i)
        else:
            route[i] = -(len(finals) + 1)
            finals.append(_Final(int(sizes[i]), int(keys[i]), nodes[i].copy()))
    f = np.array(frontier, dtype=np.int64)
    return _Frontier(route, sizes[f], keys[f], nodes[f].reshape(len(f), nodes.shape[1]), f)


def _decide_level(plan: _Plan, eng: _Mondrian, hist: dict, frontier: _Frontier, max_rows: int,
                  finals: list) -> _Frontier:
    p = frontier.count
    sizes = frontier.sizes
    lo = np.zeros((p, len(eng.ranked)), dtype=np.int64)
    hi = np.zeros((p, len(eng.ranked)), dtype=np.int64)
    for j, col in enumerate(eng.ranked):
        m = len(col.values)
        keys, _ = hist[("r", j)]
        part, value = keys // m, keys % m
        lo[:, j] = np.minimum.reduceat(value, np.searchsorted(part, np.arange(p)))
        last = np.searchsorted(part, np.arange(p), side="right") - 1
        hi[:, j] = value[last]
    source = _CountSource(hist, sizes, eng)
    n_children, hier_children = eng.decide(sizes, frontier.nodes, lo, hi, source)
    column, node = child_node_table(n_children, hier_children) if hier_children else (None, None)
    # The children, in the single-machine order: parent by parent, left (or first
    # sibling) first; keys are offsets in the depth-first order.
    child_sizes, child_nodes, child_keys = [], [], []
    offset = np.zeros(p, dtype=np.int64)
    width = np.ones(p, dtype=np.int64)
    depth = np.zeros(p, dtype=np.int64)
    next_entries = []
    counter = 0
    for f in range(p):
        offset[f] = len(next_entries)
        if n_children[f] == 0:
            labels = _present_labels(plan, eng, hist, f)
            finals.append(_Final(int(sizes[f]), int(frontier.keys[f]), frontier.nodes[f].copy(), leaf=True,
                                 labels=labels))
            next_entries.append(-len(finals))
            continue
        if source.kind[f] == 1:
            parts = [int(source.left[f]), int(sizes[f] - source.left[f])]
            table = np.zeros(2, dtype=np.int64)
            labels = [0, 1]
        else:
            h = eng.hier[source.attr[f]]
            parts = [int(c) for c in source.children[f]]
            depth[f] = h.depth[frontier.nodes[f, source.attr[f]]]
            table = np.full(int(h.fanout[frontier.nodes[f, source.attr[f]]]), 0, dtype=np.int64)
            labels = [int(v) for v in source.siblings[f]]
            width[f] = len(table)
        key = int(frontier.keys[f])
        entries = np.zeros(len(table), dtype=np.int64)
        for c, (size, lab) in enumerate(zip(parts, labels)):
            nodes_c = frontier.nodes[f].copy()
            if column is not None and column[counter] >= 0:
                nodes_c[column[counter]] = node[counter]
            counter += 1
            child_sizes.append(size)
            child_nodes.append(nodes_c)
            child_keys.append(key)
            entries[lab] = len(child_sizes) - 1  # provisional: index among the children
            key += size
        next_entries.extend(entries.tolist())
    cs = np.array(child_sizes, dtype=np.int64)
    cn = np.array(child_nodes, dtype=np.int64).reshape(len(child_sizes), frontier.nodes.shape[1])
    ck = np.array(child_keys, dtype=np.int64)
    # Children that are small enough become final; the others the next frontier.
    routed = _route(cs, ck, cn, eng, max_rows, finals)
    nxt = np.array(next_entries, dtype=np.int64)
    is_child = nxt >= 0
    nxt[is_child] = routed.route[nxt[is_child]]
    plan.levels.append(_Level(source.kind.copy(), source.attr.copy(), source.threshold.copy(), depth, offset, nxt))
    return routed


def _stop_level(plan: _Plan, eng: _Mondrian, hist: dict, frontier: _Frontier, finals: list) -> None:
    """The time ran out: every frontier part becomes a class, labelled from its counts."""
    p = frontier.count
    first = len(finals)
    for f in range(p):
        finals.append(_Final(int(frontier.sizes[f]), int(frontier.keys[f]), frontier.nodes[f].copy(), leaf=True,
                             labels=_present_labels(plan, eng, hist, f)))
    none = np.zeros(p, dtype=np.int64)
    plan.levels.append(_Level(none, none - 1, none, none, np.arange(p, dtype=np.int64),
                              -(first + np.arange(p, dtype=np.int64) + 1)))


def _finish(instance: DaskInstance, plan: _Plan, finals: list, n_levels: int, max_rows: int, deadline):
    """The released table: parts finished by the single-machine engine on one task
    each (packed into partitions of at most max_rows records, until the wall-clock
    `deadline`), classes left by the distributed top labelled from their counts."""
    import dask
    import dask.dataframe as dd

    schema = instance.schema
    bins = np.full(len(finals), -1, dtype=np.int32)
    filled, current = 0, -1
    for i, f in enumerate(finals):
        if f.leaf:
            continue
        if current < 0 or filled + f.size > max_rows:
            current += 1
            filled = 0
        bins[i] = current
        filled += f.size
    n_bins = current + 1
    released = list(schema.released)
    index_name = instance.data.index.name or "record_id"
    meta = _meta(plan.coder, released, index_name)

    # One copy of the plan in the graph, fetched once by each worker: passed by value,
    # every task would carry and unpickle its own (about a megabyte of small objects).
    shared = dask.delayed(plan, traverse=False)
    shared_finals = dask.delayed(finals, traverse=False)
    routed = instance.data.map_partitions(_route_records, shared, dask.delayed(bins), n_levels,
                                          meta=_routed_meta(instance, _ID))
    pieces = []
    if any(f.leaf for f in finals):
        leaves = routed[routed[_BIN] < 0]
        pieces.append(leaves.map_partitions(_label_leaves, shared, shared_finals, released, index_name, meta=meta))
    if n_bins:
        work = routed[routed[_BIN] >= 0].reset_index()
        work = work.set_index(_BIN, divisions=list(range(n_bins + 1)))
        pieces.append(work.map_partitions(_finish_part, shared, shared_finals, released, index_name, deadline,
                                          meta=meta).clear_divisions())
    return dd.concat(pieces) if len(pieces) > 1 else pieces[0]


def _route_records(frame: pd.DataFrame, plan: _Plan, bins: np.ndarray, n_levels: int) -> pd.DataFrame:
    """Each record's final part (``__final``) and the partition that finishes it
    (``__bin``, -1 for a class the distributed top left)."""
    # By slices: the coded copy and the engine's columns of a whole input partition
    # would sit beside the shuffle's buffers on a worker with little memory.
    final = np.empty(len(frame), dtype=np.int32)
    for start in range(0, len(frame), _ROUTE_SLICE):
        inst = plan.coder.part(frame.iloc[start:start + _ROUTE_SLICE])
        eng = plan.engine(inst, inst.n_rows)
        final[start:start + inst.n_rows] = -_descend(plan, eng, plan.root_codes(inst), n_levels) - 1
    out = frame.copy()
    out[_FINAL] = final
    out[_BIN] = bins[final]
    out.index.name = _ID
    return out


def _routed_meta(instance: DaskInstance, index_name: str):
    meta = instance.data._meta.copy()
    meta[_FINAL] = np.zeros(0, dtype=np.int32)
    meta[_BIN] = np.zeros(0, dtype=np.int32)
    meta.index.name = index_name
    return meta


def _meta(coder: Coder, released: list, index_name: str) -> pd.DataFrame:
    meta = pd.DataFrame({c: pd.Categorical([], categories=[_UNKNOWN]) for c in released})
    meta[_GROUP] = pd.Series([], dtype=np.int64)
    meta[_TIMED_OUT] = pd.Series([], dtype=bool)
    meta.index = pd.Index([], dtype=coder.index_dtype, name=index_name)
    return meta


def _categorical(col: pd.Series) -> pd.Categorical:
    """A column as a categorical of text, each distinct value turned into text once."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return pd.Categorical.from_codes(col.cat.codes.to_numpy(),
                                         categories=[value_text(c) for c in col.cat.categories])
    codes, uniques = pd.factorize(col)
    text = pd.Index([value_text(u) for u in uniques])
    merged, labels = pd.factorize(text)
    return pd.Categorical.from_codes(merged[codes], categories=labels)


def _as_text(table: pd.DataFrame, released: list) -> pd.DataFrame:
    out = pd.DataFrame(index=table.index)
    for c in released:
        col = table[c]
        out[c] = _categorical(col)
    return out


def _label_leaves(frame: pd.DataFrame, plan: _Plan, finals: list, released: list, index_name: str) -> pd.DataFrame:
    inst = plan.coder.part(frame.drop(columns=[_FINAL, _BIN])) if len(frame) else None
    out = pd.DataFrame(index=frame.index)
    final = frame[_FINAL].to_numpy()
    for c in released:
        if c in plan.coder.schema.generalizable:
            labels = pd.Categorical([finals[f].labels[c] for f in np.unique(final)])
            index = np.searchsorted(np.unique(final), final)
            out[c] = pd.Categorical.from_codes(labels.codes[index], categories=labels.categories)
        else:
            out[c] = (_categorical(inst.table[c]).to_numpy() if inst is not None
                      else pd.Categorical([], categories=[]))
    out[_GROUP] = np.array([finals[f].key for f in final], dtype=np.int64)
    out[_TIMED_OUT] = False
    out.index.name = index_name
    return out


def _finish_part(frame: pd.DataFrame, plan: _Plan, finals: list, released: list, index_name: str,
                 deadline: float | None) -> pd.DataFrame:
    """Finish every part in one partition with the single-machine engine, from each
    part's hierarchy nodes and key, until the wall-clock `deadline`; labels by
    :func:`generalize_partition`."""
    if not len(frame):
        return _meta(plan.coder, released, index_name)
    frame = frame.set_index(_ID)
    final = frame.pop(_FINAL).to_numpy()
    inst = plan.coder.part(frame)
    eng = plan.engine(inst, inst.n_rows)
    order = np.argsort(final, kind="stable")
    ids, sizes = np.unique(final[order], return_counts=True)
    nodes = np.array([finals[f].nodes for f in ids], dtype=np.int64).reshape(len(ids), len(eng.hier))
    keys = np.array([finals[f].key for f in ids], dtype=np.int64)
    local = None if deadline is None else time.perf_counter() + (deadline - time.time())
    leaves, timed_out = eng.run(order, sizes, local, nodes=nodes, keys=keys)
    group = leaves.keys_of_rows(inst.n_rows)
    table = generalize_partition(inst, group)
    out = _as_text(table, released)
    out[_GROUP] = group
    out[_TIMED_OUT] = timed_out
    out.index.name = index_name
    return out
