"""The restricted master (price and branch over column generation's columns): its
release verifies, is never below the brute-force optimum and reaches it when every
vector of the closure is a column; a hand-computed example; where it does not apply."""

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from _exact_oracle import partition_optimum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bruteforce import tables

import fairanon as fa
from fairanon.models.objectives import objective_value
from fairanon.release import Release, Status, generalize_partition
from fairanon.solver.bounds import ColumnPool, _closure_model, lp_bound
from fairanon.exceptions import InvalidParameterError
from fairanon.solver import master
from fairanon.solver.master import restricted_master

PROPERTY = settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])


def _verified(inst, release, reqs, objective):
    assert release is not None and release.status == Status.FEASIBLE
    report = fa.verify(inst, release, reqs, metrics=False)
    assert report.passed, report
    # The release carries its objective as the released table reads.
    assert release.objective == objective_value(inst, release, objective)
    return release.objective


def _every_vector(inst, k, objective) -> ColumnPool:
    """A pool holding every vector of the closure, with every type it covers whole."""
    model = _closure_model(inst, k, objective, 300_000, None)
    pr = model.pricer
    columns = []
    for v in range(pr.n_vec):
        types = pr.types[pr.starts[v] : pr.starts[v + 1]]
        columns.append((v, types, pr.w[types]))
    return ColumnPool(model.enc, model.vectors, pr.int_cost, model.scale, columns,
                      objective=objective, k=k, instance=inst)


@pytest.mark.slow
@PROPERTY
@given(data=st.data(), inst=tables(max_rows=8))
def test_restricted_master_against_brute_force(data, inst):
    k = data.draw(st.integers(2, 3))
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    reqs = [fa.KAnonymity(k)]
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    if optimum is None:
        return
    start = fa.anonymize(inst, reqs, method="mondrian")
    pool = ColumnPool()
    lp = lp_bound(inst, reqs, objective, pool=pool)
    if lp is None:
        return
    found, info = restricted_master(inst, reqs, objective, pool, start)
    # With the start's classes among the columns, a release no worse than the start.
    value = _verified(inst, found, reqs, objective)
    assert optimum <= value <= objective_value(inst, start, objective), (optimum, value, info)
    every, info = restricted_master(inst, reqs, objective, _every_vector(inst, k, objective))
    assert info["status"] == "OPTIMAL"
    assert _verified(inst, every, reqs, objective) == optimum, (every.objective, optimum)


def _ages():
    table = pd.DataFrame({"age": [20, 21, 30, 31]})
    inst = fa.Instance(table, fa.Schema([fa.Attribute("age", kind="numeric")]))
    return inst


def _pool_of(inst, k, labels: list[str]) -> ColumnPool:
    """The closure's vectors of the given labels, each a column of the types it covers."""
    pool = _every_vector(inst, k, "ncp")
    texts = pool.enc.spaces[0].texts
    pool.columns = [c for c in pool.columns if texts[pool.vectors[c[0]][1]] in labels]
    assert len(pool.columns) == len(labels)
    return pool


def test_hand_computed_example():
    """Ages 20, 21, 30, 31, k = 2. The start releases one class [20-31] (NCP 1 per
    record: 4). The columns [20-21] and [30-31] cost 1/11 per record each (the range
    over the domain's width, 31 - 20), so the master releases them: 4/11."""
    inst = _ages()
    reqs = [fa.KAnonymity(2)]
    groups = np.zeros(4, dtype=np.int64)
    start = Release(generalize_partition(inst, groups), groups, status=Status.FEASIBLE)
    assert objective_value(inst, start, "ncp") == 4
    pool = _pool_of(inst, 2, ["[20-21]", "[30-31]"])
    found, info = restricted_master(inst, reqs, "ncp", pool, start)
    assert info["status"] == "OPTIMAL"
    assert _verified(inst, found, reqs, "ncp") == Fraction(4, 11)
    assert sorted(found.table["age"].astype(str)) == ["[20-21]", "[20-21]", "[30-31]", "[30-31]"]
    # Without the start's class, [20-21] alone cannot release 30 and 31: no model.
    alone = _pool_of(inst, 2, ["[20-21]"])
    none, info = restricted_master(inst, reqs, "ncp", alone)
    assert none is None and info["skipped"] == "a record type is in no column"


def test_an_infinite_time_limit_is_no_limit():
    """time_limit=inf left the solve inf - 5 % of inf = nan seconds, which CP-SAT refused
    as an invalid model; it is read as no limit (the hand-computed 4/11 above)."""
    inst = _ages()
    reqs = [fa.KAnonymity(2)]
    groups = np.zeros(4, dtype=np.int64)
    start = Release(generalize_partition(inst, groups), groups, status=Status.FEASIBLE)
    found, info = restricted_master(inst, reqs, "ncp", _pool_of(inst, 2, ["[20-21]", "[30-31]"]), start,
                                    time_limit=float("inf"))
    assert _verified(inst, found, reqs, "ncp") == Fraction(4, 11) and "over_s" not in info


