"""Unary quality indices of one property vector (Dewri et al., EDBT 2009, §3, §5.1).

:func:`p_min`, :func:`p_mean` (P_s-avg) and :func:`p_rank` (the distance to the ideal
vector) induce the ▶min, ▶s-avg and ▶rank comparators; :func:`p_max` and :func:`p_sum`
complete them, and :func:`descriptors` gives bias descriptors with no better/worse
direction (variance, Gini, floor share; docs/papers.md, DW-10).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ...exceptions import InvalidParameterError
from .vectors import (
    TOLERANCE,
    _exact,
    _extreme,
    _float_sum,
    _power_sum,
    _simplify,
    _total,
    _vec,
)

__all__ = ["UNARY_INDICES", "descriptors", "p_max", "p_mean", "p_min", "p_rank", "p_sum"]

#: Unary indices a comparator can use: ▶min, ▶s-avg (mean) and ▶rank.
UNARY_INDICES = ("min", "mean", "rank")


def p_min(d):
    """P_k-anon generalized: the smallest entry (▶min; paper §4, docs/papers.md, DW-4).

    >>> p_min([3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    3
    """
    return _extreme(_vec(d, "D", "p_min"), min)


def p_max(d):
    """The largest entry."""
    return _extreme(_vec(d, "D", "p_max"), max)


def p_sum(d):
    """Σ d_i, exact for exact vectors; on class sizes it is Σ_i s_i = Σ_E |E|² (Dewri
    et al. §5.1), the discernibility metric when suppressed records read as size N
    (``suppression="as_population"``: n per suppressed record, docs/metrics.md).

    >>> p_sum([3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    34
    """
    return _simplify(_total(_vec(d, "D", "p_sum")))


def p_mean(d):
    """P_s-avg: the mean entry, exact for exact vectors (paper §3).

    >>> p_mean([3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    Fraction(17, 5)
    """
    arr = _vec(d, "D", "p_mean")
    total = _total(arr)
    if _exact(arr):
        return Fraction(total) / len(arr)
    return total / len(arr)


def _ideal_vector(d_max, n: int, caller: str):
    """`d_max` as a vector of length n, or as a scalar that broadcasts."""
    if isinstance(d_max, (numbers.Real, Fraction)) and not isinstance(d_max, bool):
        if isinstance(d_max, (numbers.Integral, Fraction)):
            return d_max if isinstance(d_max, Fraction) else int(d_max)
        return float(d_max)
    arr = _vec(d_max, "d_max", caller)
    if len(arr) != n:
        raise InvalidParameterError(
            f"The 'd_max' parameter of {caller} must be a number or a vector of length {n}. "
            f"Got length {len(arr)} instead."
        )
    return arr


def _rank_power(d, d_max, p) -> tuple[Any, float]:
    """(Σ |d_i − dmax_i|^p, p): exact for exact input and integer p."""
    arr = _vec(d, "D", "p_rank")
    ideal = _ideal_vector(d_max, len(arr), "p_rank")
    if p != math.inf and (isinstance(p, bool) or not isinstance(p, numbers.Real) or p < 1):
        raise InvalidParameterError(
            f"The 'p' parameter of p_rank must be a number ≥ 1 or inf. Got {p!r} instead."
        )
    if isinstance(ideal, Fraction) and arr.dtype.kind != "O":
        arr = arr.astype(object)
    gap = ideal - arr
    if gap.dtype.kind == "O" and any(isinstance(v, float) for v in gap.tolist()):
        gap = gap.astype(np.float64)
    if _extreme(gap, min) < -TOLERANCE:
        warnings.warn(
            "p_rank: d_max is not an upper bound of the vector, so equal ranks need not mean "
            "equal or incomparable (docs/papers.md, DW-5).",
            RuntimeWarning,
            stacklevel=3,
        )
    diffs = np.abs(gap)
    if p == math.inf:
        return _extreme(diffs, max), p
    if _exact(diffs) and float(p).is_integer():
        return Fraction(_power_sum(diffs, int(p))), p
    return _float_sum(diffs.astype(np.float64) ** p), p


def p_rank(d, d_max, *, p: float = 2) -> float:
    """P_rank = ‖D − D_max‖_p, the distance to the ideal vector (paper §5.1); lower is
    better.

    Parameters
    ----------
    d : array-like
    d_max : number or array-like
        The point of interest, usually the best attainable value of every record
        (:data:`~fairanon.bench.quality.PROPERTIES` gives one per property). A warning
        says when it is not an upper bound of `d` (docs/papers.md, DW-5).
    p : float, default=2
        The norm; the paper's arcs are Euclidean.

    >>> round(p_rank([3, 3, 3, 3, 4, 4, 4, 3, 3, 4], 10), 3)
    20.928
    """
    power, p = _rank_power(d, d_max, p)
    if p == math.inf:
        return float(power)
    return float(power) ** (1.0 / p)


def descriptors(d, quantiles: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 0.9)) -> dict:
    """Bias descriptors of one vector: no better/worse direction (docs/papers.md, DW-10).

    Returns
    -------
    dict
        ``variance`` (population form), ``cv`` (coefficient of variation), ``gini``
        (Σ_i Σ_j |d_i − d_j| / (2 N² mean)), ``floor_share`` (#{d_i = min D}/N) and one
        ``q<p>`` per quantile. Exact (Fraction) for exact vectors except cv and the
        quantiles.

    Examples
    --------
    >>> out = descriptors([3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    >>> out["gini"], out["variance"], out["floor_share"]
    (Fraction(6, 85), Fraction(6, 25), Fraction(3, 5))
    """
    arr = _vec(d, "D", "descriptors")
    n = len(arr)
    exact = _exact(arr)
    low, high = _extreme(arr, min), _extreme(arr, max)
    if exact:
        total = Fraction(_power_sum(arr, 1))
        mean = total / n
        variance = (Fraction(_power_sum(arr, 2)) - total * mean) / n
        weighted = _rank_weighted_sum(arr)
        gini_offset = Fraction(n + 1, n)
    else:
        total = _float_sum(arr)
        mean = total / n
        variance = float(np.var(arr))
        weighted = float(np.dot(np.arange(1, n + 1, dtype=np.float64), np.sort(arr)))
        gini_offset = (n + 1) / n
    if total == 0:
        gini = 0 if low == high else math.nan
    else:
        # Σ_i Σ_j |d_i − d_j| / (2 N² mean) = 2 Σ_i i·d_(i) / (N Σ d) − (N + 1)/N (sorted, 1-based)
        gini = 2 * weighted / (n * total) - gini_offset
    tol = 0 if exact else TOLERANCE
    floor = int(np.count_nonzero((arr - low <= tol).astype(bool)))
    out = {
        "variance": variance,
        "cv": math.sqrt(float(variance)) / float(mean) if mean else math.nan,
        "gini": gini,
        "floor_share": Fraction(floor, n),
    }
    floats = arr.astype(np.float64)
    for q in quantiles:
        out[f"q{round(100 * q):g}"] = float(np.quantile(floats, q))
    return out


def _rank_weighted_sum(arr: np.ndarray):
    """Σ_i i·d_(i) over the sorted vector (1-based), exactly."""
    if arr.dtype.kind == "i":
        values, counts = np.unique(arr, return_counts=True)
        ends = np.cumsum(counts)
        # positions start+1 .. end hold value v: Σ i = (start+1 + end)·count/2
        return sum(
            int(v) * (int(e - c + 1) + int(e)) * int(c) // 2
            for v, c, e in zip(values, counts, ends)
        )
    return sum((Fraction(i + 1) * v for i, v in enumerate(sorted(arr.tolist()))), Fraction(0))
