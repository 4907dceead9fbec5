"""The table every risk model reads: an instance, or a release of it, regrouped into classes.

A *class* is the set of records with equal released values on every quasi-identifier
(:attr:`Schema.qi`, the protected attribute included) — the regrouping of the verifier
(:mod:`fairanon.models.verify`), made by the same functions
(:func:`fairanon.models.released.factorize` and :func:`~fairanon.models.released.group_ids`).
An instance is read the same way, its own values standing as labels, so every model
takes an instance before anonymization or a release after it.

Suppressed records
------------------
A record suppressed as a whole is released with ``*`` on every quasi-identifier but the
protected attribute, which is released unchanged. The suppressed records of a protected
value (all of them, without a protected attribute) therefore form one class — a
*suppressed block* — exactly as the verifier counts them for k-anonymity, and every
risk model counts that block as one class of its size s: its records carry prosecutor
risk 1/s, a block of one record is a sample unique, and the population models see one
class of size s. The reasons are in
``docs/risk.md``: one regrouping for the verifier and every model (a release that passes
k-anonymity has prosecutor risk at most 1/k, whatever it suppressed), and it is the
attacker's view — a target whose values match no other class is one of the s suppressed
records. Records with ``*`` on some quasi-identifiers only are generalized records like
any other. Instances hold no missing values (:class:`~fairanon.instances.Instance`
refuses them, or drops their rows with ``missing="drop"``), so no other rule is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ...exceptions import InvalidParameterError, SchemaError
from ...instances.hierarchy import SUPPRESSED
from ...instances.instance import Instance
from ...release import Release
from ..measures import group_counts
from ..released import factorize, group_ids, id_type, in_record_order, narrow, record_order, rows_in_record_order

__all__ = ["RiskClasses", "risk_classes"]


def _suppressed(classes, class_codes) -> np.ndarray:
    """The suppressed classes of `classes` (a RiskClasses on either engine), whose
    `class_codes(name)` gives each class's label code on quasi-identifier `name` and the
    labels."""
    empty = np.zeros(0, dtype=np.int64)
    protected = classes.instance.schema.protected
    names = [name for name in classes.qi if name != protected]
    if not classes.released or not classes.n_records or not names:
        return empty
    every = np.ones(classes.n_classes, dtype=bool)
    for name in names:
        codes, labels = class_codes(name)
        star = np.flatnonzero(np.asarray(labels, dtype=object) == SUPPRESSED)
        if not len(star):
            return empty
        every &= codes == star[0]
    return np.flatnonzero(every)


@dataclass(eq=False)
class RiskClasses:
    """Records regrouped by their released quasi-identifier values.

    Attributes
    ----------
    instance : Instance
        The original data (its schema names the quasi-identifiers).
    table : pandas.DataFrame
        The table read: ``release.table``, or ``instance.table`` before anonymization.
    released : bool
        Whether `table` is a release.
    qi : tuple of str
        The quasi-identifiers, in schema order.
    codes : dict
        Per quasi-identifier: (codes per row, distinct labels as text), the labels in
        order of first appearance in record-id order.
    ids : numpy.ndarray
        The class of every row, 0..n_classes-1.
    sizes : numpy.ndarray of int64
        The size f_j of every class.
    order : numpy.ndarray or None
        The rows in record-id order (:func:`~fairanon.models.released.record_order`;
        None: in that order already), the order of the classes and of the records
        listed: so the figures and witnesses do not depend on the order of the rows.
    """

    instance: Instance
    table: pd.DataFrame
    released: bool
    qi: tuple
    codes: dict
    ids: np.ndarray
    sizes: np.ndarray
    order: np.ndarray | None = None

    @property
    def n_records(self) -> int:
        # From the sizes, not len(ids): the classes of a table on Dask make `ids` only on demand.
        return int(self.sizes.sum())

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    @cached_property
    def first_row(self) -> np.ndarray:
        """The first row of every class."""
        first = np.full(self.n_classes, -1, dtype=np.int64)
        first[self.ids[::-1]] = np.arange(len(self.ids), dtype=np.int64)[::-1]
        return first

    @cached_property
    def suppressed_classes(self) -> np.ndarray:
        """The classes of the records released with ``*`` on every quasi-identifier but
        the protected attribute, which is released unchanged (the suppressed blocks: one
        per protected value, one in all without a protected attribute)."""
        return _suppressed(self, lambda name: (self.codes[name][0][self.first_row],
                                               self.codes[name][1]))

    @property
    def n_suppressed(self) -> int:
        """The records of the suppressed blocks (0 when there is none)."""
        return int(self.sizes[self.suppressed_classes].sum())

    @cached_property
    def frequencies(self) -> tuple[np.ndarray, np.ndarray]:
        """The frequencies of frequencies: distinct class sizes i (ascending) and the
        number c_i of classes of each size."""
        return np.unique(self.sizes, return_counts=True)

    def class_codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The label code of every class on the quasi-identifier `name`, and the labels."""
        codes, labels = self.codes[name]
        return codes[self.first_row], labels

    def class_labels(self, g: int) -> dict:
        """The released quasi-identifier values of class g, as text."""
        row = self.first_row[g]
        return {name: str(labels[codes[row]]) for name, (codes, labels) in self.codes.items()}

    def records(self, mask_classes: np.ndarray, limit: int | None = None) -> list:
        """Record ids of the rows whose class is marked in `mask_classes` (a boolean
        array over classes), in record-id order; at most `limit` of them."""
        rows = rows_in_record_order(mask_classes[self.ids], self.order)
        if limit is not None:
            rows = rows[:limit]
        return [r.item() if hasattr(r, "item") else r for r in self.table.index[rows]]

    def value_counts(self, attribute: str) -> tuple[np.ndarray, np.ndarray]:
        """The records of each class per value of a released attribute: counts of shape
        (classes, values), and the values (as text, in order of first appearance in
        record-id order).

        Raises
        ------
        SchemaError
            If the table lacks the column.
        """
        if attribute not in self.table.columns:
            raise SchemaError(f"The table lacks the column {attribute!r} whose disclosure is measured.")
        codes, values = in_record_order(*factorize(self.table[attribute]), self.order)
        return group_counts(self.ids, codes, self.n_classes, len(values)), values

    @cached_property
    def positions(self) -> np.ndarray:
        """The instance row of every row of the table (records are aligned by id)."""
        if not self.released or self.table.index.equals(self.instance.row_ids):
            return np.arange(self.n_records)
        pos = self.instance.row_ids.get_indexer(self.table.index)
        if (pos < 0).any():
            unknown = self.table.index[pos < 0][:5].tolist()
            raise SchemaError(f"The release holds record ids that are not in the instance, e.g. {unknown}.")
        return pos


