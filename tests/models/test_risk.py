"""Risk models: hand-computed small tables, brute-force oracles, bad input."""

from __future__ import annotations

import itertools
import json
import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

import fairanon as fa
from fairanon._memory import memory_limit
from fairanon._validation import check_fraction
from fairanon.exceptions import InvalidParameterError, MemoryLimitError, SchemaError
from fairanon.instances.generalization import label_covers
from fairanon.instances.synthetic import population as synthetic_population
from fairanon.models.risk import (
    PopulationModel,
    attribute_disclosure,
    benedetti_franconi,
    dis_suda,
    dankar,
    individual_risk,
    journalist_risk,
    pitman,
    population_model,
    records_above,
    risk,
    risk_classes,
    risk_histogram,
    sample_risk,
    snb,
    suda,
    uniqueness,
    zayatz,
)
from fairanon.models.risk.sample import (HISTOGRAM_EDGES, PopulationCounts, _above, merge_population_counts,
                                        population_class_sizes, population_counts, size_summary)
from fairanon.models.risk.suda import minimal_sample_uniques, suda_memory, suda_weight
from fairanon.models.risk.uniqueness import _pitman_loglik
from risk_tables import HAND, SCHEMA


@pytest.fixture
def hand():
    return fa.Instance(HAND, SCHEMA, name="hand")


def release_of(instance, **cells):
    """A release of the instance whose rows (by position) get the given QI labels."""
    table = instance.table.copy()
    for column in ("age", "zip"):
        table[column] = table[column].astype(str)
    for column, changes in cells.items():
        for position, label in changes.items():
            table.iloc[position, table.columns.get_loc(column)] = label
    return fa.Release(table=table, groups=np.zeros(len(table)))


def test_sample_risk_by_hand(hand):
    cls = risk_classes(hand)
    assert (cls.n_records, cls.n_classes, cls.n_suppressed) == (10, 4, 0)
    s = sample_risk(cls)
    assert s.highest == 1
    assert (s.records_at_highest, s.classes_at_highest) == (2, 2)
    assert set(s.witness["records"]) <= {103, 104}
    assert s.average == Fraction(4, 10) == s.marketer
    # Strictly above 1/5: classes of 3, 1, 1 (5 records); the class of 5 is not above 0.2.
    assert (s.records_above, s.classes_above) == (5, 3)
    assert records_above(cls, Fraction(1, 3)) == (2, 2)  # the class of 3 is not above 1/3
    assert records_above(cls, 0) == (10, 4)
    assert records_above(cls, 1) == (0, 0)
    hist = {(h["lo"], h["hi"]): h["records"] for h in risk_histogram(cls) if h["records"]}
    assert hist == {("1/2", "1"): 2, ("1/4", "1/3"): 3, ("4/25", "1/5"): 5}
    assert sum(h["classes"] for h in risk_histogram(cls)) == 4


def _above_by_fractions(sizes, t) -> list[bool]:
    """The oracle: 1/f > t in Python Fractions."""
    return [Fraction(1, int(f)) > t for f in sizes]


def test_thresholds_with_large_numerators_do_not_wrap():
    # 0.1 + 0.2 reads as 7500000000000001/25000000000000000: f times that numerator
    # leaves int64 from f = 1230 on.
    t = Fraction("0.30000000000000004")
    assert t == check_fraction(0.1 + 0.2, "t", "test")
    sizes = np.array([10**6, 3, 4, 1229, 1230, 2**62], dtype=np.int64)
    # Only the class of 3 has risk 1/3 > 0.30000000000000004.
    assert _above_by_fractions(sizes, t) == [False, True, False, False, False, False]
    summary = size_summary(sizes, t)
    assert summary["records_above_threshold"] == 3
    thresholds = [t, Fraction(0), Fraction(1), Fraction(1, 3), Fraction(1, 10**6), Fraction(1, 10**6 + 1),
                  Fraction(2**70 - 1, 2**72), Fraction(1, 2**65)]
    for threshold in thresholds:
        expected = _above_by_fractions(sizes, threshold)
        found = _above(sizes, threshold)
        assert found.tolist() == expected, threshold
    # The histogram puts each class in the interval ]lo, hi] holding 1/f, as Fractions say.
    edges = HISTOGRAM_EDGES
    lows = (Fraction(0),) + edges[:-1]
    inst = fa.Instance(pd.DataFrame({"age": ["a"] * 1230 + ["b"] * 3}), fa.Schema([fa.Attribute("age")]))
    hist = risk_histogram(risk_classes(inst))
    by_hand = {(str(lo), str(hi)): 0 for lo, hi in zip(lows, edges)}
    for f in (1230, 3):
        [key] = [k for k, (lo, hi) in zip(by_hand, zip(lows, edges)) if lo < Fraction(1, f) <= hi]
        by_hand[key] += f
    assert {(h["lo"], h["hi"]): h["records"] for h in hist} == by_hand


def test_a_float_threshold_on_a_large_class():
    # 2,000 identical records: one class of risk 1/2000 < 0.1 + 0.2.
    inst = fa.Instance(pd.DataFrame({"age": ["a"] * 2000}), fa.Schema([fa.Attribute("age")]))
    s = risk(inst, threshold=0.1 + 0.2, suda_max_size=None).sample
    assert (s.records_above, s.classes_above) == (0, 0)
    assert records_above(risk_classes(inst), 0.1 + 0.2) == (0, 0)
    # Journalist risk: 3 records drawn from a population of 2,000 equal ones, 1/2000 < 0.3.
    small = fa.Instance(pd.DataFrame({"age": ["a"] * 3}), fa.Schema([fa.Attribute("age")]))
    j = journalist_risk(risk_classes(small), inst.table, threshold=0.1 + 0.2)
    assert j.records_above == 0
    assert journalist_risk(risk_classes(small), inst.table, threshold=Fraction(1, 2000)).records_above == 0
    assert journalist_risk(risk_classes(small), inst.table, threshold=Fraction(1, 2001)).records_above == 3


