"""The per-record bound's cover costs of two values (models.bounds._PairCosts, made
row by row) against the m x m table of Fractions it replaced, kept here as the
reference: one lowest common ancestor per pair (Hierarchy.lca) and its node's cost
counted over the values one by one (under ``stars``, 1 for a node over every value
present, the rule of docs/metrics.md)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.instances.builders import masking_hierarchy
from fairanon.models import bounds


def _reference_table(hierarchy, values, objective, ranged=False):
    m = len(values)
    by_node = {}

    def cost(node):
        if node not in by_node:
            count = sum(1 for v in values if hierarchy.covers(node, v))
            if objective == "stars":
                # a node over every value present tells nothing: a star (docs/metrics.md)
                by_node[node] = Fraction(int(count == m))
            elif objective == "ncp":
                by_node[node] = Fraction(count, m) if count > 1 else Fraction(0)
            else:
                by_node[node] = Fraction(count - 1, m - 1)
        return by_node[node]

    table = [[Fraction(0) if i == j else cost(hierarchy.lca([values[i], values[j]])) for j in range(m)]
             for i in range(m)]
    if ranged:
        table = [[min(Fraction(abs(i - j), m - 1), table[i][j]) for j in range(m)] for i in range(m)]
    return table


def _trees():
    codes = [f"{i:03d}" for i in range(60)]
    yield masking_hierarchy(codes, levels=2), codes
    # a tree whose depth-first leaf order is not the domain order
    rng = np.random.default_rng(4)
    leaves = [f"v{i}" for i in range(25)]
    parent = {"*": None, "a": "*", "b": "*", "c": "a", "d": "a"}
    for v in leaves:
        parent[v] = str(rng.choice(["b", "c", "d"]))
    yield fa.Hierarchy(parent), leaves


@pytest.mark.parametrize("objective", ["ncp", "lm", "stars"])
@pytest.mark.parametrize("ranged", [False, True])
def test_pair_costs_match_the_table_of_lowest_common_ancestors(objective, ranged):
    rng = np.random.default_rng(0)
    for hierarchy, domain in _trees():
        for _ in range(3):
            chosen = sorted(rng.choice(len(domain), int(rng.integers(2, 20)), replace=False).tolist())
            values = [domain[i] for i in chosen]
            if ranged and objective != "lm":
                continue
            expected = _reference_table(hierarchy, values, objective, ranged)
            costs = bounds._PairCosts(len(values), hierarchy, values, objective, ranged=ranged)
            for i in range(len(values)):
                assert costs.row(i).tolist() == [float(c) for c in expected[i]]
                assert [costs.exact(i, j) for j in range(len(values))] == expected[i]
            assert costs.worst() == max(max(row) for row in expected)


def test_pair_costs_of_the_generalized_objective():
    costs = bounds._PairCosts(5)
    assert costs.row(2).tolist() == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert costs.exact(2, 2) == 0 and costs.exact(1, 3) == 1 and costs.worst() == 1


def test_the_bound_is_the_one_read_from_the_reference_table():
    """24 records of a 3,000-code tree (3 levels): the per-record bound with its cover
    costs made row by row is the bound with them read from the reference table, and at
    most cpsat's verified optimum."""
    codes = [f"{i:04d}" for i in range(3000)]
    rng = np.random.default_rng(1)
    present = sorted(rng.choice(codes, 24, replace=False).tolist())
    tree = masking_hierarchy(codes, levels=3)
    df = pd.DataFrame({"dx": present, "age": rng.integers(20, 26, 24)})
    reqs = [fa.KAnonymity(3)]
    big = fa.Instance(df, fa.Schema([fa.Attribute("dx", hierarchy=tree), fa.Attribute("age", kind="numeric")]))
    for objective in ("ncp", "lm"):
        bound = bounds.lower_bound(big, reqs, objective)
        small = _reference_bound(big, present, tree, reqs, objective)
        assert bound.value == small
        rel = fa.anonymize(big, reqs, method="cpsat", objective=objective, seed=0, num_workers=1, hint=None)
        assert fa.verify(big, rel, reqs).passed
        assert rel.status == fa.Status.OPTIMAL and bound.value <= rel.objective


def _reference_bound(inst, present, tree, reqs, objective):
    """The bound with the attribute's cover costs read from the reference table."""
    from unittest import mock

    def table_costs(m, hierarchy=None, values=None, obj=None, ranged=False):
        table = _reference_table(hierarchy, values, obj, ranged)

        class Table:
            def row(self, i):
                return np.array([float(c) for c in table[i]])

            def exact(self, i, j):
                return table[i][j]

            def worst(self, deadline=None):
                return max(max(row) for row in table)

        return Table()

    with mock.patch.object(bounds, "_PairCosts", table_costs):
        return bounds.lower_bound(inst, reqs, objective).value


