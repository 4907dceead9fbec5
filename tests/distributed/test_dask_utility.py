"""The utility figures on the Dask engine: from the counts of (label, original value)
pairs of the verifier's join, against the single-machine :func:`fairanon.utility` and a
hand computation; and report.json of ``anonymize --engine dask`` (risk and utility)
against the single-machine command's."""

import json

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import fairanon as fa  # noqa: E402
from fairanon.cli import main  # noqa: E402
from fairanon.distributed import as_dask_instance, as_dask_release, verify_dask  # noqa: E402
from fairanon.instances.synthetic import population  # noqa: E402
from fairanon.jobs import read_job  # noqa: E402
from fairanon.models.risk.report import release_risk  # noqa: E402
from fairanon.models.utility import release_utility  # noqa: E402


def _dask_utility(inst, release, partitions=3, **options) -> dict:
    report = verify_dask(as_dask_instance(inst, partitions=partitions), as_dask_release(release, partitions=partitions),
                         [fa.KAnonymity(1)], utility=True, **options)
    assert report.passed
    # The verifier reads a table: the method and status are the command's to name.
    assert (report.utility["method"], report.utility["status"]) == ("external", "FEASIBLE")
    return {**report.utility, "method": release.method, "status": str(release.status)}


def _same(dist, local):
    """Equal: integers, texts and keys exactly; floats up to rounding (sums in another
    order); the timing left out."""
    if isinstance(local, dict):
        assert set(dist) == set(local)
        for key in local:
            if key != "distributions_s":
                _same(dist[key], local[key])
    elif isinstance(local, list):
        assert len(dist) == len(local)
        for a, b in zip(dist, local):
            _same(a, b)
    elif isinstance(local, float):
        assert dist == pytest.approx(local, rel=1e-12, abs=1e-12)
    else:
        assert type(dist) is type(local) and dist == local


def test_dask_utility_equals_the_single_machine_one(client):
    inst = population(300, n_qi=7, seed=3)
    release = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian", seed=0)
    assert fa.verify(inst, release, [fa.KAnonymity(3)]).passed
    local = release_utility(inst, release)
    dist = _dask_utility(inst, release)
    _same(dist, local)
    kinds = {a["kind"] for a in local["attributes"]}
    assert kinds == {"numeric", "categorical", "ordered"}


CITY = fa.Hierarchy.from_mapping({"*": {"north": ["n1", "n2"], "south": ["s1", "s2", "s3"]}})
ORIGINAL = [(21, "n1", "F"), (22, "n2", "F"), (23, "n1", "M"), (24, "n2", "M"),
            (27, "s1", "F"), (28, "s2", "F"), (29, "s3", "M"), (30, "s1", "M")]
RELEASED = [("21", "north", "F"), ("22", "north", "F"), ("[23-24]", "n1", "M"), ("[23-24]", "n2", "M"),
            ("[27-28]", "south", "F"), ("[27-28]", "south", "F"), ("*", "*", "M"), ("*", "*", "M")]