def test_uniqueness_and_individual_risk_by_hand(hand):
    cls = risk_classes(hand)
    u = uniqueness(cls)
    assert (u.sample_uniques, u.sample_share, u.estimates) == (2, Fraction(1, 5), {})
    # Without weights or a population model the table is the population: r = 1/f.
    plain = individual_risk(cls)
    assert plain.risk.tolist() == pytest.approx([1 / 3] * 3 + [1, 1] + [1 / 5] * 5)
    assert plain.expected_reidentifications == pytest.approx(4.0)  # = the classes
    assert plain.global_risk == pytest.approx(0.4)
    # Weights 2: p = 1/2 everywhere; r_1 = ln 2, r_3 = ln 2 − 1/2, r_5 = ln 2 − 7/12.
    ln2 = math.log(2)
    weighted = individual_risk(cls, weights="w", threshold=0.5)
    expected = [ln2 - 0.5] * 3 + [ln2, ln2] + [ln2 - 7 / 12] * 5
    assert weighted.risk.tolist() == pytest.approx(expected, rel=1e-12)
    assert weighted.expected_reidentifications == pytest.approx(10 * ln2 - 53 / 12, rel=1e-12)
    assert weighted.global_risk == pytest.approx((10 * ln2 - 53 / 12) / 10, rel=1e-12)
    assert weighted.records_above == 2  # ln 2 > 1/2
    # A release in another row order reads each record's weight by its id.
    varied = fa.Instance(HAND.assign(w=[2.0, 3.0, 5.0, 7.0, 11.0, 1.5, 2.5, 4.0, 6.0, 9.0]), SCHEMA)
    own = individual_risk(risk_classes(varied), weights="w").risk
    shuffled = release_of(varied)
    shuffled = fa.Release(table=shuffled.table.iloc[::-1], groups=np.zeros(10))
    reread = individual_risk(risk_classes(varied, shuffled), weights="w").risk
    assert reread.loc[own.index].tolist() == pytest.approx(own.tolist(), rel=1e-12)
    assert own.loc[103] == pytest.approx(1 / 6 * math.log(7))  # f = 1, F = 7: (p/q) ln(1/p)
    # The same from a population model N = 2n.
    modelled = individual_risk(cls, population=population_model(10, population_size=20))
    assert modelled.risk.tolist() == pytest.approx(expected, rel=1e-12)
    # sdcMicro's formulas: p shifted by 1e-4, p/(f − q) for f > 2.
    pk = 0.5 - 1e-4
    sdc = individual_risk(cls, weights="w", method="sdcmicro").risk.tolist()
    one = pk / (1 - pk) * math.log(1 / pk)
    assert sdc == pytest.approx([pk / (3 - (1 - pk))] * 3 + [one, one] + [pk / (5 - (1 - pk))] * 5, rel=1e-12)


def test_a_weight_attribute_gives_the_individual_risk_its_weights():
    schema = fa.Schema([*SCHEMA, fa.Attribute.from_spec("w", {"role": "weight"})])
    assert schema["w"].kind == "numeric" and schema.weight == "w" and "w" not in schema.released
    inst = fa.Instance(HAND, schema, name="weighted")
    # The weight is not released: methods leave it out, the verifier allows no such column.
    assert "w" not in inst.table.columns and inst.extra["w"].tolist() == [2.0] * 10
    rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    assert "w" not in rel.table.columns and fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
    # fa.risk reads it without being told: weights 2, p = 1/2, the hand values above.
    ln2 = math.log(2)
    individual = fa.risk(inst, suda_max_size=None).individual
    assert individual.source == "weights w"
    assert individual.risk.tolist() == pytest.approx([ln2 - 0.5] * 3 + [ln2, ln2] + [ln2 - 7 / 12] * 5, rel=1e-12)
    # In the release each record has r by the size f of its class, all weights 2 (p = 1/2):
    # r_2 = (p/q²)(p ln p + q) = 1 − ln 2, and r_3, r_5 as above.
    by_size = {2: 1 - ln2, 3: ln2 - 0.5, 5: ln2 - 7 / 12}
    released = fa.risk(inst, rel, suda_max_size=None).individual
    sizes = rel.table.groupby(["age", "zip"], observed=True)["age"].transform("size")
    assert set(sizes) <= set(by_size)
    assert released.risk.loc[sizes.index].tolist() == pytest.approx([by_size[f] for f in sizes], rel=1e-12)
    # weights=False leaves the weight attribute out: r = 1/f (classes of 3, 1, 1, 5).
    plain = fa.risk(inst, weights=False, suda_max_size=None).individual
    assert plain.source == "none (F = f)" and plain.expected_reidentifications == pytest.approx(4)
    assert plain.risk.tolist() == pytest.approx([1 / 3] * 3 + [1, 1] + [1 / 5] * 5)
    with pytest.raises(InvalidParameterError, match="'weights' parameter of risk"):
        fa.risk(inst, weights=True)


def test_bad_weight_attributes():
    with pytest.raises(fa.SchemaError, match="numeric"):
        fa.Attribute("w", role="weight")
    with pytest.raises(fa.SchemaError, match="At most one weight"):
        fa.Schema([fa.Attribute("a"), fa.Attribute("v", "weight", "numeric"), fa.Attribute("w", "weight", "numeric")])
    schema = fa.Schema([*SCHEMA, fa.Attribute("w", "weight", "numeric")])
    for bad in (0.0, -1.0, "x", float("inf")):
        with pytest.raises(fa.SchemaError, match="finite numbers > 0"):
            fa.Instance(HAND.assign(w=[bad] + [2.0] * 9), schema)
    with pytest.raises(fa.SchemaError, match="Missing values in 'w'"):
        fa.Instance(HAND.assign(w=[None] + [2.0] * 9), schema)
    dropped = fa.Instance(HAND.assign(w=[None] + [2.0] * 9), schema, missing="drop")
    assert dropped.n_rows == 9 and dropped.dropped_rows == [100]


def test_benedetti_franconi_closed_forms_and_integral():
    for p in (1e-6, 0.01, 0.3, 0.5, 0.8, 0.999):
        q = 1 - p
        one = benedetti_franconi([1], [p])[0]
        two = benedetti_franconi([2], [p])[0]
        three = benedetti_franconi([3], [p])[0]
        assert one == pytest.approx(p / q * math.log(1 / p), rel=1e-10)
        assert two == pytest.approx(p / q**2 * (p * math.log(p) + q), rel=1e-7)
        assert three == pytest.approx(p / (2 * q**3) * (q * (3 * q - 2) - 2 * p * p * math.log(p)), rel=1e-6)
    for f in (4, 7, 23, 24, 60, 500):
        for p in (1e-4, 0.05, 0.4, 0.6, 0.95):
            q = 1 - p
            oracle = p * quad(lambda t: (1 - t) ** (f - 1) / (1 - q * t), 0, 1, epsabs=0, epsrel=1e-13,
                              limit=400, points=[1 / f])[0]
            assert benedetti_franconi([f], [p])[0] == pytest.approx(oracle, rel=1e-9), (f, p)
    assert benedetti_franconi([1, 4, 100000], [1.0, 1.0, 1.0]).tolist() == pytest.approx([1, 0.25, 1e-5])


