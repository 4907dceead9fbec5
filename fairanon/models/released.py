"""Reading a released table: factorized columns and equivalence classes.

Everything here looks at the released values only. Equivalence classes are the sets
of rows with identical released quasi-identifier values, whatever group ids the method
that produced the release used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._arrays import gather
from ..instances.texts import value_text

__all__ = ["factorize", "texts", "narrow", "id_type", "combine_codes", "group_ids", "classes_of",
           "record_order",
           "in_record_order", "rows_in_record_order"]


def factorize(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes (the narrowest integer type that holds them) and distinct values (as str) of
    a released column.

    Cells are symbols compared as text (``37`` and ``"37"`` are one value), and codes
    number the distinct texts in order of first appearance. No per-row string is
    made: a categorical column is read through its codes and each category is turned
    into text once; other columns are hashed as they are and only their distinct
    values are turned into text.

    >>> codes, values = factorize(pd.Series(pd.Categorical(["b", "a", "b"], categories=["a", "b"])))
    >>> codes.tolist(), values.tolist()
    ([0, 1, 0], ['b', 'a'])
    >>> factorize(pd.Series([37, "37", 5], dtype=object))[0].tolist()
    [0, 0, 1]
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        raw = column.array.codes
        if len(raw) and raw.min() < 0:  # missing cells read as the text of a missing value
            return _factorize_text(column.astype(object))
        categories = column.cat.categories
        seen = _first_seen(raw, len(categories))
        # One take and one list: indexing an Arrow-backed index per category is slow.
        text = np.array([value_text(v) for v in categories.take(seen).tolist()], dtype=object)
        merged, uniques = pd.factorize(text)
        remap = np.zeros(len(categories), dtype=np.int32)
        remap[seen] = merged
        return gather(narrow(remap, len(uniques)), raw), np.asarray(uniques, dtype=object)
    return _factorize_text(column)


def texts(column: pd.Series) -> np.ndarray:
    """Each cell of a released column as the text :func:`factorize` reads it as (the
    instance's rule, :func:`~fairanon.instances.texts.value_text`).

    >>> texts(pd.Series([1.0, 2.5, "a"], dtype=object)).tolist()
    ['1', '2.5', 'a']
    """
    codes, labels = factorize(column)
    return labels[codes]


def _first_seen(raw: np.ndarray, n_values: int, chunk: int = 1 << 16) -> np.ndarray:
    """The distinct codes 0..n_values-1 of `raw` in order of first appearance.

    Hashes the rows chunk by chunk, so the hash tables stay small, and stops once every
    code has been seen."""
    seen = np.zeros(n_values, dtype=bool)
    order = []
    n_seen = 0
    for start in range(0, len(raw), chunk):
        found = pd.unique(raw[start:start + chunk])
        new = found[~seen[found]]
        if len(new):
            seen[new] = True
            order.append(new)
            n_seen += len(new)
            if n_seen == n_values:
                break
    return np.concatenate(order) if order else np.zeros(0, dtype=raw.dtype)


def _factorize_text(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=False)
    text = np.array([value_text(u) for u in uniques], dtype=object)
    merged, labels = pd.factorize(text)
    if len(labels) < len(text):
        codes = narrow(merged, len(labels))[codes]
    return narrow(codes, len(labels)), np.asarray(labels, dtype=object)


def record_order(index: pd.Index) -> np.ndarray | None:
    """The rows of a released table in order of their record ids (a stable sort: the
    rows of a repeated id keep their order), or None when the rows are in that order
    already or their ids cannot be compared (the rows' own order then stands).

    The verifier and the risk models number labels, classes and witness records in this
    order, on one machine and on Dask alike, so what they report does not depend on the
    order a method or an engine wrote the rows in.

    >>> record_order(pd.Index([3, 1, 2, 1])).tolist()
    [1, 3, 2, 0]
    >>> record_order(pd.RangeIndex(3)) is None
    True
    """
    if index.is_monotonic_increasing:
        return None
    try:
        return np.argsort(index.to_numpy(), kind="stable")
    except TypeError:  # ids of kinds that do not compare, such as numbers beside text
        return None


def in_record_order(codes: np.ndarray, labels: np.ndarray, order: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`factorize`'s codes and labels renumbered by first appearance in the row
    order `order` (:func:`record_order`; None: as they are).

    >>> codes, labels = in_record_order(np.array([0, 1, 0]), np.array(["a", "b"], dtype=object), np.array([1, 0, 2]))
    >>> codes.tolist(), labels.tolist()
    ([1, 0, 1], ['b', 'a'])
    """
    if order is None:
        return codes, labels
    seen = pd.unique(codes[order])  # the codes by first appearance in that order
    remap = np.empty(len(labels), dtype=np.int64)
    remap[seen] = np.arange(len(seen))
    return narrow(remap[codes], len(labels)), np.asarray(labels)[seen]


def rows_in_record_order(mask: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """The positions of the rows `mask` marks, in the row order `order`
    (:func:`record_order`; None: the rows' own order)."""
    return np.flatnonzero(mask) if order is None else order[mask[order]]


def narrow(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Codes 0..n_codes-1 in the smallest signed integer type that holds them, so that
    code columns kept for a whole pass take 1 or 2 bytes per row rather than 4 or 8."""
    dtype = np.int8 if n_codes <= 2**7 else np.int16 if n_codes <= 2**15 else np.int32
    return codes if codes.dtype == dtype else codes.astype(dtype)


def combine_codes(key: np.ndarray, n_key: int, codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, int]:
    """Dense ids of the pairs (key, code): the refinement of one grouping by a column.

    >>> combine_codes(np.array([0, 0, 1, 1]), 2, np.array([0, 1, 0, 0]), 2)
    (array([0, 1, 2, 2], dtype=int32), 3)
    """
    return group_ids([(key, n_key), (codes, n_codes)])


def group_ids(columns: Sequence[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int]:
    """Dense ids of the distinct rows of several code columns, and their number.

    `columns` holds (codes, number of codes) pairs. Ids number the distinct rows in
    lexicographic order of their codes, as refining by one column after another with
    :func:`combine_codes` would. The columns are packed into one mixed-radix int64 key
    while the product of their code counts fits; the key is then renumbered densely,
    by counting when its range is small, else by hashing and sorting only the distinct
    keys (O(n) plus O(c log c) for c groups, never a sort of all n rows). Ids are int32
    below 2**31 rows (4 bytes a row rather than 8), else int64.

    >>> group_ids([(np.array([1, 0, 1]), 2), (np.array([0, 2, 0]), 3)])
    (array([1, 0, 1], dtype=int32), 2)
    """
    n = len(columns[0][0]) if columns else 0
    if n == 0 or not columns:
        return np.zeros(n, dtype=id_type(n)), 1 if n else 0
    key, bound = None, 1
    for codes, n_codes in columns:
        n_codes = max(int(n_codes), 1)
        if key is not None and bound * n_codes >= 2**63:
            key, bound = _dense(key, bound)
            key = key.astype(np.int64)
        if key is None:
            key = codes.astype(np.int64)
        else:
            key *= n_codes
            key += codes
        bound *= n_codes
    return _dense(key, bound)


def id_type(n: int) -> type:
    """The integer type of ids 0..n-1 numbering rows or groups of rows: int32 below
    2**31, else int64."""
    return np.int32 if n < 2**31 else np.int64


def _dense(key: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """Ranks (:func:`id_type`) of the int64 keys in [0, bound) among the distinct keys,
    and their number."""
    n = len(key)
    if bound <= 4 * n + 1_000_000:
        present = np.zeros(bound, dtype=bool)
        present[key] = True
        # At most n distinct keys: ranks fit the ids' type.
        remap = np.cumsum(present, dtype=id_type(n))
        del present
        dense = remap[key]
        dense -= 1
        return dense, int(remap[-1])
    # The hash table grows with the distinct keys; sized for n from the start it would
    # take several bytes a row.
    inverse, uniques = pd.factorize(key, sort=False, size_hint=max(1024, n // 16))
    rank = np.empty(len(uniques), dtype=id_type(n))
    rank[np.argsort(uniques)] = np.arange(len(uniques))
    return rank[inverse], len(uniques)


def classes_of(table: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, int]:
    """Equivalence class id of every row (identical values on `columns`) and their number."""
    coded = [factorize(table[col]) for col in columns]
    if not coded:
        return np.zeros(len(table), dtype=id_type(len(table))), 1 if len(table) else 0
    return group_ids([(codes, len(uniques)) for codes, uniques in coded])
