"""Contexts of possible discrimination (Ruggieri Defs. 2-5, 17): every closed PND itemset
of a table or release with its support, 4-fold table, τ and measures, against hand
computations and against the verifier's α-protection."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.instances import datasets
from fairanon.instances.hierarchy import Hierarchy
from fairanon.models.contexts import CONTEXT_MEASURES, contexts, extremes
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
