"""A CSV file's numeric columns on the Dask engine, read in blocks of a few bytes (many
partitions): each column gets the type pandas gives the whole file on one machine,
whatever the partitions hold. Dask's synchronous scheduler: the tests stay fast."""

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")

import fairanon as fa  # noqa: E402
from fairanon.distributed import instance as dask_instance_module  # noqa: E402
from fairanon.distributed import dask_instance  # noqa: E402
from fairanon.jobs import read_table  # noqa: E402

pytestmark = pytest.mark.usefixtures("synchronous")

BIG = 10_000_000_000_000_000_000  # above int64's maximum 9,223,372,036,854,775,807
SCHEMA = fa.Schema([fa.Attribute("n", kind="numeric"), fa.Attribute("d", role="sensitive")])


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 16 bytes: a file of a few rows is read as several partitions."""
    monkeypatch.setattr(dask_instance_module, "CSV_BLOCKSIZE", 16)


def _write(tmp_path, values) -> str:
    path = tmp_path / "t.csv"
    path.write_text("n,d\n" + "".join(f"{v},{'ab'[i % 2]}\n" for i, v in enumerate(values)))
    return str(path)


def test_a_number_above_int64_in_one_partition_is_read_as_uint64_as_on_one_machine(tmp_path, small_blocks):
    path = _write(tmp_path, [1, 2, 3, 4, 5, 6, BIG])
    dinst = dask_instance(path, SCHEMA)
    assert dinst.data.npartitions > 2
    column = dinst.data["n"].compute()
    local = read_table(path)["n"]
    assert local.dtype == np.uint64  # pandas' own reading of the whole file
    assert column.dtype == np.uint64
    assert column.tolist() == [1, 2, 3, 4, 5, 6, BIG]  # not wrapped to a negative int64
    assert int(dinst.numbers["n"].index.max()) == BIG


def test_a_fraction_in_one_partition_makes_the_column_float(tmp_path, small_blocks):
    path = _write(tmp_path, [1, 2, 3, 4, 5, 6, BIG, 1.5])
    column = dask_instance(path, SCHEMA).data["n"].compute()
    assert column.dtype == np.float64
    assert column.tolist() == [1, 2, 3, 4, 5, 6, float(BIG), 1.5]


@pytest.mark.parametrize("blocksize", [16, None])
def test_a_number_above_int64_beside_a_negative_one_is_float_on_both_engines(tmp_path, monkeypatch, blocksize):
    """-1 and 10**19 fit no integer type: float64 on one machine (the Instance converts
    the text pandas reads) and on Dask, whether they fall in one partition or in two."""
    if blocksize is not None:
        monkeypatch.setattr(dask_instance_module, "CSV_BLOCKSIZE", blocksize)
    path = _write(tmp_path, [-1, 2, 3, 4, 5, 6, BIG])
    dinst = dask_instance(path, SCHEMA)
    assert (dinst.data.npartitions > 2) == (blocksize is not None)
    column = dinst.data["n"].compute()
    local = fa.Instance(read_table(path), SCHEMA).codes("n")  # pandas reads the column as text
    assert local.dtype == column.dtype == np.float64
    assert column.tolist() == local.tolist() == [-1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1e19]


def test_whole_numbers_within_int64_stay_int64(tmp_path, small_blocks):
    path = _write(tmp_path, [-1, 2, 3, 4, 5, 6, 7])
    column = dask_instance(path, SCHEMA).data["n"].compute()
    assert column.dtype == np.int64
    assert column.tolist() == pd.read_csv(path)["n"].tolist()


@pytest.mark.parametrize("values", [[-1, 2, 3, 4, 5, 6, BIG], [1, 2, 3, 4, 5, 6, 2**64]],
                         ids=["negative-beside-uint64", "above-uint64"])
@pytest.mark.parametrize("blocksize", [32, None])  # 32 bytes: each block holds a row's start
def test_whole_numbers_no_integer_type_holds_are_the_same_floats_on_both_engines(tmp_path, monkeypatch, values,
                                                                                 blocksize):
    """pandas reads -1 beside 10**19 (or a number above uint64's maximum) as text, which
    pd.to_numeric(errors="raise") leaves as it is: one machine's Instance held the text
    and Mondrian failed on it with a traceback. Both engines read the column with
    parse_numbers (float64), in one partition or in several, and release the same table."""
    if blocksize is not None:
        monkeypatch.setattr(dask_instance_module, "CSV_BLOCKSIZE", blocksize)
    path = _write(tmp_path, values)
    assert read_table(path)["n"].dtype.kind not in "iuf"  # the parser's text, or Python ints
    local = fa.Instance(read_table(path), SCHEMA)
    dinst = dask_instance(path, SCHEMA)
    assert local.table["n"].dtype == dinst.data["n"].dtype == np.float64
    floats = [float(v) for v in values]  # Python's float(int): the nearest double
    assert local.table["n"].tolist() == dinst.data["n"].compute().tolist() == floats
    reqs = [fa.KAnonymity(2)]
    single = fa.anonymize(local, reqs, method="mondrian")
    assert fa.verify(local, single, reqs).passed
    dist = fa.anonymize(dinst, reqs, method="mondrian", engine="dask").compute()
    assert dist.table.sort_index().equals(single.table.sort_index())


def test_an_empty_partition_is_anonymized_as_on_one_machine(tmp_path, small_blocks):
    """A partition left empty (every row dropped for a missing value, or the last 16-byte
    CSV block, inside the 23-byte row of 10**19, holding no row's start): Dask's Mondrian
    coded it as an instance and failed ("has an empty table"); it releases the table of
    one machine's Mondrian."""
    import dask.dataframe as dd

    reqs = [fa.KAnonymity(2)]
    table = pd.DataFrame({"n": [1.0, 2, 3, 4, None, None, None, None, 5, 6, 7, 8], "d": list("ab" * 6)})
    frame = dd.from_pandas(table, npartitions=3, sort=False)
    dropped = dask_instance(frame, SCHEMA, missing="drop")
    assert [len(p) for p in dropped.data.partitions] == [4, 0, 4]
    path = _write(tmp_path, [1, 2, 3, 4, 5, 6, BIG])
    read = dask_instance(path, SCHEMA)
    assert [len(p) for p in read.data.partitions] == [4, 3, 0]
    for dinst, local in ((dropped, fa.Instance(table, SCHEMA, missing="drop")),
                         (read, fa.Instance(read_table(path), SCHEMA))):
        single = fa.anonymize(local, reqs, method="mondrian")
        assert fa.verify(local, single, reqs).passed
        dist = fa.anonymize(dinst, reqs, method="mondrian", engine="dask").compute()
        assert dist.table.sort_index().equals(single.table.sort_index())
