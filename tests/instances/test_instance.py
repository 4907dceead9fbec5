"""Instance validation, column views, label parsing and partition generalization."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairanon.exceptions import SchemaError
from fairanon.instances import Attribute, Hierarchy, Instance, Schema, format_range, label_covers
from fairanon.instances.generalization import format_number
from fairanon.release import generalize_partition

EDU = ("HS", "Bachelors", "Masters", "PhD")
DISEASE = Hierarchy.from_mapping({"*": {"resp": ["flu", "cold"], "other": ["hiv", "cancer"]}})


def toy_table():
    return pd.DataFrame(
        {
            "age": [25, 31, 47, 52, 38, 29],
            "zip": ["13053", "13053", "14850", "14850", "13053", "14850"],
            "edu": ["HS", "Masters", "PhD", "Bachelors", "HS", "Masters"],
            "sex": ["F", "M", "F", "M", "F", "M"],
            "disease": ["flu", "cold", "hiv", "flu", "cancer", "cold"],
            "loan": ["no", "yes", "yes", "no", "no", "yes"],
            "note": ["a", "b", "c", "d", "e", "f"],
        },
        index=pd.Index([10, 11, 12, 13, 14, 15], name="record_id"),
    )


def toy_schema(**overrides):
    attrs = {
        "age": Attribute("age", kind="numeric"),
        "zip": Attribute("zip"),
        "edu": Attribute("edu", kind="ordered", order=EDU),
        "sex": Attribute("sex", role="protected", protected=["F"]),
        "disease": Attribute("disease", role="sensitive", hierarchy=DISEASE),
        "loan": Attribute("loan", role="decision", negative="no"),
    }
    attrs.update(overrides)
    return Schema([a for a in attrs.values() if a is not None])


@pytest.fixture
def toy():
    return Instance(toy_table(), toy_schema(), name="toy")


# ---------------------------------------------------------------------------- a valid instance


def test_valid_instance_views(toy):
    assert toy.n_rows == len(toy) == 6
    assert list(toy.row_ids) == [10, 11, 12, 13, 14, 15]
    assert toy.schema.qi == ("age", "zip", "edu", "sex")
    assert toy.schema.generalizable == ("age", "zip", "edu")
    assert list(toy.table.columns) == ["age", "zip", "edu", "sex", "disease", "loan"]
    # columns the schema does not name are ignored but kept aside
    assert toy.schema["note"].role == "ignore"
    assert list(toy.extra.columns) == ["note"]
    assert repr(toy) == (
        "Instance('toy', n_rows=6, qi=['age', 'zip', 'edu', 'sex'], sensitive=['disease'], "
        "protected='sex', decision='loan')"
    )


def test_defaults_filled_in(toy):
    # a categorical attribute without a hierarchy gets a flat one over the values present
    assert toy.schema["zip"].hierarchy == Hierarchy.flat(["13053", "14850"])
    assert toy.schema["loan"].domain == ("no", "yes")
    ordered = Instance(toy_table(), toy_schema(edu=Attribute("edu", kind="ordered")))
    # without an order: the values present, numbers in numeric order
    assert ordered.schema["edu"].order == ("Bachelors", "HS", "Masters", "PhD")
    nums = pd.DataFrame({"x": ["10", "9", "b", "100"]})
    assert Instance(nums, Schema([Attribute("x", kind="ordered")])).schema["x"].order == (
        "9",
        "10",
        "100",
        "b",
    )


def test_codes_and_masks(toy):
    assert toy.codes("edu").tolist() == [0, 2, 3, 1, 0, 2]
    assert toy.codes("age").tolist() == [25.0, 31.0, 47.0, 52.0, 38.0, 29.0]
    assert toy.codes("disease").tolist() == [0, 1, 2, 0, 3, 1]
    assert toy.active_domain("edu").tolist() == [True, True, True, True]
    assert toy.protected_mask().tolist() == [True, False, True, False, True, False]
    assert toy.negative_mask().tolist() == [True, False, False, True, True, False]
    assert isinstance(toy.table["zip"].dtype, pd.CategoricalDtype)


def test_masks_need_the_roles():
    inst = Instance(toy_table(), toy_schema(sex=Attribute("sex"), loan=None))
    with pytest.raises(SchemaError, match="no protected attribute"):
        inst.protected_mask()
    with pytest.raises(SchemaError, match="no decision attribute"):
        inst.negative_mask()


def test_subset_keeps_schema(toy):
    sub = toy.subset([11, 13])
    assert list(sub.row_ids) == [11, 13]
    assert sub.schema["edu"].order == EDU
    assert sub.table["zip"].tolist() == ["13053", "14850"]
    assert sub.extra["note"].tolist() == ["b", "d"]
    assert sub.name == "toy[subset]"


def test_categorical_input_gives_the_same_instance(toy):
    """Categorical columns are recoded category by category (the fast path)."""
    table = toy_table()
    table["zip"] = pd.Categorical(
        table["zip"], categories=["99999", "14850", "13053"]
    )  # one unused
    table["edu"] = table["edu"].astype("category")
    table["disease"] = pd.Categorical(table["disease"])
    inst = Instance(table, toy_schema())
    pd.testing.assert_frame_equal(inst.table, toy.table)
    assert inst.schema["zip"].hierarchy.leaves == ("13053", "14850")


def test_categorical_input_with_numbers_and_outside_values():
    table = pd.DataFrame({"n": pd.Categorical([3, 1, 3]), "s": ["a", "b", "a"]})
    inst = Instance(
        table, Schema([Attribute("n", kind="ordered", order=["1", "2", "3"]), Attribute("s")])
    )
    assert inst.table["n"].tolist() == ["3", "1", "3"]
    assert inst.codes("n").tolist() == [2, 0, 2]
    bad = pd.DataFrame({"n": pd.Categorical(["x", "y"])})
    with pytest.raises(SchemaError, match=r"\['y'\] of column 'n' are not in its order"):
        Instance(bad, Schema([Attribute("n", kind="ordered", order=["x"])]))


# ---------------------------------------------------------------------------- validation errors


def test_unknown_column():
    with pytest.raises(SchemaError, match=r"Unknown column\(s\) \['salary'\]"):
        Instance(toy_table(), toy_schema(salary=Attribute("salary")))


def test_wrong_type_for_numeric():
    table = toy_table()
    table["age"] = table["age"].astype(object)
    table.loc[12, "age"] = "forty"
    with pytest.raises(SchemaError, match="'age' is declared numeric but holds 'forty'"):
        Instance(table, toy_schema())


def test_missing_values_without_policy():
    table = toy_table()
    table.loc[11, "zip"] = None
    table.loc[12, "age"] = np.nan
    with pytest.raises(
        SchemaError, match=r"Missing values in 'age' \(1 rows\), 'zip' \(1 rows\).*missing='drop'"
    ):
        Instance(table, toy_schema())


def test_missing_values_dropped():
    table = toy_table()
    table.loc[11, "zip"] = None
    table.loc[12, "age"] = np.nan
    table.loc[13, "note"] = None  # ignored column: no effect
    inst = Instance(table, toy_schema(), missing="drop")
    assert inst.dropped_rows == [11, 12]
    assert list(inst.row_ids) == [10, 13, 14, 15]
    assert inst.codes("age").tolist() == [25.0, 52.0, 38.0, 29.0]


def test_every_row_missing_with_drop():
    table = toy_table()
    table["zip"] = None
    with pytest.raises(SchemaError, match="Every row"):
        Instance(table, toy_schema(), missing="drop")


def test_bad_missing_policy():
    with pytest.raises(SchemaError, match="missing must be one of"):
        Instance(toy_table(), toy_schema(), missing="fill")


def test_empty_table():
    with pytest.raises(SchemaError, match="empty table"):
        Instance(toy_table().iloc[:0], toy_schema(), name="void")


def test_value_outside_hierarchy():
    table = toy_table()
    table.loc[14, "disease"] = "measles"
    with pytest.raises(
        SchemaError, match=r"\['measles'\] of column 'disease' are not in its hierarchy"
    ):
        Instance(table, toy_schema())


def test_value_outside_order():
    table = toy_table()
    table.loc[14, "edu"] = "Kindergarten"
    with pytest.raises(SchemaError, match="not in its order"):
        Instance(table, toy_schema())


def test_star_is_reserved_in_data():
    table = toy_table()
    table.loc[14, "zip"] = "*"
    with pytest.raises(SchemaError, match="reserved for suppression"):
        Instance(table, toy_schema())


def test_protected_and_negative_values_must_exist():
    with pytest.raises(SchemaError, match="Protected value 'X'"):
        Instance(toy_table(), toy_schema(sex=Attribute("sex", role="protected", protected=["X"])))
    with pytest.raises(SchemaError, match="Negative value 'maybe'"):
        Instance(toy_table(), toy_schema(loan=Attribute("loan", role="decision", negative="maybe")))


def test_ordered_hierarchy_must_match_order():
    tree = Hierarchy.from_mapping({"*": {"school": ["HS"], "uni": ["Bachelors", "Masters"]}})
    with pytest.raises(SchemaError, match="list different values"):
        Instance(
            toy_table(), toy_schema(edu=Attribute("edu", kind="ordered", order=EDU, hierarchy=tree))
        )


def test_other_input_errors():
    with pytest.raises(SchemaError, match="needs a pandas DataFrame"):
        Instance({"age": [1]}, toy_schema())
    with pytest.raises(SchemaError, match="needs a Schema"):
        Instance(toy_table(), [Attribute("age")])
    table = toy_table()
    table.index = [1, 1, 2, 3, 4, 5]
    with pytest.raises(SchemaError, match="not unique"):
        Instance(table, toy_schema())
    with pytest.raises(SchemaError, match="no quasi-identifier"):
        Instance(toy_table(), Schema([Attribute("disease", role="sensitive")]))


def test_schema_errors():
    with pytest.raises(SchemaError, match="role must be one of"):
        Attribute("a", role="secret")
    with pytest.raises(SchemaError, match="type must be one of"):
        Attribute("a", kind="text")
    with pytest.raises(SchemaError, match="names no protected value"):
        Attribute("a", role="protected")
    with pytest.raises(SchemaError, match="names no negative value"):
        Attribute("a", role="decision")
    with pytest.raises(SchemaError, match="takes intervals"):
        Attribute("a", kind="numeric", order=["1"])
    with pytest.raises(SchemaError, match="more than once"):
        Schema([Attribute("a"), Attribute("a")])
    with pytest.raises(SchemaError, match="At most one protected"):
        Schema(
            [
                Attribute("a", role="protected", protected=["x"]),
                Attribute("b", role="protected", protected=["y"]),
            ]
        )
    with pytest.raises(SchemaError, match="Unknown attribute 'z'"):
        toy_schema()["z"]


# ---------------------------------------------------------------------------- labels


def test_format_range():
    age = Attribute("age", kind="numeric")
    edu = Attribute("edu", kind="ordered", order=EDU)
    assert format_range(age, 25, 34) == "[25-34]"
    assert format_range(age, 2.5, 2.5) == "2.5"
    assert format_range(edu, "HS", "Masters") == "[HS-Masters]"
    assert format_range(edu, "PhD", "PhD") == "PhD"


def test_label_covers_numeric():
    age = Attribute("age", kind="numeric")
    labels = ["[25-34]", "40", "*", "(25-35]", "[20-25)", "[-5-5]"]
    covers = label_covers(age, labels)
    assert covers.labels == tuple(labels)
    rows = np.array([0, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 5])
    values = np.array([25, 34, 35, 40, 41, -1e9, 25, 35, 20, 25, -5, 6], dtype=float)
    assert covers.contains(rows, values).tolist() == [
        True,
        True,
        False,
        True,
        False,
        True,
        False,
        True,
        True,
        False,
        True,
        False,
    ]


@pytest.mark.parametrize("label", ["young", "[30-20]", "[a-b]", "nan", "(25-35"])
def test_label_covers_numeric_rejects(label):
    with pytest.raises(SchemaError, match="is not a number, a range"):
        label_covers(Attribute("age", kind="numeric"), [label])


def _bounds_by_every_dash(label: str):
    """The reading of a bracketed numeric label by trying each '-' in turn."""
    inner = label[1:-1]
    for i, ch in enumerate(inner):
        if ch == "-" and 0 < i < len(inner) - 1:
            try:
                lo, hi = float(inner[:i]), float(inner[i + 1:])
            except ValueError:
                continue
            if lo <= hi:
                return lo, hi, label[0] == "(", label[-1] == ")"
    return None


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False)),
       st.one_of(st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False)),
       st.sampled_from("[("), st.sampled_from("])"))
def test_numeric_ranges_read_as_by_trying_each_dash(a, b, left, right):
    label = f"{left}{format_number(a)}-{format_number(b)}{right}"
    expected = _bounds_by_every_dash(label)
    age = Attribute("age", kind="numeric")
    if expected is None:
        with pytest.raises(SchemaError):
            label_covers(age, [label])
        return
    covers = label_covers(age, [label])
    assert (covers.lo[0], covers.hi[0], covers.lo_open[0], covers.hi_open[0]) == expected


def test_label_covers_ordered():
    edu = Attribute("edu", kind="ordered", order=EDU)
    covers = label_covers(edu, ["HS", "[Bachelors-PhD]", "HS-Masters", "*"])
    assert covers.mask.tolist() == [
        [True, False, False, False],
        [False, True, True, True],
        [True, True, True, False],
        [True, True, True, True],
    ]
    with pytest.raises(SchemaError, match="range, hierarchy node"):
        label_covers(edu, ["[PhD-HS]"])


def test_label_covers_values_with_dashes():
    order = ("<0", "0-200", ">200-500", ">500")
    attr = Attribute("bal", kind="ordered", order=order)
    covers = label_covers(attr, ["0-200", "[0-200->200-500]"])
    assert covers.mask.tolist() == [[False, True, False, False], [False, True, True, False]]


def test_label_covers_categorical_hierarchy():
    attr = Attribute("disease", role="sensitive", hierarchy=DISEASE)
    covers = label_covers(attr, ["resp", "hiv", "*"])
    assert covers.contains(np.array([0, 0, 1, 2]), np.array([0, 2, 2, 3])).tolist() == [
        True,
        False,
        True,
        True,
    ]
    with pytest.raises(SchemaError, match="hierarchy node or '\\*'"):
        label_covers(attr, ["[flu-cold]"])


def test_label_covers_node_whose_leaves_are_apart_in_the_domain():
    """A leaf order unlike the depth-first one: node A covers the 1st and 3rd values.
    Counts, coverage and spans over active values computed by hand."""
    tree = Hierarchy({"*": None, "A": "*", "B": "*", "a1": "A", "a2": "A", "b1": "B", "b2": "B"},
                     leaf_order=["a1", "b1", "a2", "b2"])
    covers = label_covers(Attribute("x", hierarchy=tree), ["A", "b1", "*", "a1"])
    assert covers.mask.tolist() == [
        [True, False, True, False],
        [False, True, False, False],
        [True, True, True, True],
        [True, False, False, False],
    ]
    assert covers.contains(np.array([0, 0, 1, 3]), np.array([2, 1, 1, 2])).tolist() == [True, False, True, False]
    assert covers.counts.tolist() == [2, 1, 4, 1]
    assert covers.labels_per_value().tolist() == [3, 2, 2, 1]
    assert covers.single_values().tolist() == [-1, 1, -1, 0]
    # Active values b1 and b2 (ranks 0 and 1): A and a1 cover none of them.
    count, first, last = covers.active_spans(np.array([False, True, False, True]))
    assert count.tolist() == [0, 1, 2, 0]
    assert first.tolist() == [0, 0, 0, 0]
    assert last.tolist() == [-1, 0, 1, -1]
    # Active a1, a2, b2 (ranks 0, 1, 2): A covers ranks 0 and 1.
    count, first, last = covers.active_spans(np.array([True, False, True, True]))
    assert (count.tolist(), first.tolist(), last.tolist()) == ([2, 0, 3, 1], [0, 0, 0, 0], [1, -1, 2, 0])


def test_label_covers_ordered_attribute_whose_tree_lists_its_leaves_in_another_order():
    """Order c < b < a, tree lo = {a, b}, hi = {c}: a node covers the values it names,
    wherever they stand in the attribute's order (by hand)."""
    tree = Hierarchy({"*": None, "lo": "*", "hi": "*", "a": "lo", "b": "lo", "c": "hi"},
                     leaf_order=["a", "b", "c"])
    covers = label_covers(Attribute("x", kind="ordered", order=["c", "b", "a"], hierarchy=tree),
                          ["lo", "hi", "b", "[c-b]"])
    assert covers.mask.tolist() == [[False, True, True], [True, False, False], [False, True, False],
                                    [True, True, False]]
    assert covers.contains(np.array([0, 0, 1]), np.array([0, 2, 0])).tolist() == [False, True, True]
    assert covers.single_values().tolist() == [-1, 0, 1, -1]
    count, first, last = covers.active_spans(np.ones(3, dtype=bool))
    assert (count.tolist(), first.tolist(), last.tolist()) == ([2, 1, 1, 2], [1, 0, 1, 0], [2, 0, 1, 1])


