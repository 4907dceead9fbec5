"""The LP bound of the weighted-type model, by column generation, certified at every step.

The linear relaxation of the model of :mod:`fairanon.solver.local_recoding` under
k-anonymity (every other requirement only removes releases, so the bound holds for them
too): variables ``x[t,v]`` in [0, w_t] and ``z[v]`` in [0, 1], every type's records
released once, ``x[t,v] <= w_t z[v]`` and ``sum_t x[t,v] >= k z[v]``. Its candidate
vectors are the join closure of the types (the tight summaries classes can have), over
every hierarchy node and every range of the values present -- the cheapest labels any
release can use for a class -- so no release costs less than the integer optimum over
them, and the LP value is at most that.

Column generation: the restricted LP over a pool of vectors is solved with GLOP; for
the duals u of the "released once" rows, a vector's reduced cost is

    rc(v) = min { sum_t (c_v - u_t) x_t : 0 <= x_t <= w_t, sum_t x_t >= k }

over the types it covers, and the most negative ones join the pool. For any u,

    LP >= sum_t u_t w_t + sum over groups g of the floor(n_g / k) most negative rc(v)

(the Lagrangian relaxation of the "released once" rows: each vector is used at most
once, z[v] <= 1, and a protected group g of n_g records has at most floor(n_g / k)
classes), so every round gives a valid bound, computed over the whole closure (a lower
bound of rc(v) may stand in for it), and the last equals the LP value when every vector
of negative reduced cost is in the pool. The bound is rounded up to the objective's
grid (costs are multiples of 1 / scale) after a safety margin for the floating point.
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
from .local_recoding.encoding import _candidates, encode
from .local_recoding.model import _pair_costs

__all__ = ["LP_OBJECTIVES", "lp_bound"]

#: Objectives whose model costs are those of the cheapest labels any release can use.
LP_OBJECTIVES = ("ncp", "lm", "generalized")


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
            covered = sorted(rank[v] for v in attr.domain if rank[v] in present
                             and attr.hierarchy.covers(node, v))
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
    max_vars: int = 3_000_000,
    columns: int = 300,
) -> LowerBound | None:
    """The LP bound of the module docstring, or None when it does not apply (objective,
    no k-anonymity, a closure larger than `max_vars` type-vector pairs).

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
        [len(np.unique(instance.codes(n))) for n in instance.schema.generalizable
         if instance.schema[n].kind != "categorical"] + [1]
    )
    reqs = [KAnonymity(k)]
    try:
        enc = encode(instance, reqs, max_range_values=widest)
        cands = _candidates(enc, True, k, max_vars)
    except FairanonError:
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

    pool = set()
    for g in groups.tolist():  # the coarsest vector of each group covers all its types
        members = np.flatnonzero(group_of_vec == g)
        reach = np.diff(starts)[members]
        pool.add(int(members[np.argmax(reach)]))
    if release is not None:
        pool.update(_release_vectors(enc, vectors, release))

    solver = pywraplp.Solver.CreateSolver("GLOP")
    released = [solver.Constraint(float(w[t]), float(w[t])) for t in range(enc.n_types)]
    solver.Objective().SetMinimization()
    in_pool: set[int] = set()

    def add(v: int) -> None:
        in_pool.add(v)
        z = solver.NumVar(0.0, 1.0, "")
        size = solver.Constraint(0.0, solver.infinity())
        size.SetCoefficient(z, -float(k))
        for i in order[starts[v] : starts[v + 1]].tolist():
            t = int(pair_t[i])
            x = solver.NumVar(0.0, float(w[t]), "")
            solver.Objective().SetCoefficient(x, float(costs[i]))
            released[t].SetCoefficient(x, 1.0)
            size.SetCoefficient(x, 1.0)
            link = solver.Constraint(-solver.infinity(), 0.0)
            link.SetCoefficient(x, 1.0)
            link.SetCoefficient(z, -float(w[t]))

    for v in sorted(pool):
        add(v)
    best = -math.inf
    rounds, lp_value, solved = 0, None, False
    while True:
        rounds += 1
        if deadline is not None:
            solver.SetTimeLimit(max(1, int(1000 * (deadline - time.perf_counter()))))
        status = solver.Solve()
        if status != pywraplp.Solver.OPTIMAL:
            break
        lp_value = solver.Objective().Value()
        u = np.array([c.dual_value() for c in released])
        rc, most = _reduced_costs(vec_cost, pair_t, order, starts, u, w, k)
        bound = float(u @ w)
        for g in groups.tolist():
            negative = np.sort(rc[(group_of_vec == g) & (rc < 0)])
            bound += float(negative[: n_g[g] // k].sum())
        best = max(best, bound)
        fresh = [v for v in most[: columns + len(in_pool)].tolist()
                 if v not in in_pool and rc[v] < -1e-9 * scale][:columns]
        if not fresh:
            solved = True
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
        for v in fresh:
            add(v)
    if best == -math.inf:
        return None
    margin = 1e-7 * max(1.0, abs(best)) + 1e-6
    value = Fraction(max(0, math.ceil(best - margin)), scale)
    value = int(value) if value.denominator == 1 else value
    details = {
        "rounds": rounds,
        "pool": len(in_pool),
        "closure": n_vec,
        "pairs": len(pair_t),
        "lp": None if lp_value is None else lp_value / scale,
        "seconds": time.perf_counter() - started,
    }
    return LowerBound(objective, value, "LP (column generation)", solved, details)


def _reduced_costs(vec_cost, pair_t, order, starts, u, w, k):
    """rc(v) for every vector, and the vectors ordered by it (most negative first).

    The part sum_t min(0, c_v - u_t) w_t is a lower bound of rc(v); the fill (cheapest
    units with c_v >= u_t until k records) is added for every vector that needs it and
    whose lower bound is negative."""
    n_vec = len(vec_cost)
    pv = np.repeat(np.arange(n_vec), np.diff(starts))
    t = pair_t[order]
    val = vec_cost[pv] - u[t]
    wt = w[t].astype(float)
    neg = np.bincount(pv, weights=np.minimum(val, 0.0) * wt, minlength=n_vec)
    plus = np.bincount(pv, weights=np.where(val < 0, wt, 0.0), minlength=n_vec)
    rc = neg.copy()
    short = np.flatnonzero(plus < k)
    for v in short[np.argsort(neg[short], kind="stable")].tolist():
        if neg[v] >= 0:
            break  # rc >= 0 there: the lower bound stands in
        lo, hi = starts[v], starts[v + 1]
        vals, weights = val[lo:hi], wt[lo:hi]
        keep = vals >= 0
        need = k - plus[v]
        fill = 0.0
        for c, q in zip(np.sort(vals[keep]).tolist(), weights[keep][np.argsort(vals[keep])].tolist()):
            take = min(q, need)
            fill += c * take
            need -= take
            if need <= 0:
                break
        rc[v] = neg[v] + fill if need <= 0 else math.inf
    return rc, np.argsort(rc, kind="stable")


def _release_vectors(enc, vectors, release: Release) -> set[int]:
    """The closure vector (tight summary) of each class of `release`."""
    from ..models.metrics import equivalence_classes

    try:
        classes = equivalence_classes(enc.instance, release)
        table_order = enc.instance.row_ids.get_indexer(release.table.index)
    except FairanonError:
        return set()
    index = {vec: v for v, vec in enumerate(vectors)}
    cls = np.empty(enc.instance.n_rows, dtype=np.int64)
    cls[table_order] = classes
    out = set()
    for c in np.unique(cls).tolist():
        rows = np.flatnonzero(cls == c)
        types = np.unique(enc.row_type[rows])
        vec = [int(enc.protected[types[0]])]
        for a, space in enumerate(enc.spaces):
            labels = enc.qi[types, a]
            joined = labels[:1]
            for lab in labels[1:]:
                joined = space.join(joined, np.array([lab]))
            vec.append(int(joined[0]))
        v = index.get(tuple(vec))
        if v is not None:
            out.add(v)
    return out
