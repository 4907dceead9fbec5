"""The text a categorical or ordered value reads as.

A categorical or ordered attribute's values are text: its hierarchy, its order and the
protected and negative values name them so, and the release writes them. A table may
hold them as other objects (numbers, truth values), and both engines read every cell,
and every value a schema names, by the one rule of :func:`value_text`:

- a value is ``str`` of it, except that a whole float reads as the whole number
  (``1.0`` reads ``"1"``): pandas holds a column of whole numbers with a missing cell
  as floats, and that cell, dropped, must not turn the others' ``1`` into ``1.0``;
- two cells of different kinds (a number, a truth value, text, another object) that
  read alike are refused: ``1`` and ``"1"`` (or ``True`` and ``"True"``) in one column
  would otherwise silently become one value (:func:`check_kinds`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from ..exceptions import SchemaError

__all__ = ["value_text", "cell_texts", "check_kinds"]

#: The kinds of cell, as bits of a mask (a text read from cells of two kinds has two).
NUMBER, TRUTH, TEXT, OTHER = 1, 2, 4, 8
_KIND_NAMES = ((NUMBER, "a number"), (TRUTH, "a truth value"), (TEXT, "text"), (OTHER, "another object"))

#: Floats up to this size are whole numbers that int() reads exactly as written.
_EXACT = 2.0**53


def value_text(value) -> str:
    """The text a categorical or ordered value reads as (module docstring).

    >>> value_text(1.0), value_text(2.5), value_text(1), value_text("1.0"), value_text(True)
    ('1', '2.5', '1', '1.0', 'True')
    """
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and value.is_integer() \
            and abs(value) <= _EXACT:
        return str(int(value))
    return str(value)


def _kind(value) -> int:
    if isinstance(value, str):
        return TEXT
    if isinstance(value, (bool, np.bool_)):
        return TRUTH
    if isinstance(value, numbers.Number):
        return NUMBER
    return OTHER


#: The kind of every cell of a column, by pandas' inference of its values.
_INFERRED = {"string": TEXT, "integer": NUMBER, "floating": NUMBER, "mixed-integer-float": NUMBER,
             "decimal": NUMBER, "complex": NUMBER, "boolean": TRUTH}


def cell_texts(column: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """Each cell of a column without missing cells as its :func:`value_text`, and per
    distinct text the mask of the kinds of cell that read as it (for :func:`check_kinds`;
    the Dask engine merges the masks of its partitions with bitwise or).

    >>> texts, kinds = cell_texts(pd.Series([1, "1", 2.0], dtype=object))
    >>> list(texts), kinds.to_dict()
    (['1', '1', '2'], {'1': 5, '2': 1})
    """
    values = column.to_numpy()
    if values.dtype.kind == "f":
        texts = column.astype(str).to_numpy(dtype=object)
        whole = np.isfinite(values) & (np.abs(values) <= _EXACT)
        whole[whole] = values[whole] == np.round(values[whole])
        texts[whole] = values[whole].astype(np.int64).astype(str)
        kinds = np.full(len(values), NUMBER, dtype=np.int8)
    elif values.dtype == object:
        inferred = _INFERRED.get(pd.api.types.infer_dtype(values, skipna=False))
        if inferred == TEXT:
            texts = values
        elif inferred is not None and inferred != NUMBER:
            texts = np.array([str(v) for v in values], dtype=object)
        else:
            texts = np.array([value_text(v) for v in values], dtype=object)
        kinds = (np.full(len(values), inferred, dtype=np.int8) if inferred is not None
                 else np.fromiter(map(_kind, values), dtype=np.int8, count=len(values)))
    else:
        texts = column.astype(str).to_numpy(dtype=object)
        kind = TRUTH if values.dtype.kind == "b" else NUMBER if values.dtype.kind in "iuc" else \
            TEXT if isinstance(column.dtype, pd.StringDtype) or values.dtype.kind in "SU" else OTHER
        kinds = np.full(len(values), kind, dtype=np.int8)
    pairs = pd.DataFrame({"text": texts, "kind": kinds}).drop_duplicates()
    # Distinct (text, kind) pairs: the sum of distinct bits is their bitwise or.
    return texts, pairs.groupby("text", sort=False)["kind"].sum()


def check_kinds(name: str, kinds: pd.Series) -> None:
    """Refuse a column in which cells of different kinds read as one text (`kinds`: the
    masks of :func:`cell_texts`, merged over a table's parts).

    Raises
    ------
    SchemaError
        Naming the text, the kinds and how to give the column one type.
    """
    mixed = kinds[(kinds.to_numpy() & (kinds.to_numpy() - 1)) != 0]
    if len(mixed):
        text, mask = str(mixed.index[0]), int(mixed.iloc[0])
        names = [label for bit, label in _KIND_NAMES if mask & bit]
        raise SchemaError(
            f"Column {name!r} holds {text!r} both as {' and as '.join(names)}, which would be read as one "
            f"value; give the column one type (e.g. table[{name!r}] = table[{name!r}].astype(str))."
        )
