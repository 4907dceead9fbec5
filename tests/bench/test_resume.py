"""A benchmark interrupted at any moment, by Ctrl-C (SIGINT) or SIGKILL, then resumed:
it always completes, every run is in results.csv exactly once, and the rows are those
of an uninterrupted run. The leftovers of an interruption (a run's message file, a torn
last row of results.csv) are each planted on purpose as well; and no instance or suite
name makes the benchmark write outside its folder."""

import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from fairanon.bench.compare import compare_results
from fairanon.bench.runner import ResultsFile, run_suite
from fairanon.bench.spec import Suite, load_suite
from fairanon.exceptions import InvalidParameterError

SUITE = """\
name: resume
time_limit: 60
instances:
  - dataset: dewri_t1
  - dataset: diva_table1
requirements:
  - k_anonymity: {k: [2, 3]}
algorithms:
  - method: mondrian
  - method: bench_helpers:unhurried
    name: unhurried
"""
N_RUNS = 8
#: Columns that differ from one run of the same suite to the next.
TIMINGS = {"time_s", "cpu_s", "setup_s", "verify_s", "wall_s", "peak_rss_mb", "setup_rss_mb", "mre_s", "vectors_s", "utility_s"}


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in sys.path)  # bench_helpers included
    return env


def _bench(out):
    return [sys.executable, "-m", "fairanon.cli", "bench", str(out.parent / "suite.yaml"), "--out", str(out),
            "--no-report"]


def _rows(out):
    frame = pd.read_csv(out / "results.csv")
    return frame[sorted(set(frame.columns) - TIMINGS)].sort_values("run_id").reset_index(drop=True)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The rows of an uninterrupted run, and how long it took."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    (folder / "suite.yaml").write_text(SUITE)
    started = time.monotonic()
    run_suite(load_suite(str(folder / "suite.yaml")), str(folder / "out"))
    rows = _rows(folder / "out")
    assert len(rows) == N_RUNS and rows["outcome"].eq("ok").all()
    return folder / "out", rows, time.monotonic() - started


def _resume_and_check(out, rows):
    result = run_suite(load_suite(str(out.parent / "suite.yaml")), str(out), resume=True)
    assert result.ran + result.skipped == N_RUNS
    again = _rows(out)
    assert again["run_id"].is_unique and len(again) == N_RUNS
    pd.testing.assert_frame_equal(again, rows)
    leftovers = [n for n in os.listdir(out / "logs") if n.endswith(".messages")]
    assert leftovers == [] and not [n for n in os.listdir(out) if n.endswith(".tmp")]


def _last_row_start(data: bytes) -> int:
    return data.rstrip(b"\r\n").rfind(b"\r\n") + 2


@pytest.mark.slow
def test_a_torn_last_row_and_a_stale_message_file_on_resume(uninterrupted, tmp_path):
    out, rows, _ = uninterrupted
    (tmp_path / "suite.yaml").write_text(SUITE)
    shutil.copytree(out, tmp_path / "out")
    out = tmp_path / "out"
    last = pd.read_csv(out / "results.csv")["run_id"].iloc[-1]
    data = (out / "results.csv").read_bytes()
    start = _last_row_start(data)
    (out / "results.csv").write_bytes(data[: start + (len(data) - start) // 2])  # torn while written
    noise = b'{"kind": "ready", "info": {"n_rows": 1}}\n' * 500 + b'{"kind": "sol'
    (out / "logs" / f"{last}.messages").write_bytes(noise)  # left by the interrupted attempt
    (out / "logs" / f"{last}.0123456789ab.messages").write_bytes(noise)
    _resume_and_check(out, rows)


@pytest.mark.slow
@pytest.mark.parametrize("cut", ["mid-row", "open quote", "no line end", "header"])
def test_a_torn_last_row_is_cut_off(uninterrupted, tmp_path, cut):
    out, _, _ = uninterrupted
    data = (out / "results.csv").read_bytes()
    ids = pd.read_csv(out / "results.csv")["run_id"].tolist()
    start = _last_row_start(data)
    whole = data[:start]
    if cut == "mid-row":
        data = data[: start + (len(data) - start) // 2]
    elif cut == "open quote":
        data = data[: data.index(b'"{', start) + 2] + b"\r\n"  # inside the quoted params
    elif cut == "no line end":
        data = data[:-2]
    else:
        data, whole, ids = data[: data.index(b"\r\n") // 2], b"", [None]
    path = tmp_path / "results.csv"
    path.write_bytes(data)
    results = ResultsFile(str(path))
    assert results.run_ids == set(ids[:-1])
    assert path.read_bytes() == whole  # the finished rows as they were


def _interrupt_and_resume(uninterrupted, tmp_path, how, rng, window=0.9):
    _, rows, duration = uninterrupted
    (tmp_path / "suite.yaml").write_text(SUITE)
    out = tmp_path / "out"
    proc = subprocess.Popen(_bench(out), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (out / "suite.json").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # the command is past its imports and in the benchmark
    time.sleep(rng.uniform(0, window * duration))
    proc.send_signal(signal.SIGINT if how == "SIGINT" else signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    err = err.decode()
    if how == "SIGINT":
        assert proc.returncode in (0, 130) and "Traceback" not in err, err
        assert proc.returncode == 0 or "--resume" in err
    else:
        assert proc.returncode in (0, -signal.SIGKILL)
    _resume_and_check(out, rows)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGKILL", pytest.param("SIGINT", marks=pytest.mark.slow)])
def test_an_interrupted_benchmark_resumes_to_the_same_rows(uninterrupted, tmp_path, how):
    _interrupt_and_resume(uninterrupted, tmp_path, how, random.Random(how), window=0.5)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"])
@pytest.mark.parametrize("trial", range(10))
def test_interrupted_at_random_moments_ten_times(uninterrupted, tmp_path, how, trial):
    _interrupt_and_resume(uninterrupted, tmp_path, how, random.Random(f"{how}{trial}"))


@pytest.mark.slow
def test_no_instance_or_suite_name_writes_outside_its_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = {
        "name": "../../escape",
        "instances": [{"dataset": "dewri_t1", "name": ".."}, {"dataset": "diva_table1", "name": "."}],
        "requirements": [{"k_anonymity": {"k": 2}}],
        "algorithms": ["mondrian", {"method": "mondrian", "name": "balanced", "params": {"cut_rule": "balanced"}}],
    }
    result = run_suite(Suite.from_dict(doc))
    assert result.out == str(tmp_path / "benchmarks" / "results" / "escape")
    compare_results(result.out)
    assert sorted(os.listdir(tmp_path)) == ["benchmarks"]
    assert sorted(os.listdir(tmp_path / "benchmarks" / "results")) == ["escape"]
    assert sorted(os.listdir(os.path.join(result.out, "comparison"))) == ["instance", "instance_2"]


def test_the_suite_file_is_read_strictly(tmp_path):
    (tmp_path / "s.yaml").write_text(SUITE + "seeds: [0]\nseeds: [-1]\n")
    with pytest.raises(InvalidParameterError, match="the key 'seeds' is given twice"):
        load_suite(str(tmp_path / "s.yaml"))
    (tmp_path / "s.yaml").write_text(SUITE + "seeds: [-1]\n")
    with pytest.raises(InvalidParameterError, match="ints >= 0"):
        load_suite(str(tmp_path / "s.yaml"))
