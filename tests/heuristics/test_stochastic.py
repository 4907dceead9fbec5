"""Stochastic t-closeness through differential privacy (Domingo-Ferrer and Soria-Comas
§3-4): the corrected Prop. 1 and the counterexample to the printed formula (docs/papers.md,
DS-1), the exact Laplace-mixture distance against brute force, the method through the
verifier, and stochastic t-closeness observed on repeated noise draws."""

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
from fairanon.heuristics.stochastic import stochastic
from fairanon.models import closeness as C
from fairanon.models.verify import verify
from fairanon.release import Status

PROPERTY = settings(deadline=None, max_examples=30)


def _passes(instance, release, requirements):
    report = verify(instance, release, requirements, metrics=False)
    assert report.passed, str(report)
    return report


def _instance(n=40, seed=0, high=10, grade="sensitive"):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n),
            "zip": rng.integers(0, 9, n),
            "v": rng.integers(0, high + 1, n),
            "w": rng.integers(0, 5, n),
            "grade": rng.choice(["a", "b", "c"], n),
        }
    )
    schema = fa.Schema(
        [
            fa.Attribute("age", kind="numeric"),
            fa.Attribute("zip", kind="numeric"),
            fa.Attribute("v", role="sensitive", kind="numeric"),
            fa.Attribute("w", role="sensitive", kind="numeric"),
            fa.Attribute("grade", role=grade, kind="ordered", order=["a", "b", "c"]),
        ]
    )
    return fa.Instance(df, schema, name="noisy")


# ------------------------------------------------------- Prop. 1, corrected
def test_the_printed_formula_is_violated_and_the_corrected_one_is_attained():
    """Spec §2.8: N = 10, eps = 1, values in [0, 1] (scale 1), E = the record at 0."""
    values = np.array([0.0] + [1.0] * 9)
    classes = np.array([0] + [1] * 9)
    exact = C.laplace_mixture_distance(values, classes, 1.0)[0]
    printed = (1 + 8 * math.e) / 10
    corrected = (1 + 9 * math.e) / 10
    assert exact > printed + 0.2
    assert exact == pytest.approx(corrected, rel=1e-12)
    assert float(C.stochastic_bound(1, 10, 1)) == pytest.approx(corrected, rel=1e-12)
    assert not C.stochastic_bound_within(1, 10, 1, Fraction(25, 10))
    assert C.stochastic_bound_within(1, 10, 1, Fraction(2547, 1000))


@PROPERTY
@given(
    values=st.lists(st.integers(0, 20), min_size=2, max_size=30),
    data=st.data(),
    eps=st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2)]),
)
def test_pt13_the_exact_distance_never_exceeds_the_corrected_bound(values, data, eps):
    n = len(values)
    classes = np.array([data.draw(st.integers(0, 3)) for _ in range(n)])
    classes = np.unique(classes, return_inverse=True)[1].reshape(-1)
    exact = C.laplace_mixture_distance(np.array(values, dtype=float), classes, 20 / float(eps))
    sizes = np.bincount(classes)
    assert (exact <= C.stochastic_bound(sizes, n, eps) * (1 + 1e-9)).all()
    assert (exact >= 1 - 1e-12).all()
    bounds = C.stochastic_bound(np.arange(1, n + 1), n, eps)
    assert (np.diff(bounds) < 0).all()  # decreasing in |E|


@PROPERTY
@given(
    values=st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=12),
    data=st.data(),
    scale=st.floats(0.2, 3),
)
def test_the_breakpoint_verifier_matches_a_brute_force_sup(values, data, scale):
    values = np.array(values)
    n = len(values)
    classes = np.array([data.draw(st.integers(0, 1)) for _ in range(n)])
    if len(set(classes)) < 2:
        return
    exact = C.laplace_mixture_distance(values, classes, scale)
    grid = np.concatenate([np.linspace(-60 * scale - 5, 60 * scale + 5, 4001), values])
    dens = np.exp(-np.abs(grid[:, None] - values[None, :]) / scale)
    f = dens.mean(axis=1)
    for g in range(2):
        f_e = dens[:, classes == g].mean(axis=1)
        brute = np.maximum(f_e / f, f / f_e).max()
        assert brute <= exact[g] * (1 + 1e-9)
        assert brute >= exact[g] * (1 - 1e-3)  # the far ends of the grid approach the limits


