"""The paper's experiments (Hajian et al. §7) on the bundled UCI data, with the choices
of fairanon.patterns.datasets (docs/papers.md, Hajian et al., HJ-7). Each test compares
with a number the paper prints, or asserts the documented property where fairanon
differs; heavy reproductions are marked slow; `python benchmarks/patterns.py <table>`
prints every cell beside the paper's."""

from fractions import Fraction as F

import pytest

from fairanon import InvalidParameterError
from fairanon import patterns as fp

pytest.importorskip("mlxtend")


@pytest.fixture(scope="module")
def german():
    return fp.paper_german()


def test_calibration_of_the_protected_groups(german):
    """§7: the paper's group shares (whole percents, as it prints them) with old = age > 50
    and young = age < 30 (HJ-7): German old 11 %, foreign worker 96 %; Adult female 33 %,
    young 29 %; 300 bad credits of 1,000; Adult's 32,561 + 16,281 records."""
    g = german.train
    assert (int(100 * g.support({"age=old"}) / g.n_records), int(100 * g.support({"foreign_worker=yes"}) / g.n_records)) == (11, 96)
    assert g.support({"credit=bad"}) == 300 and g.n_records == 1000
    adult = fp.paper_adult()
    a = adult.train
    assert a.n_records == 32561 and adult.test.n_records == 16281
    assert (int(100 * a.support({"sex=Female"}) / a.n_records), int(100 * a.support({"age=young"}) / a.n_records)) == (33, 29)


@pytest.mark.parametrize("support, expected", [
    (F(15, 100), {"1.2": 51, "1.4": 48, "1.6": 47, "1.8": 46, "2.0": 36}),
    (F(20, 100), {"1.2": 12, "1.4": 12, "1.6": 12, "1.8": 11, "2.0": 8}),
])
def test_german_discriminatory_counts_match_table8(german, support, expected):
    """The numbers of α-discriminatory patterns that Table 8's percentages imply (their
    smallest common denominators: 51 at σ = 15 %, α = 1.2, ...) come out exactly."""
    ps = fp.PatternSet.from_db(german.train, support, german.roles)
    counts = {a: len(fp.detect_discriminatory(ps, "slift", a)) for a in expected}
    assert counts == expected
    assert not fp.detect_discriminatory(ps, "slift", "1.2").undefined


def test_german_table9_fp_column(german):
    """Table 9, German, FP: the paper's 62.47 / 35.2 / 0 / 0 % d-explainable (d = 0.85,
    0.9, 0.95, 1; σ = 10 %, α = 1.2) within 2.1 points each, falling with d; the paper's
    62.47 % fits no count of fairanon's α-discriminatory patterns (docs/papers.md,
    Hajian et al., Table 9)."""
    ps = fp.PatternSet.from_db(german.train, F(1, 10), german.roles)
    ours, paper = [], [62.47, 35.2, 0, 0]
    for d in ("0.85", "0.9", "0.95", "1"):
        det = fp.detect_unexplainable(ps, "slift", F(6, 5), d)
        total = len(det) + len(det.explained)
        ours.append(100 * len(det.explained) / total)
    assert all(abs(a - b) <= 2.1 for a, b in zip(ours, paper))
    assert ours == sorted(ours, reverse=True) and ours[-1] == 0


def test_german_alpha_protective_k_anonymous_is_verified(german):
    ps = fp.PatternSet.from_db(german.train, F(20, 100), german.roles)
    rel = fp.publish(ps, fp.PatternRequirements("slift", "1.2", k=5))
    assert rel.passed, rel.report
    assert rel.changes()["misses_cost"] == 0 and rel.changes()["ghost_cost"] == 0


@pytest.mark.slow
def test_table9_after_k_anonymization_and_adult(german):
    """Table 9 (docs/papers.md, Hajian et al., Table 9). German FP' (k = 3): the paper's
    0 % at d >= 0.9 and at most its 2 % at d = 0.85 (fairanon: 0, HJ-8). Adult FP: the
    paper's 0 % at d = 0.95 and 1 and its order 70 > 15 > 0 at d = 0.85, 0.9; the paper's
    percentages fit 20 α-discriminatory patterns, fairanon's encoding has more (HJ-7), so
    the two shares themselves differ. Adult FP' (k = 100): less explainable than FP, as
    the paper's 30 % against 70 %, and the paper's 0 % at d = 0.9."""
    ps = fp.PatternSet.from_db(german.train, F(1, 10), german.roles)
    priv = fp.k_anonymize(ps, 3).patterns
    shares = [_explained(priv, d) for d in ("0.85", "0.9", "0.95", "1")]
    assert shares[1:] == [0, 0, 0] and shares[0] <= 2
    assert shares[0] < _explained(ps, "0.85")
    adult = fp.paper_adult()
    ps = fp.PatternSet.from_db(adult.train, F(1, 10), adult.roles)
    shares = [_explained(ps, d) for d in ("0.85", "0.9", "0.95", "1")]
    assert shares[2:] == [0, 0]
    assert shares[0] > shares[1] > 0
    priv = fp.k_anonymize(ps, 100).patterns
    assert _explained(priv, "0.85") < shares[0]
    assert _explained(priv, "0.9") == 0


