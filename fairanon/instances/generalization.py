"""What a released label means: the set of original values it stands for.

Released quasi-identifier cells are strings:

- numeric attributes: the value itself (``37``), a closed range ``[25-34]`` (half-open
  ``[20-25)`` and ``(a-b]`` forms are read too) or ``*``;
- ordered attributes: a value, a range of values in the attribute's order (``[Bachelors-Masters]``,
  brackets optional), a hierarchy node if the attribute has a hierarchy, or ``*``;
- categorical attributes: a node of the attribute's hierarchy (a leaf is the value
  itself) or ``*``.

Algorithms format labels with :func:`format_range`; the verifier and the metrics read
them back with :func:`label_covers`, so both sides share one definition.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._arrays import as_index
from ..exceptions import SchemaError
from .hierarchy import SUPPRESSED
from .schema import Attribute

__all__ = ["format_number", "format_range", "LabelCovers", "label_covers", "readable_covers"]


def format_number(x: float) -> str:
    """Shortest exact text of a number: ``3.0`` -> ``'3'``, ``2.5`` -> ``'2.5'``."""
    x = float(x)
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(x)


def format_range(attr: Attribute, lo, hi) -> str:
    """The release label of the closed range [lo, hi] of `attr` (a value if lo == hi).

    >>> from fairanon.instances.schema import Attribute
    >>> format_range(Attribute("age", kind="numeric"), 25, 34)
    '[25-34]'
    >>> format_range(Attribute("edu", kind="ordered", order=["a", "b"]), "a", "a")
    'a'
    """
    if attr.kind == "numeric":
        return format_number(lo) if lo == hi else f"[{format_number(lo)}-{format_number(hi)}]"
    return str(lo) if lo == hi else f"[{lo}-{hi}]"


@dataclass(frozen=True)
class LabelCovers:
    """The meaning of distinct released labels of one attribute.

    For numeric attributes ``lo``/``hi`` bound each label (``lo_open``/``hi_open`` tell
    whether the bound itself is excluded); otherwise ``mask[i, j]`` says whether label i
    covers the j-th value of the attribute's domain.
    """

    labels: tuple[str, ...]
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    lo_open: np.ndarray | None = None
    hi_open: np.ndarray | None = None
    mask: np.ndarray | None = None

    def contains(self, label_codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Per row: does the label (by index into :attr:`labels`) cover the original value?

        `values` are numbers for numeric attributes and domain indices otherwise.
        """
        label_codes = as_index(label_codes)
        if self.mask is not None:
            return self.mask[label_codes, as_index(values)]
        lo, hi = self.lo[label_codes], self.hi[label_codes]
        above = np.where(self.lo_open[label_codes], values > lo, values >= lo)
        below = np.where(self.hi_open[label_codes], values < hi, values <= hi)
        return above & below


def _split_pairs(text: str):
    """Every way to read `text` as ``left-right`` (split at each '-')."""
    for i, ch in enumerate(text):
        if ch == "-" and 0 < i < len(text) - 1:
            yield text[:i].strip(), text[i + 1 :].strip()


def _parse_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


_PLAIN_RANGE = re.compile(r"([\[(])(-?\d+(?:\.\d+)?)-(-?\d+(?:\.\d+)?)([\])])")


def _numeric_bounds(label: str) -> tuple[float, float, bool, bool] | None:
    if label == SUPPRESSED:
        return -math.inf, math.inf, False, False
    if label[:1] not in ("[", "("):  # no number's text starts with a bracket
        value = _parse_float(label)
        return None if value is None else (value, value, False, False)
    plain = _PLAIN_RANGE.fullmatch(label)
    if plain is not None:  # the ranges the methods write, read without trying each '-'
        lo, hi = float(plain[2]), float(plain[3])
        if lo <= hi:
            return lo, hi, plain[1] == "(", plain[4] == ")"
    if len(label) >= 5 and label[-1] in "])":
        for left, right in _split_pairs(label[1:-1]):
            lo, hi = _parse_float(left), _parse_float(right)
            if lo is not None and hi is not None and lo <= hi:
                return lo, hi, label[0] == "(", label[-1] == ")"
    return None


def _ordered_mask(attr: Attribute, label: str, index: dict[str, int]) -> np.ndarray | None:
    m = len(attr.domain)
    if label == SUPPRESSED:
        return np.ones(m, dtype=bool)
    if label in index:
        row = np.zeros(m, dtype=bool)
        row[index[label]] = True
        return row
    if attr.hierarchy is not None and label in attr.hierarchy:
        return attr.hierarchy.leaf_mask(label)
    if attr.kind == "ordered":
        inner = label[1:-1] if label.startswith("[") and label.endswith("]") else label
        for left, right in _split_pairs(inner):
            if left in index and right in index and index[left] <= index[right]:
                row = np.zeros(m, dtype=bool)
                row[index[left] : index[right] + 1] = True
                return row
    return None


def label_covers(attr: Attribute, labels: Sequence[str]) -> LabelCovers:
    """Parse the distinct released labels of `attr`.

    Raises
    ------
    SchemaError
        If a label is not a value, range or node of the attribute.

    >>> from fairanon.instances.schema import Attribute
    >>> c = label_covers(Attribute("age", kind="numeric"), ["[25-34]", "40", "*"])
    >>> c.contains(np.array([0, 0, 1, 2]), np.array([30.0, 35.0, 40.0, 99.0])).tolist()
    [True, False, True, True]
    """
    labels = tuple(str(v) for v in labels)
    if attr.kind == "numeric":
        # Filled in place: a list of per-label tuples would keep thousands of small
        # containers alive and set off the collector's full passes.
        lo, hi = np.empty(len(labels)), np.empty(len(labels))
        lo_open, hi_open = np.zeros(len(labels), dtype=bool), np.zeros(len(labels), dtype=bool)
        for i, label in enumerate(labels):
            b = _numeric_bounds(label)
            if b is None:
                raise SchemaError(
                    f"Released value {label!r} of numeric attribute {attr.name!r} is not a number, "
                    "a range like [25-34] or '*'."
                )
            lo[i], hi[i], lo_open[i], hi_open[i] = b
        return LabelCovers(labels, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)
    index = {v: i for i, v in enumerate(attr.domain)}
    rows = []
    for label in labels:
        row = _ordered_mask(attr, label, index)
        if row is None:
            raise SchemaError(
                f"Released value {label!r} of attribute {attr.name!r} is not a value, "
                f"{'range, ' if attr.kind == 'ordered' else ''}hierarchy node or '*' of that attribute."
            )
        rows.append(row)
    mask = np.vstack(rows) if rows else np.zeros((0, len(index)), dtype=bool)
    return LabelCovers(labels, mask=mask)


def readable_covers(attr: Attribute, labels: Sequence[str]) -> tuple[LabelCovers, dict[int, str]]:
    """:func:`label_covers` that does not stop at a label it cannot read: such a label
    stands as ``*`` in the covers, and the dict maps its index in `labels` to the reason
    (the verifier counts every cell that holds it as untruthful)."""
    try:
        return label_covers(attr, labels), {}
    except SchemaError:
        pass
    labels = [str(v) for v in labels]
    unreadable = {}
    for i, label in enumerate(labels):
        try:
            label_covers(attr, [label])
        except SchemaError as exc:
            unreadable[i] = str(exc)
    return label_covers(attr, [SUPPRESSED if i in unreadable else v for i, v in enumerate(labels)]), unreadable
