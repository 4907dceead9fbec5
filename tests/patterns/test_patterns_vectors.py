"""The paper's worked examples and the test vectors V1-V9 of docs/papers.md (Hajian et al.)
with their exact numbers, each sanitized set re-checked by the independent verifier."""

from fractions import Fraction as F

import pytest

from fairanon import patterns as fp
from fairanon.patterns.detect import Finding, explanation
from fairanon.patterns.measures import Contingency, contingency, delta, measure_value
from fairanon.patterns.patternset import Workspace

ROLES_F = fp.Roles({"f"}, "C")


def _ps(cells, roles, **kw):
    """A pattern set mined (min count 1) from a database given by its cell counts."""
    return fp.PatternSet.from_db(fp.TransactionDB.from_counts(cells), 1, roles, backend="apriori", **kw)


def _verify(ps, measure, alpha, **kw):
    return fp.verify_patterns(ps.published(), roles=ps.roles, empty_support=ps.empty_support, measure=measure,
                              alpha=alpha, support_of=ps.support, **kw)


def _slift(ps, pattern):
    return measure_value("slift", contingency(ps.support, frozenset(pattern), ps.roles))


# --------------------------------------------------------------- §3.2.1: Examples 1 and 2
def test_examples_1_and_2_inference_channel_and_its_blocking():
    """Example 1: {vet, yes} (41) and {vet, salary>15000, yes} (40) are 8-anonymous, but
    their difference 41 − 40 = 1 < 8 reveals {vet, ¬(salary>15000), yes}. Example 2:
    adding 8 to {vet, yes} and its subsets makes that pattern's support 49 − 40 = 9 >= 8."""
    ps = _ps({("v", "h", "y"): 40, ("v", "y"): 1, ("v", "C"): 9}, fp.Roles({"f"}, "C"))
    assert (ps.support({"v", "y"}), ps.support({"v", "h", "y"})) == (41, 40)
    assert any(ch.lower == {"v", "y"} and ch.upper == {"v", "h", "y"} and ch.support == 1
               for ch in fp.find_channels(ps, 8))
    blocked = ps.bump({"v", "y"}, 8)
    assert blocked.support({"v", "y"}) - blocked.support({"v", "h", "y"}) == 9
    assert not fp.find_channels(blocked, 8)
    for patterns, passed in ((ps, False), (blocked, True)):
        assert fp.verify_patterns(patterns.published(), roles=patterns.roles, empty_support=patterns.empty_support,
                                  k=8, support_of=patterns.support).passed is passed


# --------------------------------------------------------------- §1.5 and §2.2
EXAMPLE3 = Contingency(a1=20, n1=34, a2=19, n2=47, sB=81, sBC=39)


def test_example3_measure_values():
    expected = {"slift": 1.4551, "elift": 1.2217, "slift_d": 0.1840, "elift_d": 0.1068,
                "slift_c": 0.6912, "elift_c": 0.7941, "olift": 2.1053}
    for measure, value in expected.items():
        assert round(float(measure_value(measure, EXAMPLE3)), 4) == value
    assert measure_value("slift", EXAMPLE3) == F(470, 323)


