"""Frequency sets: a node's equivalence classes with additive counts, rolled up from a
finer frequency set instead of regrouping the records.

A frequency set holds one row per class: its label on each generalizable
quasi-identifier (at some grain, see :mod:`.lattice`), its protected value and a
column of counts that add up when classes merge -- records, records with a negative
decision (alpha-protection), records matching each diversity constraint on its
non-generalizable attributes, and per-value counts of each l-diversity or t-closeness
target. The records' own values form the finest one (:func:`records`); any node's
classes follow from a finer set by mapping each label to the coarser one and summing
the counts of rows that meet, in time linear in the finer set's rows (ARX's roll-up of
the frequency set of a node's predecessor, Prasser et al. 2014).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...instances.instance import Instance
from ...models.released import factorize
from ...models.requirements import (
    AlphaProtection,
    DiversityConstraint,
    LDiversity,
    TCloseness,
    requirement_targets,
)
from .lattice import Space, check_deadline

__all__ = ["FrequencySet", "Records", "Target", "records", "roll_up"]


@dataclass
class FrequencySet:
    """Classes at `grains` (one per attribute; see :mod:`.lattice`).

    Attributes
    ----------
    grains : tuple of int
    codes : numpy.ndarray of int, shape (d, n)
        Each class's label per attribute.
    protected : numpy.ndarray of int, shape (n,)
        Each class's protected value (0 when the instance has none).
    cols : numpy.ndarray of int, shape (n_cols, n)
        Additive counts per class; row 0 counts records (see :class:`Records`).
    """

    grains: tuple
    codes: np.ndarray
    protected: np.ndarray
    cols: np.ndarray

    @property
    def n(self) -> int:
        return self.cols.shape[1]

    @property
    def sizes(self) -> np.ndarray:
        return self.cols[0]


@dataclass
class Target:
    """An attribute read by l-diversity or t-closeness: its present values, their
    counts in the table and the rows of the count matrix that hold them."""

    name: str
    values: list
    global_counts: np.ndarray
    rows: slice


@dataclass
class DiversityTarget:
    """A diversity constraint on the lattice: the count row of records matching its
    non-generalizable attributes and, per generalizable target attribute and grain,
    which labels read as the target value."""

    requirement: DiversityConstraint
    row: int
    matches: list[tuple[int, list[np.ndarray]]]  # (attribute, per grain: label matches)
    star_matches: bool  # suppressed records ('*' everywhere) read as the target


@dataclass
class Records:
    """The finest frequency set (the records' own values) and what its rows mean.

    Attributes
    ----------
    base : FrequencySet
        Grain 0 on every attribute: one class per distinct vector of values (and
        protected value).
    row_class : numpy.ndarray of int
        The base class of every instance row.
    negative : int or None
        The count row of records with a negative decision (alpha-protection).
    targets : dict of str -> Target
    diversity : list of DiversityTarget
        One per diversity constraint (see :meth:`diversity_of`).
    protected_flag : numpy.ndarray of bool or None
        Per protected value: is it in the protected group (alpha-protection)?
    n_protected : int
    """

    base: FrequencySet
    row_class: np.ndarray
    negative: int | None
    targets: dict[str, Target]
    diversity: list[DiversityTarget]
    protected_flag: np.ndarray | None
    n_protected: int
    n_rows: int

    def diversity_of(self, requirements) -> list[tuple[int, DiversityTarget]]:
        """The diversity constraints among `requirements`, with their positions."""
        return [
            (i, target)
            for i, req in enumerate(requirements)
            for target in self.diversity
            if target.requirement is req
        ]


def _matches_text(attr, texts, value) -> np.ndarray:
    """Which released texts read as `value`, as the verifier reads them."""
    texts = pd.Series(list(texts), dtype=object).astype(str)
    if attr.kind == "numeric":
        numbers = pd.to_numeric(texts, errors="coerce").to_numpy(dtype=float)
        return numbers == float(value)
    return texts.to_numpy() == value


def _factorize_columns(columns: list[np.ndarray], sizes: list[int]) -> np.ndarray:
    """One id per distinct row of the columns (first occurrence order)."""
    key = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    radix = 1
    for col, size in zip(columns, sizes):
        if radix * size >= 2**62:
            key, uniques = pd.factorize(key)
            radix = max(len(uniques), 1)
        key = key * size + col
        radix *= size
    return pd.factorize(key)[0].astype(np.int64)


def records(
    instance: Instance, requirements, space: Space, values: list[np.ndarray],
    deadline: float | None = None,
) -> Records:
    """Aggregate the records into the base frequency set with every count row the
    requirements read; `values[a]` gives each row's active value of attribute a. Past
    `deadline`, read before each requirement's rows and before the counts,
    :class:`~.lattice.OutOfTime`."""
    schema = instance.schema
    n = instance.n_rows
    names = [attr.name for attr in space.attributes]
    protected = (
        instance.codes(schema.protected).astype(np.int64)
        if schema.protected
        else np.zeros(n, dtype=np.int64)
    )
    n_protected = int(protected.max()) + 1 if n else 1
    row_class = _factorize_columns(
        values + [protected], [attr.m for attr in space.attributes] + [n_protected]
    )
    n_classes = int(row_class.max()) + 1 if n else 0
    first = np.zeros(n_classes, dtype=np.int64)
    first[row_class[::-1]] = np.arange(n)[::-1]

    rows: list[np.ndarray] = [np.ones(n, dtype=np.int64)]
    negative = None
    protected_flag = None
    if any(isinstance(r, AlphaProtection) for r in requirements):
        negative = len(rows)
        rows.append(instance.negative_mask().astype(np.int64))
        protected_flag = np.zeros(n_protected, dtype=bool)
        protected_flag[protected] = instance.protected_mask()
    diversity = []
    for req in requirements:
        if not isinstance(req, DiversityConstraint):
            continue
        check_deadline(deadline)
        match = np.ones(n, dtype=bool)
        matches = []
        star = True
        for name, value in req.target:
            attr = schema[name]
            if name in names:
                a = names.index(name)
                grain_texts = [[str(v) for v in space.attributes[a].ladder.labels[0]]] + [
                    list(t) for t in space.attributes[a].ladder.texts
                ]
                matches.append((a, [_matches_text(attr, t, value) for t in grain_texts]))
                star &= bool(_matches_text(attr, ["*"], value)[0])
            else:
                # Each distinct text once, not a string per row (0.02 s a constraint on
                # UCI Adult's 30,162 rows, which the time limit did not cut).
                codes, texts = factorize(instance.table[name])
                match &= _matches_text(attr, texts, value)[codes]
        diversity.append(DiversityTarget(req, len(rows), matches, star))
        rows.append(match.astype(np.int64))
    targets: dict[str, Target] = {}
    one_hot = []
    offset = len(rows)
    for req in requirements:
        if not isinstance(req, (LDiversity, TCloseness)):
            continue
        for name in requirement_targets(schema, req):
            if name in targets:
                continue
            check_deadline(deadline)
            present, dense = np.unique(instance.codes(name), return_inverse=True)
            dense = dense.reshape(-1)
            attr = schema[name]
            shown = (
                [attr.domain[int(c)] for c in present]
                if attr.domain is not None
                else [float(v) for v in present]
            )
            m = len(present)
            targets[name] = Target(
                name, shown, np.bincount(dense, minlength=m), slice(offset, offset + m)
            )
            one_hot.append((dense, m))
            offset += m
    check_deadline(deadline)
    cols = np.zeros((offset, n_classes), dtype=np.int64)
    for i, row in enumerate(rows):
        cols[i] = np.bincount(row_class, weights=row, minlength=n_classes)
    start = len(rows)
    for dense, m in one_hot:
        counts = np.bincount(row_class * m + dense, minlength=n_classes * m)
        cols[start : start + m] = counts.reshape(n_classes, m).T
        start += m
    base = FrequencySet(
        tuple(0 for _ in names),
        np.array([v[first] for v in values], dtype=np.int64).reshape(len(names), n_classes),
        protected[first],
        cols,
    )
    return Records(
        base,
        row_class,
        negative,
        targets,
        diversity,
        protected_flag,
        n_protected,
        n,
    )


def roll_up(
    space: Space, source: FrequencySet, grains: tuple, n_protected: int
) -> tuple[FrequencySet, np.ndarray]:
    """The classes at `grains` from a finer frequency set (every source grain must
    feed the target one), and the target class of each source row."""
    attributes = space.attributes
    mapped = [
        attr.maps[f, g][codes]
        for attr, f, g, codes in zip(attributes, source.grains, grains, source.codes)
    ]
    sizes = [attr.n_labels[g] for attr, g in zip(attributes, grains)]
    radix = n_protected * math.prod(sizes)
    if radix < 2**62:
        key = source.protected.copy()
        for col, size in zip(mapped, sizes):
            key *= size
            key += col
        if radix <= 4 * source.n + 4096:
            # Few possible keys: count them densely instead of hashing.
            present = np.bincount(key, minlength=radix) > 0
            uniques = np.flatnonzero(present)
            ids = np.cumsum(present) - 1
            inverse = ids[key]
        else:
            inverse, uniques = pd.factorize(key)
        n = len(uniques)
        codes = np.empty((len(sizes), n), dtype=np.int64)
        rest = np.asarray(uniques, dtype=np.int64)
        for a in range(len(sizes) - 1, -1, -1):
            rest, codes[a] = np.divmod(rest, sizes[a])
        protected = rest
    else:
        inverse = _factorize_columns([source.protected] + mapped, [n_protected] + sizes)
        n = int(inverse.max()) + 1 if len(inverse) else 0
        first = np.zeros(n, dtype=np.int64)
        first[inverse[::-1]] = np.arange(len(inverse))[::-1]
        codes = np.array([col[first] for col in mapped], dtype=np.int64).reshape(len(sizes), n)
        protected = source.protected[first]
    inverse = np.asarray(inverse, dtype=np.int64)
    cols = np.empty((source.cols.shape[0], n), dtype=np.int64)
    for i, row in enumerate(source.cols):
        cols[i] = np.bincount(inverse, weights=row, minlength=n)
    return FrequencySet(tuple(grains), codes, protected, cols), inverse
