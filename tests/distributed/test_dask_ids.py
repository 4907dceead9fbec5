"""Record ids on the Dask engine: a Dask DataFrame or a Parquet file given as it is goes
through the check of a pandas table (a missing id, numbers beside text: the same
message), and a CSV file's ids and text columns are read as one machine reads them.
Dask's synchronous scheduler: the tests stay fast."""

import warnings

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


pytestmark = pytest.mark.usefixtures("synchronous")


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


def test_float_ids_held_as_objects_are_refused_as_floats(inst):
    frame = _objects(_plain(inst), [i + 0.5 for i in range(60)])
    with pytest.raises(fa.SchemaError, match=r"are Python objects of one kind \(floating\), neither whole numbers "
                                             r"nor text.*\(or use engine='local'\)"):
        fa.risk(frame, engine="dask", schema=inst.schema)


def test_a_compressed_csv_instance_is_read_without_a_warning(inst, tmp_path):
    path = tmp_path / "table.csv.gz"
    _plain(inst).rename_axis("rid").reset_index().to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dinst = dask_instance(str(path), inst.schema, id_column="rid")
    assert dinst.n_rows == 60 and dinst.data.npartitions == 1


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


@pytest.fixture
def csv_instance(inst, tmp_path):
    """The table in a CSV file with an id column written as numbers (1, 2, ...; one
    written 007, and two written NA and None, which pandas reads as missing), and the
    instance one machine reads from its job section."""
    table = _plain(inst)
    ids = [str(i + 1) for i in range(len(table))]
    ids[4] = "007"
    ids[5], ids[6] = "NA", "None"
    table.insert(0, "rid", ids)
    path = tmp_path / "data.csv"
    table.to_csv(path, index=False)
    spec = {"csv": str(path), "id_column": "rid",
            "schema": {a.name: a.to_spec() for a in inst.schema}}
    return str(path), fa.jobs.load_instance_spec(spec)


def test_csv_record_ids_are_the_text_written_on_both_engines(csv_instance):
    path, local_inst = csv_instance
    # One machine: the text written (NA and None were refused as missing ids).
    assert local_inst.row_ids[:7].tolist() == ["1", "2", "3", "4", "007", "NA", "None"]
    dinst = dask_instance(path, local_inst.schema, id_column="rid")
    assert sorted(dinst.data.index.compute()) == sorted(local_inst.row_ids)  # Dask sorts them by id
    release = mondrian(local_inst, [fa.KAnonymity(3)])
    reqs = [fa.KAnonymity(10)]  # fails: a witness class and its records
    local = fa.verify(local_inst, release, reqs)
    remote = fa.verify(dinst, release, reqs, engine="dask")
    assert not local.passed
    assert _checks(remote) == _checks(local)
    records = local["10-anonymity"].witness["records"]
    assert records and all(type(r) is str for r in records)
    local_risk = fa.risk(local_inst, release, suda_max_size=None).to_dict()
    remote_risk = fa.risk(dinst, release, engine="dask", suda_max_size=None).to_dict()
    assert remote_risk["sample"]["witness"] == local_risk["sample"]["witness"]
    assert all(type(r) is str for r in local_risk["sample"]["witness"]["records"])
    drop = ("seconds",)
    assert {k: v for k, v in remote_risk.items() if k not in drop} == {k: v for k, v in local_risk.items() if k not in drop}


