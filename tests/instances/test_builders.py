"""Hierarchy builders: trees checked against hand-written ones, the ARX CSV round trip,
bad input, and a release over built trees that passes the verifier."""

from __future__ import annotations

import io
from fractions import Fraction

import pandas as pd
import pytest

import fairanon as fa
from fairanon.exceptions import InvalidParameterError
from fairanon.instances.builders import (
    grouping_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    numeric_order,
    to_arx_csv,
    with_hierarchy,
)
from fairanon.instances.hierarchy import Hierarchy
from fairanon.instances.schema import Attribute, Schema


def test_intervals_with_top_and_bottom_coding_by_hand():
    h = interval_hierarchy([17, 20, 24, 25, 31, 79, 80, 92, 24.0, float("nan")], [5, 10], bottom=20, top=80)
    by_hand = [
        ["17", "<20", "<20", "*"],  # bottom coding on every level
        ["20", "[20-25)", "[20-30)", "*"],
        ["24", "[20-25)", "[20-30)", "*"],
        ["25", "[25-30)", "[20-30)", "*"],
        ["31", "[30-35)", "[30-40)", "*"],
        ["79", "[75-80)", "[70-80)", "*"],
        ["80", ">=80", ">=80", "*"],  # top coding: 80 itself is coded, on every level
        ["92", ">=80", ">=80", "*"],
    ]
    assert h.to_levels() == by_hand
    assert h == Hierarchy.from_levels(by_hand)
    for row in by_hand:
        assert [h.generalize(row[0], j) for j in range(5)] == row + ["*"]  # past the top: the root


def test_generalize_and_the_arx_csv_agree_at_every_level():
    """The brief's example: 85 is >=80 on levels 1 and 2 in fairanon and in the CSV ARX
    reads (column j = the label at level j), and reading the CSV back gives the same
    labels at every level."""
    h = interval_hierarchy([17, 23, 37, 85], [5, 10], bottom=20, top=80)
    by_hand = {  # level -> labels of 17, 23, 37, 85
        0: ["17", "23", "37", "85"],
        1: ["<20", "[20-25)", "[35-40)", ">=80"],
        2: ["<20", "[20-30)", "[30-40)", ">=80"],
        3: ["*", "*", "*", "*"],
    }
    text = to_arx_csv(h)
    assert text == "17;<20;<20;*\n23;[20-25);[20-30);*\n37;[35-40);[30-40);*\n85;>=80;>=80;*\n"
    back = Hierarchy.from_arx_csv(io.StringIO(text))
    columns = list(zip(*[row.split(";") for row in text.splitlines()]))
    for level, labels in by_hand.items():
        assert [h.generalize(v, level) for v in by_hand[0]] == labels
        assert [back.generalize(v, level) for v in by_hand[0]] == labels
        assert list(columns[level]) == labels
    assert back == h and h.n_levels == 3


def test_an_arx_row_repeating_a_label_keeps_it_on_those_levels():
    """ARX reads 80;>=80;>=80;* as >=80 on levels 1 and 2, and Private;Private;* as
    Private (unchanged) on level 1; written back, the file is the same."""
    text = "79;[75-80);[70-80);*\n80;>=80;>=80;*\n81;>=80;>=80;*\n"
    h = Hierarchy.from_arx_csv(io.StringIO(text))
    assert [h.generalize("80", j) for j in range(4)] == ["80", ">=80", ">=80", "*"]
    assert [h.generalize("79", j) for j in range(4)] == ["79", "[75-80)", "[70-80)", "*"]
    assert h.ancestors("80") == ["80", ">=80", "*"]  # one node >=80
    assert to_arx_csv(h) == text
    private = Hierarchy.from_arx_csv(io.StringIO("Private;Private;*\nSelf-emp;Self;*\n"))
    assert [private.generalize("Private", j) for j in range(3)] == ["Private", "Private", "*"]
    assert to_arx_csv(private) == "Private;Private;*\nSelf-emp;Self;*\n"


