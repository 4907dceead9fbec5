"""The runner: fresh processes, limits, results appended as runs finish, resume.

The misbehaving methods live in ``bench_helpers`` (given as "module:function"), so one
suite shows a finished run, a run killed at its time limit, a memory-out, an error and
a crash, each recorded as a row while the benchmark goes on.
"""

import csv
import os

import pandas as pd
import pytest

from fairanon.bench.runner import _prepare_out, failures, read_results, run_suite
from fairanon.bench.spec import Suite
from fairanon.exceptions import InvalidParameterError

LIMITS = {
    "name": "limits",
    "time_limit": 1,
    "grace": 0.5,
    "metrics": {"mre": True, "mre_queries": 300},
    "instances": [{"dataset": "dewri_t1"}],
    "requirements": [{"k_anonymity": {"k": 2}}],
    "algorithms": [
        {"method": "mondrian"},
        {"method": "bench_helpers:sleepy", "name": "sleepy"},
        {"method": "bench_helpers:broken", "name": "broken"},
        {"method": "bench_helpers:greedy", "name": "greedy", "memory_limit": "1GB"},
        {"method": "bench_helpers:crashing", "name": "crashing"},
    ],
}


def _csv_rows(out):
    with open(os.path.join(out, "results.csv"), newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def limits_run(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("limits"))
    seen = []

    def progress(row, finished, total):
        # The results file already holds every finished run when the callback fires.
        seen.append((finished, total, len(_csv_rows(out)) if row is not None else 0))

    result = run_suite(Suite.from_dict(LIMITS), out, jobs=3, progress=progress)
    return out, result, seen


def test_each_run_is_recorded_as_it_finishes(limits_run):
    _, result, seen = limits_run
    assert seen == [(0, 5, 0), (1, 5, 1), (2, 5, 2), (3, 5, 3), (4, 5, 4), (5, 5, 5)]
    assert result.ran == 5 and result.skipped == 0
    assert result.outcomes == {"ok": 1, "timeout": 1, "error": 1, "memout": 1, "crash": 1}


def test_a_run_killed_at_its_time_limit_keeps_the_finished_runs(limits_run):
    out, _, _ = limits_run
    rows = _csv_rows(out)
    by_algorithm = {r["algorithm"]: r for r in rows}
    # The file on disk holds every run, the killed one as a timeout row.
    assert sorted(by_algorithm) == ["broken", "crashing", "greedy", "mondrian", "sleepy"]
    assert by_algorithm["mondrian"]["outcome"] == "ok"
    timeout = by_algorithm["sleepy"]
    assert timeout["outcome"] == "timeout" and timeout["timeout_phase"] == "method"
    assert timeout["n_rows"] == "10" and timeout["instance_name"] == "dewri_t1"
    assert "killed in the method phase" in timeout["error"]
    assert 1.4 < float(timeout["wall_s"]) < 60
    assert os.path.exists(os.path.join(out, timeout["log"]))


def test_the_finished_run_is_verified_and_measured(limits_run):
    out, result, _ = limits_run
    row = result.results.set_index("algorithm").loc["mondrian"]
    assert row["outcome"] == "ok" and row["status"] == "FEASIBLE"
    assert row["verified"] and row["verify.k_anonymity"] and row["verify.truthfulness"]
    assert row["achieved.k_anonymity"] >= 2 and row["p.k"] == 2
    assert row["n_rows"] == 10 and row["n_qi"] == 3 and row["n_sensitive"] == 6
    assert row["time_s"] > 0 and row["peak_rss_mb"] > 10
    for metric in ("discernibility", "GCP", "LM_avg", "C_avg", "n_classes"):
        assert pd.notna(row[metric])
    assert 0 <= row["MRE"] < 10
    # The verifier's risk: the highest prosecutor risk is 1 over the smallest class.
    assert row["risk.prosecutor_highest"] == pytest.approx(1 / row["achieved.k_anonymity"])
    assert row["risk.sample_uniques"] == 0 and row["utility_s"] >= 0
    shares = [row[f"utility.{case}_share"] for case in ("exact", "generalized", "suppressed")]
    assert sum(shares) == pytest.approx(1.0) and 0 <= row["utility.tv_max"] <= 1
    vectors = pd.read_parquet(os.path.join(out, row["vectors"]))
    assert list(vectors.index) == list(range(1, 11))
    assert vectors["size"].min() == row["min_class_size"]
    assert os.path.exists(os.path.join(out, "results.parquet"))
    assert (
        pd.read_parquet(os.path.join(out, "results.parquet"))["run_id"].tolist()
        == result.results["run_id"].tolist()
    )


def test_errors_memouts_and_crashes_are_rows(limits_run):
    _, result, _ = limits_run
    rows = result.results.set_index("algorithm")
    assert rows.loc["broken", "outcome"] == "error"
    assert (
        rows.loc["broken", "error_type"] == "RuntimeError"
        and rows.loc["broken", "error"] == "broken on purpose"
    )
    assert (
        rows.loc["greedy", "outcome"] == "memout" and rows.loc["greedy", "memory_limit_mb"] == 1024
    )
    assert rows.loc["crashing", "outcome"] == "crash" and "SIGKILL" in rows.loc["crashing", "error"]
    assert set(failures(result.results)["algorithm"]) == {"broken", "crashing"}


def test_resume_skips_finished_runs(limits_run, tmp_path):
    out, _, _ = limits_run
    with pytest.raises(InvalidParameterError, match="--resume"):
        run_suite(Suite.from_dict(LIMITS), out)
    again = run_suite(Suite.from_dict(LIMITS), out, resume=True)
    assert (again.ran, again.skipped) == (0, 5)
    assert len(read_results(out)) == 5


def test_resume_runs_only_new_runs(limits_run):
    out, _, _ = limits_run
    doc = dict(LIMITS)
    doc["algorithms"] = LIMITS["algorithms"] + [
        {"method": "mondrian", "name": "balanced", "params": {"cut_rule": "balanced"}}
    ]
    again = run_suite(Suite.from_dict(doc), out, resume=True)
    assert (again.ran, again.skipped) == (1, 5) and again.outcomes == {"ok": 1}
    assert len(again.results) == 6 and again.results["run_index"].tolist()[-1] == 5
    with pytest.raises(InvalidParameterError, match="'jobs'"):
        run_suite(Suite.from_dict(doc), out, resume=True, jobs=0)


def test_overwrite_starts_again(tmp_path):
    out = tmp_path / "out"
    (out / "vectors").mkdir(parents=True)
    (out / "vectors" / "old.parquet").write_text("x")
    (out / "results.csv").write_text("run_id,outcome\nabc,ok\n")
    _prepare_out(str(out), resume=False, overwrite=True)
    assert not (out / "results.csv").exists() and list((out / "vectors").iterdir()) == []
    assert (out / "logs").is_dir()


@pytest.mark.slow
def test_an_interrupted_benchmark_keeps_what_finished(tmp_path):
    doc = {
        "time_limit": 60,
        "instances": [{"dataset": "dewri_t1"}],
        "requirements": [{"k_anonymity": 2}],
        "algorithms": ["mondrian", {"method": "bench_helpers:sleepy", "name": "sleepy"}],
        "metrics": {"vectors": False, "utility": False},
    }

    def stop(row, finished, total):
        if row is not None:
            raise KeyboardInterrupt

    out = str(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        run_suite(Suite.from_dict(doc), out, jobs=2, progress=stop)
    rows = _csv_rows(out)
    assert [(r["algorithm"], r["outcome"]) for r in rows] == [("mondrian", "ok")]
    assert "vectors" not in rows[0]  # metrics.vectors: false
    assert "utility.tv_max" not in rows[0] and "utility_s" not in rows[0]  # metrics.utility: false
    # dewri_t1 is 2-anonymous or better: the verifier's risk is filled in every run
    assert float(rows[0]["risk.prosecutor_highest"]) <= 0.5 and rows[0]["risk.sample_uniques"] == "0"
    # The sleeper was killed with the benchmark; resuming would run only it.
    from fairanon.bench.runner import ResultsFile

    done = ResultsFile(os.path.join(out, "results.csv")).run_ids
    assert [r.algorithm for r in Suite.from_dict(doc).runs() if r.key not in done] == ["sleepy"]


def test_an_interrupted_benchmark_leaves_no_temporary_files(tmp_path, monkeypatch):
    """Temporaries a SIGKILLed benchmark left are removed when the next one starts in the
    folder; those of the runs killed by Ctrl-C (a vectors file being written) once the
    runs are stopped. The run processes are replaced by a server whose run is writing
    its vectors when Ctrl-C comes."""
    from fairanon.bench import runner

    class Interrupted:
        eof = False

        def __init__(self, out, setup_limit):
            self.tasks = []

        def submit(self, task):
            self.tasks.append(task)

        def events(self, timeout):
            seen.append(sorted(str(p.relative_to(out)) for p in out.rglob("*.tmp")))
            with open(self.tasks[0]["vectors_path"] + ".789.tmp", "w") as fh:
                fh.write("half")
            raise KeyboardInterrupt

        def close(self):
            pass

    monkeypatch.setattr(runner, "_Server", Interrupted)
    doc = {"time_limit": 60, "instances": [{"dataset": "dewri_t1"}], "requirements": [{"k_anonymity": 2}],
           "algorithms": ["mondrian"]}
    out = tmp_path / "results"
    left = [out / "results.csv.123.tmp", out / "suite.json.9.tmp", out / "vectors" / "a.parquet.456.tmp",
            out / "vectors" / "a.groups.parquet.456.tmp"]
    # *.tmp files that are not the benchmark's temporaries: the user's, kept.
    users = [out / "x.tmp", out / "notes.1.tmp", out / "data.csv.12.tmp", out / "logs" / "x.tmp",
             out / "logs" / "results.csv.5.tmp", out / "vectors" / "mine.tmp"]
    for path in left + users:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    seen = []
    with pytest.raises(KeyboardInterrupt):
        run_suite(Suite.from_dict(doc), str(out))
    kept = sorted(str(p.relative_to(out)) for p in users)
    assert seen == [kept]
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.tmp")) == kept


def test_solver_status_and_gap_are_read_from_provenance():
    import numpy as np

    import fairanon as fa
    from fairanon.bench.child import _gap, _solver_status
    from fairanon.instances.datasets import dewri_releases

    table = dewri_releases()["T3a"]
    nested = fa.Release(
        table,
        groups=np.zeros(10),
        provenance={"solver": {"solver_status": "FEASIBLE", "gap": 0.25}},
    )
    assert (_solver_status(nested), _gap(nested)) == ("FEASIBLE", 0.25)
    flat = fa.Release(table, groups=np.zeros(10), provenance={"solver_status": "OPTIMAL", "gap": 0})
    assert (_solver_status(flat), _gap(flat)) == ("OPTIMAL", 0.0)
    bounds = fa.Release(table, groups=np.zeros(10), objective=10, bound=8)
    assert (_solver_status(bounds), _gap(bounds)) == (None, 0.2)
    assert _gap(fa.Release(table, groups=np.zeros(10))) is None


@pytest.mark.slow
def test_a_classifier_adds_the_classification_utility(tmp_path):
    pytest.importorskip("sklearn")
    doc = {
        "instances": [{"dataset": "ruggieri_loan"}],
        "requirements": [{"k_anonymity": 2}],
        "algorithms": ["mondrian"],
        "metrics": {"vectors": False, "classifier": "tree"},
    }
    result = run_suite(Suite.from_dict(doc), str(tmp_path))
    row = result.results.iloc[0]
    assert row["outcome"] == "ok" and row["utility.classifier"] == "tree"
    for column in ("accuracy_original", "accuracy_release", "auc_release", "RD_release", "ER_release"):
        assert pd.notna(row[f"utility.{column}"]), column
    assert row["utility.accuracy_loss"] == pytest.approx(row["utility.accuracy_original"]
                                                         - row["utility.accuracy_release"])


@pytest.mark.slow
def test_a_utility_that_cannot_be_measured_says_why(tmp_path):
    """A classifier on an instance without a decision attribute: the run is ok, its
    utility figures are missing and ``utility.error`` gives release_utility's reason."""
    doc = {
        "instances": [{"dataset": "dewri_t1"}],
        "requirements": [{"k_anonymity": 2}],
        "algorithms": ["mondrian"],
        "metrics": {"vectors": False, "classifier": "tree"},
    }
    row = run_suite(Suite.from_dict(doc), str(tmp_path)).results.iloc[0]
    assert row["outcome"] == "ok" and row["verified"]
    assert "has no decision attribute" in row["utility.error"]
    assert "utility.tv_max" not in row.index