@pytest.mark.parametrize(
    "measure, alpha, before, rhs, expected_delta, after, after_minus_one",
    [
        ("slift", "1.25", 1.4551, 5.5789, 6, 1.2368, 1.2686),
        ("elift", "1.2", 1.2217, 1.3846, 2, 1.1908, 1.2059),
        ("slift_d", "0.1", 0.1840, 5.6624, 6, 0.0957, 0.1086),
        ("elift_d", "0.05", 0.1068, 9.9554, 10, 0.0498, 0.0549),
        ("slift_c", "0.8", 0.6912, 4.2114, 5, 0.8178, 0.7951),
        ("elift_c", "0.9", 0.7941, 10.8, 11, 0.9020, 0.8922),
    ],
)
def test_delta_table(measure, alpha, before, rhs, expected_delta, after, after_minus_one):
    """HJ-4: Δ makes the rule protective, Δ - 1 does not (Q5), on Example 3's counts."""
    from fairanon.patterns.measures import _rhs

    alpha = F(alpha)
    assert round(float(measure_value(measure, EXAMPLE3)), 4) == before
    assert round(float(_rhs(measure, EXAMPLE3, alpha)), 4) == rhs
    d = delta(measure, EXAMPLE3, alpha)
    assert d == expected_delta

    def bumped(n):
        t = EXAMPLE3
        if measure.startswith("slift"):
            return Contingency(t.a1, t.n1 + n, t.a2, t.n2, t.sB + n, t.sBC)
        return Contingency(t.a1, t.n1, t.a2 + n, t.n2 + n, t.sB + n, t.sBC + n)

    assert round(float(measure_value(measure, bumped(d))), 4) == after
    assert round(float(measure_value(measure, bumped(d - 1))), 4) == after_minus_one
    assert not fp.is_discriminatory(measure, measure_value(measure, bumped(d)), alpha)
    assert fp.is_discriminatory(measure, measure_value(measure, bumped(d - 1)), alpha)


def test_ceiling_vs_next_integer():
    """HJ-1: an integer RHS (V7: 32) makes ceil land on f = α, still discriminatory."""
    t = Contingency(a1=24, n1=40, a2=16, n2=60, sB=100, sBC=40)
    assert delta("slift", t, F(5, 4)) == 33
    assert delta("slift", t, F(5, 4), ceil=True) == 32
    assert delta("slift", t, F(5, 4), "nonstrict") == 32
    at_alpha = Contingency(24, 72, 16, 60, 132, 40)
    assert measure_value("slift", at_alpha) == F(5, 4)
    assert fp.is_discriminatory("slift", F(5, 4), F(5, 4))
    assert not fp.is_discriminatory("slift", F(5, 4), F(5, 4), "nonstrict")


def test_undefined_and_infeasible_deltas():
    only_protected_denied = Contingency(a1=5, n1=10, a2=0, n2=4, sB=14, sBC=5)
    assert measure_value("slift", only_protected_denied) is None
    assert delta("slift", only_protected_denied, F(6, 5)) is None
    # elift with alpha <= p1 cannot be fixed by raising {B, C}
    assert delta("elift", Contingency(9, 10, 1, 10, 20, 10), F(1, 2)) is None


# --------------------------------------------------------------- V1
def test_v1_example5():
    ps = _ps({("f", "v", "C"): 20, ("f", "v"): 14, ("v", "C"): 19, ("v",): 28}, ROLES_F)
    assert round(float(_slift(ps, {"f", "v", "C"})), 4) == 1.4551
    result = fp.sanitize(ps, "slift", 1.25)
    assert [(sorted(s.target), s.count) for s in result.steps] == [(["f", "v"], 6)]
    assert _slift(result.patterns, {"f", "v", "C"}) == F(20, 40) / F(19, 47)
    assert _verify(result.patterns, "slift", 1.25).passed


# --------------------------------------------------------------- V2, V3: privacy changes α-protection
V2 = {("f", "v", "h", "C"): 31, ("f", "v", "h"): 11, ("f", "v", "C"): 1, ("f", "v"): 2,
      ("m", "v", "h", "C"): 15, ("m", "v", "h"): 41, ("m", "v", "C"): 1, ("m", "v"): 1}


def test_v2_scenario1_k_anonymity_lowers_discrimination():
    ps = _ps(V2, ROLES_F)
    assert (ps.support({"f", "v"}), ps.support({"f", "v", "h"}), ps.support({"f", "v", "C"})) == (45, 42, 32)
    assert round(float(_slift(ps, {"f", "v", "C"})), 4) == 2.5778
    assert any(ch.lower == {"f", "v"} and ch.upper == {"f", "v", "h"} and ch.support == 3 for ch in fp.find_channels(ps, 8))
    blocked = ps.bump({"f", "v"}, 8)
    assert blocked.support({"f", "v"}) == 53
    assert round(float(_slift(blocked, {"f", "v", "C"})), 4) == 2.1887
    assert fp.is_discriminatory("slift", _slift(blocked, {"f", "v", "C"}), F(5, 4))
    # the full privacy step, then Alg. 5: k-anonymous and 1.25-protective
    priv = fp.k_anonymize(ps, 8)
    assert not fp.find_channels(priv.patterns, 8)
    result = fp.alpha_protective_k_anonymous(ps, 8, "slift", 1.25)
    assert _verify(result.patterns, "slift", 1.25, k=8).passed


