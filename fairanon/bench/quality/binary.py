"""Binary quality indices of two property vectors (Dewri et al., EDBT 2009, §3, §5.2–5.4).

:func:`p_binary` counts the records where D1 is better, :func:`p_cov` the share where
it is not worse, :func:`p_spr` sums its gains, and :func:`p_hv` is the hypervolume D1
dominates and D2 does not (:func:`log_p_hv` in log space, safe for large N). ▶spr
decides exactly as the mean does, and ▶hv as the product (docs/papers.md, DW-6).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np

from .dominance import tuple_counts
from .vectors import _exact, _extreme, _float_sum, _pair, _simplify, _total

__all__ = ["BINARY_INDICES", "log_p_hv", "p_binary", "p_cov", "p_hv", "p_spr"]

#: Binary indices: P_cov, P_spr, P_hv and P_binary.
BINARY_INDICES = ("cov", "spr", "hv", "binary")


def p_binary(d1, d2) -> int:
    """P_binary(D1, D2) = #{i : d1_i > d2_i}, a count of records (paper §3, docs/papers.md, DW-4).

    >>> p_binary([3, 7, 7, 3, 7, 7, 7, 3, 7, 7], [3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    7
    """
    return tuple_counts(d1, d2)[0]


def p_cov(d1, d2) -> Fraction:
    """Coverage P_cov(D1, D2) = #{i : d1_i ≥ d2_i} / N (paper §5.2); ties count for both.

    >>> p_cov([2, 2, 3, 4, 5], [3, 2, 4, 2, 3])
    Fraction(3, 5)
    """
    w12, w21, ties = tuple_counts(d1, d2)
    return Fraction(w12 + ties, w12 + w21 + ties)


def p_spr(d1, d2):
    """Spread P_spr(D1, D2) = Σ_i max(d1_i − d2_i, 0) (paper §5.3).

    Exact (int or Fraction) for exact vectors. Its verdict equals the mean's (docs/papers.md, DW-6).

    >>> p_spr([2, 2, 3, 4, 5], [3, 2, 4, 2, 3]), p_spr([3, 2, 4, 2, 3], [2, 2, 3, 4, 5])
    (4, 2)
    """
    a, b, tol = _pair(d1, d2, "p_spr")
    diff = a - b
    gains = diff[(diff > tol).astype(bool)]
    return _simplify(_total(gains)) if len(gains) else 0


def _log_terms(arr: np.ndarray, reference) -> np.ndarray:
    if arr.dtype.kind == "O":
        shifted = np.array([float(v - reference) for v in arr.tolist()])
    else:
        shifted = arr.astype(np.float64) - float(reference)
    with np.errstate(divide="ignore"):
        return np.where(shifted > 0, np.log(np.maximum(shifted, 1e-300)), -np.inf)


def _warn_nonpositive(arrays, reference, caller: str) -> None:
    if any(_extreme(a, min) <= reference for a in arrays):
        warnings.warn(
            f"{caller}: some entries are ≤ the reference point {reference!r}, so their "
            "products are 0 and P_hv cannot separate the vectors (docs/papers.md, DW-5); "
            "orient lower-is-better properties with 'flip', not 'negate'.",
            RuntimeWarning,
            stacklevel=3,
        )


def _log_product(arr: np.ndarray, reference) -> float:
    terms = _log_terms(arr, reference)
    return -math.inf if np.isneginf(terms).any() else _float_sum(terms)


def _minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "O" or b.dtype.kind == "O":
        return np.array([min(x, y) for x, y in zip(a.tolist(), b.tolist())], dtype=object)
    return np.minimum(a, b)


def log_p_hv(d1, d2, *, reference=0) -> float:
    """log P_hv(D1, D2), evaluated in log space so that large N cannot overflow.

    log(Π(d1 − z) − Π(min(d1, d2) − z)) = S1 + log(1 − exp(Smin − S1)), with S the sums
    of logs; −inf when P_hv = 0.

    >>> round(math.exp(log_p_hv([3, 3, 3, 5, 5, 5, 5, 5], [4] * 8)))
    56727
    """
    a, b, _ = _pair(d1, d2, "log_p_hv")
    _warn_nonpositive((a, b), reference, "log_p_hv")
    s1 = _log_product(a, reference)
    if s1 == -math.inf:
        return -math.inf
    low = _minimum(a, b)
    smin = _log_product(low, reference)
    if smin == -math.inf:
        return s1
    gap = smin - s1
    if gap >= 0:
        return -math.inf
    return s1 + math.log(-math.expm1(gap))


def p_hv(d1, d2, *, reference=0):
    """Hypervolume P_hv(D1, D2) = Π_i (d1_i − z) − Π_i (min(d1_i, d2_i) − z) (paper §5.4).

    The volume D1 dominates and D2 does not, with reference point z (default the
    origin). Exact (big int or Fraction) for exact vectors; for float vectors
    ``exp(log_p_hv)``, which may be inf (compare with :func:`log_p_hv` or
    :func:`~fairanon.bench.quality.compare` then). Entries ≤ z give a warning
    (docs/papers.md, DW-5).

    >>> p_hv([3, 3, 3, 5, 5, 5, 5, 5], [4] * 8), p_hv([4] * 8, [3, 3, 3, 5, 5, 5, 5, 5])
    (56727, 37888)
    """
    a, b, _ = _pair(d1, d2, "p_hv")
    if _exact(a, b):
        _warn_nonpositive((a, b), reference, "p_hv")
        return _simplify(_exact_product(a, reference) - _exact_product(_minimum(a, b), reference))
    log = log_p_hv(a, b, reference=reference)
    try:
        return math.exp(log)
    except OverflowError:
        return math.inf


def _exact_product(arr: np.ndarray, reference):
    if arr.dtype.kind == "i" and isinstance(reference, int):
        values, counts = np.unique(arr, return_counts=True)
        return math.prod((int(v) - reference) ** int(c) for v, c in zip(values, counts))
    return math.prod(Fraction(v) - reference for v in arr.tolist())
