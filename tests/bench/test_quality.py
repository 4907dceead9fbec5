"""Quality indices and comparators against Dewri et al., EDBT 2009 (docs/papers.md, Dewri et al.).

Golden numbers: the paper's §3 and §5 on the 10-tuple table T1 and its releases T3a,
T3b, T4, and the derived facts of docs/papers.md, DW-6 (properties of the indices,
checked on random vectors).
"""

import math
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairanon.bench import quality as Q
from fairanon.bench.quality import Dominance, Verdict
from fairanon.exceptions import InvalidParameterError

T3A = [3, 3, 3, 3, 4, 4, 4, 3, 3, 4]
T3B = [3, 7, 7, 3, 7, 7, 7, 3, 7, 7]
T4 = [4, 6, 4, 4, 6, 6, 6, 4, 6, 6]
SIZE = {"T3a": T3A, "T3b": T3B, "T4": T4}
# PV-util exact (u_b typo-corrected: docs/papers.md, DW-2).
UTIL = {
    "T3a": [
        F(61, 30),
        F(17, 10),
        F(17, 10),
        F(61, 30),
        F(8, 5),
        F(8, 5),
        F(8, 5),
        F(61, 30),
        F(17, 10),
        F(8, 5),
    ],
    "T3b": [
        F(61, 30),
        F(29, 30),
        F(29, 30),
        F(61, 30),
        F(29, 30),
        F(29, 30),
        F(29, 30),
        F(61, 30),
        F(29, 30),
        F(29, 30),
    ],
    "T4": [
        F(3, 5),
        F(2, 5),
        F(3, 5),
        F(3, 5),
        F(2, 5),
        F(2, 5),
        F(2, 5),
        F(3, 5),
        F(2, 5),
        F(2, 5),
    ],
}


def _obj(values):
    return np.array(values, dtype=object)


# ------------------------------------------------------------------ §1.5 / §2.3 golden values
@pytest.mark.parametrize(
    "name, k, mean, dm, classes, rank",
    [
        ("T3a", 3, F(17, 5), 34, 3, 438),
        ("T3b", 3, F(29, 5), 58, 2, 210),
        ("T4", 4, F(26, 5), 52, 2, 240),
    ],
)
def test_unary_golden_on_class_size(name, k, mean, dm, classes, rank):
    s = SIZE[name]
    assert Q.p_min(s) == k
    assert Q.p_mean(s) == mean
    assert Q.p_sum(s) == dm  # DM = Σ s_i = Σ_E |E|²
    assert sum(F(1, v) for v in s) == classes  # F10
    assert Q.p_rank(s, 10) == pytest.approx(math.sqrt(rank))
    assert round(Q.p_rank(s, 10), 3) == {"T3a": 20.928, "T3b": 14.491, "T4": 15.492}[name]


def test_p_rank_order_is_t3b_t4_t3a():
    ranks = {n: Q.p_rank(s, 10) for n, s in SIZE.items()}
    assert sorted(ranks, key=ranks.get) == ["T3b", "T4", "T3a"]


@pytest.mark.parametrize(
    "name, mean, rank",
    [("T3a", F(44, 25), 3.964), ("T3b", F(193, 150), 5.634), ("T4", F(12, 25), 7.975)],
)
def test_unary_golden_on_utility(name, mean, rank):
    u = _obj(UTIL[name])
    assert Q.p_mean(u) == mean  # 1.76, 1.2867, 0.48
    assert round(Q.p_rank(u, 3), 3) == rank


def test_products_for_hv():
    assert math.prod(T3A) == 186624 and math.prod(T3B) == 22235661 and math.prod(T4) == 11943936


def test_paper_literal_l_and_min_distinct_l():
    sfreq_t3a = [2, 2, 1, 2, 2, 1, 2, 1, 2, 1]
    assert Q.p_min(sfreq_t3a) == 1  # P_ℓ-div literal [P]
    assert Q.p_min([2, 2, 2, 2, 3, 3, 3, 2, 2, 3]) == 2
    assert Q.p_min([3] * 10) == 3