def test_restricted_master_applies_to_k_anonymity_and_per_record_costs_only():
    inst = _ages()
    pool = _pool_of(inst, 2, ["[20-21]", "[30-31]"])
    none, info = restricted_master(inst, [fa.KAnonymity(2)], "generalized", pool)
    assert none is None and "generalized" in info["skipped"]
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("d", role="sensitive")])
    sens = fa.Instance(pd.DataFrame({"age": [20, 21, 30, 31], "d": list("abab")}), schema)
    reqs = [fa.KAnonymity(2), fa.LDiversity(2)]
    none, info = restricted_master(sens, reqs, "ncp", pool)
    assert none is None and "LDiversity" in info["skipped"]


def _hand_clock(monkeypatch) -> list[float]:
    """The master's clock, standing still at 0 until the test moves it."""
    now = [0.0]
    monkeypatch.setattr(master, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    return now


def _start(inst):
    groups = np.zeros(inst.n_rows, dtype=np.int64)
    return Release(generalize_partition(inst, groups), groups, status=Status.FEASIBLE)


def test_time_running_out_while_the_objective_and_hint_are_built(monkeypatch):
    """The clock passes the deadline while the objective is set: no solve, and the
    1 s past the 2-s limit (the clock moved by hand to 3) is recorded."""
    now = _hand_clock(monkeypatch)
    inst = _ages()
    pool = _pool_of(inst, 2, ["[20-21]", "[30-31]"])
    minimize = master.cp_model.CpModel.minimize

    def slow_minimize(self, obj):
        now[0] = 3.0
        return minimize(self, obj)

    monkeypatch.setattr(master.cp_model.CpModel, "minimize", slow_minimize)
    found, info = restricted_master(inst, [fa.KAnonymity(2)], "ncp", pool, _start(inst),
                                    time_limit=2.0)
    assert found is None and "time ran out" in info["skipped"] and "status" not in info
    assert info["over_s"] == 1.0


def test_time_kept_for_the_verification_and_its_overrun_recorded(monkeypatch):
    """CP-SAT gets the limit less FINISH_SHARE of it (the clock stands at 0 until the
    solve); a verification moving the clock 4 s past the 10-s limit is recorded."""
    now = _hand_clock(monkeypatch)
    inst = _ages()
    pool = _pool_of(inst, 2, ["[20-21]", "[30-31]"])
    given = {}
    solve = master._cpsat.solve

    def solve_spy(model, **kwargs):
        given["time_limit"] = kwargs["time_limit"]
        return solve(model, **kwargs)

    verified = master._verified

    def slow_verified(*args):
        now[0] = 14.0
        return verified(*args)

    monkeypatch.setattr(master._cpsat, "solve", solve_spy)
    monkeypatch.setattr(master, "_verified", slow_verified)
    reqs = [fa.KAnonymity(2)]
    found, info = restricted_master(inst, reqs, "ncp", pool, _start(inst), time_limit=10.0)
    assert given["time_limit"] == 10.0 - 10.0 * master.FINISH_SHARE
    assert _verified(inst, found, reqs, "ncp") == Fraction(4, 11)  # the hand computation above
    assert info["over_s"] == 4.0


def test_restricted_master_keeps_within_the_limit_without_recording_an_overrun(monkeypatch):
    _hand_clock(monkeypatch)
    inst = _ages()
    reqs = [fa.KAnonymity(2)]
    found, info = restricted_master(inst, reqs, "ncp", _pool_of(inst, 2, ["[20-21]", "[30-31]"]),
                                    _start(inst), time_limit=10.0)
    assert _verified(inst, found, reqs, "ncp") == Fraction(4, 11)
    assert "over_s" not in info


@pytest.mark.parametrize("limit", [0, -5, float("nan"), "60", True])
def test_bad_time_limit_is_refused(limit):
    inst = _ages()
    pool = _pool_of(inst, 2, ["[20-21]", "[30-31]"])
    with pytest.raises(InvalidParameterError, match="time_limit"):
        restricted_master(inst, [fa.KAnonymity(2)], "ncp", pool, time_limit=limit)


def test_pool_filled_by_lp_bound_records_what_it_was_built_for():
    inst = _ages()
    reqs = [fa.KAnonymity(2)]
    pool = ColumnPool()
    assert lp_bound(inst, reqs, "lm", pool=pool) is not None
    assert (pool.objective, pool.k) == ("lm", 2) and pool.instance is inst
    # Its own instance, objective and k: a release. The optimum by hand: [20-21] and
    # [30-31], LM 1/11 per record (the range over the domain's width 11), 4 records.
    found, _ = restricted_master(inst, reqs, "lm", pool)
    assert _verified(inst, found, reqs, "lm") == Fraction(4, 11)


def test_pool_used_for_another_objective_k_or_instance_is_refused():
    inst = _ages()
    reqs = [fa.KAnonymity(2)]
    pool = ColumnPool()
    lp_bound(inst, reqs, "lm", pool=pool)
    with pytest.raises(InvalidParameterError, match="objective 'lm' and k=2; .* objective 'ncp'"):
        restricted_master(inst, reqs, "ncp", pool)
    with pytest.raises(InvalidParameterError, match="k=3"):
        restricted_master(inst, [fa.KAnonymity(3)], "lm", pool)
    # An equal table, another instance: its codes are not checked to match.
    other = _ages()
    with pytest.raises(InvalidParameterError, match="another instance"):
        restricted_master(other, reqs, "lm", pool)
