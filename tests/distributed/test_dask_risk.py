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


CITY = fa.Hierarchy.from_mapping({"*": {"north": ["n1", "n2"], "south": ["s1", "s2", "s3"]}})


def test_dask_risk_of_a_hand_computed_release(client):
    # Classes: (north, [20-29]) 3 records, (south, [20-29]) 2, (s3, 35) 1, and the
    # suppressed block (*, *) of 2.
    original = pd.DataFrame({"city": ["n1", "n2", "n1", "s1", "s2", "s3", "n2", "s1"],
                             "age": [21, 22, 23, 24, 27, 35, 29, 30],
                             "disease": ["flu", "flu", "cold", "flu", "cold", "hiv", "cold", "flu"]})
    schema = fa.Schema([fa.Attribute("city", hierarchy=CITY), fa.Attribute("age", kind="numeric"),
                        fa.Attribute("disease", role="sensitive")])
    inst = fa.Instance(original, schema, name="hand")
    table = pd.DataFrame({"city": ["north", "north", "north", "south", "south", "s3", "*", "*"],
                          "age": ["[20-29]"] * 5 + ["35", "*", "*"], "disease": original["disease"]})
    release = fa.Release(table, groups=np.array([0, 0, 0, 1, 1, 2, 3, 3]), provenance={"method": "hand"})
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
