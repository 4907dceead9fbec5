"""fa.utility: distributions before and after on hand-computed tables, the held-out
encoding, and classification utility on synthetic tables with a known signal."""

import json
import math
import statistics
import sys
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.models.utility import MissingDependencyError, label_weights, stratified_split
from fairanon.release import Release
from tests.trees import random_trees


def _release(inst, columns: dict, method="hand"):
    """A release of `inst` whose columns are given, the others as in the original."""
    table = inst.table.copy()
    for col in table.columns:
        table[col] = table[col].astype(str)
    for name, labels in columns.items():
        table[name] = list(labels)
    return Release(table=table, groups=np.zeros(len(table), dtype=int), provenance={"method": method})


# ---------------------------------------------------------------- distributions
ZIP = fa.Hierarchy.from_mapping({"*": {"ab": ["a", "b"], "cde": ["c", "d", "e"]}})


def _zip_instance():
    df = pd.DataFrame({"zip": ["a", "a", "b", "c", "d", "c", "b"]})
    return fa.Instance(df, fa.Schema([fa.Attribute("zip", hierarchy=ZIP)]), name="zips")


def test_categorical_distribution_by_hand():
    inst = _zip_instance()
    # a exact, a->ab, b->ab, c exact, d->cde, c suppressed, b->'a' (does not cover b)
    rel = _release(inst, {"zip": ["a", "ab", "ab", "c", "cde", "*", "a"]})
    d = fa.utility(inst, rel, classifier=None)["zip"]
    # 'e' is in the hierarchy but not in the data: no row, and no share of cde or *
    assert d.values == ("a", "b", "c", "d")
    assert d.original.tolist() == [2, 2, 2, 1]
    # a: 'a' x2 + ab 2/2 + * 1/4; b: ab 2/2 + 1/4; c: 'c' + cde 1/2 + 1/4; d: cde 1/2 + 1/4
    assert d.released.tolist() == pytest.approx([3.25, 1.25, 1.75, 0.75])
    assert d.cases.tolist() == [[1, 1, 0, 0], [0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 0]]
    assert d.totals == {"exact": 2, "generalized": 3, "suppressed": 1, "untruthful": 1}
    assert d.tv_distance == pytest.approx((1.25 + 0.75 + 0.25 + 0.25) / 2 / 7)
    assert d.n_labels == 5 and d.labels[:2] == (("a", 2), ("ab", 2)) and d.unplaced == 0
    text = str(fa.utility(inst, rel, classifier=None))
    assert "zip" in text and "1 cell(s) do not cover their original value" in text


def test_summary_by_hand():
    df = pd.DataFrame({"zip": ["a", "a", "b", "c", "d", "c", "b"], "sex": list("fmfmfmf")})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("zip", hierarchy=ZIP), fa.Attribute("sex")]), name="zips")
    # zip as in test_categorical_distribution_by_hand; sex: 2 of 7 suppressed
    rel = _release(inst, {"zip": ["a", "ab", "ab", "c", "cde", "*", "a"], "sex": list("fm*mf*f")})
    s = fa.utility(inst, rel, classifier=None).summary()
    zip_tv = (1.25 + 0.75 + 0.25 + 0.25) / 2 / 7
    # sex: f 4 -> 3 + 2/2, m 3 -> 2 + 2/2: |4 - 4| + |3 - 3| = 0
    assert s["tv_max"] == pytest.approx(zip_tv) and s["tv_max_attribute"] == "zip"
    assert s["tv_mean"] == pytest.approx(zip_tv / 2)
    # 14 cells: exact zip 2 + sex 5, generalized zip 3, suppressed zip 1 + sex 2
    assert (s["exact_share"], s["generalized_share"], s["suppressed_share"]) == pytest.approx((7 / 14, 3 / 14, 3 / 14))
    assert fa.utility(inst, rel, classifier=None).to_dict()["summary"] == s


