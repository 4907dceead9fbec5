"""Record ids on the Dask engine: a Dask DataFrame or a Parquet file given as it is goes
through the check of a pandas table (a missing id, numbers beside text: the same
message). Dask's synchronous scheduler: the tests stay fast."""

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

import fairanon as fa  # noqa: E402
from fairanon.distributed import dask_instance  # noqa: E402
from fairanon.heuristics.mondrian import mondrian  # noqa: E402
from fairanon.instances.synthetic import population  # noqa: E402

MISSING = r"record ids of {what} include 1 missing value\(s\).*give every record an id \(or use engine='local'\)"
MIXED = r"record ids of {what} are of mixed kinds \(.*numbers beside text\).*\(or use engine='local'\)"


@pytest.fixture(autouse=True)
def synchronous():
    """Every task in this process, one after the other."""
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def inst():
    return population(60, n_qi=3, seed=7)


def _plain(inst) -> pd.DataFrame:
    """The instance's table with its categorical columns as text, as a file holds them."""
    table = inst.table.copy()
    for c in table.columns:
        if isinstance(table[c].dtype, pd.CategoricalDtype):
            table[c] = table[c].astype(str)
    return table


def _checks(report) -> list:
    return [(c.name, c.passed, c.achieved, c.witness) for c in report.checks]


def _objects(table: pd.DataFrame, ids: list, npartitions: int = 3):
    """A Dask DataFrame of `table` whose ids are Python objects (Dask would make them
    text with ``dataframe.convert-string`` on)."""
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_pandas(table.set_axis(pd.Index(ids, dtype=object, name="rid"), axis=0),
                              npartitions=npartitions, sort=False)


def test_a_dask_frame_with_numbers_beside_text_is_refused_as_a_pandas_table_is(inst):
    table = _plain(inst)
    # Numbers in some partitions and text in others: each partition alone is of one kind.
    ids = list(range(30)) + [f"r{i}" for i in range(30, 60)]
    frame = _objects(table, ids)
    assert frame.npartitions == 3
    for call in (lambda: fa.risk(frame, engine="dask", schema=inst.schema),
                 lambda: fa.verify(frame, frame, engine="dask", schema=inst.schema),
                 lambda: fa.anonymize(frame, [fa.KAnonymity(3)], engine="dask", schema=inst.schema)):
        with pytest.raises(fa.SchemaError, match=MIXED.format(what="instance 'instance'")):
            call()
    # The same ids in a pandas table: the same message.
    with pytest.raises(fa.SchemaError, match=MIXED.format(what="instance 'ids'")):
        fa.risk(fa.Instance(table.set_axis(pd.Index(ids, dtype=object), axis=0), inst.schema, name="ids"),
                engine="dask")


def test_a_dask_frame_or_parquet_file_with_a_missing_id_is_refused(inst, tmp_path):
    table = _plain(inst)
    floats = table.set_axis(pd.Index([np.nan, *range(1, 60)], dtype=float, name="rid"), axis=0)
    with pytest.raises(fa.SchemaError, match=MISSING.format(what="instance 'instance'")):
        fa.risk(dd.from_pandas(floats, npartitions=3, sort=False), engine="dask", schema=inst.schema)
    # A Parquet file whose id column, or index, has a null; and a Dask frame's id column.
    column = table.assign(rid=[f"r{i}" for i in range(59)] + [None])
    column.to_parquet(tmp_path / "column.parquet", index=False)
    column.set_index("rid").to_parquet(tmp_path / "index.parquet")
    with pytest.raises(fa.SchemaError, match=MISSING.format(what="instance 'column'")):
        fa.risk(dask_instance(str(tmp_path / "column.parquet"), inst.schema, id_column="rid"), engine="dask")
    with pytest.raises(fa.SchemaError, match=MISSING.format(what="instance 'index'")):
        fa.risk(str(tmp_path / "index.parquet"), engine="dask", schema=inst.schema)
    with pytest.raises(fa.SchemaError, match=MISSING.format(what="instance 'frame'")):
        dask_instance(dd.from_pandas(column, npartitions=3), inst.schema, id_column="rid", name="frame")


def test_a_release_given_as_a_dask_frame_or_parquet_file_is_checked(inst, tmp_path):
    release = mondrian(inst, [fa.KAnonymity(3)])
    table = release.table.astype(str)
    holes = table.set_axis(pd.Index([np.nan, *table.index[1:]], dtype=float, name="rid"), axis=0)
    with pytest.raises(fa.SchemaError, match=MISSING.format(what="the release")):
        fa.verify(inst, dd.from_pandas(holes, npartitions=3, sort=False), [fa.KAnonymity(3)], engine="dask")
    holes.to_parquet(tmp_path / "release.parquet")
    with pytest.raises(fa.SchemaError, match=MISSING.format(what="the release")):
        fa.risk(inst, str(tmp_path / "release.parquet"), engine="dask")
    with pytest.raises(fa.SchemaError, match=MIXED.format(what="the release")):
        fa.verify(inst, _objects(table, [*range(30), *(f"r{i}" for i in range(30, 60))]), engine="dask")


def test_whole_numbers_held_as_objects_in_a_dask_frame_are_ids_as_in_a_pandas_table(inst):
    # Record ids 0..59 as Python ints in an object index: read as int64, as dask_ids reads a
    # pandas table's, so the witnesses name the records as one machine does.
    table = _plain(inst)
    frame = _objects(table, list(table.index))
    release = mondrian(inst, [fa.KAnonymity(3)])
    rel_frame = _objects(release.table.astype(str), list(release.table.index))
    reqs = [fa.KAnonymity(10)]  # fails: a witness class and its records
    remote = fa.verify(frame, rel_frame, reqs, engine="dask", schema=inst.schema)
    local = fa.verify(inst, release, reqs)
    assert not local.passed
    assert _checks(remote) == _checks(local)
    records = local["10-anonymity"].witness["records"]
    assert records and all(type(r) is int for r in records)

