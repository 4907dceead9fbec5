"""Property tests on random small databases (Q1-Q20 of docs/papers.md, Hajian et al.,
"Properties checked"), each result re-checked by the independent verifier."""

import itertools
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairanon import patterns as fp
from fairanon.exceptions import InvalidParameterError
from fairanon.patterns.measures import ELIFT_FAMILY, Contingency, contingency, delta, measure_value
from fairanon.patterns.patternset import Workspace
from fairanon.patterns.privacy import ChannelTable

ITEMS = ("a", "b", "c", "d")


@st.composite
def databases(draw, max_pd=2):
    n_pd = draw(st.integers(1, max_pd))
    pd_items = ("p", "q")[:n_pd]
    n_other = draw(st.integers(2, 4))
    universe = pd_items + ITEMS[:n_other]
    n = draw(st.integers(8, 50))
    rows = []
    for _ in range(n):
        row = {i for i in universe if draw(st.booleans())}
        row.add("C" if draw(st.integers(0, 9)) < 4 else "P")
        rows.append(row)
    roles = fp.Roles(set(pd_items), "C", "P", admissible=set(ITEMS[:n_other]))
    min_count = draw(st.integers(1, 4))
    return fp.PatternSet.from_db(fp.TransactionDB.from_transactions(rows), min_count, roles, backend="apriori"), rows


def _recount(rows, ledger, itemset):
    extended = list(rows) + [t for t, c in ledger for _ in range(c)]
    return sum(1 for r in extended if itemset <= set(r))


def _verify(ps, measure="slift", alpha=F(5, 4), **kw):
    return fp.verify_patterns(ps.published(), roles=ps.roles, empty_support=ps.empty_support, measure=measure,
                              alpha=alpha, support_of=ps.support, original=ps.original().published(), **kw)


MEASURES = ["slift", "elift", "slift_d", "elift_d", "slift_c", "elift_c", "olift"]
ALPHAS = {"slift": F(5, 4), "elift": F(6, 5), "slift_d": F(1, 10), "elift_d": F(1, 20), "slift_c": F(4, 5),
          "elift_c": F(9, 10), "olift": F(3, 2)}


@settings(max_examples=40, deadline=None)
@given(databases(), st.sampled_from(MEASURES), st.booleans())
def test_structure_consistency_and_verifier_agree(data, measure, with_k):
    """Q1, Q2, Q9, Q20: same itemsets, supports never lowered and equal to a recount on D
    plus the virtual records; the verifier passes exactly when the method converged."""
    ps, rows = data
    k = 3 if with_k else None
    result = fp.sanitize(ps, measure, ALPHAS[measure], k=k)
    out = result.patterns
    assert set(out.published()) == set(ps.supports)
    for x, s in out.published().items():
        assert s >= ps.supports[x]
        assert s == _recount(rows, out.ledger, x)
    assert out.empty_support == len(rows) + out.ledger_total
    report = _verify(out, measure, ALPHAS[measure], k=k)
    assert report["consistency"].passed and report["structure"].passed
    assert report["alpha_protection"].passed == (result.converged and not result.unsanitizable)
    if with_k:
        assert report["k_anonymity"].passed


@settings(max_examples=40, deadline=None)
@given(databases(), st.integers(2, 6))
def test_channels_and_privacy_step(data, k):
    """Q3: channel supports by inclusion-exclusion equal record counts; Q4: blocking
    leaves no violating channel and never creates one."""
    ps, rows = data
    ws = Workspace(ps)
    table = ChannelTable(ws, k)
    for ch in table.violations():
        assert ch.support == sum(1 for r in rows if set(r) & ch.upper == ch.lower)
    before = {(c.lower, c.upper) for c in table.violations()}
    if before:
        lower = next(iter(before))[0]
        ws.listeners.append(table.on_bump)
        ws.bump(lower, k)
        after = {(c.lower, c.upper) for c in table.violations()}
        assert after <= before and all(l != lower for l, _ in after)
    out = fp.k_anonymize(ps, k)
    assert not fp.find_channels(out.patterns, k)
    rep = fp.verify_patterns(out.patterns.published(), roles=ps.roles, empty_support=out.patterns.empty_support, k=k)
    assert rep.passed
    assert len(out.blocked) <= len({l for l, _ in before}) + sum(1 for s in ps.supports.values() if s < k)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 40), st.integers(1, 40), st.sampled_from(MEASURES),
       st.sampled_from(["strict", "nonstrict"]))
