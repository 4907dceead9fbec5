"""The restricted master (price and branch over column generation's columns): its
release verifies, is never below the brute-force optimum and reaches it when every
vector of the closure is a column; a hand-computed example; where it does not apply."""

from fractions import Fraction

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
    return ColumnPool(model.enc, model.vectors, pr.int_cost, model.scale, columns)


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
