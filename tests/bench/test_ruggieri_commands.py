"""benchmarks/ruggieri.py on German credit: the commands run, draw their figures, and
report the paper's statements with fairanon's numbers (docs/papers.md, Ruggieri)."""

import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def ruggieri():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import ruggieri as module

        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.slow
def test_fig5_to_fig7_on_german_credit(ruggieri, tmp_path):
    for experiment in ("fig5", "fig6", "fig7"):
        ruggieri.CLAIMS.rows.clear()
        assert ruggieri.main([experiment, "--out", str(tmp_path)]) == 0
        assert (tmp_path / f"ruggieri_{experiment}.png").stat().st_size > 10_000
        claims = json.loads((tmp_path / f"ruggieri_{experiment}_claims.json").read_text())
        held = {c["paper"]: c["held"] for c in claims}
        if experiment == "fig5":  # no context beyond a bound of Thm 10/15
            assert held["the bounds of Thm 10 and 15 hold on every context (the points lie between the curves)"]
        if experiment == "fig6":  # bd_RD(0.15) = 0.3, bd_RR(0.15) = 3; every statement of Fig. 6 holds
            assert all(held.values()) and len(held) == 4
        if experiment == "fig7":
            assert held["both sanitized releases stay below bd_RD(0.15) = 0.3 and bd_RR(0.15) = 3"]
    rows = json.loads((tmp_path / "ruggieri_fig6.json").read_text())["rows"]
    assert max(r["max_tau_all"] for r in rows) <= 0.15  # Lemma 8 (docs/papers.md, R-2)


def test_reach_of_a_context(ruggieri):
    """R-13: |RD| / bd_RD(τ); log RR / log bd_RR(τ); NaN where the bound is 0, 1 or ∞."""
    from fractions import Fraction

    p = Fraction(3, 10)
    assert ruggieri.reach("RD", -0.15, 0.15, p) == pytest.approx(0.5)  # bd_RD(0.15) = 0.3
    assert ruggieri.reach("RR", 3.0, 0.15, p) == pytest.approx(1.0)  # bd_RR(0.15) = 3
    assert ruggieri.reach("RR", 1 / 3, 0.15, p) == pytest.approx(1.0)  # the lower bound 1/3
    assert ruggieri.reach("RR", 2.0, 0.3, p) != ruggieri.reach("RR", 2.0, 0.3, p)  # bound ∞: NaN