def test_delta_is_minimal(a1, extra1, a2, extra2, measure, reading):
    """Q5: Δ makes the rule protective and Δ - 1 does not."""
    n1, n2 = a1 + extra1, a2 + extra2
    t = Contingency(a1, n1, a2, n2, n1 + n2, a1 + a2)
    alpha = ALPHAS[measure]
    d = delta(measure, t, alpha, reading)
    if d is None:
        return

    def bumped(n):
        if measure in ELIFT_FAMILY:
            return Contingency(t.a1, t.n1, t.a2 + n, t.n2 + n, t.sB + n, t.sBC + n)
        return Contingency(t.a1, t.n1 + n, t.a2, t.n2, t.sB + n, t.sBC)

    assert not fp.is_discriminatory(measure, measure_value(measure, bumped(d)), alpha, reading)
    if d >= 1:
        assert fp.is_discriminatory(measure, measure_value(measure, bumped(d - 1)), alpha, reading)


@settings(max_examples=40, deadline=None)
@given(databases(), st.sampled_from(MEASURES))
def test_theorem1_special_cases_and_elift_family(data, measure):
    """Q6 and Q8: sanitizing one pattern never raises the measure of its PD subsets, and
    (elift family, any DI_b) never turns a protective PD pattern discriminatory."""
    ps, _ = data
    alpha = ALPHAS[measure]
    det = fp.detect_discriminatory(ps, measure, alpha)
    if not det.discriminatory:
        return
    p = det.discriminatory[0].pattern
    ws = Workspace(ps)
    before = {q: measure_value(measure, contingency(ws.supp, q, ps.roles)) for q in ps.pd_patterns()}
    fp.antidisc_sanitize(ws, [p], measure, alpha)
    after = {q: measure_value(measure, contingency(ws.supp, q, ps.roles)) for q in ps.pd_patterns()}
    smaller_is_worse = measure in ("slift_c", "elift_c")
    for q in ps.pd_patterns():
        if q < p and before[q] is not None and after[q] is not None:
            assert (after[q] >= before[q]) if smaller_is_worse else (after[q] <= before[q])
        if measure in ELIFT_FAMILY and not fp.is_discriminatory(measure, before[q], alpha):
            assert not fp.is_discriminatory(measure, after[q], alpha)


@settings(max_examples=30, deadline=None)
@given(databases(max_pd=1), st.sampled_from(["slift", "slift_d", "slift_c"]))
def test_single_protected_item_single_pass_suffices(data, measure):
    """Q7/Q9: with |DI_b| = 1 the slift family's single pass leaves nothing (Theorem 1 holds)."""
    ps, _ = data
    single = fp.sanitize(ps, measure, ALPHAS[measure], recheck=False)
    assert not single.residual or all(f.pattern in single.unsanitizable for f in single.residual)


SLIFT_UNION = ["slift", "slift_d", "slift_c", "olift"]


@settings(max_examples=30, deadline=None)
@given(databases(), st.sampled_from(["slift", "slift_d", "slift_c"]))
def test_union_targets_single_pass_suffices(data, measure):
    """HJ-2: with targets="union" and no item naming another value of a protected
    attribute, a virtual record raises n1 of every PD rule it supports and n2 of none, so
    the single pass of slift, slift_d and slift_c leaves nothing (it does not with the
    paper's targets, V7; nor for olift, V10)."""
    ps, _ = data
    single = fp.sanitize(ps, measure, ALPHAS[measure], recheck=False, targets="union")
    assert not single.residual or all(f.pattern in single.unsanitizable for f in single.residual)
    assert _verify(single.patterns, measure, ALPHAS[measure]).passed == (not single.unsanitizable)


@settings(max_examples=30, deadline=None)
@given(databases())
def test_union_targets_olift_settles_in_two_passes(data):
    """HJ-2, V10: for olift the single pass can leave only rules whose odds were undefined
    on the input (a1 = n1) and that a union record made defined; the second pass fixes
    them and defines no new one."""
    ps, _ = data
    alpha = ALPHAS["olift"]
    single = fp.sanitize(ps, "olift", alpha, recheck=False, targets="union")
    for f in single.residual:
        if f.pattern not in single.unsanitizable:
            before = contingency(ps.support, f.pattern, ps.roles)
            assert before.a1 == before.n1
    result = fp.sanitize(ps, "olift", alpha, targets="union")
    assert set(f.pattern for f in result.residual) <= set(result.unsanitizable)
    assert result.rounds <= 2
    assert _verify(result.patterns, "olift", alpha).passed == (not result.unsanitizable)


