"""Greedy k-member clustering: the test vectors of docs/papers.md, B-4, hierarchies,
the protected attribute, bad input, and property tests through the verifier."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.heuristics.kmember import RecordSpace, information_loss, kmember, kmember_clusters
from fairanon.release import Status

PROPERTY = settings(deadline=None, max_examples=30)


def li_instance():
    """The 9-row (zip, age) table of docs/papers.md, B-2 (record ids 1..9)."""
    zips = [47677, 47602, 47678, 47905, 47909, 47906, 47605, 47673, 47607]
    ages = [29, 22, 27, 43, 52, 47, 30, 36, 32]
    df = pd.DataFrame({"zip": zips, "age": ages}, index=range(1, 10))
    schema = fa.Schema([fa.Attribute("zip", kind="numeric"), fa.Attribute("age", kind="numeric")])
    return fa.Instance(df, schema, name="li")


def _ids(instance, clusters):
    return [instance.row_ids[c].tolist() for c in clusters]


def _passes(instance, release, requirements):
    report = fa.verify(instance, release, requirements, metrics=False)
    assert report.passed, str(report)
    return report


# ------------------------------------------------------------------ docs/papers.md, B-4
@pytest.mark.parametrize(
    "k, clusters, total_il",
    [
        (2, [[5, 6], [2, 7], [4, 8], [9, 1, 3]], Fraction(7511, 1842)),
        (3, [[5, 6, 4], [2, 7, 9], [3, 1, 8]], Fraction(4508, 1535)),
    ],
)
def test_spec_vectors(k, clusters, total_il):
    inst = li_instance()
    space = RecordSpace(inst)
    found, timed_out = kmember_clusters(space, np.arange(9), k)
    assert _ids(inst, found) == clusters and not timed_out
    assert information_loss(space, found) == total_il
    release = kmember(inst, [fa.KAnonymity(k)], seed=0)
    assert release.status == Status.FEASIBLE and release.objective == total_il
    _passes(inst, release, [fa.KAnonymity(k)])


def test_tight_release_of_k2():
    release = kmember(li_instance(), [fa.KAnonymity(2)])
    assert release.table.loc[5, "zip"] == "[47906-47909]" and release.table.loc[5, "age"] == "[47-52]"
    assert release.table.loc[3, "age"] == "[27-32]"


def test_seed_rules_differ():
    """The third cluster's seed: furthest from record 0 (added last) is record 4, furthest
    from the previous seed 5 is record 3."""
    df = pd.DataFrame({"x": [16, 5, 2, 5, 8, 16], "y": [9, 1, 6, 12, 16, 14]})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("x", kind="numeric"), fa.Attribute("y", kind="numeric")]))
    space = RecordSpace(inst)
    paper, _ = kmember_clusters(space, np.arange(6), 2, seed_rule="last_added")
    gong, _ = kmember_clusters(space, np.arange(6), 2, seed_rule="previous_seed")
    assert [c.tolist() for c in paper] == [[1, 2], [5, 0], [4, 3]]
    assert [c.tolist() for c in gong] == [[1, 2], [5, 0], [3, 4]]
    _passes(inst, kmember(inst, [fa.KAnonymity(2)], seed_rule="previous_seed"), [fa.KAnonymity(2)])


# ------------------------------------------------------------------ hierarchies and roles
def test_categorical_height_and_leaves_losses():
    inst = fa.load("diva_table1")
    for loss in ("height", "leaves"):
        release = kmember(inst, [fa.KAnonymity(3)], cat_loss=loss)
        _passes(inst, release, [fa.KAnonymity(3)])
        assert release.objective > 0 and isinstance(release.objective, Fraction)


def test_height_weights_of_a_tree_with_leaves_at_two_depths():
    """cat_loss="height": a node's weight is the height of the subtree under it over the
    tree's height, by hand on a tree whose leaf "b" stands at depth 1 and a1, a2 at 2."""
    from fairanon.instances.hierarchy import Hierarchy
    from fairanon.instances.instance import Instance
    from fairanon.instances.schema import Attribute, Schema

    tree = Hierarchy.from_mapping({"*": {"A": ["a1", "a2"], "b": None}})
    table = pd.DataFrame({"x": ["a1", "a2", "b", "a1"], "s": ["p", "q", "p", "q"]})
    inst = Instance(table, Schema([Attribute("x", hierarchy=tree), Attribute("s", role="sensitive")]))
    space = RecordSpace(inst, cat_loss="height")
    weights = dict(zip(tree.nodes, space.weight_exact[0]))
    assert weights == {"*": Fraction(2, 2), "A": Fraction(1, 2), "a1": 0, "a2": 0, "b": 0}


def test_star_recoding_for_diva():
    inst = fa.load("diva_table1")
    release = kmember(inst, [fa.KAnonymity(2)], recoding="suppress")
    assert set(release.table["AGE"].astype(str)) <= set(map(str, inst.table["AGE"])) | {"*"}
    _passes(inst, release, [fa.KAnonymity(2)])


def test_protected_values_are_clustered_apart():
    inst = fa.load("german")
    release = kmember(inst, [fa.KAnonymity(10)])
    _passes(inst, release, [fa.KAnonymity(10)])
    ps = inst.table["personal_status"].to_numpy()
    for g in np.unique(release.groups):
        assert len(set(ps[release.groups == g])) == 1


