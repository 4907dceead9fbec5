"""Contexts of possible discrimination (Ruggieri Defs. 2-5, 17): every closed PND itemset
of a table or release with its support, 4-fold table, τ and measures, against hand
computations and against the verifier's α-protection; Appendix A's reduction red(R)
(Thm 25, docs/papers.md R-11) against hand computations and a brute-force VD."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError, SchemaError
from fairanon.instances import datasets
from fairanon.instances.hierarchy import Hierarchy
from fairanon.models.contexts import CONTEXT_MEASURES, contexts, extremes, reduction, reduction_counts
from fairanon.release import Release, generalize_partition


def _fig3_release():
    return Release(datasets.ruggieri_fig3_release_table(), groups=np.zeros(17, dtype=int))


def test_fig3_release_by_hand():
    """dMondrian's release of Fig. 3 (purpose = housing-car everywhere, emp kept).

    Itemsets over released values: {} and {purpose=housing-car} share the whole table's
    cover (4, 4, 4, 5), {emp=v} and {purpose=housing-car, emp=v} share a branch's. The
    closed ones are the larger of each pair (Def. 5), so three contexts:
    whole table (4,4,4,5): p1 = 1/2, p2 = 4/9, p = 8/17 = p-: RD = 1/18, ED = 1/34, τ = 1/34;
    emp=no (2,2,2,2): RD = 0, τ = |1/2 - 8/17| = 1/34;
    emp=yes (2,2,2,3): p2 = 2/5, RD = 1/10, RR = 5/4, τ = |2/5 - 8/17| = 6/85 (Ex. 19: 0.07).
    """
    inst = fa.load("ruggieri_loan")
    df = contexts(inst, _fig3_release(), exact=True)
    got = [(r.purpose, r.emp, r.support, (r.a, r.b, r.c, r.d), r.tau, r.RD, r.RR) for r in df.itertuples()]
    assert got == [
        ("housing-car", None, 17, (4, 4, 4, 5), Fraction(1, 34), Fraction(1, 18), Fraction(9, 8)),
        ("housing-car", "no", 8, (2, 2, 2, 2), Fraction(1, 34), Fraction(0), Fraction(1)),
        ("housing-car", "yes", 9, (2, 2, 2, 3), Fraction(6, 85), Fraction(1, 10), Fraction(5, 4)),
    ]
    assert df.attrs["p_minus"] == Fraction(8, 17)
    assert df.loc[0, "ED"] == Fraction(1, 2) - Fraction(8, 17)
    # Every itemset with a non-empty cover: 6 (two per cover).
    every = contexts(inst, _fig3_release(), closed=False, exact=True)
    assert len(every) == 6 and sorted(every["support"]) == [8, 8, 9, 9, 17, 17]


def test_original_table_by_hand():
    """Ruggieri's Fig. 3 data: 3 values of purpose x emp cells and the margins.

    Closed itemsets of the 17 original rows: {} (both attributes vary), purpose=housing,
    purpose=car, emp=no, emp=yes and the four cells: 9 contexts. E.g. purpose=car,
    emp=no = records 13, 14, 15: (0, 1, 1, 1): p1 = 0, p2 = 1/2, so RD = -1/2 and
    τ = |0 - 8/17| = 8/17 (Ex. 19: 0.47); purpose=car (1,1,1,2): τ = 7/51 (Ex. 19: 0.14)."""
    inst = fa.load("ruggieri_loan")
    df = contexts(inst, exact=True)
    assert len(df) == 9
    key = {(r.purpose, r.emp): r for r in df.itertuples()}
    car_no = key[("car", "no")]
    assert (car_no.a, car_no.b, car_no.c, car_no.d) == (0, 1, 1, 1)
    assert car_no.RD == Fraction(-1, 2) and car_no.tau == Fraction(8, 17)
    assert key[("car", None)].tau == Fraction(7, 51)
    assert key[(None, "yes")].tau == Fraction(6, 85)
    # min_support 5 keeps the whole table, the margins and the two housing cells.
    assert sorted(contexts(inst, min_support=5)["support"]) == [5, 5, 7, 8, 9, 12, 17]


def test_float_and_exact_agree_and_bounds_hold_pointwise():
    """Thm 10 and 15 pointwise (the bound curves of Fig. 5): every context's measures lie
    within bd_f(τ) of its own τ."""
    from fairanon.models import measures as M

    inst = fa.load("ruggieri", data="german")
    df = contexts(inst, min_support=20)
    ex = contexts(inst, min_support=20, exact=True)
    assert len(df) == len(ex) > 100
    p = df.attrs["p_minus"]
    for name in CONTEXT_MEASURES:
        assert np.allclose(df[name].astype(float), ex[name].astype(float))
    for row in ex.itertuples():
        assert abs(row.RD) <= M.bound("RD", row.tau, p) and abs(row.ED) <= M.bound("ED", row.tau, p)
        assert M.bound_opposite("RR", row.tau, p) <= row.RR <= M.bound("RR", row.tau, p)
        assert M.bound("RC", row.tau, p) <= row.RC <= M.bound_opposite("RC", row.tau, p)


# ------------------------------------------------------- the verifier's achieved alpha
@st.composite
def _loans(draw):
    n = draw(st.integers(1, 25))
    rows = draw(
        st.lists(
            st.tuples(st.integers(0, 3), st.sampled_from("xyz"), st.sampled_from("fm"), st.sampled_from("-+")),
            min_size=n,
            max_size=n,
        )
    )
    df = pd.DataFrame(rows, columns=["age", "job", "sex", "decision"])
    schema = fa.Schema(
        [
            fa.Attribute("age", kind="numeric"),
            fa.Attribute("job"),
            fa.Attribute("sex", role="protected", hierarchy=Hierarchy.flat(["f", "m"]), protected=["f"]),
            fa.Attribute("decision", role="decision", kind="ordered", order=["-", "+"], negative="-"),
        ]
    )
    return fa.Instance(df, schema)


@settings(deadline=None, max_examples=40)
@given(inst=_loans(), parts=st.integers(1, 4), seed=st.integers(0, 9), measure=st.sampled_from(CONTEXT_MEASURES), support=st.integers(1, 4))
def test_largest_measure_is_the_verifiers_achieved_alpha(inst, parts, seed, measure, support):
    """The verifier walks the same itemsets: its achieved α (worst f over contexts of
    support >= s) is the extreme of the listed contexts, closed or not, on releases of
    random partitions."""
    groups = np.random.default_rng(seed).integers(0, parts, inst.n_rows)
    rel = Release(generalize_partition(inst, groups), groups=groups)
    req = fa.AlphaProtection(measure, 1, min_support=support)
    report = fa.verify(inst, rel, [req])
    assert report["truthfulness"].passed
    df = contexts(inst, rel, min_support=support, exact=True)
    every = contexts(inst, rel, min_support=support, exact=True, closed=False)
    achieved = report[str(req)].achieved
    if not len(every):
        assert achieved is None
        return
    worst = max(every[measure]) if req.larger_is_worse else min(every[measure])
    assert worst == achieved
    assert (max(df[measure]) if req.larger_is_worse else min(df[measure])) == achieved


def test_extremes_follow_equation_1():
    inst = fa.load("ruggieri_loan")
    df = contexts(inst)
    ext = extremes(df, ["RD"], [1, 5, 17])
    assert ext["contexts"].tolist() == [9, 7, 1]
    assert ext["max_RD"].tolist()[-1] == pytest.approx(1 / 18)
    assert (ext["max_RD"].diff().dropna() <= 0).all()  # fewer contexts, smaller maximum


def test_bad_input():
    inst = fa.load("ruggieri_loan")
    with pytest.raises(InvalidParameterError, match="'min_support' parameter of contexts"):
        contexts(inst, min_support=0)
    with pytest.raises(InvalidParameterError, match="'measures' parameter of contexts"):
        contexts(inst, measures=["XX"])
    with pytest.raises(InvalidParameterError, match="'release' parameter"):
        contexts(inst, "release")
    plain = fa.Instance(inst.table.astype(str), fa.Schema([fa.Attribute("purpose"), fa.Attribute("decision", role="sensitive")]))
    with pytest.raises(IncompatibleRequirementError, match="protected and a decision"):
        contexts(plain)


# ------------------------------------------------- Appendix A: red(R), Thm 25
def _r11_table():
    """R-11's shares on 20 records over two QIs: R has x, y, z in shares (1/2, 3/10, 1/5);
    the covers (u, 1) = (3, 1, 1), (u, 2) = (5, 5, 0), (w, 1) = (2, 0, 3) records."""
    cells = [("u", 1, "xxxyz"), ("u", 2, "xxxxxyyyyy"), ("w", 1, "xxzzz")]
    rows = [(q1, q2, v) for q1, q2, values in cells for v in values]
    schema = fa.Schema([fa.Attribute("q1"), fa.Attribute("q2", kind="numeric"), fa.Attribute("s", role="sensitive")])
    return fa.Instance(pd.DataFrame(rows, columns=["q1", "q2", "s"]), schema, name="r11")


def _identity(inst):
    """The release that publishes the table unchanged, one class per distinct QI tuple."""
    groups = inst.table.groupby(list(inst.schema.qi), sort=False).ngroup().to_numpy()
    return Release(inst.table.copy(), groups=groups)


def test_reduction_counts_by_hand():
    """Fig. 12 per cover, by hand (r = 20, rs = 20 s):
    (u, 1): p = (3/5, 1/5, 1/5); x and z are at or over their shares: a = 100 (3/5 + 1/5) = 80,
    c = 100 (1/2 + 1/5) = 70, VD = 1/10 (the paper's c, 100 · 3/10 = 30, would give 1/2);
    (u, 2): p = (1/2, 1/2, 0); x, y: a = 200, c = 200 (1/2 + 3/10) = 160, VD = 1/5;
    (w, 1): p = (2/5, 0, 3/5); z: a = 60, c = 20, VD = 2/5."""
    got = reduction_counts(_r11_table())
    assert got[["q1", "q2", "s", "a", "c"]].values.tolist() == [["u", 1, 5, 80, 70], ["u", 2, 10, 200, 160], ["w", 1, 5, 60, 20]]
    assert got["vd"].tolist() == [Fraction(1, 10), Fraction(1, 5), Fraction(2, 5)]


def test_reduction_rd_of_every_context_by_hand():
    """red(R) has 2 r^2 = 800 records; the RD of a PND itemset is the cover-weighted mean
    of the VDs of the full QI itemsets below it (Thm 25's proof): {} (5/20 · 1/10 + 10/20 ·
    1/5 + 5/20 · 2/5) = 9/40, q1=u 1/6, q1=w 2/5, q2=1 1/4, q2=2 1/5, the three covers
    1/10, 1/5, 2/5. R is 2/5-close and no less; red(R) is 2/5-protective and no less."""
    inst = _r11_table()
    red = reduction(inst)
    assert red.n_rows == 800 and red.schema.protected == "group" and red.schema.decision == "decision"
    assert red.schema.generalizable == ("q1", "q2")
    df = contexts(red, closed=False, exact=True, measures=["RD"])
    got = {(r.q1, r.q2): (r.a + r.b, r.c + r.d, r.RD) for r in df.itertuples()}
    expected = {
        (None, None): Fraction(9, 40), ("u", None): Fraction(1, 6), ("w", None): Fraction(2, 5),
        (None, "1"): Fraction(1, 4), (None, "2"): Fraction(1, 5),
        ("u", "1"): Fraction(1, 10), ("u", "2"): Fraction(1, 5), ("w", "1"): Fraction(2, 5),
    }
    assert {k: v[2] for k, v in got.items()} == expected
    assert all(n1 == n2 for n1, n2, _ in got.values())  # equal groups in every context
    t, below = Fraction(2, 5), Fraction(2, 5) - Fraction(1, 1000)
    for level, ok in ((t, True), (below, False)):
        close = fa.verify(inst, _identity(inst), [fa.TCloseness(level, attribute="s")], metrics=False)
        protective = fa.verify(red, _identity(red), [fa.AlphaProtection("RD", level)], metrics=False)
        assert close.passed is ok and protective.passed is ok, (str(close), str(protective))


def _vd_by_brute_force(rows):
    """max over distinct QI tuples of ½ Σ_i |p_i - p_{s_i}|, from the rows alone."""
    whole = {v: Fraction(sum(1 for r in rows if r[-1] == v), len(rows)) for v in {r[-1] for r in rows}}
    worst = Fraction(0)
    for key in {r[:-1] for r in rows}:
        cover = [r for r in rows if r[:-1] == key]
        share = {v: Fraction(sum(1 for r in cover if r[-1] == v), len(cover)) for v in whole}
        worst = max(worst, sum(abs(share[v] - whole[v]) for v in whole) / 2)
    return worst


@settings(deadline=None, max_examples=12)
@given(
    rows=st.lists(st.tuples(st.integers(0, 2), st.sampled_from("ab"), st.sampled_from("xyzw")), min_size=1, max_size=10)
)
def test_theorem_25_on_random_tables(rows):
    """Thm 25 (with c corrected): R is t-close (variational distance) iff red(R) is
    t-protective w.r.t. RD; so the largest VD of R, by brute force, is the largest RD over
    every PND itemset of red(R), and the verifier agrees on both sides at that t."""
    schema = fa.Schema([fa.Attribute("q1", kind="numeric"), fa.Attribute("q2"), fa.Attribute("s", role="sensitive")])
    inst = fa.Instance(pd.DataFrame(rows, columns=["q1", "q2", "s"]), schema)
    red = reduction(inst)
    assert red.n_rows == 2 * len(rows) ** 2
    worst = _vd_by_brute_force(rows)
    assert max(contexts(red, closed=False, exact=True, measures=["RD"])["RD"]) == worst
    assert min(contexts(red, closed=False, exact=True, measures=["RD"])["RD"]) >= 0
    for level in (worst, worst - Fraction(1, 10**6)) if worst > 0 else (worst,):
        close = fa.verify(inst, _identity(inst), [fa.TCloseness(level)], metrics=False).passed
        protective = fa.verify(red, _identity(red), [fa.AlphaProtection("RD", level)], metrics=False).passed
        assert close == protective == (level == worst)


def test_reduction_bad_input():
    inst = _r11_table()
    with pytest.raises(InvalidParameterError, match="max_rows=100"):
        reduction(inst, max_rows=100)
    with pytest.raises(InvalidParameterError, match="'max_rows' parameter of reduction"):
        reduction(inst, max_rows=0)
    with pytest.raises(InvalidParameterError, match="'attribute' parameter of reduction_counts"):
        reduction_counts(inst, attribute="q1")
    # Columns outside instance.table: a weight and an ignored attribute.
    extra = inst.table.assign(w=1.0, note="x")
    side = fa.Instance(extra, fa.Schema([*inst.schema, fa.Attribute("w", role="weight", kind="numeric"),
                                         fa.Attribute("note", role="ignore")]))
    for name in ("w", "note"):
        with pytest.raises(InvalidParameterError, match="'attribute' parameter of reduction_counts"):
            reduction_counts(side, attribute=name)
        with pytest.raises(InvalidParameterError, match="'attribute' parameter of reduction"):
            reduction(side, attribute=name)
    none = fa.Instance(inst.table, fa.Schema([fa.Attribute("q1"), fa.Attribute("s", role="insensitive")]))
    with pytest.raises(InvalidParameterError, match="needs the sensitive attribute"):
        reduction(none)
    clash = fa.Instance(inst.table.rename(columns={"q1": "group"}),
                        fa.Schema([fa.Attribute("group"), fa.Attribute("s", role="sensitive")]))
    with pytest.raises(SchemaError, match="rename the quasi-identifier"):
        reduction(clash)
    with pytest.raises(InvalidParameterError, match="must be an Instance"):
        reduction(inst.table)
