"""Risk as requirements: average risk, sample uniques and population uniques, checked by
the verifier in exact arithmetic and enforced by fulldomain and the Mondrian family."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.instances.synthetic import population
from fairanon.models.requirements import (
    AverageRisk,
    PopulationUniqueness,
    SampleUniqueness,
    requirement_from_spec,
)
from fairanon.models.risk.requirements import risk_requirement
from risk_tables import HAND, SCHEMA


@pytest.fixture
def hand():
    return fa.Instance(HAND, SCHEMA, name="hand")


def identity(instance):
    return fa.Release(table=instance.table, groups=np.zeros(instance.n_rows))


def test_requirements_build_and_round_trip():
    reqs = [AverageRisk("1/10"), SampleUniqueness(0.01), PopulationUniqueness("1/100", sampling_fraction=0.1),
            PopulationUniqueness(0, model="pitman", population_size=1000)]
    for req in reqs:
        assert requirement_from_spec(req.to_spec()) == req
        assert not req.union_monotone
    assert reqs[0].r == Fraction(1, 10) and reqs[1].u == Fraction(1, 100)
    assert str(reqs[3]) == "population uniques <= 0 (pitman, population 1000)"
    with pytest.raises(InvalidParameterError):
        AverageRisk(0)
    with pytest.raises(InvalidParameterError):
        SampleUniqueness("3/2")
    with pytest.raises(InvalidParameterError, match="exactly one"):
        PopulationUniqueness(0.1)
    with pytest.raises(InvalidParameterError, match="exactly one"):
        PopulationUniqueness(0.1, sampling_fraction=0.1, population_size=10)
    with pytest.raises(InvalidParameterError, match="model"):
        PopulationUniqueness(0.1, model="nope", sampling_fraction=0.1)


def test_verifier_decides_at_the_threshold_exactly(hand):
    # The hand table: 4 classes (3, 1, 1, 5) over 10 records; 2 sample uniques.
    rel = identity(hand)
    report = fa.verify(hand, rel, [AverageRisk("2/5"), SampleUniqueness("1/5")], metrics=False)
    assert report.passed
    assert report["average risk <= 0.4"].achieved == Fraction(2, 5)
    assert report["sample uniques <= 0.2 of the records"].achieved == Fraction(1, 5)
    tight = fa.verify(hand, rel, [AverageRisk("399/1000"), SampleUniqueness("199/1000")], metrics=False)
    assert not tight.passed and len(tight.failures) == 2
    average, unique = tight.failures
    assert average.witness["size"] == 1  # the smallest class
    assert unique.witness["size"] == 1 and unique.witness["records"] in ([103], [104])
    assert "4 classes over 10 records" in average.detail


def test_population_uniqueness_in_the_verifier(hand):
    rel = identity(hand)
    # Zayatz by hand (sizes 1, 1, 3, 5 at π = 1/2): checked against the estimator itself.
    req = PopulationUniqueness("1/2", model="zayatz", population_size=20)
    check = fa.verify(hand, rel, [req], metrics=False)[str(req)]
    result = risk_requirement(req, np.array([3, 1, 1, 5]))
    assert check.achieved == result.achieved and check.passed == (result.achieved <= Fraction(1, 2))
    # A model that cannot be fitted certifies nothing: the requirement fails, saying why.
    one = pd.DataFrame({"age": ["a", "b", "c"], "zip": ["x", "y", "z"], "disease": ["flu"] * 3})
    inst = fa.Instance(one, SCHEMA)
    req = PopulationUniqueness(1, model="pitman", population_size=30)
    check = fa.verify(inst, identity(inst), [req], metrics=False)[str(req)]
    assert not check.passed and check.achieved is None and "cannot be fitted" in check.detail
    # No sample unique: Dankar's rule estimates none, exactly 0.
    two = pd.DataFrame({"age": ["a", "a", "b", "b"], "zip": ["x"] * 4, "disease": ["flu"] * 4})
    inst = fa.Instance(two, SCHEMA)
    req = PopulationUniqueness(0, sampling_fraction="1/10")
    check = fa.verify(inst, identity(inst), [req], metrics=False)[str(req)]
    assert check.passed and check.achieved == 0


@pytest.fixture(scope="module")
def table():
    # Protected groups large enough for any k the searches try.
    return population(600, n_qi=3, seed=4, protected_share=0.5)


CASES = [
    [AverageRisk("1/8")],
    [fa.KAnonymity(2), AverageRisk("1/6")],
    [SampleUniqueness("1/100")],
    [SampleUniqueness(0), fa.LDiversity(2)],
    [PopulationUniqueness("1/1000", sampling_fraction="1/10")],
    [PopulationUniqueness("1/100", model="zayatz", population_size=3000)],
]


@pytest.mark.parametrize("method", ["mondrian", "mondrian-relaxed", "mondrian-loss", "fulldomain"])
@pytest.mark.parametrize("reqs", CASES, ids=lambda reqs: "+".join(str(r) for r in reqs))
def test_releases_under_risk_requirements_verify(table, method, reqs):
    rel = fa.anonymize(table, reqs, method=method, seed=0)
    assert rel.status in (fa.Status.FEASIBLE, fa.Status.OPTIMAL), rel.reason
    report = fa.verify(table, rel, reqs, metrics=False)
    assert report.passed, str(report)
    if method != "fulldomain":
        k = rel.provenance["risk_k"]
        assert rel.provenance["risk_tries"][str(k)] is True
        assert rel.provenance["requirements"] == [str(r) for r in reqs]


def test_the_search_reports_what_no_k_meets(table):
    # At most 3 classes over 600 records cannot hold 5 protected values (released unchanged).
    rel = fa.anonymize(table, [AverageRisk("1/200")], method="mondrian", seed=0)
    assert rel.status == fa.Status.INFEASIBLE
    assert "average risk <= 0.005" in rel.reason
    report = fa.verify(table, rel, [AverageRisk("1/200")], metrics=False)
    assert not report.passed and report.failures[0].witness is not None


def test_methods_that_cannot_enforce_them_say_so(table):
    for method in ("sabre", "kmember", "lattice-local"):
        with pytest.raises(IncompatibleRequirementError, match="average risk"):
            fa.anonymize(table, [fa.KAnonymity(2), AverageRisk("1/4")], method=method, seed=0)
    # cpsat and lns enforce average risk and sample uniques and refuse the non-linear
    # population model before any work, naming who enforces it.
    population_req = PopulationUniqueness("1/10", model="zayatz", sampling_fraction="1/2")
    for method in ("lns", "cpsat"):
        with pytest.raises(IncompatibleRequirementError,
                           match=f"{method} cannot enforce .*mondrian, mondrian-relaxed, mondrian-loss, fulldomain"):
            fa.anonymize(table, [fa.KAnonymity(2), population_req], method=method, seed=0, time_limit=5)
        with pytest.raises(IncompatibleRequirementError, match="non-linear"):
            fa.anonymize(table, [fa.KAnonymity(2), population_req], method=method, seed=0, time_limit=5)


def test_auto_routes_risk_requirements_to_the_mondrian_family():
    # diva_table1 has no full-domain lattice (numeric age without intervals) and its exact
    # model is too large for a 5 s budget: the portfolio's Mondrian family meets them.
    inst = fa.load("diva_table1")
    reqs = [AverageRisk("1/3"), SampleUniqueness(0)]
    rel = fa.anonymize(inst, reqs, seed=0, time_limit=5)
    assert rel.provenance["auto_choice"] in ("mondrian", "mondrian-loss")
    assert "risk requirements" in rel.provenance["auto_reason"]
    report = fa.verify(inst, rel, reqs)
    assert report.passed, str(report)
    # 10 records: average risk <= 1/3 means at most 3 classes, and none of size 1.
    sizes = rel.table.groupby(list(inst.schema.qi), observed=True).size()
    assert len(sizes) <= 3 and (sizes > 1).all()