def test_protected_value_with_fewer_than_k_records_is_infeasible():
    df = pd.DataFrame({"age": [20, 21, 22, 23, 24], "race": ["a", "a", "a", "a", "b"]})
    schema = fa.Schema([fa.Attribute("age", kind="numeric"),
                        fa.Attribute("race", role="protected", protected=["b"])])
    inst = fa.Instance(df, schema)
    release = kmember(inst, [fa.KAnonymity(2)])
    assert release.status == Status.INFEASIBLE and "race='b'" in release.reason


def test_random_first_record_is_seeded():
    inst = fa.load("diva_table1")
    a = kmember(inst, [fa.KAnonymity(2)], first="random", seed=3)
    b = kmember(inst, [fa.KAnonymity(2)], first="random", seed=3)
    assert a.table.equals(b.table) and (a.groups == b.groups).all()


def test_time_limit_keeps_a_valid_release():
    inst = fa.load("german")
    release = kmember(inst, [fa.KAnonymity(5)], time_limit=1e-9)
    assert release.provenance["time_limit_reached"]
    _passes(inst, release, [fa.KAnonymity(5)])


class _TickingClock:
    """A clock that advances one unit each time it is read, so a deadline of d
    stops the search at its (d + 1)-th check whatever the machine's speed."""

    def __init__(self):
        self.now = 0

    def __call__(self):
        self.now += 1
        return self.now


@pytest.mark.parametrize("deadline", range(0, 11))
def test_deadline_is_checked_before_every_scan(monkeypatch, deadline):
    """k = 4 on Li's 9 records: two clusters and one leftover. The clock is read before
    each scan of the free records: 1 (first seed), 2-4 (its three additions), 5-8 (the
    second cluster), 9 (the leftover). Cut at any of them, the unfinished cluster and
    the free records form the last cluster; a leftover not placed joins the last one."""
    from fairanon.heuristics import kmember as module

    inst = li_instance()
    space = RecordSpace(inst)
    full, _ = kmember_clusters(space, np.arange(9), 4)
    full = [sorted(c.tolist()) for c in full]
    monkeypatch.setattr(module.time, "perf_counter", _TickingClock())
    found, timed_out = kmember_clusters(space, np.arange(9), 4, deadline=deadline)
    found = [sorted(c.tolist()) for c in found]
    first, second = full[0], sorted(set(range(9)) - set(full[0]))
    leftover = sorted(set(second) - set(full[1]))
    expected = {0: [list(range(9))], 4: [first, second], 8: [first, sorted(full[1] + leftover)], 9: full}
    assert found == expected[max(d for d in expected if d <= deadline)]
    assert timed_out == (deadline < 9)


def test_a_tiny_time_limit_on_adult_returns_the_documented_release():
    """The deadline passes inside the first cluster's scans; the whole rest of each
    protected class is one last cluster, released and verified."""
    inst = fa.load("adult")
    release = kmember(inst, [fa.KAnonymity(50)], time_limit=1e-6)
    assert release.status == Status.FEASIBLE and release.provenance["time_limit_reached"]
    assert len(np.unique(release.groups)) == len(np.unique(inst.codes(inst.schema.protected)))
    _passes(inst, release, [fa.KAnonymity(50)])


# ------------------------------------------------------------------ bad input
def test_bad_inputs():
    inst = li_instance()
    with pytest.raises(IncompatibleRequirementError, match="kmember enforces only KAnonymity"):
        kmember(inst, [fa.KAnonymity(2), fa.DiversityConstraint({"age": "22"}, 0, 1)])
    with pytest.raises(InvalidParameterError, match="needs a KAnonymity"):
        kmember(inst, [])
    with pytest.raises(InvalidParameterError, match="'seed_rule' parameter of kmember"):
        kmember(inst, [fa.KAnonymity(2)], seed_rule="furthest")
    with pytest.raises(InvalidParameterError, match="'cat_loss' parameter of RecordSpace"):
        kmember(inst, [fa.KAnonymity(2)], cat_loss="depth")
    with pytest.raises(InvalidParameterError, match="k=20 exceeds the 9 rows"):
        kmember(inst, [fa.KAnonymity(20)])


# ------------------------------------------------------------------ properties
@st.composite
def small_tables(draw):
    n = draw(st.integers(3, 14))
    k = draw(st.integers(1, 3).filter(lambda k: k <= n))
    df = pd.DataFrame({
        "age": draw(st.lists(st.integers(20, 30), min_size=n, max_size=n)),
        "city": draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)),
        "edu": draw(st.lists(st.sampled_from(["lo", "mid", "hi"]), min_size=n, max_size=n)),
    })
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("city"),
                        fa.Attribute("edu", kind="ordered", order=["lo", "mid", "hi"])])
    return fa.Instance(df, schema), k


@PROPERTY
@given(small_tables(), st.sampled_from(["tight", "suppress"]))
def test_every_release_is_k_anonymous(table, recoding):
    inst, k = table
    release = kmember(inst, [fa.KAnonymity(k)], recoding=recoding)
    _passes(inst, release, [fa.KAnonymity(k)])
    sizes = np.bincount(release.groups)
    assert sizes.min() >= k and sizes.sum() == inst.n_rows
    assert release.objective == information_loss(
        RecordSpace(inst), [np.flatnonzero(release.groups == g) for g in np.unique(release.groups)]
    )
