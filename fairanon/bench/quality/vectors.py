"""Property vectors read as numbers, with the exact arithmetic every quality index shares.

Integer vectors and object vectors of :class:`fractions.Fraction` stay exact; float
vectors are compared with the absolute tolerance :data:`TOLERANCE` (docs/papers.md,
DW-4) and summed in sorted order, so that a vector and any permutation of it get the
same index values (docs/papers.md, DW-6).
"""

from __future__ import annotations

import numbers
from fractions import Fraction

import numpy as np

from ...exceptions import InvalidParameterError

__all__ = ["TOLERANCE"]

#: Absolute tolerance for float vectors (docs/papers.md, DW-4); exact vectors use none.
TOLERANCE = 1e-12


def _vec(values, name: str = "D", caller: str = "quality index") -> np.ndarray:
    """A 1-D numeric vector: int64, float64, or object (Fractions, ints)."""
    if isinstance(values, np.ndarray):
        arr = values
    elif hasattr(values, "to_numpy"):
        arr = values.to_numpy()
    else:
        arr = np.asarray(list(values) if not isinstance(values, (list, tuple)) else values)
    if arr.ndim != 1 or len(arr) == 0:
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a non-empty 1-D vector. "
            f"Got shape {arr.shape} instead."
        )
    kind = arr.dtype.kind
    if kind in "iub":
        return arr.astype(np.int64, copy=False)
    if kind == "f":
        if not np.isfinite(arr).all():
            raise InvalidParameterError(
                f"The {name!r} parameter of {caller} must hold finite numbers. Got NaN or inf."
            )
        return arr.astype(np.float64, copy=False)
    if kind == "O":
        if all(
            isinstance(v, (numbers.Integral, Fraction)) and not isinstance(v, bool) for v in arr
        ):
            return arr
        if all(isinstance(v, numbers.Real) for v in arr):
            return arr.astype(np.float64)
    raise InvalidParameterError(
        f"The {name!r} parameter of {caller} must hold numbers. Got dtype {arr.dtype} instead."
    )


def _exact(*arrays: np.ndarray) -> bool:
    return all(a.dtype.kind in "iO" for a in arrays)


def _pair(d1, d2, caller: str) -> tuple[np.ndarray, np.ndarray, float]:
    a, b = _vec(d1, "D1", caller), _vec(d2, "D2", caller)
    if len(a) != len(b):
        raise InvalidParameterError(
            f"{caller} compares vectors of the same records; got lengths {len(a)} and {len(b)}."
        )
    return a, b, (0.0 if _exact(a, b) else TOLERANCE)


def _total(arr: np.ndarray):
    """Exact sum for exact vectors, an accurately rounded float sum otherwise."""
    if arr.dtype.kind == "i":
        return _power_sum(arr, 1)
    if arr.dtype.kind == "O":
        return (
            sum(arr.tolist(), Fraction(0))
            if any(isinstance(v, Fraction) for v in arr)
            else sum(arr.tolist())
        )
    return _float_sum(arr)


def _float_sum(arr: np.ndarray) -> float:
    """A float sum that does not depend on the order of the entries (sorted first), so
    that a vector and any permutation of it get the same index values (docs/papers.md, DW-6)."""
    return float(np.sort(np.asarray(arr, dtype=np.float64)).sum())


def _power_sum(arr: np.ndarray, power: int):
    """Σ x^power, exact for int and object vectors (ints are grouped by value, so the
    Python arithmetic runs over the distinct values only)."""
    if arr.dtype.kind == "i":
        values, counts = np.unique(arr, return_counts=True)
        return sum(int(c) * int(v) ** power for v, c in zip(values, counts))
    if arr.dtype.kind == "O":
        return sum((Fraction(v) ** power for v in arr.tolist()), Fraction(0))
    return _float_sum(arr**power)


def _extreme(arr: np.ndarray, which):
    if arr.dtype.kind == "O":
        return _simplify(which(arr.tolist()))
    value = arr.min() if which is min else arr.max()
    return int(value) if arr.dtype.kind == "i" else float(value)


def _simplify(value):
    """Fractions with denominator 1 as ints."""
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value.numerator)
    return value
