"""Comparing releases end to end on the comparison paper's golden fixture (docs/papers.md,
Dewri et al.): T1 with the releases T3a, T3b and T4, read through the verifier's property
vectors."""

import json
import math
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.bench.compare import CompareConfig, RunRelease, compare_releases, compare_runs
from fairanon.bench.quality import PropertyContext
from fairanon.exceptions import InvalidParameterError
from fairanon.instances.datasets import dewri_releases
from fairanon.models.metrics import property_vectors

CONTEXT = PropertyContext(n_rows=10, n_qi=3, n_sensitive=6)
MULTI = (
    {
        "procedure": "wtd",
        "name": "wtd",
        "properties": ["size", "util_paper"],
        "weights": [0.5, 0.5],
    },
    {"procedure": "lex", "name": "lex", "properties": ["size", "util_paper"], "eps": [0, 0]},
    {"procedure": "lex", "name": "lex eps", "properties": ["size", "util_paper"], "eps": [0.8, 0]},
    {"procedure": "goal", "name": "goal", "properties": ["size", "util_paper"], "goals": [1, 1]},
    {
        "procedure": "goal_unary",
        "name": "goal unary",
        "properties": ["size"],
        "index": "mean",
        "goals": [10],
    },
)


@pytest.fixture(scope="module")
def golden():
    inst = fa.load("dewri_t1")
    vectors = {}
    for name, table in dewri_releases().items():
        release = fa.Release(
            table, groups=np.zeros(len(table), dtype=int), provenance={"method": "paper"}
        )
        k = 4 if name == "T4" else 3
        report = fa.verify(inst, release, [fa.KAnonymity(k)])
        assert report.passed, str(report)
        vectors[name] = property_vectors(inst, release, exact=True, numeric_loss="values")
    return compare_releases(vectors, CONTEXT, CompareConfig(multi=MULTI), instance="dewri_t1")


def _pair(c, prop, first, second):
    rows = c.pairwise[
        (c.pairwise["property"] == prop)
        & (c.pairwise["first"] == first)
        & (c.pairwise["second"] == second)
    ]
    assert len(rows) == 1
    return rows.iloc[0]


def _unary(c, prop, release):
    rows = c.unary[(c.unary["property"] == prop) & (c.unary["release"] == release)]
    return rows.iloc[0]


def test_golden_unary_table(golden):
    for name, k, mean, dm, rank in (
        ("T3a", 3, F(17, 5), 34, 20.928),
        ("T3b", 3, F(29, 5), 58, 14.491),
        ("T4", 4, F(26, 5), 52, 15.492),
    ):
        row = _unary(golden, "size", name)
        assert (row["min"], row["mean"], row["sum"]) == (k, mean, dm)
        assert round(row["p_rank"], 3) == rank and row["d_max"] == 10
    for name, mean, rank in (
        ("T3a", F(44, 25), 3.964),
        ("T3b", F(193, 150), 5.634),
        ("T4", F(12, 25), 7.975),
    ):
        row = _unary(golden, "util_paper", name)
        assert row["mean"] == mean and round(row["p_rank"], 3) == rank and row["d_max"] == 3
    assert [_unary(golden, "ldist", n)["min"] for n in ("T3a", "T3b", "T4")] == [2, 2, 3]
    gini = {n: _unary(golden, "size", n)["gini"] for n in ("T3a", "T3b", "T4")}
    assert gini == {"T3a": F(6, 85), "T3b": F(21, 145), "T4": F(6, 65)}


@pytest.mark.parametrize(
    "first, second, cov, spr, binary, hv, dom",
    [
        ("T3a", "T3b", F(3, 10), 0, 0, 0, "WORSE"),
        ("T3a", "T4", 0, 0, 0, 0, "WORSE"),
        ("T3b", "T3a", 1, 24, 7, 22049037, "BETTER"),
        ("T3b", "T4", F(7, 10), 9, 7, 17196813, "INCOMPARABLE"),
        ("T4", "T3a", 1, 18, 10, 11757312, "BETTER"),
        ("T4", "T3b", F(3, 10), 3, 3, 6905088, "INCOMPARABLE"),
    ],
)
def test_golden_pairwise_class_size(golden, first, second, cov, spr, binary, hv, dom):
    row = _pair(golden, "size", first, second)
    assert (row["P_cov"], row["P_spr"], row["P_binary"], row["dominance"]) == (
        cov,
        spr,
        binary,
        dom,
    )
    assert row["log_P_hv"] == (pytest.approx(math.log(hv)) if hv else -math.inf)