def _hand_case():
    """Eight records, each twice (ids i and i + 8, so that the two copies lie in two
    partitions and each (label, value) pair is counted 1 + 1 = 2 times)."""
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("city", hierarchy=CITY),
                        fa.Attribute("sex", role="protected", protected=["F"], hierarchy=fa.Hierarchy.flat(["F", "M"]))])
    inst = fa.Instance(pd.DataFrame(ORIGINAL * 2, columns=["age", "city", "sex"]), schema, name="hand")
    table = pd.DataFrame(RELEASED * 2, columns=["age", "city", "sex"])
    release = fa.Release(table, groups=np.arange(16) % 8 // 2, provenance={"method": "hand"})
    return inst, release


def test_dask_utility_of_a_hand_computed_release(client):
    inst, release = _hand_case()
    out = _dask_utility(inst, release, partitions=2)
    attrs = {a["name"]: a for a in out["attributes"]}
    city = attrs["city"]
    # Per original value (records, exact, generalized, suppressed): n1 is released as
    # 'north' and 'n1', n2 as 'north' and 'n2', s1 as 'south' and '*', s2 as 'south',
    # s3 as '*'; each record twice.
    assert [(r["value"], r["original"], r["exact"], r["generalized"], r["suppressed"]) for r in city["histogram"]] == [
        ("n1", 4, 2, 2, 0), ("n2", 4, 2, 2, 0), ("s1", 4, 0, 2, 2), ("s2", 2, 0, 2, 0), ("s3", 2, 0, 0, 2)]
    assert (city["exact"], city["generalized"], city["suppressed"], city["n"]) == (4, 8, 4, 16)
    # Released counts read as uniform spreads: 'north' (4 records) gives n1 and n2 2 each,
    # 'south' (4) gives s1, s2, s3 4/3 each, '*' (4) gives each of the 5 values 4/5.
    released = [2 + 2 + 4 / 5, 2 + 2 + 4 / 5, 4 / 3 + 4 / 5, 4 / 3 + 4 / 5, 4 / 3 + 4 / 5]
    assert [r["released"] for r in city["histogram"]] == pytest.approx(released)
    # ½ (0.8 + 0.8 + 1.8667 + 0.1333 + 0.1333) / 16 = 7/60.
    assert city["tv_distance"] == pytest.approx(7 / 60)
    assert city["labels"] == {"north": 4, "south": 4, "*": 4, "n1": 2, "n2": 2}

    age = attrs["age"]
    # Ten integers 21..30, one bin each; '*' spreads its 4 records over the ten.
    assert [r["value"] for r in age["histogram"]] == [str(v) for v in range(21, 31)]
    assert [r["original"] for r in age["histogram"]] == [2, 2, 2, 2, 0, 0, 2, 2, 2, 2]
    assert [r["released"] for r in age["histogram"]] == pytest.approx(
        [2.4, 2.4, 2.4, 2.4, 0.4, 0.4, 2.4, 2.4, 0.4, 0.4])
    assert (age["exact"], age["generalized"], age["suppressed"]) == (4, 8, 4)
    assert age["tv_distance"] == pytest.approx(6.4 / 32)
    before, after = age["summary"]["before"], age["summary"]["after"]
    # Sorted records 21 21 22 22 23 23 24 24 27 27 28 28 29 29 30 30: position 15 q.
    assert before == pytest.approx({"mean": 25.5, "std": 10.25 ** 0.5, "min": 21, "q25": 22.75, "median": 25.5,
                                    "q75": 28.25, "max": 30})
    # Midpoints 21 21 22 22 23.5 (4) 25.5 (4, '*' read as [21-30]) 27.5 (4); the uniform
    # spread adds the variance within labels: 0 for points, (2² − 1)/12 for two
    # integers, (10² − 1)/12 for '*', on average 2.1875.
    assert after == pytest.approx({"mean": 24.5, "std": 2.25, "min": 21, "q25": 23.125, "median": 24.5,
                                   "q75": 26.0, "max": 27.5, "std_uniform": (5.0625 + 2.1875) ** 0.5})
    sex = attrs["sex"]
    assert (sex["exact"], sex["tv_distance"]) == (16, 0.0)
    assert out["summary"]["exact_share"] == pytest.approx(24 / 48)
    assert out["summary"]["tv_max_attribute"] == "age"


def _unreadable(table):
    table.loc[3, "age"] = "thirty"
    return table


def _untruthful(table):
    table.loc[0, "city"] = "south"
    table.loc[9, "age"] = "[25-26]"
    return table


def _lost(table):
    return table.drop(index=5)


@pytest.mark.parametrize("edit", [None, _unreadable, _untruthful, _lost], ids=["good", "unreadable", "untruthful", "lost"])
def test_dask_utility_equals_the_single_machine_one_on_the_hand_case(client, edit):
    inst, release = _hand_case()
    if edit is not None:
        table = edit(release.table.copy())
        release = fa.Release(table, groups=np.zeros(len(table), dtype=np.int64), provenance={"method": "hand"})
    local = release_utility(inst, release)
    report = verify_dask(as_dask_instance(inst, partitions=2), as_dask_release(release, partitions=2),
                         utility=True)
    dist = report.utility if "error" in local else {**report.utility, "method": "hand"}
    _same(dist, local)
    if edit is _untruthful:
        assert {a["name"]: a["untruthful"] for a in local["attributes"]} == {"age": 1, "city": 1, "sex": 0}
    if edit in (_unreadable, _lost):
        assert set(local) == {"error"}


JOB = """
instance:
  parquet: data
  id_column: record_id
  schema: {age: {role: qi, type: numeric}, zip: {role: qi}, education: {role: qi},
           race: {role: protected, protected: [Black]}, disease: {role: sensitive}}
requirements: [{k_anonymity: {k: 10}}]
method: mondrian
"""


@pytest.mark.slow
def test_report_json_of_the_dask_engine_has_the_single_machine_risk_and_utility(tmp_path, client, monkeypatch, capsys):
    import contextlib

    @contextlib.contextmanager
    def reuse(scheduler, workers=None):
        yield client

    inst = population(1500, n_qi=4, seed=1)
    (tmp_path / "data").mkdir()
    inst.table.reset_index().to_parquet(tmp_path / "data" / "part0.parquet", index=False)
    (tmp_path / "job.yaml").write_text(JOB)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("fairanon.distributed.command.client", reuse)
    assert main(["anonymize", "job.yaml", "--engine", "dask", "--max-rows", "500", "--out", "dist"]) == 0
    assert main(["anonymize", "job.yaml", "--out", "local", "--format", "parquet"]) == 0
    capsys.readouterr()
    dist = json.loads((tmp_path / "dist" / "report.json").read_text())
    local = json.loads((tmp_path / "local" / "report.json").read_text())
    # The two engines make the same release (tests/distributed/test_dask.py) in another
    # row order, so the same distributions.
    assert dist["utility"]["method"] == "mondrian" and dist["utility"]["attributes"]
    _same(dist["utility"], local["utility"])
    # The risk witnesses are the first classes in row order: the single machine measures
    # the Dask engine's release as written.
    table = pd.read_parquet(tmp_path / "dist" / "release.parquet")
    written = fa.Release(table, groups=np.zeros(len(table), dtype=np.int64), provenance={"method": "mondrian"})
    single = release_risk(read_job("job.yaml").instance, written)
    assert dist["risk"]["sample"]["n_records"] == 1500 and dist["risk"]["suda"] is not None
    assert {**dist["risk"], "seconds": {}} == {**single, "seconds": {}}
    assert {**dist["risk"], "seconds": {}, "sample": {}, "disclosure": {}} == \
           {**local["risk"], "seconds": {}, "sample": {}, "disclosure": {}}
