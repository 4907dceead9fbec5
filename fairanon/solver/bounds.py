"""The LP bound of the weighted-type model, by column generation, certified at every step.

The linear relaxation of the model of :mod:`fairanon.solver.local_recoding` under
k-anonymity (every other requirement only removes releases, so the bound holds for them
too), written over *columns*: a column is a candidate vector v with an amount x_t of
records of each type it covers, at least k in all -- a fractional class -- and costs
c_v times its records; each type's records are released once. This is the relaxation of
the model with ``x[t,v] <= w_t z[v]`` and ``sum_t x[t,v] >= k z[v]`` (its columns span
the same polytope; the bound z[v] <= 1 does not change the optimum: a vector used more
than once holds at least 2k records, so the links are slack). The candidate vectors are
the join closure of the types (the tight summaries classes can have), over every
hierarchy node and every range of the values present -- the cheapest labels any release
can use for a class -- so no release costs less than the integer optimum over them, and
the LP value is at most that.

Column generation: the restricted LP is solved with GLOP (columns only are added, so
every solve starts from the last basis); for the duals u of the "released once" rows
a vector's reduced cost is

    rc(v) = min { sum_t (c_v - u_t) x_t : 0 <= x_t <= w_t, sum_t x_t >= k }

over the types it covers (every type with c_v < u_t whole, then the cheapest other
records up to k), and the columns of the vectors with the most negative mean_k(v), the
average of c_v - u_t over the k cheapest records v covers, join. For any u -- the
Lagrangian relaxation of the "released once" rows, keeping that the classes of a
protected group of n_g records hold n_g records in all, each at least k, so that a
class's reduced cost per record is at least mean_k of its vector --

    OPT >= sum_t u_t w_t + sum over groups g of n_g * min over v in g of mean_k(v),

so every round gives a valid bound, computed over the whole closure, and it equals the
LP value at the LP's optimal duals (no column prices out there). The bound is rounded up to the
objective's grid (costs are multiples of 1 / scale) after a safety margin for the
floating point.

Where the search starts: at u_t = the cost of the cheapest vector covering t (the
per-record bound of :mod:`fairanon.models.bounds` in this model: every mean_k(v) is then
at least 0, so the Lagrangian bound is that bound from the first step on), with the
columns of those cheapest vectors and of a given release's classes. The duals are
stabilised as in Wentges (1997): columns are priced at a point between the best
Lagrangian point so far (the centre) and the LP's duals, the centre moving only when
the bound improves; at the LP's own duals when that point prices out nothing new (a
mispricing). A vector's cost is the same for all its records, so its k cheapest records
in reduced cost are its k of largest dual: pricing sorts every vector's types by the
duals at once (a CSR matrix whose column order is the duals' rank).

Without the closure (``pricing="search"``, or "auto" where the closure is too large to
list): the minimum of mean_k is found by branch and bound over the labels
(:mod:`fairanon.solver.pricing`), exact, or a lower bound on it (the least bound of the
nodes left open) when a search's time runs out -- each search gets a share of the time
left (:data:`SEARCH_SHARE`) -- so every round's bound stays valid; the vectors are those
the search and the start found. The LP starts from each group's coarsest vector, each
type of at least k records alone, and a given release's classes. On UCI Adult (8 QIs,
18,109 types, LM, k = 5) a node costs tens of milliseconds and the searches at the LP's
duals are cut: from a 60-s auto release (0.0339 per cell), 60 s give 11 rounds, 11 of 12
searches cut, an LP of 0.0339 (the release's classes) and a bound still that of the first
centre (1e-6 per cell; ``benchmarks/least_loss.py``); from lattice-local's release
(0.0397), 600 s give 13 rounds, 13 of 14 searches cut, and an LP of 0.0397: the searched
columns never beat the release's. The per-record bound (0.0222 in about 25 s) is far
above, so :func:`fairanon.methods.lns.best_bound` keeps to the closure.

On German credit with 7 quasi-identifiers and NCP the LP converges to 0.1767 per cell
for k = 5 (39 rounds, 18 s CPU, 9 of them for the closure of 68,357 vectors) and to
0.2693 for k = 10 (45 rounds, 123 s CPU, most in GLOP's degenerate re-solves), against
0.213 and 0.314 for 60-second lns releases: the LP relaxation itself, not its
convergence, leaves most of those gaps (``benchmarks/lns.py``).

References: P. Wentges, "Weighted Dantzig-Wolfe decomposition for linear mixed-integer
programming", Int. Trans. Oper. Res. 4(2), 1997; D. Aloise, P. Hansen, C. Rocha,
E. Santi, "Column generation bounds for numerical microaggregation", J. Glob. Optim.
60, 2014.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from .._memory import Limit, check_memory, current_limit, format_bytes
from .._validation import check_option
from ..exceptions import FairanonError, MemoryLimitError
from ..instances.instance import Instance
from ..models.bounds import LowerBound
from ..models.requirements import KAnonymity, Requirement, validate_requirements
from ..release import Release
from .local_recoding.encoding import (
    BuildStopped,
    ClosureTooLarge,
    _candidates,
    check_deadline,
    encode,
)
from .local_recoding.model import _pair_costs
from .pricing import LabelSearch, search_memory

__all__ = [
    "LP_BYTES",
    "LP_CELL_BYTES",
    "LP_NONZERO_BYTES",
    "LP_OBJECTIVES",
    "LP_PAIR_BYTES",
    "LP_VECTOR_BYTES",
    "ColumnPool",
    "lp_bound",
    "lp_memory",
]

#: Objectives whose model costs are those of the cheapest labels any release can use.
LP_OBJECTIVES = ("ncp", "lm", "generalized")
#: How the LP bound prices (:func:`lp_bound`).
PRICINGS = ("auto", "closure", "search")
#: Objectives the pricing search handles: a vector's cost is the same for its records.
SEARCH_OBJECTIVES = ("ncp", "lm")
#: The share of the time left one pricing search may take (:class:`_SearchPricer`).
SEARCH_SHARE = 0.25
#: Columns added to the LP, types given their cheapest column or a release's classes
#: made columns, between two reads of the clock (the LP's set-up stops at its deadline).
SET_UP_STEP = 1024
#: Weight of the best duals so far in the point where columns are priced (Wentges'
#: dual smoothing: the LP's own duals jump from round to round on these degenerate LPs).
SMOOTHING = 0.7
#: GLOP without presolve keeps its basis when columns are added (a warm start); its dual
#: simplex re-solves these degenerate LPs far faster than the primal one (German credit,
#: 7 quasi-identifiers, k = 5, 30 s CPU: 43 rounds and a bound within 0.5 % of the LP,
#: against 13 rounds and the per-record bound; k = 10, 60 s: 1,745 against 1,181).
GLOP_PARAMETERS = "use_preprocessing: false use_dual_simplex: true"

# The memory of the LP bound (:func:`lp_memory`), fitted to the growth of peak
# resident memory over lp_bound in a fresh process on German credit (k = 5 and 10,
# 3 to 7 quasi-identifiers): 5.6 MB for 257 vectors, 15,420 cells, 1,534 pairs and 345
# nonzeros; 20.8 MB for 5,801, 1.7 million, 90,775 and 19,899; 69.8 MB for 20,746,
# 9.9 million, 404,881 and 148,471; 292 MB for 68,357, 50 million, 1,476,045 and
# 440,743. The estimate is 1.1 to 1.5 times these.
#: Bytes whatever the size: GLOP's solver, the types' encoding and label spaces.
LP_BYTES = 8_000_000
#: Bytes per vector of the join closure: its key in the set of seen joins, its tuple
#: of labels, its row in the arrays of vectors, its cost and its column's bounds.
LP_VECTOR_BYTES = 500
#: Bytes per cell of the matrices pairing each protected value's vectors with its
#: types (a bool, and the one of the attribute being intersected).
LP_CELL_BYTES = 2
#: Bytes per (type, vector) pair: the pairs, their sorted copies and the pricer's CSR
#: matrix, ranks and amounts.
LP_PAIR_BYTES = 80
#: Bytes per nonzero of the restricted LP (a column's records of a type) in GLOP.
LP_NONZERO_BYTES = 150


def lp_memory(vectors: int, cells: int, pairs: int = 0, nonzeros: int = 0) -> int:
    """Bytes the LP bound takes with a join closure of `vectors` vectors, paired with the
    types through matrices of `cells` cells in all (each protected value's vectors
    times its types), holding `pairs` (type, vector) pairs, and a restricted LP of
    `nonzeros` nonzeros: :data:`LP_BYTES`, plus :data:`LP_VECTOR_BYTES`,
    :data:`LP_CELL_BYTES`, :data:`LP_PAIR_BYTES` and :data:`LP_NONZERO_BYTES` each.

    >>> lp_memory(0, 0) == LP_BYTES
    True
    """
    return (LP_BYTES + LP_VECTOR_BYTES * vectors + LP_CELL_BYTES * cells + LP_PAIR_BYTES * pairs
            + LP_NONZERO_BYTES * nonzeros)


def _valid_families(instance: Instance, objective: str) -> bool:
    """Ranges are the cheapest labels of ordered attributes unless, for LM, a hierarchy
    node covers values that are not contiguous."""
    if objective != "lm":
        return True
    for name in instance.schema.generalizable:
        attr = instance.schema[name]
        if attr.kind != "ordered" or attr.hierarchy is None:
            continue
        present = set(np.unique(instance.codes(name)).tolist())
        rank = {v: i for i, v in enumerate(attr.domain)}
        for node in attr.hierarchy.nodes:
            covered = sorted(
                rank[v]
                for v in attr.domain
                if rank[v] in present and attr.hierarchy.covers(node, v)
            )
            ranks = [i for i in sorted(present) if covered and covered[0] <= i <= covered[-1]]
            if covered and len(ranks) != len(covered):
                return False
    return True


@dataclass
class ColumnPool:
    """What column generation generated, for the integer program over it
    (:func:`fairanon.solver.master.restricted_master`): filled by :func:`lp_bound`.

    Attributes
    ----------
    enc : Encoding or None
        The record types (None until the closure is built).
    vectors : list of tuple
        The join closure: (protected code, label per attribute) per vector.
    cost : numpy.ndarray
        Per vector, the integer cost of each of its records (``cost / scale`` in the
        objective's units).
    scale : int
    columns : list of (int, numpy.ndarray, numpy.ndarray)
        The columns added to the LP: vector, types and records of each type.
    objective : str or None
        The objective whose costs `cost` holds.
    k : int or None
        The k the columns' classes meet.
    instance : Instance or None
        The instance whose record types `enc` holds (the object itself: the types and
        vectors are its codes, meaningless for another table).
    """

    enc: object = None
    vectors: list = field(default_factory=list)
    cost: np.ndarray | None = None
    scale: int = 1
    columns: list = field(default_factory=list)
    objective: str | None = None
    k: int | None = None
    instance: Instance | None = None


def lp_bound(
    instance: Instance,
    requirements: Sequence[Requirement],
    objective: str = "ncp",
    *,
    release: Release | None = None,
    time_limit: float | None = None,
    max_vectors: int = 300_000,
    columns: int = 1000,
    smoothing: float = SMOOTHING,
    memory_limit=None,
    pool: ColumnPool | None = None,
    pricing: str = "closure",
) -> LowerBound | None:
    """The LP bound of the module docstring, or None when it does not apply (objective,
    no k-anonymity, a join closure of more than `max_vectors` vectors that cannot be
    priced by search).

    Parameters
    ----------
    release : Release, optional
        Its classes seed the pool of vectors.
    time_limit : float, optional
        Seconds; the best bound certified so far is returned when it runs out
        (``complete=False`` unless the LP was solved). Every step reads the clock:
        the typing of the records, the labels, the join closure and its costs (or the
        search's pairwise costs and first centre) between blocks, and no bound is
        given when it passes there; the LP's rows and first columns per
        :data:`SET_UP_STEP` types, classes or columns, and the bound at the first
        centre (the per-record level) is given when it passes there,
        ``details["stopped"]`` saying where.
    columns : int, default=1000
        Vectors added per round.
    smoothing : float, default=0.7
        Wentges' weight of the best duals so far (0 prices at the LP's duals).
    memory_limit : optional
        As in :func:`fairanon.anonymize` (:mod:`fairanon._memory`). The join closure is
        built only up to the vectors whose pairing with the types fits it and the pairs
        are counted before they are listed (:func:`lp_memory`); with
        ``pricing="search"`` the search's arrays are counted from the labels' number
        before any label is built (:func:`~fairanon.solver.pricing.search_memory`);
        columns stop being added when the restricted LP would pass it, and the best
        bound certified so far is returned (``complete=False``, ``details["stopped"]``
        says why).
    pool : ColumnPool, optional
        Receives the closure and every column added to the LP (the columns are the
        LP's own arrays: no copy).
    pricing : {"closure", "search", "auto"}, default="closure"
        How the minimum mean_k is found: over the join closure, or by the branch and
        bound of :mod:`fairanon.solver.pricing` (NCP and LM; the vectors are then those
        found, ``details["pricing"]`` is "search"); "auto" searches when the closure
        has more than `max_vectors` vectors or does not fit the memory limit. The
        search is exact but slow where the closure is large (UCI Adult, 8 QIs, LM,
        k = 5: 11 rounds in 60 s, far below the per-record bound; see
        ``benchmarks/least_loss.py``), so :func:`fairanon.methods.lns.best_bound`
        does not use it.

    Raises
    ------
    MemoryLimitError
        When the join closure or its pairs would need more than `memory_limit`, before
        they are built (the caller falls back to the per-record bound).
    """
    started = time.perf_counter()
    # Inside the time: its first import takes a quarter to half a second.
    from ortools.linear_solver import pywraplp

    check_option(pricing, "pricing", "lp_bound", PRICINGS)
    requirements = validate_requirements(instance, requirements, caller="lp_bound", sizes=False)
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    if objective not in LP_OBJECTIVES or k <= 1 or not _valid_families(instance, objective):
        return None
    deadline = None if time_limit is None else started + time_limit
    if deadline is not None and time.perf_counter() >= deadline:
        return None  # no time to encode the types, the closure's first step
    limit = current_limit(memory_limit, "lp_bound")
    model = _closure_model(instance, k, objective, max_vectors, deadline, limit, pricing)
    if model is None:
        return None
    enc, vectors, pricer, scale = model.enc, model.vectors, model.pricer, model.scale
    w = pricer.w
    if pool is not None:
        pool.enc, pool.vectors, pool.cost, pool.scale = enc, vectors, pricer.int_cost, scale
        pool.objective, pool.k, pool.instance = objective, k, instance

    # Every record pays at least its cheapest vector: u_t = min c_v over the vectors
    # covering t is the per-record bound, and its Lagrangian bound (every mean_k >= 0)
    # is that bound. It is the first centre; its cheapest vectors seed the columns.
    # Over the closure it is found at once, whatever the time; the search's stops at
    # the deadline, and there is then no bound.
    try:
        center = pricer.cheapest()
    except BuildStopped:
        return None
    best, _, _ = pricer.lagrangian(center)
    rounds, lp_value, solved = 0, None, False
    # Why columns stopped being added when the LP would pass the memory limit, or
    # the LP's set-up at the deadline.
    stopped = None

    def result() -> LowerBound | None:
        """The best Lagrangian bound so far, rounded up to the objective's grid; None
        when none is finite (no bound)."""
        if not math.isfinite(best):
            return None
        if pool is not None:
            pool.cost = pricer.int_cost  # the search's vectors grow with its columns
        margin = 1e-7 * max(1.0, abs(best)) + 1e-6
        value = Fraction(max(0, math.ceil(best - margin)), scale)
        details = {
            "rounds": rounds,
            "columns": added[0],
            "nonzeros": nonzeros[0],
            **pricer.details(),
            "lp": None if lp_value is None else lp_value / scale,
            "seconds": time.perf_counter() - started,
        }
        if stopped is not None:
            details["stopped"] = stopped
        value = int(value) if value.denominator == 1 else value
        return LowerBound(objective, value, "LP (column generation)", solved, details)

    def set_up_stopped(exc: BuildStopped) -> LowerBound | None:
        """The bound at the first centre, the LP's set-up stopped by its deadline."""
        nonlocal stopped
        stopped = f"the time limit passed while {exc.stage}, before the LP's first round"
        return result()

    added = [0]
    nonzeros = [0]
    solver = pywraplp.Solver.CreateSolver("GLOP")
    solver.SetSolverSpecificParametersAsString(GLOP_PARAMETERS)
    released = []
    try:
        check_deadline(deadline, "bounding each record by its cheapest vector")
        for lo in range(0, enc.n_types, SET_UP_STEP):
            check_deadline(deadline, "writing the LP's rows")
            released.extend(solver.Constraint(float(w[t]), float(w[t]))
                            for t in range(lo, min(lo + SET_UP_STEP, enc.n_types)))
    except BuildStopped as exc:
        return set_up_stopped(exc)
    solver.Objective().SetMinimization()

    def add(v: int, types: np.ndarray, amounts: np.ndarray) -> None:
        """A column: vector v releasing `amounts` records of each of `types`."""
        lam = solver.NumVar(0.0, solver.infinity(), "")
        for t, q in zip(types.tolist(), amounts.tolist()):
            released[t].SetCoefficient(lam, float(q))
        solver.Objective().SetCoefficient(lam, float(pricer.int_cost[v]) * float(amounts.sum()))
        added[0] += 1
        nonzeros[0] += len(types)
        if pool is not None:
            pool.columns.append((v, types, amounts))

    def fits(batch: list) -> bool:
        """Whether the LP with the columns of `batch` added stays within the limit."""
        more = sum(len(col[1]) for col in batch)
        need = pricer.memory() + LP_NONZERO_BYTES * (nonzeros[0] + more)
        return limit.bytes is None or need <= limit.bytes

    try:
        first = pricer.first_columns(center, enc, vectors, release, k, deadline)
    except BuildStopped as exc:
        return set_up_stopped(exc)  # the first vectors are not listed by the deadline
    if not fits(first):
        stopped = _memory_stop(pricer.memory(), nonzeros[0], first, limit)
        return result()
    for i, col in enumerate(first):
        if i % SET_UP_STEP == 0 and deadline is not None and time.perf_counter() >= deadline:
            return set_up_stopped(BuildStopped("adding the LP's first columns"))
        add(*col)
    while deadline is None or time.perf_counter() < deadline:
        rounds += 1
        if deadline is not None:
            solver.SetTimeLimit(max(1, int(1000 * (deadline - time.perf_counter()))))
        status = solver.Solve()
        if status != pywraplp.Solver.OPTIMAL:
            break
        lp_value = solver.Objective().Value()
        if deadline is not None and time.perf_counter() >= deadline:
            break  # the solve took the time left: no Lagrangian past it
        duals = np.array([c.dual_value() for c in released])
        # Wentges' smoothing: price at a point between the best duals and the LP's.
        tries = [smoothing * center + (1 - smoothing) * duals, duals] if smoothing else [duals]
        fresh: list = []
        late = False
        for u in tries:
            if deadline is not None and time.perf_counter() >= deadline:
                late = True  # each pricing sorts every pair: none starts past the deadline
                break
            bound, mean, order = pricer.lagrangian(u)
            if bound > best:
                best, center = bound, u
            if deadline is not None and time.perf_counter() >= deadline:
                late = True  # its bound is kept; no column is priced past the deadline
                break
            # A column priced at the smoothed point may not price out at the LP's duals
            # (a mispricing): adding it leaves the LP and its duals as they were, for
            # ever. Only columns that enter the LP are added; else the LP's duals price.
            tolerance = -1e-9 * max(1.0, abs(lp_value))
            try:
                priced = pricer.columns(u, mean, order, columns)
            except BuildStopped:
                return result()  # the search's vectors are not listed by the deadline
            if deadline is not None and time.perf_counter() >= deadline:
                late = True
                break
            fresh = [
                col
                for col in priced
                if float(((pricer.int_cost[col[0]] - duals[col[1]]) * col[2]).sum()) < tolerance
            ]
            if fresh:
                break
        if best >= lp_value - 1e-7 * max(1.0, abs(lp_value)):
            solved = True
            break
        if late:
            break
        if not fresh:
            # No column prices out: the LP is solved, unless the pricing search ran out
            # of time before it could tell.
            solved = pricer.complete
            break
        if not fits(fresh):
            stopped = _memory_stop(pricer.memory(), nonzeros[0], fresh, limit)
            break
        for col in fresh:
            add(*col)
    return result()


def _memory_stop(held: int, nonzeros: int, batch: list, limit: Limit) -> str:
    """Why the columns of `batch` were not added: the LP would pass the memory limit."""
    more = sum(len(col[1]) for col in batch)
    need = held + LP_NONZERO_BYTES * (nonzeros + more)
    return (
        f"memory limit: {len(batch):,} more columns ({more:,} nonzeros, {nonzeros:,} in the LP) "
        f"would need about {format_bytes(need)}, more than the {format_bytes(limit.bytes)} of "
        f"{limit.source}"
    )


class _Pricer:
    """Pricing over the whole closure, vectorised: per vector, its (type) pairs in a CSR
    layout, sorted per round by the duals so that each vector's k records of largest
    dual come first (its cost is the same for all of them, so those are its k cheapest
    records in reduced cost)."""

    #: Pricing over the whole closure is exact.
    complete = True

    def __init__(self, vec_cost, pair_t, pair_v, w, k, group_of_vec, n_g):
        self.pairs = len(pair_t)
        order = np.argsort(pair_v, kind="stable")
        self.n_vec = len(vec_cost)
        self.starts = np.searchsorted(pair_v[order], np.arange(self.n_vec + 1))
        self.types = pair_t[order]
        self.row = pair_v[order]
        self.int_cost = vec_cost
        self.cost = vec_cost.astype(float)
        self.w = w.astype(float)
        self.k = k
        self.n_types = len(w)
        self.groups = [(np.flatnonzero(group_of_vec == g), size) for g, size in n_g.items()]

    def details(self) -> dict:
        """What the LP bound reports of its pricing."""
        return {"closure": self.n_vec, "pairs": self.pairs}

    def memory(self) -> int:
        """Bytes the closure and the pricer hold while the LP grows (:func:`lp_memory`)."""
        return lp_memory(self.n_vec, 0, self.pairs)

    def first_columns(self, center, enc, vectors, release, k, deadline=None) -> list:
        """The LP's first columns: per protected group its coarsest vector (it covers
        every type of the group), the classes of `release`, and per type a column of
        its cheapest vector at `center`; BuildStopped past `deadline`
        (``time.perf_counter``), read per :data:`SET_UP_STEP` classes or types."""
        first = []
        for members, _ in self.groups:
            v = int(members[np.argmax(np.diff(self.starts)[members])])
            types = self.types[self.starts[v] : self.starts[v + 1]]
            first.append((v, types, self.w[types]))
        if release is not None:
            for v, amounts in _release_columns(enc, vectors, release, k, deadline):
                types = np.array(list(amounts), dtype=np.int64)
                first.append((v, types, np.array(list(amounts.values()))))
        first.extend(self.cheapest_columns(center, deadline))
        return first

    def cheapest(self) -> np.ndarray:
        """Per type, the cost of the cheapest vector covering it."""
        out = np.full(self.n_types, np.inf)
        np.minimum.at(out, self.types, self.cost[self.row])
        return out

    def _sorted(self, u):
        """Each vector's types by decreasing u; the records each takes of the first k
        records (``take``)."""
        rank = np.empty(self.n_types, dtype=np.int64)
        rank[np.argsort(-u, kind="stable")] = np.arange(self.n_types)
        matrix = sp.csr_matrix(
            (self.types, rank[self.types], self.starts), shape=(self.n_vec, self.n_types)
        )
        matrix.has_sorted_indices = False
        matrix.sort_indices()
        types = matrix.data
        wt = self.w[types]
        before = np.cumsum(wt) - wt
        before -= before[self.starts[:-1]][self.row]  # records of the same vector before
        take = np.clip(self.k - before, 0.0, wt)
        return types, wt, take

    def lagrangian(self, u):
        """The Lagrangian bound at u (module docstring); mean_k per vector; the pairs by
        vector sorted by u."""
        order = self._sorted(u)
        types, _, take = order
        top = np.bincount(self.row, weights=take * u[types], minlength=self.n_vec)
        mean = self.cost - top / self.k
        bound = float(u @ self.w)
        for members, size in self.groups:
            bound += size * float(mean[members].min())
        return bound, mean, order

    def columns(self, u, mean, order, most):
        """The `most` vectors of most negative mean_k, each with its column of least
        reduced cost (every type with c_v < u_t whole, then the cheapest other records up
        to k)."""
        types, wt, take = order
        chosen = np.argsort(mean, kind="stable")[:most]
        out = []
        for v in chosen.tolist():
            if mean[v] >= -1e-9 * max(1.0, self.cost[v]):
                break
            lo, hi = self.starts[v], self.starts[v + 1]
            amounts = np.where(u[types[lo:hi]] > self.cost[v], wt[lo:hi], take[lo:hi])
            keep = amounts > 0
            out.append((v, types[lo:hi][keep], amounts[keep]))
        return out

    def cheapest_columns(self, u, deadline=None):
        """Per type t, a column of its cheapest vector: t whole, then the other records of
        largest u up to k; BuildStopped past `deadline`, read per :data:`SET_UP_STEP`
        types."""
        # Each of the sorts takes about 0.1 s CPU over German credit's 1.5 M pairs.
        check_deadline(deadline, "listing each type's cheapest column")
        types, wt, _ = self._sorted(u)
        check_deadline(deadline, "listing each type's cheapest column")
        pair_cost = self.cost[self.row]
        by = np.lexsort((pair_cost, self.types))
        check_deadline(deadline, "listing each type's cheapest column")
        first = by[np.searchsorted(self.types[by], np.arange(self.n_types))]
        out = {}
        for t, p in enumerate(first.tolist()):
            if t % SET_UP_STEP == 0:
                check_deadline(deadline, "listing each type's cheapest column")
            v = int(self.row[p])
            lo, hi = self.starts[v], self.starts[v + 1]
            ts, ws = types[lo:hi], wt[lo:hi]
            own = ts == t
            rest = np.cumsum(np.where(own, 0.0, ws))
            amounts = np.where(own, ws, np.clip(self.k - self.w[t] - (rest - ws), 0.0, ws))
            keep = amounts > 0
            key = (v, tuple(ts[keep].tolist()))
            out.setdefault(key, (v, ts[keep], amounts[keep]))
        return list(out.values())


class _SearchPricer:
    """Pricing without the closure (:mod:`fairanon.solver.pricing`): the vectors found so
    far are priced exactly first (a :class:`_Pricer` over them), the least of their
    mean_k is the search's first incumbent, and the branch and bound over the labels
    gives each group's minimum, or a lower bound on it when the deadline cuts it.
    Vectors are registered as they enter the LP; ``vectors`` and ``int_cost`` grow."""

    def __init__(self, enc, k: int, objective: str, n_g: dict, deadline: float | None,
                 limit: Limit | None = None):
        self.search = LabelSearch(enc, k, objective, deadline, limit)
        self.scale = self.search.scale
        self.k, self.n_g, self.deadline = k, n_g, deadline
        self.w = enc.weight.astype(float)
        self.group_types = {g: np.flatnonzero(enc.protected == g) for g in n_g}
        self.vectors: list = []
        self.index: dict = {}
        self.covers: list = []
        self._costs: list = []
        self.int_cost = np.zeros(0, dtype=np.int64)
        self._pool: _Pricer | None = None
        self.pairs = 0
        self.complete = True
        self.nodes = self.searches = self.cut = 0

    def details(self) -> dict:
        return {"closure": None, "pricing": "search", "vectors": len(self.vectors),
                "pairs": self.pairs, "nodes": self.nodes, "searches": self.searches,
                "searches_cut": self.cut}

    def memory(self) -> int:
        """Bytes the vectors found and their pairs hold (:func:`lp_memory`), and the
        search's arrays (:meth:`LabelSearch.memory`)."""
        return lp_memory(len(self.vectors), 0, self.pairs) + self.search.memory()

    def _vectors(self, g: int, labels) -> list[int]:
        """The ids of the vectors of group g with `labels` (a label per attribute per
        row), those that are new registered."""
        labels = [tuple(int(x) for x in row) for row in labels]
        fresh = list(dict.fromkeys(row for row in labels if (g, *row) not in self.index))
        covers = self.search.covered(self.group_types[g], np.array(fresh), self.deadline)
        for row, cover in zip(fresh, covers):
            self.index[(g, *row)] = len(self.vectors)
            self.vectors.append((g, *row))
            self.covers.append(cover)
            self._costs.append(self.search.int_cost(row))
            self.pairs += len(cover)
        self._sync()
        return [self.index[(g, *row)] for row in labels]

    def _round_deadline(self) -> float | None:
        """Where one search stops: a share of the time left (:data:`SEARCH_SHARE`), so
        that far from the LP's duals, where the least mean_k lies deep, a search still
        leaves time for the columns it found to move the duals."""
        if self.deadline is None:
            return None
        now = time.perf_counter()
        return now + SEARCH_SHARE * max(0.0, self.deadline - now)

    def _sync(self) -> None:
        """The vectors' costs as one array, after a batch of registrations."""
        if len(self.int_cost) != len(self._costs):
            self.int_cost = np.array(self._costs, dtype=np.int64)

    def _column(self, v: int, u: np.ndarray):
        """Vector v's column of least reduced cost at u (as :meth:`_Pricer.columns`)."""
        types = self.covers[v]
        types = types[np.argsort(-u[types], kind="stable")]
        wt = self.w[types]
        take = np.clip(self.k - (np.cumsum(wt) - wt), 0.0, wt)
        amounts = np.where(u[types] > float(self.int_cost[v]), wt, take)
        keep = amounts > 0
        return v, types[keep], amounts[keep]

    def cheapest(self) -> np.ndarray:
        """Per type, a lower bound on the cost of every vector covering it and k
        records: per attribute, the cheapest label covering its value and k records of
        its group. Every mean_k is at least 0 there, so it is a valid first centre.
        BuildStopped past the deadline."""
        out = np.zeros(len(self.w))
        for types in self.group_types.values():
            out[types] = self.search.narrowest(types, range(self.search.d), self.deadline)
        return out

    def first_columns(self, center, enc, vectors, release, k, deadline=None) -> list:
        """Per group its coarsest vector (covering all its types), each type of at
        least k records alone, and the classes of `release`; BuildStopped past the
        deadline."""
        first = []
        own = np.column_stack([s.own[enc.qi[:, a]] for a, s in enumerate(enc.spaces)])
        for g, types in self.group_types.items():
            (v,) = self._vectors(g, [self.search.coarsest(types, self.deadline)])
            first.append((v, self.covers[v], self.w[self.covers[v]]))
            alone = types[self.w[types] >= k]
            for t, v in zip(alone.tolist(), self._vectors(g, own[alone])):
                first.append((v, np.array([t]), self.w[[t]]))
        # The release's classes take seconds on large tables: not past the deadline.
        if release is not None and (self.deadline is None or time.perf_counter() < self.deadline):
            first.extend(self._release_columns(enc, release, k))
        return first

    def _release_columns(self, enc, release, k) -> list:
        """The classes of `release` of at least k records within one protected group,
        each as its vector of cheapest labels and its records per type (the release as
        columns, as :func:`_release_columns` for the closure, all classes at once)."""
        from ..models.metrics import equivalence_classes

        try:
            classes = equivalence_classes(enc.instance, release)
            table_order = enc.instance.row_ids.get_indexer(release.table.index)
        except FairanonError:
            return []
        cls = np.empty(enc.instance.n_rows, dtype=np.int64)
        cls[table_order] = classes
        n_cls = int(cls.max()) + 1
        pairs, counts = np.unique(cls * enc.n_types + enc.row_type, return_counts=True)
        pair_c, pair_t = np.divmod(pairs, enc.n_types)
        size = np.bincount(pair_c, weights=counts, minlength=n_cls)
        group = np.full(n_cls, -1)
        group[pair_c] = enc.protected[pair_t]
        mixed = np.zeros(n_cls, dtype=bool)
        mixed[pair_c[enc.protected[pair_t] != group[pair_c]]] = True
        labels = self.search.summaries(pair_c, pair_t, n_cls, self.deadline)
        starts = np.searchsorted(pair_c, np.arange(n_cls + 1))
        out = []
        for g in self.group_types:
            chosen = np.flatnonzero((group == g) & ~mixed & (size >= k))
            for c, v in zip(chosen.tolist(), self._vectors(g, labels[chosen])):
                lo, hi = starts[c], starts[c + 1]
                out.append((v, pair_t[lo:hi], counts[lo:hi].astype(float)))
        return out

    def lagrangian(self, u):
        """The Lagrangian bound at u: the vectors found priced exactly, then per group
        the search below the least of their mean_k."""
        self._sync()
        if not self.vectors:  # before the first columns: nothing known, all searched
            mean, order, groups = np.zeros(0), None, [np.zeros(0, dtype=np.int64)] * len(self.n_g)
        else:
            if self._pool is None or self._pool.n_vec != len(self.vectors):
                pair_v = np.repeat(np.arange(len(self.vectors)), [len(c) for c in self.covers])
                group_of_vec = np.array([vec[0] for vec in self.vectors], dtype=np.int64)
                self._pool = _Pricer(self.int_cost, np.concatenate(self.covers), pair_v,
                                     self.w, self.k, group_of_vec, self.n_g)
            _, mean, order = self._pool.lagrangian(u)
            groups = [members for members, _ in self._pool.groups]
        bound = float(u @ self.w)
        found = []
        self.complete = True
        for (g, size), members in zip(self.n_g.items(), groups):
            known = float(mean[members].min()) if len(members) else math.inf
            res = self.search.search(u, self.group_types[g], known, self._round_deadline())
            self.nodes += res.nodes
            self.searches += 1
            if not res.complete:
                self.complete = False
                self.cut += 1
            bound += size * res.lower
            found.extend((m, g, labels) for m, labels in res.leaves)
        return bound, (mean, order, found), None

    def columns(self, u, state, _, most):
        """The `most` vectors of most negative mean_k, found before or by the search,
        each with its column of least reduced cost."""
        mean, order, found = state
        known = self._pool.columns(u, mean, order, most) if order is not None else []
        out = [(float(mean[col[0]]), col) for col in known]
        fresh = [(m, g, labels) for m, g, labels in found if (g, *labels) not in self.index]
        for g in self.n_g:
            mine = [(m, labels) for m, h, labels in fresh if h == g]
            ids = self._vectors(g, [labels for _, labels in mine])
            out.extend((m, v) for (m, _), v in zip(mine, ids))
        out.sort(key=lambda item: item[0])
        return [col if isinstance(col, tuple) else self._column(col, u) for _, col in out[:most]]


def _search_model(enc, k: int, objective: str, deadline: float | None,
                  limit: Limit | None = None) -> _Model | None:
    """The LP bound's model priced by search instead of the closure; None when some
    protected value has fewer than k records (no release meets k); MemoryLimitError
    when the search's arrays do not fit `limit`."""
    w = enc.weight.astype(np.int64)
    n_g = {int(g): int(w[enc.protected == g].sum()) for g in np.unique(enc.protected).tolist()}
    if any(size < k for size in n_g.values()):
        return None
    try:
        pricer = _SearchPricer(enc, k, objective, n_g, deadline, limit)
    except BuildStopped:
        return None  # the search's pairwise costs are not built by the deadline
    return _Model(enc, pricer.vectors, np.zeros(0, dtype=np.int64), pricer.scale, pricer)


@dataclass
class _Model:
    """The closure's vectors, their pairs and integer costs (cost / scale per record)."""

    enc: object
    vectors: list
    pair_t: np.ndarray
    scale: int
    pricer: _Pricer


def _closure_model(
    instance, k, objective, max_vectors, deadline, limit: Limit | None = None,
    pricing: str = "closure",
) -> _Model | None:
    """The vectors of the join closure under k and their costs, or None when the
    closure is too large, is not built by `deadline`, or no release meets k.

    Under `limit` the closure is built up to the vectors whose pairing with the types
    fits it (:func:`lp_memory`, counting every vector paired with the types of the
    largest protected value), and its pairs are counted before they are listed:
    MemoryLimitError when either does not fit.

    `pricing` (:data:`PRICINGS`): with "search" the closure is not built and the model
    is priced by search (:class:`_SearchPricer`); with "auto" too when the closure has
    more than `max_vectors` vectors or does not fit the memory limit (NCP and LM)."""
    widest = max(
        [
            len(np.unique(instance.codes(n)))
            for n in instance.schema.generalizable
            if instance.schema[n].kind != "categorical"
        ]
        + [1]
    )
    searchable = pricing != "closure" and objective in SEARCH_OBJECTIVES
    if pricing == "search" and searchable:
        # The labels' count tells what the search would hold before they are built
        # (the ranges of an attribute of 1,000 values, 500,000 labels, took 6.5 s CPU).
        _check_search_memory(instance, widest, limit)
    try:
        enc = encode(instance, [KAnonymity(k)], max_range_values=widest, deadline=deadline)
    except MemoryLimitError:
        raise  # the caller says why the LP was not computed
    except (FairanonError, BuildStopped):
        return None
    if pricing == "search" and searchable:
        return _search_model(enc, k, objective, deadline, limit)
    counts = np.bincount(enc.protected)
    cap, per_group = max_vectors, int(counts.max())
    if limit is not None and limit.bytes is not None:
        # The closure holds at least each type's own vector, paired with the types of
        # its protected value.
        least = lp_memory(enc.n_types, int((counts**2).sum()))
        if least > limit.bytes and searchable:
            return _search_model(enc, k, objective, deadline, limit)
        if least > limit.bytes:
            _check_lp_memory(enc, least, f"at least {enc.n_types:,}", limit, at_least=True)
        per_vector = LP_VECTOR_BYTES + LP_CELL_BYTES * per_group
        cap = min(max_vectors, (limit.bytes - LP_BYTES) // per_vector)

    def pairing(vectors: int, pairs: int) -> None:
        """Before the closure's pairs are listed: refuse when they do not fit."""
        if limit is not None:
            need = lp_memory(vectors, vectors * per_group, pairs)
            _check_lp_memory(enc, need, f"{vectors:,}", limit, pairs=pairs)

    try:
        # The candidates' closure can take longer than the whole limit: it stops there.
        cands = _candidates(enc, True, k, cap, deadline=deadline, on_pairs=pairing)
    except ClosureTooLarge:
        if searchable:
            return _search_model(enc, k, objective, deadline, limit)
        if cap < max_vectors:
            need = lp_memory(cap + 1, (cap + 1) * per_group)
            _check_lp_memory(enc, need, f"more than {cap:,}", limit, at_least=True)
        return None
    except MemoryLimitError:
        raise  # the pairs' refusal: a FairanonError that is not "no bound"
    except (FairanonError, BuildStopped):
        return None
    vectors, pair_t, pair_v = cands.vectors, cands.pair_t, cands.pair_v
    try:
        costs, scale = _pair_costs(enc, vectors, pair_t, pair_v, objective, deadline)
    except BuildStopped:
        return None  # the closure took the time: no bound
    w = enc.weight.astype(np.int64)
    # A vector's records cost the same under ncp and lm; where they would not, the
    # cheapest of them is a relaxation (lower costs, a lower bound still).
    vec_cost = np.full(len(vectors), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(vec_cost, pair_v, costs)
    group_of_vec = np.array([v[0] for v in vectors], dtype=np.int64)
    groups = np.unique(enc.protected)
    n_g = {int(g): int(w[enc.protected == g].sum()) for g in groups.tolist()}
    if any(size < k for size in n_g.values()):
        return None  # no release meets k: nothing to bound
    if deadline is not None and time.perf_counter() >= deadline:
        return None  # the closure and its costs took the time: no bound
    pricer = _Pricer(vec_cost, pair_t, pair_v, w, k, group_of_vec, n_g)
    return _Model(enc, vectors, pair_t, scale, pricer)


def _check_search_memory(instance: Instance, widest: int, limit: Limit | None) -> None:
    """Raise MemoryLimitError when the pricing search's arrays (:func:`search_memory`)
    over at least the labels the encoding of :func:`_closure_model` would build (each
    value's own and every range of an ordered or numeric attribute's values; ``*`` for
    the others, whose hierarchy nodes are not counted) would not fit `limit`, before
    the labels are built."""
    sizes = []
    for name in instance.schema.generalizable:
        attr = instance.schema[name]
        m = len(np.unique(instance.codes(name)))
        ranges = attr.kind != "categorical" and m <= widest
        sizes.append((m + max(m * (m - 1) // 2 if ranges else 0, 1), m))
    held, temporary = search_memory(sizes)
    check_memory(
        held + temporary,
        f"the pricing search's label rows and pairwise costs over {instance.name!r} "
        f"(labels per attribute {[n for n, _ in sizes]}, values {[m for _, m in sizes]})",
        "use fewer quasi-identifiers or coarser numeric hierarchies",
        limit,
        caller="lp_bound",
        at_least=True,
    )


def _check_lp_memory(enc, need: int, vectors: str, limit: Limit, *, pairs: int | None = None,
                     at_least: bool = False) -> None:
    """Raise MemoryLimitError when the LP bound's closure of `vectors` vectors (and
    `pairs` pairs) would need `need` bytes, more than `limit`."""
    held = "" if pairs is None else f" and {pairs:,} (type, vector) pairs"
    check_memory(
        need,
        f"The LP bound's join closure of the {enc.n_types:,} record types of "
        f"{enc.instance.name!r} ({vectors} vectors{held})",
        "use the per-record bound (fairanon.models.bounds.lower_bound) or fewer "
        "quasi-identifiers",
        limit,
        caller="lp_bound",
        at_least=at_least,
    )


def _release_columns(enc, vectors, release: Release, k: int, deadline: float | None = None):
    """Per class of `release`: its tight summary (a closure vector) and its records per
    type -- the release itself as columns; BuildStopped past `deadline`, read per
    class (each reads every record's class)."""
    from ..models.metrics import equivalence_classes

    try:
        classes = equivalence_classes(enc.instance, release)
        table_order = enc.instance.row_ids.get_indexer(release.table.index)
    except FairanonError:
        return []
    index = {vec: v for v, vec in enumerate(vectors)}
    cls = np.empty(enc.instance.n_rows, dtype=np.int64)
    cls[table_order] = classes
    out = []
    for c in np.unique(cls).tolist():
        check_deadline(deadline, "making the release's classes columns")
        rows = np.flatnonzero(cls == c)
        types, counts = np.unique(enc.row_type[rows], return_counts=True)
        vec = [int(enc.protected[types[0]])]
        for a, space in enumerate(enc.spaces):
            labels = enc.qi[types, a]
            joined = labels[:1]
            for lab in labels[1:]:
                joined = space.join(joined, np.array([lab]))
            vec.append(int(joined[0]))
        v = index.get(tuple(vec))
        if v is not None and len(rows) >= k:
            out.append((v, {int(tt): float(q) for tt, q in zip(types, counts)}))
    return out
