"""The shared CP-SAT helpers: seeds, parameters, the status mapping, explanations."""

import numpy as np
import pytest
from ortools.sat.python import cp_model

from fairanon.exceptions import InvalidParameterError, SolverError
from fairanon.release import Status
from fairanon.solver import _cpsat


def test_random_seed_is_reproducible():
    """None -> 0, an int -> itself modulo 2**31, a Generator -> one draw from it in
    [0, 2**31 - 1), computed here from a twin generator; the draw advances the
    generator, and the seed reaches CP-SAT."""
    assert _cpsat.random_seed(None) == 0
    assert _cpsat.random_seed(7) == 7
    assert _cpsat.random_seed(2**40 + 3) == (2**40 + 3) % 2**31 == 3
    rng, twin = np.random.default_rng(1), np.random.default_rng(1)
    first = _cpsat.random_seed(rng)
    assert first == int(twin.integers(0, 2**31 - 1))
    assert _cpsat.random_seed(rng) == int(twin.integers(0, 2**31 - 1)) != first
    model, _ = _knapsack()
    _, outcome = _cpsat.solve(model, seed=_cpsat.random_seed(2**31 + 11))
    assert outcome.stats["random_seed"] == 11
    with pytest.raises(InvalidParameterError, match="'seed' parameter"):
        _cpsat.random_seed("one")


def test_parameter_checks():
    assert _cpsat.check_time_limit(None, "f") is None
    assert _cpsat.check_num_workers(None, "f") >= _cpsat.DEFAULT_WORKERS
    for bad in (0, -1, True, "5"):
        with pytest.raises(InvalidParameterError, match="'time_limit' parameter of f"):
            _cpsat.check_time_limit(bad, "f")
        with pytest.raises(InvalidParameterError, match="'num_workers' parameter of f"):
            _cpsat.check_num_workers(bad, "f")


def _knapsack():
    model = cp_model.CpModel()
    x = [model.new_int_var(0, 3, f"x{i}") for i in range(3)]
    model.add(sum(x) >= 4)
    model.minimize(2 * x[0] + 3 * x[1] + 5 * x[2])
    return model, x


def test_optimal_with_hint_and_log():
    model, x = _knapsack()
    _, outcome = _cpsat.solve(model, hint={x[0]: 3, x[1]: 1}, log=True, seed=3)
    assert outcome.status == Status.OPTIMAL and outcome.objective == outcome.bound == 9
    assert outcome.gap == 0 and outcome.stats["random_seed"] == 3
    assert "CP-SAT" in outcome.log


def test_infeasible_and_explained():
    def build():
        model = cp_model.CpModel()
        x = model.new_int_var(0, 10, "x")
        lits = [model.new_bool_var(f"g{i}") for i in range(3)]
        model.add(x >= 8).only_enforce_if(lits[0])
        model.add(x <= 9).only_enforce_if(lits[1])  # harmless
        model.add(x <= 3).only_enforce_if(lits[2])
        return model, lits

    model, lits = build()
    for lit in lits:
        model.add(lit == 1)
    assert _cpsat.solve(model)[1].status == Status.INFEASIBLE
    core, minimal = _cpsat.explain(build, 3)
    assert core == [0, 2] and minimal


def _chain(n):
    """x in [0, 100]; group i says x >= 10 i, and the last group x <= 5: each of groups
    1..n-2 conflicts with the last one, so the minimal conflicts are {j, n-1}; deletion
    from the whole set (groups dropped in order) keeps j = n-2."""

    def build():
        model = cp_model.CpModel()
        x = model.new_int_var(0, 100, "x")
        lits = [model.new_bool_var(f"g{i}") for i in range(n)]
        for i in range(n - 1):
            model.add(x >= 10 * i).only_enforce_if(lits[i])
        model.add(x <= 5).only_enforce_if(lits[n - 1])
        return model, lits

    return build