def test_a_csv_release_file_is_read_with_the_instances_ids(csv_instance, inst, tmp_path):
    from fairanon.distributed.instance import release_ids
    from fairanon.distributed.instance import read_table

    path, local_inst = csv_instance
    release = mondrian(local_inst, [fa.KAnonymity(3)])
    file = tmp_path / "release.csv"
    release.table.rename_axis("record_id").reset_index().to_csv(file, index=False)
    text_ids = dask_instance(path, local_inst.schema, id_column="rid")
    read = read_table(str(file), **release_ids(str(file), text_ids))
    assert read.index.compute().tolist() == sorted(release.table.index)  # text, in text order
    reqs = [fa.KAnonymity(10)]
    local = fa.verify(local_inst, release, reqs)
    assert local["rows"].passed and not local.passed
    assert _checks(fa.verify(text_ids, read, reqs, engine="dask")) == _checks(local)
    # An instance whose ids are numbers: the release's record_id column read as numbers, as
    # one machine reads a release file; an id that is not a number is refused.
    numbered = fa.Instance(_plain(inst), inst.schema, name="numbered")
    single = mondrian(numbered, [fa.KAnonymity(3)])
    single.table.rename_axis("record_id").reset_index().to_csv(file, index=False)
    int_ids = dask_instance(dd.from_pandas(_plain(inst), npartitions=2), inst.schema)
    read = read_table(str(file), **release_ids(str(file), int_ids))
    assert read.index.dtype == np.int64
    assert _checks(fa.verify(int_ids, read, reqs, engine="dask")) == _checks(fa.verify(numbered, single, reqs))
    single.table.rename_axis("record_id").reset_index().assign(record_id=["x", *range(1, 60)]).to_csv(file, index=False)
    with pytest.raises(fa.InvalidParameterError, match="record_id values of .* are not the instance's record ids"):
        read_table(str(file), **release_ids(str(file), int_ids))


def test_a_csv_file_s_text_columns_are_read_as_written_on_both_engines(tmp_path):
    # Codes with leading zeros: one machine reads the schema's non-numeric columns as text;
    # so does Dask (it would parse 01234 as the number 1234, outside the hierarchy).
    zips = fa.Hierarchy.from_mapping({"*": {"0123*": ["01234", "01235"], "0234*": ["02345", "02346"]}})
    schema = fa.Schema([fa.Attribute("zip", hierarchy=zips), fa.Attribute("age", kind="numeric"),
                        fa.Attribute("disease", role="sensitive")])
    n = 40
    table = pd.DataFrame({"rid": [f"{i:03d}" for i in range(n)],
                          "zip": [["01234", "01235", "02345", "02346"][i % 4] for i in range(n)],
                          "age": [20 + (7 * i) % 30 for i in range(n)],
                          "disease": [["flu", "cold", "hiv"][i % 3] for i in range(n)]})
    path = tmp_path / "codes.csv"
    table.to_csv(path, index=False)
    local_inst = fa.jobs.load_instance_spec({"csv": str(path), "id_column": "rid",
                                             "schema": {a.name: a.to_spec() for a in schema}})
    dinst = dask_instance(str(path), local_inst.schema, id_column="rid")
    assert dinst.schema["zip"].domain == local_inst.schema["zip"].domain == ("01234", "01235", "02345", "02346")
    release = mondrian(local_inst, [fa.KAnonymity(4)])
    reqs = [fa.KAnonymity(8)]  # fails: a witness class, its labels and records
    local = fa.verify(local_inst, release, reqs)
    assert not local.passed and local["rows"].passed
    assert _checks(fa.verify(dinst, release, reqs, engine="dask")) == _checks(local)
    # The release file: every cell as written, on both engines.
    from fairanon.distributed.instance import release_ids
    from fairanon.distributed.instance import read_table

    file = tmp_path / "release.csv"
    release.table.rename_axis("record_id").reset_index().to_csv(file, index=False)
    read = read_table(str(file), **release_ids(str(file), dinst))
    assert _checks(fa.verify(dinst, read, reqs, engine="dask")) == \
        _checks(fa.verify(local_inst, fa.jobs.read_release(str(file), local_inst), reqs))


