"""Hierarchy builders: trees checked against hand-written ones, the ARX CSV round trip,
bad input, and a release over built trees that passes the verifier."""

from __future__ import annotations

import io

import pandas as pd
import pytest

import fairanon as fa
from fairanon.exceptions import InvalidParameterError
from fairanon.instances.builders import (
    grouping_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    to_arx_csv,
    with_hierarchy,
)
from fairanon.instances.hierarchy import Hierarchy
from fairanon.instances.schema import Attribute, Schema


def test_intervals_with_top_and_bottom_coding_by_hand():
    h = interval_hierarchy([17, 20, 24, 25, 31, 79, 80, 92, 24.0, float("nan")], [5, 10], bottom=20, top=80)
    expected = Hierarchy.from_levels([
        ["17", "17", "<20", "*"],  # bottom coding on every level
        ["20", "[20-25)", "[20-30)", "*"],
        ["24", "[20-25)", "[20-30)", "*"],
        ["25", "[25-30)", "[20-30)", "*"],
        ["31", "[30-35)", "[30-40)", "*"],
        ["79", "[75-80)", "[70-80)", "*"],
        ["80", "80", ">=80", "*"],  # top coding: 80 itself is coded
        ["92", "92", ">=80", "*"],
    ])
    assert h == expected


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
