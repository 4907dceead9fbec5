"""Spreadsheet-safe cells and safe file names (fairanon.instances.files)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairanon.instances.files import FORMULA_TRIGGERS, neutralize_formulas, restore_formulas, safe_file_name

cells = st.text(alphabet=st.sampled_from(list("'=+-@\t\r0123456789.eE ab")), max_size=6)


@given(st.lists(cells, min_size=1, max_size=8))
def test_neutralized_cells_never_start_a_formula_and_restore_exactly(values):
    table = pd.DataFrame({"a": values, "b": pd.Categorical(values)})
    safe = neutralize_formulas(table)
    for cell in safe["a"]:
        if cell[:1] in FORMULA_TRIGGERS:  # only plain numbers may start so
            float(cell)
    assert safe["a"].tolist() == [str(c) for c in safe["b"]]
    back = restore_formulas(safe)
    assert back["a"].tolist() == values and back["b"].astype(str).tolist() == values


@given(st.text(max_size=20))
def test_safe_file_names_stay_in_their_folder(text):
    name = safe_file_name(text)
    assert name and "/" not in name and "\\" not in name and not name.startswith(".")


@pytest.mark.parametrize(
    ("value", "source", "target"),
    [(-1, "int64", "uint64"), (2**63, "uint64", "int64")],
)
def test_as_record_ids_refuses_a_cast_that_wraps(value, source, target):
    """int64 -1 as uint64 is 2**64 - 1 and uint64 2**63 as int64 is -2**63, each casting
    back to itself: refused, not taken for another record."""
    from fairanon.instances.files import as_record_ids

    with pytest.raises(ValueError, match=f"{value}.* is not a record id of type {target}"):
        as_record_ids(pd.Series([1, value], dtype=source), np.dtype(target))
    assert as_record_ids(pd.Series([1, 2], dtype=source), np.dtype(target)).tolist() == [1, 2]


@pytest.mark.parametrize("text", ["1_0", "\uff11", "1.0x", "", "True"])
def test_as_record_ids_reads_text_as_plain_digits(text):
    """Python's int(), which the cast calls, reads '1_0' as 10 and a full-width '１' as
    1, where the Dask engine's CSV parser refuses them: one release file gave the two
    engines different records."""
    from fairanon.instances.files import as_record_ids

    with pytest.raises(ValueError, match="is not a record id"):
        as_record_ids(pd.Series(["7", text], dtype=object), np.dtype("int64"))
    assert as_record_ids(pd.Series(["7", "-3", "+4"], dtype=object), np.dtype("int64")).tolist() == [7, -3, 4]


def _wide_population(tmp_path, n: int = 2_000, notes: int = 20) -> str:
    """A population file of `n` rows: its quasi-identifiers age and zip, and `notes`
    text columns the journalist risk never reads."""
    path = tmp_path / "wide.csv"
    path.write_text("age,zip," + ",".join(f"note{j}" for j in range(notes)) + "\n" + "".join(
        f"{20 + i % 50},{13000 + i % 7}," + ",".join(f"note {i} {j}" for j in range(notes)) + "\n"
        for i in range(n)), encoding="utf-8")
    return str(path)


def test_a_csv_file_read_by_some_columns_never_holds_the_others_whole(tmp_path, monkeypatch):
    """read_csv_table with `columns` (one machine's population file, fairanon risk
    --population) reads chunks of READ_CELLS cells: the largest table pandas gives is a
    chunk, a small share of the whole file, and the columns kept are the whole file's."""
    import fairanon.instances.files as files

    path = _wide_population(tmp_path)
    whole = pd.read_csv(path, dtype=str)
    monkeypatch.setattr(files, "READ_CELLS", 22 * 100)  # 100 rows of the 22 columns
    held = []  # the rows of every table pandas gives
    read_csv = pd.read_csv

    class Chunks:
        def __init__(self, reader):
            self.reader = reader

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.reader.close()

        def __iter__(self):
            for chunk in self.reader:
                held.append(len(chunk))
                yield chunk

    def spy(*args, **kwargs):
        out = read_csv(*args, **kwargs)
        if isinstance(out, pd.DataFrame):
            held.append(len(out))
            return out
        return Chunks(out)

    monkeypatch.setattr(files.pd, "read_csv", spy)
    table = files.read_csv_table(path, dtype=str, columns=["zip", "age", "absent"])
    monkeypatch.undo()
    assert table.equals(whole[["zip", "age"]])
    assert max(held) == 100 < len(whole)


