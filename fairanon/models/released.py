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
    """Codes (int64) and distinct values (as str) of a released column."""
    codes, uniques = pd.factorize(column.astype(str), sort=False)
    return codes.astype(np.int64), np.asarray([str(u) for u in uniques], dtype=object)


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
        remap = np.cumsum(present) - 1
        return remap[pair], int(present.sum())
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