# Pairwise on PV-size, row = D1, column = D2: (P_cov, P_spr, P_binary, P_hv), derived from Tables 2-3.
PAIRWISE_SIZE = {
    ("T3a", "T3b"): (F(3, 10), 0, 0, 0),
    ("T3a", "T4"): (0, 0, 0, 0),
    ("T3b", "T3a"): (1, 24, 7, 22049037),
    ("T3b", "T4"): (F(7, 10), 9, 7, 17196813),
    ("T4", "T3a"): (1, 18, 10, 11757312),
    ("T4", "T3b"): (F(3, 10), 3, 3, 6905088),
}


@pytest.mark.parametrize("pair", list(PAIRWISE_SIZE))
def test_pairwise_golden_on_class_size(pair):
    a, b = SIZE[pair[0]], SIZE[pair[1]]
    cov, spr, binary, hv = PAIRWISE_SIZE[pair]
    assert Q.p_cov(a, b) == cov
    assert Q.p_spr(a, b) == spr
    assert Q.p_binary(a, b) == binary
    assert Q.p_hv(a, b) == hv
    expected_log = -math.inf if hv == 0 else math.log(hv)
    assert Q.log_p_hv(a, b) == pytest.approx(expected_log)


def test_dominance_golden():
    assert Q.dominance(T4, T3A) is Dominance.BETTER
    assert Q.dominance(T3B, T3A) is Dominance.BETTER
    assert Q.dominance(T3A, T3B) is Dominance.WORSE
    assert Q.dominance(T3B, T4) is Dominance.INCOMPARABLE
    # User 8 prefers T4 (4 > 3), user 3 prefers T3b (7 > 4).
    assert T4[7] > T3B[7] and T3B[2] > T4[2]
    assert Q.dominance(_obj(UTIL["T3a"]), _obj(UTIL["T3b"])) is Dominance.BETTER
    assert Q.dominance(_obj(UTIL["T3b"]), _obj(UTIL["T4"])) is Dominance.BETTER


def test_paper_coverage_verdicts():
    """§5.2: T4 ▶cov T3a and T3b ▶cov T4; P_binary(T3a, T3b) = 0, P_binary(T3b, T3a) = 7."""
    assert Q.compare(T4, T3A, "cov") is Verdict.FIRST_BETTER
    assert Q.compare(T3B, T4, "cov") is Verdict.FIRST_BETTER
    assert (Q.p_binary(T3A, T3B), Q.p_binary(T3B, T3A)) == (0, 7)
    assert (Q.p_cov(T3A, T3B), Q.p_cov(T3B, T3A)) == (F(3, 10), 1)
    ua, ub = _obj(UTIL["T3a"]), _obj(UTIL["T3b"])
    assert (Q.p_cov(ua, ub), Q.p_cov(ub, ua)) == (1, F(3, 10))


# Pairwise on PV-util (P_cov, P_spr), derived from Tables 2-3.
PAIRWISE_UTIL = {
    ("T3a", "T3b"): (1, F(71, 15)),
    ("T3a", "T4"): (1, F(64, 5)),
    ("T3b", "T3a"): (F(3, 10), 0),
    ("T3b", "T4"): (1, F(121, 15)),
    ("T4", "T3a"): (0, 0),
    ("T4", "T3b"): (0, 0),
}


@pytest.mark.parametrize("pair", list(PAIRWISE_UTIL))
def test_pairwise_golden_on_utility(pair):
    a, b = _obj(UTIL[pair[0]]), _obj(UTIL[pair[1]])
    cov, spr = PAIRWISE_UTIL[pair]
    assert Q.p_cov(a, b) == cov
    assert Q.p_spr(a, b) == spr
    assert round(float(spr), 3) == {0: 0, F(71, 15): 4.733, F(64, 5): 12.8, F(121, 15): 8.067}[spr]


def test_paper_spread_examples():
    d1, d2 = [2, 2, 3, 4, 5], [3, 2, 4, 2, 3]
    assert Q.p_cov(d1, d2) == Q.p_cov(d2, d1) == F(3, 5)
    assert (Q.p_spr(d1, d2), Q.p_spr(d2, d1)) == (4, 2)
    s3 = [3, 3, 3, 5, 5, 5, 5, 5, 3, 3, 3, 4, 4, 4, 4]
    s2 = [2, 2, 6, 6, 6, 6, 6, 6, 3, 3, 3, 4, 4, 4, 4]
    assert (Q.p_spr(s3, s2), Q.p_spr(s2, s3)) == (2, 8)
    assert (Q.p_cov(s3, s2), Q.p_cov(s2, s3)) == (F(9, 15), F(13, 15))
    assert Q.compare(s2, s3, "spr") is Verdict.FIRST_BETTER  # the 2-anonymous one is preferred
    assert Q.compare(s2, s3, "cov") is Verdict.FIRST_BETTER


