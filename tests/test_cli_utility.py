"""``fairanon utility``: the distributions and the classification utility of a job's
release, from a release file or after running the job's method."""

import json

import pytest
from cli_helpers import run, write_job


def test_utility_of_a_release_file(tmp_path, capsys):
    job = write_job(tmp_path)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    code, out, err = run(capsys, "utility", job, "--release", tmp_path / "o" / "release.csv",
                         "--classifier", "none", "--bins", "2", "--out", tmp_path / "u.json")
    assert code == 0, err
    assert "Utility of a 'external' release of" in out and "age (labels at midpoints)" in out
    document = json.loads((tmp_path / "u.json").read_text())
    assert [a["name"] for a in document["attributes"]] == ["age", "zip", "sex"]
    for a in document["attributes"]:
        assert sum(row["original"] for row in a["histogram"]) == 8
        assert a["untruthful"] == 0
    assert document["classification"] is None
    # report.json carries the same distributions of the release it names (bins 10)
    report = json.loads((tmp_path / "o" / "report.json").read_text())["utility"]
    code, out, err = run(capsys, "utility", job, "--release", tmp_path / "o" / "release.csv",
                         "--classifier", "none", "--json")
    assert code == 0, err
    alone = json.loads(out)
    assert report["attributes"] == alone["attributes"] and report["summary"] == alone["summary"]
    shares = [report["summary"][f"{case}_share"] for case in ("exact", "generalized", "suppressed")]
    assert sum(shares) == pytest.approx(1.0)


def test_utility_runs_the_job_when_no_release_is_given(tmp_path, capsys):
    pytest.importorskip("sklearn")
    job = write_job(tmp_path)
    code, out, err = run(capsys, "utility", job, "--json", "--seed", "3", "--test-size", "0.25")
    assert code == 0, err
    document = json.loads(out)
    c = document["classification"]
    # 4 negative and 4 positive decisions: one of each held out
    assert (c["n_train"], c["n_test"], c["seed"]) == (6, 2, 3)
    assert [m["trained_on"] for m in c["models"]] == ["original", "release", "truth"]
    assert document["method"] == "mondrian"


def test_utility_bad_input(tmp_path, capsys):
    job = write_job(tmp_path)
    code, _, err = run(capsys, "utility", job, "--release", tmp_path / "missing.csv", "--classifier", "none")
    assert code == 2 and "missing.csv" in err
    code, _, err = run(capsys, "utility", job, "--classifier", "none", "--bins", "0")
    assert code == 2 and "'bins'" in err
    (tmp_path / "noid.csv").write_text("age,zip\n1,2\n")
    code, _, err = run(capsys, "utility", job, "--release", tmp_path / "noid.csv", "--classifier", "none")
    assert code == 2 and "record_id" in err
