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
