"""What the benchmark scripts share: the plain-text result table they print, the timing of
a call, and the results file they write."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence


def fmt(value) -> str:
    """A cell: ``-`` for missing, 4 significant digits for floats."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def show(rows: list[dict], columns: Sequence[str]) -> None:
    """Print `rows` (dicts) as left-aligned columns under a header line."""
    widths = {c: max(len(c), *(len(fmt(r.get(c))) for r in rows)) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns))
    for r in rows:
        print("  ".join(fmt(r.get(c)).ljust(widths[c]) for c in columns))


def timed(repeat: int, fn: Callable):
    """(the value of `fn()`, (CPU seconds, wall seconds)), the best of `repeat` calls."""
    best, value = None, None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        times = (time.process_time() - cpu, time.perf_counter() - wall)
        best = times if best is None else tuple(min(a, b) for a, b in zip(best, times))
    return value, best


def write_results(path: str, document: dict) -> None:
    """Write `document` with the machine it ran on (cores, Python, platform) as JSON, whole
    or not at all (a stopped run leaves the last results as they were)."""
    machine = {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            json.dump({"machine": machine, **document}, fh, indent=2, default=str)
        os.replace(path + ".tmp", path)
    except BaseException:  # a failed dump or Ctrl-C leaves no partial file behind
        if os.path.exists(path + ".tmp"):
            os.remove(path + ".tmp")
        raise
    print(f"Wrote {path}")
