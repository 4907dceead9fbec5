"""A small "which method for my data?" suite end to end: fairness properties in the
comparison (alpha-protection per record, diversity constraints per group), one
comparison per instance and requirement set, the verdicts in words at the top, and
every plot of the report decoded by headless Chromium."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from report_probe import CHROMIUM, boxes, images, png_size, probe, screenshot

from fairanon.bench import Suite, compare_results, load_suite, run_suite, write_report

# A suite of nine runs, each its own process: the quick suite of test_report.py keeps the
# benchmark's end-to-end path in the default run.
pytestmark = pytest.mark.slow

SUITES = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "suites")
SIGMA = ["ETH(Asian) [2, 5]", "ETH(African) [1, 3]", "CTY(Vancouver) [2, 4]"]
MINI = {
    "name": "mini-which",
    "time_limit": 30,
    "metrics": {"fairness": {"measure": "elift"}},
    "experiments": [
        {
            "name": "k",
            "instances": [{"dataset": "ruggieri_loan"}],
            "requirements": [{"name": "k", "set": [{"k_anonymity": 2}]}],
            "algorithms": ["mondrian", "kmember", "cpsat"],
        },
        {
            "name": "k+alpha",
            "instances": [{"dataset": "ruggieri_loan"}],
            "requirements": [
                {
                    "name": "k+alpha",
                    "set": [
                        {"k_anonymity": 2},
                        {"alpha_protection": {"measure": "elift", "alpha": 1.5}},
                    ],
                }
            ],
            "algorithms": ["dmondrian", "dsabre", "cpsat"],
        },
        {
            "name": "k+diversity",
            "instances": [{"dataset": "diva_table1"}],
            "requirements": [
                {
                    "name": "k+diversity",
                    "set": [{"k_anonymity": 2}] + [{"diversity": c} for c in SIGMA],
                }
            ],
            "algorithms": ["diva", "diva-exact", "cpsat"],
        },
    ],
    "compare": {"by": "requirements", "unit": "group"},
}
KINDS = ("size", "loss", "scatter", "coverage", "dominance", "tradeoff", "winmap")
NAMES = ["ruggieri_loan · k", "ruggieri_loan · k+alpha", "diva_table1 · k+diversity"]


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("which"))
    result = run_suite(Suite.from_dict(MINI), out)
    comparisons = compare_results(out)
    path = write_report(out, comparisons, title="which method: mini")
    return out, result, comparisons, path


def test_every_run_is_verified_and_stores_its_fairness(mini):
    out, result, _, _ = mini
    results = result.results
    assert len(results) == 9 and (results["outcome"] == "ok").all()
    assert results["verified"].all()
    assert (results["suppression_policy"] == "as_class").all()
    loan = results[results["instance"] == "ruggieri_loan"]
    for path in loan["vectors"]:
        assert "alpha_ER" in pd.read_parquet(os.path.join(out, path)).columns
    diva = results[results["instance"] == "diva_table1"]
    assert diva["group_vectors"].notna().all() and loan["group_vectors"].isna().all()
    groups = pd.read_parquet(os.path.join(out, diva["group_vectors"].iloc[0]))
    assert list(groups.index) == ["ETH[Asian]", "ETH[African]", "CTY[Vancouver]"]


def test_one_comparison_per_instance_and_requirement_set(mini):
    out, _, comparisons, _ = mini
    assert list(comparisons) == NAMES
    loan = comparisons["ruggieri_loan · k+alpha"]
    assert loan.metadata["defined"]["alpha_ER"] == {"unit": "tuple", "compared": 17, "total": 17}
    # Each release meets 1.5-protection, so every record's worst elift is at most 1.5.
    unary = loan.unary[loan.unary["property"] == "alpha_ER"]
    assert (unary["max"].astype(float) <= 1.5).all()
    diva = comparisons["diva_table1 · k+diversity"]
    assert diva.metadata["defined"]["div_share"] == {"unit": "group", "compared": 3, "total": 3}
    for name in NAMES:
        folder = os.path.join(out, "comparison", name.replace(" · ", "_").replace("+", "_"))
        assert os.path.exists(os.path.join(folder, "properties.parquet")), folder
    with open(os.path.join(out, "comparison", "diva_table1_k_diversity", "report.json")) as fh:
        report = json.load(fh)
    assert report["suppression"]["diva k+diversity"]["policy"] == "as_class"


def test_verdicts_in_words_at_the_top(mini):
    _, _, _, path = mini
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    top = text[text.index("<section id='verdicts'>") : text.index("</section>")]
    assert text.index("<section id='verdicts'>") < text.index("<h2>Runs</h2>")
    for name in NAMES:
        assert name in top
    assert "Least discrimination (the worst elift of the contexts a record falls in)" in top
    assert "Most of each diversity group kept visible" in top
    assert "Least information loss" in top and "Fastest" in top
    assert "most often" in top  # the headline over every comparison


def test_every_new_plot_is_in_the_report(mini):
    _, _, comparisons, path = mini
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    for name in comparisons:
        slug = name.replace(" · ", "_").replace("+", "_")
        for kind in KINDS:
            assert f'id="plot-{kind}-{slug}"' in text, (kind, name)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install -y chromium)")
def test_plots_decode_and_the_top_is_laid_out(mini, tmp_path):
    _, _, comparisons, path = mini
    dom = probe(path, tmp_path, window=(1280, 900))
    found = images(dom)
    risk = sorted(name for name, _, _ in found if name.startswith("plot-risk-loss-"))
    # both instances have several releases: one risk-versus-loss plot each
    assert risk == ["plot-risk-loss-diva_table1", "plot-risk-loss-ruggieri_loan"]
    assert len(found) == 1 + len(risk) + len(comparisons) * len(
        KINDS
    )  # runtime versus size, risk versus loss per instance, then per comparison
    assert all(width > 100 and complete for _, width, complete in found), found
    shot = screenshot(path, tmp_path, window=(1280, 900))
    assert png_size(shot) == (1280, 900)
    ((title, h1),) = boxes(dom, "h1")
    assert title == "which method: mini" and h1[1] < 80
    h2 = [t for t, _ in boxes(dom, "h2")]
    assert h2[:2] == ["Verdicts", "Runs"]
    verdict_heads = [(t, box) for t, box in boxes(dom, "h3") if t in NAMES]
    assert [t for t, _ in verdict_heads][: len(NAMES)] == NAMES
    assert verdict_heads[0][1][1] < 900  # the first verdicts are on the first screen
    ((_, section),) = [(t, b) for t, b in boxes(dom, "section")]
    assert section[2] <= 1280


def test_the_which_suite_is_valid():
    suite = load_suite(os.path.join(SUITES, "which.yaml"))
    assert suite.compare["by"] == "requirements" and suite.compare["unit"] == "group"
    families = {r.reqset for r in suite.runs()}
    assert families == {"k", "k+l", "k+t", "k+alpha", "k+diversity"}
    assert {r.instance_label for r in suite.runs()} == {
        "adult",
        "german",
        "dewri_t1",
        "diva_table1",
        "ruggieri_loan",
    }
    # Every diversity constraint of the suite is measured on every run it applies to.
    assert len(suite.metrics["fairness"]["diversity"]) == 9