def test_v3_scenario2_k_anonymity_creates_discrimination():
    cells = {("f", "v", "C"): 23, ("f", "v"): 22, ("m", "v", "h", "C"): 26, ("m", "v", "h"): 30, ("m", "v"): 2}
    ps = _ps(cells, ROLES_F)
    assert (ps.support({"m", "v"}), ps.support({"m", "v", "h"})) == (58, 56)
    assert round(float(_slift(ps, {"f", "v", "C"})), 4) == 1.1402
    blocked = ps.bump({"m", "v"}, 8)
    assert round(float(_slift(blocked, {"f", "v", "C"})), 4) == 1.2974
    assert fp.is_discriminatory("slift", _slift(blocked, {"f", "v", "C"}), F(5, 4))


def test_negation_readings_part_on_virtual_records_without_the_attribute():
    """docs/papers.md, HJ-5: ten virtual records {v} (no sex item) count as
    ¬female under the subtraction reading, n2 = 81 + 10 - 34 = 57, and not under the
    complement reading (the paper's supp(male, v) = 47), by hand: 570/323 and 470/323."""
    f, m = "sex=f", "sex=m"
    roles = fp.Roles({f}, "C")
    ps = _ps({(f, "v", "C"): 20, (f, "v"): 14, (m, "v", "C"): 19, (m, "v"): 28}, roles).bump({"v"}, 10)
    pattern, domain = frozenset({f, "v", "C"}), {f, m, "v", "C"}
    sub = contingency(ps.support, pattern, roles, domain=domain)
    comp = contingency(ps.support, pattern, roles, domain=domain, negation="complement")
    assert (sub.a2, sub.n2, comp.a2, comp.n2) == (19, 57, 19, 47)
    assert measure_value("slift", sub) == F(570, 323) and measure_value("slift", comp) == F(470, 323)
    assert set(fp.detect_discriminatory(ps, "slift", "1.6").patterns()) == {pattern, frozenset({f, "C"})}
    assert fp.detect_discriminatory(ps, "slift", "1.6", negation="complement").patterns() == []
    # without virtual records both readings agree
    base = ps.original()
    assert contingency(base.support, pattern, roles, domain=domain, negation="complement") == \
        contingency(base.support, pattern, roles, domain=domain)


# --------------------------------------------------------------- V4, V5, V6: d-explainability
def _explainable(supports, n, d="0.9", bump=None):
    roles = fp.Roles({"female"}, "No", admissible={"paid-delay"})
    ps = fp.PatternSet(supports, n, roles)
    ws = Workspace(ps)
    if bump:
        ws.bump(*bump)
    finding = Finding(frozenset({"female", "vet", "No"}), None, None)
    return explanation(ws, finding, F(d), [frozenset({"paid-delay", "vet", "No"})])


def _supports(**named):
    return {frozenset(k.replace("pd", "paid-delay").split("_")): v for k, v in named.items()}


def test_v4_scenario3_k_anonymity_makes_explainable_unexplainable():
    sup = _supports(female_vet=34, pd_vet_h=59, female_vet_No=20, pd_vet_No=37, pd_vet=64, female_vet_pd=31,
                    vet=81, vet_h=70, vet_No=50)
    assert _explainable(sup, 100) == {"paid-delay"}                       # 37/64 >= 0.9*20/34, 31/34 >= 0.9
    assert _explainable(sup, 100, bump=({"paid-delay", "vet"}, 8)) is None
    # Condition 1 after the privacy bump, from the supports the workspace publishes: the
    # paper prints 37/(64+8) = 0.513 against 0.9 * 20/34 = 0.53
    ws = Workspace(fp.PatternSet(sup, 100, fp.Roles({"female"}, "No", admissible={"paid-delay"})))
    ws.bump({"paid-delay", "vet"}, 8)
    lhs = F(ws.supp(frozenset({"paid-delay", "vet", "No"})), ws.supp(frozenset({"paid-delay", "vet"})))
    rhs = F(9, 10) * F(ws.supp(frozenset({"female", "vet", "No"})), ws.supp(frozenset({"female", "vet"})))
    assert (int(1000 * lhs), round(float(rhs), 2)) == (513, 0.53) and lhs < rhs


