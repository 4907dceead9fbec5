"""The exact pattern model (docs/papers.md, HJ-12): optimal on V9 (checked by brute force),
never more support than the greedy method, k-anonymity kept, products for slift_d and
slift_c; every release re-checked by the independent verifier."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairanon import patterns as fp
from fairanon.exceptions import IncompatibleRequirementError
from fairanon.patterns.patternset import Workspace
from fairanon.release import Status
from fairanon.patterns.exact import candidate_targets

V9 = {("f",): 5, ("y",): 30, ("C",): 1, ("f", "y"): 5, ("f", "C"): 30, ("f", "y", "C"): 10}
ROLES_FY = fp.Roles({"f", "y"}, "C")


def _ps(cells, roles=ROLES_FY, min_count=1):
    return fp.PatternSet.from_db(fp.TransactionDB.from_counts(cells), min_count, roles, backend="apriori")


def _brute_force_v9(limit=1000):
    """Least support added over x_f, x_y, x_fy in [0, limit], by enumeration.

    For fixed x_y and x_fy the cheapest x_f is the smallest that makes f protective (a
    larger one costs more and only raises n2 of y and fy), so the grid is over (x_y, x_fy).
    """
    xy, xfy = np.meshgrid(np.arange(limit + 1), np.arange(limit + 1), indexing="ij")
    # slift_f < 5/4 with B = ∅: 4·40·(31 + x_y) < 5·(50 + x_f + x_fy), integers.
    xf = np.maximum(0, (4 * 40 * (31 + xy)) // 5 + 1 - 50 - xfy)
    y_ok = 4 * 10 * (36 + xf) < 5 * 31 * (45 + xy + xfy)
    fy_ok = 4 * 10 * (66 + xf + xy) < 5 * 31 * (15 + xfy)
    cost = xf + xy + 3 * xfy  # {f}, {y}: one itemset each; {f, y}: {f}, {y}, {f, y}
    return int(np.where(y_ok & fy_ok, cost, np.iinfo(np.int64).max).min())


def test_v9_exact_optimum():
    ps = _ps(V9)
    greedy = fp.publish(ps, fp.PatternRequirements("slift", 1.25))
    exact = fp.publish(ps, fp.PatternRequirements("slift", 1.25), method="exact", seed=0, num_workers=1)
    assert exact.status == Status.OPTIMAL and exact.passed and greedy.passed
    assert exact.objective == exact.bound == 1335 == _brute_force_v9()
    assert exact.patterns.ledger == ((frozenset({"f"}), 747), (frozenset({"f", "y"}), 196))
    assert greedy.objective == 1675 and exact.objective <= greedy.objective


def test_v9_exact_fewest_records_is_943():
    rel = fp.publish(_ps(V9), fp.PatternRequirements("slift", 1.25), method="exact", seed=0, num_workers=1, objective="records")
    assert rel.status == Status.OPTIMAL and rel.passed
    assert rel.patterns.ledger_total == 943


def test_v9_with_a_context_item_settles_the_single_pass_failure():
    ps = _ps({k + ("v",): c for k, c in V9.items()})
    single = fp.publish(ps, fp.PatternRequirements("slift", 1.25), recheck=False)
    assert not single.passed and single.status == Status.INFEASIBLE and "method='exact'" in single.reason
    exact = fp.publish(ps, fp.PatternRequirements("slift", 1.25), method="exact", seed=0, num_workers=1)
    assert exact.status == Status.OPTIMAL and exact.passed
    assert frozenset({"f", "y", "v"}) in candidate_targets(Workspace(ps), "slift")


@st.composite
def databases(draw):
    pd_items = ("p", "q")[: draw(st.integers(1, 2))]
    universe = pd_items + ("a", "b", "c")[: draw(st.integers(1, 3))]
    rows = []
    for _ in range(draw(st.integers(8, 30))):
        row = {i for i in universe if draw(st.booleans())}
        row.add("C" if draw(st.integers(0, 9)) < 4 else "P")
        rows.append(row)
    return fp.PatternSet.from_db(fp.TransactionDB.from_transactions(rows), draw(st.integers(2, 4)),
                                 fp.Roles(set(pd_items), "C", "P"), backend="apriori")


@settings(max_examples=15, deadline=None)
@given(databases(), st.sampled_from(["slift", "elift", "clift", "olift"]), st.sampled_from([None, 2, 3]))
def test_exact_never_adds_more_than_greedy(ps, measure, k):
    alpha = {"slift": F(5, 4), "elift": F(6, 5), "clift": F(5, 4), "olift": F(3, 2)}[measure]
    reqs = fp.PatternRequirements(measure, alpha, k=k)
    greedy = fp.publish(ps, reqs)
    exact = fp.publish(ps, reqs, method="exact", seed=0, num_workers=1, time_limit=20)
    if greedy.passed:
        assert exact.passed, exact.report
        assert exact.objective <= greedy.objective
    if exact.status == Status.OPTIMAL:
        assert exact.report.passed


@pytest.mark.parametrize("measure, alpha", [("slift_d", "0.1"), ("slift_c", "0.8"), ("elift_d", "0.05"), ("elift_c", "0.9")])
def test_exact_difference_and_chance_measures(measure, alpha):
    ps = _ps({("f", "v", "C"): 20, ("f", "v"): 14, ("v", "C"): 19, ("v",): 28}, fp.Roles({"f"}, "C"))
    reqs = fp.PatternRequirements(measure, alpha)
    greedy = fp.publish(ps, reqs)
    exact = fp.publish(ps, reqs, method="exact", seed=0, num_workers=1)
    assert exact.status == Status.OPTIMAL and exact.passed and greedy.passed
    assert exact.objective <= greedy.objective


def test_exact_keeps_zero_channels_closed():
    """V8: every record with {f, v} also holds x, so the channel {f, v} -> {f, v, x} is
    0 (34 and 34). Protecting {f, v} -> C (slift, alpha = 5/4) takes Delta virtual
    {f, v} records without C: (20 / (34 + Delta)) / (19 / 47) < 5/4 iff
    940 < 23.75 (34 + Delta) iff Delta >= 6, each costing 3 units of support ({f}, {v},
    {f, v}): 18 without k. With k = 8, Delta = 6 or 7 would open the channel at 6 or 7
    (0 < . < 8), so the optimum is Delta = 8, cost 24: the model must add the channel's
    row lazily, after a first solution that opened it."""
    cells = {("f", "v", "x", "C"): 20, ("f", "v", "x"): 14, ("m", "v", "C"): 19, ("m", "v"): 28}
    ps = _ps(cells, fp.Roles({"f"}, "C"))
    assert ps.support({"f", "v"}) == ps.support({"f", "v", "x"}) == 34
    free = fp.publish(ps, fp.PatternRequirements("slift", 1.25), method="exact", seed=0, num_workers=1)
    assert free.status == Status.OPTIMAL and free.objective == 18 and fp.verify_release(free).passed
    assert free.patterns.support({"f", "v"}) - free.patterns.support({"f", "v", "x"}) == 6  # opened below 8
    exact = fp.publish(ps, fp.PatternRequirements("slift", 1.25, k=8), method="exact", seed=0, num_workers=1)
    assert exact.status == Status.OPTIMAL and exact.objective == 24
    report = fp.verify_release(exact)
    assert report.passed and report["k_anonymity"].passed
    assert exact.patterns.support({"f", "v"}) - exact.patterns.support({"f", "v", "x"}) == 8
    assert exact.provenance["channel_rows"] >= 1 and exact.provenance["iterations"] >= 2


def test_exact_rejects_d():
    with pytest.raises(IncompatibleRequirementError, match="d-explainability"):
        fp.publish(_ps(V9), fp.PatternRequirements("slift", 1.25, d=0.9), method="exact")
