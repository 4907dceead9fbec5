"""The risk requirements and the verifier's risk figures on the Dask engine, against the
single-machine verifier."""

import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import fairanon as fa  # noqa: E402
from fairanon.distributed import as_dask_instance  # noqa: E402
from fairanon.instances.synthetic import population  # noqa: E402


def test_risk_requirements_on_dask_equal_the_single_machine_verdicts(client):
    inst = population(3000, n_qi=3, seed=7)
    dinst = as_dask_instance(inst, partitions=3)
    release = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian", seed=0)
    reqs = [fa.AverageRisk("1/5"), fa.AverageRisk("1/10"), fa.SampleUniqueness(0),
            fa.PopulationUniqueness("1/100", sampling_fraction="1/10"),
            fa.PopulationUniqueness("1/100", model="pitman", sampling_fraction="1/10")]
    local = fa.verify(inst, release, reqs)
    remote = fa.verify(dinst, release, reqs, engine="dask")
    assert [(c.name, c.passed, c.achieved) for c in remote.checks[4:]] == \
           [(c.name, c.passed, c.achieved) for c in local.checks[4:]]
    assert not local["average risk <= 0.1"].passed
    assert remote.risk == local.risk and remote.risk["prosecutor_highest"]["exact"] == "1/3"


# ------------------------------------------------------------ the risk report on Dask
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from fairanon.distributed import as_dask_release, verify_dask  # noqa: E402
from fairanon.models.risk.report import release_risk  # noqa: E402


def _dask_risk(inst, release, partitions=3) -> dict:
    report = verify_dask(as_dask_instance(inst, partitions=partitions), as_dask_release(release, partitions=partitions),
                         risk=True)
    return report.risk_report


def _without_seconds(figures: dict) -> dict:
    return {k: v for k, v in figures.items() if k != "seconds"}


def _identity(inst):
    """The original table released as it is: every record exact, many sample uniques."""
    return fa.Release(inst.table.astype(str), groups=np.arange(inst.n_rows), provenance={"method": "identity"})


@pytest.mark.parametrize("k", [None, 3])
def test_dask_risk_report_equals_the_single_machine_one(client, k):
    inst = population(400, n_qi=4, seed=5)
    release = _identity(inst) if k is None else fa.anonymize(inst, [fa.KAnonymity(k)], method="mondrian", seed=0)
    local = release_risk(inst, release)
    dist = _dask_risk(inst, release)
    assert set(dist["seconds"]) == set(local["seconds"])
    assert _without_seconds(dist) == _without_seconds(local)
    if k is None:  # the figures are not all zero: uniques, MSUs, witnesses
        assert local["uniqueness"]["sample_uniques"] > 0 and local["suda"]["n_msus"] > 0
    assert local["sample"]["witness"]["records"] and local["disclosure"]["disease"]["beta_witness"]


def test_dask_risk_of_a_hand_computed_release(client, hand_release):
    inst, release = hand_release  # classes of 3, 2 and 1 records and a suppressed block of 2
    dist = _dask_risk(inst, release, partitions=2)
    assert _without_seconds(dist) == _without_seconds(release_risk(inst, release))
    s = dist["sample"]
    assert (s["n_records"], s["n_classes"], s["n_suppressed"]) == (8, 4, 2)
    # The record of the class of one is at risk 1; marketer risk is classes / records.
    assert s["prosecutor_highest"]["exact"] == "1" and s["witness"]["records"] == [5]
    assert (s["records_at_highest"], s["marketer"]["exact"]) == (1, "1/2")
    # 1/f > 1/5 for every class (all smaller than 5).
    assert s["records_above_threshold"] == 8
    assert dist["uniqueness"]["sample_uniques"] == 1
    # Individual risk without weights is 1/f: expected re-identifications = classes.
    assert dist["individual"]["expected_reidentifications"] == 4.0
    # β-likeness: hiv is 1 of 8 records, and all of the class (s3, 35): (1 − 1/8) / (1/8) = 7.
    assert dist["disclosure"]["disease"]["beta"]["exact"] == "7"