def test_label_covering_no_value_of_the_data_is_unplaced():
    inst = _zip_instance()
    # 'e' is a leaf of the hierarchy that no record holds: its record lands in no row
    rel = _release(inst, {"zip": ["a", "a", "b", "c", "e", "c", "b"]})
    d = fa.utility(inst, rel, classifier=None)["zip"]
    assert d.unplaced == 1 and d.released.tolist() == [2, 2, 2, 0]
    assert d.cases[3].tolist() == [0, 0, 0, 1]
    assert "1 record(s) under labels covering no value of the data" in str(fa.utility(inst, rel, classifier=None))


def test_integer_numeric_distribution_by_hand():
    df = pd.DataFrame({"age": [20, 22, 25, 31, 40, 40], "sex": list("fmfmfm")})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("sex")]))
    rel = _release(inst, {"age": ["[20-24]", "[20-24]", "25", "[30-40]", "[30-40]", "*"]})
    d = fa.utility(inst, rel, classifier=None, bins=3)["age"]
    # 21 integers 20..40 in 3 bins of 7 integers each
    assert d.values == ("[20-26]", "[27-33]", "[34-40]")
    assert d.edges == (19.5, 26.5, 33.5, 40.5)
    assert d.original.tolist() == [3, 1, 2]
    # [20-24] x2 and 25 in bin 1; [30-40] x2 holds 4 integers of bin 2 and 7 of bin 3; * 7/21 each
    third = 1 / 3
    assert d.released.tolist() == pytest.approx([3 + third, 2 * 4 / 11 + third, 2 * 7 / 11 + third])
    assert d.cases.tolist() == [[1, 2, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0]]
    before, after = d.summary["before"], d.summary["after"]
    ages, mids = [20, 22, 25, 31, 40, 40], [22, 22, 25, 35, 35, 30]  # * reads the data range [20, 40]
    assert before["mean"] == pytest.approx(statistics.fmean(ages))
    assert before["std"] == pytest.approx(statistics.pstdev(ages))
    assert (before["min"], before["median"], before["max"]) == (20, 28, 40)
    assert after["mean"] == pytest.approx(statistics.fmean(mids))
    assert after["std"] == pytest.approx(statistics.pstdev(mids))
    assert (after["min"], after["median"], after["max"]) == (22, 27.5, 35)
    # discrete uniform variance ((hi - lo + 1)^2 - 1) / 12 of 5, 5, 1, 11, 11 and 21 integers
    within = [Fraction(w * w - 1, 12) for w in (5, 5, 1, 11, 11, 21)]
    expected = statistics.pvariance(mids) + float(sum(within) / 6)
    assert after["std_uniform"] == pytest.approx(math.sqrt(expected))


def test_real_numeric_distribution_by_hand():
    df = pd.DataFrame({"x": [0.5, 1.5, 2.5], "s": ["a", "b", "c"]})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("x", kind="numeric"), fa.Attribute("s")]))
    rel = _release(inst, {"x": ["[0-2]", "[0-2]", "2.5"]})
    d = fa.utility(inst, rel, classifier=None, attributes=["x"], bins=2)["x"]
    # edges 0.5, 1.5, 2.5; [0-2] is clipped to [0.5, 2]: 2/3 of it in the first bin
    assert d.values == ("[0.5-1.5)", "[1.5-2.5]")
    assert d.original.tolist() == [1, 2]
    assert d.released.tolist() == pytest.approx([4 / 3, 2 / 3 + 1])
    assert d.cases.tolist() == [[0, 1, 0, 0], [1, 1, 0, 0]]
    assert d.summary["after"]["mean"] == pytest.approx((1.25 + 1.25 + 2.5) / 3)


def test_unchanged_release_has_zero_distance_and_mondrian_release_verifies():
    inst = fa.load("diva_table1")
    same = _release(inst, {})
    for d in fa.utility(inst, same, classifier=None).attributes:
        assert d.tv_distance == pytest.approx(0) and d.totals["exact"] == d.n
    rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    assert fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
    report = fa.utility(inst, rel, classifier=None)
    assert [d.name for d in report.attributes] == list(inst.schema.qi)
    for d in report.attributes:
        assert d.original.sum() == inst.n_rows
        assert d.released.sum() + d.unplaced == pytest.approx(inst.n_rows)
        assert d.totals["untruthful"] == 0 and sum(d.totals.values()) == inst.n_rows
    json.dumps(report.to_dict())