def test_journalist_risk_by_hand(hand):
    # The population: the table plus (old, b) and two (young, a).
    extra = pd.DataFrame({"age": ["old", "young", "young"], "zip": ["b", "a", "a"]}, index=[1, 2, 3])
    pop = pd.concat([HAND[["age", "zip"]], extra], ignore_index=True)
    cls = risk_classes(hand)
    assert population_class_sizes(cls, pop).tolist() == [5, 2, 1, 5]
    j = journalist_risk(cls, pop)
    assert j.highest == 1 and j.records_at_highest == 1
    assert j.witness["class"] == {"age": "old", "zip": "c"}
    assert j.marketer == (Fraction(3, 5) + Fraction(1, 2) + 1 + 1) / 10
    assert j.records_above == 2  # classes (old, b) F = 2 and (old, c) F = 1
    # A release: the two old records' zip generalized to '*': class (old, *) matches the
    # three old records of the population.
    rel = release_of(hand, zip={3: "*", 4: "*"})
    rcls = risk_classes(hand, rel)
    assert sorted(population_class_sizes(rcls, pop).tolist()) == [3, 5, 5]
    jr = journalist_risk(rcls, pop)
    assert jr.highest == Fraction(1, 3)
    assert jr.witness["class"] == {"age": "old", "zip": "*"}
    with pytest.raises(InvalidParameterError, match="must contain"):
        journalist_risk(cls, HAND[["age", "zip"]].iloc[:5])
    with pytest.raises(SchemaError, match="lacks"):
        journalist_risk(cls, HAND[["age"]])
    with pytest.raises(InvalidParameterError):
        journalist_risk(cls, [1, 2])


def test_journalist_risk_refuses_above_the_memory_limit(hand):
    """The population's distinct combinations, and the bit sets over them of generalized
    labels, are checked against the memory limit before they are made."""
    extra = pd.DataFrame({"age": ["old", "young", "young"], "zip": ["b", "a", "a"]})
    pop = pd.concat([HAND[["age", "zip"]], extra], ignore_index=True)
    rcls = risk_classes(hand, release_of(hand, zip={3: "*", 4: "*"}))
    counts = population_counts(pop, hand.schema, rcls.qi)  # under the default limit
    # Counting: 13 rows, 2 quasi-identifiers, 8 · (3 · 2 + 3) = 72 bytes a row: 936 bytes.
    with memory_limit("900B", "risk"):
        with pytest.raises(MemoryLimitError, match=r"combinations of a population table \(13 rows\)"):
            journalist_risk(rcls, pop)
        with pytest.raises(MemoryLimitError, match="population table"):
            fa.risk(hand, release_of(hand, zip={3: "*", 4: "*"}), population=pop, suda_max_size=None)
    # The bit sets: age's 3 labels (young, old, mid) and zip's 2 (a, *) over the 4
    # distinct combinations (young a, old b, old c, mid a), a byte each before packing
    # and twice one 64-bit word packed: 5 · (4 + 16) = 100 bytes.
    with memory_limit("99B", "risk"):
        with pytest.raises(MemoryLimitError, match="bit sets of 5 labels .* 4 distinct"):
            population_class_sizes(rcls, counts)
    with memory_limit("100B", "risk"):
        assert sorted(population_class_sizes(rcls, counts).tolist()) == [3, 5, 5]
    with memory_limit("936B", "risk"):
        assert journalist_risk(rcls, pop).highest == Fraction(1, 3)


def test_merging_population_counts_by_hand_and_within_the_memory_limit():
    """Two partitions' counts merged: equal combinations' records summed. Above the memory
    limit the merge is refused before the two are concatenated."""
    a = PopulationCounts(("age", "zip"), (np.array([1.0, 2.0]), np.array([0, 1])), np.array([2, 1]))
    b = PopulationCounts(("age", "zip"), (np.array([2.0, 3.0]), np.array([1, 2])), np.array([4, 1]))
    merged = merge_population_counts(a, b)
    found = {(float(x), int(z)): int(w) for x, z, w in zip(*merged.values, merged.weights)}
    assert found == {(1.0, 0): 2, (2.0, 1): 5, (3.0, 2): 1} and merged.size == 8
    # 50,000 combinations a side: 100,000 · 8 · (2 · 2 + 3) = 5.6 MB to merge; the
    # concatenated values and weights alone would take 100,000 · 8 · 3 = 2.4 MB.
    n = 50_000
    big = PopulationCounts(("age", "zip"), (np.arange(n, dtype=float), np.arange(n)), np.ones(n, dtype=np.int64))
    tracemalloc.start()
    try:
        with memory_limit("5MB", "risk"), pytest.raises(MemoryLimitError, match=r"\(100000 rows\)"):
            merge_population_counts(big, big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_journalist_population_sizes_against_brute_force():
    inst = synthetic_population(150, n_qi=3, seed=3)
    pop = synthetic_population(600, n_qi=3, seed=3)  # a table is the prefix of any longer one
    rel = fa.anonymize(inst, [fa.KAnonymity(4)], method="mondrian", seed=0)
    for release in (None, rel):
        cls = risk_classes(inst, release)
        fast = population_class_sizes(cls, pop.table)
        slow = np.zeros(cls.n_classes, dtype=np.int64)
        match = np.ones((cls.n_classes, pop.n_rows), dtype=bool)
        for name in cls.qi:
            attr = inst.schema[name]
            codes, labels = cls.codes[name]
            covers = label_covers(attr, labels)
            values = pop.codes(name)
            for g in range(cls.n_classes):
                label = np.full(pop.n_rows, codes[cls.first_row[g]])
                match[g] &= covers.contains(label, values)
        slow = match.sum(axis=1)
        assert fast.tolist() == slow.tolist()
        assert (fast >= cls.sizes).all()


@pytest.mark.parametrize("written", ["inf", "1e400", "-1e400"])
def test_a_population_with_an_infinite_number_is_refused(written):
    """A numeric quasi-identifier's population column holding inf (or a number beyond
    float64, read as inf) is refused by name: no record of the table holds one, and the
    population was counted with it (pandas 2 refused "1e400" as not numeric)."""
    inst = fa.Instance(pd.DataFrame({"age": [30, 31, 40, 41], "zip": ["a", "a", "b", "b"]}),
                       fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("zip")]))
    cls = risk_classes(inst, fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0))
    population = pd.DataFrame({"age": ["30", written, "40"], "zip": ["a", "a", "b"]})
    value = repr(float(written))  # 'inf' or '-inf'
    with pytest.raises(SchemaError,
                       match=rf"population column 'age' holds a non-finite number \({value}\);"):
        population_class_sizes(cls, population)


