"""A release aligned with its instance, its labels parsed once: what every metric reads.

The original :class:`~fairanon.instances.instance.Instance` and its
:class:`~fairanon.release.Release` are aligned by record id (the release's index against
``instance.row_ids``); released quasi-identifier cells are parsed with
:func:`~fairanon.instances.generalization.label_covers`, the same reading the verifier
uses. Equivalence classes are the rows with identical released values on every
quasi-identifier (:attr:`Schema.qi`, the protected attribute included), never the
method's own ``release.groups`` (docs/papers.md, C-4).

Domain statistics are taken from the original data (the *active domain*): M_j is the
number of distinct values of attribute j present in the original table, and a
generalized cell covers M_ij of them; numeric ranges are clipped to the data's
[min, max].
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
import pandas as pd

from ..._arrays import gather
from ..._memory import check_memory
from ...exceptions import InvalidParameterError, SchemaError
from ...instances.generalization import LabelCovers, label_covers, tells_nothing
from ...instances.hierarchy import SUPPRESSED
from ...instances.instance import Instance
from ...instances.schema import Attribute
from ...instances.texts import value_text
from ...release import Release
from ..released import group_ids, id_type, narrow

__all__ = ["NUMERIC_LOSSES", "equivalence_classes"]

#: How :func:`~fairanon.models.metrics.loss_metric` and
#: :func:`~fairanon.models.metrics.property_vectors` measure a numeric cell:
#: "width" (Iyengar: clipped range width over the data range) or "values" (the
#: categorical form (M_ij − 1)/(M_j − 1) counting the distinct data values covered, i.e.
#: Ruggieri's integer-rank reading and the comparison paper's PV-loss).
NUMERIC_LOSSES = ("width", "values")


# ---------------------------------------------------------------------- preparation
def _factorize_labels(col: pd.Series, name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Codes 0..L-1 per row and the L distinct labels (as strings) of a released column."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        raw = col.array.codes
        if len(raw) and raw.min() < 0:
            raise SchemaError(f"The released column {name!r} has missing values.")
        present = np.bincount(raw, minlength=len(col.cat.categories)) > 0
        values = np.asarray(col.cat.categories, dtype=object)[present]
        raw = gather(narrow(np.cumsum(present) - 1, int(present.sum())), raw)
    else:
        raw, values = pd.factorize(col)
        if (raw < 0).any():
            raise SchemaError(f"The released column {name!r} has missing values.")
        values = np.asarray(values, dtype=object)
    # Cells are symbols compared as text (value_text): 37 and "37" are one label.
    text = np.array([value_text(v) for v in values], dtype=object)
    merged, labels = pd.factorize(text)
    if len(labels) < len(text):
        raw = gather(merged, raw)
    return narrow(raw, len(labels)), tuple(str(v) for v in labels)


def _stored(instance, name: str) -> np.ndarray:
    """A column's codes or numbers as stored (narrow, no copy) where the instance keeps
    a table; else its :meth:`codes`."""
    return instance.stored_codes(name) if isinstance(instance, Instance) else instance.codes(name)


def _active_mask(instance: Instance, name: str) -> np.ndarray:
    """Mask over the domain of a categorical/ordered attribute: values present (O(n))."""
    return np.bincount(_stored(instance, name), minlength=len(instance.schema[name].domain)) > 0


def _active_values(instance: Instance, name: str) -> np.ndarray:
    """Sorted distinct values (float) of a numeric attribute: by counting when the column
    holds integers of a small range, else by hashing and then a small sort."""
    stored = _stored(instance, name)
    if len(stored) and np.issubdtype(stored.dtype, np.integer):
        lo, hi = int(stored.min()), int(stored.max())
        if hi - lo <= 4 * len(stored) + 1_000_000:
            present = np.bincount(np.subtract(stored, lo, dtype=np.int64), minlength=hi - lo + 1) > 0
            return (np.flatnonzero(present) + lo).astype(float)
    return np.sort(pd.unique(instance.codes(name)))


class _Column:
    """One released attribute: label codes per release row and what each label covers.

    All statistics are over the attribute's active domain, i.e. the distinct values of
    the original table, ranked in domain order (categorical, ordered) or by value
    (numeric).
    """

    def __init__(self, instance: Instance, name: str, col: pd.Series, pos: np.ndarray | None):
        self.name = name
        self.attr: Attribute = instance.schema[name]
        self.codes, labels = _factorize_labels(col, name)
        self.covers: LabelCovers = label_covers(self.attr, labels)
        self.labels = labels
        self.n_labels = len(labels)
        full = instance.codes(name)
        self.numeric = self.attr.kind == "numeric"
        if self.numeric:
            self.values = _active_values(instance, name)  # sorted active domain
            self.m = len(self.values)
        else:
            self.active = _active_mask(instance, name)
            self.m = int(self.active.sum())
        self._full_codes = full
        self._pos = pos

    @cached_property
    def orig(self) -> np.ndarray:
        """Original codes (or numeric values) aligned with the release rows."""
        return self._full_codes if self._pos is None else self._full_codes[self._pos]

    @cached_property
    def label_rows(self) -> np.ndarray:
        """Number of release rows carrying each label."""
        return np.bincount(self.codes, minlength=self.n_labels)

    @cached_property
    def _span(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per label: active values covered (M_ij), first and last covered active rank."""
        if self.numeric:
            c = self.covers
            first = np.where(
                c.lo_open,
                np.searchsorted(self.values, c.lo, "right"),
                np.searchsorted(self.values, c.lo, "left"),
            )
            end = np.where(
                c.hi_open,
                np.searchsorted(self.values, c.hi, "left"),
                np.searchsorted(self.values, c.hi, "right"),
            )
            count = np.maximum(end - first, 0)
            return (
                count.astype(np.int64),
                first.astype(np.int64),
                (first + count - 1).astype(np.int64),
            )
        return self.covers.active_spans(self.active)

    @property
    def count(self) -> np.ndarray:
        return self._span[0]

    @property
    def first(self) -> np.ndarray:
        return self._span[1]

    @property
    def last(self) -> np.ndarray:
        return self._span[2]

    @cached_property
    def contiguous(self) -> bool:
        """Whether every label covers a contiguous run of active ranks."""
        return bool(np.all(self.last - self.first + 1 == self.count))

    @cached_property
    def prefix(self) -> np.ndarray:
        """``prefix[l, r]`` = active values of rank < r covered by label l (L × (m+1)),
        checked against the memory limit before the tables are built."""
        check_memory(
            self.n_labels * (8 * (self.m + 1) + self.covers.n_values),
            f"the query-error table of the {self.n_labels:,} released labels of {self.name!r} over its "
            f"{self.m:,} values present",
            f"generalize {self.name!r} to fewer distinct values, or leave out the count-query error "
            "(median_relative_error)",
        )
        cov = self.covers.mask[:, self.active]
        out = np.zeros((self.n_labels, self.m + 1), dtype=np.int64)
        np.cumsum(cov, axis=1, out=out[:, 1:])
        return out

    @cached_property
    def clipped(self) -> tuple[np.ndarray, np.ndarray]:
        """Numeric labels clipped to the data's [min, max]."""
        lo = np.clip(self.covers.lo, self.values[0], self.values[-1])
        hi = np.clip(self.covers.hi, self.values[0], self.values[-1])
        return lo, np.maximum(hi, lo)

    @cached_property
    def is_star(self) -> np.ndarray:
        return np.array([lab == SUPPRESSED for lab in self.labels], dtype=bool)

    @cached_property
    def tells_nothing(self) -> np.ndarray:
        """Per label: ``*``, or a generalized label covering every value present (the
        ``stars`` objective's one rule: :func:`fairanon.instances.generalization.tells_nothing`)."""
        present = self.values if self.numeric else np.flatnonzero(self.active)
        return tells_nothing(self.attr, self.covers, present)

    # ---- per-label cell values -------------------------------------------------
    def cell_values(self, measure: str, numeric_loss: str = "width", exact: bool = False):
        """One value per label: a float array, or a list of Fractions if `exact`.

        measure "lm"   Iyengar loss (M_ij − 1)/(M_j − 1), numeric width/range;
                "ncp"  Xu's NCP: categorical leaves/|A| (0 for one covered value),
                       ordered rank span/(m − 1), numeric width/range;
                "util" the comparison paper's 1 − M_ij/M_j (numeric counts values).
        """
        m, count = self.m, self.count
        kind = self.attr.kind
        if measure == "util":
            if exact:
                return [Fraction(m - int(c), m) for c in count]
            return 1.0 - count / m
        if kind == "numeric" and not (measure == "lm" and numeric_loss == "values"):
            lo, hi = self.clipped
            rng = self.values[-1] - self.values[0]
            if rng == 0:
                return [Fraction(0)] * self.n_labels if exact else np.zeros(self.n_labels)
            if exact:
                den = Fraction(float(self.values[-1])) - Fraction(float(self.values[0]))
                return [(Fraction(float(b)) - Fraction(float(a))) / den for a, b in zip(lo, hi)]
            return (hi - lo) / rng
        if measure == "ncp" and kind == "categorical":
            num, den = np.where(count <= 1, 0, count), m
        elif measure == "ncp":  # ordered: rank span of the covered active values
            num, den = np.maximum(self.last - self.first, 0), m - 1
        else:  # lm on categorical / ordered, or numeric counted by values
            num, den = np.maximum(count - 1, 0), m - 1
        if den <= 0:
            return [Fraction(0)] * self.n_labels if exact else np.zeros(self.n_labels)
        if exact:
            return [Fraction(int(v), den) for v in num]
        return num / den