def test_the_fulldomain_lattice_releases_top_coded_values_coded_at_every_level():
    """The lattice's levels are the rows': with k=2 over 81, 85, 23, 24, level 1 releases
    >=80 twice and [20-25) twice (2-anonymous, nothing suppressed); read as a tree
    climbed one node per level, 85;85;>=80;* would have released 85 at level 1."""
    from fairanon.solver.fulldomain.lattice import ladders

    table = pd.DataFrame({"age": ["81", "85", "23", "24"], "disease": ["flu", "cold", "flu", "hiv"]})
    ages = interval_hierarchy(table["age"], [5, 10], bottom=20, top=80)
    schema = Schema([with_hierarchy(Attribute("age", kind="numeric"), ages), Attribute("disease", role="sensitive")])
    inst = fa.Instance(table, schema, name="coded")
    (ladder,) = ladders(inst)
    level_of = {j: dict(zip(ladder.labels[0], labels)) for j, labels in enumerate(ladder.labels)}
    assert level_of[1] == {"23": "[20-25)", "24": "[20-25)", "81": ">=80", "85": ">=80"}
    assert level_of[2] == {"23": "[20-30)", "24": "[20-30)", "81": ">=80", "85": ">=80"}
    release = fa.anonymize(inst, [fa.KAnonymity(2)], method="fulldomain", seed=0)
    assert fa.verify(inst, release, [fa.KAnonymity(2)]).passed
    assert release.table["age"].tolist() == [">=80", ">=80", "[20-25)", "[20-25)"]


def test_numbers_keep_their_text_and_are_placed_exactly():
    """Leaves are the values as written (what a column read as text holds); intervals
    by hand: 030 in [30-40), 45.0 in [40-50), 1e3 in [1000-1010)."""
    h = interval_hierarchy(["45.0", "030", "1e3", "45"], [10, 100])
    assert h.to_levels() == [["030", "[30-40)", "[0-100)", "*"], ["45", "[40-50)", "[0-100)", "*"],
                             ["45.0", "[40-50)", "[0-100)", "*"], ["1e3", "[1000-1010)", "[1000-1100)", "*"]]
    table = pd.DataFrame({"age": ["45.0", "030", "1e3", "45"]})
    inst = fa.Instance(table, Schema([with_hierarchy(Attribute("age", kind="numeric"), h)]))
    assert list(inst.table["age"]) == ["45.0", "030", "1e3", "45"]
    # 2**53 + 1 is not a float: placed exactly, its label written in full
    big = interval_hierarchy([2**53 + 1, "9007199254740994", 2**53 - 1], [2])
    assert big.to_levels() == [["9007199254740991", "[9007199254740990-9007199254740992)", "*"],
                               ["9007199254740993", "[9007199254740992-9007199254740994)", "*"],
                               ["9007199254740994", "[9007199254740994-9007199254740996)", "*"]]
    # a width of 0.1: 0.3 is in [0.3-0.4) (in floats 0.3 // 0.1 is 2); no two intervals share a label
    tenths = interval_hierarchy(["0.1", "0.25", "0.3", 0.39], ["0.1"])
    assert [row[1] for row in tenths.to_levels()] == ["[0.1-0.2)", "[0.2-0.3)", "[0.3-0.4)", "[0.3-0.4)"]
    tiny = interval_hierarchy(["1", "1.00000000000000000001"], ["1e-20"])
    assert [row[1] for row in tiny.to_levels()] == ["[1-1.00000000000000000001)",
                                                    "[1.00000000000000000001-1.00000000000000000002)"]
    assert interval_hierarchy([1], [5], origin="1/3").ancestors("1") == ["1", "[1/3-16/3)", "*"]  # no decimal
    assert numeric_order(["10", "9", "09.0", 9]) == ["09.0", "9", "10"]


def test_a_formula_in_a_tree_is_written_neutralized_and_read_back():
    h = grouping_hierarchy(['=HYPERLINK("x")', "b", "-1"], [2])
    text = to_arx_csv(h)
    assert text.splitlines() == ['"\'=HYPERLINK(""x"")";"[=HYPERLINK(""x"")-b]";*',  # a quote doubled, in quotes
                                 'b;"[=HYPERLINK(""x"")-b]";*', "-1;-1;*"]  # -1 is a number, not a formula
    assert Hierarchy.from_arx_csv(io.StringIO(text)) == h
    # a file written as it is (a formula without the ') is read as it is, as a release is
    raw = Hierarchy.from_arx_csv(io.StringIO("=x;*\n'=y;*\n"))
    assert raw.leaves == ("=x", "'=y")
    kept = Hierarchy.from_arx_csv(io.StringIO("'=y;*\n"), neutralized=False)
    assert kept.leaves == ("'=y",)
    assert Hierarchy.from_arx_csv(io.StringIO("'=y;*\n")).leaves == ("=y",)