@pytest.mark.parametrize(
    "first, second, cov, spr",
    [
        ("T3a", "T3b", 1, F(71, 15)),
        ("T3a", "T4", 1, F(64, 5)),
        ("T3b", "T3a", F(3, 10), 0),
        ("T3b", "T4", 1, F(121, 15)),
        ("T4", "T3a", 0, 0),
        ("T4", "T3b", 0, 0),
    ],
)
def test_golden_pairwise_utility(golden, first, second, cov, spr):
    row = _pair(golden, "util_paper", first, second)
    assert (row["P_cov"], row["P_spr"]) == (cov, spr)


def test_privacy_and_utility_orders_run_opposite(golden):
    """T3a ≻ T3b ≻ T4 on utility; T3b and T4 dominate T3a on class size, T3b ∥ T4."""
    assert golden.pareto["size"] == ["T3b", "T4"]
    assert golden.pareto["util_paper"] == ["T3a"]
    assert golden.rankings["util_paper", "cov"].order == ("T3a", "T3b", "T4")
    assert golden.rankings["size", "cov"].order == ("T3b", "T4", "T3a")
    assert golden.rankings["size", "rank"].order == ("T3b", "T4", "T3a")
    assert _pair(golden, "size", "T3b", "T3a")["verdict_min"] == "TIE"
    assert golden.pareto["joint"] == ["T3a", "T3b", "T4"]


def test_golden_multi_property(golden):
    multi = golden.multi
    row = multi[
        (multi["procedure"] == "wtd") & (multi["first"] == "T3a") & (multi["second"] == "T3b")
    ].iloc[0]
    assert (row["value_first"], row["value_second"], row["verdict"]) == (
        F(13, 20),
        F(13, 20),
        "TIE",
    )
    row = multi[
        (multi["procedure"] == "lex") & (multi["first"] == "T3a") & (multi["second"] == "T3b")
    ].iloc[0]
    assert row["verdict"] == "SECOND_BETTER"
    row = multi[
        (multi["procedure"] == "lex eps") & (multi["first"] == "T3a") & (multi["second"] == "T3b")
    ].iloc[0]
    assert (row["value_first"], row["value_second"], row["verdict"]) == (
        2,
        math.inf,
        "FIRST_BETTER",
    )
    row = multi[
        (multi["procedure"] == "goal") & (multi["first"] == "T3a") & (multi["second"] == "T3b")
    ].iloc[0]
    assert (row["value_first"], row["value_second"], row["verdict"]) == (
        F(49, 100),
        F(49, 100),
        "TIE",
    )
    # Unary GOAL with goal mean size 10: (10 − 3.4)², (10 − 5.8)², (10 − 5.2)².
    assert golden.goal_scores["goal unary"] == {
        "T3a": F(1089, 25),
        "T3b": F(441, 25),
        "T4": F(576, 25),
    }
    # ε = (0.8, 0) on (size, utility) lets utility decide, which runs T3a ▶ T3b ▶ T4 ▶ T3a.
    assert "T3a ▶ T3b ▶ T4 ▶ T3a" in golden.multi_rankings["lex eps"].describe_cycles()


def test_coverage_cycle_is_reported_by_the_comparison():
    vectors = {
        n: pd.DataFrame({"size": s})
        for n, s in (
            ("A", [1, 2, 2, 3, 3, 3]),
            ("B", [3, 1, 2, 2, 3, 3]),
            ("C", [2, 3, 2, 1, 3, 3]),
        )
    }
    c = compare_releases(vectors, PropertyContext(n_rows=6, n_qi=1))
    assert ("size:cov", "A ▶ B ▶ C ▶ A") in c.cycles()
    assert not c.rankings["size", "cov"].transitive
    assert c.rankings["size", "mean"].transitive and c.rankings["size", "hv"].transitive
    table = c.ranking_table()
    assert table["size:cov"].tolist() == [0, 0, 0]


