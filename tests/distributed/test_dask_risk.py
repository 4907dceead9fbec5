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
