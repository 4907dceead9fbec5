"""Optimal bucketization for t-closeness with the multiplicative distance (Domingo-Ferrer
and Soria-Comas §6): the paper's 1.5-closeness example, the 600-point example of
docs/papers.md, DS-4, the count limits, Prop. 2 against brute force, and the verifier's
check of released buckets (including releases broken on purpose)."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.heuristics.bucketization import (
    _limits,
    bucket_boundaries,
    bucketization,
    class_counts,
    class_sizes,
)
from fairanon.models import closeness as C
from fairanon.models.verify import verify
from fairanon.release import Release, Status, generalize_partition

PROPERTY = settings(deadline=None, max_examples=30)


def _passes(instance, release, requirements):
    report = verify(instance, release, requirements, metrics=False)
    assert report.passed, str(report)
    return report


def _instance(n, seed=0, values=None):
    rng = np.random.default_rng(seed)
    salary = rng.permutation(n) + 1 if values is None else values
    df = pd.DataFrame({"age": rng.integers(20, 70, n), "zip": rng.integers(0, 50, n), "salary": salary})
    schema = fa.Schema(
        [
            fa.Attribute("age", kind="numeric"),
            fa.Attribute("zip", kind="numeric"),
            fa.Attribute("salary", role="sensitive", kind="numeric"),
        ]
    )
    return fa.Instance(df, schema, name=f"points{n}")


def _crosstab(release, column):
    return pd.crosstab(release.groups, release.table[column].astype(str))


# ------------------------------------------------------- the papers' examples
def test_ds_fig2_twelve_points_are_exactly_1_5_close():
    inst = _instance(12)
    req = fa.MultiplicativeTCloseness(2)
    rel = bucketization(inst, [req], seed=0)
    assert rel.status == Status.FEASIBLE
    assert rel.provenance["n_buckets"] == 3 and rel.provenance["l"] == 1
    counts = _crosstab(rel, "salary")
    assert sorted(map(tuple, counts.to_numpy())) == [(1, 1, 2), (1, 2, 1), (2, 1, 1)]
    report = _passes(inst, rel, [req, fa.KAnonymity(4)])
    assert report[str(req)].achieved == Fraction(3, 2)


def test_spec_600_points_are_1_98_close():
    inst = _instance(600)
    req = fa.MultiplicativeTCloseness(2)
    rel = bucketization(inst, [req], l=1, seed=0)
    counts = _crosstab(rel, "salary").to_numpy()
    assert sorted(map(tuple, counts)) == [(34, 34, 132), (34, 132, 34), (132, 34, 34)]
    assert (counts.sum(axis=0) == 200).all()  # every bucket's supply is used exactly
    report = _passes(inst, rel, [req, fa.KAnonymity(200)])
    assert report[str(req)].achieved == Fraction(99, 50)
    # the largest l is floor(600 / 9) = 66, the default: classes of 3 or 4, 1.5-close
    finest = bucketization(inst, [req], seed=0)
    assert finest.provenance["l"] == 66 and finest.provenance["class_sizes"] == [3, 4]
    _passes(inst, finest, [req, fa.KAnonymity(3)])
    with pytest.raises(InvalidParameterError, match="'l' parameter of bucketization"):
        bucketization(inst, [req], l=67)


def test_table_1_masses_for_integer_t():
    """DS Table 1: with b = t + 1 equal buckets an emphasizing class holds t/(t+1) of
    its bucket and 1/(t(t+1)) of each other one, exactly t-close."""
    for t in (1, 2, 3, 4):
        b = t + 1
        size = t * b  # makes every mass an integer count
        supplies = [size] * b  # N = b * size: b classes, one emphasizing each bucket
        counts = class_counts([size] * b, list(range(b)), supplies, t)
        assert counts is not None
        assert [Fraction(int(c), size) for c in counts[0]] == [Fraction(t, b)] + [Fraction(1, t * b)] * t
        assert C.multiplicative_distance_exact(counts[0], supplies) == t


# ------------------------------------------------------- pieces
def test_boundaries_round_half_up_and_respect_ties():
    assert bucket_boundaries(np.arange(10), 3) == [3, 7, 10]  # 10/3 -> 3, 20/3 -> 7
    assert bucket_boundaries(np.arange(10), 4) == [3, 5, 8, 10]  # 2.5 -> 3, 7.5 -> 8
    ties = np.array([1, 1, 1, 1, 2, 2, 3, 3, 3, 3])
    assert bucket_boundaries(ties, 3, tie_aware=False) == [3, 7, 10]
    assert bucket_boundaries(ties, 3) == [4, 6, 10]
    assert bucket_boundaries(np.ones(5), 3) == [5]  # one value: one bucket


def test_class_sizes_telescope():
    for n, e in [(12, 3), (600, 198), (10, 4), (7, 7)]:
        sizes = class_sizes(n, e)
        assert sum(sizes) == n and max(sizes) - min(sizes) <= 1


@PROPERTY
@given(
    supplies=st.lists(st.integers(3, 40), min_size=2, max_size=4),
    t=st.fractions(1, 4),
    l=st.integers(1, 3),
)
def test_counts_stay_within_the_limits_and_use_every_record(supplies, t, l):
    b = len(supplies)
    n = sum(supplies)
    e = b * l
    if min(supplies) < e:
        return
    sizes = class_sizes(n, e)
    counts = class_counts(sizes, [i % b for i in range(e)], supplies, t)
    if counts is None:
        return
    assert counts.sum(axis=1).tolist() == sizes
    assert counts.sum(axis=0).tolist() == supplies
    for i, size in enumerate(sizes):
        for j, supply in enumerate(supplies):
            low, high = _limits(size, supply, n, Fraction(t))
            assert low <= counts[i, j] <= high
        assert C.multiplicative_distance_exact(counts[i], supplies) <= t


# ------------------------------------------------------- Prop. 2 (brute force)
@PROPERTY
@given(
    p=st.lists(st.integers(0, 6), min_size=1, max_size=7),
    q=st.lists(st.integers(1, 6), min_size=1, max_size=7),
)
def test_prop2_single_values_attain_the_sup_over_sets(p, q):
    m = min(len(p), len(q))
    p, q = p[:m], q[:m]
    if sum(p) == 0:
        return
    brute = Fraction(1)
    for r in range(1, m + 1):
        for subset in itertools.combinations(range(m), r):
            a = Fraction(sum(p[i] for i in subset), sum(p))
            b = Fraction(sum(q[i] for i in subset), sum(q))
            if a == 0:
                brute = math.inf
                break
            brute = max(brute, a / b, b / a)
        if brute == math.inf:
            break
    exact = C.multiplicative_distance_exact(p, q)
    assert exact == brute
    assert exact >= 1 and (exact == 1) == (Fraction(1) * np.array(p) * sum(q) == np.array(q) * sum(p)).all()
    if exact != math.inf:
        assert C.multiplicative_within(np.array([p]), np.array(q), exact)[0]
        assert not C.multiplicative_within(np.array([p]), np.array(q), exact - Fraction(1, 10**6))[0]
    assert float(C.multiplicative_distance(np.array([p]), np.array(q))[0]) == pytest.approx(float(exact))


# ------------------------------------------------------- releases and the verifier
@PROPERTY
@given(n=st.integers(8, 80), t=st.sampled_from([1, 2, 3, "3/2", "5/2"]), seed=st.integers(0, 5))
def test_every_release_is_t_close_and_k_anonymous(n, t, seed):
    rng = np.random.default_rng(seed)
    inst = _instance(n, seed, values=rng.integers(0, 6, n))  # many ties
    req = fa.MultiplicativeTCloseness(t)
    rel = bucketization(inst, [req], seed=seed)
    if rel.status == Status.INFEASIBLE:
        assert rel.reason and "buckets" in rel.reason
        return
    k = int(min(np.bincount(rel.groups)))
    report = _passes(inst, rel, [req, fa.KAnonymity(k)])
    assert report[str(req)].achieved <= Fraction(t)
    counts = _crosstab(rel, "salary").to_numpy()
    assert (counts > 0).all()  # every class holds every bucket


def test_k_and_ordered_attributes():
    rng = np.random.default_rng(3)
    levels = ["a", "b", "c", "d", "e", "f"]
    df = pd.DataFrame({"age": rng.integers(20, 70, 300), "grade": rng.choice(levels, 300)})
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("grade", role="sensitive", kind="ordered", order=levels)])
    inst = fa.Instance(df, schema)
    reqs = [fa.MultiplicativeTCloseness(2), fa.KAnonymity(10)]
    rel = bucketization(inst, reqs, seed=0)
    assert rel.status == Status.FEASIBLE
    assert set(rel.table["grade"].astype(str)) <= {"[a-b]", "[c-d]", "[e-f]", "a", "b", "c", "d", "e", "f"} | {
        f"[{x}-{y}]" for x, y in itertools.combinations(levels, 2)
    }
    _passes(inst, rel, reqs)


def test_verifier_rejects_overlapping_untruthful_or_missing_buckets():
    inst = _instance(12)
    req = fa.MultiplicativeTCloseness(2)
    rel = bucketization(inst, [req], seed=0)
    table = rel.table.copy()
    # a class that misses a bucket: infinitely far
    mondrian = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian")
    report = verify(inst, mondrian, [req], metrics=False)
    assert not report.passed and report[str(req)].achieved == math.inf
    # overlapping labels
    broken = table.copy()
    broken["salary"] = broken["salary"].astype(str).replace({"[5-8]": "[4-8]"})
    report = verify(inst, Release(broken, groups=rel.groups), [req], metrics=False)
    assert not report[str(req)].passed and "overlapping" in report[str(req)].witness
    # a label that does not cover the original value
    lying = table.copy()
    lying["salary"] = lying["salary"].astype(str).replace({"[1-4]": "[2-4]"})
    report = verify(inst, Release(lying, groups=rel.groups), [req], metrics=False)
    assert not report[str(req)].passed and report[str(req)].witness["attribute"] == "salary"
    assert report["unchanged values"].passed  # the masked attribute is checked by the requirement


def test_bad_input():
    inst = _instance(30)
    with pytest.raises(IncompatibleRequirementError, match="one MultiplicativeTCloseness"):
        bucketization(inst, [fa.TCloseness("0.2")])
    cat = fa.Instance(
        pd.DataFrame({"age": range(9), "d": list("abcabcabc")}),
        fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("d", role="sensitive")]),
    )
    with pytest.raises(IncompatibleRequirementError, match="needs an order"):
        bucketization(cat, [fa.MultiplicativeTCloseness(2)])
    loan = fa.load("ruggieri_loan")
    with pytest.raises(IncompatibleRequirementError, match="protected attribute"):
        bucketization(loan, [fa.MultiplicativeTCloseness(2, attribute="decision")])
    with pytest.raises(InvalidParameterError, match="'t' parameter of MultiplicativeTCloseness"):
        fa.MultiplicativeTCloseness("0.5")


def test_registered_and_reached_through_anonymize():
    inst = _instance(60)
    req = fa.MultiplicativeTCloseness(3)
    rel = fa.anonymize(inst, [req], method="bucketization", seed=1)
    assert rel.method == "bucketization"
    _passes(inst, rel, [req])
    same = fa.anonymize(inst, [req], method="bucketization", seed=1)
    pd.testing.assert_frame_equal(rel.table, same.table)
    generalized = generalize_partition(inst, rel.groups)
    assert (generalized["age"].astype(str) == rel.table["age"].astype(str)).all()