def test_v5_scenario4_k_anonymity_makes_unexplainable_explainable():
    sup = _supports(female_vet=30, female_vet_h=29, female_vet_No=29, pd_vet_No=23, pd_vet=27, female_vet_pd=30,
                    vet=40, vet_No=35)
    assert _explainable(sup, 50) is None                                  # 23/27 = 0.8519 < 0.87
    assert _explainable(sup, 50, bump=({"female", "vet"}, 2)) == {"paid-delay"}  # 0.8156 and 30/32 = 0.9375


def test_v6_example6():
    sup = _supports(pd_vet=64, pd_vet_No=52, female_vet_pd=31, female_vet=34, female_vet_No=20, vet=90, vet_No=60)
    assert _explainable(sup, 100) == {"paid-delay"}
    assert not _explainable(sup, 100, d="0.95")  # Cond. 2: 31/34 = 0.9118 < 0.95


# --------------------------------------------------------------- V7: Theorem 1 fails
V7 = {("f", "y", "C"): 2, ("f", "C"): 22, ("y", "C"): 11, ("C",): 5, ("f", "y"): 8, ("f",): 8, ("y",): 9, (): 35}
ROLES_FY = fp.Roles({"f", "y"}, "C")


def test_v7_counterexample_detected_and_fixed_by_recheck():
    ps = _ps(V7, ROLES_FY)
    values = [_slift(ps, p) for p in ({"f", "C"}, {"y", "C"}, {"f", "y", "C"})]
    assert [round(float(v), 4) for v in values] == [2.25, 1.1235, 0.4737]
    assert fp.detect_discriminatory(ps, "slift", 1.25).patterns() == [frozenset({"f", "C"})]
    # The paper's single pass: Δ = 33 (RHS = 32 exactly) and y becomes discriminatory.
    single = fp.sanitize(ps, "slift", 1.25, recheck=False)
    assert [(sorted(s.target), s.count) for s in single.steps] == [(["f"], 33)]
    assert round(float(_slift(single.patterns, {"f", "C"})), 4) == 1.2329
    assert round(float(_slift(single.patterns, {"y", "C"})), 4) == 1.6531
    assert round(float(_slift(single.patterns, {"f", "y", "C"})), 4) == 0.6474
    assert not single.converged and [f.pattern for f in single.residual] == [frozenset({"y", "C"})]
    report = _verify(single.patterns, "slift", 1.25)
    assert not report.passed and report["alpha_protection"].witness[0]["pattern"] == ["C", "y"]
    # The re-check loop fixes it, and the verifier agrees.
    fixed = fp.sanitize(ps, "slift", 1.25)
    assert fixed.converged and fixed.rounds > 1
    assert _verify(fixed.patterns, "slift", 1.25).passed
    # A bound on the passes is reported, not looped past.
    capped = fp.sanitize(ps, "slift", 1.25, max_rounds=2)
    assert not capped.converged and "did not converge in 2 passes" in capped.stop_reason