def test_a_large_csv_file_s_numbers_are_read_whole_on_both_engines(tmp_path):
    """Past the first 256 kB of a CSV file (where Dask guesses a column's type), an age of
    33.5 is a number and a blank age a missing value, as one machine reads them: the same
    ages, and the same verdict on a release."""
    n = 25_000
    text = "rid,age,disease\n" + "".join(f"{i},{20 + i % 40},{'flu' if i % 3 else 'cold'}\n" for i in range(n))
    assert len(text) > 300_000
    spec = {"schema": {"age": {"role": "qi", "type": "numeric"}, "disease": {"role": "sensitive"}},
            "id_column": "rid"}
    path = tmp_path / "large.csv"
    path.write_text(text + f"{n},33.5,flu\n", encoding="utf-8")
    local_inst = fa.jobs.load_instance_spec({**spec, "csv": str(path)})
    dinst = dask_instance(str(path), local_inst.schema, id_column="rid")
    values, counts = dinst.value_counts("age")
    assert values.tolist() == [float(a) for a in range(20, 34)] + [33.5] + [float(a) for a in range(34, 60)]
    assert counts.sum() == n + 1 and counts[values.tolist().index(33.5)] == 1
    assert str(dinst.data["age"].dtype) == "float64" == str(local_inst.table["age"].dtype)
    release = mondrian(local_inst, [fa.KAnonymity(100)])
    reqs = [fa.KAnonymity(700)]  # fails: a witness class, its labels and records
    local = fa.verify(local_inst, release, reqs)
    assert not local.passed and local["rows"].passed
    assert _checks(fa.verify(dinst, release, reqs, engine="dask")) == _checks(local)
    path.write_text(text + f"{n},,flu\n", encoding="utf-8")
    with pytest.raises(fa.SchemaError, match=r"Missing values in 'age' \(1 rows\)"):
        dask_instance(str(path), local_inst.schema, id_column="rid")
    dropped = dask_instance(str(path), local_inst.schema, id_column="rid", missing="drop")
    assert dropped.n_rows == n and str(dropped.data["age"].dtype) == "float64"


def test_a_large_csv_file_s_unused_columns_are_read_whole_on_both_engines(tmp_path):
    """Past the first 256 kB of a CSV file, a 33.5 in an ignored numeric column and in a
    column outside the schema: Dask reads them as text (it would guess int64 from the
    first rows and fail), and both engines give the same ages and the same verdict."""
    n = 25_000
    text = "rid,age,disease,weight,extra\n" + "".join(
        f"{i},{20 + i % 40},{'flu' if i % 3 else 'cold'},{i % 7},{i % 5}\n" for i in range(n))
    assert len(text) > 300_000
    spec = {"schema": {"age": {"role": "qi", "type": "numeric"}, "disease": {"role": "sensitive"},
                       "weight": {"role": "ignore", "type": "numeric"}}, "id_column": "rid"}
    path = tmp_path / "large.csv"
    path.write_text(text + f"{n},33,flu,33.5,33.5\n", encoding="utf-8")
    local_inst = fa.jobs.load_instance_spec({**spec, "csv": str(path)})
    dinst = dask_instance(str(path), local_inst.schema, id_column="rid")
    values, counts = dinst.value_counts("age")
    assert values.tolist() == [float(a) for a in range(20, 60)]
    assert counts.sum() == n + 1 and counts[values.tolist().index(33)] == n // 40 + 1
    release = mondrian(local_inst, [fa.KAnonymity(100)])
    reqs = [fa.KAnonymity(700)]  # fails: a witness class, its labels and records
    local = fa.verify(local_inst, release, reqs)
    assert not local.passed and local["rows"].passed
    assert _checks(fa.verify(dinst, release, reqs, engine="dask")) == _checks(local)


