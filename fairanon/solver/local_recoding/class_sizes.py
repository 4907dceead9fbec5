"""The privacy objectives in the exact model, and lexicographic solves.

Privacy objectives are functions of the class sizes (:mod:`fairanon.models.objectives`,
docs/papers.md, DW-10). Each candidate vector v gets its size ``size[v] = y[v]`` (the
records released as v, outside ones included when a neighbourhood is re-solved):

``privacy_stretch`` (k')
    ``big[v] => size[v] >= k'`` and ``r[v] <= size[v]``, ``r[v] <= reach[v] big[v]``;
    minimize ``sum_v size[v] - r[v]``, the records in classes of fewer than k'. Exact
    integers.

``privacy_log``
    sum_v f(size[v]) with f(s) = s log s is irrational. The model maximizes the integer
    surrogate ``sum_v F[size[v]]``, F(s) = floor(C f(s)) (an element constraint per
    vector, C = :func:`log_scale`), and the result is then *certified*: with G(s) =
    ceil(C f(s)), any release Q truly better than the surrogate optimum P has
    sum G(Q) >= C sum f(Q) > C sum f(P) >= sum F(P), so sum G(Q) >= sum F(P) + 1. And
    by unique factorization prod_v size^size -- hence sum f -- is determined by the
    exponents e_p = sum_v size[v] nu_p(size[v]) of the primes p, which are linear in
    per-vector element constraints: two releases have equal sum f exactly when their
    exponent vectors are equal. So P is optimal when no release has
    ``sum G >= sum F(P) + 1`` and an exponent vector other than P's; a release found
    there is compared exactly (:class:`~fairanon.models.objectives.LogLoss`), becomes
    the incumbent if better, and its exponent vector is excluded, until the check is
    infeasible (proven optimal) or :data:`CERTIFY_ROUNDS` or the time run out (the
    release is then FEASIBLE, not claimed optimal). The rounding error is at most one
    unit per class, so the releases the check can find lie within (#classes) / C of
    the optimum: with C near 2^40 / (n log n) it almost always ends in one round.

A lexicographic objective (a privacy and a loss objective) is solved in two phases:
the first term is optimized, its exact value fixed (the exponent vector for
``privacy_log``; ``<=`` the optimum otherwise) and the second optimized from the first
solution. The release is OPTIMAL only when both phases are proven.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ortools.sat.python import cp_model

from ...models.objectives import LogLoss, Objective
from ...release import Status
from .. import _cpsat
from .model import LocalRecodingModel, _minimize_sum, _set_objective

__all__ = ["CERTIFY_ROUNDS", "Term", "log_scale", "set_size_objective", "solve_terms"]

#: Releases the privacy_log check may find before the surrogate optimum is left
#: unproven.
CERTIFY_ROUNDS = 20
#: CP-SAT parameters of the certification check.
CHECK_PARAMETERS = {"linearization_level": 2}
#: The surrogate sum of C s log s stays below this (CP-SAT's integers are 64-bit; the
#: margin keeps its linear relaxation well conditioned).
_SURROGATE_MAX = 2**40


@dataclass
class Term:
    """One term of the objective: the integer expression the model minimizes for it, and
    for privacy_log what its certification needs."""

    name: str
    expr: object
    log_floor: list | None = None  # privacy_log: F[size[v]] per vector
    sizes: list | None = None


def log_scale(max_total: int) -> int:
    """The scale C of the privacy_log surrogate for at most `max_total` records:
    C (n log n + n) stays below 2^40."""
    n = max(int(max_total), 2)
    return max(1, int(_SURROGATE_MAX // (n * math.log(n) + n)))


def _primes(limit: int) -> list[int]:
    return [p for p in range(2, limit + 1) if all(p % q for q in range(2, math.isqrt(p) + 1))]


def _nu(s: int, p: int) -> int:
    out = 0
    while s and s % p == 0:
        s //= p
        out += 1
    return out


def set_size_objective(pm: LocalRecodingModel, reach: list[int]) -> None:
    """The objective of `pm` when it is an :class:`~fairanon.models.objectives.Objective`:
    its terms (:attr:`LocalRecodingModel.terms`), the first one minimized."""
    model = pm.model
    objective: Objective = pm.objective
    sizes = []
    for v, expr in enumerate(pm.y):
        pm.check(v, "sizing the classes")
        size = model.new_int_var(0, reach[v], f"size[{v}]")
        model.add(size == expr)
        sizes.append(size)
    pm.sizes, pm.reach = sizes, list(reach)
    pm.terms = []
    for name in objective.terms:
        if name == "privacy_stretch":
            pm.terms.append(Term(name, _stretch(pm, reach, objective.stretch_k)))
        elif name == "privacy_log":
            scale = log_scale(sum(reach) if reach else 1)
            pm.log_scale = scale
            floor = []
            for v, size in enumerate(sizes):
                pm.check(v, "setting the privacy objective")
                table = [int(math.floor(scale * s * math.log(s))) if s > 1 else 0
                         for s in range(reach[v] + 1)]
                g = model.new_int_var(0, table[-1], f"logsize[{v}]")
                model.add_element(size, table, g)
                floor.append(g)
            pm.terms.append(Term(name, -cp_model.LinearExpr.sum(floor), floor, sizes))
        else:
            loss = LocalRecodingModel.__new__(LocalRecodingModel)
            loss.__dict__.update(pm.__dict__)
            loss.objective = name
            _set_objective(loss, reach)
            pm.pair_cost, pm.scale = loss.pair_cost, loss.scale
            pm.terms.append(Term(name, loss.objective_expr))
    model.clear_objective()
    pm.objective_expr = pm.terms[0].expr
    if pm.terms[0].name not in ("privacy_stretch", "privacy_log", "discernibility"):
        _minimize_sum(pm, pm.pair_cost)  # a cell loss first: a sum over every pair
    else:
        model.minimize(pm.objective_expr)


def _stretch(pm: LocalRecodingModel, reach: list[int], k: int):
    model = pm.model
    short = []
    for v, size in enumerate(pm.sizes):
        pm.check(v, "setting the privacy objective")
        if reach[v] < k:
            short.append(size)
            continue
        big = model.new_bool_var(f"big[{v}]")
        kept = model.new_int_var(0, reach[v], f"kept[{v}]")
        model.add(size >= k).only_enforce_if(big)
        model.add(kept <= size)
        model.add(kept <= reach[v] * big)
        short.append(size - kept)
    return cp_model.LinearExpr.sum(short)


def _log_value(pm: LocalRecodingModel, solver) -> LogLoss:
    return LogLoss([solver.value(s) for s in pm.sizes if solver.value(s)])


def _exponents(pm: LocalRecodingModel) -> dict[int, object]:
    """Per prime, the exponent e_p of prod_v size^size (built once, on first use)."""
    if getattr(pm, "exponents", None) is None:
        model = pm.model
        out = {}
        for p in _primes(max(pm.reach, default=1)):
            parts = []
            for v, size in enumerate(pm.sizes):
                hi = pm.reach[v]
                if hi < p:
                    continue
                table = [s * _nu(s, p) for s in range(hi + 1)]
                e = model.new_int_var(0, max(table), f"e[{p},{v}]")
                model.add_element(size, table, e)
                parts.append(e)
            out[p] = cp_model.LinearExpr.sum(parts)
        pm.exponents = out
    return pm.exponents


def _exponent_values(pm, solver) -> dict[int, int]:
    out = {}
    for p in _exponents(pm):
        total = 0
        for s in pm.sizes:
            total += solver.value(s) * _nu(solver.value(s), p)
        out[p] = total
    return out


def _fix_log(pm: LocalRecodingModel, model: cp_model.CpModel, solver) -> None:
    """Constrain `model` (pm's model or a clone) to releases of exactly the privacy_log
    value of `solver`'s solution."""
    for p, value in _exponent_values(pm, solver).items():
        model.add(_exponents(pm)[p] == value)


def _ceil_terms(pm: LocalRecodingModel):
    model = pm.model
    parts = []
    for v, size in enumerate(pm.sizes):
        hi = pm.reach[v]
        table = [math.ceil(pm.log_scale * s * math.log(s)) if s > 1 else 0 for s in range(hi + 1)]
        g = model.new_int_var(0, table[-1], f"logceil[{v}]")
        model.add_element(size, table, g)
        parts.append(g)
    return cp_model.LinearExpr.sum(parts)


def _certify_log(pm, term: Term, solver, solve):
    """Prove the surrogate optimum optimal for the true sum of s log s (module
    docstring), or improve it; returns the solver holding the best release found and
    whether it is proven."""
    floor_value = sum(solver.value(g) for g in term.log_floor)
    best, best_value = solver, _log_value(pm, solver)
    exponents = _exponents(pm)
    if not exponents:  # no class can hold two records: every release scores the same
        return best, True
    ceil_expr = _ceil_terms(pm)
    check = pm.model.clone()
    check.clear_objective()
    check.add(ceil_expr >= floor_value + 1)
    # With an objective and every constraint in the LP (linearization level 2, the
    # enforced bounds of the exclusions included), CP-SAT proves the check infeasible
    # in a fraction of a second where a plain feasibility search stalls (tens of
    # seconds on 10 records).
    check.maximize(ceil_expr)

    def exclude(found) -> None:
        differs = []
        for p, value in _exponent_values(pm, found).items():
            up, down = check.new_bool_var(f"above[{p}]"), check.new_bool_var(f"below[{p}]")
            check.add(exponents[p] >= value + 1).only_enforce_if(up)
            check.add(exponents[p] <= value - 1).only_enforce_if(down)
            differs += [up, down]
        check.add_bool_or(differs)

    exclude(best)
    for _ in range(CERTIFY_ROUNDS):
        found, out = solve(check, None, CHECK_PARAMETERS)
        if out.status == Status.INFEASIBLE:
            return best, True
        if not out.has_solution:
            return best, False
        value = _log_value(pm, found)
        if value < best_value:
            best, best_value = found, value
        exclude(found)
    return best, False


def solve_terms(pm: LocalRecodingModel, solve, hint=None) -> tuple[object, _cpsat.Outcome]:
    """Solve a model whose objective has terms (module docstring), from `hint`.
    `solve(model, hint, parameters)` runs CP-SAT on `model` (pm's model or a clone)
    with more `parameters` (or None) and returns (solver, outcome)."""
    solver, outcome = solve(pm.model, hint, None)
    if not outcome.has_solution:
        return solver, outcome
    proven = outcome.status == Status.OPTIMAL
    stats = dict(outcome.stats)
    for phase, term in enumerate(pm.terms):
        if phase:
            first = pm.terms[0]
            if first.name == "privacy_log":
                _fix_log(pm, pm.model, solver)
            else:
                pm.model.add(first.expr <= solver.value(first.expr))
            pm.model.clear_objective()
            pm.model.minimize(term.expr)
            hint = {var: solver.value(var) for var in (*pm.x, *pm.z)}
            second, out = solve(pm.model, hint, None)
            if out.has_solution:
                solver = second
                proven = proven and out.status == Status.OPTIMAL
            else:
                proven = False
            stats[f"phase{phase + 1}"] = out.stats
        if term.name == "privacy_log" and proven:
            solver, proven = _certify_log(pm, term, solver, solve)
            stats["certified"] = proven
    status = Status.OPTIMAL if proven else Status.FEASIBLE
    return solver, _cpsat.Outcome(status, str(status), stats=stats)

