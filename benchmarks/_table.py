"""The plain-text result table the benchmark scripts print."""

from __future__ import annotations

from collections.abc import Sequence


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