@pytest.mark.slow
def test_a_csv_file_s_unused_columns_are_text_on_both_engines(tmp_path):
    """An ignored numeric column, and one outside the schema, holding a word past pandas'
    first blocks: one machine read them as numbers where it could, and warned (a
    DtypeWarning on the terminal) that their blocks have mixed types. Both engines read
    them as text, without a warning (a release holds neither column). pandas parses
    2**18 rows at a time: the word is in the second block."""
    n = 2**18 + 10
    text = "rid,age,disease,weight,extra\n" + "".join(
        f"{i},{20 + i % 40},{'ab'[i % 2]},{i % 7},{i % 5}\n" for i in range(n))
    path = tmp_path / "large.csv"
    path.write_text(text + f"{n},33,a,heavy,none\n", encoding="utf-8")
    spec = {"csv": str(path), "id_column": "rid",
            "schema": {"age": {"role": "qi", "type": "numeric"}, "disease": {"role": "sensitive"},
                       "weight": {"role": "ignore", "type": "numeric"}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        local_inst = fa.jobs.load_instance_spec(spec)
        dinst = dask_instance(str(path), local_inst.schema, id_column="rid")
    for column in ("weight", "extra"):
        local = local_inst.extra[column]
        assert all(type(v) is str for v in local) and local.iloc[-1] in ("heavy", "none")
        assert dinst.data[column].compute().sort_index().tolist() == local.sort_index().tolist()
    assert str(local_inst.table["age"].dtype) == "int64" == str(dinst.data["age"].dtype)


@pytest.mark.slow
def test_a_word_in_a_numeric_column_past_pandas_first_block_is_the_same_error_on_both_engines(tmp_path):
    """A word in the numeric quasi-identifier age after 2**18 rows of numbers: the same
    one-line error on both engines, without pandas' DtypeWarning on one machine first."""
    n = 2**18 + 10
    text = "age,disease\n" + "".join(f"{20 + i % 40},{'ab'[i % 2]}\n" for i in range(n))
    path = tmp_path / "large.csv"
    path.write_text(text + "old,a\n", encoding="utf-8")
    spec = {"csv": str(path), "schema": {"age": {"role": "qi", "type": "numeric"}, "disease": {"role": "sensitive"}}}
    message = "Column 'age' is declared numeric but holds 'old'."
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(fa.SchemaError, match=message):
            fa.jobs.load_instance_spec(spec)
        with pytest.raises(fa.SchemaError, match=message):
            dask_instance(str(path), fa.Schema.from_spec(spec["schema"]))


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_release_record_id_that_is_not_whole_is_refused_on_both_engines(inst, tmp_path, suffix):
    """A release whose record_id 1.5 names no record of an instance with whole ids: an
    error on both engines, not the record 1 (a cast would truncate it)."""
    from fairanon.distributed.instance import read_table, release_ids

    dinst = dask_instance(dd.from_pandas(_plain(inst), npartitions=2), inst.schema)
    assert dinst.data.index.dtype.kind == inst.row_ids.dtype.kind == "i"
    table = mondrian(inst, [fa.KAnonymity(4)]).table.rename_axis("record_id").reset_index()
    # Parquet holds the ids as floats (0.0, 1.5, ...); the CSV file as written (0, 1.5, ...).
    table["record_id"] = table["record_id"].astype(float if suffix == ".parquet" else object)
    table.loc[1, "record_id"] = 1.5
    path = str(tmp_path / f"release{suffix}")
    table.to_parquet(path, index=False) if suffix == ".parquet" else table.to_csv(path, index=False)
    with pytest.raises(fa.InvalidParameterError, match="record_id values do not match the instance's record ids"):
        fa.jobs.read_release(path, inst)
    with pytest.raises(fa.InvalidParameterError, match=r"record_id values of .* are not the instance's record ids"):
        read_table(path, **release_ids(path, dinst)).index.compute()


def test_a_release_csv_row_the_parser_cannot_read_is_reported_as_such(inst, tmp_path):
    """A row with a field too many, in a release read without its report (a pass over
    the whole file looks for formulas written as they are): the parser's error, as one
    machine reports it, not an error about record ids."""
    from fairanon.distributed.instance import read_table, release_ids

    dinst = dask_instance(dd.from_pandas(_plain(inst), npartitions=2), inst.schema)
    path = tmp_path / "release.csv"
    mondrian(inst, [fa.KAnonymity(4)]).table.rename_axis("record_id").reset_index().to_csv(path, index=False)
    lines = path.read_text().splitlines()
    lines[40] += ",surplus"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(fa.SchemaError, match="Cannot read Release file .* as CSV: Error tokenizing data"):
        fa.jobs.read_release(str(path), inst)
    with pytest.raises(fa.SchemaError, match=r"Cannot read .*release.csv' as CSV: Error tokenizing data"):
        read_table(str(path), **release_ids(str(path), dinst)).index.compute()


@pytest.mark.parametrize(
    ("ids", "id_type"),
    [(["1", None, "2"], "int64"), (["1", "-1", "2"], "uint64")],
)
def test_a_parquet_release_record_id_the_cast_cannot_make_is_an_error(tmp_path, ids, id_type):
    """Text ids with a null (TypeError in the cast) or a "-1" for uint64 ids
    (OverflowError): the record id error on Dask, as on one machine, not a traceback."""
    from fairanon.distributed.instance import read_table

    path = str(tmp_path / "release.parquet")
    pd.DataFrame({"record_id": pd.Series(ids, dtype=object), "a": ["x", "y", "z"]}).to_parquet(path, index=False)
    with pytest.raises(fa.InvalidParameterError, match=r"record_id values of .* are not the instance's record ids"):
        read_table(path, id_column="record_id", what="the release", id_type=np.dtype(id_type)).index.compute()


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", r"holds no header row"), (b"a,\xff\n1,2\n", r"is not UTF-8 text \(byte \d+: ")],
)
@pytest.mark.parametrize("options", [{"as_written": True}, {"all_text": True}])
def test_an_empty_or_non_utf8_csv_file_is_a_schema_error_on_dask(tmp_path, content, message, options):
    """The header read before Dask's reader: an empty file or a header that is not UTF-8
    is a one-line SchemaError, as one machine reports it (read_csv_table)."""
    from fairanon.distributed.instance import read_table

    path = tmp_path / "data.csv"
    path.write_bytes(content)
    with pytest.raises(fa.SchemaError, match=message):
        read_table(str(path), **options)


@pytest.mark.parametrize("written", ["0.0", " 0", "0 ", "0e0"])
def test_a_csv_release_id_one_machine_refuses_is_refused_on_dask(inst, tmp_path, written):
    """int64 record ids written 0.0 (or with a space, or as 0e0): Dask's CSV parser read
    them as the id 0, where one machine reads the text and as_record_ids refuses it. Dask
    now reads the column as text and converts it with as_record_ids: both refuse it."""
    from fairanon.distributed.instance import read_table, release_ids

    dinst = dask_instance(dd.from_pandas(_plain(inst), npartitions=2), inst.schema)
    assert dinst.data.index.dtype == inst.row_ids.dtype == np.int64
    table = mondrian(inst, [fa.KAnonymity(4)]).table.rename_axis("record_id").reset_index()
    lines = table.to_csv(index=False).splitlines()
    assert lines[1].startswith("0,")
    lines[1] = written + lines[1][1:]
    path = tmp_path / "release.csv"
    path.write_text("\n".join(lines) + "\n")
    reason = rf"\(int64\): '{written}' is not a record id of type int64"
    with pytest.raises(fa.InvalidParameterError, match="record_id values do not match the instance's record ids "
                                                       + reason):
        fa.jobs.read_release(str(path), inst)
    with pytest.raises(fa.InvalidParameterError, match=r"record_id values of .* are not the instance's record ids "
                                                       + reason):
        read_table(str(path), **release_ids(str(path), dinst)).index.compute()
    # Written 0, the same file is read on both engines to the same records.
    lines[1] = "0" + lines[1][len(written):]
    path.write_text("\n".join(lines) + "\n")
    local = fa.jobs.read_release(str(path), inst).table
    remote = read_table(str(path), **release_ids(str(path), dinst)).compute()
    assert remote.index.tolist() == sorted(local.index.tolist()) == list(range(60))
    assert list(remote.columns) == list(local.columns)
    assert remote.to_numpy().tolist() == local.sort_index().to_numpy().tolist()  # every cell as written
