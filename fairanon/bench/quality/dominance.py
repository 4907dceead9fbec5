"""Dominance between property vectors (Dewri et al., EDBT 2009, Table 4).

Record by record, D1 dominates D2 when it is never worse and once better; properties
paired by name give the set-level relation of :func:`set_dominance` (docs/papers.md, DW-4). Only
dominance and ▶cov depend on *which* record gets which value (docs/papers.md, DW-6).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...exceptions import InvalidParameterError
from .vectors import _pair

__all__ = ["Dominance", "dominance", "set_dominance", "tuple_counts"]


class Dominance(str, enum.Enum):
    """Outcome of :func:`dominance`; exactly one holds for any two vectors."""

    EQUAL = "EQUAL"
    BETTER = "BETTER"
    WORSE = "WORSE"
    INCOMPARABLE = "INCOMPARABLE"

    def __str__(self) -> str:
        return self.value


def tuple_counts(d1, d2) -> tuple[int, int, int]:
    """(W12, W21, T): records where D1 is better, where D2 is better, and ties.

    >>> tuple_counts([2, 2, 3, 4, 5], [3, 2, 4, 2, 3])
    (2, 2, 1)
    """
    a, b, tol = _pair(d1, d2, "tuple_counts")
    diff = a - b
    w12 = int(np.count_nonzero((diff > tol).astype(bool)))
    w21 = int(np.count_nonzero((diff < -tol).astype(bool)))
    return w12, w21, len(a) - w12 - w21


def dominance(d1, d2) -> Dominance:
    """The dominance relation between two vectors of one property (paper Table 4).

    Returns EQUAL (d1_i = d2_i for all i), BETTER (D1 ≻ D2: never worse, once
    better), WORSE (D2 ≻ D1) or INCOMPARABLE (D1 ∥ D2).

    >>> dominance([4, 6, 4, 4, 6, 6, 6, 4, 6, 6], [3, 7, 7, 3, 7, 7, 7, 3, 7, 7])
    <Dominance.INCOMPARABLE: 'INCOMPARABLE'>
    """
    w12, w21, _ = tuple_counts(d1, d2)
    if w12 == 0 and w21 == 0:
        return Dominance.EQUAL
    if w21 == 0:
        return Dominance.BETTER
    if w12 == 0:
        return Dominance.WORSE
    return Dominance.INCOMPARABLE


def set_dominance(u1: Mapping[str, Any], u2: Mapping[str, Any]) -> Dominance:
    """Set-level dominance of two property sets paired by name (docs/papers.md, DW-4).

    Υ1 ⪰ Υ2 iff D1p ⪰ D2p for every property p; BETTER (≻) iff also strictly better
    on at least one; INCOMPARABLE iff neither weakly dominates the other.

    >>> set_dominance({"s": [3, 4], "u": [1, 1]}, {"s": [3, 3], "u": [1, 1]})
    <Dominance.BETTER: 'BETTER'>
    """
    _same_properties(u1, u2, "set_dominance")
    outcomes = [dominance(u1[p], u2[p]) for p in u1]
    weak12 = all(o in (Dominance.EQUAL, Dominance.BETTER) for o in outcomes)
    weak21 = all(o in (Dominance.EQUAL, Dominance.WORSE) for o in outcomes)
    if weak12 and weak21:
        return Dominance.EQUAL
    if weak12:
        return Dominance.BETTER
    if weak21:
        return Dominance.WORSE
    return Dominance.INCOMPARABLE


def _same_properties(u1: Mapping, u2: Mapping, caller: str) -> None:
    if not isinstance(u1, Mapping) or not isinstance(u2, Mapping):
        raise InvalidParameterError(
            f"{caller} compares property sets given as mappings name -> vector. "
            f"Got {type(u1).__name__} and {type(u2).__name__} instead."
        )
    if list(u1) != list(u2):
        raise InvalidParameterError(
            f"{caller} pairs properties by name and order; got {list(u1)} and {list(u2)}."
        )
    if not u1:
        raise InvalidParameterError(f"{caller} needs at least one property.")
