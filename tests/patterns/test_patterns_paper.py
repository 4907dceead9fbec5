"""The paper's experiments (Hajian et al. §7) on the bundled UCI data, with the choices
of spec §3.1 (fairanon.patterns.datasets). Heavy reproductions are marked slow; the
benchmark script prints every table."""

from fractions import Fraction as F

import pytest

from fairanon import patterns as fp

pytest.importorskip("mlxtend")


@pytest.fixture(scope="module")
def german():
    return fp.paper_german()


def test_calibration_of_the_protected_groups(german):
    """Spec §3.1: the cut-offs that reproduce the paper's group shares."""
    g = german.train
    assert (g.support({"age=old"}), g.support({"foreign_worker=yes"}), g.support({"credit=bad"})) == (113, 963, 300)
    adult = fp.paper_adult()
    a = adult.train
    assert a.n_records == 32561 and adult.test.n_records == 16281
    assert (a.support({"sex=Female"}), a.support({"age=young"})) == (10771, 9711)
    assert round(100 * 10771 / 32561, 2) == 33.08 and round(100 * 9711 / 32561, 2) == 29.82


@pytest.mark.parametrize("support, expected", [
    (F(15, 100), {"1.2": 51, "1.4": 48, "1.6": 47, "1.8": 46, "2.0": 36}),
    (F(20, 100), {"1.2": 12, "1.4": 12, "1.6": 12, "1.8": 11, "2.0": 8}),
])
def test_german_discriminatory_counts_match_table8(german, support, expected):
    """Spec §3.3: the numbers of α-discriminatory patterns inferred from Table 8's
    percentages (51 at σ = 15 %, α = 1.2, ...) come out exactly."""
    ps = fp.PatternSet.from_db(german.train, support, german.roles)
    counts = {a: len(fp.detect_discriminatory(ps, "slift", a)) for a in expected}
    assert counts == expected
    assert not fp.detect_discriminatory(ps, "slift", "1.2").undefined


def test_german_table9_fp_column(german):
    """Table 9, German, FP: 62.47 / 35.2 / 0 / 0 % d-explainable (d = 0.85, 0.9, 0.95, 1)
    at σ = 10 %, α = 1.2; ours: 61.57 / 33.19 / 0.44 / 0 (229 α-discriminatory patterns)."""
    ps = fp.PatternSet.from_db(german.train, F(1, 10), german.roles)
    ours, paper = [], [62.47, 35.2, 0, 0]
    for d in ("0.85", "0.9", "0.95", "1"):
        det = fp.detect_unexplainable(ps, "slift", F(6, 5), d)
        total = len(det) + len(det.explained)
        assert total == 229
        ours.append(round(100 * len(det.explained) / total, 2))
    assert ours == [61.57, 33.19, 0.44, 0.0]
    assert all(abs(a - b) <= 2.1 for a, b in zip(ours, paper))


def test_german_alpha_protective_k_anonymous_is_verified(german):
    ps = fp.PatternSet.from_db(german.train, F(20, 100), german.roles)
    rel = fp.publish(ps, fp.PatternRequirements("slift", "1.2", k=5))
    assert rel.passed, rel.report
    assert rel.changes()["misses_cost"] == 0 and rel.changes()["ghost_cost"] == 0


@pytest.mark.slow
def test_table9_after_k_anonymization_and_adult(german):
    """Table 9: German FP' is 2 / 0 / 0 / 0 % d-explainable in the paper, 0 % here for
    every k; Adult FP 70 / 15 / 0 / 0 % of 20 patterns in the paper, 50.69 / 13.19 / 0 / 0 %
    of 144 here (the paper's Adult discretization is unknown)."""
    ps = fp.PatternSet.from_db(german.train, F(1, 10), german.roles)
    priv = fp.k_anonymize(ps, 3).patterns
    det = fp.detect_unexplainable(priv, "slift", F(6, 5), "0.85")
    assert len(det) + len(det.explained) == 237 and not det.explained
    adult = fp.paper_adult()
    ps = fp.PatternSet.from_db(adult.train, F(1, 10), adult.roles)
    shares = []
    for d in ("0.85", "0.9", "0.95", "1"):
        det = fp.detect_unexplainable(ps, "slift", F(6, 5), d)
        shares.append(round(100 * len(det.explained) / (len(det) + len(det.explained)), 2))
    assert shares == [50.69, 13.19, 0.0, 0.0]


@pytest.mark.slow
def test_table7_german_accuracy_of_the_original_patterns():
    """Table 7: the classifier of FP reaches 0.7 on German in the paper; 0.694 here on a
    stratified 2/3-1/3 split (seed 0; the paper's split is unknown)."""
    data = fp.paper_german(split="stratified", seed=0)
    ps = fp.PatternSet.from_db(data.train, F(1, 10), data.roles)
    acc = fp.CMARClassifier(ps, data.roles.class_items, data.train.n_records).accuracy(data.test)
    assert round(acc, 3) == 0.694 and abs(acc - 0.7) <= 0.01


@pytest.mark.slow
def test_table8_adult_privacy_step_creates_discrimination():
    """Table 8, Adult: DPD is 0 and NDD grows with k (the paper: 0 .. 40 %); here at
    σ = 20 %, α = 1.4: NDD 16.67 % at k = 5 and 70.59 % at k = 50."""
    adult = fp.paper_adult()
    ps = fp.PatternSet.from_db(adult.train, F(1, 5), adult.roles)
    ndd = []
    for k in (5, 50):
        impact = fp.discrimination_impact(ps, fp.k_anonymize(ps, k).patterns, "slift", "1.4")
        assert impact["dpd"] == 0
        ndd.append(round(100 * float(impact["ndd"]), 2))
    assert ndd == [16.67, 70.59]