def test_rows_in_another_order_give_the_same_distributions():
    inst = _zip_instance()
    rel = _release(inst, {"zip": ["a", "ab", "ab", "c", "cde", "*", "ab"]})
    shuffled = Release(table=rel.table.iloc[::-1], groups=rel.groups[::-1], provenance={"method": "hand"})
    a = fa.utility(inst, rel, classifier=None).to_dict()
    b = fa.utility(inst, shuffled, classifier=None).to_dict()
    a.pop("distributions_s"), b.pop("distributions_s")
    assert a == b


# ---------------------------------------------------------------- held-out encoding
def test_label_weights_by_hand():
    # domain a, b, e (e absent from the data); labels 'a' (1 record), 'ab' (2), '*' (1)
    mask = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=bool)
    w = label_weights(mask, np.array([True, True, False]), np.array([1, 2, 1])).toarray()
    # P(l | v) proportional to n_l / (active values l covers): 1/1, 2/2, 1/2
    assert w[0].tolist() == pytest.approx([1 / 2.5, 1 / 2.5, 0.5 / 2.5])
    assert w[1].tolist() == pytest.approx([0, 1 / 1.5, 0.5 / 1.5])
    assert w[2].tolist() == [0, 0, 0]


def test_stratified_split_keeps_each_share():
    y = np.array([True] * 30 + [False] * 70)
    train, test = stratified_split(y, Fraction(3, 10), np.random.default_rng(5))
    assert len(test) == 30 and y[test].sum() == 9
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(100))