def test_suppressed_block_is_one_class(hand):
    # Records 3 and 4 suppressed as a whole: one class of 2, as the verifier counts it.
    rel = release_of(hand, age={3: "*", 4: "*"}, zip={3: "*", 4: "*"})
    cls = risk_classes(hand, rel)
    assert (cls.n_classes, cls.n_suppressed) == (3, 2)
    s = sample_risk(cls)
    assert s.highest == Fraction(1, 2) and s.n_suppressed == 2
    assert uniqueness(cls).sample_uniques == 0
    report = fa.verify(hand, rel, [fa.KAnonymity(2)])
    assert report.passed and report.n_classes == cls.n_classes
    assert report["2-anonymity"].achieved == 2 == int(cls.sizes.min())
    # A block of one suppressed record is a sample unique, like (old, c).
    one = risk_classes(hand, release_of(hand, age={3: "*"}, zip={3: "*"}))
    assert (one.n_suppressed, uniqueness(one).sample_uniques) == (1, 2)
    assert sample_risk(one).highest == 1
    # Partly generalized records are no suppressed block.
    part = risk_classes(hand, release_of(hand, zip={3: "*", 4: "*"}))
    assert part.n_suppressed == 0


def test_disclosure_by_hand(hand):
    d = attribute_disclosure(risk_classes(hand), "disease")
    # Shares in the table: flu 3/5, hiv 1/5, cold 1/5. Class (old, c) holds only hiv:
    # ratio 5, gain 4 — above −ln(1/5), so enhanced β-likeness fails there.
    assert d.beta == 4
    assert d.beta_witness["class"] == {"age": "old", "zip": "c"} and d.beta_witness["value"] == "hiv"
    assert d.delta == math.inf and d.delta_ratio == 0
    assert not d.enhanced and d.enhanced_witness["value"] == "hiv"
    # Two classes A = (flu, flu, hiv), B = (flu, hiv, hiv): ratios 4/3 and 2/3.
    df = pd.DataFrame({"g": list("AAABBB"), "s": ["flu", "flu", "hiv", "flu", "hiv", "hiv"]})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("g"), fa.Attribute("s", role="sensitive")]))
    d2 = attribute_disclosure(risk_classes(inst), "s")
    assert d2.beta == Fraction(1, 3)
    assert d2.delta == pytest.approx(math.log(3 / 2)) and d2.delta_ratio == Fraction(2, 3)
    assert d2.enhanced and d2.enhanced_witness is None
    # One class: the table's own distribution, δ = 0, β = 0.
    one = release_of(hand, age={i: "*" for i in range(10)}, zip={i: "*" for i in range(10)})
    d3 = attribute_disclosure(risk_classes(hand, one), "disease")
    assert (d3.delta, d3.beta, d3.enhanced) == (0.0, 0, True)
    with pytest.raises(InvalidParameterError, match="quasi-identifier"):
        attribute_disclosure(risk_classes(hand), "age")


# ------------------------------------------------------------------------- SUDA
def test_suda_sdcmicro_example():
    df = pd.DataFrame({"a": ["2", "1", "1"], "b": ["0", "3", "0"], "c": ["0", "6", "0"]})
    inst = fa.Instance(df, fa.Schema([fa.Attribute(x) for x in "abc"]))
    s = suda(risk_classes(inst), max_size=3, keep_msus=True)
    assert sorted(s.msus) == [(0, ("a",)), (1, ("b",)), (1, ("c",)), (2, ("a", "b")), (2, ("a", "c"))]
    assert s.contributions == {"a": 50.0, "b": 37.5, "c": 37.5}
    assert s.scores.tolist() == [2, 4, 2]  # s(1) = 2, s(2) = 1 with M = 3
    assert s.by_size == {1: 3, 2: 2, 3: 0} and s.records_with_msu == 3
    assert [suda_weight(k, 5, 3) for k in (1, 2, 3)] == [4 * 3 * 2, 3 * 2, 2]


def test_dis_suda_by_hand():
    # A B: (a,x) (a,y) (b,y) (b,y) (c,z). Uniques on (A, B): records 0, 1, 4 (U = 3); one
    # pair, records 2 and 3 (P = 2). MSUs: {B} of 0 (x), {A} and {B} of 4 (c, z), {A, B}
    # of 1 (a and y are shared). M = m = 2: s(1) = 2 - 1 = 1, s(2) = 1; scores 1, 1, 0, 0, 2.
    df = pd.DataFrame({"A": list("aabbc"), "B": list("xyyyz")})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("A"), fa.Attribute("B")]))
    s = suda(risk_classes(inst), max_size=2, sampling_fraction=Fraction(1, 10))
    assert s.scores.tolist() == [1, 1, 0, 0, 2]
    # θ = Uπ / (Uπ + P(1 − π)) = 0.3 / (0.3 + 1.8) = 1/7; U/θ − U = 21 − 3 = 18 false matches
    assert (s.dis.uniques, s.dis.pair_records) == (3, 2)
    assert s.dis.probability == pytest.approx(1 / 7)
    q = 1 + (8 - 2) / 20  # 1.3
    spread = 1 + 1 + 2**-q  # Σ s^(−Q) over the records with an MSU
    by_hand = [1 / (1 + 18 / spread), 1 / (1 + 18 / spread), 0, 0, 1 / (1 + 18 / (2**q * spread))]
    assert s.dis.scores.tolist() == pytest.approx(by_hand)
    # Without pairs every match of a unique is right: θ = 1 and each score is 1.
    alone = fa.Instance(df.iloc[[0, 1, 4]], inst.schema)
    d = suda(risk_classes(alone), max_size=2, sampling_fraction="1/2").dis
    assert d.probability == 1 and d.scores.tolist() == [1, 1, 1]
    assert suda(risk_classes(inst), max_size=2).dis is None  # no sampling fraction, no DIS
    # The public function gives the same from the scores and the class sizes on (A, B).
    direct = dis_suda(s.scores, [1, 1, 2, 2, 1], 2, "1/10")
    assert (direct.uniques, direct.pair_records) == (3, 2) and direct.probability == pytest.approx(1 / 7)
    assert direct.scores.tolist() == pytest.approx(by_hand) and direct.scores.index.equals(s.scores.index)
    with pytest.raises(InvalidParameterError, match="'sampling_fraction' parameter of suda"):
        suda(risk_classes(inst), max_size=2, sampling_fraction=0)
    rep = fa.risk(inst, sampling_fraction="1/10", suda_max_size=2, sensitive=())
    assert rep.to_dict()["suda"]["dis"]["expected_correct_matches"] == pytest.approx(sum(by_hand))
    assert "DIS-SUDA" in str(rep)


