"""Fairness property vectors and the suppression policies on Dewri et al.'s toy
data (§2.2–2.3: T1 with the releases T3a, T3b, T4), with exact expected values.

The toy table has no protected or decision attribute, so the alpha-protection goldens
extend it [X] with Sex (F protected) and a loan decision (no negative); the diversity
goldens use three constraints on T1 and a release by local suppression; the
suppression goldens use T3a with records 6 and 10 suppressed. Every value was derived
by hand from the class structure and is cross-checked against a brute-force
enumeration of the contexts written independently here.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.instances.datasets import dewri_releases
from fairanon.models import measures as MS
from fairanon.models import metrics as M

INF = math.inf
SEX = ["M", "F", "F", "M", "F", "M", "F", "M", "M", "F"]
LOAN = ["yes", "no", "no", "yes", "yes", "no", "no", "yes", "yes", "yes"]


@pytest.fixture(scope="module")
def t1():
    return fa.load("dewri_t1")


@pytest.fixture(scope="module")
def t1_fair(t1):
    """T1 with Sex (protected: F) and Loan (decision, negative: no) [X]."""
    table = t1.table.copy()
    table["Sex"] = SEX
    table["Loan"] = LOAN
    schema = fa.Schema(
        list(t1.schema.attributes)
        + [
            fa.Attribute("Sex", role="protected", protected=("F",)),
            fa.Attribute("Loan", role="decision", negative="no"),
        ]
    )
    return fa.Instance(table, schema, "dewri_t1_fair")


def _release(table: pd.DataFrame) -> fa.Release:
    return fa.Release(table, groups=np.zeros(len(table), dtype=int), provenance={"method": "paper"})


@pytest.fixture(scope="module")
def fair_releases(t1_fair):
    out = {}
    for name, table in dewri_releases().items():
        table = table.copy()
        table["Sex"] = SEX
        table["Loan"] = LOAN
        out[name] = _release(table)
    return out


# ---------------------------------------------------------------------- alpha-protection
#: Per record 1..10, the worst elift (ER) and risk difference (RD) of the contexts of
#: its class. T3a/T3b: class {1, 4, 8} holds only unprotected records, all granted, so
#: its context has p = 0 and ER = p-/0 = inf (Ruggieri's tokenism); T4 puts record 3
#: (F, refused) with them: p1 = 1, p = 1/4, ER = 4. The whole table gives ER = (3/5) /
#: (2/5) = 3/2 and RD = 3/5 - 1/5 = 2/5; T3a's class {2, 3, 9} gives RD = 1 - 0 = 1.
ALPHA = {
    "ER": {
        "T3a": [INF, F(3, 2), F(3, 2), INF, F(3, 2), F(3, 2), F(3, 2), INF, F(3, 2), F(3, 2)],
        "T3b": [INF, F(3, 2), F(3, 2), INF, F(3, 2), F(3, 2), F(3, 2), INF, F(3, 2), F(3, 2)],
        "T4": [4, F(3, 2), 4, 4, F(3, 2), F(3, 2), F(3, 2), 4, F(3, 2), F(3, 2)],
    },
    "RD": {
        "T3a": [F(2, 5), 1, 1, F(2, 5), F(2, 5), F(2, 5), F(2, 5), F(2, 5), 1, F(2, 5)],
        "T3b": [F(2, 5)] * 10,
        "T4": [1, F(2, 5), 1, 1, F(2, 5), F(2, 5), F(2, 5), 1, F(2, 5), F(2, 5)],
    },
}


def _brute_alpha(release: fa.Release, instance, measure: str, min_support=None) -> list:
    """Every itemset of released values of Zip, Age and Marital status, by hand."""
    attrs = ["Zip", "Age", "Marital status"]
    records = [
        (
            tuple(str(v) for v in row[attrs]),
            row["Sex"] in instance.schema["Sex"].protected,
            row["Loan"] == "no",
        )
        for _, row in release.table.iterrows()
    ]
    neg, total = sum(g for _, _, g in records), len(records)
    larger_worse = measure not in ("RC", "EC")
    cap = M.infinite_cap(measure, total)
    out = []
    for values, _, _ in records:
        worst = None
        for r in range(4):
            for subset in itertools.combinations(range(3), r):
                rows = [(p, g) for v, p, g in records if all(v[j] == values[j] for j in subset)]
                if min_support and len(rows) < min_support:
                    continue
                cells = [
                    sum(p and g for p, g in rows),
                    sum(p and not g for p, g in rows),
                    sum(g and not p for p, g in rows),
                    sum(not p and not g for p, g in rows),
                ]
                value = MS.discrimination_exact(measure, *cells, neg, total)
                value = F(cap) if value == INF else value
                if worst is None or (value > worst if larger_worse else value < worst):
                    worst = value
        out.append(worst)
    return out


@pytest.mark.parametrize("measure", ["ER", "RD"])
@pytest.mark.parametrize("name", ["T3a", "T3b", "T4"])
def test_alpha_golden_on_the_toy_table(t1_fair, fair_releases, measure, name):
    vec = M.alpha_vector(t1_fair, fair_releases[name], measure, exact=True)
    assert vec.name == f"alpha_{measure}"
    assert list(vec.index) == list(range(1, 11))
    gold = [F(11) if v == INF else F(v) for v in ALPHA[measure][name]]  # inf is N + 1
    assert list(vec) == gold
    floats = M.alpha_vector(t1_fair, fair_releases[name], measure)
    assert np.allclose(floats.to_numpy(dtype=float), [float(v) for v in gold])


@pytest.mark.parametrize("name", ["T3a", "T3b", "T4"])
def test_the_worst_record_is_the_verifiers_alpha(t1_fair, fair_releases, name):
    for measure in ("ER", "RD", "RR", "OR", "ED", "EC", "RC"):
        vec = M.alpha_vector(t1_fair, fair_releases[name], measure, exact=True)
        report = fa.verify(t1_fair, fair_releases[name], [fa.AlphaProtection(measure, 1000)])
        achieved = report.checks[-1].achieved
        worst = max(vec) if measure not in ("RC", "EC") else min(vec)
        cap = M.infinite_cap(measure, 10)
        assert worst == (cap if achieved == INF else achieved), (measure, name)


@pytest.mark.parametrize("min_support", [None, 3, 4, 6])
@pytest.mark.parametrize("measure", ["ER", "RD", "RR", "OR", "ED", "EC", "RC"])
def test_alpha_matches_brute_force(t1_fair, fair_releases, measure, min_support):
    for release in fair_releases.values():
        vec = M.alpha_vector(t1_fair, release, measure, min_support=min_support, exact=True)
        assert list(vec) == _brute_alpha(release, t1_fair, measure, min_support)


def test_alpha_is_aligned_by_record_id(t1_fair, fair_releases):
    rel = fair_releases["T4"]
    shuffled = _release(rel.table.iloc[::-1])
    a = M.alpha_vector(t1_fair, rel, "elift", exact=True)
    b = M.alpha_vector(t1_fair, shuffled, "elift", exact=True)
    pd.testing.assert_series_equal(a, b)


def test_alpha_needs_protected_and_decision(t1, fair_releases, t1_fair):
    with pytest.raises(IncompatibleRequirementError, match="protected and a decision"):
        M.alpha_vector(t1, _release(dewri_releases()["T3a"]))
    with pytest.raises(InvalidParameterError, match="measure"):
        M.alpha_vector(t1_fair, fair_releases["T3a"], "lift")
    with pytest.raises(InvalidParameterError, match="min_support"):
        M.alpha_vector(t1_fair, fair_releases["T3a"], min_support=11)
    # Without a protected attribute fairness_vectors leaves alpha out instead.
    assert list(M.fairness_vectors(t1, _release(dewri_releases()["T3a"])).columns) == []


# ---------------------------------------------------------------------- diversity
SIGMA = [
    fa.DiversityConstraint({"Marital status": "CF-Spouse"}, 1, 2),  # targets 1, 4
    fa.DiversityConstraint({"Zip": "13250"}, 1, 2),  # targets 7, 10
    fa.DiversityConstraint({"Marital status": "Separated"}, 1, 3),  # targets 2, 9, 10
]


@pytest.fixture(scope="module")
def suppressed_release(t1):
    """Local suppression (DIVA's semantics) of the partition {1,4} {2,9} {3,8} {5,6}
    {7,10}: a class keeps the values its records share, the rest is ``*``."""
    groups = {1: 0, 4: 0, 2: 1, 9: 1, 3: 2, 8: 2, 5: 3, 6: 3, 7: 4, 10: 4}
    table = t1.table.copy()
    for col in ("Zip", "Age", "Marital status"):
        values = table[col].astype(str)
        common = values.groupby(pd.Series(groups)).transform(
            lambda v: v.iloc[0] if v.nunique() == 1 else "*"
        )
        table[col] = common.reindex(table.index)
    return fa.Release(table, groups=[groups[i] for i in table.index], provenance={"method": "hand"})


def test_diversity_golden_on_the_toy_table(t1, suppressed_release):
    rel = suppressed_release
    assert rel.table.loc[1, "Zip"] == "13053" and rel.table.loc[10, "Marital status"] == "*"
    report = fa.verify(t1, rel, [fa.KAnonymity(2), *SIGMA])
    assert report.passed, str(report)
    groups = M.diversity_vector(t1, rel, SIGMA, unit="group", exact=True)
    assert groups.to_dict() == {
        "Marital status[CF-Spouse]": F(1),
        "Zip[13250]": F(1),
        "Marital status[Separated]": F(2, 3),  # 10 shares its class with Divorced 7
    }
    # Visible counts agree with the verifier's.
    for req, share in zip(SIGMA, groups):
        targets = {"CF-Spouse": 2, "13250": 2, "Separated": 3}[req.target[0][1]]
        assert report[str(req)].achieved == share * targets
    per_record = M.diversity_vector(t1, rel, SIGMA, exact=True)
    assert per_record.to_dict() == {
        1: 1,
        2: F(2, 3),
        3: None,
        4: 1,
        5: None,
        6: None,
        7: 1,
        8: None,
        9: F(2, 3),
        10: F(2, 3),
    }
    floats = M.diversity_vector(t1, rel, SIGMA)
    assert floats.isna().tolist() == [v is None for v in per_record]


@pytest.mark.parametrize("name", ["T3a", "T3b", "T4"])
def test_generalized_releases_keep_no_target_visible(t1, name):
    rel = _release(dewri_releases()[name])
    groups = M.diversity_vector(t1, rel, SIGMA, unit="group", exact=True)
    assert list(groups) == [0, 0, 0]
    frame = M.fairness_vectors(
        t1, rel, constraints=SIGMA + [fa.DiversityConstraint({"job": "x"}, 0, 1)]
    )
    assert list(frame.columns) == ["div_share"]  # the constraint on a missing attribute is skipped
    assert frame["div_share"].notna().sum() == 6  # records 1, 2, 4, 7, 9, 10


# ---------------------------------------------------------------------- suppression
@pytest.fixture(scope="module")
def t3a_suppressed():
    """T3a with records 6 and 10 suppressed: classes {1,4,8} {2,3,9} {5,7} and the
    suppressed class {6,10}."""
    table = dewri_releases()["T3a"].copy()
    table.loc[[6, 10], ["Zip", "Age", "Marital status"]] = "*"
    return _release(table)


#: Golden vectors of T3a with records 6 and 10 suppressed, per policy (record 1..10).
#: as_class: {6, 10} is a class (Spouse Absent, Separated: 2 distinct values);
#: as_population: their class is T1 (6 distinct values; Separated appears 3 times);
#: exclude: undefined.
SUPPRESSION = {
    "as_class": {
        "size": [3, 3, 3, 3, 2, 2, 2, 3, 3, 2],
        "risk": [F(1, 3)] * 4 + [F(1, 2)] * 3 + [F(1, 3)] * 2 + [F(1, 2)],
        "sfreq": [2, 2, 1, 2, 2, 1, 2, 1, 2, 1],
        "ldist": [2, 2, 2, 2, 1, 2, 1, 2, 2, 2],
        "tclose_6": F(3, 5),  # see test_as_class_tclose_of_the_suppressed_class
    },
    "as_population": {
        "size": [3, 3, 3, 3, 2, 10, 2, 3, 3, 10],
        "risk": [F(1, 3)] * 4 + [F(1, 2), F(1, 10), F(1, 2)] + [F(1, 3)] * 2 + [F(1, 10)],
        "sfreq": [2, 2, 1, 2, 2, 1, 2, 1, 2, 3],
        "ldist": [2, 2, 2, 2, 1, 6, 1, 2, 2, 6],
        "tclose_6": F(0),
    },
}


@pytest.mark.parametrize("policy", ["as_class", "as_population"])
def test_suppression_policies_golden(t1, t3a_suppressed, policy):
    pv = M.property_vectors(t1, t3a_suppressed, exact=True, suppression=policy)
    gold = SUPPRESSION[policy]
    for col in ("size", "risk", "sfreq", "ldist"):
        assert list(pv[col]) == gold[col], col
    assert pv.loc[6, "tclose"] == gold["tclose_6"] == pv.loc[10, "tclose"]
    assert pv.loc[6, "loss"] == pv.loc[10, "loss"] == 3  # every cell at the root
    assert pv.loc[6, "util_paper"] == 0
    # Records that are not suppressed read the same under every policy.
    plain = M.property_vectors(t1, t3a_suppressed, exact=True)
    kept = [1, 2, 3, 4, 5, 7, 8, 9]
    pd.testing.assert_frame_equal(pv.loc[kept], plain.loc[kept])


def test_as_class_tclose_of_the_suppressed_class(t1, t3a_suppressed):
    # {6, 10} holds Spouse Absent and Separated, half each; T1 has CF-Spouse 2/10,
    # Separated 3/10, Never Married 1/10, Divorced 2/10, Spouse Absent 1/10, Spouse
    # Present 1/10: EMD = ½ (2 + 2 + 1 + 2 + 4 + 1)/10 = 3/5.
    pv = M.property_vectors(t1, t3a_suppressed, exact=True)
    assert pv.loc[6, "tclose"] == F(3, 5)


def test_exclude_leaves_suppressed_records_undefined(t1, t3a_suppressed):
    pv = M.property_vectors(t1, t3a_suppressed, exact=True, suppression="exclude")
    assert pv.loc[[6, 10]].isna().all().all()
    assert list(pv["size"].dropna()) == [3, 3, 3, 3, 2, 2, 3, 3]
    floats = M.property_vectors(t1, t3a_suppressed, suppression="exclude")
    assert floats.loc[[6, 10]].isna().all().all() and floats.notna().sum().eq(8).all()


def test_suppression_summary_and_warning(t1, t3a_suppressed):
    summary = M.suppression_summary(t1, t3a_suppressed, k=3)
    assert summary == {
        "policy": "as_class",
        "suppressed": 2,
        "suppressed_classes": [2],
        "k": 3,
        "warning": summary["warning"],
    }
    assert "smaller than k = 3" in summary["warning"] and "as_class" in summary["warning"]
    assert M.suppression_summary(t1, t3a_suppressed, k=2)["warning"] is None
    assert M.suppression_summary(t1, t3a_suppressed, k=3, policy="as_population")["warning"] is None
    with pytest.warns(UserWarning, match="smaller than k = 3"):
        M.property_vectors(t1, t3a_suppressed, k=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M.property_vectors(t1, t3a_suppressed, k=3, suppression="exclude")
        M.property_vectors(t1, _release(dewri_releases()["T3a"]), k=3)
    clean = M.suppression_summary(t1, _release(dewri_releases()["T3a"]), k=3)
    assert (
        clean["suppressed"] == 0 and clean["suppressed_classes"] == [] and clean["warning"] is None
    )
    with pytest.raises(InvalidParameterError, match="suppression"):
        M.property_vectors(t1, t3a_suppressed, suppression="drop")