# ---------------------------------------------------------------- classification
def _synthetic(n=600, decision_from="x", seed=1):
    """x and z are quasi-identifiers, g the protected attribute, all drawn independently;
    the decision is 'no' exactly when `decision_from` is 'p' (x) or 'f' (g)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "x": rng.choice(["p", "q"], n, p=[0.3, 0.7]),
        "z": rng.choice(["u", "v", "w"], n),
        "age": rng.integers(20, 60, n),
        "g": rng.choice(["f", "m"], n, p=[0.4, 0.6]),
    })
    negative = df["x"] == "p" if decision_from == "x" else df["g"] == "f"
    df["d"] = np.where(negative, "no", "yes")
    schema = fa.Schema([
        fa.Attribute("x"), fa.Attribute("z"), fa.Attribute("age", kind="numeric"),
        fa.Attribute("g", role="protected", protected=["f"]),
        fa.Attribute("d", role="decision", negative="no"),
    ])
    return fa.Instance(df, schema, name="synthetic"), negative.to_numpy()


def _held_out_counts(negative: np.ndarray, test_size=Fraction(3, 10)):
    """Negative and other records in the held-out part (stratified: round(share · count))."""
    n_neg = int(negative.sum())
    return round(test_size * n_neg), round(test_size * (len(negative) - n_neg))


@pytest.mark.parametrize("classifier", ["logistic", "tree"])
def test_signal_lost_when_its_attribute_is_suppressed(classifier):
    pytest.importorskip("sklearn")
    inst, negative = _synthetic()
    rel = _release(inst, {"x": ["*"] * inst.n_rows})
    assert fa.verify(inst, rel, [fa.KAnonymity(1)]).passed  # truthful
    c = fa.utility(inst, rel, classifier=classifier, seed=0).classification
    n1, n0 = _held_out_counts(negative)
    assert (c.n_test, c.n_train) == (n1 + n0, inst.n_rows - n1 - n0)
    # the decision is x itself: the original model is exact
    assert c.original.accuracy == 1 and c.original.auc == 1
    # on the release, the features left (z, age, g) are independent of the decision:
    # accuracy within 3 standard errors of the majority rate, AUC within 3 of 0.5 (Hanley-McNeil)
    majority = max(n1, n0) / (n1 + n0)
    assert c.majority_accuracy == pytest.approx(majority)
    se = math.sqrt(majority * (1 - majority) / (n1 + n0))
    assert abs(c.release.accuracy - majority) <= 3 * se, (c.release.accuracy, majority, se)
    se_auc = math.sqrt((n1 + n0 + 1) / (12 * n1 * n0))
    assert abs(c.release.auc - 0.5) <= 3 * se_auc, (c.release.auc, se_auc)
    assert c.accuracy_loss > 0


def test_predictions_as_discriminating_as_the_decision():
    pytest.importorskip("sklearn")
    inst, negative = _synthetic(decision_from="g")
    rel = _release(inst, {"x": ["*"] * inst.n_rows, "z": ["*"] * inst.n_rows})
    assert fa.verify(inst, rel, [fa.KAnonymity(1)]).passed
    report = fa.utility(inst, rel, measures=["RD", "elift"], seed=0)
    c = report.classification
    assert c.measures == ("RD", "ER")
    n_f, n_m = _held_out_counts(negative)  # negative decision = protected group
    for score in (c.original, c.release, c.truth):
        # every protected record negative, no other: RD = 1 - 0, elift = 1 / p with p = n_f / n
        assert score.counts == (n_f, 0, 0, n_m)
        assert score.discrimination["RD"] == 1
        assert score.discrimination["ER"] == pytest.approx((n_f + n_m) / n_f)
    assert c.release.accuracy == 1
    # unaware of g, the models have nothing to go on: RD within 3 standard errors of 0
    unaware = fa.utility(inst, rel, features=["x", "z", "age"], seed=0, attributes=[]).classification
    se = math.sqrt(0.25 / n_f + 0.25 / n_m)
    assert abs(unaware.original.discrimination["RD"]) <= 3 * se
    text = str(report)
    assert "elift" in text and "held-out truth" in text


def test_mondrian_release_classification_is_deterministic():
    pytest.importorskip("sklearn")
    inst, _ = _synthetic(n=300)
    requirements = [fa.KAnonymity(10)]
    rel = fa.anonymize(inst, requirements, method="mondrian", seed=0)
    assert fa.verify(inst, rel, requirements).passed
    one = fa.utility(inst, rel, seed=4, classifier="tree").to_dict()
    two = fa.utility(inst, rel, seed=4, classifier="tree").to_dict()
    for d in (one, two):
        d.pop("distributions_s"), d["classification"].pop("elapsed_s")
    assert one == two
    assert 0 <= one["classification"]["models"][1]["accuracy"] <= 1
    json.dumps(one)


def test_a_scikit_learn_classifier_object_is_cloned():
    pytest.importorskip("sklearn")
    from sklearn.naive_bayes import BernoulliNB

    inst, _ = _synthetic(n=200)
    rel = _release(inst, {"z": ["*"] * inst.n_rows})
    given = BernoulliNB()
    c = fa.utility(inst, rel, classifier=given, features=["x", "z"]).classification
    assert c.classifier == "BernoulliNB" and not hasattr(given, "classes_")  # never fitted itself
    assert c.original.accuracy == 1 and c.release.accuracy == 1  # x is kept


def test_without_scikit_learn_the_classifier_names_the_extra(monkeypatch):
    inst, _ = _synthetic(n=50)
    rel = _release(inst, {})
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn raises ImportError
    with pytest.raises(MissingDependencyError, match=r"fairanon\[ml\]"):
        fa.utility(inst, rel)
    assert fa.utility(inst, rel, classifier=None).classification is None


def test_bad_input():
    inst, _ = _synthetic(n=50)
    rel = _release(inst, {})
    with pytest.raises(fa.InvalidParameterError, match="classifier"):
        fa.utility(inst, rel, classifier="svm")
    for size in (0, 1, 1.5, "half"):
        with pytest.raises(fa.InvalidParameterError, match="test_size"):
            fa.utility(inst, rel, classifier="logistic", test_size=size)
    with pytest.raises(fa.InvalidParameterError, match="measure"):
        fa.utility(inst, rel, classifier="logistic", measures=["XX"])
    with pytest.raises(fa.InvalidParameterError, match="'nope'"):
        fa.utility(inst, rel, classifier=None, attributes=["nope"])
    with pytest.raises(fa.InvalidParameterError, match="bins"):
        fa.utility(inst, rel, classifier=None, bins=0)
    with pytest.raises(fa.InvalidParameterError, match="release"):
        fa.utility(inst, rel.table, classifier=None)
    with pytest.raises(fa.SchemaError, match="exactly once"):
        fa.utility(inst, Release(table=rel.table.iloc[:10], groups=np.zeros(10)), classifier=None)
    no_decision = _zip_instance()
    with pytest.raises(fa.SchemaError, match="no decision attribute"):
        fa.utility(no_decision, _release(no_decision, {}), classifier="logistic")


def test_bad_classification_input():
    pytest.importorskip("sklearn")
    inst, _ = _synthetic(n=50)
    rel = _release(inst, {})
    with pytest.raises(fa.InvalidParameterError, match="decision attribute 'd'"):
        fa.utility(inst, rel, features=["d"])
    with pytest.raises(fa.InvalidParameterError, match="held-out part"):
        fa.utility(inst, rel, test_size=0.01)


@pytest.mark.parametrize("seed", range(5))
def test_weighted_quantiles_are_those_of_the_records_repeated(seed):
    # The Dask engine's summaries: a value x with w records has the quantiles of x
    # repeated w times, as numpy computes them on the repeated array.
    from fairanon.models.utility.distributions import _moments, _weighted_quantiles

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 30, 12).astype(float) + rng.choice([0.0, 0.5], 12)
    w = rng.integers(1, 6, 12)
    q = np.linspace(0, 1, 41)
    records = np.repeat(x, w)
    assert _weighted_quantiles(x, w, q).tolist() == pytest.approx(np.quantile(records, q).tolist(), abs=1e-12)
    assert _moments(x, w) == pytest.approx((records.mean(), records.var()))


def test_classification_encoding_of_an_id_like_quasi_identifier_refused_before_it_is_built():
    """2,000 IDs, each released as itself: the classifier's label weights take 2,000
    labels x 2,000 values in float64 (32 MB, twice); under a 1 MB limit they are refused
    by the attribute's name before they are built."""
    import tracemalloc

    from fairanon._memory import memory_limit
    from fairanon.models.metrics.classes import _prepare
    from fairanon.models.utility.classification import _estimator, classification_utility

    ids = [f"P{i:05d}" for i in range(2_000)]
    table = pd.DataFrame({"pid": ids * 2, "y": ["no", "yes"] * 2_000})
    inst = fa.Instance(table, fa.Schema([fa.Attribute("pid", hierarchy=fa.Hierarchy.flat(ids)),
                                         fa.Attribute("y", role="decision", negative="no")]))
    rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    assert fa.verify(inst, rel, [fa.KAnonymity(2)]).passed and rel.table["pid"].nunique() == 2_000
    p = _prepare(inst, rel, "utility")
    pytest.importorskip("sklearn")
    _estimator("tree", 0)  # scikit-learn's modules imported here, outside the traced memory
    tracemalloc.start()
    try:
        with memory_limit("1MB"), pytest.raises(fa.MemoryLimitError, match="classification encoding of the"):
            classification_utility(p, classifier="tree")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2_000 * 2_000


