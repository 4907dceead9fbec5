"""Hierarchy builders (mapping, ARX CSV, flat, levels) and numeric interval ladders."""

import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairanon.exceptions import SchemaError
from fairanon.instances.hierarchy import SUPPRESSED, Hierarchy, IntervalHierarchy
from tests.trees import node_height, random_trees

MARITAL = {
    "*": {
        "Married": ["CF-Spouse", "Spouse Present"],
        "Not Married": ["Separated", "Never Married", "Divorced", "Spouse Absent"],
    }
}


@pytest.fixture
def marital():
    return Hierarchy.from_mapping(MARITAL)


# ---------------------------------------------------------------------------- from_mapping


def test_from_mapping_structure(marital):
    assert marital.root == "*"
    assert marital.leaves == (
        "CF-Spouse",
        "Spouse Present",
        "Separated",
        "Never Married",
        "Divorced",
        "Spouse Absent",
    )
    assert marital.height == 2
    assert marital.parent["CF-Spouse"] == "Married"
    assert marital.children["*"] == ["Married", "Not Married"]
    assert marital.depth["Divorced"] == 2
    assert set(marital.nodes) == {"*", "Married", "Not Married", *marital.leaves}


def test_from_mapping_queries(marital):
    assert marital.covers("Married", "CF-Spouse")
    assert not marital.covers("Married", "Divorced")
    assert marital.covers("*", "Divorced")
    assert marital.covers("Divorced", "Divorced")
    assert marital.ancestors("Separated") == ["Separated", "Not Married", "*"]
    assert marital.lca(["Separated", "Divorced"]) == "Not Married"
    assert marital.lca(["Separated", "CF-Spouse"]) == "*"
    assert marital.lca(["Separated"]) == "Separated"
    assert marital.generalize("Separated", 0) == "Separated"
    assert marital.generalize("Separated", 1) == "Not Married"
    assert marital.generalize("Separated", 5) == "*"
    assert marital.leaf_mask("Married").tolist() == [True, True, False, False, False, False]


def test_star_always_names_the_root():
    h = Hierarchy.from_mapping({"any": {"A": ["a1", "a2"], "B": ["b"]}})
    assert h.root == "any"
    assert h.node(SUPPRESSED) == "any"
    assert SUPPRESSED in h
    assert h.leaf_mask("*").all()
    with pytest.raises(KeyError):
        h.node("nope")
    assert "nope" not in h


def test_from_mapping_several_tops_get_a_star_root():
    h = Hierarchy.from_mapping({"A": ["a1", "a2"], "B": ["b1"]})
    assert h.root == "*"
    assert h.parent["A"] == "*"
    assert h.leaves == ("a1", "a2", "b1")


def test_from_mapping_leaf_with_none_and_scalar():
    h = Hierarchy.from_mapping({"*": {"A": None, "B": "b"}})
    assert h.leaves == ("A", "b")
    assert h.depth["A"] == 1 and h.depth["b"] == 2


def test_from_mapping_mixed_list_of_mappings():
    h = Hierarchy.from_mapping({"*": [{"X": ["x1", "x2"]}, "y"]})
    assert h.leaves == ("x1", "x2", "y")
    assert h.parent["X"] == "*" and h.parent["y"] == "*"


def test_from_mapping_roundtrip(marital):
    assert Hierarchy.from_mapping(marital.to_mapping()) == marital


def test_from_mapping_rejects_repeated_labels():
    with pytest.raises(SchemaError, match="occurs twice"):
        Hierarchy.from_mapping({"*": {"A": ["x"], "B": ["x"]}})


@pytest.mark.parametrize("bad", [{}, ["a", "b"], "a"])
def test_from_mapping_rejects_non_mappings(bad):
    with pytest.raises(SchemaError, match="non-empty mapping"):
        Hierarchy.from_mapping(bad)


# ---------------------------------------------------------------------------- constructor checks


def test_constructor_needs_one_root():
    with pytest.raises(SchemaError, match="exactly one root"):
        Hierarchy({"a": None, "b": None})


def test_constructor_unknown_parent():
    with pytest.raises(SchemaError, match="unknown parent"):
        Hierarchy({"*": None, "a": "ghost"})


def test_constructor_rejects_cycles():
    with pytest.raises(SchemaError, match="not reachable"):
        Hierarchy({"*": None, "a": "*", "b": "c", "c": "b"})