def _explained(ps, d):
    """% of the α-discriminatory patterns (α = 1.2, slift) that are d-explainable, ¬A read
    as the paper does (HJ-5)."""
    det = fp.detect_unexplainable(ps, "slift", F(6, 5), d, negation="complement")
    return 100 * F(len(det.explained), len(det) + len(det.explained))


@pytest.mark.slow
def test_table7_german_accuracy():
    """Table 7 (docs/papers.md, Hajian et al., Tables 6-7): FP reaches the paper's 0.7
    within 0.01 on a stratified 2/3-1/3 split (seed 0; the paper's split is unknown,
    HJ-7). The paper's sanitized classifiers fall to 0.57-0.65; fairanon's stay at the
    majority class (good credit for 95 % or more of the test records, HJ-6), so FP', FP''
    and FP* keep FP's accuracy within 0.01 instead of losing up to 0.13."""
    data = fp.paper_german(split="stratified", seed=0)
    ps = fp.PatternSet.from_db(data.train, F(1, 10), data.roles)
    priv = fp.k_anonymize(ps, 3).patterns
    star = fp.sanitize(ps, "slift", F(6, 5)).patterns
    majority = max(data.test.support({c}) for c in data.roles.class_items) / data.test.n_records
    assert round(majority, 3) == 0.7  # the paper's FP accuracy is the majority share too
    accuracies = []
    for tp in (ps, priv, star):
        clf = fp.CMARClassifier(tp, data.roles.class_items, data.train.n_records)
        predicted = clf.predict(data.test)
        assert predicted.count("credit=good") >= 0.95 * data.test.n_records
        accuracies.append(clf.accuracy(data.test))
    assert abs(accuracies[0] - 0.7) <= 0.01
    assert all(abs(a - accuracies[0]) <= 0.01 for a in accuracies)


@pytest.mark.slow
def test_table6_adult_accuracy_claims():
    """Table 6 (docs/papers.md, Hajian et al., Tables 6-7), with eq. 21's N = |D_train|:
    the paper's claims hold — accuracy falls with larger k (FP': the paper 0.763 -> 0.751)
    and with smaller α (FP'': 0.752 -> 0.724, FP*: 0.739 -> 0.691), FP* does not depend
    on k; FP* at α = 1.2 is the paper's 0.691 within 0.005. The other cells differ from
    the paper by up to 0.14 (the Adult encoding, HJ-7; the classifier, HJ-6)."""
    adult = fp.paper_adult()
    ps = fp.PatternSet.from_db(adult.train, F(1, 10), adult.roles)

    def acc(tp):
        return fp.CMARClassifier(tp, adult.roles.class_items, adult.train.n_records).accuracy(adult.test)

    priv = {k: acc(fp.k_anonymize(ps, k).patterns) for k in (5, 50)}
    both = {(k, a): acc(fp.sanitize(ps, "slift", a, k=k).patterns) for k in (5, 50) for a in (F(6, 5), F(3, 2))}
    star = {a: acc(fp.sanitize(ps, "slift", a).patterns) for a in (F(6, 5), F(3, 2))}
    assert priv[50] < priv[5]
    assert all(both[(50, a)] <= both[(5, a)] for a in (F(6, 5), F(3, 2)))
    assert all(both[(k, F(6, 5))] <= both[(k, F(3, 2))] for k in (5, 50)) and star[F(6, 5)] < star[F(3, 2)]
    assert abs(star[F(6, 5)] - 0.691) <= 0.005
    paper = {"FP": 0.744, "FP' 5": 0.763, "FP' 50": 0.751, "FP* 1.2": 0.691, "FP* 1.5": 0.739}
    ours = {"FP": acc(ps), "FP' 5": priv[5], "FP' 50": priv[50], "FP* 1.2": star[F(6, 5)], "FP* 1.5": star[F(3, 2)]}
    assert all(abs(ours[key] - paper[key]) <= 0.14 for key in paper)


@pytest.mark.slow
def test_table8_adult_privacy_step_creates_discrimination():
    """Table 8, Adult, σ = 20 %, α = 1.4, ¬A read as the paper reads it (negation=
    'complement', HJ-5): DPD is the paper's 0 at k = 5 and 50, NDD the paper's 0 at k = 5
    and positive at k = 50 (the paper: 40 %; the privacy step's blocks and the encoding
    differ, HJ-7, HJ-8). fairanon's default subtraction counts the virtual records of the
    privacy step, which carry no sex or age item, as ¬A, and sees more new discrimination."""
    adult = fp.paper_adult()
    ps = fp.PatternSet.from_db(adult.train, F(1, 5), adult.roles)
    impact = {k: fp.discrimination_impact(ps, fp.k_anonymize(ps, k).patterns, "slift", "1.4", negation="complement")
              for k in (5, 50)}
    assert impact[5]["dpd"] == impact[50]["dpd"] == 0
    assert impact[5]["ndd"] == 0 and impact[50]["ndd"] > 0
    subtraction = fp.discrimination_impact(ps, fp.k_anonymize(ps, 50).patterns, "slift", "1.4")
    assert subtraction["dpd"] == 0 and subtraction["ndd"] > impact[50]["ndd"]


