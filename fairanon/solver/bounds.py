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
floating point. Columns from a given release (its classes) start the search.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ..exceptions import FairanonError
from ..instances.instance import Instance
from ..models.bounds import LowerBound
from ..models.requirements import KAnonymity, Requirement, validate_requirements
from ..release import Release
from .local_recoding.encoding import BuildStopped, _candidates, encode
from .local_recoding.model import _pair_costs

__all__ = ["LP_OBJECTIVES", "lp_bound"]

#: Objectives whose model costs are those of the cheapest labels any release can use.
LP_OBJECTIVES = ("ncp", "lm", "generalized")
#: Weight of the best duals so far in the point where columns are priced (Wentges'
#: dual smoothing: the LP's own duals jump from round to round on these degenerate LPs).
SMOOTHING = 0.7


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


def lp_bound(
    instance: Instance,
    requirements: Sequence[Requirement],
    objective: str = "ncp",
    *,
    release: Release | None = None,
    time_limit: float | None = None,
    max_vectors: int = 300_000,
    columns: int = 300,
) -> LowerBound | None:
    """The LP bound of the module docstring, or None when it does not apply (objective,
    no k-anonymity, a join closure of more than `max_vectors` vectors).

    Parameters
    ----------
    release : Release, optional
        Its classes seed the pool of vectors.
    time_limit : float, optional
        Seconds; the best bound certified so far is returned when it runs out
        (``complete=False`` unless the LP was solved).
    columns : int, default=300
        Vectors added per round.
    """
    from ortools.linear_solver import pywraplp

    started = time.perf_counter()
    requirements = validate_requirements(instance, requirements, caller="lp_bound", sizes=False)
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    if objective not in LP_OBJECTIVES or k <= 1 or not _valid_families(instance, objective):
        return None
    deadline = None if time_limit is None else started + time_limit
    widest = max(
        [
            len(np.unique(instance.codes(n)))
            for n in instance.schema.generalizable
            if instance.schema[n].kind != "categorical"
        ]
        + [1]
    )
    reqs = [KAnonymity(k)]
    try:
        enc = encode(instance, reqs, max_range_values=widest)
        # The candidates' closure can take longer than the whole limit: it stops there.
        cands = _candidates(enc, True, k, max_vectors, deadline=deadline)
    except (FairanonError, BuildStopped):
        return None
    vectors, pair_t, pair_v = cands.vectors, cands.pair_t, cands.pair_v
    costs, scale = _pair_costs(enc, vectors, pair_t, pair_v, objective)
    w = enc.weight.astype(np.int64)
    n_vec = len(vectors)
    vec_cost = np.zeros(n_vec, dtype=np.int64)
    vec_cost[pair_v] = costs
    order = np.argsort(pair_v, kind="stable")
    starts = np.searchsorted(pair_v[order], np.arange(n_vec + 1))
    group_of_vec = np.array([v[0] for v in vectors], dtype=np.int64)
    groups = np.unique(enc.protected)
    n_g = {int(g): int(w[enc.protected == g].sum()) for g in groups.tolist()}
    if any(size < k for size in n_g.values()):
        return None  # no release meets k: nothing to bound

    solver = pywraplp.Solver.CreateSolver("GLOP")
    released = [solver.Constraint(float(w[t]), float(w[t])) for t in range(enc.n_types)]
    solver.Objective().SetMinimization()
    added = [0]

    def add(v: int, amounts: dict[int, float]) -> None:
        """A column: vector v releasing `amounts` records of each type."""
        lam = solver.NumVar(0.0, solver.infinity(), "")
        total = 0.0
        for t, q in amounts.items():
            released[t].SetCoefficient(lam, float(q))
            total += q
        solver.Objective().SetCoefficient(lam, float(vec_cost[v]) * total)
        added[0] += 1

    for g in groups.tolist():  # the coarsest vector of each group covers all its types
        members = np.flatnonzero(group_of_vec == g)
        v = int(members[np.argmax(np.diff(starts)[members])])
        add(v, {int(pair_t[i]): float(w[pair_t[i]]) for i in order[starts[v] : starts[v + 1]]})
    if release is not None:
        for v, amounts in _release_columns(enc, vectors, release, k):
            add(v, amounts)
    best = -math.inf
    center = None
    rounds, lp_value, solved = 0, None, False
    while True:
        rounds += 1
        if deadline is not None:
            solver.SetTimeLimit(max(1, int(1000 * (deadline - time.perf_counter()))))
        status = solver.Solve()
        if status != pywraplp.Solver.OPTIMAL:
            break
        lp_value = solver.Objective().Value()
        duals = np.array([c.dual_value() for c in released])
        # Wentges' smoothing: price at a point between the best duals and the LP's.
        tries = [duals] if center is None else [SMOOTHING * center + (1 - SMOOTHING) * duals, duals]
        most = []
        for u in tries:
            mean, most, amounts = _price(vec_cost, pair_t, order, starts, u, w, k, columns)
            bound = float(u @ w)
            for g in groups.tolist():
                bound += n_g[g] * float(mean[group_of_vec == g].min())
            if bound > best:
                best, center = bound, u
            # A column priced at the smoothed point may not price out at the LP's duals
            # (a mispricing): adding it leaves the LP and its duals as they were, for
            # ever. Only columns that enter the LP are added; else the LP's duals price.
            tolerance = -1e-9 * max(1.0, abs(lp_value))
            most = [v for v in most if _reduced_cost(vec_cost[v], amounts[v], duals) < tolerance]
            if most:
                break
        if not most or best >= lp_value - 1e-7 * max(1.0, abs(lp_value)):
            solved = True
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
        for v in most:
            add(v, amounts[v])
    if best == -math.inf:
        return None
    margin = 1e-7 * max(1.0, abs(best)) + 1e-6
    value = Fraction(max(0, math.ceil(best - margin)), scale)
    value = int(value) if value.denominator == 1 else value
    details = {
        "rounds": rounds,
        "columns": added[0],
        "closure": n_vec,
        "pairs": len(pair_t),
        "lp": None if lp_value is None else lp_value / scale,
        "seconds": time.perf_counter() - started,
    }
    return LowerBound(objective, value, "LP (column generation)", solved, details)


