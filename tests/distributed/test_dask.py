"""The Dask engine against the single-machine one, on a LocalCluster of 2 workers."""

import json
import logging
import os
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import fairanon as fa  # noqa: E402
from fairanon._limits import MIN_METHOD_SECONDS  # noqa: E402
from fairanon.cli import main  # noqa: E402
from fairanon.distributed import as_dask_instance, mondrian_dask, verify_dask  # noqa: E402
from fairanon.heuristics.mondrian import mondrian  # noqa: E402
from fairanon.instances.synthetic import population  # noqa: E402
from fairanon.models.verify import verify  # noqa: E402
from fairanon.release import Release  # noqa: E402

from fairanon.instances.hierarchy import Hierarchy  # noqa: E402

# The broken releases of tests/models/test_verify.py.
CITY = Hierarchy.from_mapping({"*": {"north": ["n1", "n2"], "south": ["s1", "s2", "s3"]}})
DISEASES = ["cold", "flu", "hiv", "ulcer"]
ROWS = [
    (21, "n1", "F", "cold", "no"),
    (22, "n2", "F", "flu", "yes"),
    (23, "n1", "M", "hiv", "no"),
    (24, "n2", "M", "cold", "yes"),
    (27, "s1", "F", "flu", "no"),
    (28, "s2", "F", "ulcer", "yes"),
    (29, "s3", "M", "cold", "no"),
    (30, "s1", "M", "hiv", "yes"),
]
GROUPS = np.array([0, 0, 1, 1, 2, 2, 3, 3])
REQUIREMENTS = [
    fa.KAnonymity(2),
    fa.LDiversity(2),
    fa.TCloseness(Fraction(1, 2), distance="ordered"),
    fa.DiversityConstraint({"city": "n1"}, 0, 0),
    fa.AlphaProtection("RD", 1),
]


def _instance(rows):
    df = pd.DataFrame(rows, columns=["age", "city", "sex", "disease", "loan"])
    schema = fa.Schema(
        [
            fa.Attribute("age", kind="numeric"),
            fa.Attribute("city", hierarchy=CITY),
            fa.Attribute("sex", role="protected", protected=["F"], hierarchy=Hierarchy.flat(["F", "M"])),
            fa.Attribute("disease", role="sensitive", kind="ordered", order=DISEASES),
            fa.Attribute("loan", role="decision", negative="no", hierarchy=Hierarchy.flat(["no", "yes"])),
        ]
    )
    return fa.Instance(df, schema, name="random")


def _broken(release, edit):
    table = release.table.copy()
    for col in table.columns:
        table[col] = table[col].astype(str)
    edit(table)
    return Release(table, groups=release.groups, provenance={"method": "broken"})


@pytest.fixture(scope="module")
def big(client):
    """100,000 records in 4 partitions: with parts of at most 20,000 records (a fifth of
    the table) the top of the tree is cut from counts over three levels, as with 200,000
    records and parts of 40,000 (the size these tests used, for twice the time)."""
    inst = population(100_000, n_qi=7, seed=3)
    return inst, as_dask_instance(inst, partitions=4)


def _same_report(a, b):
    da, db = a.to_dict(), b.to_dict()
    for key in ("elapsed_s",):
        da.pop(key), db.pop(key)
    assert da == db


@pytest.mark.parametrize(
    "reqs",
    [
        pytest.param([fa.KAnonymity(10)], marks=pytest.mark.slow, id="k"),
        pytest.param([fa.KAnonymity(5), fa.LDiversity(3)], id="k+l"),
        pytest.param([fa.KAnonymity(5), fa.TCloseness(Fraction(1, 4), distance="equal")],
                     marks=pytest.mark.slow, id="k+t"),
    ],
)
def test_release_and_report_equal_the_single_machine_ones(big, reqs):
    inst, dinst = big
    single = mondrian(inst, reqs)
    rel = mondrian_dask(dinst, reqs, max_rows=20_000)
    assert rel.provenance["distributed_levels"] >= 2  # the top of the tree was cut from counts
    local = rel.compute()
    pos = local.table.index.get_indexer(inst.table.index)  # the same release in the instance's row order
    assert local.table.iloc[pos].astype(str).equals(single.table.astype(str))
    assert np.array_equal(local.groups[pos], single.groups)
    assert local.status == single.status
    # The same report, read from the same released rows (witnesses depend on row order).
    single_report = verify(inst, local, reqs)
    _same_report(single_report, fa.verify(dinst, local, reqs, engine="dask"))
    if len(reqs) == 1:  # the release as the distributed method leaves it, read in place
        report = verify_dask(dinst, rel, reqs)
        assert report.passed and report.n_classes == single_report.n_classes
        assert report.metrics == single_report.metrics


