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
from functools import cached_property

import numpy as np

from .._arrays import as_index
from .._memory import check_memory
from ..exceptions import SchemaError
from .hierarchy import SUPPRESSED
from .schema import Attribute

__all__ = ["format_number", "format_range", "LabelCovers", "label_covers", "readable_covers",
           "tells_nothing"]


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
    whether the bound itself is excluded). Otherwise label i covers the values at the
    positions ``start[i] <= p < stop[i]``: positions in the attribute's domain, or, where
    ``in_tree[i]`` (a hierarchy node), depth-first positions of the hierarchy's leaves
    (``tree_leaves`` names the value at each, ``tree_positions`` is its inverse). A
    labels-by-values table would take labels x values bytes -- 900 MB for 30,000
    distinct values all released -- so :attr:`mask` is built only on request.
    """

    labels: tuple[str, ...]
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    lo_open: np.ndarray | None = None
    hi_open: np.ndarray | None = None
    start: np.ndarray | None = None
    stop: np.ndarray | None = None
    in_tree: np.ndarray | None = None
    tree_leaves: np.ndarray | None = None
    tree_positions: np.ndarray | None = None
    n_values: int = 0
    name: str = ""

    @property
    def numeric(self) -> bool:
        return self.lo is not None

    @property
    def counts(self) -> np.ndarray:
        """Number of domain values each (non-numeric) label covers."""
        return self.stop - self.start

    def contains(self, label_codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Per row: does the label (by index into :attr:`labels`) cover the original value?

        `values` are numbers for numeric attributes and domain indices otherwise.
        """
        label_codes = as_index(label_codes)
        if not self.numeric:
            values = as_index(values)
            if self.tree_positions is not None:
                values = np.where(self.in_tree[label_codes], self.tree_positions[values], values)
            return (self.start[label_codes] <= values) & (values < self.stop[label_codes])
        lo, hi = self.lo[label_codes], self.hi[label_codes]
        above = np.where(self.lo_open[label_codes], values > lo, values >= lo)
        below = np.where(self.hi_open[label_codes], values < hi, values <= hi)
        return above & below

    def single_values(self) -> np.ndarray:
        """Per (non-numeric) label, the domain index of its value when it covers exactly
        one, else -1."""
        out = np.full(len(self.labels), -1, dtype=np.int64)
        one = self.counts == 1
        out[one & ~self.in_tree] = self.start[one & ~self.in_tree]
        if self.tree_leaves is not None:
            out[one & self.in_tree] = self.tree_leaves[self.start[one & self.in_tree]]
        return out

    def labels_per_value(self) -> np.ndarray:
        """How many (non-numeric) labels cover each domain value, by differences of the
        ranges instead of the table."""
        return self.value_sums(np.ones(len(self.labels), dtype=np.int64))

    def value_sums(self, weights: np.ndarray) -> np.ndarray:
        """Per domain value, the sum of `weights` (one per non-numeric label) over the
        labels that cover it -- ``weights @ mask`` -- by differences of the ranges in
        O(labels + values). Float weights come out with the rounding of prefix sums,
        which need not leave an exact 0 where only cancelling terms meet."""
        weights = np.asarray(weights)
        in_tree = self.in_tree
        flat = np.zeros(self.n_values + 1, dtype=weights.dtype)
        np.add.at(flat, self.start[~in_tree], weights[~in_tree])
        np.add.at(flat, self.stop[~in_tree], -weights[~in_tree])
        out = np.cumsum(flat[:-1])
        if self.tree_positions is not None:
            tree = np.zeros(self.n_values + 1, dtype=weights.dtype)
            np.add.at(tree, self.start[in_tree], weights[in_tree])
            np.add.at(tree, self.stop[in_tree], -weights[in_tree])
            out += np.cumsum(tree[:-1])[self.tree_positions]
        return out

    def active_spans(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per (non-numeric) label, over the values `active` marks ranked in domain
        order: how many it covers, the first and the last rank covered (0 and -1 when it
        covers none) -- what the rows of :attr:`mask` restricted to `active` give, in
        O(labels + values)."""
        before = np.zeros(self.n_values + 1, dtype=np.int64)  # active values before each position
        np.cumsum(active, out=before[1:])
        count, first, last = (np.empty(len(self.labels), dtype=np.int64) for _ in range(3))
        flat = ~self.in_tree
        s, e = self.start[flat], self.stop[flat]
        count[flat] = before[e] - before[s]
        first[flat], last[flat] = before[s], before[e] - 1
        if self.tree_positions is not None and self.in_tree.any():
            s, e = self.start[self.in_tree], self.stop[self.in_tree]
            on = active[self.tree_leaves]
            rank = before[:-1][self.tree_leaves]
            below = np.zeros(len(on) + 1, dtype=np.int64)
            np.cumsum(on, out=below[1:])
            count[self.in_tree] = below[e] - below[s]
            # Each node's range is not empty, so reduceat over the pairs (s, e) reduces
            # exactly rank[s:e]; the odd entries (e to the next s) are dropped.
            bounds = np.empty(2 * len(s), dtype=np.int64)
            bounds[0::2], bounds[1::2] = s, e
            never = np.int64(self.n_values)
            lowest = np.minimum.reduceat(np.append(np.where(on, rank, never), never), bounds)[0::2]
            highest = np.maximum.reduceat(np.append(np.where(on, rank, -1), -1), bounds)[0::2]
            first[self.in_tree], last[self.in_tree] = lowest, highest
        empty = count == 0
        first[empty], last[empty] = 0, -1
        return count, first, last

    @cached_property
    def mask(self) -> np.ndarray | None:
        """``mask[i, j]``: whether label i covers the j-th value of the domain (None for a
        numeric attribute). Labels x values bytes: checked against the memory limit
        before it is built."""
        if self.numeric:
            return None
        n_labels, m = len(self.labels), self.n_values
        check_memory(
            n_labels * m,
            f"the table of which of the {m:,} values of {self.name!r} each of its {n_labels:,} "
            "released labels covers",
            f"generalize {self.name!r} to fewer distinct values (a hierarchy with fewer leaves), "
            "or give it the role 'identifier' if it identifies records",
        )
        out = np.zeros((n_labels, m), dtype=bool)
        for i, (s, e, tree) in enumerate(zip(self.start.tolist(), self.stop.tolist(), self.in_tree.tolist())):
            if tree:
                out[i, self.tree_leaves[s:e]] = True
            else:
                out[i, s:e] = True
        return out


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


def _ordered_range(attr: Attribute, label: str, index: dict[str, int]) -> tuple[int, int, bool] | None:
    """The positions ``(start, stop, in_tree)`` a non-numeric label covers (see
    :class:`LabelCovers`), or None if it names nothing of `attr`."""
    if label == SUPPRESSED:
        return 0, len(index), False
    if label in index:
        return index[label], index[label] + 1, False
    if attr.hierarchy is not None and label in attr.hierarchy:
        return (*attr.hierarchy.leaf_range(label), True)
    if attr.kind == "ordered":
        inner = label[1:-1] if label.startswith("[") and label.endswith("]") else label
        for left, right in _split_pairs(inner):
            if left in index and right in index and index[left] <= index[right]:
                return index[left], index[right] + 1, False
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
    start, stop = np.empty(len(labels), dtype=np.int64), np.empty(len(labels), dtype=np.int64)
    in_tree = np.zeros(len(labels), dtype=bool)
    for i, label in enumerate(labels):
        found = _ordered_range(attr, label, index)
        if found is None:
            raise SchemaError(
                f"Released value {label!r} of attribute {attr.name!r} is not a value, "
                f"{'range, ' if attr.kind == 'ordered' else ''}hierarchy node or '*' of that attribute."
            )
        start[i], stop[i], in_tree[i] = found
    tree_leaves = tree_positions = None
    if in_tree.any():
        tree = attr.hierarchy
        tree_leaves, tree_positions = tree.depth_first_leaves, tree.leaf_positions
        if tree.leaves != attr.domain and sorted(tree.leaves) == sorted(attr.domain):
            # An ordered attribute whose tree lists its leaves in another order: the
            # positions are of the attribute's own values, found by name.
            in_domain = np.array([index[v] for v in tree.leaves], dtype=np.int64)
            tree_leaves = in_domain[tree_leaves]
            tree_positions = np.empty_like(tree_positions)
            tree_positions[tree_leaves] = np.arange(len(tree_leaves), dtype=np.int64)
    return LabelCovers(
        labels, start=start, stop=stop, in_tree=in_tree, tree_leaves=tree_leaves,
        tree_positions=tree_positions, n_values=len(index), name=attr.name,
    )


def tells_nothing(attr: Attribute, covers: LabelCovers, present: np.ndarray) -> np.ndarray:
    """Per label of `covers` (parsed for `attr`): ``*``, or a generalized label -- not a
    value's own -- that covers every value in `present` (numbers for a numeric
    attribute, domain indices otherwise), such as a hierarchy's root or the range from
    the least value present to the greatest. Such a label tells nothing about a record
    that ``*`` does not (NCP and LM 1 either way), so it counts as a star: the one rule
    of the ``stars`` objective, kept by the metrics and by every model, so that a
    release cannot lower its count of stars by writing it instead of ``*``. A value's
    own label (a value of the domain; a number) is never a star, even when it is the
    only value present.

    >>> from fairanon.instances.schema import Attribute
    >>> age = Attribute("age", kind="numeric")
    >>> labels = ["[20-40]", "[20-30]", "25", "*"]
    >>> tells_nothing(age, label_covers(age, labels), np.array([25.0, 40.0])).tolist()
    [True, False, False, True]
    """
    star = np.array([label == SUPPRESSED for label in covers.labels], dtype=bool)
    present = np.asarray(present)
    if not len(present):
        return star
    if covers.numeric:
        own = (covers.lo == covers.hi) & ~covers.lo_open & ~covers.hi_open
        every = np.ones(len(covers.labels), dtype=bool)
        each = np.arange(len(covers.labels))
        for value in (present.min(), present.max()):  # a label is one interval
            every &= covers.contains(each, np.full(len(each), value))
    else:
        domain = set(attr.domain)
        own = np.array([label in domain for label in covers.labels], dtype=bool)
        present = as_index(present)
        # A label covers one run of positions, so covering the first and the last of
        # the values present covers every one.
        every = (covers.start <= present.min()) & (present.max() < covers.stop)
        if covers.tree_positions is not None:
            where = covers.tree_positions[present]
            in_tree = (covers.start <= where.min()) & (where.max() < covers.stop)
            every = np.where(covers.in_tree, in_tree, every)
    return star | (~own & every)


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
