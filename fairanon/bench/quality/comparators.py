"""The ▶ comparators: one quality index as a verdict on two vectors (Dewri et al. §4–5).

:func:`compare` gives FIRST_BETTER, SECOND_BETTER or TIE under one unary or binary
index, with an optional tolerance. ▶cov is a majority vote over records and is not
transitive (docs/papers.md, DW-6).
"""

from __future__ import annotations

import enum
import math
import numbers
from fractions import Fraction

import numpy as np

from ..._validation import check_option
from ...exceptions import InvalidParameterError
from .binary import (
    BINARY_INDICES,
    _exact_product,
    _log_product,
    _warn_nonpositive,
    log_p_hv,
    p_spr,
)
from .dominance import tuple_counts
from .unary import UNARY_INDICES, _rank_power, p_mean, p_min, p_rank
from .vectors import TOLERANCE, _exact, _pair

__all__ = ["COMPARATORS", "Verdict", "compare"]

#: The single-property comparators, in the order reports show them.
COMPARATORS = ("min", "mean", "rank", "cov", "spr", "hv")

# Exact products for P_hv verdicts up to this many records; log space above.
_EXACT_PRODUCT_MAX = 2000


class Verdict(str, enum.Enum):
    """Outcome of a ▶ comparator: a TIE means equally good under the index, not
    incomparable."""

    FIRST_BETTER = "FIRST_BETTER"
    SECOND_BETTER = "SECOND_BETTER"
    TIE = "TIE"

    def __str__(self) -> str:
        return self.value

    def swapped(self) -> Verdict:
        return {
            Verdict.FIRST_BETTER: Verdict.SECOND_BETTER,
            Verdict.SECOND_BETTER: Verdict.FIRST_BETTER,
            Verdict.TIE: Verdict.TIE,
        }[self]


def _close(x, y, eps, exact: bool) -> bool:
    if exact:
        return abs(x - y) <= eps
    return abs(float(x) - float(y)) <= float(eps) + TOLERANCE * max(
        1.0, abs(float(x)), abs(float(y))
    )


def _by_value(v1, v2, eps, exact: bool, higher: bool = True) -> Verdict:
    if _close(v1, v2, eps, exact):
        return Verdict.TIE
    return Verdict.FIRST_BETTER if (v1 > v2) == higher else Verdict.SECOND_BETTER


def _hv_verdict(a: np.ndarray, b: np.ndarray, reference, eps) -> Verdict:
    # ▶hv decides as the product does (docs/papers.md, DW-6): the common term cancels.
    _warn_nonpositive((a, b), reference, "compare(index='hv')")
    if _exact(a, b) and len(a) <= _EXACT_PRODUCT_MAX:
        pa, pb = _exact_product(a, reference), _exact_product(b, reference)
        if pa == pb:
            return Verdict.TIE
        if eps:
            return _by_value(
                log_p_hv(a, b, reference=reference), log_p_hv(b, a, reference=reference), eps, False
            )
        return Verdict.FIRST_BETTER if pa > pb else Verdict.SECOND_BETTER
    s1, s2 = _log_product(a, reference), _log_product(b, reference)
    if s1 == s2:
        return Verdict.TIE
    if s1 == -math.inf or s2 == -math.inf:
        return Verdict.FIRST_BETTER if s1 > s2 else Verdict.SECOND_BETTER
    return _by_value(s1, s2, eps, False)


def compare(d1, d2, index: str, *, d_max=None, p: float = 2, eps=0, reference=0) -> Verdict:
    """The ▶ comparator induced by one quality index (paper §4–5).

    Parameters
    ----------
    d1, d2 : array-like
        Vectors of one property over the same records, higher is better.
    index : {"min", "mean", "rank", "cov", "spr", "hv", "binary"}
        ▶min (min D1 > min D2), ▶s-avg (mean), ▶rank (closer to `d_max`), ▶cov
        (P_cov(D1,D2) > P_cov(D2,D1), a majority vote over records, F1), ▶spr,
        ▶hv (needs entries > `reference`); "binary" decides as "cov" (F1).
    d_max : number or array-like
        The ideal vector, needed by "rank".
    p : float, default=2
        The norm of "rank".
    eps : number, default=0
        Index values that differ by at most `eps` are a TIE (the paper's tolerance of
        ▶rank, available for every index). For "hv" it applies to log P_hv.
    reference : number, default=0
        The reference point of "hv".

    Returns
    -------
    Verdict
        FIRST_BETTER, SECOND_BETTER or TIE.

    Examples
    --------
    >>> t4, t3b = [4, 6, 4, 4, 6, 6, 6, 4, 6, 6], [3, 7, 7, 3, 7, 7, 7, 3, 7, 7]
    >>> compare(t3b, t4, "cov"), compare(t3b, t4, "rank", d_max=10)
    (<Verdict.FIRST_BETTER: 'FIRST_BETTER'>, <Verdict.FIRST_BETTER: 'FIRST_BETTER'>)
    """
    check_option(index, "index", "compare", UNARY_INDICES + BINARY_INDICES)
    a, b, _ = _pair(d1, d2, "compare")
    exact = _exact(a, b)
    eps = _check_eps(eps, "compare")
    if index == "min":
        return _by_value(p_min(a), p_min(b), eps, exact)
    if index == "mean":
        return _by_value(p_mean(a), p_mean(b), eps, exact)
    if index == "rank":
        if d_max is None:
            raise InvalidParameterError("compare(index='rank') needs 'd_max', the ideal vector.")
        if eps == 0 and float(p).is_integer() and p != math.inf:
            pa, _ = _rank_power(a, d_max, p)
            pb, _ = _rank_power(b, d_max, p)
            return _by_value(pa, pb, 0, exact and isinstance(pa, Fraction), higher=False)
        return _by_value(p_rank(a, d_max, p=p), p_rank(b, d_max, p=p), eps, False, higher=False)
    if index in ("cov", "binary"):
        w12, w21, _ = tuple_counts(a, b)
        n = len(a)
        if index == "cov":
            return _by_value(Fraction(n - w21, n), Fraction(n - w12, n), eps, True)
        return _by_value(w12, w21, eps, True)
    if index == "spr":
        return _by_value(p_spr(a, b), p_spr(b, a), eps, exact)
    return _hv_verdict(a, b, reference, eps)


def _check_eps(eps, caller: str):
    if isinstance(eps, bool) or not isinstance(eps, (numbers.Real, Fraction)) or eps < 0:
        raise InvalidParameterError(
            f"The 'eps' parameter of {caller} must be a number ≥ 0 (docs/papers.md, DW-4). "
            f"Got {eps!r} instead."
        )
    return eps