# ------------------------------------------------------------ memory on the client
import math  # noqa: E402
import tracemalloc  # noqa: E402

from fairanon._memory import memory_limit  # noqa: E402
from fairanon.distributed.risk import DaskRiskClasses, release_risk_dask  # noqa: E402
from fairanon.exceptions import MemoryLimitError  # noqa: E402
from fairanon.models.risk.report import risk  # noqa: E402

BIG = 10**8


def _big_classes():
    """Three classes of 1, 2 and 10^8 records, as the verifier hands them over: per class."""
    inst = fa.Instance(pd.DataFrame({"age": ["a", "b", "c"]}), fa.Schema([fa.Attribute("age")]), name="big")
    labels = {"age": np.array(["a", "b", "c"], dtype=object)}
    return DaskRiskClasses(inst, ["age"], labels, {"age": np.array([0, 1, 2])}, np.array([1, 2, BIG]), {},
                           lambda mask, limit: [int(np.flatnonzero(mask)[0])])


def test_dask_risk_of_10_to_the_8_records_makes_no_array_per_record():
    classes = _big_classes()
    tracemalloc.start()
    try:
        figures = release_risk_dask(classes, {}, sampling_fraction="1/2", models=())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # One entry per record would take at least 4 bytes each: 400 MB.
    assert peak < 50 * 2**20, peak
    assert "ids" not in vars(classes) and not classes.codes._made
    s = figures["sample"]
    assert (s["n_records"], s["n_classes"]) == (BIG + 3, 3)
    assert s["marketer"]["exact"] == f"3/{BIG + 3}" and s["records_above_threshold"] == 3
    assert figures["suda"] is None  # above a million records, as on one machine
    # π = 1/2: p = 1/2 in every class. r_1 = (p/q) ln(1/p) = ln 2, r_2 = (p/q²)(p ln p + q)
    # = 1 − ln 2, and f r_f = p ₂F₁(1, 1; f + 1; q) = 1/2 (1 + O(1/f)) for f = 10^8.
    expected = math.log(2) + 2 * (1 - math.log(2)) + 0.5
    assert figures["individual"]["expected_reidentifications"] == pytest.approx(expected, rel=1e-8)
    assert figures["individual"]["highest"] == pytest.approx(math.log(2), rel=1e-12)


def test_per_record_figures_on_dask_check_the_memory_limit_first():
    classes = _big_classes()
    with memory_limit("1GB"):
        # SUDA asked for beyond a million records: 10^8 rows of codes, scores and group ids.
        figures = release_risk_dask(classes, {}, suda_max_size=1, models=())
        assert "memory limit of 1 GB" in figures["error"] and "SUDA" in figures["error"]
        assert "suda_max_size=None" in figures["error"]
    with memory_limit("100MB"):
        report = risk(classes.instance, classes=classes, models=(), suda_max_size=None)
        assert report.individual.expected_reidentifications == pytest.approx(3)  # r = 1/f
        with pytest.raises(MemoryLimitError, match="memory limit of 100 MB"):
            report.individual.risk  # one figure per record: 10^8 of them


def test_a_weight_column_on_dask_leaves_only_the_individual_risk_out(client):
    base = population(400, n_qi=3, seed=5)
    schema = fa.Schema([*base.schema, fa.Attribute("w", role="weight", kind="numeric")])
    inst = fa.Instance(base.table.assign(w=3.0), schema, name="weighted")
    release = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian", seed=0)
    dist = _without_seconds(_dask_risk(inst, release))
    local = _without_seconds(release_risk(inst, release, weights=False))
    assert "weight column 'w'" in dist["individual"]["error"]
    assert dist["journalist"]["error"] == dist["individual"]["error"]
    assert local["individual"]["source"] == "none (F = f)"  # the figures that are left out
    for name in set(local) - {"individual", "journalist"}:
        assert dist[name] == local[name], name
    assert dist["sample"]["n_records"] == 400 and dist["disclosure"]