def test_randomized_response_distance_by_prop2():
    codes = np.array([0, 0, 0, 1, 1, 2])
    classes = np.array([0, 0, 0, 1, 1, 1])
    eps = math.log(4)
    keep, other = 4 / 6, 1 / 6  # e^eps / (e^eps + 2)
    out_e0 = np.array([keep, other, other])
    out_all = np.array([3 * keep + 3 * other, 2 * keep + 4 * other, keep + 5 * other]) / 6
    expected = np.maximum(out_e0 / out_all, out_all / out_e0).max()
    assert C.randomized_response_distance(codes, classes, 3, eps)[0] == pytest.approx(expected)


def test_min_class_size_is_the_exact_threshold():
    for t, eps, n in [(2, 1, 1000), ("5/2", "1/2", 77), ("11/10", 3, 500), (3, 1, 1000)]:
        k = C.min_class_size(t, eps, n)
        assert C.stochastic_bound_within(k, n, eps, t)
        assert k == 1 or not C.stochastic_bound_within(k - 1, n, eps, t)
    assert C.min_class_size(Fraction(1), 1, 50) == 50
    assert C.epsilon_from_closeness(math.e) == pytest.approx(2)


# ------------------------------------------------------- the method
def test_release_passes_the_verifier_and_reports_its_t():
    inst = _instance()
    req = fa.StochasticTCloseness("5/2", 1, bounds={"v": (0, 10), "w": (0, 4)}, attribute="v")
    rel = stochastic(inst, [req], seed=0)
    assert rel.status == Status.FEASIBLE
    assert rel.provenance["k_used"] == C.min_class_size(Fraction(5, 2), 1, 40) == 6
    assert rel.provenance["noise"]["v"] == {"mechanism": "laplace", "scale": 10.0}
    assert rel.provenance["stochastic_t"] <= 2.5
    assert 1 <= rel.provenance["exact_stochastic_t"]["v"] <= rel.provenance["stochastic_t"]
    report = _passes(inst, rel, [req])
    assert report[str(req)].achieved == pytest.approx(rel.provenance["stochastic_t"])
    assert report[str(req)].witness["exact_laplace_distance"] == pytest.approx(rel.provenance["exact_stochastic_t"]["v"])
    assert not np.allclose(rel.table["v"].to_numpy(dtype=float), inst.table["v"].to_numpy(dtype=float))
    assert (rel.table["w"] == inst.table["w"]).all()  # not a target: unchanged
    again = stochastic(inst, [req], seed=0)
    pd.testing.assert_frame_equal(rel.table, again.table)


def test_k_larger_than_needed_clip_joint_and_randomized_response():
    inst = _instance()
    joint = fa.StochasticTCloseness(3, 2, bounds={"v": (0, 10), "w": (0, 4)}, joint=True)
    with pytest.raises(IncompatibleRequirementError, match="joint=False"):
        stochastic(inst, [joint])  # grade is a target too and is not numeric
    two = _instance(grade="ignore")  # targets v and w, both numeric
    joint = fa.StochasticTCloseness(3, 1, bounds={"v": (0, 10), "w": (0, 4)}, joint=True)
    rel = stochastic(two, [joint, fa.KAnonymity(10)], clip=True, seed=1)
    assert rel.provenance["k_used"] == 10  # t >= e^eps: any class size reaches t
    assert rel.provenance["noise"]["v"]["scale"] == rel.provenance["noise"]["w"]["scale"] == 14.0
    assert rel.table["v"].between(0, 10).all() and rel.table["w"].between(0, 4).all()
    _passes(two, rel, [joint, fa.KAnonymity(10)])
    apart = fa.StochasticTCloseness(3, 1, bounds={"v": (0, 10), "w": (0, 4)})
    rel = stochastic(two, [apart], seed=1)
    assert rel.provenance["noise"]["w"]["scale"] == 4.0
    _passes(two, rel, [apart])
    rr = fa.StochasticTCloseness(3, 1, attribute="grade")
    rel = stochastic(inst, [rr], seed=2)
    assert rel.provenance["noise"]["grade"]["mechanism"] == "randomized_response"
    assert set(rel.table["grade"].astype(str)) <= {"a", "b", "c"}
    _passes(inst, rel, [rr])


