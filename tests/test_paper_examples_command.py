"""``python benchmarks/examples.py`` (docs/papers.md): every row of the worked examples of
Domingo-Ferrer and Soria-Comas, DIVA and Dewri et al. agrees with the paper, or differs
where docs/papers.md says why."""

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.slow
def test_every_example_agrees_or_is_a_documented_deviation(capsys):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        examples = importlib.import_module("examples")
    finally:
        sys.path.remove(str(BENCHMARKS))
    examples.ROWS.clear()
    assert examples.main([]) == 0
    out = capsys.readouterr().out
    assert "0 differ," in out
    deviations = [r for r in examples.ROWS if r[4].startswith("no:")]
    assert [(r[0], r[4]) for r in deviations] == [("DS", "no: DS-1")]
