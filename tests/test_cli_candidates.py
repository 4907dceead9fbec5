"""``fairanon anonymize --candidates FILE``: a fulldomain job's candidate
transformations written as JSON next to the release (the loan table's three passing
nodes, by hand), under the job's time limit; refused before any work for another
method, another engine or an unusable path; the reason written when they cannot be
listed, the release written either way."""

import importlib
import json

import pytest
from cli_helpers import run

import fairanon.api
from fairanon.solver.fulldomain import Candidates

# Ruggieri's loan table (17 records) under 2-anonymity: purpose={housing, car} under
# 'housing-car', emp={no, yes} under '*'. At (purpose 1, emp 0) the 17 purpose cells are
# generalized, at (0, 1) the 17 emp cells, at (1, 1) all 34; (0, 0) leaves a class of one.
JOB = """instance: {dataset: ruggieri_loan}
requirements:
  - k_anonymity: {k: 2}
method: fulldomain
options: {objective: generalized}
seed: 0
"""
CANDIDATES = importlib.import_module("fairanon.solver.fulldomain.candidates")  # the package names the function
CLI = importlib.import_module("fairanon.cli")


@pytest.fixture
def job(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(JOB, encoding="utf-8")
    return path


def test_candidates_are_written_next_to_the_same_release(job, tmp_path, capsys):
    code, out, _ = run(capsys, "anonymize", job, "--out", tmp_path / "with", "--candidates", tmp_path / "c.json")
    assert code == 0 and "3 of the lattice's 4 nodes meet the requirements" in out
    listed = Candidates.from_dict(json.loads((tmp_path / "c.json").read_text()))
    assert {tuple(c.levels.values()): c.objective for c in listed.candidates} == {(1, 0): 17, (0, 1): 17, (1, 1): 34}
    assert (listed.lattice_size, listed.checked, listed.feasible, listed.reason) == (4, 4, 3, None)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "without")[0] == 0
    assert (tmp_path / "with" / "release.csv").read_bytes() == (tmp_path / "without" / "release.csv").read_bytes()


@pytest.mark.parametrize(("extra", "message"), [
    (("--method", "mondrian"), "--candidates lists the nodes of fulldomain's lattice; the method is 'mondrian'"),
    (("--engine", "dask"), "the dask engine does not run fulldomain"),
])
def test_candidates_of_another_method_or_engine_are_refused_before_any_work(job, tmp_path, capsys, monkeypatch,
                                                                             extra, message):
    def forbidden(*args, **kwargs):
        raise AssertionError("the anonymization ran although --candidates was refused")

    monkeypatch.setattr(fairanon.api, "anonymize", forbidden)
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "out", "--candidates", tmp_path / "c.json",
                       *extra)
    assert code == 2 and message in err
    assert not (tmp_path / "c.json").exists()
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "out", "--candidates", tmp_path)
    assert code == 2 and "--candidates" in err and "is a folder" in err