def test_verifier_checks_class_sizes_and_bounds():
    inst = _instance()
    req = fa.StochasticTCloseness(2, 1, bounds=(0, 10), attribute="v")
    small = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian")
    report = verify(inst, small, [req], metrics=False)
    assert not report[str(req)].passed and "above t" in report[str(req)].detail
    tight = fa.StochasticTCloseness(2, 1, bounds=(0, 5), attribute="v")
    report = verify(inst, stochastic(inst, [req], seed=0), [tight], metrics=False)
    assert not report[str(tight)].passed and "outside the public bounds" in report[str(tight)].detail


def test_bad_input():
    inst = _instance()
    with pytest.raises(InvalidParameterError, match="needs public bounds"):
        stochastic(inst, [fa.StochasticTCloseness(2, 1, attribute="v")])
    with pytest.raises(InvalidParameterError, match="outside the public bounds"):
        stochastic(inst, [fa.StochasticTCloseness(2, 1, bounds=(0, 5), attribute="v")])
    with pytest.raises(IncompatibleRequirementError, match="one StochasticTCloseness"):
        stochastic(inst, [fa.TCloseness("0.2", attribute="v")])
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter"):
        fa.StochasticTCloseness(2, 0)
    with pytest.raises(InvalidParameterError, match="L < U"):
        fa.StochasticTCloseness(2, 1, bounds=(3, 3))
    assert "stochastic" in fa.METHODS


# ------------------------------------------------------- repeated draws
def test_stochastic_t_closeness_holds_on_repeated_noise_draws():
    """Def. 3 is about the distributions the mask induces: estimate them from 200 seeded
    releases and check every class's interval probabilities against the whole table's
    within the exact distance (and so within t), up to sampling error."""
    inst = _instance(n=40, seed=4)
    req = fa.StochasticTCloseness("5/2", 1, bounds=(0, 10), attribute="v")
    draws, groups, exact = [], None, None
    for seed in range(200):
        rel = stochastic(inst, [req], seed=seed)
        groups = rel.groups if groups is None else groups
        assert (rel.groups == groups).all()  # the classes do not depend on the noise
        exact = rel.provenance["exact_stochastic_t"]["v"]
        draws.append(rel.table["v"].to_numpy(dtype=float))
    draws = np.array(draws)  # draws x records
    noise = (draws - inst.table["v"].to_numpy(dtype=float)) / 10.0
    # the noise is Laplace(0, 10): |noise| is exponential with mean 1
    assert np.abs(noise).mean() == pytest.approx(1.0, abs=0.05)
    cuts = [-np.inf, -5, 0, 5, 10, 15, np.inf]
    for lo, hi in itertools.pairwise(cuts):
        inside = (draws > lo) & (draws <= hi)
        p_all = inside.mean()
        se_all = math.sqrt(p_all * (1 - p_all) / inside.size)
        for g in np.unique(groups):
            sel = inside[:, groups == g]
            p_e = sel.mean()
            se_e = math.sqrt(max(p_e * (1 - p_e), 1e-4) / sel.size)
            # 4 standard errors on each side: a ratio beyond exact would be an error
            assert (p_e - 4 * se_e) <= exact * (p_all + 4 * se_all)
            assert (p_all - 4 * se_all) <= exact * (p_e + 4 * se_e)
    assert exact <= 2.5