def _worse_than_only(a, b):
    """The paper's reading of P_hv(a, b) on integer properties (§5.4): the number of
    property vectors u >= 0 with u_i < a_i for every i (worse than a) that are not
    also worse than b, counted one by one."""
    grid = np.indices(a).reshape(len(a), -1)  # every u with 0 <= u_i < a_i
    return int((~(grid < np.array(b)[:, None]).all(axis=0)).sum())


def test_paper_hypervolume_example():
    """§5.4: s = (3, 3, 3, 5, 5, 5, 5, 5), t = (4, ..., 4); more anonymizations are worse
    than S alone than worse than T alone, so S is hv-better."""
    s, t = [3, 3, 3, 5, 5, 5, 5, 5], [4] * 8
    assert (Q.p_hv(s, t), Q.p_hv(t, s)) == (_worse_than_only(s, t), _worse_than_only(t, s)) == (56727, 37888)
    assert Q.compare(s, t, "hv") is Verdict.FIRST_BETTER


def test_descriptors_golden():
    """§1.9: Gini, variance and floor share of PV-size."""
    expected = {
        "T3a": (F(6, 85), F(6, 25), F(3, 5)),
        "T3b": (F(21, 145), F(84, 25), F(3, 10)),
        "T4": (F(6, 65), F(24, 25), F(2, 5)),
    }
    for name, (gini, var, floor) in expected.items():
        d = Q.descriptors(SIZE[name])
        assert (d["gini"], d["variance"], d["floor_share"]) == (gini, var, floor)
        f = Q.descriptors(np.array(SIZE[name], dtype=float))
        assert f["gini"] == pytest.approx(float(gini)) and f["variance"] == pytest.approx(
            float(var)
        )


def test_min_ties_although_t3b_dominates_t3a():
    """T-M1 witness: ▶min is only ⪰-safe, not ≻-compatible."""
    assert Q.dominance(T3B, T3A) is Dominance.BETTER
    assert Q.compare(T3B, T3A, "min") is Verdict.TIE
    for index in ("mean", "cov", "spr", "hv", "binary"):
        assert Q.compare(T3B, T3A, index) is Verdict.FIRST_BETTER
    assert Q.compare(T3B, T3A, "rank", d_max=10) is Verdict.FIRST_BETTER


# ------------------------------------------------------------------ §1.6 multi-property
PAIR_A = {"size": T3A, "util": _obj(UTIL["T3a"])}
PAIR_B = {"size": T3B, "util": _obj(UTIL["T3b"])}


def test_wtd_paper_example_is_a_tie():
    res = Q.wtd(PAIR_A, PAIR_B, weights=[0.5, 0.5], index="cov")
    assert (res.first, res.second, res.verdict) == (
        F(13, 20),
        F(13, 20),
        Verdict.TIE,
    )  # 0.65 = 0.65


def test_lex_paper_examples():
    res = Q.lex(PAIR_A, PAIR_B, eps=[0, 0])
    assert (res.first, res.second, res.verdict) == (2, 1, Verdict.SECOND_BETTER)  # T3b wins
    res = Q.lex(PAIR_A, PAIR_B, eps=[0.8, 0])
    assert (res.first, res.second, res.verdict) == (2, math.inf, Verdict.FIRST_BETTER)  # T3a wins


def test_goal_paper_example_is_a_tie():
    res = Q.goal(PAIR_A, PAIR_B, goals=[1, 1])
    assert (res.first, res.second, res.verdict) == (F(49, 100), F(49, 100), Verdict.TIE)


def test_goal_one_sided_ignores_overshoot():
    res = Q.goal(PAIR_A, PAIR_B, goals=[F(4, 5), F(4, 5)], one_sided=True)
    assert res.first == res.second == F(1, 4)  # only the 0.3 shortfall (0.5²) counts