@st.composite
def attribute_databases(draw):
    """Records with one value each of sex (F protected, M) and age (y protected, o), and
    items a, b: contexts can fix a protected attribute to its other value."""
    n = draw(st.integers(10, 50))
    rows = []
    for _ in range(n):
        row = {draw(st.sampled_from(["sex=F", "sex=M"])), draw(st.sampled_from(["age=y", "age=o"]))}
        row |= {i for i in ("a", "b") if draw(st.booleans())}
        row.add("C" if draw(st.integers(0, 9)) < 4 else "P")
        rows.append(row)
    roles = fp.Roles({"sex=F", "age=y"}, "C", "P", admissible={"a", "b"})
    return fp.PatternSet.from_db(fp.TransactionDB.from_transactions(rows), draw(st.integers(1, 4)), roles,
                                 backend="apriori")


@settings(max_examples=30, deadline=None)
@given(attribute_databases(), st.sampled_from(SLIFT_UNION), st.sampled_from([None, 3]), st.sampled_from([None, F(9, 10)]))
def test_union_targets_settle_with_attribute_values(ps, measure, k, d):
    """HJ-2: a union record can only harm a rule whose context lacks a protected attribute
    that the fixed rule's context sets to its unprotected value (sex=M, age=o); that drops
    a level each pass, so with two protected attributes the loop settles within 3 passes,
    with or without d-explainability (Alg. 4), and the verifier agrees."""
    result = fp.sanitize(ps, measure, ALPHAS[measure], k=k, d=d, targets="union")
    assert result.converged or set(f.pattern for f in result.residual) <= set(result.unsanitizable)
    assert result.rounds <= 3
    report = _verify(result.patterns, measure, ALPHAS[measure], k=k, d=d)
    assert report["alpha_protection"].passed == (not result.unsanitizable)


@settings(max_examples=30, deadline=None)
@given(databases(), st.sampled_from(MEASURES))
def test_idempotent_and_deterministic(data, measure):
    """Q14, Q15."""
    ps, _ = data
    first = fp.sanitize(ps, measure, ALPHAS[measure], k=2)
    again = fp.sanitize(ps, measure, ALPHAS[measure], k=2)
    assert first.patterns.ledger == again.patterns.ledger
    if first.converged and not first.unsanitizable:
        twice = fp.sanitize(first.patterns, measure, ALPHAS[measure], k=2)
        assert twice.patterns.ledger == first.patterns.ledger


@settings(max_examples=30, deadline=None)
@given(databases(), st.sampled_from(["slift", "elift"]), st.sampled_from([F(9, 10), F(1, 2), F(1)]))
def test_explainable_sanitization(data, measure, d):
    """Alg. 3-4: the result has no α-discriminatory d-unexplainable pattern left (when
    the method converged), and distorts no more than full α-protection (Table 10)."""
    ps, _ = data
    alpha = ALPHAS[measure]
    result = fp.sanitize(ps, measure, alpha, d=d)
    report = _verify(result.patterns, measure, alpha, d=d)
    if result.converged and not result.unsanitizable:
        assert report.passed
    det = fp.detect_unexplainable(ps, measure, alpha, d)
    full = fp.detect_discriminatory(ps, measure, alpha)
    assert len(det) + len(det.explained) == len(full)


def test_verifier_catches_broken_sets():
    db = fp.TransactionDB.from_counts({("f", "v", "C"): 20, ("f", "v"): 14, ("v", "C"): 19, ("v",): 28})
    ps = fp.PatternSet.from_db(db, 1, fp.Roles({"f"}, "C"), backend="apriori")
    good = ps.published()
    broken = dict(good)
    broken[frozenset({"f", "v"})] = 10  # below its superset {f, v, C} = 20
    rep = fp.verify_patterns(broken, roles=ps.roles, empty_support=81)
    assert not rep["consistency"].passed
    lowered = dict(good)
    lowered[frozenset({"v"})] = 80
    rep = fp.verify_patterns(lowered, roles=ps.roles, empty_support=81, original=good)
    assert not rep["structure"].passed
    rep = fp.verify_patterns(good, roles=ps.roles, empty_support=81, measure="slift", alpha=1.25)
    assert not rep.passed and rep.counts["discriminatory"] == 2
    rep = fp.verify_patterns(good, roles=ps.roles, empty_support=81, k=30)
    assert not rep["k_anonymity"].passed and rep["k_anonymity"].value > 0