def _reduced_cost(cost: float, amounts: dict[int, float], duals: np.ndarray) -> float:
    """The reduced cost of a column (c_v per record, `amounts` records per type) for the
    duals of the "released once" rows."""
    return sum(q * (float(cost) - float(duals[t])) for t, q in amounts.items())


def _price(vec_cost, pair_t, order, starts, u, w, k, columns):
    """Per vector, the average reduced cost of its k cheapest records, mean_k(v); the
    vectors where it is negative (most negative first, at most `columns`); and, for
    each, the column with the least reduced cost (every type with c_v < u_t whole, then
    the cheapest other records up to k)."""
    n_vec = len(vec_cost)
    pv = np.repeat(np.arange(n_vec), np.diff(starts))
    t = pair_t[order]
    val = vec_cost[pv] - u[t]
    wt = w[t].astype(float)
    by = np.lexsort((val, pv))
    sv, sw, sp = val[by], wt[by], pv[by]
    before = np.cumsum(sw) - sw
    first = np.searchsorted(sp, np.arange(n_vec))
    before -= before[first[sp]]  # records of the same vector before this pair
    take = np.clip(k - before, 0.0, sw)
    mean = np.bincount(sp, weights=sv * take, minlength=n_vec) / k
    chosen = np.argsort(mean, kind="stable")[:columns]
    chosen = [int(v) for v in chosen if mean[v] < -1e-9 * max(1.0, abs(vec_cost[v]))]
    amounts = {}
    for v in chosen:
        lo, hi = starts[v], starts[v + 1]
        vals, types, weights = val[lo:hi], t[lo:hi], wt[lo:hi]
        col = {int(tt): float(q) for tt, q, x in zip(types, weights, vals) if x < 0}
        need = k - sum(col.values())
        for j in np.argsort(vals, kind="stable").tolist():
            if need <= 0:
                break
            if vals[j] >= 0:
                q = min(weights[j], need)
                col[int(types[j])] = col.get(int(types[j]), 0.0) + float(q)
                need -= q
        amounts[v] = col
    return mean, chosen, amounts


def _release_columns(enc, vectors, release: Release, k: int):
    """Per class of `release`: its tight summary (a closure vector) and its records per
    type -- the release itself as columns."""
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