# ---------------------------------------------------------------- large domains
@st.composite
def trees_and_releases(draw):
    """A random tree (uneven depths, chains of single children) over a categorical
    attribute, some records, and a released label per record: the value, an ancestor,
    another node (untruthful) or ``*``."""
    tree = draw(random_trees(12))
    values = draw(st.lists(st.sampled_from(tree.leaves), min_size=1, max_size=12))
    released = []
    for v in values:
        kind = draw(st.sampled_from(["value", "ancestor", "any"]))
        if kind == "value":
            released.append(v)
        elif kind == "ancestor":
            released.append(draw(st.sampled_from(tree.ancestors(v))))
        else:
            released.append(draw(st.sampled_from(tree.nodes)))
    return tree, values, released


def _distribution_by_paths(tree, values, released):
    """The four cases per value present and the released histogram under the uniform
    spread, each label's values found by walking parent pointers (exact fractions).
    A cell is suppressed when its label is '*' or a node covering every value present."""
    present = [v for v in tree.leaves if v in set(values)]

    def under(label):
        return [v for v in present if label in tree.ancestors(v)]

    rows = {label: released.count(label) for label in set(released)}
    hist = {v: Fraction(0) for v in present}
    for label, r in rows.items():
        for v in under(label):
            hist[v] += Fraction(r, len(under(label)))
    unplaced = sum(r for label, r in rows.items() if not under(label))
    cases = {v: [0, 0, 0, 0] for v in present}
    for v, label in zip(values, released):
        # A node (not a value) over every value present tells no more than '*'.
        nothing = label == "*" or (label not in tree.leaves and under(label) == present)
        case = 0 if label == v else 2 if nothing else 1 if label in tree.ancestors(v) else 3
        cases[v][case] += 1
    return present, hist, cases, unplaced