@pytest.mark.parametrize(("n_qi", "max_size"), [(3, 3), (5, 2), (5, 5), (6, 3)])
def test_suda_memory_bounds_what_suda_allocates(n_qi, max_size):
    """The estimate the Dask client checks before SUDA, against the peak tracemalloc
    measures (numpy reports its arrays to it): above it, and not by more than 3 times."""
    import tracemalloc

    cls = risk_classes(synthetic_population(50_000, n_qi=n_qi, seed=1))
    need = suda_memory(cls.n_records, [cls.codes[a][0].dtype.itemsize for a in cls.qi], max_size)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        suda(cls, max_size=max_size, sampling_fraction="1/10")
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert peak <= need <= 3 * peak, (peak, need)


def brute_force_msus(rows: list[tuple], max_size: int) -> set:
    n, m = len(rows), len(rows[0])

    def unique(r, subset):
        return sum(all(rows[o][a] == rows[r][a] for a in subset) for o in range(n)) == 1

    out = set()
    for r in range(n):
        for k in range(1, min(max_size, m) + 1):
            for subset in itertools.combinations(range(m), k):
                if unique(r, subset) and not any(
                    unique(r, sub) for j in range(1, k) for sub in itertools.combinations(subset, j)
                ):
                    out.add((r, subset))
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda m: st.tuples(
            st.lists(st.tuples(*[st.integers(0, 2)] * m), min_size=1, max_size=12),
            st.integers(1, m + 1),
        )
    )
)
def test_msus_match_brute_force(case):
    rows, max_size = case
    m = len(rows[0])
    codes = []
    for a in range(m):
        column = np.array([r[a] for r in rows])
        c, u = pd.factorize(column)
        codes.append((c.astype(np.int32), len(u)))
    found = {(int(r), subset) for subset, rs in minimal_sample_uniques(codes, max_size) for r in rs}
    assert found == brute_force_msus(rows, max_size)


def test_suda_on_a_table_and_its_release(hand):
    s = suda(risk_classes(hand), max_size=2)
    # (old, b) is unique on zip alone ({zip = b}); (old, c) too; age is unique for no record.
    assert s.by_size[1] == 2 and s.records_with_msu == 2
    assert s.contributions["zip"] == 100.0
    with pytest.raises(InvalidParameterError):
        suda(risk_classes(hand), max_size=0)
    with pytest.raises(InvalidParameterError):
        suda(risk_classes(hand), attributes=["disease"])


# ------------------------------------------------------------ population models
def test_zayatz_by_hand():
    # Sizes {1: 2 classes, 2: 1 class}, n = 4, N = 8: h_1 = 1/2, h_2 = 4/7,
    # P(F = 1 | f = 1) = 7/11, Û = 2 · 7/11 / (1/2) = 28/11.
    pm = PopulationModel(4, 8, Fraction(1, 2))
    est = zayatz([1, 2], [2, 1], pm)
    assert est.fitted and est.uniques == pytest.approx(28 / 11)
    assert est.parameters["conditional"] == pytest.approx(7 / 11)
    assert est.share == pytest.approx(28 / 11 / 8)


def test_pitman_likelihood_is_the_sampling_formula():
    # Partition of 6 records into blocks 3, 2, 1: p = Π_{i<3}(θ+iα) / (θ+1)_5 · Π (1−α)_{n_j−1}.
    alpha, theta = 0.3, 2.5
    sizes, counts = np.array([1, 2, 3]), np.array([1, 1, 1])
    rising = np.prod([theta + i for i in range(1, 6)])
    eppf = (theta + alpha) * (theta + 2 * alpha) / rising * ((1 - alpha) * (2 - alpha)) * (1 - alpha)
    assert _pitman_loglik(alpha, theta, sizes, counts, 3, 6) == pytest.approx(math.log(eppf), rel=1e-12)


def test_estimators_say_when_they_fail():
    pm = PopulationModel(5, 50, Fraction(1, 10))
    allu = pitman([1], [5], pm)
    assert not allu.fitted and allu.uniques is None and "every record" in allu.detail
    nosize2 = snb([1, 3], [2, 1], pm)
    assert not nosize2.fitted and nosize2.uniques is None and "size 2" in nosize2.detail
    # Dankar at π ≤ 0.1 falls back to Zayatz when Pitman cannot be fitted.
    d = dankar([1], [5], pm)
    assert d.fitted and d.parameters["chosen"] == "zayatz" and "Zayatz" in d.detail
    # No sample unique: no population unique, said as such.
    none = dankar([2, 3], [1, 1], pm)
    assert none.fitted and none.uniques == 0 and "no sample unique" in none.detail
    assert not snb([2, 3], [1, 1], pm).fitted
    with pytest.raises(InvalidParameterError):
        zayatz([1], [3], pm)  # 3 records for a sample of 5


def _pitman_population(n_records: int, alpha: float, theta: float, rng) -> np.ndarray:
    """Records of a Pitman-Yor random measure, by stick breaking (truncated at a
    remaining mass below 1e-7)."""
    sticks = 2_000_000
    v = rng.beta(1 - alpha, theta + alpha * np.arange(1, sticks + 1))
    weights = v * np.concatenate([[1.0], np.cumprod(1 - v)[:-1]])
    weights /= weights.sum()
    return rng.choice(sticks, n_records, p=weights)


def _snb_population(n_classes: int, alpha: float, beta: float, rng) -> np.ndarray:
    return np.repeat(np.arange(n_classes), 1 + rng.negative_binomial(alpha, beta, n_classes))