@pytest.mark.parametrize("build, message", [
    (lambda: grouping_hierarchy(["a", "*"], [2]), "hold '\\*', which is reserved for suppression"),
    (lambda: grouping_hierarchy(["a", "b", "[a-b]"], [2]),
     r"hold '\[a-b\]', which is also the label the tree gives 'a' at level 1"),
    (lambda: grouping_hierarchy(["a-b", "c", "a", "b-c"], [2]), r"two groups the label '\[a-b-c\]'"),
    (lambda: masking_hierarchy(["12", "1*"]), "hold '1\\*', which holds the mask character"),
    (lambda: interval_hierarchy(["1", "*"], [5]), "must hold numbers. Got '\\*'"),
])
def test_builder_errors_say_what_is_wrong(build, message):
    with pytest.raises(InvalidParameterError, match=message):
        build()


def test_intervals_are_cut_at_the_coding_thresholds_and_take_an_origin():
    h = interval_hierarchy([3, 7, 12], [4, 8], origin=1, bottom=2, top=11)
    assert h.ancestors("3") == ["3", "[2-5)", "[2-9)", "*"]  # [1-5) and [1-9) cut at bottom=2
    assert h.ancestors("7") == ["7", "[5-9)", "[2-9)", "*"]
    assert h.ancestors("12") == ["12", ">=11", "*"]
    fractional = interval_hierarchy(["0.5", "1.25"], ["0.5", 1])
    assert fractional.ancestors("1.25") == ["1.25", "[1-1.5)", "[1-2)", "*"]


@pytest.mark.parametrize("kwargs, message", [
    ({"widths": [5, 7]}, "whole multiple"),
    ({"widths": [10, 5]}, "whole multiple"),
    ({"widths": [0]}, "positive"),
    ({"widths": []}, "non-empty list"),
    ({"widths": "5"}, "non-empty list"),
    ({"widths": ["x"]}, "'widths' parameter of interval_hierarchy must be a number. Got 'x'"),
    ({"widths": [5], "bottom": 50, "top": 20}, "'bottom' parameter of interval_hierarchy must be below 'top'"),
    ({"widths": [5], "origin": True}, "'origin' parameter"),
])
def test_interval_bad_input(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        interval_hierarchy([1, 2], **kwargs)
    with pytest.raises(InvalidParameterError, match="must hold numbers. Got 'old'"):
        interval_hierarchy([1, "old"], [5])
    with pytest.raises(InvalidParameterError, match="at least one number"):
        interval_hierarchy([float("nan")], [5])


def test_grouping_by_hand():
    order = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "HS-grad"]
    h = grouping_hierarchy(order, [2, 2])
    assert h == Hierarchy.from_levels([
        ["Preschool", "[Preschool-1st-4th]", "[Preschool-7th-8th]", "*"],
        ["1st-4th", "[Preschool-1st-4th]", "[Preschool-7th-8th]", "*"],
        ["5th-6th", "[5th-6th-7th-8th]", "[Preschool-7th-8th]", "*"],
        ["7th-8th", "[5th-6th-7th-8th]", "[Preschool-7th-8th]", "*"],
        ["HS-grad", "HS-grad", "HS-grad", "*"],  # a group of one value is the value
    ])
    assert h.leaves == tuple(order)  # the order is kept
    for bad in ([1], [], "2", [2.0], [True]):
        with pytest.raises(InvalidParameterError, match="'sizes' parameter of grouping_hierarchy"):
            grouping_hierarchy(order, bad)
    with pytest.raises(InvalidParameterError, match="distinct values"):
        grouping_hierarchy(["a", "a"], [2])


def test_masking_right_to_left_and_left_to_right():
    h = masking_hierarchy(["13053", "13068", "14850"], levels=3)
    assert h == Hierarchy.from_levels([
        ["13053", "1305*", "130**", "13***", "*"],
        ["13068", "1306*", "130**", "13***", "*"],
        ["14850", "1485*", "148**", "14***", "*"],
    ])
    assert h.lca(["13053", "13068"]) == "130**"
    left = masking_hierarchy(["AB12", "CD12"], from_right=False, levels=2)
    assert left.lca(["AB12", "CD12"]) == "**12"
    assert masking_hierarchy(["123"]).ancestors("123") == ["123", "12*", "1**", "*"]  # default: all but one
    for kwargs, message in (({"levels": 5}, r"in \[0, 3\]"), ({"char": "**"}, "one character")):
        with pytest.raises(InvalidParameterError, match=message):
            masking_hierarchy(["AB12"], **kwargs)
    with pytest.raises(InvalidParameterError, match="must not be empty"):
        masking_hierarchy([])