def risk_classes(instance: Instance, release: Release | None = None, *, caller: str = "risk") -> RiskClasses:
    """Regroup `release` (or `instance` itself when `release` is None) into classes of
    equal released quasi-identifier values, as the verifier does.

    Raises
    ------
    InvalidParameterError
        If `instance` is not an Instance or `release` not a Release.
    SchemaError
        If the release lacks a quasi-identifier column, or holds no rows.

    >>> import fairanon as fa
    >>> cls = risk_classes(fa.load("diva_table1"))
    >>> cls.n_records, cls.n_classes
    (10, 10)
    """
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {caller} must be an Instance. Got {type(instance).__name__} instead."
        )
    if release is not None and not isinstance(release, Release):
        raise InvalidParameterError(
            f"The 'release' parameter of {caller} must be a Release or None. Got {type(release).__name__} instead."
        )
    table = instance.table if release is None else release.table
    qi = tuple(instance.schema.qi)
    missing = [c for c in qi if c not in table.columns]
    if missing:
        raise SchemaError(f"The release lacks the quasi-identifier column(s) {missing}; {caller} reads them.")
    if len(table) == 0:
        raise SchemaError(f"The release holds no rows; {caller} has nothing to measure.")
    codes = {}
    order = record_order(table.index)
    for name in qi:
        column = table[name]
        if column.isna().any():
            raise SchemaError(f"The released column {name!r} has missing values; write '*' for a suppressed value.")
        c, labels = in_record_order(*factorize(column), order)
        codes[name] = (narrow(c, len(labels)), np.asarray(labels, dtype=object))
    if codes:
        ids, n = group_ids([(c, len(labels)) for c, labels in codes.values()])
    else:  # pragma: no cover - an Instance always has a quasi-identifier
        ids, n = np.zeros(len(table), dtype=id_type(len(table))), 1
    sizes = np.bincount(ids, minlength=n).astype(np.int64)
    return RiskClasses(instance, table, release is not None, qi, codes, ids, sizes, order)