def test_constructor_leaf_order_must_list_the_leaves():
    with pytest.raises(SchemaError, match="leaf order"):
        Hierarchy({"*": None, "a": "*", "b": "*"}, leaf_order=["a"])
    h = Hierarchy({"*": None, "a": "*", "b": "*"}, leaf_order=["b", "a"])
    assert h.leaves == ("b", "a")
    assert h.leaf_mask("a").tolist() == [False, True]


# ---------------------------------------------------------------------------- ARX CSV and levels


ZIP_CSV = "13053;1305*;130**;*\n13052;1305*;130**;*\n13268;1326*;132**;*\n"


def test_from_arx_csv_file_with_semicolons(tmp_path):
    path = tmp_path / "zip.csv"
    path.write_text(ZIP_CSV, encoding="utf-8")
    h = Hierarchy.from_arx_csv(path)
    assert h.leaves == ("13053", "13052", "13268")
    assert h.root == "*"
    assert h.ancestors("13052") == ["13052", "1305*", "130**", "*"]
    assert h.lca(["13053", "13268"]) == "*"
    assert h.height == 3
    # a str path works as well as a PathLike
    assert Hierarchy.from_arx_csv(str(path)) == h


def test_from_arx_csv_file_object_and_other_separator():
    h = Hierarchy.from_arx_csv(io.StringIO(ZIP_CSV.replace(";", ",")), sep=",")
    assert h.leaves == ("13053", "13052", "13268")
    assert h.parent["1326*"] == "132**"


def test_from_arx_csv_missing_file(tmp_path):
    with pytest.raises(SchemaError, match="does not exist"):
        Hierarchy.from_arx_csv(str(tmp_path / "absent.csv"))


def test_from_levels_collapses_repeated_labels_and_blank_cells():
    # ARX writes "Private;Private;*" for a value that stays itself one level up.
    h = Hierarchy.from_levels(
        [
            ["Private", "Private", "*"],
            ["Self-emp", "Self", "*"],
            ["", ""],
            ["Gov", " Gov ", "*", ""],
        ]
    )
    assert h.parent["Private"] == "*"
    assert h.parent["Gov"] == "*"
    assert h.leaves == ("Private", "Self-emp", "Gov")


def test_from_levels_several_tops_get_a_star_root():
    h = Hierarchy.from_levels([["a", "A"], ["b", "B"]])
    assert h.root == "*"
    assert h.ancestors("a") == ["a", "A", "*"]


def test_from_levels_errors():
    with pytest.raises(SchemaError, match="at least one row"):
        Hierarchy.from_levels([])
    with pytest.raises(SchemaError, match="more than one hierarchy row"):
        Hierarchy.from_levels([["a", "A", "*"], ["a", "B", "*"]])
    with pytest.raises(SchemaError, match="two parents"):
        Hierarchy.from_levels([["a", "A", "*"], ["b", "A", "X"]])


@pytest.mark.parametrize(
    "text, row, says",
    [
        # a row one level short: its top label lands under another row's level
        ("13053;1305*;130**;13***;*\n13068;1306*;130**\n", 2, "rows of different lengths"),
        ("13053;1305*;130**;13***;*\n13068;1306*;130**;13***;*\n13250;1325*;132**;*\n", 3, "different lengths"),
        # a level left empty in the middle of a row
        ("13053;1305*;130**;13***;*\n13068;;130**;13***;*\n", 2, "empty cell at level 1"),
        (";1305*;130**;13***;*\n", 1, "empty cell at its leaf"),
    ],
)
def test_a_ragged_hierarchy_file_is_named_ragged_with_its_row(tmp_path, text, row, says):
    path = tmp_path / "zip.csv"
    path.write_text(text)
    with pytest.raises(SchemaError) as err:
        Hierarchy.from_arx_csv(str(path))
    message = str(err.value)
    assert "is ragged" in message and says in message and f"row {row} " in message
    assert "zip.csv" in message and "two parents" not in message


def test_blank_rows_and_trailing_blank_cells_are_not_ragged():
    h = Hierarchy.from_levels([["a", "A", "*", "", ""], [], ["", " "], ["b", "B", "*"]])
    assert h.ancestors("a") == ["a", "A", "*"] and h.leaves == ("a", "b")


