"""The ``quick`` suite end to end through the command line, and its HTML report in
headless Chromium (skipped when no Chromium is installed)."""

import os
import re

import pandas as pd
import pytest
from report_probe import CHROMIUM, boxes, images, png_size, probe, screenshot

from fairanon.cli import main

QUICK = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "suites", "quick.yaml")
KINDS = ("size", "loss", "scatter", "coverage", "dominance", "tradeoff", "winmap")
#: Runtime, the loss-versus-k curve, a figure of each kind and risk versus loss per instance.
N_PLOTS = 2 + 2 * len(KINDS) + 2


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("quick"))
    code = main(["bench", QUICK, "--out", out])
    return out, code


def test_quick_suite_runs_and_verifies(quick, capsys):
    out, code = quick
    assert code == 0
    results = pd.read_csv(os.path.join(out, "results.csv"))
    assert len(results) == 6 and (results["outcome"] == "ok").all()
    assert results["verified"].all()
    adult = results[results["instance"] == "adult"]
    assert sorted(adult["p.k"]) == [5, 10, 50] and (adult["n_rows"] == 30162).all()
    assert (adult["achieved.k_anonymity"] >= adult["p.k"]).all()
    # The verifier's risk figures: a k-anonymous release has prosecutor risk at most 1/k.
    assert (adult["risk.prosecutor_highest"] <= 1 / adult["p.k"]).all()
    assert (adult["risk.sample_uniques"] == 0).all() and (adult["risk.records_above"] == 0).all()
    assert (adult["utility.exact_share"] + adult["utility.generalized_share"]
            + adult["utility.suppressed_share"]).round(9).eq(1).all()
    assert set(results["instance"]) == {"adult", "population"}
    for name in ("unary.csv", "pairwise.csv", "multi.csv", "ranking.csv", "report.json"):
        assert os.path.exists(os.path.join(out, "comparison", "adult", name))
    ranking = pd.read_csv(os.path.join(out, "comparison", "adult", "ranking.csv"), index_col=0)
    # More privacy at larger k, less loss at smaller k: the two rankings run opposite.
    assert ranking["size:cov"].idxmax() == "mondrian k(k=50)"
    assert ranking["loss:cov"].idxmax() == "mondrian k(k=5)"


def test_report_holds_every_plot(quick):
    out, _ = quick
    with open(os.path.join(out, "report.html"), encoding="utf-8") as fh:
        text = fh.read()
    ids = re.findall(r'<img class="plot" id="([^"]+)"', text)
    assert "plot-runtime-size" in ids and "plot-param-p.k" in ids
    for instance in ("adult", "population"):
        for kind in KINDS:
            assert f"plot-{kind}-{instance}" in ids
    assert "plot-risk-loss-adult" in ids and "plot-risk-loss-population" in ids
    assert len(ids) == N_PLOTS
    assert "http://" not in text and "https://" not in text and "<script" not in text
    assert "Copeland" in text and "Runtime versus size" in text and "Loss versus parameter" in text
    # The verdicts come first, in words, with fairness among the properties.
    assert text.index("id='verdicts'") < text.index("<h2>Runs</h2>")
    assert "Least information loss: mondrian k(k=5)" in text
    assert "Least discrimination (the worst elift" in text
    assert "policy as_class" in text
    long = pd.read_parquet(os.path.join(out, "comparison", "adult", "properties.parquet"))
    assert list(long.columns) == ["run", "record_id", "property", "value"]
    assert len(long) == 3 * 30162 * 9  # 3 releases, every record, every property measured


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install -y chromium)")
def test_report_opens_in_headless_chromium(quick, tmp_path):
    out, _ = quick
    dom = probe(os.path.join(out, "report.html"), tmp_path)
    n = N_PLOTS
    assert f'data-checked="{n}"' in dom
    found = images(dom)
    assert len(found) == n
    assert all(width > 100 and complete for _, width, complete in found), found


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install -y chromium)")
def test_top_of_the_report(quick, tmp_path):
    """Sizes and headings of the first screen, not pixels."""
    out, _ = quick
    report = os.path.join(out, "report.html")
    shot = screenshot(report, tmp_path, window=(1280, 900))
    assert png_size(shot) == (1280, 900)
    dom = probe(report, tmp_path, window=(1280, 900))
    ((title, h1),) = boxes(dom, "h1")
    assert title == "fairanon benchmark: quick" and h1[1] < 80
    headings = boxes(dom, "h2")
    assert [t for t, _ in headings][:2] == ["Verdicts", "Runs"]
    verdicts = headings[0][1]
    assert verdicts[1] < 200 and verdicts[2] <= 1280  # first on the page, no wider than it
    sections = {t.split()[0]: box for t, box in boxes(dom, "h3") if t in ("adult", "population")}
    assert sorted(sections) == ["adult", "population"]
    assert all(box[1] < 900 for box in sections.values())  # every verdict in the first screen


def test_bench_usage_errors_exit_2(tmp_path, quick, capsys):
    out, _ = quick
    assert main(["bench", str(tmp_path / "missing.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "instances: [{dataset: adult}]\nrequirements: [{k_anonymity: 5}]\nalgorithms: [nonesuch]\n"
    )
    assert main(["bench", str(bad)]) == 2
    assert "must be one of" in capsys.readouterr().err
    assert main(["bench", QUICK, "--out", out]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["bench", QUICK, "--out", out, "--jobs", "0"]) == 2


def test_resume_of_a_finished_suite_runs_nothing(quick, capsys):
    out, _ = quick
    assert main(["bench", QUICK, "--out", out, "--resume", "--no-report"]) == 0
    assert "0 run(s) now, 6 finished earlier" in capsys.readouterr().out
