"""A worker's log of a failed task on a cluster (two in-process workers): a record id
that is not the instance's, or a reader's OSError, reaches the user as the client's
one-line error alone; a fault keeps the worker's log with its traceback."""

import logging
import os

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import fairanon as fa  # noqa: E402
from fairanon.distributed import instance as dask_instance_module  # noqa: E402
from fairanon.distributed.cluster import _FAILED_TASK, _quiet_failed_tasks  # noqa: E402
from fairanon.distributed.instance import read_table  # noqa: E402


@pytest.fixture
def quiet(client, caplog):
    """The cluster's workers with the filter local_client gives them (removed after the
    test: the workers run in this process), their failed tasks' logs captured."""
    client.run(_quiet_failed_tasks)
    caplog.set_level(logging.ERROR, logger="distributed.worker")
    yield caplog
    logging.getLogger("distributed.worker").removeFilter(_FAILED_TASK)


def _failed_tasks(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Compute Failed")]


def _release(tmp_path, ids) -> str:
    path = str(tmp_path / "release.parquet")
    pd.DataFrame({"record_id": pd.Series(ids, dtype=object), "a": [str(i) for i in range(len(ids))]}).to_parquet(
        path, index=False)
    return path


def test_a_record_id_of_the_wrong_type_logs_no_worker_traceback(quiet, tmp_path):
    path = _release(tmp_path, ["0", "1", "x", "3"])
    with pytest.raises(fa.InvalidParameterError, match=r"record_id values of .* are not the instance's record ids "
                                                       r"\(int64\): 'x' is not a record id of type int64"):
        read_table(path, id_column="record_id", what="the release", id_type=np.dtype("int64"))
    assert _failed_tasks(quiet) == []


def test_a_reader_s_os_error_logs_no_worker_traceback(quiet, tmp_path):
    """A CSV file removed once Dask has read its first rows: the tasks' FileNotFoundError."""
    path = tmp_path / "table.csv"
    path.write_text("a,b\n1,x\n2,y\n")
    ddf = dd.read_csv(str(path), dtype=str)
    os.remove(path)
    with pytest.raises(FileNotFoundError):
        ddf.compute()
    assert _failed_tasks(quiet) == []


def test_a_fault_keeps_the_worker_s_traceback(quiet, tmp_path, monkeypatch):
    def broken(values, dtype):
        raise KeyError("a fault")

    monkeypatch.setattr(dask_instance_module, "as_record_ids", broken)
    path = _release(tmp_path, ["0", "1", "2", "3"])
    with pytest.raises(KeyError, match="a fault"):
        read_table(path, id_column="record_id", what="the release", id_type=np.dtype("int64"))
    logged = _failed_tasks(quiet)
    assert logged and "KeyError('a fault')" in logged[0] and "Traceback" in logged[0]


@pytest.mark.slow
def test_a_record_id_of_the_wrong_type_on_a_local_cluster_is_one_line(tmp_path, capfd):
    """fairanon verify --engine dask on a LocalCluster of worker processes (they write to
    this process's standard error, captured at its file descriptor): a Parquet release
    whose record id 'x' is not one of the instance's whole-number ids is the one-line
    error alone, without the worker's log of the failed task."""
    from fairanon.cli import main

    (tmp_path / "data.csv").write_text("age,zip,disease\n" + "".join(
        f"{20 + i},{13050 + i % 3},{'flu' if i % 2 else 'cold'}\n" for i in range(8)), encoding="utf-8")
    job = tmp_path / "job.yaml"
    job.write_text("instance:\n  csv: data.csv\n  schema:\n    age: {role: qi, type: numeric}\n    zip: {role: qi}\n"
                   "    disease: {role: sensitive}\nrequirements:\n  - k_anonymity: {k: 2}\nmethod: mondrian\n",
                   encoding="utf-8")
    assert main(["anonymize", str(job), "--out", str(tmp_path / "o")]) == 0
    table = pd.read_csv(tmp_path / "o" / "release.csv", dtype=str, keep_default_na=False)
    table.loc[2, "record_id"] = "x"
    table.to_parquet(tmp_path / "release.parquet", index=False)
    capfd.readouterr()
    code = main(["verify", str(job), "--release", str(tmp_path / "release.parquet"), "--engine", "dask",
                 "--workers", "1"])
    out, err = capfd.readouterr()
    assert code == 2 and "are not the instance's record ids (int64): 'x' is not a record id of type int64" in err, err
    assert "Compute Failed" not in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def _kept(key, exception_text: str) -> bool:
    """Whether the filter keeps a worker's log of the task `key` that raised `exception_text`."""
    record = logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1,
                               "Compute Failed\nKey:       %s\nState:     %s\nTask:  %s\nException: %r\n"
                               "Traceback: %r\n", (key, "executing", "task", exception_text, "tb"), None)
    return _FAILED_TASK.filter(record)


