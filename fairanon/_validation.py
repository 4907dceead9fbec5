"""Shared argument checks; every message names the parameter, the caller, what is
allowed and what was given."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from .exceptions import InvalidParameterError

__all__ = ["check_bool", "check_fraction", "check_int", "check_option", "check_random_state",
           "check_time_limit"]


def check_fraction(
    value: Any,
    name: str,
    caller: str,
    *,
    low: Fraction | int | None = None,
    high: Fraction | int | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> Fraction:
    """Return `value` as an exact rational.

    Floats go through their shortest decimal repr, so ``0.15`` becomes ``3/20``.

    >>> check_fraction(0.15, "t", "TCloseness")
    Fraction(3, 20)
    >>> check_fraction("1/3", "t", "TCloseness")
    Fraction(1, 3)
    """
    if isinstance(value, bool) or value is None:
        frac = None
    elif isinstance(value, Fraction):
        frac = value
    elif isinstance(value, numbers.Integral):
        frac = Fraction(int(value))
    elif isinstance(value, (float, np.floating)):
        frac = Fraction(repr(float(value))) if np.isfinite(value) else None
    elif isinstance(value, str):
        try:
            frac = Fraction(value.strip())
        except (ValueError, ZeroDivisionError):  # "1/0" too
            frac = None
    else:
        frac = None
    interval = (f"{'(' if low_open else '['}{'-inf' if low is None else low}, "
                f"{'inf' if high is None else high}{')' if high_open else ']'}")
    if frac is None:
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a number (int, float, str or "
            f"Fraction) in {interval}. Got {value!r} instead."
        )
    if (low is not None and (frac < low or (low_open and frac == low))) or (
        high is not None and (frac > high or (high_open and frac == high))
    ):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be in {interval}. Got {value!r} instead."
        )
    return frac


def check_int(value: Any, name: str, caller: str, *, low: int | None = None) -> int:
    """Return `value` as an int no smaller than `low`.

    >>> check_int(5, "k", "KAnonymity", low=1)
    5
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be an int in "
            f"[{'-inf' if low is None else low}, inf). Got {value!r} instead."
        )
    if low is not None and value < low:
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be an int in [{low}, inf). "
            f"Got {value!r} instead."
        )
    return int(value)


def check_bool(value: Any, name: str, caller: str) -> bool:
    """Return `value` if it is a bool (numpy's included), as a bool.

    >>> check_bool(True, "risk", "verify")
    True
    """
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a bool (True or False). Got {value!r} instead."
        )
    return bool(value)


def check_option(value: Any, name: str, caller: str, options) -> Any:
    """Return `value` if it is one of `options` (a collection of allowed values)."""
    if value not in options:
        allowed = ", ".join(repr(o) for o in sorted(options, key=str))
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be one of {allowed}. Got {value!r} instead."
        )
    return value


def check_time_limit(time_limit, caller: str) -> float | None:
    """None or a positive number of seconds; ``inf`` (or an int beyond any float) is no
    limit (None): the shares a caller takes of a limit would be inf - inf.

    >>> check_time_limit(10**400, "anonymize") is None
    True
    """
    if time_limit is None:
        return None
    if (
        isinstance(time_limit, (bool, np.bool_))
        or not isinstance(time_limit, numbers.Real)  # numpy's numbers too
        or not time_limit > 0
    ):
        raise InvalidParameterError(
            f"The 'time_limit' parameter of {caller} must be a positive number of seconds or "
            f"None. Got {time_limit!r} instead."
        )
    try:
        seconds = float(time_limit)
    except OverflowError:  # an int beyond any float: no limit either
        return None
    return None if math.isinf(seconds) else seconds


def check_random_state(seed: Any) -> np.random.Generator:
    """Turn None, an int or a numpy Generator into a numpy Generator.

    >>> int(check_random_state(0).integers(10)) == int(check_random_state(0).integers(10))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0):
        return np.random.default_rng(seed)
    raise InvalidParameterError(
        "The 'seed' parameter must be None, a non-negative int or a numpy.random.Generator. "
        f"Got {seed!r} instead."
    )