def test_a_tree_without_rows_climbs_one_node_per_level_and_writes_so():
    """A mapping gives no rows: a shallow leaf reaches the root early and stays there,
    and its ARX row says so (the root repeated), so reading it back gives the same levels."""
    h = Hierarchy.from_mapping({"*": {"A": ["a1", "a2"], "b": None}})
    assert [h.generalize("b", j) for j in range(3)] == ["b", "*", "*"]
    assert [h.generalize("a1", j) for j in range(3)] == ["a1", "A", "*"]
    assert h.to_levels() == [["a1", "A", "*"], ["a2", "A", "*"], ["b", "*", "*"]]
    assert Hierarchy.from_levels(h.to_levels()) == h
    # the same tree with b kept one level up is another hierarchy (its levels differ)
    kept = Hierarchy.from_levels([["a1", "A", "*"], ["a2", "A", "*"], ["b", "b", "*"]])
    assert kept.parent == h.parent and kept != h and kept.generalize("b", 1) == "b"


def test_level_rows_must_follow_the_tree():
    parent = {"*": None, "A": "*", "a": "A", "b": "*"}
    h = Hierarchy(parent, levels={"a": ["a", "A", "*"], "b": ["b", "b", "*"]})
    assert h.generalize("b", 1) == "b" and h.n_levels == 2
    with pytest.raises(SchemaError, match=r"level row \['b', 'A', '\*'\] of leaf 'b' is not its path"):
        Hierarchy(parent, levels={"a": ["a", "A", "*"], "b": ["b", "A", "*"]})
    with pytest.raises(SchemaError, match="the same length"):
        Hierarchy(parent, levels={"a": ["a", "A", "*"], "b": ["b", "*"]})
    with pytest.raises(SchemaError, match="one row per leaf"):
        Hierarchy(parent, levels={"a": ["a", "A", "*"]})
    with pytest.raises(KeyError):
        h.generalize("A", 1)  # levels are a leaf's


def test_several_tops_add_a_level_for_the_star_root():
    h = Hierarchy.from_levels([["a", "a", "A"], ["b", "B", "B"]])
    assert h.to_levels() == [["a", "a", "A", "*"], ["b", "B", "B", "*"]]


def test_from_arx_csv_reads_bytes_and_binary_streams_and_names_them():
    content = ZIP_CSV.encode("utf-8-sig")
    for source in (content, io.BytesIO(content)):
        h = Hierarchy.from_arx_csv(source)
        assert h.leaves == ("13053", "13052", "13268") and h.generalize("13268", 2) == "132**"
    for bad, says in ((b"\xff\xfe;*\n", "Hierarchy file 'up.csv' is not UTF-8 text"),
                      (b"a" * 200_000, "Hierarchy file 'up.csv' is not a valid CSV file: field larger"),
                      (b"a,*\nb,*\n", "Hierarchy file 'up.csv' looks ','-separated")):
        with pytest.raises(SchemaError, match=says):
            Hierarchy.from_arx_csv(bad, name="up.csv")
    with pytest.raises(SchemaError, match="The hierarchy stream is not UTF-8"):
        Hierarchy.from_arx_csv(io.BytesIO(b"\xff;*"))
    with pytest.raises(SchemaError, match="must be one character. Got ';;'"):
        Hierarchy.from_arx_csv(content, sep=";;")


# ---------------------------------------------------------------------------- flat


def test_flat_keeps_the_given_order():
    h = Hierarchy.flat(["b", "a", 3])
    assert h.leaves == ("b", "a", "3")
    assert h.root == "*" and h.height == 1
    assert h.lca(["a", "b"]) == "*"


def test_flat_reserves_the_star():
    with pytest.raises(SchemaError, match="reserved"):
        Hierarchy.flat(["a", "*"])


def test_restricted_to(marital):
    sub = marital.restricted_to(["Divorced", "Separated"])
    assert sub.leaves == ("Separated", "Divorced")
    assert set(sub.nodes) == {"*", "Not Married", "Separated", "Divorced"}


def test_equality_and_repr(marital):
    assert marital == Hierarchy.from_mapping(MARITAL)
    assert marital != Hierarchy.flat(marital.leaves)
    assert hash(marital) == hash(Hierarchy.from_mapping(MARITAL))
    assert repr(marital) == "Hierarchy(root='*', leaves=6, height=2)"


# ---------------------------------------------------------------------------- IntervalHierarchy


