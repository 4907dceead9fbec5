"""The text a categorical or ordered value reads as.

A categorical or ordered attribute's values are text: its hierarchy, its order and the
protected and negative values name them so, and the release writes them. A table may
hold them as other objects (numbers, truth values), and both engines read every cell,
and every value a schema names, by the one rule of :func:`value_text`:

- a value is ``str`` of it, except that a whole float reads as the whole number
  (``1.0`` reads ``"1"``): pandas holds a column of whole numbers with a missing cell
  as floats, and that cell, dropped, must not turn the others' ``1`` into ``1.0``;
  a date at midnight (a timestamp without a time zone) reads as the date alone, as
  pandas writes a column of such dates, value by value whatever the other cells;
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

__all__ = ["value_text", "cell_texts", "check_kinds", "same_number_hint"]

#: The kinds of cell, as bits of a mask (a text read from cells of two kinds has two).
NUMBER, TRUTH, TEXT, OTHER = 1, 2, 4, 8
_KIND_NAMES = ((NUMBER, "a number"), (TRUTH, "a truth value"), (TEXT, "text"), (OTHER, "another object"))

#: Floats up to this size are whole numbers that int() reads exactly as written.
_EXACT = 2.0**53


def value_text(value) -> str:
    """The text a categorical or ordered value reads as (module docstring).

    >>> value_text(1.0), value_text(2.5), value_text(1), value_text("1.0"), value_text(True)
    ('1', '2.5', '1', '1.0', 'True')
    >>> value_text(pd.Timestamp("2020-01-02")), value_text(pd.Timestamp("2020-01-02 12:00"))
    ('2020-01-02', '2020-01-02 12:00:00')
    """
    if isinstance(value, (float, np.floating)):
        number = float(value)  # float16 and float32 compared as float64, without overflow
        if math.isfinite(number) and number.is_integer() and abs(number) <= _EXACT:
            return str(int(number))
    elif isinstance(value, pd.Timestamp) and value.tz is None and value == value.normalize():
        return str(value.date())  # a date: pandas writes a column of them so, the time left out
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
    dtype = column.dtype
    if dtype == object:
        values = column.to_numpy()
        inferred = _INFERRED.get(pd.api.types.infer_dtype(values, skipna=False))
        if inferred == TEXT:
            return values, _one_kind(values, TEXT)
        if inferred is not None:  # Python objects of one kind, read one by one
            texts = np.array([value_text(v) for v in values], dtype=object)
            return texts, _one_kind(texts, inferred)
        texts = np.array([value_text(v) for v in values], dtype=object)
        kinds = np.fromiter(map(_kind, values), dtype=np.int8, count=len(values))
        pairs = pd.DataFrame({"text": texts, "kind": kinds}).drop_duplicates()
        # Distinct (text, kind) pairs: the sum of distinct bits is their bitwise or.
        return texts, pairs.groupby("text", sort=False)["kind"].sum()
    kind = (TRUTH if pd.api.types.is_bool_dtype(dtype)
            else NUMBER if pd.api.types.is_numeric_dtype(dtype)
            else TEXT if pd.api.types.is_string_dtype(dtype) else OTHER)
    if pd.api.types.is_float_dtype(dtype):
        values = column.to_numpy(dtype=np.float64)
        texts = values.astype(str).astype(object)
        whole = np.isfinite(values) & (np.abs(values) <= _EXACT)
        whole[whole] = values[whole] == np.round(values[whole])
        texts[whole] = values[whole].astype(np.int64).astype(str)
        if values.dtype != dtype:  # float16 and float32 as their own shortest text
            rest = ~whole
            texts[rest] = [value_text(v) for v in column.to_numpy()[rest]]
        return texts, _one_kind(texts, kind)
    # Each distinct value read once, by the one rule: pandas' text of a whole column
    # depends on its other cells (dates written with their time when one has one).
    codes, uniques = pd.factorize(column, sort=False)
    texts = np.array([value_text(v) for v in uniques], dtype=object)[codes]
    return texts, _one_kind(texts, kind)


def _one_kind(texts: np.ndarray, kind: int) -> pd.Series:
    """The masks of :func:`cell_texts` when every cell is of one kind."""
    return pd.Series(kind, index=pd.unique(texts), dtype=np.int8)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def same_number_hint(named, present, where: str) -> str:
    """A hint for values named but not found, when one of them and a value found are
    the same number written differently ('1' and '1.0'); else "". `where` names
    what holds the values found ("the column", "its hierarchy").

    >>> same_number_hint(["1"], ["1.0", "2.0"], "the column")[:49]
    " (the column holds '1.0', the same number written"
    >>> same_number_hint(["3"], ["1.0"], "the column")
    ''
    """
    numbers: dict = {}
    for text in present:
        number = _number(text)
        if number is not None:
            numbers.setdefault(number, text)
    for text in named:
        number = _number(text)
        if number is not None and numbers.get(number, text) != text:
            return (f" ({where} holds {numbers[number]!r}, the same number written otherwise: "
                    "a value is read as written in text, a whole float as the whole number, so "
                    "1.0 reads '1')")
    return ""


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
        # The least text, so that both engines (which meet the texts in other orders) say the same.
        text = min(str(t) for t in mixed.index)
        mask = int(mixed[text])
        names = [label for bit, label in _KIND_NAMES if mask & bit]
        raise SchemaError(
            f"Column {name!r} holds {text!r} both as {' and as '.join(names)}, which would be read as one "
            f"value; give the column one type (e.g. table[{name!r}] = table[{name!r}].astype(str))."
        )