def _estimate(labels: np.ndarray, pi: float, rng) -> tuple[int, dict]:
    _, population_sizes = np.unique(labels, return_counts=True)
    truth = int((population_sizes == 1).sum())
    N = len(labels)
    n = int(round(pi * N))
    _, sample_sizes = np.unique(labels[rng.choice(N, n, replace=False)], return_counts=True)
    sizes, counts = np.unique(sample_sizes, return_counts=True)
    pm = PopulationModel(n, N, Fraction(n, N))
    estimates = {f.__name__: f(sizes, counts, pm) for f in (pitman, zayatz, snb)}
    estimates["dankar"] = dankar(sizes, counts, pm, estimates=estimates)
    return truth, estimates


def _errors(truth: int, estimates: dict) -> dict:
    return {name: (None if not e.fitted else round((e.uniques - truth) / truth, 4)) for name, e in estimates.items()}


@pytest.fixture(scope="module")
def pitman_labels():
    return _pitman_population(300_000, 0.5, 300.0, np.random.default_rng(11))


@pytest.mark.parametrize("pi", [0.01, 0.05, 0.2])
def test_pitman_on_a_pitman_population(pi, pitman_labels):
    """A population drawn from Pitman's model (α = 1/2, θ = 300): Pitman's estimate is
    within the spread of one sample (about ±20 % at π = 1 %, ±12 % at π = 5 % over
    seeds)."""
    truth, est = _estimate(pitman_labels, pi, np.random.default_rng(11))
    errors = _errors(truth, est)
    message = f"π = {pi}: true population uniques {truth}; relative error per estimator {errors}"
    assert est["pitman"].fitted, message
    assert abs(errors["pitman"]) < (0.25 if pi <= 0.01 else 0.15 if pi <= 0.05 else 0.1), message
    assert est["pitman"].parameters["alpha"] == pytest.approx(0.5, abs=0.08), message
    if pi <= 0.1:
        assert est["dankar"].parameters["chosen"] == "pitman", message


@pytest.mark.parametrize("pi", [0.2, 0.5])
def test_snb_on_an_snb_population(pi):
    rng = np.random.default_rng(12)
    labels = _snb_population(100_000, 0.8, 0.3, rng)
    truth, est = _estimate(labels, pi, rng)
    errors = _errors(truth, est)
    message = f"π = {pi}: true population uniques {truth}; relative error per estimator {errors}"
    assert est["snb"].fitted and abs(errors["snb"]) < 0.1, message
    assert est["dankar"].fitted and abs(errors["dankar"]) < 0.2, message


@pytest.mark.parametrize("pi", [0.05, 0.1, 0.3, 0.5])
def test_estimators_on_a_synthetic_population(pi):
    """A population of synthetic records (Zipf-distributed quasi-identifiers): no model
    is exact; Dankar's rule stays within a factor 2 of the truth."""
    rng = np.random.default_rng(13)
    inst = synthetic_population(200_000, n_qi=3, seed=13)
    labels = risk_classes(inst).ids
    truth, est = _estimate(labels, pi, rng)
    errors = _errors(truth, est)
    message = f"π = {pi}: true population uniques {truth}; relative error per estimator {errors}"
    assert est["dankar"].fitted, message
    assert 0.5 < est["dankar"].uniques / truth < 2.0, message
    assert all(e.uniques is None or e.uniques > 0 for e in est.values()), message


# ------------------------------------------------------------------- the report
def test_risk_report_on_instance_and_release(hand):
    rep = risk(hand, sampling_fraction=Fraction(1, 10), weights="w", suda_max_size=2)
    assert rep.population.population_size == 100
    assert rep.sample.highest == 1 and rep.uniqueness.sample_uniques == 2
    assert set(rep.uniqueness.estimates) == {"pitman", "zayatz", "snb", "dankar"}
    assert rep.suda.max_size == 2 and "disease" in rep.disclosure
    document = json.loads(json.dumps(rep.to_dict()))
    assert document["sample"]["prosecutor_average"] == {"value": 0.4, "exact": "2/5"}
    assert document["sample"]["records_above_threshold"] == 5
    text = str(rep)
    assert "prosecutor risk, highest" in text and "population uniques, dankar" in text
    rel = release_of(hand, age={3: "*", 4: "*"}, zip={3: "*", 4: "*"})
    rrep = fa.risk(hand, rel, population=HAND[["age", "zip"]], suda_max_size=None)
    assert rrep.released and rrep.suda is None
    # The suppressed block matches every population record: (young, a) is the riskiest.
    assert rrep.sample.highest == Fraction(1, 2) and rrep.journalist.highest == Fraction(1, 3)


def test_release_risk_matches_the_verifier():
    inst = synthetic_population(2000, n_qi=4, seed=5)
    rel = fa.anonymize(inst, [fa.KAnonymity(5)], method="mondrian", seed=0)
    report = fa.verify(inst, rel, [fa.KAnonymity(5)])
    rep = fa.risk(inst, rel, population_size=20000)
    assert rep.sample.n_classes == report.n_classes
    assert rep.sample.highest == Fraction(1, report["5-anonymity"].achieved) <= Fraction(1, 5)
    assert rep.sample.records_above == 0 and rep.uniqueness.sample_uniques == 0
    # The verifier's report carries the figures class sizes give, from the same classes.
    assert report.risk == {
        "prosecutor_highest": {"value": float(rep.sample.highest), "exact": str(rep.sample.highest)},
        "records_at_highest": rep.sample.records_at_highest,
        "prosecutor_average": {"value": float(rep.sample.average), "exact": str(rep.sample.average)},
        "sample_uniques": 0,
        "threshold": {"value": 0.2, "exact": "1/5"},
        "records_above_threshold": 0,
    }
    assert "risk: prosecutor highest" in str(report) and report.to_dict()["risk"] == report.risk


