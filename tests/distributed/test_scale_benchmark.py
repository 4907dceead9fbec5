"""The large-data benchmark's summary of worker memory agrees with its phase lines."""

import importlib.util
import resource
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

SCALE = Path(__file__).resolve().parents[2] / "benchmarks" / "scale.py"


def _scale():
    spec = importlib.util.spec_from_file_location("scale_benchmark", SCALE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_summary_peaks_are_the_largest_phase_peaks(tmp_path, capsys):
    scale = _scale()
    # This process's peak goes over 400 MB before the workers start: a worker's
    # ru_maxrss would carry it (Linux keeps the high-water mark over exec).
    block = np.ones(400 * 2**20 // 8)
    block[::512] = 2.0
    del block
    inherited = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = scale.bench_dask(5_000, str(tmp_path), "1GB", max_rows=1_000)
    assert result["passed"] and result["workers_lost"] == 0
    phase_peaks = [v for p in result["phases"] for v in p.get("worker_peak_mb") or []]
    summary = result["worker_peak_rss_mb"]
    assert len(summary) == 2 and phase_peaks
    assert max(summary) == max(phase_peaks)
    assert all(v in phase_peaks for v in summary)
    assert max(summary) < inherited
    capsys.readouterr()