def test_vectors_align_by_record_id_not_row_order():
    a = pd.DataFrame({"size": [3, 3, 3, 4, 4, 4, 4]}, index=range(7))
    b = pd.DataFrame({"size": [4, 4, 4, 4, 3, 3, 3]}, index=range(7))
    shuffled = b.iloc[::-1]
    c1 = compare_releases({"a": a, "b": b}, PropertyContext(7, 1))
    c2 = compare_releases({"a": a, "b": shuffled}, PropertyContext(7, 1))
    assert c1.pairwise.equals(c2.pairwise)
    with pytest.raises(InvalidParameterError, match="same records"):
        compare_releases({"a": a, "b": b.set_axis(range(1, 8))}, PropertyContext(7, 1))


def test_write(golden, tmp_path):
    golden.write(str(tmp_path))
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["orientation"]["risk"] == {
        "direction": "lower",
        "transform": "flip",
        "upper": 1,
        "d_max": 1,
        "label": "PV-reid: re-identification risk 1/s",
    }
    assert report["rankings"]["size:cov"]["order"] == ["T3b", "T4", "T3a"]
    pairwise = pd.read_csv(tmp_path / "pairwise.csv")
    row = pairwise[
        (pairwise["property"] == "size")
        & (pairwise["first"] == "T3b")
        & (pairwise["second"] == "T3a")
    ]
    assert row["P_cov"].item() == 1.0 and row["P_spr"].item() == 24
    ranking = pd.read_csv(tmp_path / "ranking.csv", index_col=0)
    assert ranking.loc["T3b", "size:cov"] == 2


# Spec §2.3 per-tuple vectors, record ids 1..10.
GOLDEN_VECTORS = {
    "T3a": {
        "size": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4],
        "sfreq": [2, 2, 1, 2, 2, 1, 2, 1, 2, 1],
        "ldist": [2, 2, 2, 2, 3, 3, 3, 2, 2, 3],
        "adisc": [
            F(2, 3),
            F(2, 3),
            F(1, 3),
            F(2, 3),
            F(1, 2),
            F(1, 4),
            F(1, 2),
            F(1, 3),
            F(2, 3),
            F(1, 4),
        ],
        "util_2dp": [2.03, 1.7, 1.7, 2.03, 1.6, 1.6, 1.6, 2.03, 1.7, 1.6],
        "loss_classes": {1: F(28, 45), 2: F(46, 45), 5: F(17, 15)},
    },
    "T3b": {
        "size": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7],
        "sfreq": [2, 3, 1, 2, 2, 1, 2, 1, 3, 3],
        "ldist": [2, 4, 4, 2, 4, 4, 4, 2, 4, 4],
        "adisc": [
            F(2, 3),
            F(3, 7),
            F(1, 7),
            F(2, 3),
            F(2, 7),
            F(1, 7),
            F(2, 7),
            F(1, 3),
            F(3, 7),
            F(3, 7),
        ],
        "util_2dp": [2.03, 0.97, 0.97, 2.03, 0.97, 0.97, 0.97, 2.03, 0.97, 0.97],
        "loss_classes": {1: F(28, 45), 2: F(28, 15)},
    },
    "T4": {
        "size": [4, 6, 4, 4, 6, 6, 6, 4, 6, 6],
        "sfreq": [2, 3, 1, 2, 2, 1, 2, 1, 3, 3],
        "ldist": [3] * 10,
        "adisc": [
            F(1, 2),
            F(1, 2),
            F(1, 4),
            F(1, 2),
            F(1, 3),
            F(1, 6),
            F(1, 3),
            F(1, 4),
            F(1, 2),
            F(1, 2),
        ],
        "util_2dp": [0.6, 0.4, 0.6, 0.6, 0.4, 0.4, 0.4, 0.6, 0.4, 0.4],
        "loss_classes": {1: F(7, 3), 2: F(23, 9)},
    },
}


