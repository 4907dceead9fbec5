"""Builders of generalization hierarchies from an attribute's values, after ARX's
hierarchy builders (Prasser, Kohlmayer, "Putting statistical disclosure control into
practice: the ARX data anonymization tool", in *Medical Data Privacy Handbook*, 2015,
§ "Generalization hierarchies"): intervals with top and bottom coding, groupings of
consecutive values in a given order, and masking of characters (postcodes right to
left). Each returns a :class:`~fairanon.instances.hierarchy.Hierarchy` over the given
values, so it can be written as an ARX CSV (:meth:`Hierarchy.to_levels`, :func:`to_arx_csv`)
and read back by :meth:`Hierarchy.from_arx_csv` or put in a job file's schema as rows.

Labels follow :mod:`fairanon.instances.generalization`: a half-open interval is
``[20-25)``, a group of ordered values ``[first-last]``, a masked code ``130**``, the
root ``*``; top and bottom coding give ``>=80`` and ``<20``. Every leaf has one label per
level, ARX's row (:meth:`Hierarchy.generalize`): a value top-coded, or a group of one
value, keeps its label up to the root (``85;>=80;>=80;*``).

Numbers are leaves as their text is written (``45.0``, ``030`` and ``1e3`` stay so, the
text a column read as categorical holds) and are placed in intervals exactly (as
:class:`~fractions.Fraction`); interval ends are written as exact decimals. A number
beyond a float's range, or written with more than :data:`MAX_DIGITS` digits, is refused
before it is read.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import re
import sys
from collections.abc import Iterable, Sequence
from fractions import Fraction

import pandas as pd

from ..exceptions import InvalidParameterError
from .files import neutralize_formulas
from .generalization import format_number
from .hierarchy import SUPPRESSED, Hierarchy
from .texts import value_text

__all__ = ["interval_hierarchy", "grouping_hierarchy", "masking_hierarchy", "numeric_order", "to_arx_csv",
           "with_hierarchy"]


#: The most digits a number given to a builder may be written with (mantissa and exponent
#: alike), and the largest magnitude it may have (a float's): beyond, Fraction spends
#: seconds on the text's power of ten (``1e2000000``) and Python refuses to write a
#: label's digits (more than 4300).
MAX_DIGITS = 1000
LARGEST = Fraction(sys.float_info.max)
_EXPONENT = re.compile(r"[eE]([-+]?[\d_]+)$")


class _OutOfRange(ValueError):
    """A number beyond :data:`MAX_DIGITS` or :data:`LARGEST`."""


def _fraction(value: str | numbers.Rational) -> Fraction:
    """`value` (a number's text, an int or a Fraction) as an exact Fraction; raises
    :class:`_OutOfRange` for one beyond the builders' bounds, checked on the text before
    Fraction reads it, and ValueError for text that is no number."""
    if isinstance(value, str):
        text = value.strip()
        exponent = _EXPONENT.search(text)
        if sum(c.isdigit() for c in text) > MAX_DIGITS or (
                exponent and abs(int(exponent[1])) > MAX_DIGITS):  # int() of at most MAX_DIGITS digits
            raise _OutOfRange
        value = Fraction(text)
    x = Fraction(value)
    if abs(x) > LARGEST or x.denominator.bit_length() > MAX_DIGITS * 4:  # 10**1000 < 2**4000
        raise _OutOfRange
    return x


def _range_error(name: str, caller: str, value, must: str = "hold numbers") -> InvalidParameterError:
    """The message for a `value` beyond the builders' bounds (shortened: it can be long)."""
    try:
        shown = repr(value)
    except ValueError:  # an int of more digits than Python writes
        shown = f"a number ({type(value).__name__}) of more than {sys.get_int_max_str_digits()} digits"
    if len(shown) > 60:
        shown = f"{shown[:40]}... ({len(shown)} characters)"
    return InvalidParameterError(
        f"The {name!r} parameter of {caller} must {must} within a float's range (magnitude at most "
        f"{sys.float_info.max:.4g}), written with at most {MAX_DIGITS} digits. Got {shown} instead.")


def _exact(value, name: str, caller: str) -> Fraction:
    """`value` (int, str, Fraction or float) as an exact Fraction; floats via their text."""
    if isinstance(value, bool):
        raise InvalidParameterError(f"The {name!r} parameter of {caller} must be a number. Got {value!r} instead.")
    try:
        exact = _fraction(value if isinstance(value, (Fraction, int)) else str(value))
    except _OutOfRange:
        raise _range_error(name, caller, value, "be a number") from None
    except (ValueError, ZeroDivisionError):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a number. Got {value!r} instead.") from None
    return exact


def _numbers(values: Iterable, caller: str) -> list[tuple[Fraction, str]]:
    """The distinct values as (exact number, text), in increasing order (ties by text);
    missing values (None, NaN) are dropped. A string keeps its text; an int is written in
    full, a float as :func:`format_number` writes it."""
    out = {}
    for v in values:
        if not isinstance(v, (str, bytes)) and pd.api.types.is_scalar(v) and pd.isna(v):
            continue  # a missing value (None, NaN, pd.NA) has no place in a hierarchy
        if isinstance(v, numbers.Real) and not isinstance(v, numbers.Rational) and math.isinf(v):
            raise InvalidParameterError(f"The 'values' parameter of {caller} must hold finite numbers. Got {v!r}.")
        if isinstance(v, (str, Fraction)):
            given = v
        elif isinstance(v, numbers.Integral) and not isinstance(v, bool):
            given = int(v)
        elif isinstance(v, numbers.Real) and not isinstance(v, bool):
            given = format_number(v)
        else:
            given = None
        try:
            number = _fraction(given)
        except _OutOfRange:
            raise _range_error("values", caller, v) from None
        except (TypeError, ValueError, ZeroDivisionError):
            raise InvalidParameterError(
                f"The 'values' parameter of {caller} must hold numbers. Got {v!r} instead.") from None
        out[str(given)] = number  # an int's or a Fraction's text written once its size is known to be bounded
    if not out:
        raise InvalidParameterError(f"The 'values' parameter of {caller} must hold at least one number.")
    return sorted((x, t) for t, x in out.items())


def numeric_order(values: Iterable) -> list[str]:
    """The distinct texts of numbers in increasing order, as the leaves of
    :func:`interval_hierarchy` are: an order for :func:`grouping_hierarchy`.

    >>> numeric_order(["10", "9", "09.0", 9])
    ['09.0', '9', '10']
    """
    return [text for _, text in _numbers(values, "numeric_order")]


def _decimal(x: Fraction) -> str:
    """The exact text of `x`: a decimal when it has one (``0.1``, ``-2.5``), else ``p/q``."""
    if x.denominator == 1:
        return str(x.numerator)
    twos = fives = 0
    rest = x.denominator
    while rest % 2 == 0:
        rest, twos = rest // 2, twos + 1
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest != 1:
        return str(x)
    places = max(twos, fives)
    digits = str(abs(x.numerator) * 10**places // x.denominator).rjust(places + 1, "0")
    return f"{'-' if x < 0 else ''}{digits[:-places]}.{digits[-places:]}"


def _checked(rows: list[list[str]], caller: str, what: str) -> Hierarchy:
    """The tree of the level rows a builder made, refusing values that would make a
    released label ambiguous, in the user's terms (`what` names the values)."""
    leaves = {row[0] for row in rows}
    if SUPPRESSED in leaves:
        raise InvalidParameterError(
            f"The {what} of {caller} hold '*', which is reserved for suppression (a released '*' hides "
            "any value); recode or drop it first.")
    for row in rows:
        for level, label in enumerate(row[1:-1], 1):
            if label != row[0] and label in leaves:
                raise InvalidParameterError(
                    f"The {what} of {caller} hold {label!r}, which is also the label the tree gives "
                    f"{row[0]!r} at level {level}, so a released {label!r} would be ambiguous; recode the "
                    f"value {label!r} first.")
    return Hierarchy.from_levels(rows)


def interval_hierarchy(values: Iterable, widths: Sequence, *, origin=0, bottom=None, top=None) -> Hierarchy:
    """A tree of nested intervals over numeric values, with top and bottom coding.

    Level i (1-based) puts each value in the half-open interval ``[lo-hi)`` of width
    ``widths[i-1]`` aligned on `origin`; every value below `bottom` is ``<bottom`` and
    every value at or above `top` is ``>=top`` on all levels (bottom and top coding);
    intervals are cut at `bottom` and `top`. The root ``*`` is above the last level.

    Parameters
    ----------
    values : iterable of numbers or their texts
        The attribute's values (repeats and missing values are dropped); they become
        the leaves as written (a string keeps its text, e.g. ``45.0``; a float is
        written as :func:`~fairanon.instances.generalization.format_number` does) and
        are placed in intervals by their exact value.
    widths : sequence of numbers
        Positive widths, each a whole multiple of the one before it, so that the
        intervals of one level nest in those of the next (a tree).
    origin : number, default=0
        The left end of one interval of every level.
    bottom, top : number, optional
        Bottom and top coding thresholds (``bottom < top``).

    Examples
    --------
    >>> h = interval_hierarchy([17, 23, 37, 85], [5, 10], bottom=20, top=80)
    >>> h.ancestors("23"), h.ancestors("17"), h.ancestors("85")
    (['23', '[20-25)', '[20-30)', '*'], ['17', '<20', '*'], ['85', '>=80', '*'])
    >>> [h.generalize("85", j) for j in range(4)]
    ['85', '>=80', '>=80', '*']
    """
    caller = "interval_hierarchy"
    numbers = _numbers(values, caller)
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence) or not widths:
        raise InvalidParameterError(f"The 'widths' parameter of {caller} must be a non-empty list of numbers. "
                                    f"Got {widths!r} instead.")
    steps = [_exact(w, "widths", caller) for w in widths]
    for before, w in zip([None, *steps], steps):
        if w <= 0 or (before is not None and (w / before).denominator != 1):
            raise InvalidParameterError(
                f"The 'widths' parameter of {caller} must hold positive numbers, each a whole multiple of the one "
                f"before it (so that intervals nest). Got {list(widths)!r} instead.")
    start = _exact(origin, "origin", caller)
    low = None if bottom is None else _exact(bottom, "bottom", caller)
    high = None if top is None else _exact(top, "top", caller)
    if low is not None and high is not None and not low < high:
        raise InvalidParameterError(f"The 'bottom' parameter of {caller} must be below 'top'. "
                                    f"Got bottom={bottom!r}, top={top!r} instead.")

    rows = []
    for x, leaf in numbers:
        if low is not None and x < low:
            coded = [f"<{_decimal(low)}"] * len(steps)  # bottom coding on every level
        elif high is not None and x >= high:
            coded = [f">={_decimal(high)}"] * len(steps)
        else:
            coded = []
            for w in steps:
                lo = start + ((x - start) // w) * w
                hi = lo + w
                lo, hi = max(lo, low) if low is not None else lo, min(hi, high) if high is not None else hi
                coded.append(f"[{_decimal(lo)}-{_decimal(hi)})")
        rows.append([leaf, *coded, SUPPRESSED])
    return _checked(rows, caller, "'values'")


def grouping_hierarchy(order: Sequence, sizes: Sequence[int]) -> Hierarchy:
    """A tree of groups of consecutive values of an ordered domain.

    Level 1 groups ``sizes[0]`` consecutive values of `order`, level i groups
    ``sizes[i-1]`` consecutive groups of level i-1 (the last group of a level may be
    smaller); a group is labelled ``[first-last]`` by its first and last value, as
    an ordered range is released, and a group of one value by the value (it
    generalizes nothing). The root ``*`` is above the last level.

    >>> h = grouping_hierarchy(["a", "b", "c", "d", "e"], [2, 2])
    >>> h.ancestors("a"), h.ancestors("e")
    (['a', '[a-b]', '[a-d]', '*'], ['e', '*'])
    """
    caller = "grouping_hierarchy"
    values = [value_text(v) for v in order]
    if not values or len(set(values)) != len(values):
        raise InvalidParameterError(f"The 'order' parameter of {caller} must list distinct values. "
                                    f"Got {values[:5]!r} instead.")
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or not sizes or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 2 for s in sizes):
        raise InvalidParameterError(f"The 'sizes' parameter of {caller} must be a non-empty list of ints >= 2. "
                                    f"Got {sizes!r} instead.")
    rows = [[v] for v in values]
    groups = [[i] for i in range(len(values))]  # the leaves under each group of the level below
    named: dict[str, list[int]] = {}
    for size in sizes:
        groups = [sum(groups[i:i + size], []) for i in range(0, len(groups), size)]
        for members in groups:
            first, last = values[members[0]], values[members[-1]]
            label = first if len(members) == 1 else f"[{first}-{last}]"
            if len(members) > 1 and named.setdefault(label, members) != members:  # values holding '-'
                other = named[label]
                raise InvalidParameterError(
                    f"The values of 'order' of {caller} give two groups the label {label!r} (from "
                    f"{values[other[0]]!r} to {values[other[-1]]!r}, and from {first!r} to {last!r}), so a "
                    "released label would be ambiguous; recode the values holding '-'.")
            for i in members:
                rows[i].append(label)
    return _checked([row + [SUPPRESSED] for row in rows], caller, "values of 'order'")


def masking_hierarchy(values: Iterable, *, levels: int | None = None, from_right: bool = True,
                      char: str = "*") -> Hierarchy:
    """A tree that masks one more character of each code per level (postcodes right to left).

    Codes shorter than the longest are compared as they are: level i masks the last
    (or first, with ``from_right=False``) i characters of each, up to `levels`
    (default: all but one character of the longest code); the root ``*`` is above.

    >>> masking_hierarchy(["13053", "13268"], levels=3).ancestors("13053")
    ['13053', '1305*', '130**', '13***', '*']
    >>> masking_hierarchy(["ab", "ac"], from_right=False).ancestors("ab")
    ['ab', '*b', '*']
    """
    caller = "masking_hierarchy"
    codes = sorted({value_text(v) for v in values})
    if not codes:
        raise InvalidParameterError(f"The 'values' parameter of {caller} must not be empty.")
    if not isinstance(char, str) or len(char) != 1:
        raise InvalidParameterError(f"The 'char' parameter of {caller} must be one character. Got {char!r} instead.")
    marked = [c for c in codes if char in c]
    if marked:
        raise InvalidParameterError(
            f"The 'values' of {caller} hold {marked[0]!r}, which holds the mask character {char!r}, so "
            "a masked code could not be told from a value; give another 'char' or recode the value.")
    width = max(len(c) for c in codes)
    if levels is None:
        levels = max(width - 1, 0)
    if isinstance(levels, bool) or not isinstance(levels, int) or not 0 <= levels < max(width, 1):
        raise InvalidParameterError(f"The 'levels' parameter of {caller} must be an int in [0, {width - 1}] "
                                    f"(the longest code has {width} characters). Got {levels!r} instead.")
    rows = []
    for c in codes:
        masked = [c[:max(len(c) - i, 0)] + char * min(i, len(c)) if from_right
                  else char * min(i, len(c)) + c[min(i, len(c)):] for i in range(1, levels + 1)]
        rows.append([c, *masked, SUPPRESSED])
    return _checked(rows, caller, "'values'")


def to_arx_csv(hierarchy: Hierarchy, sep: str = ";") -> str:
    """The tree as an ARX hierarchy CSV (what :meth:`Hierarchy.from_arx_csv` reads): a
    row per leaf, column j its label at level j (:meth:`Hierarchy.to_levels`). A cell a
    spreadsheet would run as a formula (``=HYPERLINK(...)``) is written with a ``'`` in
    front (:func:`~fairanon.instances.files.neutralize_formulas`), which
    :meth:`Hierarchy.from_arx_csv` removes.

    >>> print(to_arx_csv(grouping_hierarchy(["=1+1", "b"], [2])), end="")
    '=1+1;[=1+1-b];*
    b;[=1+1-b];*
    """
    rows = neutralize_formulas(pd.DataFrame(hierarchy.to_levels(), dtype=object)).to_numpy().tolist()
    out = io.StringIO()
    csv.writer(out, delimiter=sep, lineterminator="\n").writerows(rows)
    return out.getvalue()


def with_hierarchy(attribute, hierarchy: Hierarchy):
    """`attribute` generalized by `hierarchy` from now on: an ordered attribute whose
    order the tree's leaves follow stays ordered, any other becomes categorical over
    the tree (a numeric one releases the tree's intervals instead of its own ranges)."""
    ordered = attribute.kind == "ordered" and set(hierarchy.leaves) == set(attribute.order or ())
    return attribute.with_(kind="ordered" if ordered else "categorical", hierarchy=hierarchy,
                           order=attribute.order if ordered else None, intervals=None)