def test_bad_input(hand):
    with pytest.raises(InvalidParameterError, match="threshold"):
        risk(hand, threshold=1.5)
    with pytest.raises(InvalidParameterError, match="not both"):
        risk(hand, sampling_fraction=0.1, population_size=100)
    with pytest.raises(InvalidParameterError, match="population_size"):
        risk(hand, population_size=5)
    with pytest.raises(InvalidParameterError, match="sampling_fraction"):
        risk(hand, sampling_fraction=0)
    with pytest.raises(SchemaError, match="weight column"):
        risk(hand, weights="nope")
    light = HAND.assign(w=0.5)
    inst = fa.Instance(light, SCHEMA)
    with pytest.raises(InvalidParameterError, match="less than"):
        risk(inst, weights="w")
    with pytest.raises(SchemaError, match="not finite"):
        risk(fa.Instance(HAND.assign(w=-1.0), SCHEMA), weights="w")
    with pytest.raises(InvalidParameterError, match="Release"):
        risk(hand, hand.table)
    with pytest.raises(InvalidParameterError, match="Instance"):
        risk(hand.table)
    with pytest.raises(InvalidParameterError, match="models"):
        risk(hand, models=["nope"])
    with pytest.raises(SchemaError, match="sensitive"):
        risk(hand, sensitive=["nope"])
    with pytest.raises(InvalidParameterError):
        individual_risk(risk_classes(hand), method="nope")
    # Classes of another instance (a copy of the same table) or not classes at all.
    other = fa.Instance(HAND, SCHEMA, name="other")
    with pytest.raises(InvalidParameterError, match="'classes' parameter of risk.*'other'"):
        risk(hand, classes=risk_classes(other))
    with pytest.raises(InvalidParameterError, match="'classes' parameter of risk.*DataFrame"):
        risk(hand, classes=hand.table)
    assert risk(hand, classes=risk_classes(hand), suda_max_size=None).sample.n_records == 10
    missing = release_of(hand)
    with pytest.raises(SchemaError, match="lacks"):
        risk(hand, fa.Release(table=missing.table.drop(columns="zip"), groups=np.zeros(10)))


def test_the_population_model_is_named_in_fa_risk(hand):
    """fa.risk takes sampling_fraction and population_size as keyword-only parameters.
    N = 20 for the 10 records (π = 1/2) gives p = f/F = 1/2 in every class, so the
    individual risks are those of weights 2: r_1 = ln 2, r_3 = ln 2 − 1/2,
    r_5 = ln 2 − 7/12, whose sum over the records is 10 ln 2 − 53/12."""
    import inspect

    parameters = inspect.signature(fa.risk).parameters
    for name in ("sampling_fraction", "population_size"):
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY and parameters[name].default is None
    ln2 = math.log(2)
    for model in ({"population_size": 20}, {"sampling_fraction": "1/2"}, {"sampling_fraction": Fraction(1, 2)}):
        # No estimators: what is checked here is the model they would be given.
        rep = fa.risk(hand, weights=False, suda_max_size=None, models=(), **model)
        assert rep.population == PopulationModel(10, 20, Fraction(1, 2)), model
        assert rep.individual.expected_reidentifications == pytest.approx(10 * ln2 - 53 / 12, rel=1e-12)
        assert rep.individual.highest == pytest.approx(ln2, rel=1e-12)
    assert fa.risk(hand, suda_max_size=None).population is None
    with pytest.raises(InvalidParameterError, match="not both"):
        fa.risk(hand, sampling_fraction="1/2", population_size=20)
    # A misspelled keyword names itself and the right spelling, on either engine, before any work.
    for engine in ("local", "dask"):
        with pytest.raises(InvalidParameterError,
                           match=r"risk has no option\(s\) \['sampling_fracton'\].*'sampling_fraction'"):
            fa.risk(hand, sampling_fracton="1/2", engine=engine)
    with pytest.raises(TypeError):
        fa.risk(hand, None, "1/2")  # keyword-only


def test_figures_and_witnesses_follow_the_record_ids_not_the_row_order():
    inst = synthetic_population(300, n_qi=3, seed=4)
    release = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    rows = np.arange(inst.n_rows)[::-1]  # the same release written from its last row
    written = fa.Release(release.table.iloc[rows], groups=release.groups[rows], provenance={"method": "hand"})
    report, in_order = risk(inst, written), risk(inst, release)
    assert {k: v for k, v in report.to_dict().items() if k != "seconds"} == \
        {k: v for k, v in in_order.to_dict().items() if k != "seconds"}
    # The witness, worked out with pandas: classes keyed by each label's rank of first
    # appearance in record-id order, column by column; the smallest key among the
    # smallest classes; its records in id order.
    table = release.table.sort_index()
    keys = pd.DataFrame({c: pd.factorize(table[c].astype(str))[0] for c in inst.schema.qi}, index=table.index)
    sizes = keys.groupby(list(inst.schema.qi)).size()
    smallest = min(key for key, size in sizes.items() if size == sizes.min())
    members = keys.index[(keys.to_numpy() == np.array(smallest)).all(axis=1)].tolist()
    assert report.sample.witness["records"] == members[: len(report.sample.witness["records"])]
    assert report.sample.witness["class"] == {c: str(table.loc[members[0], c]) for c in inst.schema.qi}


def test_suda_and_dis_suda_do_not_depend_on_the_row_order():
    # The scores are summed exactly rounded (fsum): the same table with its rows
    # shuffled gives the same DIS-SUDA figures to the last bit.
    inst = synthetic_population(400, n_qi=4, seed=3)
    rows = np.random.default_rng(0).permutation(inst.n_rows)
    shuffled = fa.Instance(inst.table.iloc[rows], inst.schema, name=inst.name)
    a, b = (risk(x, sampling_fraction="1/10", suda_max_size=3).suda for x in (inst, shuffled))
    assert a.dis.probability is not None and a.n_msus > 0
    assert a.to_dict() == b.to_dict()
    assert a.dis.scores.sort_index().tolist() == b.dis.scores.sort_index().tolist()
    assert math.fsum(a.dis.scores) == a.to_dict()["dis"]["expected_correct_matches"]


