"""``fairanon risk``: the risk figures of a job's instance or of a release file, and the
risk in the report ``fairanon anonymize`` writes."""

import json
import math

import pytest
from cli_helpers import CSV, SCHEMA, run, write_job


def test_risk_of_the_instance_and_of_a_release(tmp_path, capsys):
    job = write_job(tmp_path)
    code, out, err = run(capsys, "risk", job, "--suda-max-size", "2")
    assert code == 0, err
    assert "prosecutor risk, highest" in out and "sample uniques" in out
    assert "8 (100 %)" in out  # every one of the 8 records is unique on (age, zip, sex)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    risk = report["risk"]
    assert risk["released"] and risk["sample"]["prosecutor_highest"]["value"] <= 0.5
    assert risk["uniqueness"]["sample_uniques"] == 0
    code, out, err = run(capsys, "risk", job, "--release", tmp_path / "o" / "release.csv",
                         "--population-size", "80", "--out", tmp_path / "r.json")
    assert code == 0, err
    assert "Risk of a release of" in out and "population uniques, dankar" in out
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["population_model"]["population_size"] == 80
    assert document["sample"] == risk["sample"]


def test_risk_json_and_bad_input(tmp_path, capsys):
    job = write_job(tmp_path)
    code, out, _ = run(capsys, "risk", job, "--json", "--sampling-fraction", "1/10", "--suda-max-size", "0")
    assert code == 0
    document = json.loads(out)
    assert document["suda"] is None and document["population_model"]["population_size"] == 80
    assert set(document["uniqueness"]["population_uniques"]) == {"pitman", "zayatz", "snb", "dankar"}
    code, _, err = run(capsys, "risk", job, "--sampling-fraction", "2")
    assert code == 2 and "sampling_fraction" in err
    code, _, err = run(capsys, "risk", job, "--weights", "nope")
    assert code == 2 and "weight column" in err
    code, _, err = run(capsys, "risk", job, "--release", tmp_path / "missing.csv")
    assert code == 2 and "missing.csv" in err


def test_a_job_with_risk_requirements(tmp_path, capsys):
    job = write_job(tmp_path, requirements="""
- average_risk: {r: 1/3}
- sample_uniqueness: {u: 0}""")
    code, out, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 0, err
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    checks = {c["name"]: c for c in report["report"]["checks"]}
    assert checks["average risk <= 1/3"]["passed"] and checks["sample uniques <= 0 of the records"]["passed"]
    assert report["risk"]["uniqueness"]["sample_uniques"] == 0


def test_a_job_with_a_weight_attribute(tmp_path, capsys):
    # Every record stands for 4 people: f = 1, F = 4, p = 1/4, r = (p/q) ln(1/p) = ln(4)/3.
    lines = CSV.strip().splitlines()
    csv = "\n".join([lines[0] + ",w"] + [line + ",4" for line in lines[1:]]) + "\n"
    job = write_job(tmp_path, csv=csv, schema=SCHEMA + "\nw: {role: weight}")
    code, out, err = run(capsys, "risk", job, "--json", "--suda-max-size", "0")
    assert code == 0, err
    individual = json.loads(out)["individual"]
    assert individual["source"] == "weights w"
    assert individual["highest"] == pytest.approx(math.log(4) / 3, rel=1e-12)
    assert individual["expected_reidentifications"] == pytest.approx(8 * math.log(4) / 3, rel=1e-12)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    header = (tmp_path / "o" / "release.csv").read_text().splitlines()[0]
    assert "w" not in header.split(",")  # never released


def test_risk_on_dask_gives_the_local_figures(tmp_path, capsys, monkeypatch):
    """`fairanon risk --engine dask` prints the figures `fairanon risk` computes on one
    machine, for the job's instance and for a release file; a missing file is an error."""
    import contextlib

    pytest.importorskip("dask.dataframe")
    # Dask's own scheduler in this process instead of a cluster: the same passes, faster.
    monkeypatch.setattr("fairanon.distributed.command.client", lambda *a: contextlib.nullcontext())
    job = write_job(tmp_path)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    for extra in ([], ["--release", tmp_path / "o" / "release.csv"]):
        options = ["--json", "--population-size", "80", "--suda-max-size", "2", *extra]
        code, local, err = run(capsys, "risk", job, *options)
        assert code == 0, err
        code, dask, err = run(capsys, "risk", job, *options, "--engine", "dask", "--out", tmp_path / "r.json")
        assert code == 0, err
        local, dask = json.loads(local), json.loads(dask)
        # Both engines read a CSV's record ids as written ('1'): the same witness records.
        assert dask["sample"]["witness"]["records"] == local["sample"]["witness"]["records"]
        assert all(isinstance(r, str) for r in local["sample"]["witness"]["records"])
        for part in ("released", "sample", "uniqueness", "population_model", "suda"):
            assert dask[part] == local[part], part
        assert json.loads((tmp_path / "r.json").read_text())["sample"]["n_records"] == 8
        (tmp_path / "r.json").unlink()
    code, _, err = run(capsys, "risk", job, "--engine", "dask", "--release", tmp_path / "missing.csv")
    assert code == 2 and "missing.csv" in err
