"""Reading a released table: factorized columns and equivalence classes.

Everything here looks at the released values only. Equivalence classes are the sets
of rows with identical released quasi-identifier values, whatever group ids the method
that produced the release used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["factorize", "combine_codes", "classes_of"]


def factorize(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes (int32) and distinct values (as str) of a released column.

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
        raw = column.cat.codes.to_numpy()
        if len(raw) and raw.min() < 0:  # missing cells read as the text of a missing value
            return _factorize_text(column.astype(str))
        seen = pd.unique(raw)  # category codes in order of first appearance (hashing, O(n))
        categories = column.cat.categories
        text = np.array([str(categories[c]) for c in seen], dtype=object)
        merged, uniques = pd.factorize(text)
        remap = np.zeros(len(categories), dtype=np.int32)
        remap[seen] = merged
        return remap[raw], np.asarray(uniques, dtype=object)
    return _factorize_text(column)


def _factorize_text(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=False)
    text = np.array([str(u) for u in uniques], dtype=object)
    merged, labels = pd.factorize(text)
    codes = codes.astype(np.int32, copy=False)
    if len(labels) < len(text):
        codes = merged.astype(np.int32)[codes]
    return codes, np.asarray(labels, dtype=object)


def combine_codes(key: np.ndarray, n_key: int, codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, int]:
    """Dense ids of the pairs (key, code): the refinement of one grouping by a column.

    >>> combine_codes(np.array([0, 0, 1, 1]), 2, np.array([0, 1, 0, 0]), 2)
    (array([0, 1, 2, 2]), 3)
    """
    n = len(key)
    if n == 0:
        return key.astype(np.int64), 0
    bins = n_key * n_codes
    pair = key.astype(np.int64) * n_codes + codes
    if bins <= 4 * n + 1_000_000:
        present = np.zeros(bins, dtype=bool)
        present[pair] = True
        remap = np.cumsum(present, dtype=np.int32 if bins < 2**31 else np.int64)
        dense = remap[pair].astype(np.int64)
        dense -= 1
        return dense, int(remap[-1])
    uniq, dense = np.unique(pair, return_inverse=True)
    return dense.reshape(-1).astype(np.int64), len(uniq)


def classes_of(table: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, int]:
    """Equivalence class id of every row (identical values on `columns`) and their number."""
    key = np.zeros(len(table), dtype=np.int64)
    n_key = 1 if len(table) else 0
    for col in columns:
        codes, uniques = factorize(table[col])
        key, n_key = combine_codes(key, n_key, codes, len(uniques))
    return key, n_key
