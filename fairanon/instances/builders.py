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
root ``*``; top and bottom coding give ``>=80`` and ``<20``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

from ..exceptions import InvalidParameterError
from .generalization import format_number
from .hierarchy import SUPPRESSED, Hierarchy, pad_levels

__all__ = ["interval_hierarchy", "grouping_hierarchy", "masking_hierarchy", "to_arx_csv", "with_hierarchy"]


def _exact(value, name: str, caller: str) -> Fraction:
    """`value` (int, str, Fraction or float) as an exact Fraction; floats via their text."""
    if isinstance(value, bool):
        raise InvalidParameterError(f"The {name!r} parameter of {caller} must be a number. Got {value!r} instead.")
    try:
        exact = Fraction(str(value).strip()) if not isinstance(value, Fraction) else value
    except (ValueError, ZeroDivisionError):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a number. Got {value!r} instead.") from None
    return exact


def _numbers(values: Iterable, caller: str) -> list[Fraction]:
    out = []
    for v in values:
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"The 'values' parameter of {caller} must hold numbers. Got {v!r} instead.") from None
        if math.isnan(x):
            continue  # a missing value has no place in a hierarchy
        if math.isinf(x):
            raise InvalidParameterError(f"The 'values' parameter of {caller} must hold finite numbers. Got {v!r}.")
        out.append(Fraction(format_number(x)))
    if not out:
        raise InvalidParameterError(f"The 'values' parameter of {caller} must hold at least one number.")
    return sorted(set(out))


def interval_hierarchy(values: Iterable, widths: Sequence, *, origin=0, bottom=None, top=None) -> Hierarchy:
    """A tree of nested intervals over numeric values, with top and bottom coding.

    Level i (1-based) puts each value in the half-open interval ``[lo-hi)`` of width
    ``widths[i-1]`` aligned on `origin`; every value below `bottom` is ``<bottom`` and
    every value at or above `top` is ``>=top`` on all levels (bottom and top coding);
    intervals are cut at `bottom` and `top`. The root ``*`` is above the last level.

    Parameters
    ----------
    values : iterable of numbers
        The attribute's values (repeats and missing values are dropped); they become
        the leaves, written as :func:`~fairanon.instances.generalization.format_number` does.
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

    def text(x: Fraction) -> str:
        return format_number(x) if x.denominator == 1 else format_number(float(x))

    rows = []
    for x in numbers:
        if low is not None and x < low:
            coded = [f"<{text(low)}"]
        elif high is not None and x >= high:
            coded = [f">={text(high)}"]
        else:
            coded = []
            for w in steps:
                lo = start + ((x - start) // w) * w
                hi = lo + w
                lo, hi = max(lo, low) if low is not None else lo, min(hi, high) if high is not None else hi
                coded.append(f"[{text(lo)}-{text(hi)})")
        rows.append([text(x), *coded, SUPPRESSED])
    return Hierarchy.from_levels(pad_levels(rows))


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
    values = [str(v) for v in order]
    if not values or len(set(values)) != len(values):
        raise InvalidParameterError(f"The 'order' parameter of {caller} must list distinct values. "
                                    f"Got {values[:5]!r} instead.")
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or not sizes or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 2 for s in sizes):
        raise InvalidParameterError(f"The 'sizes' parameter of {caller} must be a non-empty list of ints >= 2. "
                                    f"Got {sizes!r} instead.")
    rows = [[v] for v in values]
    groups = [[i] for i in range(len(values))]  # the leaves under each group of the level below
    for size in sizes:
        groups = [sum(groups[i:i + size], []) for i in range(0, len(groups), size)]
        for members in groups:
            first, last = values[members[0]], values[members[-1]]
            label = first if len(members) == 1 else f"[{first}-{last}]"
            for i in members:
                rows[i].append(label)
    return Hierarchy.from_levels([row + [SUPPRESSED] for row in rows])


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
    codes = sorted({str(v) for v in values})
    if not codes:
        raise InvalidParameterError(f"The 'values' parameter of {caller} must not be empty.")
    if not isinstance(char, str) or len(char) != 1:
        raise InvalidParameterError(f"The 'char' parameter of {caller} must be one character. Got {char!r} instead.")
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
    return Hierarchy.from_levels(rows)


def to_arx_csv(hierarchy: Hierarchy, sep: str = ";") -> str:
    """The tree as an ARX hierarchy CSV (what :meth:`Hierarchy.from_arx_csv` reads)."""
    out = io.StringIO()
    csv.writer(out, delimiter=sep, lineterminator="\n").writerows(hierarchy.to_levels())
    return out.getvalue()


def with_hierarchy(attribute, hierarchy: Hierarchy):
    """`attribute` generalized by `hierarchy` from now on: an ordered attribute whose
    order the tree's leaves follow stays ordered, any other becomes categorical over
    the tree (a numeric one releases the tree's intervals instead of its own ranges)."""
    ordered = attribute.kind == "ordered" and set(hierarchy.leaves) == set(attribute.order or ())
    return attribute.with_(kind="ordered" if ordered else "categorical", hierarchy=hierarchy,
                           order=attribute.order if ordered else None, intervals=None)