def test_goal_unary_ranks_consistently_with_the_pairwise_form():
    goals = {"size": 10, "util": 3}
    scores = {
        n: Q.goal_unary({"size": SIZE[n], "util": _obj(UTIL[n])}, goals=goals, index="mean")
        for n in SIZE
    }
    assert all(v >= 0 for v in scores.values())
    assert Q.goal_unary({"size": [10] * 10, "util": [3] * 10}, goals=goals, index="mean") == 0
    assert scores["T3b"] < scores["T3a"]  # (10−5.8)² + (3−1.29)² < (10−3.4)² + (3−1.76)²


# ------------------------------------------------------------------ bad input
def test_bad_inputs():
    with pytest.raises(InvalidParameterError, match="same records"):
        Q.p_cov([1, 2], [1, 2, 3])
    with pytest.raises(InvalidParameterError, match="non-empty 1-D"):
        Q.p_min([])
    with pytest.raises(InvalidParameterError, match="finite"):
        Q.p_mean([1.0, float("nan")])
    with pytest.raises(InvalidParameterError, match="'index' parameter of compare"):
        Q.compare([1], [2], "median")
    with pytest.raises(InvalidParameterError, match="d_max"):
        Q.compare([1], [2], "rank")
    with pytest.raises(InvalidParameterError, match="sum to 1"):
        Q.wtd(PAIR_A, PAIR_B, weights=[0.5, 0.6])
    with pytest.raises(InvalidParameterError, match="'weights'"):
        Q.wtd(PAIR_A, PAIR_B, weights=[0, 1])
    with pytest.raises(InvalidParameterError, match="'eps'"):
        Q.lex(PAIR_A, PAIR_B, eps=[-0.1, 0])
    with pytest.raises(InvalidParameterError, match="pairs properties"):
        Q.set_dominance({"a": [1]}, {"b": [1]})
    with pytest.raises(InvalidParameterError, match="upper"):
        Q.orient([1, 5], "lower", "flip", upper=3)


def test_hv_warns_on_entries_at_the_reference_point():
    with pytest.warns(RuntimeWarning, match="DW-5"):
        assert Q.compare([0, 5], [1, 1], "hv") is Verdict.SECOND_BETTER


def test_orientation_transforms():
    assert Q.orient([F(1, 3), F(1, 4)], "lower", "flip", upper=1).tolist() == [F(2, 3), F(3, 4)]
    assert Q.orient([2, 4], "lower", "negate").tolist() == [-2, -4]
    assert Q.orient([F(1, 3)], "lower", "reciprocal").tolist() == [3]
    assert Q.orient([1, 2], "higher").tolist() == [1, 2]


# ------------------------------------------------------- properties (docs/papers.md, DW-6)
def partitions(n_max=9):
    """Class-size vectors of random set partitions of range(N)."""
    return st.integers(2, n_max).flatmap(
        lambda n: st.lists(st.integers(0, n - 1), min_size=n, max_size=n).map(
            lambda labels: [labels.count(lab) for lab in labels]
        )
    )


def pairs(elements=None, n_max=8):
    elements = st.integers(0, 6) if elements is None else elements
    return st.integers(1, n_max).flatmap(
        lambda n: st.tuples(
            st.lists(elements, min_size=n, max_size=n), st.lists(elements, min_size=n, max_size=n)
        )
    )