@pytest.mark.parametrize("tree", [
    Hierarchy.from_mapping({"*": {"A": ["a1", "a2"], "b": None}}),
    interval_hierarchy(range(15, 95, 3), [5, 10, 20], bottom=20, top=80),
    masking_hierarchy(["13053", "13068", "14850", "9"], levels=2),
])
def test_arx_csv_round_trip(tree):
    text = to_arx_csv(tree)
    assert Hierarchy.from_arx_csv(io.StringIO(text)) == tree
    assert Hierarchy.from_levels(tree.to_levels()) == tree
    assert len({len(row) for row in tree.to_levels()}) == 1  # ARX: one column per level


def test_a_release_over_built_trees_verifies():
    """Full-domain generalization over an interval tree (numeric ages) and a masking
    tree (zip codes): the release passes the verifier, and its labels are nodes of the
    built trees."""
    table = pd.DataFrame({"age": [17, 23, 24, 36, 38, 45, 47, 81, 84, 29],
                          "zip": ["13053", "13068", "13053", "14850", "14853", "14850", "13053", "13068", "14853",
                                  "13053"],
                          "disease": ["flu", "cold", "flu", "hiv", "flu", "cold", "hiv", "flu", "cold", "flu"]})
    schema = Schema([Attribute("age", kind="numeric"), Attribute("zip"), Attribute("disease", role="sensitive")])
    ages = interval_hierarchy(table["age"], [5, 10, 20], bottom=20, top=80)
    zips = masking_hierarchy(table["zip"], levels=3)
    schema = schema.replace(with_hierarchy(schema["age"], ages)).replace(with_hierarchy(schema["zip"], zips))
    assert schema["age"].kind == "categorical"
    inst = fa.Instance(table.astype({"age": str}), schema, name="built")
    reqs = [fa.KAnonymity(2)]
    release = fa.anonymize(inst, reqs, method="fulldomain", seed=0)
    assert fa.verify(inst, release, reqs).passed
    assert set(release.table["age"]) <= set(ages.nodes) | {"*"}
    assert set(release.table["zip"]) <= set(zips.nodes) | {"*"}


def test_with_hierarchy_keeps_an_order_the_tree_follows():
    edu = Attribute("edu", kind="ordered", order=["a", "b", "c"])
    assert with_hierarchy(edu, grouping_hierarchy(["a", "b", "c"], [2])).kind == "ordered"
    assert with_hierarchy(edu, masking_hierarchy(["x1", "x2"])).kind == "categorical"
    age = Attribute("age", kind="numeric", intervals=fa.IntervalHierarchy((5,)))
    built = with_hierarchy(age, interval_hierarchy([1, 2], [5]))
    assert built.kind == "categorical" and built.intervals is None
    assert Attribute.from_spec("age", built.to_spec()) == built  # the job-file entry reads back


@pytest.mark.parametrize("values, kwargs, name", [
    (["1e5000", "5"], {}, "values"),  # Python refuses to write its 5001 digits
    (["1e2000000", "5"], {}, "values"),  # Fraction would spend seconds on 10**2000000
    (["1e309", "5"], {}, "values"),  # just above a float's largest, 1.798e308
    (["1" + "0" * 1000], {}, "values"),  # 1001 digits
    ([10**5000], {}, "values"),
    ([Fraction(1, 10**5000)], {}, "values"),
    ([1, 2], {"widths": ["1e400"]}, "widths"),
    ([1, 2], {"top": "1e99999999"}, "top"),
])
def test_numbers_beyond_a_floats_range_are_refused_before_they_are_read(values, kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of interval_hierarchy must (hold "
                                                    "numbers|be a number) within a float's range"):
        interval_hierarchy(values, **{"widths": [10], **kwargs})


def test_the_largest_numbers_within_the_bounds_are_placed_exactly():
    """1.5e308 lies in [1.5e308, 1.5e308 + 10), by hand; 1e-300 in [0, 1e-300) of width 1e-300 when it is 0."""
    big = interval_hierarchy(["1.5e308", "5"], [10])
    assert big.ancestors("1.5e308") == ["1.5e308", f"[15{'0' * 307}-15{'0' * 305}10)", "*"]
    tiny = interval_hierarchy(["1e-300", "0"], ["1e-300"])
    assert tiny.ancestors("0") == ["0", f"[0-0.{'0' * 299}1)", "*"]
