"""Comparators over several properties at once (Dewri et al., EDBT 2009, §5.5–5.7).

:func:`wtd` weighs binary index values, :func:`lex` lets the first property with a
significant difference decide, :func:`goal` and :func:`goal_unary` measure the distance
from goal values; :func:`index_pair` scales a binary index as they need (docs/papers.md, DW-5).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..._validation import check_fraction, check_option
from ...exceptions import InvalidParameterError
from .binary import BINARY_INDICES, log_p_hv, p_cov, p_spr
from .comparators import Verdict, _by_value, _check_eps
from .dominance import _same_properties, tuple_counts
from .unary import UNARY_INDICES, p_mean, p_min, p_rank
from .vectors import TOLERANCE, _exact, _pair, _simplify

__all__ = [
    "NORMALIZATIONS",
    "MultiResult",
    "goal",
    "goal_unary",
    "index_pair",
    "lex",
    "unary_value",
    "wtd",
]

#: How :func:`wtd`, :func:`lex` and :func:`goal` scale binary index values (docs/papers.md, DW-5).
NORMALIZATIONS = ("default", "raw", "share", "range")


@dataclass(frozen=True)
class MultiResult:
    """Both index values of a set comparator and its verdict.

    ``first`` is P(Υ1, Υ2), ``second`` is P(Υ2, Υ1); for GOAL lower values win, for
    LEX the smaller property position wins (``math.inf``: no significant difference).
    """

    first: Any
    second: Any
    verdict: Verdict


def unary_value(d, index: str, *, d_max=None, p: float = 2):
    """A unary index oriented so that higher is better: min, mean, or −P_rank.

    >>> unary_value([1, 2], "rank", d_max=2)
    -1.0
    """
    check_option(index, "index", "unary_value", UNARY_INDICES)
    if index == "min":
        return p_min(d)
    if index == "mean":
        return p_mean(d)
    if d_max is None:
        raise InvalidParameterError("unary_value(index='rank') needs 'd_max'.")
    return -p_rank(d, d_max, p=p)


def index_pair(d1, d2, index: str, normalization: str = "default", *, reference=0) -> tuple:
    """(η(P(D1, D2)), η(P(D2, D1))) for a binary index, scaled as `normalization` says.

    Normalizations (docs/papers.md, DW-5):

    - "raw": the values as defined (P_hv as a float, possibly inf);
    - "share": P(A,B) / (P(A,B) + P(B,A)), ½ when both are 0 (P_hv evaluated in log
      space);
    - "range": P_spr / (N · range of both vectors), P_binary / N, P_cov as is;
    - "default": P_cov raw (already in [0, 1], as the paper's example), P_binary / N,
      P_spr and P_hv "share".

    >>> index_pair([2, 2, 3, 4, 5], [3, 2, 4, 2, 3], "spr")
    (Fraction(2, 3), Fraction(1, 3))
    """
    check_option(index, "index", "index_pair", BINARY_INDICES)
    check_option(normalization, "normalization", "index_pair", NORMALIZATIONS)
    a, b, _ = _pair(d1, d2, "index_pair")
    n = len(a)
    if index == "cov":
        return p_cov(a, b), p_cov(b, a)
    if index == "binary":
        w12, w21, _ = tuple_counts(a, b)
        return (w12, w21) if normalization == "raw" else (Fraction(w12, n), Fraction(w21, n))
    mode = "share" if normalization == "default" else normalization
    if index == "spr":
        x, y = p_spr(a, b), p_spr(b, a)
        if mode == "raw":
            return x, y
        if mode == "range":
            values = a.tolist() + b.tolist()
            spread = max(values) - min(values)
            if spread == 0:
                return 0, 0
            scale = n * spread
            return (
                (Fraction(x) / scale, Fraction(y) / scale)
                if _exact(a, b)
                else (x / scale, y / scale)
            )
        if x + y == 0:
            return Fraction(1, 2), Fraction(1, 2)
        return (
            (Fraction(x) / (x + y), Fraction(y) / (x + y))
            if _exact(a, b)
            else (x / (x + y), y / (x + y))
        )
    lx, ly = log_p_hv(a, b, reference=reference), log_p_hv(b, a, reference=reference)
    if mode == "raw":
        return _safe_exp(lx), _safe_exp(ly)
    if mode == "range":
        raise InvalidParameterError(
            "index_pair: the 'range' normalization applies to spr, binary and cov, not hv."
        )
    if lx == ly == -math.inf:
        return 0.5, 0.5
    # x/(x+y) = 1/(1 + exp(ly − lx)), stable for huge volumes.
    first = 1.0 / (1.0 + _safe_exp(ly - lx)) if lx != -math.inf else 0.0
    return first, 1.0 - first


def _safe_exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _per_property(value, names: Sequence[str], what: str, caller: str) -> list:
    if isinstance(value, Mapping):
        missing = [p for p in names if p not in value]
        if missing:
            raise InvalidParameterError(
                f"The {what!r} parameter of {caller} has no entry for {missing}."
            )
        return [value[p] for p in names]
    if isinstance(value, (str, numbers.Real, Fraction)) and not isinstance(value, bool):
        return [value] * len(names)
    values = list(value)
    if len(values) != len(names):
        raise InvalidParameterError(
            f"The {what!r} parameter of {caller} needs one entry per property {list(names)}. "
            f"Got {len(values)} instead."
        )
    return values


def wtd(
    u1: Mapping, u2: Mapping, *, weights, index="cov", normalization: str = "default"
) -> MultiResult:
    """▶WTD: weighted sums S12 = Σ_p w_p η(P_p(D1p, D2p)) against S21 (paper §5.5).

    Parameters
    ----------
    u1, u2 : mapping property -> vector
        Oriented (higher is better), the same properties in the same order.
    weights : sequence or mapping
        0 < w_p < 1 with Σ w_p = 1 (a single property may have weight 1). Read exactly
        (0.5 is 1/2).
    index : str or mapping, default="cov"
        A binary index per property (or one for all).
    normalization : str, default="default"
        See :func:`index_pair`.

    Examples
    --------
    Paper §5.5: class size and utility of T3a and T3b with P_cov and equal weights.

    >>> a = {"size": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4], "util": [6, 5, 5, 6, 4, 4, 4, 6, 5, 4]}
    >>> b = {"size": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7], "util": [6, 2, 2, 6, 2, 2, 2, 6, 2, 2]}
    >>> wtd(a, b, weights=[0.5, 0.5])
    MultiResult(first=Fraction(13, 20), second=Fraction(13, 20), verdict=<Verdict.TIE: 'TIE'>)
    """
    caller = "wtd"
    _same_properties(u1, u2, caller)
    names = list(u1)
    ws = [
        check_fraction(w, "weights", caller, low=0, high=1, low_open=True)
        for w in _per_property(weights, names, "weights", caller)
    ]
    if len(ws) > 1 and any(w >= 1 for w in ws):
        raise InvalidParameterError(
            f"The 'weights' parameter of {caller} must hold values in (0, 1). Got {weights!r} instead."
        )
    if abs(sum(ws) - 1) > Fraction(1, 10**9):
        raise InvalidParameterError(
            f"The 'weights' parameter of {caller} must sum to 1. Got {weights!r} (sum {float(sum(ws)):g}) instead."
        )
    indices = _per_property(index, names, "index", caller)
    s12 = s21 = Fraction(0)
    exact = True
    for name, w, idx in zip(names, ws, indices):
        check_option(idx, "index", caller, BINARY_INDICES)
        x, y = index_pair(u1[name], u2[name], idx, normalization)
        if isinstance(x, float) or isinstance(y, float):
            exact = False
        s12 = s12 + w * (Fraction(x) if not isinstance(x, float) else x)
        s21 = s21 + w * (Fraction(y) if not isinstance(y, float) else y)
    return MultiResult(_simplify(s12), _simplify(s21), _by_value(s12, s21, 0, exact))


def lex(
    u1: Mapping, u2: Mapping, *, eps=0, index="cov", normalization: str = "default", d_max=None
) -> MultiResult:
    """▶LEX: the first property, in the order of `u1`, with a significant difference
    decides (paper §5.6).

    δ_p = η(P_p(D1p, D2p)) − η(P_p(D2p, D1p)) for a binary index, U_p(D1p) − U_p(D2p)
    for a unary one (−P_rank for "rank"). P_LEX(Υ1, Υ2) = min{p : δ_p > ε_p} (1-based;
    ``math.inf`` for none, docs/papers.md, DW-4); the smaller position wins, both inf is a TIE.

    Parameters
    ----------
    eps : number, sequence or mapping, default=0
        ε_p ≥ 0, the largest difference still counted as equally good.
    index : str or mapping, default="cov"
        Binary or unary index per property.
    d_max : mapping, optional
        Ideal vectors for "rank".

    Examples
    --------
    >>> a = {"size": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4], "util": [6, 5, 5, 6, 4, 4, 4, 6, 5, 4]}
    >>> b = {"size": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7], "util": [6, 2, 2, 6, 2, 2, 2, 6, 2, 2]}
    >>> lex(a, b).verdict, lex(a, b, eps=[0.8, 0]).verdict
    (<Verdict.SECOND_BETTER: 'SECOND_BETTER'>, <Verdict.FIRST_BETTER: 'FIRST_BETTER'>)
    """
    caller = "lex"
    _same_properties(u1, u2, caller)
    names = list(u1)
    epss = [_check_eps(e, caller) for e in _per_property(eps, names, "eps", caller)]
    indices = _per_property(index, names, "index", caller)
    first = second = math.inf
    for pos, (name, e, idx) in enumerate(zip(names, epss, indices), start=1):
        check_option(idx, "index", caller, UNARY_INDICES + BINARY_INDICES)
        if idx in UNARY_INDICES:
            dm = None if d_max is None else d_max.get(name)
            x = unary_value(u1[name], idx, d_max=dm)
            y = unary_value(u2[name], idx, d_max=dm)
        else:
            x, y = index_pair(u1[name], u2[name], idx, normalization)
        delta = x - y
        exact = not isinstance(delta, float)
        if first == math.inf and _greater(delta, e, exact):
            first = pos
        if second == math.inf and _greater(-delta, e, exact):
            second = pos
    if first == second:
        return MultiResult(first, second, Verdict.TIE)
    return MultiResult(
        first, second, Verdict.FIRST_BETTER if first < second else Verdict.SECOND_BETTER
    )


def _greater(delta, eps, exact: bool) -> bool:
    if exact:
        return delta > eps
    return float(delta) > float(eps) + TOLERANCE


def goal(
    u1: Mapping,
    u2: Mapping,
    *,
    goals,
    index="cov",
    normalization: str = "default",
    one_sided: bool = False,
) -> MultiResult:
    """▶GOAL: squared distance of the index values from the goals; smaller wins (paper
    §5.7).

    E12 = Σ_p (η(P_p(D1p, D2p)) − g_p)², E21 likewise. With ``one_sided=True`` only a
    shortfall below the goal counts (docs/papers.md, DW-5; not in the paper).

    >>> a = {"size": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4], "util": [6, 5, 5, 6, 4, 4, 4, 6, 5, 4]}
    >>> b = {"size": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7], "util": [6, 2, 2, 6, 2, 2, 2, 6, 2, 2]}
    >>> goal(a, b, goals=[1, 1])
    MultiResult(first=Fraction(49, 100), second=Fraction(49, 100), verdict=<Verdict.TIE: 'TIE'>)
    """
    caller = "goal"
    _same_properties(u1, u2, caller)
    names = list(u1)
    gs = [check_fraction(g, "goals", caller) for g in _per_property(goals, names, "goals", caller)]
    indices = _per_property(index, names, "index", caller)
    e12 = e21 = Fraction(0)
    exact = True
    for name, g, idx in zip(names, gs, indices):
        check_option(idx, "index", caller, BINARY_INDICES)
        x, y = index_pair(u1[name], u2[name], idx, normalization)
        if isinstance(x, float) or isinstance(y, float):
            exact = False
            g = float(g)
        e12 = e12 + _goal_term(x, g, one_sided)
        e21 = e21 + _goal_term(y, g, one_sided)
    return MultiResult(_simplify(e12), _simplify(e21), _by_value(e12, e21, 0, exact, higher=False))


def _goal_term(value, g, one_sided: bool):
    gap = value - g
    if one_sided and gap > 0:
        return 0
    return gap * gap


def goal_unary(u: Mapping, *, goals, index="mean", d_max=None, one_sided: bool = False):
    """E(Υ) = Σ_p (U_p(D_p) − g_p)², a scalar per release that ranks directly (paper §5.7).

    Parameters
    ----------
    u : mapping property -> vector
    goals : sequence or mapping
        g_p, usually U_p of a goal vector, on the scale of the oriented index (−P_rank
        for "rank").
    index : str or mapping, default="mean"
        Unary index per property.
    d_max : mapping, optional
        Ideal vectors for "rank".

    >>> goal_unary({"size": [3, 3, 4, 4]}, goals=[4], index="min")
    1
    """
    caller = "goal_unary"
    if not isinstance(u, Mapping) or not u:
        raise InvalidParameterError(
            f"The 'u' parameter of {caller} must be a non-empty mapping property -> vector."
        )
    names = list(u)
    gs = [check_fraction(g, "goals", caller) for g in _per_property(goals, names, "goals", caller)]
    indices = _per_property(index, names, "index", caller)
    total = Fraction(0)
    for name, g, idx in zip(names, gs, indices):
        check_option(idx, "index", caller, UNARY_INDICES)
        value = unary_value(u[name], idx, d_max=None if d_max is None else d_max.get(name))
        if isinstance(value, float):
            total = total + _goal_term(value, float(g), one_sided)
        else:
            total = total + _goal_term(Fraction(value), g, one_sided)
    return _simplify(total)