@settings(deadline=None, max_examples=60)
@given(partitions())
def test_class_size_vectors(s):
    """T-PV2: s_i ≥ 1, #{i : s_i = v} is a multiple of v, Σ 1/s_i = #classes."""
    assert min(s) >= 1
    for v in set(s):
        assert s.count(v) % v == 0
    assert sum(F(1, v) for v in s) == sum(s.count(v) // v for v in set(s))


@settings(deadline=None, max_examples=80)
@given(pairs())
def test_dominance_and_coverage_facts(pair):
    """T-D1, T-C1–C3, F1–F4."""
    d1, d2 = pair
    n = len(d1)
    w12, w21, ties = Q.tuple_counts(d1, d2)
    assert w12 + w21 + ties == n
    dom, back = Q.dominance(d1, d2), Q.dominance(d2, d1)
    swap = {Dominance.BETTER: Dominance.WORSE, Dominance.WORSE: Dominance.BETTER}
    assert back is swap.get(dom, dom)
    assert Q.dominance(d1, d1) is Dominance.EQUAL
    c12, c21 = Q.p_cov(d1, d2), Q.p_cov(d2, d1)
    assert 0 <= c12 <= 1 and Q.p_cov(d1, d1) == 1
    assert c12 - c21 == F(w12 - w21, n)  # F1
    assert c12 + c21 == 1 + F(ties, n)  # F2
    assert Q.p_binary(d1, d2) == n * (1 - c21)  # F3
    assert (c12 == 1) == (dom in (Dominance.BETTER, Dominance.EQUAL))  # F4
    if c12 == 1 and c21 == 0:
        assert dom is Dominance.BETTER
    cov = Q.compare(d1, d2, "cov")
    assert (
        cov
        is {1: Verdict.FIRST_BETTER, -1: Verdict.SECOND_BETTER, 0: Verdict.TIE}[
            (w12 > w21) - (w12 < w21)
        ]
    )


@settings(deadline=None, max_examples=80)
@given(pairs())
def test_spread_facts(pair):
    """T-S1–S3, F5, F6, T-M3: ▶spr is the mean comparison."""
    d1, d2 = pair
    s12, s21 = Q.p_spr(d1, d2), Q.p_spr(d2, d1)
    assert s12 >= 0 and Q.p_spr(d1, d1) == 0
    assert (s12 == 0) == (Q.dominance(d2, d1) in (Dominance.BETTER, Dominance.EQUAL))
    assert s12 - s21 == sum(d1) - sum(d2)  # F5
    assert s12 + s21 == sum(abs(a - b) for a, b in zip(d1, d2))  # F6
    assert Q.p_spr([3 * v for v in d1], [3 * v for v in d2]) == 3 * s12
    assert Q.compare(d1, d2, "spr") is Q.compare(d1, d2, "mean")


@settings(deadline=None, max_examples=80)
@given(pairs(st.integers(1, 7)))
def test_hypervolume_facts(pair):
    """T-H1–H3, F7: log space agrees with big integers; ▶hv is the product comparison."""
    d1, d2 = pair
    exact = Q.p_hv(d1, d2)
    assert exact >= 0 and Q.p_hv(d1, d1) == 0
    assert (exact == 0) == (Q.dominance(d2, d1) in (Dominance.BETTER, Dominance.EQUAL))
    log = Q.log_p_hv(d1, d2)
    assert (log == -math.inf) == (exact == 0)
    if exact:
        assert log == pytest.approx(math.log(exact), rel=1e-9, abs=1e-9)
    p1, p2 = math.prod(d1), math.prod(d2)
    expected = (
        Verdict.TIE if p1 == p2 else (Verdict.FIRST_BETTER if p1 > p2 else Verdict.SECOND_BETTER)
    )
    assert Q.compare(d1, d2, "hv") is expected
    assert Q.compare(np.array(d1, float), np.array(d2, float), "hv") is expected  # log-space path
    scale = list(range(1, len(d1) + 1))
    assert (
        Q.compare([a * c for a, c in zip(d1, scale)], [b * c for b, c in zip(d2, scale)], "hv")
        is expected
    )


@settings(deadline=None, max_examples=60)
@given(pairs(st.integers(0, 6)))
def test_rank_facts(pair):
    """T-R1, T-R2."""
    d1, d2 = pair
    top = [6] * len(d1)
    assert Q.p_rank(d1, 6) >= 0 and Q.p_rank(top, 6) == 0
    if Q.dominance(d1, d2) is Dominance.BETTER:
        assert Q.p_rank(d1, 6) < Q.p_rank(d2, 6)
    gap = abs(Q.p_rank(d1, 6) - Q.p_rank(d2, 6))
    assert Q.compare(d1, d2, "rank", d_max=6, eps=gap + 1e-9) is Verdict.TIE


@settings(deadline=None, max_examples=80)
@given(pairs(st.integers(1, 6)))
def test_comparators_are_strict_dominance_compatible(pair):
    """T-M1, T-M2."""
    d1, d2 = pair
    strict = Q.dominance(d1, d2) is Dominance.BETTER
    for index in ("min", "mean", "rank", "cov", "spr", "hv"):
        v = Q.compare(d1, d2, index, d_max=6)
        assert Q.compare(d2, d1, index, d_max=6) is v.swapped()  # never both sides
        if strict:
            if index == "min":
                assert v is not Verdict.SECOND_BETTER
            else:
                assert v is Verdict.FIRST_BETTER


@settings(deadline=None, max_examples=60)
@given(
    pairs(st.integers(0, 5), n_max=6),
    st.sampled_from([lambda x: x * x * x, lambda x: 2 * x + 7, math.exp]),
)
def test_coverage_is_ordinal(pair, transform):
    """T-C4."""
    d1, d2 = pair
    t1 = [transform(v) for v in d1]
    t2 = [transform(v) for v in d2]
    assert Q.p_cov(t1, t2) == Q.p_cov(d1, d2)


def test_symmetric_indices_are_blind_to_permutations():
    """T-M5 (Theorem 1 / F9 witness)."""
    d, pi = [3, 3, 3, 4, 4, 4, 4], [4, 4, 4, 4, 3, 3, 3]
    assert Q.dominance(d, pi) is Dominance.INCOMPARABLE
    assert Q.p_min(d) == Q.p_min(pi) and Q.p_mean(d) == Q.p_mean(pi) and Q.p_max(d) == Q.p_max(pi)
    assert np.median(d) == np.median(pi)
    assert Q.p_rank(d, 7) == Q.p_rank(pi, 7)
    assert Q.descriptors(d) == Q.descriptors(pi)
    for index in ("min", "mean", "rank", "spr", "hv"):
        assert Q.compare(d, pi, index, d_max=7) is Verdict.TIE
    # Only the tuple-aligned counts see who gains: 3 records each way, 1 tie.
    assert Q.tuple_counts(d, pi) == (3, 3, 1)
    # The N coordinate projections reproduce ⪰ exactly.
    assert all(a >= b for a, b in zip(d, pi)) == (
        Q.dominance(d, pi) in (Dominance.BETTER, Dominance.EQUAL)
    )


def test_two_indices_realize_dominance_on_the_n3_feasible_set():
    """T-M6 (Corollary 1 caveat, docs/papers.md, DW-11): fewer than N indices can suffice on a
    restricted set."""
    feasible = [(1, 1, 1), (1, 2, 2), (2, 1, 2), (2, 2, 1), (3, 3, 3)]

    def p1(d):
        return sum(d) + F(d[0] - d[2], 10)

    def p2(d):
        return sum(d) - F(d[0] - d[2], 10)

    for a in feasible:
        for b in feasible:
            weak = Q.dominance(a, b) in (Dominance.BETTER, Dominance.EQUAL)
            assert (p1(a) >= p1(b) and p2(a) >= p2(b)) == weak


@settings(deadline=None, max_examples=40)
@given(pairs(st.integers(1, 5), n_max=6))
def test_set_dominance_is_per_property_dominance(pair):
    """T-D3."""
    d1, d2 = pair
    u1, u2 = {"a": d1, "b": d2}, {"a": d2, "b": d1}
    per = [Q.dominance(d1, d2), Q.dominance(d2, d1)]
    weak = all(o in (Dominance.BETTER, Dominance.EQUAL) for o in per)
    assert (Q.set_dominance(u1, u2) in (Dominance.BETTER, Dominance.EQUAL)) == weak


def test_wtd_single_property_and_permutation():
    """T-W1."""
    for d1, d2 in ((T3A, T3B), (T4, T3B)):
        res = Q.wtd({"s": d1}, {"s": d2}, weights=[1])
        assert res.verdict is Q.compare(d1, d2, "cov")
    a = Q.wtd(PAIR_A, PAIR_B, weights=[0.3, 0.7])
    b = Q.wtd(
        {"util": PAIR_A["util"], "size": T3A},
        {"util": PAIR_B["util"], "size": T3B},
        weights=[0.7, 0.3],
    )
    assert (a.first, a.second, a.verdict) == (b.first, b.second, b.verdict)


@settings(deadline=None, max_examples=40)
@given(pairs(st.integers(1, 5), n_max=6), st.integers(0, 3))
def test_lex_properties(pair, eps_tenths):
    """T-L1, T-L2."""
    d1, d2 = pair
    u1, u2 = {"a": d1, "b": d2}, {"a": d2, "b": d1}
    eps = [F(eps_tenths, 10)] * 2
    res, back = Q.lex(u1, u2, eps=eps), Q.lex(u2, u1, eps=eps)
    assert back.verdict is res.verdict.swapped()
    assert (res.first == res.second == math.inf) == (res.verdict is Verdict.TIE)
    single = Q.lex({"a": d1}, {"a": d2}, eps=0)
    assert single.verdict is Q.compare(d1, d2, "cov")