def test_a_plain_os_error_s_log_is_dropped_in_a_reading_task_only():
    """distributed raises a plain OSError on a connection time-out, and a full disk or
    too many open files are plain OSErrors too: faults, whose log is kept; in a task that
    reads a file (the keys Dask gives them, seen on a cluster) it is a reader's."""
    faults = ("OSError('Timed out trying to connect to tcp://10.0.0.2:8786 after 30 s')",
              "OSError(28, 'No space left on device')", "OSError(24, 'Too many open files')")
    for key in (("shuffle-transfer-5f1c", 0), ("len-9a2e", 0), "finalize-3b7d", ("mondrian-cut-8c01", 2)):
        for fault in faults:
            assert _kept(key, fault), (key, fault)
    for key in (("read-csv-61ca", 0), ("read-_to_string_dtype-89bc", 3), ("read-fused-getitem-21aa", 0),
                ("read_parquet-18a8", 1)):
        assert not _kept(key, "OSError('Could not open Parquet input source')"), key
    # The subclasses only a file gives are a reader's in any task.
    assert not _kept(("len-9a2e", 0), "FileNotFoundError(2, 'No such file or directory')")


def test_arrow_s_errors_but_arrow_invalid_keep_their_log():
    """Arrow's errors on a file it cannot read are ArrowInvalid; ArrowMemoryError or
    ArrowNotImplementedError is a fault, whose log is kept, and the client raises it as it is."""
    import pyarrow

    from fairanon.distributed.instance import reading_failed

    assert not _kept(("read_parquet-18a8", 0), "ArrowInvalid('Parquet magic bytes not found in footer')")
    for fault in (pyarrow.ArrowMemoryError("malloc of size 64 failed"), pyarrow.ArrowNotImplementedError("x")):
        assert _kept(("read_parquet-18a8", 0), repr(fault)), fault
        assert not reading_failed(fault), fault
    assert reading_failed(pyarrow.ArrowInvalid("Parquet magic bytes not found in footer"))


def test_a_plain_os_error_of_a_task_that_reads_no_file_keeps_its_log(quiet):
    """On the cluster: a task (not a reader's) that raises distributed's connection
    time-out keeps the worker's log with its traceback."""
    def unreachable(part):
        raise OSError("Timed out trying to connect to tcp://10.0.0.2:8786 after 30 s")

    frame = dd.from_pandas(pd.DataFrame({"a": range(4)}), npartitions=2)
    with pytest.raises(OSError, match="Timed out trying to connect"):
        frame.map_partitions(unreachable, meta=frame._meta).compute()
    logged = _failed_tasks(quiet)
    assert logged and "Timed out trying to connect" in logged[0] and "Traceback" in logged[0]


def _damaged_parquet(tmp_path) -> str:
    """A Parquet file of a population, for the test to damage once Dask has read its
    metadata (its footer overwritten: Arrow's plain OSError "Couldn't deserialize thrift"
    in the reading task)."""
    path = tmp_path / "population.parquet"
    pd.DataFrame({"city": ["n1", "s1"] * 500, "age": [21, 24] * 500}).to_parquet(path, index=False)
    return str(path)


def test_a_plain_os_error_is_a_reader_s_only_when_a_file_is_read(tmp_path):
    """The client's reading_failed: a plain OSError raised within Dask's readers, or
    naming a file, is a bad file's (one line); distributed's connection time-out raised
    elsewhere is a fault, raised as it is."""
    from fairanon.distributed.instance import reading_failed

    path = _damaged_parquet(tmp_path)
    frame = dd.read_parquet(path)
    content = bytearray(open(path, "rb").read())
    content[-200:-8] = b"\x07" * 192
    open(path, "wb").write(bytes(content))
    with pytest.raises(OSError) as damaged:
        frame.compute(scheduler="synchronous")
    assert type(damaged.value) is OSError and reading_failed(damaged.value)
    assert reading_failed(OSError(24, "Too many open files", str(tmp_path / "x.csv")))

    def unreachable(part):
        raise OSError("Timed out trying to connect to tcp://10.0.0.2:8786 after 30 s")

    table = dd.from_pandas(pd.DataFrame({"a": range(4)}), npartitions=2)
    with pytest.raises(OSError) as fault:
        table.map_partitions(unreachable, meta=table._meta).compute(scheduler="synchronous")
    assert not reading_failed(fault.value)
    assert not reading_failed(OSError(28, "No space left on device"))