def test_label_covers_builds_no_labels_by_values_table_unless_asked():
    """2,000 values all released: reading and testing them needs no 2,000 x 2,000
    table, and asking for the table under a limit it exceeds is refused by name."""
    from fairanon._memory import memory_limit
    from fairanon.exceptions import MemoryLimitError

    values = [f"id{i}" for i in range(2_000)]
    covers = label_covers(Attribute("pid", hierarchy=Hierarchy.flat(values)), values)
    codes = np.arange(2_000)
    assert covers.contains(codes, codes).all() and not covers.contains(codes, (codes + 1) % 2_000).any()
    with memory_limit("1MB"), pytest.raises(MemoryLimitError, match="2,000 values of 'pid'"):
        covers.mask


def test_label_covers_empty():
    assert label_covers(Attribute("age", kind="numeric"), []).lo.shape == (0,)
    assert label_covers(Attribute("d", hierarchy=DISEASE), []).mask.shape == (0, 4)


# ---------------------------------------------------------------------------- generalize_partition


def test_generalize_partition(toy):
    groups = np.array([0, 0, 1, 1, 0, 1])  # {10, 11, 14}, {12, 13, 15}
    out = generalize_partition(toy, groups)
    assert list(out.index) == list(toy.row_ids)
    assert out["age"].tolist() == ["[25-38]", "[25-38]", "[29-52]", "[29-52]", "[25-38]", "[29-52]"]
    assert out["zip"].tolist() == ["13053", "13053", "14850", "14850", "13053", "14850"]
    assert out["edu"].tolist() == ["[HS-Masters]"] * 2 + ["[Bachelors-PhD]"] * 2 + [
        "[HS-Masters]",
        "[Bachelors-PhD]",
    ]
    # protected, sensitive and decision columns are released unchanged
    for col in ("sex", "disease", "loan"):
        assert out[col].tolist() == toy.table[col].tolist()
    # every released label covers the original value
    for col in ("age", "zip", "edu"):
        attr = toy.schema[col]
        labels = pd.Categorical(out[col])
        covers = label_covers(attr, list(labels.categories))
        assert covers.contains(labels.codes.astype(int), toy.codes(col)).all()


def test_generalize_partition_hierarchy_lca_and_suppress():
    table = pd.DataFrame(
        {"d": ["flu", "cold", "hiv", "cancer", "flu"], "age": [1, 2, 3, 4, 5]},
        index=[1, 2, 3, 4, 5],
    )
    inst = Instance(
        table, Schema([Attribute("d", hierarchy=DISEASE), Attribute("age", kind="numeric")])
    )
    out = generalize_partition(inst, [7, 7, 9, 9, 3], suppress=["age"])
    assert out["d"].tolist() == ["resp", "resp", "other", "other", "flu"]
    assert out["age"].tolist() == ["*"] * 5
    mixed = generalize_partition(inst, [0, 0, 0, 1, 1])
    assert mixed["d"].tolist() == ["*", "*", "*", "*", "*"]
    assert mixed["age"].tolist() == ["[1-3]"] * 3 + ["[4-5]"] * 2