def test_population_sizes_of_an_id_like_quasi_identifier_build_no_labels_by_values_table():
    """10,000 IDs, each twice in the sample and four times in the population: every
    class meets 4 population records. The labels were matched through a 10,000 x 10,000
    boolean table (100 MB); single-value labels are read from their positions now."""
    import tracemalloc

    n = 10_000
    ids = [f"P{i:05d}" for i in range(n)]
    inst = fa.Instance(pd.DataFrame({"pid": ids * 2}),
                       fa.Schema([fa.Attribute("pid", hierarchy=fa.Hierarchy.flat(ids))]))
    cls = risk_classes(inst)
    tracemalloc.start()
    try:
        sizes = population_class_sizes(cls, pd.DataFrame({"pid": ids * 4}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(sizes) == n and set(sizes.tolist()) == {4}
    assert peak < n * n // 10


def test_zayatz_divides_by_the_models_own_sampling_fraction():
    """7 records, all sample uniques, π = 0.3: N = round(7/0.3) = 23, so under the model
    every class is a population unique and Û = N = 23 (by hand). Dividing by π itself
    gave 23.33 > N, refused as outside [0, N], and Dankar's rule had no estimate."""
    pm = population_model(7, sampling_fraction=0.3)
    assert pm.population_size == 23
    est = zayatz([1], [7], pm)
    assert est.fitted and est.uniques == pytest.approx(23)
    assert dankar([1], [7], pm).uniques == pytest.approx(23)


@pytest.mark.parametrize("options", [{"population_size": 2**63}, {"sampling_fraction": 1e-300}])
def test_a_population_beyond_the_models_arithmetic_is_refused(options):
    """N = 2**63 overflowed scipy's hypergeometric; π = 1e-300 gave an N np.log could not take."""
    with pytest.raises(InvalidParameterError, match="1e\\+15"):
        population_model(7, **options)


def test_pitman_finds_a_maximum_at_alpha_zero():
    """Sizes {1: 8, 2: 1, 3: 1}: the profile likelihood falls as α grows, so the maximum
    is Ewens's (α = 0), θ the root of Σ_{i<13} θ/(θ+i) = 10, found here by bisection,
    and Û = N θ / (θ + N − 1) (the rising factorials at α = 0). The log-gamma form of
    Σ ln(θ + iα) lost 1e-8 to cancellation at α = 2e-6 and the fit stopped there."""
    lo, hi = 1.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(mid / (mid + i) for i in range(13)) < 10 else (lo, mid)
    theta = (lo + hi) / 2
    est = pitman([1, 2, 3], [8, 1, 1], population_model(13, sampling_fraction="1/10"))
    assert est.parameters["alpha"] < 1e-9
    assert est.parameters["theta"] == pytest.approx(theta, rel=1e-7)
    assert est.uniques == pytest.approx(130 * theta / (theta + 129), rel=1e-8)
    # the sum at a small α, term by term, as the sampling formula writes it
    direct = (sum(math.log(18.02 + i * 2e-6) for i in range(1, 10))
              - sum(math.log(18.02 + i) for i in range(1, 13))
              + math.log(2 - 2e-6 - 1) + math.log(1 - 2e-6) + math.log(2 - 2e-6))
    sizes, counts = np.array([1, 2, 3]), np.array([8, 1, 1])
    assert _pitman_loglik(2e-6, 18.02, sizes, counts, 10, 13) == pytest.approx(direct, abs=1e-12)


def test_expected_reidentifications_do_not_depend_on_the_record_id_type():
    """The classes are summed in record-id order, which differs for int and text ids:
    the last bits of ER did (4.707816474254869 against ...8685); now an exact sum."""
    a, b = list("240521355510"), list("111001001010")
    schema = fa.Schema([fa.Attribute("a"), fa.Attribute("b")])
    values = []
    for ids in (range(1, 13), [str(i) for i in range(1, 13)]):
        inst = fa.Instance(pd.DataFrame({"a": a, "b": b}, index=list(ids)), schema)
        model = population_model(12, sampling_fraction="1/3")
        found = individual_risk(risk_classes(inst), population=model)
        values.append(found.expected_reidentifications)
    assert values[0] == values[1]


def test_suppressed_records_of_each_protected_value_are_counted_as_suppressed():
    """The protected attribute is released unchanged, so records suppressed on every
    other quasi-identifier keep it: they form one block per protected value, and the
    report said n_suppressed = 0 (it asked for '*' on the protected attribute too).
    By hand: 3 records of 'a' and 2 of 'b' suppressed, in two classes of 3 and 2."""
    table = pd.DataFrame({"zip": ["1", "1", "2", "3", "4", "5", "6"],
                          "race": ["a", "a", "a", "a", "a", "b", "b"]})
    inst = fa.Instance(table, fa.Schema([fa.Attribute("zip"),
                                         fa.Attribute("race", role="protected", protected=["b"])]))
    released = pd.DataFrame({"zip": ["1", "1", "*", "*", "*", "*", "*"], "race": table["race"]})
    classes = risk_classes(inst, fa.Release(released, groups=[0, 0, 1, 1, 1, 2, 2]))
    assert classes.n_suppressed == 5
    assert sorted(classes.sizes[classes.suppressed_classes].tolist()) == [2, 3]
    release = fa.Release(released, groups=[0, 0, 1, 1, 1, 2, 2])
    assert "suppressed: 5 records" in str(risk(inst, release))
    pytest.importorskip("dask.dataframe")
    on_dask = fa.risk(inst, fa.Release(released, groups=[0, 0, 1, 1, 1, 2, 2]), engine="dask")
    assert on_dask.to_dict()["sample"]["n_suppressed"] == 5


def test_pitman_keeps_an_inner_maximum_that_beats_alpha_zero_by_little():
    """An Ewens-shaped table of about 288,000 records (θ = 3,000) with 131 more sample
    uniques: the maximum lies at α = 3.9e-4, above α = 0 by 1.5e-3 in a log-likelihood
    of 2.4e6. Ewens's fit replaced it when the margin for the sums' rounding was 1e-9
    of the log-likelihood (2.4e-3); the sums' error is about 1e-9. Each fit is scored
    here by Pitman's sampling formula summed term by term (math.fsum)."""
    from scipy import special

    n0, theta = 300_000, 3000
    j = np.arange(1, n0 + 1)
    log_c = (np.log(theta) - np.log(j) + special.gammaln(n0 + 1) - special.gammaln(n0 - j + 1)
             + special.gammaln(theta + n0 - j) - special.gammaln(theta + n0))
    c = np.floor(np.exp(log_c) + 0.5).astype(int)
    c[0] += 131
    sizes, counts = j[c > 0], c[c > 0]
    n, J = int((sizes * counts).sum()), int(counts.sum())

    def loglik(a, t):
        terms = [math.log(t + i * a) for i in range(1, J)] + [-math.log(t + i) for i in range(1, n)]
        terms += [int(cc) * math.log(m - a)
                  for s, cc in zip(sizes, counts) for m in range(1, int(s))]
        return math.fsum(terms)

    est = pitman(sizes.tolist(), counts.tolist(), population_model(n, sampling_fraction=0.01))
    alpha, found = est.parameters["alpha"], est.parameters["theta"]
    lo, hi = 1.0, 1e6
    for _ in range(200):  # Ewens's θ by bisection: Σ_{i<n} θ/(θ+i) = J
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if float(np.sum(mid / (mid + np.arange(n)))) < J else (lo, mid)
    ewens = math.sqrt(lo * hi)
    assert alpha > 1e-4
    assert loglik(alpha, found) > loglik(0.0, ewens) + 1e-3