def _combine(codes: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """Dense ids (in order of first appearance) of the distinct rows of several code
    arrays, and their number."""
    n = len(codes[0]) if codes else 0
    if not codes:
        return np.zeros(0, dtype=np.int32), 0
    ids, n_ids = group_ids([(c, int(c.max()) + 1 if n else 1) for c in codes])
    return first_appearance(ids, n_ids), n_ids


def first_appearance(ids: np.ndarray, n_ids: int) -> np.ndarray:
    """Group ids 0..n_ids-1 renumbered in order of each group's first row (O(n)), in
    the ids' type (int32 below 2**31 rows)."""
    kind = id_type(len(ids))
    first = np.empty(n_ids, dtype=kind)
    first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1, dtype=kind)
    rank = np.empty(n_ids, dtype=kind)
    rank[np.argsort(first)] = np.arange(n_ids, dtype=kind)
    return rank[ids]


def _first_rows(ids: np.ndarray) -> np.ndarray:
    """First row of each id, for ids numbered 0, 1, ... in order of first appearance."""
    if not len(ids):
        return np.zeros(0, dtype=np.int64)
    new = np.r_[True, ids[1:] > np.maximum.accumulate(ids)[:-1]]
    return np.flatnonzero(new)


@dataclass
class _Prepared:
    """A release aligned with its instance, parsed once and shared by the metrics."""

    instance: Instance
    release: Release
    pos: np.ndarray | None  # instance row of each release row (None: same order)
    qi: dict[str, _Column]

    @property
    def n(self) -> int:
        return self.instance.n_rows

    def column(self, name: str) -> _Column:
        if name in self.qi:
            return self.qi[name]
        if name not in self._extra:
            self._extra[name] = _Column(self.instance, name, self.release.table[name], self.pos)
        return self._extra[name]

    @cached_property
    def _extra(self) -> dict[str, _Column]:
        return {}

    @cached_property
    def classes(self) -> tuple[np.ndarray, int]:
        return _combine([col.codes for col in self.qi.values()])

    @property
    def class_ids(self) -> np.ndarray:
        return self.classes[0]

    @property
    def n_classes(self) -> int:
        return self.classes[1]

    @cached_property
    def class_sizes(self) -> np.ndarray:
        return np.bincount(self.class_ids, minlength=self.n_classes)

    @cached_property
    def class_first_row(self) -> np.ndarray:
        """A representative row of each class (its first row)."""
        return _first_rows(self.class_ids)

    @cached_property
    def suppressed_rows(self) -> np.ndarray:
        """Rows whose every generalizable quasi-identifier tells nothing: ``*``, or a
        label over every value present (the one rule of the ``stars`` objective,
        :attr:`_Column.tells_nothing`), so that writing the root's name or the full
        range instead of ``*`` does not escape the charge of a suppressed record."""
        names = [a for a in self.instance.schema.generalizable if a in self.qi]
        out = np.zeros(self.n, dtype=bool)
        if names:
            out[:] = True
            for name in names:
                col = self.qi[name]
                out &= col.tells_nothing[col.codes]
        return out

    def to_instance_order(self, values: np.ndarray) -> np.ndarray:
        """Reorder per-release-row values to the instance's row order."""
        if self.pos is None:
            return values
        out = np.empty_like(values)
        out[self.pos] = values
        return out


