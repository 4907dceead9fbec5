"""The ``quick`` suite end to end through the command line, and its HTML report in
headless Chromium (skipped when no Chromium is installed)."""

import os
import re
import shutil
import subprocess

import pandas as pd
import pytest

from fairanon.cli import main

QUICK = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "suites", "quick.yaml")
CHROMIUM = next(
    (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p),
    None,
)


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
        for kind in ("size", "loss", "coverage"):
            assert f"plot-{kind}-{instance}" in ids
    assert len(ids) == 8
    assert "http://" not in text and "https://" not in text and "<script" not in text
    assert "Copeland" in text and "Runtime versus size" in text and "Loss versus parameter" in text


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install -y chromium)")
def test_report_opens_in_headless_chromium(quick, tmp_path):
    out, _ = quick
    # A copy with a script that records, once the page has loaded, whether each image
    # decoded; the report itself holds no script.
    with open(os.path.join(out, "report.html"), encoding="utf-8") as fh:
        page = fh.read()
    probe = (
        "<script>window.addEventListener('load', () => {"
        "for (const img of document.images) { img.setAttribute('data-width', img.naturalWidth);"
        " img.setAttribute('data-complete', img.complete); }"
        "document.body.setAttribute('data-checked', document.images.length); });</script>"
    )
    copy = tmp_path / "probe.html"
    copy.write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=10000",
        "--dump-dom",
        copy.as_uri(),
    ]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False).stdout
    assert 'data-checked="8"' in dom
    widths = re.findall(r'<img[^>]*data-width="(\d+)"', dom)
    assert len(widths) == 8
    assert all(int(w) > 100 for w in widths)
    assert dom.count('data-complete="true"') == 8


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
