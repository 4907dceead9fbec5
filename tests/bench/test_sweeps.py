"""Sweeps a suite declares: requirement sets carry extra result columns (``sweep``,
``sweep_x``), the report draws time, stars and discernibility against them, and the
DIVA suite of the paper's experiments parses."""

import os
import re

import pandas as pd
import pytest

from fairanon.bench import load_suite, run_suite, write_report
from fairanon.bench.spec import Suite
from fairanon.exceptions import InvalidParameterError

DIVA_SUITE = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "suites", "diva.yaml")


def _sweep_suite(out: str) -> dict:
    reqsets = [
        {"name": f"k+Σ (lower {lower})", "columns": {"sweep": "lower", "sweep_x": lower},
         "set": [{"k_anonymity": {"k": 2}}, {"diversity": f"ETH(Asian) [{lower}, 3]"}]}
        for lower in (1, 2, 3)
    ]
    return {
        "name": "sweep", "out": out, "time_limit": 60, "metrics": {"vectors": False},
        "instances": [{"dataset": "diva_table1"}],
        "requirements": reqsets,
        "algorithms": [{"method": "diva", "name": "MaxFanOut", "params": {"next_node": "maxfanout"}},
                       {"method": "diva", "name": "DIVA-Basic", "params": {"next_node": "basic"}}],
    }


def test_columns_of_a_requirement_set_reach_the_runs():
    suite = Suite.from_dict(_sweep_suite("unused"))
    rows = [run.row() for run in suite.runs()]
    assert [(r["sweep"], r["sweep_x"]) for r in rows] == [("lower", x) for x in (1, 1, 2, 2, 3, 3)]
    bad = _sweep_suite("unused")
    bad["requirements"][0]["columns"] = {"sweep": ["a", "b"]}
    with pytest.raises(InvalidParameterError, match="'columns' of requirement set 1"):
        Suite.from_dict(bad)


@pytest.mark.slow
def test_report_draws_each_declared_sweep(tmp_path):
    out = str(tmp_path / "sweep")
    result = run_suite(Suite.from_dict(_sweep_suite(out)), out)
    results = pd.read_csv(os.path.join(result.out, "results.csv"))
    assert (results["status"] == "FEASIBLE").all() and results["verified"].all()
    assert sorted(results["sweep_x"]) == [1, 1, 2, 2, 3, 3]
    with open(write_report(result.out), encoding="utf-8") as fh:
        text = fh.read()
    assert "plot-sweep-lower" in re.findall(r'<img class="plot" id="([^"]+)"', text)
    assert "<h2>Sweeps</h2>" in text


def test_the_diva_suite_parses():
    """Every sweep of DIVA's Table 5 (|R|, |Σ|, cf, k), the quadratic baselines on small
    samples, German credit and the synthetic populations, for the three node orders."""
    suite = load_suite(DIVA_SUITE)
    runs = suite.runs()
    sweeps = {r.row()["sweep"] for r in runs}
    assert {"|R|", "|Σ|", "cf", "k", "distribution (Pop-Syn)"} <= sweeps
    algorithms = {r.algorithm for r in runs}
    assert {"DIVA-Basic", "MinChoice", "MaxFanOut", "DIVA-exact", "Mondrian (stars)", "k-member", "OKA"} <= algorithms
    table5 = {s: sorted({r.row()["sweep_x"] for r in runs if r.row()["sweep"] == s}) for s in ("|Σ|", "cf", "k")}
    assert table5 == {"|Σ|": [4, 8, 12, 16, 20], "cf": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], "k": [10, 20, 30, 40, 50]}
    assert sorted({r.row()["sweep_x"] for r in runs if r.row()["sweep"] == "|R|"}) == [
        60000, 120000, 180000, 240000, 299285]