def test_the_time_limit_and_the_node_limit_are_written_as_reasons(job, tmp_path, capsys, monkeypatch):
    """A clock that advances one second a reading stops the listing after one node
    under a 1.5 s limit; a limit of 3 checks on the 4-node lattice lists the passing
    nodes below the fourth's cost. The release is written both times."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(CANDIDATES, "perf_counter", lambda: next(ticks))
    monkeypatch.setattr(CLI, "perf_counter", lambda: 0.0)  # the release took no time: 1.5 s left
    monkeypatch.setattr("fairanon._limits.perf_counter", lambda: 0.0)  # the method's share counts from 0 too
    code, out, _ = run(capsys, "anonymize", job, "--out", tmp_path / "a", "--candidates", tmp_path / "a.json",
                       "--time-limit", "1.5")
    reason = "the time left (1.5 s) ran out after checking 1 of the lattice's 4 nodes"
    assert code == 0 and f"no candidates listed ({reason})" in out
    stopped = Candidates.from_dict(json.loads((tmp_path / "a.json").read_text()))
    assert stopped.reason == reason and stopped.candidates == () and stopped.checked == 1
    monkeypatch.undo()
    # Room for 3 checks: in order of least possible cost (generalized cells), (0, 0) with
    # none, then the two of 17; (1, 1), open, costs 34, so the two nodes of 17 are listed.
    monkeypatch.setattr(CANDIDATES, "CANDIDATE_NODES", 3)
    code, out, _ = run(capsys, "anonymize", job, "--out", tmp_path / "b", "--candidates", tmp_path / "b.json")
    assert code == 0 and ("2 nodes meet the requirements among those costing less than 34 (generalized)" in out)
    assert "3 of the lattice's 4 nodes were checked, in order of their least possible cost, before the limit of 3 " \
           "checks, so the nodes costing 34 or more are not shown" in out
    bounded = Candidates.from_dict(json.loads((tmp_path / "b.json").read_text()))
    assert bounded.cost_below == 34 and bounded.checked == 3 and bounded.feasible == 2
    assert sorted(tuple(c.levels.values()) for c in bounded.candidates) == [(0, 1), (1, 0)]
    assert all(c.objective == 17 for c in bounded.candidates)
    assert (tmp_path / "a" / "release.csv").is_file() and (tmp_path / "b" / "release.csv").is_file()


def test_the_candidates_get_the_time_the_release_left(job, tmp_path, capsys, monkeypatch):
    """The job's time limit is the command's: with the release done 7 s after the
    command started (a clock read at the start, before the method and after it), a 10 s
    limit leaves the listing 3 s; at 12 s none is left, and the reason is written
    instead, the release as before."""
    import fairanon.solver.fulldomain as fulldomain

    given = []
    listing = fulldomain.candidates

    def recorded(*args, time_limit=None, **kwargs):
        given.append(time_limit)
        return listing(*args, time_limit=time_limit, **kwargs)

    monkeypatch.setattr(fulldomain, "candidates", recorded)
    monkeypatch.setattr("fairanon._limits.perf_counter", lambda: 100.0)  # before the method
    clock = iter([100.0, 107.0])  # the command's start, after the method
    monkeypatch.setattr(CLI, "perf_counter", lambda: next(clock))
    code, out, _ = run(capsys, "anonymize", job, "--out", tmp_path / "a", "--candidates", tmp_path / "a.json",
                       "--time-limit", "10")
    assert code == 0 and given == [3.0] and "3 of the lattice's 4 nodes meet the requirements" in out
    clock = iter([100.0, 112.0])
    code, out, _ = run(capsys, "anonymize", job, "--out", tmp_path / "b", "--candidates", tmp_path / "b.json",
                       "--time-limit", "10")
    reason = "no time left: the time limit (10 s) was spent on the release"
    assert code == 0 and given == [3.0] and f"no candidates listed ({reason})" in out
    assert json.loads((tmp_path / "b.json").read_text()) == {"error": reason}
    assert (tmp_path / "b" / "release.csv").read_bytes() == (tmp_path / "a" / "release.csv").read_bytes()


def test_candidates_never_replace_an_input_or_the_runs_own_outputs(job, tmp_path, capsys,
                                                                  monkeypatch):
    """--candidates naming the job file or the run's report (which it replaced,
    dropping the release's manifest) is refused before any work."""

    def forbidden(*args, **kwargs):
        raise AssertionError("the anonymization ran although --candidates was refused")

    monkeypatch.setattr(fairanon.api, "anonymize", forbidden)
    before = job.read_bytes()
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o", "--candidates", job)
    assert code == 2 and "is an input of this command" in err and job.read_bytes() == before
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o", "--candidates",
                       tmp_path / "o" / "report.json")
    assert code == 2 and "one of the run's own outputs" in err
    assert not (tmp_path / "o").exists()


def test_ctrl_c_while_listing_the_candidates_leaves_the_outputs_as_they_were(job, tmp_path, capsys,
                                                                             monkeypatch):
    """The candidates are listed before anything is written and written with the release
    and the report: a Ctrl-C while they are listed leaves no output (it left the release
    and the report of the run, exit 130)."""
    from fairanon.solver import fulldomain

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fulldomain, "candidates", interrupted)
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o", "--candidates",
                       tmp_path / "c.json")
    assert code == 130 and "interrupted" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.yaml"]