def test_v7_union_targets_settle_in_one_pass():
    """HJ-2: with targets="union" f's virtual records also hold y. Δ is f's own (RHS = 32,
    Δ = 33), and the 33 records {f, y} raise n1 of y instead of its n2: f (24/73)/(16/60) =
    90/73 ≈ 1.2329, y (13/63)/(27/70) = 130/243 ≈ 0.535, fy (2/43)/(38/90) = 90/817, all
    below 1.25 after the single pass."""
    ps = _ps(V7, ROLES_FY)
    single = fp.sanitize(ps, "slift", 1.25, recheck=False, targets="union")
    assert [(sorted(s.target), s.count) for s in single.steps] == [(["f", "y"], 33)]
    assert [_slift(single.patterns, p) for p in ({"f", "C"}, {"y", "C"}, {"f", "y", "C"})] == [
        F(90, 73), F(130, 243), F(90, 817)]
    assert single.converged and single.rounds == 1
    assert _verify(single.patterns, "slift", 1.25).passed


V10 = {("f", "C"): 3, ("y", "C"): 2, ("y",): 1, (): 3}


def test_v10_olift_union_record_defines_a_rule():
    """HJ-2, V10 (α = 3/2): f's odds 3/0 are undefined; y's odds ratio (2/1)/(3/3) = 2,
    RHS = 2·3/((3/2)·3) + 2 - 3 = 1/3, Δ = 1 record {f, y}. It lowers y to (2/2)/(3/3) = 1
    but makes f (3/1)/(2/4) = 6; the second pass adds Δ = 4 (RHS = 3·4/((3/2)·2) + 3 - 4 = 3):
    f (3/5)/(2/4) = 6/5, y (2/6)/(3/3) = 1/3."""
    ps = _ps(V10, ROLES_FY)

    def olift(out, p):
        return measure_value("olift", contingency(out.support, frozenset(p), out.roles))

    assert olift(ps, {"f", "C"}) is None and olift(ps, {"y", "C"}) == 2
    single = fp.sanitize(ps, "olift", F(3, 2), recheck=False, targets="union")
    assert [(sorted(s.target), s.count) for s in single.steps] == [(["f", "y"], 1)]
    assert [(f.pattern, f.table, f.value) for f in single.residual] == [
        (frozenset({"f", "C"}), Contingency(3, 4, 2, 6, 10, 5), 6)]
    assert olift(single.patterns, {"y", "C"}) == 1
    assert not single.unsanitizable and not _verify(single.patterns, "olift", F(3, 2)).passed
    result = fp.sanitize(ps, "olift", F(3, 2), targets="union")
    assert [(sorted(s.target), s.count, s.round) for s in result.steps] == [(["f", "y"], 1, 1), (["f", "y"], 4, 2)]
    assert [olift(result.patterns, p) for p in ({"f", "C"}, {"y", "C"})] == [F(6, 5), F(1, 3)]
    assert result.converged and _verify(result.patterns, "olift", F(3, 2)).passed


def test_v7_with_a_context_item():
    """The same cell counts with every record holding v: the context patterns behave alike."""
    ps = _ps({k + ("v",): c for k, c in V7.items()}, ROLES_FY)
    single = fp.sanitize(ps, "slift", 1.25, recheck=False)
    assert round(float(_slift(single.patterns, {"y", "v", "C"})), 4) == 1.6531
    assert fp.sanitize(ps, "slift", 1.25).converged


# ------------------------------------------------ HJ-8: the order of the privacy step's blocks
def test_blocking_order_changes_the_virtual_records():
    """HJ-8: records {a, b, c} 20, {a, b} 1, {a, c} 20, k = 5. The channels {a, ¬c}, {b, ¬c}
    and {a, b, ¬c} each hold the one record {a, b}. Blocking {a, b} (largest first, fairanon)
    raises all three (J ∩ {a, b} = I for each): 5 virtual records. Blocking {a} and {b}
    first (smallest first) leaves {a, b, ¬c} at 1, so {a, b} is blocked too: 15 records. The
    paper does not give Atzori et al.'s order, so Table 8's cells depend on this choice."""
    ps = _ps({("a", "b", "c"): 20, ("a", "b"): 1, ("a", "c"): 20}, fp.Roles({"a"}, "c"))
    assert sorted(str(ch) for ch in fp.find_channels(ps, 5)) == ["{a, b, ¬c}: 1", "{a, ¬c}: 1", "{b, ¬c}: 1"]
    out = fp.k_anonymize(ps, 5)
    assert out.blocked == (frozenset("ab"),) and out.patterns.ledger_total == 5
    assert not fp.find_channels(out.patterns, 5)
    ws = Workspace(ps)
    ws.bump({"a"}, 5)
    ws.bump({"b"}, 5)
    assert [str(ch) for ch in fp.find_channels(ws.result(), 5)] == ["{a, b, ¬c}: 1"]