@settings(max_examples=40)
@given(trees_and_releases())
def test_categorical_distribution_from_ranges_equals_the_sum_over_paths(case):
    """The range sums give what each label's values, found by their paths to the root,
    give: the released histogram, the four cases and the unplaced records."""
    tree, values, released = case
    inst = fa.Instance(pd.DataFrame({"c": values}), fa.Schema([fa.Attribute("c", hierarchy=tree)]))
    d = fa.utility(inst, _release(inst, {"c": released}), classifier=None)["c"]
    present, hist, cases, unplaced = _distribution_by_paths(tree, values, released)
    assert d.values == tuple(present)
    assert d.released.tolist() == pytest.approx([float(hist[v]) for v in present], rel=1e-12, abs=1e-12)
    assert [d.released[i] == 0 for i in range(len(present))] == [hist[v] == 0 for v in present]
    assert d.cases.tolist() == [cases[v] for v in present] and d.unplaced == unplaced
    assert d.original.tolist() == [values.count(v) for v in present]


@pytest.mark.parametrize("n", [20_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_distribution_of_an_id_like_attribute_builds_no_labels_by_values_table(n):
    """n IDs, each released as itself but the first ten, suppressed: the labels-by-values
    table would take (n - 9) x n bytes (400 MB for 20,000, 10 GB for 100,000), above
    the 100 MB limit. By hand: ``*`` spreads its 10 records as 10/n over every value, so
    a value released as itself has 1 + 10/n and a suppressed one 10/n, and the distance
    is ½ (10 (1 - 10/n) + (n - 10) 10/n) / n."""
    import tracemalloc

    from fairanon._memory import memory_limit

    ids = [f"P{i:06d}" for i in range(n)]
    inst = fa.Instance(pd.DataFrame({"pid": ids}), fa.Schema([fa.Attribute("pid", hierarchy=fa.Hierarchy.flat(ids))]))
    rel = _release(inst, {"pid": ["*"] * 10 + ids[10:]})
    tracemalloc.start()
    try:
        with memory_limit("100MB"):
            d = fa.utility(inst, rel, classifier=None)["pid"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 10**6
    assert d.totals == {"exact": n - 10, "generalized": 0, "suppressed": 10, "untruthful": 0}
    spread = Fraction(10, n)
    assert d.released[:10].tolist() == pytest.approx([float(spread)] * 10, rel=1e-12)
    assert d.released[10:] == pytest.approx(np.full(n - 10, float(1 + spread)), rel=1e-12)
    tv = (10 * (1 - spread) + (n - 10) * spread) / (2 * n)
    assert d.tv_distance == pytest.approx(float(tv), rel=1e-9) and d.unplaced == 0
