"""The text a categorical or ordered value reads as, on both engines
(fairanon/instances/texts.py): whole floats read as whole numbers, cells of different
kinds that read alike are refused, and identifiers are not read at all."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.exceptions import SchemaError
from fairanon.instances.texts import cell_texts, value_text

A, S = fa.Attribute, fa.Schema


def _dask_instance(table: pd.DataFrame, schema, **options):
    """The Dask engine's instance of `table` in 2 partitions, cells kept as Python
    objects (Dask would otherwise turn an object column into text before it is read)."""
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    from fairanon.distributed.instance import dask_instance

    with dask.config.set({"dataframe.convert-string": False}):
        return dask_instance(dd.from_pandas(table, npartitions=2), schema, **options)


@pytest.mark.parametrize("value, text", [(1.0, "1"), (-0.0, "0"), (2.5, "2.5"), (np.float32(3), "3"),
                                         (1, "1"), ("1.0", "1.0"), (True, "True"), (2.0**60, str(2.0**60)),
                                         (float("nan"), "nan")])
def test_value_text_reads_a_whole_float_as_the_whole_number(value, text):
    """By hand: only a finite whole float up to 2**53 changes; text stays as written."""
    assert value_text(value) == text


def test_cell_texts_agree_with_value_text_cell_by_cell():
    """The vectorized paths (float columns, pandas' inferred kinds) against the rule
    applied to each cell."""
    columns = [pd.Series([1.0, 2.5, -3.0, 1e17]), pd.Series([1, 2, 3]), pd.Series([True, False]),
               pd.Series(["a", "1.0"], dtype=object), pd.Series([1, 2.0, 2.5], dtype=object),
               pd.Series([1, "x", 2.0], dtype=object), pd.Series(["a", "b"], dtype="string")]
    for column in columns:
        texts, _ = cell_texts(column)
        assert list(texts) == [value_text(v) for v in column.tolist()]


def test_an_int_column_with_a_dropped_missing_cell_reads_whole_numbers():
    """pandas holds [1, NaN, 2, 1] as floats; the dropped cell no longer turns the
    protected value 1 into "1.0" (it was "not a value of 'sex'"), on either engine."""
    table = pd.DataFrame({"sex": [1, np.nan, 2, 1], "zip": ["a", "b", "b", "a"]},
                         index=[10, 11, 12, 13])
    schema = S([A("sex", role="protected", protected=["1"]), A("zip")])
    inst = fa.Instance(table, schema, missing="drop")
    assert inst.table["sex"].tolist() == ["1", "2", "1"]
    assert inst.schema["sex"].domain == ("1", "2")
    assert inst.protected_mask().tolist() == [True, False, True]
    assert _dask_instance(table, schema, missing="drop").schema["sex"].domain == ("1", "2")


def test_a_schema_names_values_by_the_same_rule():
    """protected=[1.0], negative=0.0, an order of floats and a hierarchy with float
    leaves name the values a float column holds."""
    table = pd.DataFrame({"g": [1.0, 2.0, 1.0, 2.0], "d": [0.0, 1.0, 1.0, 0.0],
                          "o": [1.0, 2.0, 3.0, 1.0], "h": [1.0, 2.0, 2.0, 1.0]})
    inst = fa.Instance(table, S([
        A("g", role="protected", protected=[1.0]), A("d", role="decision", negative=0.0),
        A("o", kind="ordered", order=[1.0, 2.0, 3.0]),
        A("h", hierarchy=fa.Hierarchy.from_mapping({"*": [1.0, 2.0]}))]))
    assert inst.protected_mask().tolist() == [True, False, True, False]
    assert inst.negative_mask().tolist() == [True, False, False, True]
    assert inst.schema["o"].domain == ("1", "2", "3")
    assert inst.schema["h"].domain == ("1", "2")


@pytest.mark.parametrize("cells, text", [
    ([1, "1", 2, 2], "'1' both as a number and as text"),
    ([True, "True", "x", "x"], "'True' both as a truth value and as text"),
    ([2.0, "2", 1, 1], "'2' both as a number and as text"),
])
def test_cells_of_two_kinds_that_read_alike_are_refused(cells, text):
    """1 and "1" were silently one value (str of both is "1"); now a clear error on
    both engines, in a plain column and in a categorical one. The Dask engine sees 1
    in one partition and "1" in the other."""
    schema = S([A("c"), A("s", role="sensitive")])
    for column in (pd.Series(cells, dtype=object), pd.Series(pd.Categorical(cells))):
        table = pd.DataFrame({"c": column, "s": list("abab")})
        with pytest.raises(SchemaError, match=f"holds {text}, which would be read as one value"):
            fa.Instance(table, schema)
    with pytest.raises(SchemaError, match=f"holds {text}"):
        _dask_instance(pd.DataFrame({"c": pd.Series(cells[1:2] + cells[:1] + cells[2:], dtype=object),
                                     "s": list("abab")}), schema)


def test_numbers_of_two_types_that_are_equal_are_one_value():
    """1 and 1.0 are equal numbers: one value "1", no error; True and 1 read
    differently ("True", "1") and stay two values."""
    table = pd.DataFrame({"c": pd.Series([1, 1.0, True, 2], dtype=object), "s": list("abab")})
    inst = fa.Instance(table, S([A("c"), A("s", role="sensitive")]))
    assert inst.table["c"].tolist() == ["1", "1", "True", "2"]
    assert _dask_instance(table, S([A("c"), A("s", role="sensitive")])).domains["c"].tolist() == [2, 1, 1]


def test_an_identifier_with_a_missing_value_is_kept_aside_not_refused():
    """An identifier is never released: its missing value was refused (and
    missing="drop" dropped the row). Now it is kept beside the table, on both engines,
    and the release of every record verifies."""
    table = pd.DataFrame({"name": ["ann", None, "cy", "dan", "eve", "fay"],
                          "age": [30, 31, 40, 41, 50, 52], "disease": list("ababab")})
    schema = S([A("name", role="identifier"), A("age", kind="numeric"), A("disease", role="sensitive")])
    inst = fa.Instance(table, schema)
    assert "name" not in inst.table.columns and inst.extra["name"].isna().sum() == 1
    assert fa.Instance(table, schema, missing="drop").n_rows == 6
    release = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian")
    assert fa.verify(inst, release, [fa.KAnonymity(2)]).passed
    assert "name" not in release.table.columns
    assert _dask_instance(table, schema).n_rows == 6


def test_the_dask_engine_anonymizes_a_table_with_an_identifier():
    """Identifiers are not read, so they have no domain: the Dask Mondrian filled
    every column but the ignored ones with its domain's first value, and crashed."""
    pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(0)
    n = 400
    table = pd.DataFrame({"name": [f"p{i}" for i in range(n)], "age": rng.integers(20, 70, n),
                          "zip": rng.choice(list("abcd"), n),
                          "disease": rng.choice(list("xyz"), n)})
    schema = S([A("name", role="identifier"), A("age", kind="numeric"), A("zip"),
                A("disease", role="sensitive")])
    inst = fa.Instance(table, schema)
    release = fa.anonymize(inst, [fa.KAnonymity(5)], method="mondrian", engine="dask",
                           max_rows=5).compute()
    assert list(release.table.columns) == ["age", "zip", "disease"]
    assert fa.verify(inst, release, [fa.KAnonymity(5)]).passed


def test_a_release_of_typed_cells_reads_by_the_instance_rule():
    """A release handed in as floats (the original table itself, or cells another tool
    wrote) reads 2.0 as "2", as the instance does: it failed truthfulness and
    unchanged values ('2.0' against '2'). An external Parquet release too."""
    rng = np.random.default_rng(1)
    n = 60
    table = pd.DataFrame({"grade": rng.integers(1, 5, n).astype(float),
                          "age": rng.integers(20, 60, n),
                          "score": rng.integers(0, 3, n).astype(float)})
    inst = fa.Instance(table, S([A("grade"), A("age", kind="numeric"),
                                 A("score", role="sensitive")]))
    report = fa.verify(inst, fa.Release(table, groups=np.zeros(n)), [fa.KAnonymity(1)])
    assert report.passed, [(c.name, c.detail) for c in report.failures]


def test_a_population_and_a_diversity_target_read_by_the_instance_rule():
    """A population table of float QIs matched no class ('2.0' against '2'); a
    diversity constraint on 1.0 was "not a value" of a float column."""
    from fairanon.models.diversity import target_mask

    table = pd.DataFrame({"grade": [1.0, 2.0, 1.0, 2.0] * 5, "s": list("ab") * 10})
    inst = fa.Instance(table, S([A("grade"), A("s", role="sensitive")]))
    target = fa.DiversityConstraint({"grade": 1.0}, 1, 3)
    assert target_mask(inst, target).tolist() == [True, False] * 10
    release = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian")
    population = pd.DataFrame({"grade": [1.0] * 30 + [2.0] * 50})
    report = fa.risk(inst, release, population=population)
    assert report.to_dict()["journalist"]["highest"]["value"] == pytest.approx(1 / 30)


def test_hierarchy_builders_name_values_as_the_instance_reads_them():
    """masking and grouping hierarchies of float codes had leaves '13053.0', which
    the instance (reading 13053) refused as outside the hierarchy."""
    from fairanon.instances.builders import grouping_hierarchy, masking_hierarchy

    df = pd.DataFrame({"zip": [13053.0, 13068.0, 13053.0, 14850.0], "s": list("abab")})
    trees = (masking_hierarchy(df["zip"], levels=2),
             grouping_hierarchy(sorted(df["zip"].unique()), [2]))
    for tree in trees:
        inst = fa.Instance(df, S([A("zip", hierarchy=tree), A("s", role="sensitive")]))
        assert inst.schema["zip"].domain[:1] == ("13053",)


@pytest.mark.parametrize("column", [
    pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-01", "2020-01-02 12:00"], format="mixed"),
    pd.to_timedelta(["1D", "2D", "1D", "1D 1h"]),
])
def test_dates_read_alike_on_both_engines(column):
    """pandas writes a column of dates by all its cells (the time left out when every
    one is at midnight): the Dask engine's partition of midnights read '2020-01-01'
    where the whole column read '2020-01-01 00:00:00', one date as two values."""
    table = pd.DataFrame({"c": column, "s": list("abab")})
    schema = S([A("c"), A("s", role="sensitive")])
    local = fa.Instance(table, schema).schema["c"].domain
    assert len(local) == 3
    assert _dask_instance(table, schema).schema["c"].domain == local


def test_float16_and_float32_cells_read_without_overflow():
    """2**53 compared in float16 overflowed (a RuntimeWarning, an error under -W error)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in (np.float16, np.float32):
            texts, _ = cell_texts(pd.Series([1.0, 2.5, 0.1], dtype=dtype))
            assert list(texts) == ["1", "2.5", "0.1"]


def test_numbers_written_otherwise_get_a_hint():
    """A protected value 1.0 reads '1'; a column of text '1.0' holds no '1': the error
    now says the column holds the same number written otherwise."""
    table = pd.DataFrame({"g": ["1.0", "2.0"] * 2, "z": list("abab")})
    with pytest.raises(SchemaError,
                       match=r"Protected value '1' is not a value of 'g' \(the column holds '1.0'"):
        fa.Instance(table, S([A("g", role="protected", protected=[1.0]), A("z")]))
    tree = fa.Hierarchy.from_mapping({"*": ["1.0", "2.0"]})
    with pytest.raises(SchemaError, match=r"not in its hierarchy \(instance 'instance'\) "
                                          r"\(its hierarchy holds '1.0'"):
        fa.Instance(pd.DataFrame({"g": [1.0, 2.0], "z": list("ab")}),
                    S([A("g", hierarchy=tree), A("z")]))


def test_engines_order_numbers_written_alike_the_same_way():
    """'1' and '1.0' (one number) and whole numbers float64 holds alike sorted in
    first-appearance order on one machine and by text on Dask; now by exact value,
    then text, on both."""
    for cells, order in ((["1.0", "1", "2", "2"], ("1", "1.0", "2")),
                         ([9007199254740993, 9007199254740992, 5, 5],
                          ("5", "9007199254740992", "9007199254740993"))):
        table = pd.DataFrame({"c": pd.Series(cells, dtype=object), "s": list("abab")})
        schema = S([A("c", kind="ordered"), A("s", role="sensitive")])
        assert fa.Instance(table, schema).schema["c"].domain == order
        assert _dask_instance(table, schema).schema["c"].domain == order


def test_the_hierarchy_builder_of_the_app_refuses_an_attribute_not_released():
    """The app's builder read an identifier's values from the table, which holds no
    identifier now: a KeyError (500). It names the role instead."""
    from types import SimpleNamespace

    from fairanon.app.hierarchies import build
    from fairanon.exceptions import InvalidParameterError

    inst = fa.Instance(pd.DataFrame({"id": ["a", "b"], "z": ["x", "y"]}),
                       S([A("id", role="identifier"), A("z")]))
    with pytest.raises(InvalidParameterError, match="'id' is not released \\(identifier\\)"):
        build(None, "id", {"builder": "masking"}, SimpleNamespace(instance=inst))


def test_both_engines_name_the_same_text_of_a_mixed_column():
    """'2' comes first in the table, '1' first in sorted order: each engine named the
    first it met; both now name the least."""
    table = pd.DataFrame({"c": pd.Series([2, "2", 1, "1"], dtype=object), "s": list("abab")})
    schema = S([A("c"), A("s", role="sensitive")])
    with pytest.raises(SchemaError, match="holds '1' both as a number and as text"):
        fa.Instance(table, schema)
    with pytest.raises(SchemaError, match="holds '1' both as a number and as text"):
        _dask_instance(table, schema)