def test_closed_sets_and_ghosts():
    """§5.2: closed input gives the same detection; a raised non-closed itemset becomes a
    ghost closed pattern, and the verifier allows it (GC > 0, MC = 0)."""
    cells = {("f", "v", "x", "C"): 20, ("f", "v", "x"): 14, ("m", "v", "C"): 19, ("m", "v"): 28}
    db = fp.TransactionDB.from_counts(cells)
    roles = fp.Roles({"f"}, "C")
    full = fp.PatternSet.from_db(db, 1, roles, backend="apriori")
    closed = fp.PatternSet.from_db(db, 1, roles, closed=True, backend="apriori")
    assert len(closed) < len(full)
    assert fp.closed_itemsets(full.supports) == closed.supports
    for x in full.supports:
        assert closed.support(x) == full.support(x)
    det_full = fp.detect_discriminatory(full, "slift", 1.25)
    det_closed = fp.detect_discriminatory(closed, "slift", 1.25)
    assert {f.value for f in det_closed.discriminatory} <= {f.value for f in det_full.discriminatory}
    # elift raises {B, C}; here every denied vet is a woman, so {v, C} is not closed
    cells = {("f", "v", "C"): 20, ("f", "v"): 14, ("v",): 47}
    closed = fp.PatternSet.from_db(fp.TransactionDB.from_counts(cells), 1, roles, closed=True, backend="apriori")
    assert frozenset({"v", "C"}) not in closed.supports
    result = fp.sanitize(closed, "elift", 1.25)
    out = result.patterns.published()
    ghosts = set(out) - set(closed.supports)
    assert frozenset({"v", "C"}) in ghosts
    rep = fp.verify_patterns(out, roles=roles, empty_support=result.patterns.empty_support, measure="elift",
                             alpha=1.25, closed=True, original=closed.supports, support_of=result.patterns.support)
    assert rep.passed and rep.counts["ghosts"] == len(ghosts) and rep.counts["misses"] == 0
    assert fp.ghost_cost(closed.supports, out) > 0 and fp.misses_cost(closed.supports, out) == 0
    assert fp.ghost_cost(full, fp.sanitize(full, "slift", 1.25).patterns) == 0


@pytest.mark.parametrize("bad", [dict(measure="lift"), dict(alpha="x"), dict(reading="loose"), dict(max_rounds=0), dict(k=0)])
def test_bad_parameters(bad):
    db = fp.TransactionDB.from_counts({("f", "C"): 2, ("v",): 2})
    ps = fp.PatternSet.from_db(db, 1, fp.Roles({"f"}, "C"), backend="apriori")
    kwargs = dict(measure="slift", alpha=1.2)
    kwargs.update(bad)
    with pytest.raises(InvalidParameterError, match="parameter"):
        fp.sanitize(ps, **kwargs)


def test_d_needs_admissible_items():
    db = fp.TransactionDB.from_counts({("f", "C"): 2, ("v",): 2})
    ps = fp.PatternSet.from_db(db, 1, fp.Roles({"f"}, "C"), backend="apriori")
    with pytest.raises(ValueError, match="admissible"):
        fp.sanitize(ps, "slift", 1.2, d=0.9)


def test_brute_force_agrees_with_mlxtend():
    pytest.importorskip("mlxtend")
    rows = [set(c) for c in itertools.islice(itertools.cycle(["abC", "aC", "bP", "abcP", "cC", "acP"]), 60)]
    db = fp.TransactionDB.from_transactions(rows)
    for min_count in (1, 5, 11, 25):
        assert fp.mine(db, min_count, backend="mlxtend") == fp.mine(db, min_count, backend="apriori")
        assert fp.mine(db, min_count, closed=True, backend="mlxtend") == fp.mine(db, min_count, closed=True, backend="apriori")
