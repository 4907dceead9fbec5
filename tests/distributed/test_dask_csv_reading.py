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