def test_a_part_too_large_for_a_task_that_cannot_be_cut_is_one_class(client):
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({
        "age": np.where(np.arange(n) < 2500, 30, rng.integers(20, 60, n)),
        "sex": np.where(np.arange(n) < 2500, "F", rng.choice(["F", "M"], n)),
        "disease": rng.choice(["a", "b", "c"], n),
    })
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("sex"),
                        fa.Attribute("disease", role="sensitive")])
    inst = fa.Instance(df, schema)
    reqs = [fa.KAnonymity(4), fa.LDiversity(2)]
    rel = mondrian_dask(as_dask_instance(inst, partitions=3), reqs, max_rows=200)
    ordered = rel.compute(order=inst.table.index)
    single = mondrian(inst, reqs)
    assert ordered.table.astype(str).equals(single.table.astype(str))
    assert np.array_equal(ordered.groups, single.groups)


def test_infeasible_release_equals_the_single_machine_one(big):
    inst, dinst = big
    reqs = [fa.KAnonymity(75_000)]  # more than the 70,098 records of race=White
    single = mondrian(inst, reqs)
    rel = mondrian_dask(dinst, reqs)
    assert rel.status == single.status == fa.Status.INFEASIBLE and rel.reason == single.reason
    assert rel.compute(order=inst.table.index).table.astype(str).equals(single.table.astype(str))


def test_other_methods_say_which_run_distributed(big):
    inst, _ = big
    with pytest.raises(fa.IncompatibleRequirementError, match="run distributed are mondrian"):
        fa.anonymize(inst, [fa.KAnonymity(5)], method="sabre", engine="dask")
    with pytest.raises(fa.IncompatibleRequirementError, match="relaxed"):
        fa.anonymize(inst, [fa.KAnonymity(5)], method="mondrian", engine="dask", relaxed=True)


# ------------------------------------------------------------ broken releases
def _good():
    inst = _instance(ROWS)
    return inst, Release(fa.release.generalize_partition(inst, GROUPS), groups=GROUPS, provenance={"method": "hand"})


def _edits():
    def ungeneralized(table):
        table.loc[0, "age"] = "21"

    def moved_row(table):
        for col in ("age", "city"):
            table.loc[1, col] = table.loc[2, col]

    def moved_sensitive(table):
        table.loc[[2, 3], "disease"] = "ulcer"

    def diversity(table):
        table.loc[0, "city"] = "n1"

    def alpha(table):
        table.loc[0, "age"] = "21"
        table.loc[3, "age"] = "21"

    def unreadable(table):
        table.loc[5, "age"] = "thirty"

    def many_untruthful(table):
        # unreadable and readable-but-wrong labels in one column, and in two columns
        table.loc[[1, 4], "age"] = "thirty"
        table.loc[[2, 6], "age"] = "99"
        table.loc[[0, 7], "city"] = "nowhere"
        table.loc[3, "city"] = "s2"

    return [ungeneralized, moved_row, moved_sensitive, diversity, alpha, unreadable, many_untruthful]


@pytest.mark.parametrize("edit", _edits(), ids=lambda f: f.__name__)
def test_the_distributed_verifier_catches_every_broken_release(client, edit):
    inst, release = _good()
    reqs = REQUIREMENTS + [fa.TCloseness(Fraction(1, 3), distance="ordered"), fa.AlphaProtection("RD", Fraction(1, 2))]
    broken = _broken(release, edit)
    single = verify(inst, broken, reqs)
    assert not single.passed
    if edit.__name__ == "many_untruthful":  # every untruthful cell counted, the unreadable ones too
        assert single["truthfulness"].achieved == 7 and single["truthfulness"].witness["row"] == 1
    _same_report(single, fa.verify(inst, broken, reqs, engine="dask"))


@pytest.mark.parametrize("edit", _edits(), ids=lambda f: f.__name__)
def test_witnesses_are_the_same_beside_unknown_and_lost_rows(client, edit):
    # Rows only one side of the join has leave gaps in its integer codes: the witnesses
    # still show the original values as the single-machine verifier does.
    inst, release = _good()
    broken = _broken(release, edit)
    extra = broken.table.iloc[[6]].copy()
    extra.index = pd.Index([99])
    table = pd.concat([broken.table.drop(index=[7]), extra])
    broken = Release(table, groups=np.zeros(len(table)), provenance={"method": "broken"})
    single = verify(inst, broken, REQUIREMENTS)
    assert not single.passed and not single["rows"].passed
    _same_report(single, fa.verify(inst, broken, REQUIREMENTS, engine="dask"))