# --------------------------------------------------------------- V8: gap in Theorem 4
def test_v8_fairness_bump_opens_a_zero_channel():
    cells = {("f", "v", "x", "C"): 20, ("f", "v", "x"): 14, ("m", "v", "C"): 19, ("m", "v"): 28}
    ps = _ps(cells, ROLES_F)
    assert not fp.find_channels(ps, 8)
    unguarded = fp.sanitize(ps, "slift", 1.25, k=8, guard_channels=False)
    assert [(sorted(s.target), s.count) for s in unguarded.steps] == [(["f", "v"], 6)]
    opened = fp.find_channels(unguarded.patterns, 8)
    assert any(ch.lower == {"f", "v"} and ch.upper == {"f", "v", "x"} and ch.support == 6 for ch in opened)
    assert not _verify(unguarded.patterns, "slift", 1.25, k=8).passed
    guarded = fp.sanitize(ps, "slift", 1.25, k=8)
    assert [(sorted(s.target), s.count, s.guarded) for s in guarded.steps] == [(["f", "v"], 8, True)]
    assert _verify(guarded.patterns, "slift", 1.25, k=8).passed


# --------------------------------------------------------------- V9: the greedy single pass fails
V9 = {("f",): 5, ("y",): 30, ("C",): 1, ("f", "y"): 5, ("f", "C"): 30, ("f", "y", "C"): 10}


def test_v9_single_pass_numbers_and_verifier():
    ps = _ps(V9, ROLES_FY)
    det = fp.detect_discriminatory(ps, "slift", 1.25)
    assert [(sorted(f.pattern), f.impact) for f in det.discriminatory] == [(["C", "f", "y"], 1), (["C", "f"], 0)]
    assert [round(float(f.value), 4) for f in det.discriminatory] == [1.4194, 24.8]
    single = fp.sanitize(ps, "slift", 1.25, recheck=False)
    assert [(sorted(s.target), s.count) for s in single.steps] == [(["f", "y"], 3), (["f"], 940)]
    values = {tuple(sorted(p)): round(float(_slift(single.patterns, p)), 4) for p in ({"f", "C"}, {"y", "C"}, {"f", "y", "C"})}
    assert values == {("C", "f"): 1.2487, ("C", "y"): 6.5591, ("C", "f", "y"): 18.0287}
    report = _verify(single.patterns, "slift", 1.25)
    assert not report.passed
    assert sorted(w["pattern"] for w in report["alpha_protection"].witness) == [["C", "f", "y"], ["C", "y"]]


def test_v9_943_union_records():
    """943 virtual {f, y} records make all three protective; 942 leave f at exactly 1.25."""
    ps = _ps(V9, ROLES_FY)
    fixed = ps.bump({"f", "y"}, 943)
    assert [round(float(_slift(fixed, p)), 4) for p in ({"f", "C"}, {"y", "C"}, {"f", "y", "C"})] == [1.2487, 0.0118, 0.0222]
    assert _slift(ps.bump({"f", "y"}, 942), {"f", "C"}) == F(5, 4)
    assert _verify(fixed, "slift", 1.25).passed


def test_v9_recheck_converges_with_impact_order():
    """With the impact order the re-check settles V9 in a second pass ({f, y} first)."""
    result = fp.sanitize(_ps(V9, ROLES_FY), "slift", 1.25)
    assert result.converged and result.rounds == 2
    assert [(sorted(s.target), s.count, s.round) for s in result.steps] == [(["f", "y"], 3, 1), (["f"], 940, 1), (["f", "y"], 242, 2)]
    assert result.added_support == 1675