@pytest.mark.slow
def test_table8_german_privacy_step_removes_discrimination(german):
    """Table 8, German, σ = 20 % (docs/papers.md, Hajian et al., Table 8): with the
    paper's reading of ¬A (HJ-5) NDD is the paper's 0 in all 20 cells and DPD grows with
    k; the cells the paper prints where fairanon agrees are pinned (the others differ by
    the privacy step's blocks, HJ-8). With fairanon's default subtraction the privacy
    step would instead create discrimination: NDD 33.33 % at α = 2, k = 3."""
    ps = fp.PatternSet.from_db(german.train, F(1, 5), german.roles)
    ks = (3, 5, 10, 15)
    privs = {k: fp.k_anonymize(ps, k).patterns for k in ks}
    dpd = {}
    for a in ("1.2", "1.4", "1.6", "1.8", "2"):
        row = []
        for k in ks:
            impact = fp.discrimination_impact(ps, privs[k], "slift", a, negation="complement")
            assert impact["ndd"] == 0
            row.append(impact["dpd"])
        assert row == sorted(row)
        dpd[a] = [round(100 * float(x), 2) for x in row]
    paper_equal = {("1.2", 3): 0, ("1.2", 15): 58.33, ("1.4", 3): 0, ("1.6", 3): 0, ("1.8", 5): 45.45,
                   ("2", 3): 25, ("2", 15): 87.5}
    assert {key: dpd[key[0]][ks.index(key[1])] for key in paper_equal} == paper_equal
    subtraction = fp.discrimination_impact(ps, privs[3], "slift", "2")
    assert subtraction["dpd"] == 0 and round(100 * float(subtraction["ndd"]), 2) == 33.33


@pytest.mark.slow
def test_fig5_union_targets_settle_where_the_papers_do_not():
    """Fig. 5 (docs/papers.md, HJ-2): Adult, σ = 10 %, α = 1.2, k = 25. With the paper's
    {A, B} targets the re-check loop does not settle in 100 passes (Theorem 1 fails with
    sex=Female and age=young); with targets="union" it settles, and the independent
    verifier finds the set α-protective and k-anonymous."""
    adult = fp.paper_adult()
    ps = fp.PatternSet.from_db(adult.train, F(1, 10), adult.roles)
    reqs = fp.PatternRequirements("slift", F(6, 5), k=25)
    paper = fp.publish(ps, reqs)
    assert not paper.passed and "did not converge in 100 passes" in paper.reason
    union = fp.publish(ps, reqs, targets="union")
    assert union.passed, union.report
    assert union.provenance["rounds"] <= 3  # two protected attributes: at most 3 passes
    assert union.report["alpha_protection"].passed and union.report["k_anonymity"].passed


def test_paper_adult_names_its_encodings():
    with pytest.raises(InvalidParameterError, match="'encoding' parameter of paper_adult must be one of .* Got 'capital'"):
        fp.paper_adult(encoding="capital")


@pytest.mark.slow
def test_adult_without_capital_has_the_counts_tables_8_and_9_imply():
    """docs/papers.md, Hajian et al., HJ-7. Without capital-gain and capital-loss Adult has
    the smallest numbers of α-discriminatory patterns (slift) that the paper's percentages
    allow (NDD = x/(n + x) fits any multiple of them): Table 8, σ = 15 %: 12 at α = 1.3 (NDD 25, 29.41, 33.33 % = 4/16, 5/17, 6/18 with its
    DPD of 0) and 7 at α = 1.4 (12.5, 30 % = 1/8, 3/10); Table 9, σ = 10 %, α = 1.2: a
    multiple of 20 (its shares 70, 15, 85, 65, 30 % are twentieths). Table 8's cells
    σ = 15 %, α = 1.3, k = 25 and 50 and α = 1.4, k = 25 come out as printed, on a
    k-anonymous set the verifier passes."""
    adult = fp.paper_adult(encoding="no-capital")
    ps = fp.PatternSet.from_db(adult.train, F(15, 100), adult.roles)
    assert [len(fp.detect_discriminatory(ps, "slift", a)) for a in ("1.3", "1.4")] == [12, 7]
    n = len(fp.detect_discriminatory(fp.PatternSet.from_db(adult.train, F(1, 10), adult.roles), "slift", "1.2"))
    assert n > 0 and n % 20 == 0
    for k, alpha, paper in ((25, "1.3", 25), (50, "1.3", 29.41), (25, "1.4", 12.5)):
        priv = fp.k_anonymize(ps, k).patterns
        rep = fp.verify_patterns(priv.published(), roles=ps.roles, empty_support=priv.empty_support, k=k)
        assert rep.passed, rep
        impact = fp.discrimination_impact(ps, priv, "slift", alpha, negation="complement")
        assert impact["dpd"] == 0 and round(100 * float(impact["ndd"]), 2) == paper