def test_interval_levels():
    ih = IntervalHierarchy((5, 10, 20))
    ages = [23, 37, 40]
    assert ih.height == 4
    assert ih.generalize(ages, 0) == ["23", "37", "40"]
    assert ih.generalize(ages, 1) == ["[20-25)", "[35-40)", "[40-45)"]
    assert ih.generalize(ages, 2) == ["[20-30)", "[30-40)", "[40-50)"]
    assert ih.generalize(ages, 3) == ["[20-40)", "[20-40)", "[40-60)"]
    assert ih.generalize(ages, 4) == ["*", "*", "*"]


def test_interval_origin_and_fractions():
    ih = IntervalHierarchy((10,), origin=5)
    assert ih.generalize([5, 14.5, 15, 4], 1) == ["[5-15)", "[5-15)", "[15-25)", "[-5-5)"]
    assert IntervalHierarchy((0.5,)).generalize([1.2], 1) == ["[1-1.5)"]
    assert IntervalHierarchy((2,)).generalize(np.array([2.5]), 0) == ["2.5"]


@pytest.mark.parametrize("widths", [(), (0,), (-5,), (10, 5)])
def test_interval_rejects_bad_widths(widths):
    with pytest.raises(SchemaError, match="non-decreasing"):
        IntervalHierarchy(widths)


def test_interval_widths_become_floats():
    assert IntervalHierarchy([5, 10]).widths == (5.0, 10.0)
    assert IntervalHierarchy((5, 10)) == IntervalHierarchy((5.0, 10.0))


def test_a_pickled_hierarchy_is_its_tree_and_rebuilds_the_same():
    import pickle

    leaves = [f"{i:04d}" for i in range(1000)]
    tree = {"*": {f"{d}xx": leaves[d * 100:(d + 1) * 100] for d in range(10)}}
    h = Hierarchy.from_mapping(tree)
    h = Hierarchy(h.parent, leaf_order=list(reversed(h.leaves)))  # an order of its own survives
    data = pickle.dumps(h)
    back = pickle.loads(data)
    assert back == h and back.leaves == h.leaves and back.depth == h.depth
    assert all(np.array_equal(back.leaf_mask(n), h.leaf_mask(n)) for n in h.nodes)
    assert back.leaf_mask("3xx").tolist() == h.leaf_mask("3xx").tolist()
    assert len(data) < len(h.nodes) * len(h.leaves) / 10  # no node-by-leaf table is shipped
    coded = Hierarchy.from_levels([["80", ">=80", ">=80", "*"], ["23", "[20-25)", "[20-30)", "*"]])
    assert pickle.loads(pickle.dumps(coded)).generalize("80", 2) == ">=80"  # the levels survive


def test_leaf_sets_are_the_leaves_whose_path_to_the_root_passes_the_node():
    """leaf_mask, leaf_count and covers against their definition (a node covers a leaf
    when it is on the leaf's path to the root), on a tree with leaves at two depths whose
    leaf order is neither depth-first nor the rows' order."""
    rows = [["80", ">=80", ">=80", "*"], ["23", "[20-25)", "[20-30)", "*"],
            ["27", "[25-30)", "[20-30)", "*"], ["24", "[20-25)", "[20-30)", "*"],
            ["90", ">=80", ">=80", "*"], ["26", "[25-30)", "[20-30)", "*"]]
    rng = np.random.default_rng(7)
    tree = Hierarchy.from_levels(rows)
    for order in (tree.leaves, tuple(rng.permutation(tree.leaves))):
        h = Hierarchy(tree.parent, leaf_order=order)
        for node in h.nodes:
            expected = [node in h.ancestors(leaf) for leaf in h.leaves]
            assert h.leaf_mask(node).tolist() == expected
            assert h.leaf_count(node) == sum(expected)
            assert [h.covers(node, leaf) for leaf in h.leaves] == expected
    by_hand = Hierarchy(tree.parent, leaf_order=["90", "27", "80", "26", "24", "23"])
    assert by_hand.leaf_mask("[20-25)").tolist() == [False, False, False, False, True, True]


def test_a_flat_hierarchy_of_many_values_takes_memory_linear_in_their_number():
    """A flat tree of 20,000 values (an ID-like column) is built without a node-by-leaf
    table, which would take 20,001 x 20,000 bytes (381 MiB)."""
    import tracemalloc

    values = [f"P{i:06d}" for i in range(20_000)]
    tracemalloc.start()
    try:
        h = Hierarchy.flat(values)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20  # 11 MiB measured
    assert h.leaf_count("*") == 20_000 and h.leaf_mask("*").all()
    assert h.covers("*", "P019999") and h.covers("P000007", "P000007")
    assert not h.covers("P000007", "P000008")
    assert h.leaf_mask("P000007").sum() == 1 and h.leaf_mask("P000007")[7]