def test_lost_duplicated_and_unknown_rows(client):
    inst, release = _good()
    table = release.table.iloc[[0, 0, 1, 2, 3, 4, 5, 6]].copy()
    extra = release.table.iloc[[1]].copy()
    extra.index = pd.Index([99])
    table = pd.concat([table, extra])
    broken = Release(table, groups=np.zeros(len(table)))
    single = verify(inst, broken, [fa.KAnonymity(1)])
    assert single["rows"].witness["lost"] == [7] and single["rows"].witness["unknown"] == [99]
    _same_report(single, fa.verify(inst, broken, [fa.KAnonymity(1)], engine="dask"))


def test_requirements_the_distributed_verifier_does_not_check(client):
    inst, release = _good()
    with pytest.raises(fa.IncompatibleRequirementError, match="single-machine verifier"):
        fa.verify(inst, release, [fa.MultiplicativeTCloseness(2)], engine="dask")


# ------------------------------------------------------------ Parquet and the CLI
JOB = """
instance:
  parquet: data
  id_column: record_id
  schema:
    age: {role: qi, type: numeric}
    zip: {role: qi}
    education: {role: qi}
    race: {role: protected, protected: [Black]}
    disease: {role: sensitive}
requirements:
  - k_anonymity: {k: 10}
  - l_diversity: {l: 2}
method: mondrian
"""


@pytest.mark.slow
def test_parquet_directory_in_parquet_release_out_and_verify_passes(tmp_path, client, monkeypatch, capsys):
    inst = population(20_000, n_qi=4, seed=1)
    table = inst.table.reset_index()
    (tmp_path / "data").mkdir()
    for i in range(3):
        table.iloc[i::3].to_parquet(tmp_path / "data" / f"part{i}.parquet", index=False)
    (tmp_path / "job.yaml").write_text(JOB)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("fairanon.distributed.command.client", _reuse(client))
    assert main(["anonymize", "job.yaml", "--engine", "dask", "--max-rows", "5000", "--out", "out"]) == 0
    assert os.path.isdir("out/release.parquet")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["report"]["passed"] and "worker_peak_rss_mb" in report["resources"]
    assert main(["verify", "job.yaml", "--release", "out/release.parquet"]) == 0
    assert main(["verify", "job.yaml", "--release", "out/release.parquet", "--engine", "dask"]) == 0
    # The single-machine engine reads the same directory and writes Parquet too.
    assert main(["anonymize", "job.yaml", "--out", "local", "--format", "parquet"]) == 0
    local = pd.read_parquet("local/release.parquet")
    dist = pd.read_parquet("out/release.parquet")
    assert local.astype(str).sort_index().equals(dist.astype(str).sort_index())
    capsys.readouterr()


def test_a_parquet_path_with_a_schema_numbers_the_records_in_file_order(tmp_path, client):
    inst = population(6_000, n_qi=3, seed=2)
    (tmp_path / "data").mkdir()
    for i in range(3):
        inst.table.iloc[i * 2000 : (i + 1) * 2000].to_parquet(tmp_path / "data" / f"p{i}.parquet", index=False)
    reqs = [fa.KAnonymity(5)]
    rel = fa.anonymize(str(tmp_path / "data"), reqs, method="mondrian", engine="dask", schema=inst.schema)
    single = mondrian(inst, reqs)  # the population's ids are 0..n-1 in row order, as Dask numbers them
    assert rel.compute(order=inst.table.index).table.astype(str).equals(single.table.astype(str))
    assert fa.verify(str(tmp_path / "data"), rel, reqs, engine="dask", schema=inst.schema).passed


def _reuse(client):
    import contextlib

    @contextlib.contextmanager
    def reuse(scheduler, workers=None):
        yield client

    return reuse


def test_the_distributed_top_stops_at_the_time_limit(big):
    inst, dinst = big
    reqs = [fa.KAnonymity(10)]
    rel = fa.anonymize(dinst, reqs, method="mondrian", engine="dask", time_limit=1e-9, max_rows=20_000)
    # Out of time after the roots' counts: every root (protected value) is one class.
    assert rel.status == "FEASIBLE" and rel.provenance["time_limit_reached"]
    local = rel.compute(order=inst.table.index)
    single = mondrian(inst, reqs, time_limit=1e-9)
    assert single.provenance["time_limit_reached"] and local.provenance["time_limit_reached"]
    assert local.table.astype(str).equals(single.table.astype(str))
    assert np.array_equal(local.groups, single.groups)
    assert verify(inst, local, reqs).passed


