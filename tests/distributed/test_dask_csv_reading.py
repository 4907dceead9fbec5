"""CSV files the readers must refuse, read by the Dask engine as one machine reads them:
the same one-line error, never shifted columns or a traceback. Dask's synchronous
scheduler unless a test needs workers: the tests stay fast."""

import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

import fairanon as fa  # noqa: E402
from fairanon.distributed import dask_instance  # noqa: E402

MORE_FIELDS = r"has rows with more fields than its header has names \(3\)"
TEXT = fa.Schema([fa.Attribute("age"), fa.Attribute("d"), fa.Attribute("n")])


@pytest.mark.usefixtures("synchronous")
@pytest.mark.parametrize("ages", [(20, 21, 22), (20, 35, 22)])
def test_a_first_data_row_with_a_field_too_many_is_refused_on_both_engines(tmp_path, ages):
    """pandas reads the first field of every row as a row label when the first data row
    has a field more than the header: Dask gave age='a', d='x0', n='extra'. Consecutive
    ages are the case pandas makes a RangeIndex of, which one machine let pass too."""
    path = tmp_path / "shifted.csv"
    path.write_text("age,d,n\n" + f"{ages[0]},a,x0,extra\n" + "".join(f"{a},b,x{a}\n" for a in ages[1:]))
    with pytest.raises(fa.SchemaError, match=MORE_FIELDS):
        fa.jobs.read_table(str(path))
    with pytest.raises(fa.SchemaError, match=MORE_FIELDS):
        dask_instance(str(path), TEXT)


@pytest.mark.usefixtures("synchronous")
def test_a_population_file_whose_first_row_has_a_field_too_many_is_refused_on_both_engines(hand_release, tmp_path):
    inst, release = hand_release
    path = tmp_path / "population.csv"
    path.write_text("city,age,note\nn1,21,x,extra\nn2,22,y\ns1,24,z\n")
    for engine in ("local", "dask"):
        with pytest.raises(fa.SchemaError, match=MORE_FIELDS):
            fa.risk(inst, release, engine=engine, population=str(path), suda_max_size=None)


@pytest.mark.usefixtures("synchronous")
def test_a_row_with_a_field_too_many_past_the_first_blocks_is_a_one_line_error_without_ids(tmp_path):
    """Past Dask's first 256 kB, without an id column: the pass that numbers the rows is
    the first to parse the row, and raised pandas' ParserError with its traceback."""
    lines = ["age,d,n"] + [f"{i % 90},d{i % 7},n{i % 5}" for i in range(40_000)]
    lines[30_001] += ",extra"  # data row 30,000: line 30,002 of the file
    path = tmp_path / "long.csv"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 256_000
    expected = r"Cannot read .*long.csv' as CSV: .*Expected 3 fields in line 30002, saw 4"
    with pytest.raises(fa.SchemaError, match=expected):
        fa.jobs.read_table(str(path))
    with pytest.raises(fa.SchemaError, match=expected):
        dask_instance(str(path), TEXT)


def _gzip_files(tmp_path, text: str) -> dict:
    """The CSV table `text` as a .csv.gz file, and damaged copies of it: cut in half
    (EOFError), its compressed data overwritten (zlib.error)."""
    import gzip

    whole = gzip.compress(text.encode())
    broken = bytearray(whole)
    broken[30:60] = b"\xff" * 30
    files = {}
    for name, content in (("table", whole), ("cut", whole[:len(whole) // 2]), ("overwritten", bytes(broken))):
        path = tmp_path / f"{name}.csv.gz"
        path.write_bytes(content)
        files[name] = str(path)
    return files


@pytest.mark.usefixtures("synchronous")
def test_a_csv_gz_file_is_read_on_both_engines_and_a_damaged_one_is_one_line(tmp_path):
    """One machine refused every .csv.gz file as binary data (it sniffed the compressed
    bytes), which Dask read; a damaged one raised EOFError or zlib.error on Dask."""
    import io

    text = "age,d,n\n" + "".join(f"{i % 90},d{i % 7},n{i % 5}\n" for i in range(20_000))
    files = _gzip_files(tmp_path, text)
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("d"), fa.Attribute("n")])
    local = fa.jobs.read_table(files["table"])
    expected = pd.read_csv(io.StringIO(text))  # the text itself, read by pandas
    pd.testing.assert_frame_equal(local, expected, check_dtype=False)
    dist = dask_instance(files["table"], schema).data.compute()
    assert dist.index.tolist() == list(range(20_000))
    assert dist["age"].tolist() == expected["age"].tolist() and dist["n"].tolist() == expected["n"].tolist()
    for name, reason in (("cut", "Compressed file ended before the end-of-stream marker"),
                         ("overwritten", "Error -3 while decompressing data")):
        damaged = rf"Cannot read .*{name}.csv.gz' as CSV: a damaged gzip file \({reason}"
        with pytest.raises(fa.SchemaError, match=damaged):
            fa.jobs.read_table(files[name])
        with pytest.raises(fa.SchemaError, match=damaged):
            dask_instance(files[name], schema)


@pytest.mark.usefixtures("synchronous")
def test_a_damaged_csv_gz_population_is_one_line_on_dask(hand_release, tmp_path):
    inst, release = hand_release
    cities = ("n1", "n2", "s1", "s2", "s3")  # every city beside every age: the table's records are there
    files = _gzip_files(tmp_path, "city,age\n" + "".join(f"{cities[i % 5]},{20 + i % 41}\n" for i in range(20_000)))
    local, dist = (fa.risk(inst, release, engine=engine, population=files["table"], suda_max_size=None).journalist
                   for engine in ("local", "dask"))
    assert dist.population_size == local.population_size == 20_000
    assert (dist.highest, dist.marketer) == (local.highest, local.marketer)
    for name in ("cut", "overwritten"):
        for engine in ("local", "dask"):
            with pytest.raises(fa.SchemaError, match="damaged gzip file"):
                fa.risk(inst, release, engine=engine, population=files[name], suda_max_size=None)


@pytest.mark.usefixtures("synchronous")
@pytest.mark.parametrize("written", ["inf", "1e400", "-inf"])
def test_a_non_finite_number_is_refused_when_the_table_is_read_on_both_engines(tmp_path, written):
    """inf, or 1e400 (parsed to inf), in a numeric column: one machine refused it when it
    read the table, Dask only in the first task that coded a partition. Now the partition
    statistics find it: the same message, the whole table's count and first record."""
    rows = [f"{20 + i % 50},d{i % 3}" for i in range(60)]
    for i in (41, 17):  # records 17 and 41 hold it: the first in table order is 17
        rows[i] = f"{written},d0"
    path = tmp_path / "numbers.csv"
    path.write_text("age,d\n" + "\n".join(rows) + "\n")
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("d")])
    value = repr(float(written))  # 'inf' or '-inf', as one machine prints it
    expected = rf"Column 'age' is declared numeric but holds {value} \(2 non-finite value\(s\), e.g. record 17\)"
    table = fa.jobs.read_table(str(path), text_columns=["d"])
    with pytest.raises(fa.SchemaError, match=expected):
        fa.Instance(table, schema)
    with pytest.raises(fa.SchemaError, match=expected):
        dask_instance(str(path), schema)
    with pytest.raises(fa.SchemaError, match=expected):  # three partitions: the first one's record
        dask_instance(dd.from_pandas(table, npartitions=3), schema)