@pytest.mark.slow  # 200,000 values under tracemalloc: about 14 s of CPU
def test_an_instance_with_a_quasi_identifier_of_200000_values_takes_modest_memory():
    """An instance whose categorical quasi-identifier holds 200,000 distinct values (no
    hierarchy given: a flat one) is built in modest memory, where a node-by-leaf table
    took 200,001 x 200,000 bytes (37 GiB); the tree covers each value once."""
    import tracemalloc

    import pandas as pd

    from fairanon.instances.instance import Instance
    from fairanon.instances.schema import Attribute, Schema

    n = 200_000
    table = pd.DataFrame({"patient": [f"P{i:07d}" for i in range(n)],
                          "disease": np.where(np.arange(n) % 3, "flu", "cold")})
    tracemalloc.start()
    try:
        inst = Instance(table, Schema([Attribute("patient"), Attribute("disease", role="sensitive")]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 512 * 2**20  # 139 MiB measured
    tree = inst.schema["patient"].hierarchy
    assert tree.leaf_count("*") == n and tree.height == 1
    assert tree.covers("*", "P0199999") and not tree.covers("P0000001", "P0000002")


@given(random_trees(max_nodes=30))
def test_node_arrays_are_the_nodes_leaf_ranges_parents_and_depths(tree):
    """Hierarchy.node_arrays against the per-node API: each node's leaf_range, its
    parent's position in nodes (-1 for the root) and its depth, and each leaf's
    position in nodes; read-only, and the same arrays on a second call."""
    _node_arrays_match(tree)


def _node_arrays_match(tree):
    a = tree.node_arrays()
    nodes = list(tree.nodes)
    assert [tree.leaf_range(v) for v in nodes] == list(zip(a.first.tolist(), a.end.tolist()))
    assert a.parent.tolist() == [-1 if tree.parent[v] is None else nodes.index(tree.parent[v]) for v in nodes]
    assert a.depth.tolist() == [tree.depth[v] for v in nodes]
    assert a.leaf_node.tolist() == [nodes.index(v) for v in tree.leaves]
    assert a.height.tolist() == [node_height(tree, v) for v in nodes]
    assert not any(x.flags.writeable for x in a) and tree.node_arrays() is a


@given(random_trees(max_nodes=30), st.data())
def test_node_arrays_under_a_custom_leaf_order(tree, data):
    """The same against the per-node API when the leaves are given in another order
    than depth-first (leaf_node follows that order, the ranges stay depth-first)."""
    parent = {v: tree.parent[v] for v in tree.nodes}
    tree = Hierarchy(parent, leaf_order=data.draw(st.permutations(tree.leaves)))
    _node_arrays_match(tree)


def test_node_arrays_by_hand():
    """A tree of one node, the root its only leaf: range [0, 1), no parent, depth 0,
    the leaf at node 0, height 0. Under * with A = {a1, a2} and b, leaves in the order
    b, a2, a1: the ranges over the depth-first positions (a1 0, a2 1, b 2): * [0, 3),
    A [0, 2), a1 [0, 1), a2 [1, 2), b [2, 3); parents -1, 0, 1, 1, 0; depths 0, 1, 2,
    2, 1; the leaves b, a2, a1 at nodes 4, 3, 2; heights 2, 1, 0, 0, 0 (b, a leaf at
    depth 1, has height 0)."""
    one = Hierarchy({"*": None}).node_arrays()
    assert [x.tolist() for x in one] == [[0], [1], [-1], [0], [0], [0]]
    tree = Hierarchy({"*": None, "A": "*", "a1": "A", "a2": "A", "b": "*"}, leaf_order=["b", "a2", "a1"])
    assert list(tree.nodes) == ["*", "A", "a1", "a2", "b"]
    a = tree.node_arrays()
    assert a.first.tolist() == [0, 0, 0, 1, 2] and a.end.tolist() == [3, 2, 1, 2, 3]
    assert a.parent.tolist() == [-1, 0, 1, 1, 0] and a.depth.tolist() == [0, 1, 2, 2, 1]
    assert a.leaf_node.tolist() == [4, 3, 2] and a.height.tolist() == [2, 1, 0, 0, 0]
