"""The full-domain model: the lattice optimum on Adult, suppression, non-monotone
requirements, explained infeasibility and bad input."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

import fairanon as fa
from fairanon.exceptions import InvalidParameterError, SchemaError
from fairanon.models.metrics import discernibility, loss_metric
from fairanon.release import Status
from fairanon.solver.fulldomain import fulldomain, ladders, lattice_size


def _passes(instance, release, requirements):
    report = fa.verify(instance, release, requirements)
    assert report.passed, str(report)
    assert release.provenance["verification"]["passed"]
    return report


@pytest.fixture(scope="module")
def adult():
    return fa.load("adult")


def test_adult_optimum_k5(adult):
    reqs = [fa.KAnonymity(5)]
    rel = fulldomain(adult, reqs, objective="lm", seed=0)
    assert rel.status == Status.OPTIMAL and rel.bound == rel.objective
    assert rel.provenance["levels"] == {
        "age": 4,
        "workclass": 2,
        "education": 1,
        "marital-status": 2,
        "occupation": 2,
        "sex": 0,
        "native-country": 3,
    }
    assert rel.objective == loss_metric(adult, rel, exact=True)["LM_sum"] * adult.n_rows
    assert rel.provenance["search"]["nodes_evaluated"] < lattice_size(adult) / 100
    _passes(adult, rel, reqs)


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 5, 10])
def test_adult_optimum_matches_the_whole_lattice(adult, k):
    """Every one of the 4,320 nodes checked: the search's node is the cheapest k-anonymous one."""
    from fairanon.solver.fulldomain import _Oracle
    from fairanon.solver.local_recoding import type_table
    from fairanon.solver.local_recoding.labels import _active

    reqs = [fa.KAnonymity(k)]
    lads = ladders(adult)
    actives = [_active(adult, lad.name) for lad in lads]
    enc = type_table(
        adult, reqs, "fulldomain", [], [a[1] for a in actives], [a[0] for a in actives]
    )
    oracle = _Oracle(enc, lads, reqs, "lm", 0)
    costs = [
        oracle.separable(node)
        for node in itertools.product(*[range(lad.height + 1) for lad in lads])
        if oracle.monotone_failure(node) is None
    ]
    rel = fulldomain(adult, reqs, objective="lm", seed=0)
    assert rel.objective == min(costs)


def test_ruggieri_loan_levels():
    inst = fa.load("ruggieri_loan")
    assert [(lad.name, lad.height) for lad in ladders(inst)] == [("purpose", 1), ("emp", 1)]
    rel = fulldomain(inst, [fa.TCloseness(Fraction(1, 4))], objective="generalized", seed=0)
    assert rel.status == Status.OPTIMAL
    _passes(inst, rel, [fa.TCloseness(Fraction(1, 4))])
    # generalizing a whole column costs 17 cells: no better than dMondrian's 17
    assert rel.objective == 17


def test_record_suppression_limit():
    inst = fa.load("german")
    reqs = [fa.KAnonymity(10)]
    plain = fulldomain(inst, reqs, objective="lm", seed=0)
    relaxed = fulldomain(inst, reqs, objective="lm", max_suppressed=30, seed=0)
    assert relaxed.status == plain.status == Status.OPTIMAL
    assert relaxed.objective <= plain.objective
    assert 0 < len(relaxed.suppressed) <= 30
    generalizable = list(inst.schema.generalizable)
    assert (relaxed.table.loc[list(relaxed.suppressed), generalizable] == "*").all().all()
    _passes(inst, relaxed, reqs)


def test_diversity_and_alpha_on_the_lattice():
    inst = fa.load("german")
    reqs = [
        fa.KAnonymity(5),
        fa.AlphaProtection("RD", Fraction(1, 5)),
        fa.DiversityConstraint({"housing": "own"}, 0, 700),
    ]  # 713 own: hide them
    rel = fulldomain(inst, reqs, objective="discernibility", seed=0)
    assert rel.status == Status.OPTIMAL
    assert rel.provenance["levels"]["housing"] == 1
    assert rel.objective == discernibility(inst, rel)
    _passes(inst, rel, reqs)


def test_infeasible_names_the_conflict():
    inst = fa.load("ruggieri_loan")
    rel = fulldomain(inst, [fa.KAnonymity(9)], seed=0)
    assert rel.status == Status.INFEASIBLE and rel.provenance["conflict"] == ["9-anonymity"]
    sigma = fa.DiversityConstraint({"purpose": "car"}, 5, 5)
    rel = fulldomain(inst, [fa.LDiversity(2), fa.KAnonymity(3), sigma], seed=0)
    assert rel.status == Status.INFEASIBLE
    assert rel.provenance["conflict"] == ["3-anonymity", str(sigma)]  # 2-diversity is innocent
    assert fulldomain(inst, [fa.LDiversity(2), sigma], seed=0).status == Status.OPTIMAL
    assert str(sigma) in rel.reason
    with pytest.raises(fa.InfeasibleError):
        rel.released_table()


def test_same_seed_same_release():
    inst = fa.load("german")
    reqs = [fa.KAnonymity(5), fa.AlphaProtection("RD", Fraction(1, 5))]
    first, second = (fulldomain(inst, reqs, seed=3) for _ in range(2))
    assert first.provenance["levels"] == second.provenance["levels"]
    assert first.table.equals(second.table)


def test_bad_input():
    with pytest.raises(SchemaError, match="intervals"):
        fulldomain(fa.load("diva_table1"), [fa.KAnonymity(2)])
    inst = fa.load("ruggieri_loan")
    with pytest.raises(InvalidParameterError, match="'objective' parameter of fulldomain"):
        fulldomain(inst, [fa.KAnonymity(2)], objective="gcp")
    with pytest.raises(InvalidParameterError, match="'max_suppressed' parameter of fulldomain"):
        fulldomain(inst, [fa.KAnonymity(2)], max_suppressed=-1)
    with pytest.raises(InvalidParameterError, match="'time_limit' parameter of fulldomain"):
        fulldomain(inst, [fa.KAnonymity(2)], time_limit=0)


def test_registered_in_methods():
    inst = fa.load("german")
    reqs = [fa.KAnonymity(5), fa.AlphaProtection("RD", Fraction(1, 5))]
    rel = fa.anonymize(inst, reqs, method="fulldomain", seed=0)
    assert rel.method == "fulldomain" and rel.status == Status.OPTIMAL
    auto = fa.anonymize(inst, reqs, seed=0)
    assert auto.provenance["auto_choice"] == "fulldomain"
    assert np.array_equal(auto.groups, rel.groups)