@pytest.mark.parametrize("n", [4, _cpsat.DIRECT_GROUPS + 4])
def test_explanation_checks_with_fixed_literals(monkeypatch, n):
    """Few groups: every check fixes the literals (no assumption solve); many: one
    assumption solve gives the core, which the fixed checks then shrink."""
    calls = []
    solve = _cpsat.solve

    def recording(model, **kwargs):
        calls.append(bool(kwargs.get("assumptions")))
        return solve(model, **kwargs)

    monkeypatch.setattr(_cpsat, "solve", recording)
    core, minimal = _cpsat.explain(_chain(n), n)
    assert len(core) == 2 and 1 <= core[0] <= n - 2 and core[1] == n - 1 and minimal
    if n <= _cpsat.DIRECT_GROUPS:
        assert core == [n - 2, n - 1]
    assert calls[0] == (n > _cpsat.DIRECT_GROUPS) and not any(calls[1:])


def _structure_conflicts(n):
    """Two Booleans with x + y == 3: no solution whatever the groups (each says
    x <= 1, which always holds)."""

    def build():
        model = cp_model.CpModel()
        x, y = model.new_bool_var("x"), model.new_bool_var("y")
        model.add(x + y == 3)
        lits = [model.new_bool_var(f"g{i}") for i in range(n)]
        for lit in lits:
            model.add(x <= 1).only_enforce_if(lit)
        return model, lits

    return build


@pytest.mark.parametrize("n", [1, 3, _cpsat.DIRECT_GROUPS + 2])
def test_a_conflict_of_the_structure_alone_names_no_group(n):
    core, minimal = _cpsat.explain(_structure_conflicts(n), n)
    assert core == [] and minimal


def test_a_conflict_of_one_group_names_it():
    """x in [0, 10]: group 1 (x >= 11) conflicts alone; group 0 (x <= 9) is harmless,
    and without any group x = 0 is a solution."""

    def build():
        model = cp_model.CpModel()
        x = model.new_int_var(0, 10, "x")
        lits = [model.new_bool_var(f"g{i}") for i in range(2)]
        model.add(x <= 9).only_enforce_if(lits[0])
        model.add(x >= 11).only_enforce_if(lits[1])
        return model, lits

    assert _cpsat.explain(build, 2) == ([1], True)


def test_explanation_shares_the_time_left_among_the_checks(monkeypatch):
    """Each deletion check gets the time left divided by the checks still to run, so a
    hard one leaves time to the others."""
    limits = []
    solve = _cpsat.solve

    def recording(model, **kwargs):
        limits.append(kwargs["time_limit"])
        return solve(model, **kwargs)

    monkeypatch.setattr(_cpsat, "solve", recording)
    monkeypatch.setattr(_cpsat.time, "perf_counter", lambda: 0.0)  # the clock stands still
    core, _ = _cpsat.explain(_chain(4), 4, deadline=60.0)
    assert core == [2, 3]
    # the whole set, then without each of groups 0, 1, 2, 3 in turn
    assert limits == [60.0, 60.0 / 4, 60.0 / 3, 60.0 / 2, 60.0 / 1]


def test_model_invalid_raises_solver_error():
    model = cp_model.CpModel()
    model.new_int_var(0, 3, "x")
    model.proto.variables[0].domain[0] = 5  # the domain [5, 3] is empty: invalid
    with pytest.raises(SolverError, match="invalid"):
        _cpsat.solve(model)


def test_unknown_when_time_runs_out():
    model = cp_model.CpModel()
    n = 60
    xs = [model.new_int_var(0, 10**6, f"x{i}") for i in range(n)]
    model.add(cp_model.LinearExpr.weighted_sum(xs, [97 + 2 * i for i in range(n)]) == 10**7 + 1)
    model.add_all_different(xs)
    model.minimize(cp_model.LinearExpr.sum(xs))
    _, outcome = _cpsat.solve(model, deterministic_limit=1e-6)
    assert outcome.status in (Status.UNKNOWN, Status.FEASIBLE)
    assert not outcome.has_solution or outcome.bound <= outcome.objective