def test_tasks_that_finish_parts_stop_at_the_time_limit(client, tmp_path):
    import time

    inst = population(20_000, n_qi=4, seed=1)
    dinst = as_dask_instance(inst, partitions=2)
    reqs = [fa.KAnonymity(5)]
    rel = mondrian_dask(dinst, reqs, time_limit=0.2, max_rows=50_000)  # every root finished by a task
    assert not rel.provenance["time_limit_reached"]
    time.sleep(0.3)  # the tasks run after the deadline: each leaves its parts whole
    single = mondrian(inst, reqs, time_limit=1e-9)
    local = rel.compute(order=inst.table.index)
    assert local.provenance["time_limit_reached"]
    assert local.table.astype(str).equals(single.table.astype(str))
    written = rel.to_parquet(str(tmp_path / "release"))
    assert written.provenance["time_limit_reached"]
    assert verify_dask(dinst, str(tmp_path / "release"), reqs).passed


@pytest.mark.slow
def test_cli_time_limit_on_dask(tmp_path, client, monkeypatch, capsys):
    inst = population(20_000, n_qi=4, seed=1)
    inst.table.reset_index().to_parquet(tmp_path / "data.parquet", index=False)
    (tmp_path / "job.yaml").write_text(JOB.replace("parquet: data", "parquet: data.parquet"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("fairanon.distributed.command.client", _reuse(client))
    assert main(["anonymize", "job.yaml", "--engine", "dask", "--max-rows", "5000", "--time-limit", "1e-9",
                 "--out", "out"]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["report"]["passed"] and report["release"]["provenance"]["time_limit_reached"]
    # Start-up and loading used the limit: the method got the least it is given.
    assert report["release"]["provenance"]["params"]["time_limit"] == MIN_METHOD_SECONDS
    capsys.readouterr()


def test_cli_on_dask_gives_the_reason_in_the_report(tmp_path, client, monkeypatch, capsys):
    """As on one machine (tests/heuristics/test_diva.py's report of a reason): the report
    the command writes and prints gives the method's reason, printed once. Under k = 300
    the records of race Asian (125) fail k: INFEASIBLE. The Dask report had no reason,
    and the command printed it after the report (twice once the report gives it)."""
    inst = population(2_000, n_qi=4, seed=1)
    inst.table.reset_index().to_parquet(tmp_path / "data.parquet", index=False)
    (tmp_path / "job.yaml").write_text(JOB.replace("parquet: data", "parquet: data.parquet")
                                       .replace("{k: 10}", "{k: 300}"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("fairanon.distributed.command.client", _reuse(client))
    capsys.readouterr()
    assert main(["anonymize", "job.yaml", "--engine", "dask", "--out", "out"]) == 1
    document = json.loads((tmp_path / "out" / "report.json").read_text())
    reason = document["release"]["reason"]
    assert document["report"]["status"] == "INFEASIBLE" and "300-anonymity" in reason
    assert document["report"]["reason"] == reason
    # The verifier, reading the written release, finds k failed as the reason says.
    assert [c["passed"] for c in document["report"]["checks"] if c["name"] == "300-anonymity"] == [False]
    printed = capsys.readouterr().out.splitlines()
    assert printed.count(f"  reason: {reason}") == 1


def test_cli_time_limit_on_dask_counts_from_the_command_start(tmp_path, monkeypatch):
    """The method gets the command's limit less what start-up and loading took, as on one
    machine (it used to get the whole limit)."""
    import argparse
    import contextlib
    import time

    import fairanon.api
    import fairanon.distributed.command as command

    given = {}

    class Given(Exception):
        pass

    def run(*args, time_limit=None, **kwargs):
        given["time_limit"] = time_limit
        raise Given

    job = argparse.Namespace(method="mondrian", seed=0, options={}, time_limit=None, memory_limit=None,
                             requirements=[fa.KAnonymity(2)])
    monkeypatch.setattr(command, "client", lambda *a, **k: contextlib.nullcontext())
    monkeypatch.setattr(command, "_instance", lambda *a: (None, job))
    monkeypatch.setattr(fairanon.api, "anonymize", run)
    args = argparse.Namespace(job=None, dataset=None, method=None, seed=None, time_limit=10.0, memory_limit=None,
                              out=str(tmp_path / "out"), scheduler=None, workers=None, candidates=None,
                              max_rows=None, started=time.perf_counter() - 3.0)
    with pytest.raises(Given):
        command.anonymize(args)
    assert 0 < given["time_limit"] <= 7.0


@pytest.mark.slow
def test_job_file_memory_limit_on_dask(tmp_path, client, monkeypatch, capsys):
    """The job's memory_limit reaches the Dask engine as on one machine (where
    tests/test_memory_limits.py::test_job_file_memory_limit checks it): the client's
    risk figures keep to it; --memory-limit overrides it."""
    inst = population(2_000, n_qi=4, seed=1)
    inst.table.reset_index().to_parquet(tmp_path / "data.parquet", index=False)
    (tmp_path / "job.yaml").write_text(JOB.replace("parquet: data", "parquet: data.parquet")
                                       + "memory_limit: 1000\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("fairanon.distributed.command.client", _reuse(client))
    args = ["anonymize", "job.yaml", "--engine", "dask"]
    assert main(args + ["--out", "small"]) == 0
    report = json.loads((tmp_path / "small" / "report.json").read_text())
    assert report["report"]["passed"]
    # SUDA on 2,000 records needs more than 1 kB: refused, naming the job's limit.
    assert "memory limit of 1 kB (memory_limit=1000)" in report["risk"]["error"]
    assert main(args + ["--memory-limit", "1GB", "--out", "large"]) == 0
    report = json.loads((tmp_path / "large" / "report.json").read_text())
    assert report["risk"]["suda"]["max_size"] == 3 and report["risk"]["sample"]["n_records"] == 2_000
    capsys.readouterr()


def test_a_local_cluster_sizes_the_shuffle_buffers_to_its_workers():
    from fairanon.distributed import local_client

    with local_client(2, "256MB") as c:
        settings = c.run(lambda: (__import__("dask").config.get("distributed.p2p.comm.buffer"),
                                  __import__("dask").config.get("distributed.worker.memory.pause")))
        limits = [w["memory_limit"] for w in c.scheduler_info()["workers"].values()]
    assert sorted(settings.values()) == [(32_000_000, False)] * 2
    assert limits == [256_000_000] * 2



class _Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.mark.slow
def test_routine_shuffle_messages_do_not_reach_the_terminal(client, tmp_path):
    """The scheduler logs the start and end of each shuffle as warnings; with the
    logging Dask configures by default (a handler on "distributed" printing warnings
    to the terminal) they would be printed on every run."""
    dask_logger = logging.getLogger("distributed")
    level = dask_logger.level
    shown = _Collect()  # sees what Dask's own handler on the same logger prints
    dask_logger.setLevel(logging.WARNING)  # as a user's session has it
    dask_logger.addHandler(shown)
    try:
        inst = population(20_000, n_qi=4, seed=2)
        dinst = as_dask_instance(inst, partitions=4)
        reqs = [fa.KAnonymity(5)]
        rel = mondrian_dask(dinst, reqs, max_rows=2_000)
        rel.to_parquet(str(tmp_path / "release"))  # the shuffle of every record to its part
        report = verify_dask(dinst, str(tmp_path / "release"), reqs)  # the join by record id
    finally:
        dask_logger.setLevel(level)
        dask_logger.removeHandler(shown)
    assert report.passed
    assert not [m for m in shown.messages if "initialized by task" in m or "deactivated due to stimulus" in m]


def _peaks(queue):
    import resource

    from fairanon.distributed.cluster import peak_rss_mb

    queue.put((peak_rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


@pytest.mark.slow
def test_worker_peaks_are_the_workers_own():
    """A process started by one that once used much memory (as the workers of a
    LocalCluster are) inherits that peak in ru_maxrss: Linux keeps it over exec. The
    peaks the engine reports (:func:`peak_memory`) are each process's own."""
    import multiprocessing
    import resource

    block = np.ones(400 * 2**20 // 8)  # 400 MB in this process, freed before the child starts
    block[::512] = 2.0
    del block
    inherited = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    context = multiprocessing.get_context("spawn")  # as Dask's nannies start their workers
    queue = context.Queue()
    child = context.Process(target=_peaks, args=(queue,))
    child.start()
    own, rusage = queue.get(timeout=120)
    child.join()
    if rusage < inherited:  # pragma: no cover - a system that does not carry the peak over exec
        pytest.skip("this system does not carry the peak over exec")
    assert own < inherited - 200


def test_peak_memory_reads_every_worker(client):
    from fairanon.distributed.command import peak_memory

    memory = peak_memory(client)
    assert len(memory["worker_peak_rss_mb"]) == 2 and memory["process_peak_rss_mb"] > 0