def _prepare(instance: Instance, release: Release, caller: str, classes: np.ndarray | None = None) -> _Prepared:
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {caller} must be an Instance. Got {type(instance).__name__} instead."
        )
    if not isinstance(release, Release):
        raise InvalidParameterError(
            f"The 'release' parameter of {caller} must be a Release. Got {type(release).__name__} instead."
        )
    table = release.table
    ids = table.index
    if ids.equals(instance.row_ids):
        pos = None
    else:
        pos = instance.row_ids.get_indexer(ids) if ids.is_unique else None
        if len(ids) != instance.n_rows or not ids.is_unique or (pos < 0).any():
            raise SchemaError(
                f"The release does not hold the records of instance {instance.name!r} exactly once "
                f"({len(ids)} released rows for {instance.n_rows} records); {caller} aligns "
                "them by record id."
            )
    missing = [a for a in instance.schema.qi if a not in table.columns]
    if missing:
        raise SchemaError(f"The release lacks the quasi-identifier column(s) {missing}.")
    qi = {name: _Column(instance, name, table[name], pos) for name in instance.schema.qi}
    prepared = _Prepared(instance, release, pos, qi)
    if classes is not None:
        if len(classes) != len(table):
            raise InvalidParameterError(
                f"The 'classes' parameter of {caller} must hold one class id per released row "
                f"({len(table)}). Got {len(classes)} instead."
            )
        prepared.classes = (classes, int(classes.max()) + 1 if len(classes) else 0)
    return prepared


# ---------------------------------------------------------------------- classes
def equivalence_classes(instance: Instance, release: Release) -> np.ndarray:
    """The released equivalence class of each row.

    Rows with identical released labels on every quasi-identifier (the protected
    attribute included) form one class; labels are compared as text.

    Parameters
    ----------
    instance : Instance
        The original data.
    release : Release
        Its release; aligned with `instance` by record id.

    Returns
    -------
    numpy.ndarray of int64
        Class ids 0..C−1, one per row of ``release.table`` (in its order), numbered in
        order of first appearance.

    Raises
    ------
    SchemaError
        If the release does not hold every record exactly once, lacks a
        quasi-identifier column, or holds a label its attribute cannot read.

    Notes
    -----
    O(n) hashing over n rows; ``release.groups`` is never read (docs/papers.md, C-4).
    """
    return _prepare(instance, release, "equivalence_classes").class_ids.astype(np.int64)
