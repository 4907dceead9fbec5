"""Price and branch: the integer program over what column generation generated.

A heuristic, not an exact method: CP-SAT's ``OPTIMAL`` (``info["status"]``) means
optimal over the restricted columns only, not over every release -- the columns the LP
did not generate are never priced again, so no optimality is proven (Desrosiers and
Lübbecke, "A primer in column generation", in *Column Generation*, Springer 2005,
sec. 4, on price and branch as a heuristic). The bound to compare with is the LP's.

Column generation (:func:`fairanon.solver.bounds.lp_bound`) adds columns to the LP: a
column is a vector v of the join closure (a protected value and a label per
quasi-identifier) with an integer number of records of each record type it covers, at
least k in all, each costing ``c_v``. The *restricted master* solves the integer
program over those vectors (Desrosiers and Lübbecke, "A primer in column generation",
2005, sec. 4: price and branch): the type model of
:mod:`fairanon.solver.local_recoding.build` restricted to the vectors of the columns,
each taking any number of records of the types its columns hold,

    minimize  sum c_v x[t,v]  s.t.  sum_v x[t,v] = w_t,  x[t,v] <= w_t z[v],
                                    sum_t x[t,v] >= k z[v],

which holds every integer combination of the columns (columns of one vector released
together are one class of the same labels and cost) and, with the classes of a given
release added as columns, that release -- its hint -- so it has a solution whenever
each of the release's classes has its tight summary in the closure.

Where its solution is a release: under k-anonymity alone (a class of at least k records
meets it whatever else it holds; l-diversity, t-closeness and the rest would need
constraints the columns do not carry) and for NCP and LM, whose cost per record is the
vector's whatever the record (for ``generalized`` the LP's vector costs are the
cheapest record's, a relaxation). Elsewhere :func:`restricted_master` does nothing and
says why.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from ortools.sat.python import cp_model

from .._memory import check_memory
from ..exceptions import InvalidParameterError, MemoryLimitError
from ..instances.instance import Instance
from ..models.objectives import objective_value
from ..models.requirements import KAnonymity, Requirement
from ..release import Release, Status
from . import _cpsat
from .bounds import ColumnPool, _release_columns
from .local_recoding.memory import model_memory
from .local_recoding.solve import _table, _verified

__all__ = ["MASTER_OBJECTIVES", "restricted_master"]

#: Objectives whose cost per record is the vector's whatever the record.
MASTER_OBJECTIVES = ("ncp", "lm")
#: Assignment variables built between two looks at the deadline.
CHECK_EVERY = 4096
#: The share of the time limit kept after the solve for dealing the rows, computing the
#: objective and verifying the release (as lns keeps ``FINISH_SHARE``).
FINISH_SHARE = 0.05


def restricted_master(
    instance: Instance,
    requirements: Sequence[Requirement],
    objective: str,
    pool: ColumnPool,
    release: Release | None = None,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    num_workers: int = 1,
    memory_limit=None,
) -> tuple[Release | None, dict]:
    """The best release CP-SAT finds in `time_limit` over the vectors of `pool`'s
    columns and the classes of `release` (module docstring), verified.

    Parameters
    ----------
    pool : ColumnPool
        Filled by :func:`~fairanon.solver.bounds.lp_bound` on `instance` (the same
        object), for `objective` and the k of `requirements`.
    release : Release, optional
        Its classes join the columns and hint the solve.
    time_limit : float, optional
        Seconds for the build, the solve and the verification together: the deadline
        is looked at while the model is built and once its objective and hint are,
        and :data:`FINISH_SHARE` of it is kept for the verification. What the last
        steps take past it is recorded (``info["over_s"]``).
    memory_limit : optional
        As in :func:`fairanon.anonymize`: the model is not built when its assignment
        variables (:func:`~fairanon.solver.local_recoding.memory.model_memory`) would
        pass it.

    Returns
    -------
    (Release or None, dict)
        The release (FEASIBLE, its exact objective) or None, and what was done: the
        vectors and assignment variables, CP-SAT's status (``"OPTIMAL"``: over the
        columns only, module docstring) and seconds, or why nothing was
        (``"skipped"``).

    Raises
    ------
    InvalidParameterError
        When `time_limit` is not a positive number of seconds, or `pool` was filled
        for another instance, objective or k.
    """
    started = time.perf_counter()
    time_limit = _cpsat.check_time_limit(time_limit, "restricted_master")  # inf: None
    deadline = None if time_limit is None else started + time_limit
    # The solve ends early enough to leave the rest of the time to the verification.
    solve_end = None if time_limit is None else deadline - FINISH_SHARE * time_limit
    info: dict = {"columns": len(pool.columns)}

    def done(release: Release | None, **more) -> tuple[Release | None, dict]:
        now = time.perf_counter()
        out = {**info, **more, "seconds": now - started}
        if deadline is not None and now > deadline:
            out["over_s"] = now - deadline
        return release, out

    def skipped(why: str) -> tuple[None, dict]:
        return done(None, skipped=why)

    others = sorted({type(r).__name__ for r in requirements if not isinstance(r, KAnonymity)})
    if others:
        return skipped(f"the columns' classes are k-anonymous only, not checked for {', '.join(others)}")
    if objective not in MASTER_OBJECTIVES:
        return skipped(f"the LP's vector costs are not every record's cost for {objective}")
    # Checked after what makes the master not apply, as nothing is solved then.
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    if pool.enc is not None and (pool.instance is not instance or pool.objective != objective
                                 or pool.k != k):
        # The pool's types, vectors and costs are another table's codes or another
        # objective's costs: its optimum would be the wrong one.
        raise InvalidParameterError(
            f"The 'pool' of restricted_master was filled by lp_bound for objective "
            f"{pool.objective!r} and k={pool.k}"
            + ("" if pool.instance is instance else " on another instance")
            + f"; restricted_master was given objective {objective!r} and k={k}. "
            "Fill a new ColumnPool with lp_bound on this instance, objective and k."
        )
    enc = pool.enc
    if enc is None or not pool.columns:
        return skipped("column generation generated no column")
    w = enc.weight.astype(np.int64)
    # Each vector with the types its columns hold (the release's classes among them).
    support: dict[int, set[int]] = {}
    for v, types, _ in pool.columns:
        support.setdefault(int(v), set()).update(types.tolist())
    start: dict[tuple[int, int], int] = {}
    if release is not None:
        classes = _release_columns(enc, pool.vectors, release, k)
        held = sum(sum(amounts.values()) for _, amounts in classes)
        info["start_records_held"] = int(held)
        for v, amounts in classes:
            support.setdefault(v, set()).update(amounts)
            for t, q in amounts.items():
                start[(t, v)] = start.get((t, v), 0) + int(q)
    pairs = sum(len(types) for types in support.values())
    info.update(vectors=len(support), pairs=pairs)
    try:
        check_memory(model_memory(pairs, num_workers),
                     f"The restricted master over {len(support):,} vectors ({pairs:,} assignment "
                     "variables)", "give column generation less time", memory_limit,
                     caller="restricted_master")
    except MemoryLimitError as exc:
        return skipped(str(exc))

    model = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    z: dict[int, cp_model.IntVar] = {}
    of_type: list[list] = [[] for _ in range(enc.n_types)]
    built = 0
    for v, types in sorted(support.items()):
        used = z[v] = model.new_bool_var(f"z_{v}")
        held_v = []
        for t in sorted(types):
            built += 1
            if built % CHECK_EVERY == 0 and solve_end is not None and time.perf_counter() >= solve_end:
                return skipped(f"the time ran out building the model ({built:,} of {pairs:,} variables)")
            var = model.new_int_var(0, int(w[t]), f"x_{t}_{v}")
            model.add(var <= int(w[t]) * used)  # records go only to a vector in use
            x[(t, v)] = var
            of_type[t].append(var)
            held_v.append(var)
        model.add(cp_model.LinearExpr.sum(held_v) >= k * used)  # a class holds at least k records
    for t in range(enc.n_types):
        if not of_type[t]:
            return skipped("a record type is in no column")
        model.add(cp_model.LinearExpr.sum(of_type[t]) == int(w[t]))  # each record released once
    keys = list(x)
    model.minimize(cp_model.LinearExpr.weighted_sum([x[key] for key in keys],
                                                   [int(pool.cost[v]) for _, v in keys]))
    hint = None
    if start:
        # The whole start, so that CP-SAT has it as its first solution.
        hint = {x[key]: start.get(key, 0) for key in keys}
        in_use = {v for _, v in start}
        hint.update({z[v]: int(v in in_use) for v in z})
    left = None
    if solve_end is not None:
        left = solve_end - time.perf_counter()
        if left <= 0:
            return skipped("the time ran out building the model's objective and hint")
    solver, outcome = _cpsat.solve(model, time_limit=left, num_workers=num_workers, seed=seed,
                                   hint=hint)
    info.update(status=outcome.solver_status, solve_s=outcome.stats["wall_time_s"])
    if not outcome.has_solution:
        return done(None)
    # Each type's rows dealt to the vectors in use, in row order.
    vectors = list(pool.vectors)
    assignment = np.full(instance.n_rows, -1, dtype=np.int64)
    filled = np.zeros(enc.n_types, dtype=np.int64)
    for (t, v), var in x.items():
        count = int(solver.value(var))
        if count:
            assignment[enc.rows[t][filled[t] : filled[t] + count]] = v
            filled[t] += count
    table = _table(enc, vectors, assignment)
    found = Release(table=table, groups=assignment, status=Status.FEASIBLE)
    value = objective_value(instance, found, objective)
    found = _verified(instance, Release(
        table=table, groups=assignment, status=Status.FEASIBLE, objective=value,
        provenance={"method": "restricted master"}), requirements)
    info["objective"] = float(value)
    return done(found)
