"""Fairness properties, group units and suppression policies in the comparison, on the
toy data of Dewri et al. (docs/papers.md) (the goldens of tests/models/test_fairness.py)."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.bench.compare import CompareConfig, compare_releases
from fairanon.bench.quality import PROPERTIES, PropertyContext
from fairanon.exceptions import InvalidParameterError
from fairanon.instances.datasets import dewri_releases
from fairanon.models import metrics as M

CONTEXT = PropertyContext(n_rows=10, n_qi=3, n_sensitive=6)
SEX = ["M", "F", "F", "M", "F", "M", "F", "M", "M", "F"]
LOAN = ["yes", "no", "no", "yes", "yes", "no", "no", "yes", "yes", "yes"]
SIGMA = [
    fa.DiversityConstraint({"Marital status": "CF-Spouse"}, 1, 2),
    fa.DiversityConstraint({"Zip": "13250"}, 1, 2),
    fa.DiversityConstraint({"Marital status": "Separated"}, 1, 3),
]


def _release(table):
    return fa.Release(table, groups=np.zeros(len(table), dtype=int))


@pytest.fixture(scope="module")
def fair():
    base = fa.load("dewri_t1")
    table = base.table.assign(Sex=SEX, Loan=LOAN)
    schema = fa.Schema(
        list(base.schema.attributes)
        + [
            fa.Attribute("Sex", role="protected", protected=("F",)),
            fa.Attribute("Loan", role="decision", negative="no"),
        ]
    )
    inst = fa.Instance(table, schema, "fair")
    vectors = {}
    for name, rel in dewri_releases().items():
        rel = _release(rel.assign(Sex=SEX, Loan=LOAN))
        vectors[name] = M.fairness_vectors(inst, rel, measure="elift", exact=True)
    return vectors


def _pair(c, prop, first, second):
    pw = c.pairwise
    return pw[(pw["property"] == prop) & (pw["first"] == first) & (pw["second"] == second)].iloc[0]


def test_alpha_compared_with_infinity_at_the_cap(fair):
    c = compare_releases(fair, CONTEXT, CompareConfig(properties=("alpha_ER",)))
    assert c.metadata["orientation"]["alpha_ER"]["upper"] == 11  # N + 1 flips the caps to 0
    # T4 is fairer on records 1, 4, 8 (4 < inf), T3a on record 3 (3/2 < 4).
    row = _pair(c, "alpha_ER", "T4", "T3a")
    assert (row["W12"], row["W21"], row["ties"]) == (3, 1, 6)
    assert row["P_cov"] == F(9, 10) and row["dominance"] == "INCOMPARABLE"
    assert _pair(c, "alpha_ER", "T3a", "T3b")["dominance"] == "EQUAL"
    assert c.pareto["alpha_ER"] == ["T3a", "T3b", "T4"]
    assert c.rankings["alpha_ER", "cov"].order[0] == "T4"
    unary = c.unary.set_index("release")
    assert unary.loc["T4", "max"] == 4 and unary.loc["T3a", "max"] == 11
    assert np.isnan(unary.loc["T4", "p_rank"])  # no ideal vector for a discrimination measure


@pytest.fixture(scope="module")
def diversity():
    inst = fa.load("dewri_t1")
    groups = {1: 0, 4: 0, 2: 1, 9: 1, 3: 2, 8: 2, 5: 3, 6: 3, 7: 4, 10: 4}
    table = inst.table.copy()
    for col in ("Zip", "Age", "Marital status"):
        values = table[col].astype(str)
        table[col] = (
            values.groupby(pd.Series(groups))
            .transform(lambda v: v.iloc[0] if v.nunique() == 1 else "*")
            .reindex(table.index)
        )
    releases = {"S": _release(table), "T3a": _release(dewri_releases()["T3a"])}
    tuples = {
        n: M.fairness_vectors(inst, r, constraints=SIGMA, exact=True) for n, r in releases.items()
    }
    groups_ = {
        n: M.fairness_vectors(inst, r, constraints=SIGMA, unit="group", exact=True)
        for n, r in releases.items()
    }
    return tuples, groups_


@pytest.mark.parametrize("unit, n", [("tuple", 6), ("group", 3)])
def test_diversity_compared_per_record_or_per_group(diversity, unit, n):
    tuples, groups = diversity
    c = compare_releases(tuples, CONTEXT, CompareConfig(unit=unit), groups=groups)
    assert c.metadata["defined"]["div_share"] == {
        "unit": unit,
        "compared": n,
        "total": 10 if unit == "tuple" else 3,
    }
    row = _pair(c, "div_share", "S", "T3a")
    assert row["dominance"] == "BETTER" and row["W12"] == n and row["P_cov"] == 1
    # Per record the group of Separated weighs 3 (records 2, 9, 10), per group 1.
    mean = c.unary.set_index(["property", "release"]).loc[("div_share", "S"), "mean"]
    assert mean == (F(8, 9) if unit == "group" else F(5, 6))
    assert c.pareto["div_share"] == ["S"]


def test_long_form_and_files(diversity, tmp_path):
    tuples, groups = diversity
    c = compare_releases(tuples, CONTEXT, CompareConfig(unit="group"), groups=groups)
    long = c.long_form()
    assert list(long.columns) == ["run", "record_id", "property", "value"]
    assert len(long) == 2 * 6 and set(long["property"]) == {"div_share"}
    s = long[(long["run"] == "S") & (long["record_id"] == 10)]["value"].item()
    assert s == pytest.approx(2 / 3)
    c.write(str(tmp_path))
    read = pd.read_parquet(tmp_path / "properties.parquet")
    pd.testing.assert_frame_equal(read, long)
    grouped = pd.read_parquet(tmp_path / "group_properties.parquet")
    assert list(grouped.columns) == ["run", "group", "property", "value"]
    assert sorted(grouped["group"].unique()) == [
        "Marital status[CF-Spouse]",
        "Marital status[Separated]",
        "Zip[13250]",
    ]


def test_excluded_suppressed_records_are_left_out_of_every_comparison():
    inst = fa.load("dewri_t1")
    table = dewri_releases()["T3a"].copy()
    table.loc[[6, 10], ["Zip", "Age", "Marital status"]] = "*"
    releases = {"T3a": _release(dewri_releases()["T3a"]), "T3a-supp": _release(table)}
    vectors = {
        n: M.property_vectors(inst, r, exact=True, suppression="exclude")
        for n, r in releases.items()
    }
    c = compare_releases(vectors, CONTEXT, CompareConfig(properties=("size", "loss")))
    assert c.metadata["defined"]["size"] == {"unit": "tuple", "compared": 8, "total": 10}
    row = _pair(c, "size", "T3a", "T3a-supp")  # {5, 7} shrank from 4 to 2
    assert (row["W12"], row["W21"], row["ties"]) == (2, 0, 6)
    assert row["dominance"] == "BETTER"
    long = c.long_form()
    assert set(long[long["run"] == "T3a-supp"]["record_id"]) == {1, 2, 3, 4, 5, 7, 8, 9}
    # As population, the suppressed records get N: T3a-supp now wins on them.
    vectors = {
        n: M.property_vectors(inst, r, exact=True, suppression="as_population")
        for n, r in releases.items()
    }
    c = compare_releases(vectors, CONTEXT, CompareConfig(properties=("size",)))
    assert _pair(c, "size", "T3a", "T3a-supp")["dominance"] == "INCOMPARABLE"


def test_properties_registry_and_config():
    for m in ("RD", "RR", "OR", "ED", "ER", "EC", "RC"):
        spec = PROPERTIES[f"alpha_{m}"]
        assert spec.family == "fairness" and spec.direction == (
            "higher" if m in ("RC", "EC") else "lower"
        )
    assert PROPERTIES["div_share"].group and PROPERTIES["size"].family == "privacy"
    with pytest.raises(InvalidParameterError, match="unit"):
        CompareConfig(unit="record")
    with pytest.raises(InvalidParameterError, match="by"):
        CompareConfig(by="method")
    assert (
        CompareConfig.from_dict({"unit": "group", "by": "requirements"}).to_dict()["by"]
        == "requirements"
    )


BASE = {
    "instances": [{"dataset": "diva_table1"}],
    "requirements": [{"k_anonymity": 2}, [{"k_anonymity": 2}, {"diversity": "ETH(Asian) [2, 5]"}]],
    "algorithms": ["mondrian"],
}


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"metrics": {"suppression": "drop"}}, "metrics.suppression"),
        ({"metrics": {"fairness": {"measure": "lift"}}}, "measure"),
        ({"metrics": {"fairness": {"alpha": 1}}}, "metrics.fairness"),
        ({"metrics": {"fairness": {"diversity": ["k_anonymity"]}}}, "diversity"),
        ({"metrics": {"fairness": {"min_support": 0}}}, "min_support"),
        ({"compare": {"unit": "record"}}, "compare.unit"),
        ({"compare": {"by": "method"}}, "compare.by"),
    ],
)
def test_suite_settings_are_checked(extra, message):
    from fairanon.bench import Suite

    with pytest.raises(InvalidParameterError, match=message):
        Suite.from_dict({**BASE, **extra})


def test_suite_measures_every_constraint_of_the_suite():
    from fairanon.bench import Suite

    suite = Suite.from_dict(BASE)
    # The k-only runs measure the constraint of the other requirement set too.
    assert suite.metrics["fairness"]["diversity"] == [
        {"diversity": {"target": {"ETH": "Asian"}, "lower": 2, "upper": 5}}
    ]
    plain = Suite.from_dict({**BASE, "requirements": [{"k_anonymity": 2}]})
    assert "fairness" not in plain.metrics  # run keys of suites without fairness unchanged
    given = Suite.from_dict(
        {**BASE, "metrics": {"fairness": {"measure": "slift", "diversity": []}}}
    )
    assert given.metrics["fairness"] == {"measure": "RR", "min_support": None, "diversity": []}