def test_a_csv_file_read_by_some_columns_is_checked_whole(tmp_path, monkeypatch):
    """Every row is still parsed whole (usecols would not): a row of too many fields in a
    later chunk, or as the first data row, is refused; a header alone is an empty table."""
    import fairanon.instances.files as files
    from fairanon.exceptions import SchemaError

    monkeypatch.setattr(files, "READ_CELLS", 22 * 100)
    path = _wide_population(tmp_path)
    lines = open(path, encoding="utf-8").read().splitlines()
    for row in (1, 1_500):
        wrong = lines.copy()
        wrong[row] += ",surplus"
        (tmp_path / "long.csv").write_text("\n".join(wrong) + "\n", encoding="utf-8")
        with pytest.raises(SchemaError, match="more fields|Error tokenizing data"):
            files.read_csv_table(str(tmp_path / "long.csv"), dtype=str, columns=["age", "zip"])
    (tmp_path / "header.csv").write_text(lines[0] + "\n", encoding="utf-8")
    empty = files.read_csv_table(str(tmp_path / "header.csv"), dtype=str, columns=["age", "zip"])
    assert list(empty.columns) == ["age", "zip"] and len(empty) == 0


def test_a_csv_file_s_columns_but_the_parsed_ones_are_text(tmp_path):
    import fairanon.instances.files as files

    path = tmp_path / "t.csv"
    path.write_text("age,code,note\n34,01,5\n41,02,x\n", encoding="utf-8")
    table = files.read_csv_table(str(path), parsed=["age"], dtype={"note": "object"})
    assert str(table["age"].dtype) == "int64"
    assert table["code"].tolist() == ["01", "02"] and table["note"].tolist() == ["5", "x"]


def test_a_csv_gz_file_is_read_as_its_text_and_a_damaged_one_is_a_schema_error(tmp_path):
    """The text of a .csv.gz file is sniffed, not its compressed bytes (every one was
    refused as binary data); cut short (EOFError) or overwritten (zlib.error) it is a
    SchemaError, as is gzip text with a NUL byte."""
    import gzip

    import fairanon.instances.files as files
    from fairanon.exceptions import SchemaError

    whole = gzip.compress("zip,age\n13053,28\n13068,29\n".encode())
    (tmp_path / "t.csv.gz").write_bytes(whole)
    table = files.read_csv_table(str(tmp_path / "t.csv.gz"), dtype=str)
    assert table.to_dict("list") == {"zip": ["13053", "13068"], "age": ["28", "29"]}
    large = gzip.compress(("zip,age\n" + "13053,28\n" * 50_000).encode())
    overwritten = bytearray(large)
    overwritten[30:60] = b"\xff" * 30
    for name, content, reason in (("cut", large[:len(large) // 2], "Compressed file ended"),
                                  ("overwritten", bytes(overwritten), "Error -3 while decompressing")):
        (tmp_path / f"{name}.csv.gz").write_bytes(content)
        with pytest.raises(SchemaError, match=f"a damaged gzip file \\({reason}"):
            files.read_csv_table(str(tmp_path / f"{name}.csv.gz"), dtype=str)
    (tmp_path / "nul.csv.gz").write_bytes(gzip.compress(b"zip,age\n1\x00,2\n"))
    with pytest.raises(SchemaError, match="holds binary data"):
        files.read_csv_table(str(tmp_path / "nul.csv.gz"))


def test_a_csv_file_read_by_some_columns_is_refused_above_the_memory_limit_while_it_is_read(tmp_path, monkeypatch):
    """The columns kept are added up chunk by chunk, with the next chunk read whole: above
    the memory limit the reading stops there (MemoryLimitError past about row 1,000 of
    2,000 at half the kept columns' bytes), where the limit used to be checked only on
    the whole table once read."""
    import re

    import fairanon.instances.files as files
    from fairanon._memory import memory_limit
    from fairanon.exceptions import MemoryLimitError

    path = _wide_population(tmp_path)
    monkeypatch.setattr(files, "READ_CELLS", 22 * 100)  # chunks of 100 rows
    # By pandas reading the file apart (a slice of a table would count the whole
    # table's text buffers): the columns kept, and the largest chunk read whole (the
    # last: its notes are the longest).
    kept = pd.read_csv(path, dtype=str, usecols=["age", "zip"])
    kept_bytes = int(kept.memory_usage(deep=True).sum())
    last = int(pd.read_csv(path, dtype=str, skiprows=range(1, 1901)).memory_usage(deep=True).sum())
    with memory_limit(f"{kept_bytes // 2 + last}B"):
        with pytest.raises(MemoryLimitError, match=r"reading the columns \['age', 'zip'\] of .*wide.csv'") as error:
            files.read_csv_table(path, dtype=str, columns=["age", "zip"])
    # Half the kept columns' bytes, give or take a chunk (each part's own index, the
    # earlier chunks' shorter notes): refused past row 1,000 of 2,000, not at the end.
    assert 900 <= int(re.search(r"past row (\d+)", str(error.value)).group(1)) <= 1100
    # Every part's index (its own, about 130 bytes) on top of the kept columns' bytes.
    with memory_limit(f"{kept_bytes + 20 * 200 + last}B"):
        assert files.read_csv_table(path, dtype=str, columns=["age", "zip"]).equals(kept)