def test_the_bound_reads_no_lowest_common_ancestor_per_pair(monkeypatch):
    """400 codes present, one record each: the costs come from each value's ancestors,
    not from Hierarchy.lca of every pair (160,000 of them; 3,000 codes took the bound
    23 s CPU that way, within which lns, and cpsat's fallback to it, did not look at
    their time limit)."""
    codes = [f"{i:03d}" for i in range(400)]
    inst = fa.Instance(pd.DataFrame({"dx": codes}),
                       fa.Schema([fa.Attribute("dx", hierarchy=masking_hierarchy(codes, levels=2))]))

    def no_lca(self, labels):
        raise AssertionError("Hierarchy.lca read per pair")

    monkeypatch.setattr(fa.Hierarchy, "lca", no_lca)
    # k = 5 records of 400 codes masked two digits: each record's class reaches at
    # least its 10-code node (NCP 10/400); the bound is 1/40 per record.
    bound = bounds.lower_bound(inst, [fa.KAnonymity(5)], "ncp")
    assert bound.value == 400 * Fraction(10, 400)


def test_the_ranged_worst_cost_reads_the_deadline(monkeypatch):
    """Ordered LM with a node out of order: worst() read all m rows (O(m^2 depth),
    0.7-0.9 s CPU at 10,000 values) before the per-record loop looked at the clock. On
    a fake clock that moves one second a row it stops at the deadline, with a cost at
    least every c(i, j) of the reference table, and the bound stays valid (0 here: no
    record was looked at) and incomplete."""
    hierarchy, leaves = list(_trees())[1]
    clock, rows = [0.0], []
    monkeypatch.setattr(bounds, "time", type("Clock", (), {"perf_counter": staticmethod(lambda: clock[0])}))
    made = bounds._PairCosts.row

    def row(self, i):
        if i not in self._rows:
            rows.append(i)
            clock[0] += 1.0
        return made(self, i)

    monkeypatch.setattr(bounds._PairCosts, "row", row)
    expected = max(max(r) for r in _reference_table(hierarchy, leaves, "lm", ranged=True))
    costs = bounds._PairCosts(len(leaves), hierarchy, leaves, "lm", ranged=True)
    assert costs.worst(deadline=3.0) >= expected
    assert len(rows) == 3  # rows 0-2, then the clock reads 3.0
    inst = fa.Instance(pd.DataFrame({"dx": leaves}),
                       fa.Schema([fa.Attribute("dx", kind="ordered", order=tuple(leaves), hierarchy=hierarchy)]))
    assert bounds._dimensions(inst, "dx", "lm")[0].table.ranged
    clock[0], rows[:] = 0.0, []
    bound = bounds.lower_bound(inst, [fa.KAnonymity(2)], "lm", time_limit=2.5)
    assert len(rows) < 5 and not bound.complete and bound.value == 0
    clock[0], rows[:] = 0.0, []
    assert bounds._PairCosts(len(leaves), hierarchy, leaves, "lm", ranged=True).worst() == expected
    assert len(rows) == len(leaves)  # no deadline: every row, the exact largest cost


def test_the_spread_ordering_the_trie_reads_only_filled_rows():
    """The spread that orders the shared-cost trie's levels (the mean cover cost between
    two of a group's types) reads only the rows of the values present: the other rows of
    the lazily filled matrix hold whatever memory held (NaN here), which a zero count
    does not cancel (0 * NaN is NaN)."""
    codes = [f"{i:02d}" for i in range(12)]
    tree = masking_hierarchy(codes, levels=1)
    dim = bounds._Dim("table", np.arange(12), table=bounds._PairCosts(12, tree, codes, "lm"),
                      name="dx")
    idx = np.array([[0], [0], [1], [3]])  # four types of the group, values 00, 00, 01, 03
    costs = bounds._Costs([dim], idx)
    costs.flat[:] = np.nan
    index = bounds._Index(np.arange(4), idx, [dim], costs)
    # 00, 01 and 03 share their 10-code node: LM (10 - 1) / (12 - 1) between two of them.
    # Of the 16 ordered pairs of the types, 6 cost 0: the two of 00 with each other and
    # themselves, 01 and 03 with themselves.
    expected = 10 * 9 / 11 / 16
    assert index._spread([0], idx[:, 0]) == pytest.approx(expected)