@pytest.mark.parametrize("name", ["T3a", "T3b", "T4"])
def test_golden_per_tuple_vectors(name):
    inst = fa.load("dewri_t1")
    table = dewri_releases()[name]
    release = fa.Release(
        table, groups=np.zeros(len(table), dtype=int), provenance={"method": "paper"}
    )
    assert fa.verify(inst, release, [fa.KAnonymity(4 if name == "T4" else 3)]).passed
    pv = property_vectors(inst, release, exact=True, numeric_loss="values").loc[list(range(1, 11))]
    gold = GOLDEN_VECTORS[name]
    for prop in ("size", "sfreq", "ldist", "adisc"):
        assert pv[prop].tolist() == gold[prop], prop
    assert pv["risk"].tolist() == [F(1, s) for s in gold["size"]]
    assert [round(float(u), 2) for u in pv["util_paper"]] == gold["util_2dp"]
    for record, loss in gold["loss_classes"].items():
        assert pv.loc[record, "loss"] == loss


@pytest.mark.parametrize(
    "first, second, verdicts",
    [
        # min, mean, rank, cov, spr, hv on PV-size
        (
            "T3b",
            "T3a",
            ("TIE", "FIRST_BETTER", "FIRST_BETTER", "FIRST_BETTER", "FIRST_BETTER", "FIRST_BETTER"),
        ),
        ("T4", "T3a", ("FIRST_BETTER",) * 6),
        (
            "T3b",
            "T4",
            (
                "SECOND_BETTER",
                "FIRST_BETTER",
                "FIRST_BETTER",
                "FIRST_BETTER",
                "FIRST_BETTER",
                "FIRST_BETTER",
            ),
        ),
    ],
)
def test_golden_pairwise_verdicts_on_class_size(golden, first, second, verdicts):
    row = _pair(golden, "size", first, second)
    got = tuple(row[f"verdict_{c}"] for c in ("min", "mean", "rank", "cov", "spr", "hv"))
    assert got == verdicts
    back = _pair(golden, "size", second, first)
    swap = {"FIRST_BETTER": "SECOND_BETTER", "SECOND_BETTER": "FIRST_BETTER", "TIE": "TIE"}
    assert tuple(
        back[f"verdict_{c}"] for c in ("min", "mean", "rank", "cov", "spr", "hv")
    ) == tuple(swap[v] for v in verdicts)


def test_compare_runs_groups_releases_held_in_memory():
    """compare_runs on the paper's releases of T1: the context read from the data (10
    records, 3 quasi-identifiers, 6 diseases), the class-size coverage of the paper's
    pairs, one comparison per instance or per requirement set, one per data."""
    inst = fa.load("dewri_t1")
    runs = [
        RunRelease(name, "dewri_t1", inst, ({"k_anonymity": {"k": 4 if name == "T4" else 3}},),
                   fa.Release(table, groups=np.zeros(len(table), dtype=int), provenance={"method": "paper"}))
        for name, table in dewri_releases().items()
    ]
    (c,) = compare_runs(runs).values()
    assert c.metadata["context"] == {"n_rows": 10, "n_qi": 3, "n_sensitive": 6}
    for first, second, cov in (("T3a", "T3b", F(3, 10)), ("T3b", "T4", F(7, 10)), ("T4", "T3b", F(3, 10))):
        assert _pair(c, "size", first, second)["P_cov"] == cov
    by_set = compare_runs(runs, CompareConfig(by="requirements"))
    assert {n: x.releases for n, x in by_set.items()} == {
        "dewri_t1 · 3-anonymity": ["T3a", "T3b"], "dewri_t1 · 4-anonymity": ["T4"]}
    apart = compare_runs([runs[0], RunRelease("T4", "other data", inst, runs[2].requirements, runs[2].release)])
    assert {n: x.releases for n, x in apart.items()} == {"dewri_t1": ["T3a"], "other data": ["T4"]}
    with pytest.raises(InvalidParameterError, match="one name per release"):
        compare_runs([runs[0], runs[0]])
