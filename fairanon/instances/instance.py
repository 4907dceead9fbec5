"""An instance: a table plus the schema that gives each column its role and type."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import cached_property

import numpy as np
import pandas as pd

from ..exceptions import SchemaError
from .hierarchy import SUPPRESSED, Hierarchy
from .schema import Attribute, Schema
from .texts import cell_texts, check_kinds, same_number_hint

__all__ = ["Instance", "MISSING_POLICIES", "parse_numbers"]

#: What to do with missing values (NaN/None) in a released attribute.
MISSING_POLICIES = ("error", "drop")


def _plain(value):
    return value.item() if hasattr(value, "item") else value


#: What a missing-value error says a missing cell is, on both engines.
MISSING_CELLS = ("such as '?'; a CSV cell is missing when empty or written as pandas reads a "
                 "missing value: NA, N/A, NaN, None, null")


def _natural_key(value: str):
    """Numbers first, by value exactly (9007199254740993 after ...992, which float64
    holds alike), then the text: "1" and "1.0" in one order on both engines."""
    if re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value):
        try:
            return (0, Fraction(value.strip()), value)
        except ValueError:  # spaces strip() keeps and the pattern allows, such as \x1f
            pass
    return (1, Fraction(0), value)


def check_numbers(column: pd.Series, values: pd.Series, name: str) -> None:
    """Refuse a column declared numeric whose cells are numbers of another kind: dates
    and durations (which pandas reads as counts of nanoseconds), truth values, complex
    numbers (whose imaginary part would be dropped), and whole numbers beyond 2**53
    that float64 does not hold exactly (the release would show others). `values` is the
    column read by :func:`parse_numbers`; both engines check each column so."""
    dtype = column.dtype
    kind = None
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        kind = "dates or durations"
    elif values.dtype.kind == "b":
        kind = "truth values"
    elif values.dtype.kind == "c":
        kind = "complex numbers"
    if kind is not None:
        raise SchemaError(
            f"Column {name!r} is declared numeric but holds {kind}; declare it categorical "
            "or ordered, or convert it to numbers first."
        )
    numbers = values.to_numpy()
    if numbers.dtype.kind in "iu":
        beyond = numbers[(numbers > 2**53) | (numbers < -(2**53)) if numbers.dtype.kind == "i"
                         else numbers > 2**53]
        with np.errstate(invalid="ignore"):  # a float past the type's end casts to garbage
            back = beyond.astype(np.float64).astype(beyond.dtype)
        inexact = [int(v) for v in beyond[back != beyond]]
    elif numbers.dtype.kind == "f":
        # Whole numbers that fit no integer type beside the others (-1 and 10**19) are read
        # as float64: the cells themselves, as written, tell whether that changed them.
        where = np.flatnonzero(np.abs(np.nan_to_num(numbers.astype(np.float64))) > 2**53)
        cells = column.to_numpy()[where]
        inexact = [whole for whole, x in zip(map(_whole, cells), numbers[where])
                   if whole is not None and whole != int(x)]
    else:
        inexact = []
    if inexact:
        raise SchemaError(
            f"Column {name!r} is declared numeric but holds {inexact[0]}, which float64 "
            "does not hold exactly (it would be released changed); declare it categorical or "
            "ordered, or scale it."
        )


def _whole(cell) -> int | None:
    """A cell written as a whole number (an int, or text of one), as that int; else None."""
    if isinstance(cell, (int, np.integer)) and not isinstance(cell, (bool, np.bool_)):
        return int(cell)
    if isinstance(cell, str) and re.fullmatch(r"\s*[+-]?\d+\s*", cell):
        return int(cell)
    return None


def parse_numbers(column: pd.Series) -> pd.Series:
    """A numeric attribute's column as numbers, NaN where a cell is not a number: one
    machine's :class:`Instance` reads a column so, the Dask engine each partition of it,
    so that both give the same numbers and refuse the same cells.

    :func:`pandas.to_numeric` with ``errors="coerce"``: int64, uint64 or float64 as the
    values need. Its ``errors="raise"`` is not used: when whole numbers fit no integer
    type (``-1`` beside ``10**19``, or ``2**64``) it returns the text as it is (or
    Python ints) where this gives float64, as pandas does for a column holding a fraction.

    >>> parse_numbers(pd.Series(["-1", "10000000000000000000"])).tolist()
    [-1.0, 1e+19]
    >>> parse_numbers(pd.Series(["1", "x"])).tolist()
    [1.0, nan]

    A decimal number beyond float64's range is read as pandas 3 reads it, where pandas 2
    gives NaN: infinite (refused as such by the instance), or 0 for a zero:

    >>> parse_numbers(pd.Series(["1", "1e400", "-1e400", "0e400"])).tolist()
    [1.0, inf, -inf, 0.0]
    """
    values = pd.to_numeric(column, errors="coerce")
    unread = (values.isna() & column.notna()).to_numpy()
    if not unread.any():
        return values
    numbers = values.to_numpy(dtype=float, na_value=np.nan).copy()  # pandas 3: read-only
    numbers[unread] = [_decimal(text) for text in column.to_numpy()[unread]]
    return pd.Series(numbers, index=column.index, name=column.name)


#: A decimal number as text: digits, a point, an exponent (no "_", "nan" or "inf").
_DECIMAL = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


def _decimal(text) -> float:
    """The float of a decimal number written as text ("1e400": inf), else NaN."""
    return float(text) if isinstance(text, str) and _DECIMAL.fullmatch(text) else math.nan


def _sampling_weights(column: pd.Series, name: str, instance: str) -> np.ndarray:
    """The values of a weight attribute as floats, each finite and > 0."""
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        raise SchemaError(
            f"Column {name!r} of instance {instance!r} holds sampling weights, which must be finite numbers > 0; "
            f"{int(bad.sum())} are not, e.g. {column[bad].iloc[0]!r} (record {_plain(column.index[bad][0])!r})."
        )
    return values


class Instance:
    """A table and its schema, validated once.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per record; its index holds the record ids (must be unique).
    schema : Schema
        Roles and types. Columns the schema does not name are left out of every release
        (role "ignore").
    name : str, default="instance"
    missing : {"error", "drop"}, default="error"
        Missing values in a released attribute raise :class:`SchemaError`, or their rows
        are dropped (and counted in :attr:`dropped_rows`).

    Notes
    -----
    Categorical and ordered columns are stored as pandas categoricals whose categories
    are the attribute's domain in order, so a table of millions of rows stays small.
    Attributes without a hierarchy (categorical) or an order (ordered) get a flat
    hierarchy or the sorted values present.

    Examples
    --------
    >>> df = pd.DataFrame({"age": [30, 41], "zip": ["a", "b"], "disease": ["flu", "hiv"]})
    >>> inst = Instance(df, Schema([Attribute("age", kind="numeric"), Attribute("zip"),
    ...                            Attribute("disease", role="sensitive")]), name="toy")
    >>> inst
    Instance('toy', n_rows=2, qi=['age', 'zip'], sensitive=['disease'])
    """

    def __init__(self, table: pd.DataFrame, schema: Schema, name: str = "instance", *, missing: str = "error"):
        if not isinstance(table, pd.DataFrame):
            raise SchemaError(f"An instance needs a pandas DataFrame; got {type(table).__name__}.")
        if not isinstance(schema, Schema):
            raise SchemaError(f"An instance needs a Schema; got {type(schema).__name__}.")
        if missing not in MISSING_POLICIES:
            raise SchemaError(f"missing must be one of {MISSING_POLICIES}; got {missing!r}.")
        self.name = str(name)
        if len(table) == 0:
            raise SchemaError(f"Instance {self.name!r} has an empty table: nothing to anonymize.")
        columns = [str(c) for c in table.columns]
        twice = sorted({c for c in columns if columns.count(c) > 1})
        if twice:
            raise SchemaError(f"Column(s) {twice} of instance {self.name!r} are named more than once.")
        unknown = [a.name for a in schema if a.name not in columns]
        if unknown:
            raise SchemaError(
                f"Unknown column(s) {unknown} in the schema of instance {self.name!r}; "
                f"the table has {columns}."
            )
        if not table.index.is_unique:
            raise SchemaError(f"The record ids (index) of instance {self.name!r} are not unique.")
        table = table.copy()
        table.columns = columns
        attrs = list(schema) + [Attribute(c, role="ignore") for c in columns if c not in schema]
        used = [a for a in attrs if a.read]
        if not any(a.is_qi for a in used):
            raise SchemaError(f"Instance {self.name!r} has no quasi-identifier.")

        self.dropped_rows: list = []
        missing_mask = table[[a.name for a in used]].isna()
        if missing_mask.to_numpy().any():
            bad = missing_mask.any(axis=0)
            if missing == "error":
                details = ", ".join(
                    f"{c!r} ({int(missing_mask[c].sum())} rows)" for c in bad[bad].index
                )
                raise SchemaError(
                    f"Missing values in {details} of instance {self.name!r}. Fill them with a "
                    f"value of their own ({MISSING_CELLS}), or pass missing='drop'."
                )
            keep = ~missing_mask.any(axis=1)
            self.dropped_rows = list(table.index[~keep])
            table = table[keep]
            if len(table) == 0:
                raise SchemaError(f"Every row of instance {self.name!r} has a missing value.")

        data = {}
        weights = {}
        completed = []
        for attr in attrs:
            col = table[attr.name]
            if not attr.read:
                completed.append(attr)
                continue
            if attr.role == "weight":
                weights[attr.name] = _sampling_weights(col, attr.name, self.name)
                completed.append(attr)
                continue
            if attr.kind == "numeric":
                values = parse_numbers(col)
                check_numbers(col, values, attr.name)
                if values.isna().any():  # missing cells are dropped or refused above
                    raise SchemaError(
                        f"Column {attr.name!r} is declared numeric but holds {col[values.isna()].iloc[0]!r}."
                    )
                numbers = values.to_numpy()
                infinite = ~np.isfinite(numbers.astype(float))
                if infinite.any():
                    raise SchemaError(
                        f"Column {attr.name!r} is declared numeric but holds {float(numbers[infinite][0])!r} "
                        f"({int(infinite.sum())} non-finite value(s), e.g. record {_plain(table.index[infinite][0])!r}); "
                        "give finite numbers."
                    )
                data[attr.name] = numbers
                completed.append(attr)
                continue
            if isinstance(col.dtype, pd.CategoricalDtype):
                # Recode the categories, not the rows: no per-row strings for big tables.
                raw_codes = col.cat.codes.to_numpy()
                used = np.zeros(len(col.cat.categories), dtype=bool)
                used[raw_codes[raw_codes >= 0]] = True
                cat_labels, _ = cell_texts(pd.Series(col.cat.categories))
                check_kinds(attr.name, cell_texts(pd.Series(col.cat.categories[used]))[1])
                present = pd.unique(cat_labels[used])
            else:
                values, kinds = cell_texts(col)
                check_kinds(attr.name, kinds)
                present = pd.unique(values)
            if SUPPRESSED in present:
                raise SchemaError(
                    f"Column {attr.name!r} holds '*', which is reserved for suppression."
                )
            if attr.kind == "ordered" and attr.order is None:
                attr = attr.with_(order=tuple(sorted(present, key=_natural_key)))
            if attr.kind == "categorical" and attr.hierarchy is None:
                attr = attr.with_(hierarchy=Hierarchy.flat(sorted(present, key=_natural_key)))
            domain = attr.domain
            outside = sorted(set(present) - set(domain))
            if outside:
                where = "order" if attr.kind == "ordered" else "hierarchy"
                raise SchemaError(
                    f"Value(s) {outside[:5]} of column {attr.name!r} are not in its {where} "
                    f"(instance {self.name!r}){same_number_hint(outside, domain, f'its {where}')}."
                )
            if attr.hierarchy is not None and attr.kind == "ordered":
                if set(attr.hierarchy.leaves) != set(attr.order):
                    raise SchemaError(f"The hierarchy and the order of {attr.name!r} list different values.")
            for value in attr.protected:
                if value not in domain:
                    raise SchemaError(f"Protected value {value!r} is not a value of {attr.name!r}"
                                      f"{same_number_hint([value], present, 'the column')}.")
            if attr.negative is not None and attr.negative not in domain:
                hint = same_number_hint([attr.negative], present, "the column")
                raise SchemaError(
                    f"Negative value {attr.negative!r} is not a value of {attr.name!r}{hint}.")
            if isinstance(col.dtype, pd.CategoricalDtype):
                position = {v: i for i, v in enumerate(domain)}
                # The trailing -1 is what code -1 (missing) looks up, so it stays missing.
                lookup = np.array([position.get(v, -1) for v in cat_labels] + [-1], dtype=np.int32)
                data[attr.name] = pd.Categorical.from_codes(lookup[raw_codes], categories=list(domain))
            else:
                data[attr.name] = pd.Categorical(values, categories=list(domain))
            completed.append(attr)
        self.schema = Schema(completed)
        released_cols = [a.name for a in completed if a.released]
        self.table = pd.DataFrame({c: data[c] for c in released_cols}, index=table.index)
        # Identifiers, ignored columns and the sampling weights (as numbers) stay beside the table.
        self.extra = table[[a.name for a in completed if not a.released]].assign(**weights)

    # ------------------------------------------------------------------ views
    @property
    def n_rows(self) -> int:
        return len(self.table)

    @property
    def row_ids(self) -> pd.Index:
        return self.table.index

    def __len__(self) -> int:
        return self.n_rows

    def attribute(self, name: str) -> Attribute:
        return self.schema[name]

    def codes(self, name: str) -> np.ndarray:
        """Domain indices (categorical, ordered) or the float values (numeric) of a column
        (built on first use, column by column)."""
        if name not in self._codes:
            col = self.table[name]
            if isinstance(col.dtype, pd.CategoricalDtype):
                self._codes[name] = col.cat.codes.to_numpy().astype(np.int64)
            else:
                self._codes[name] = col.to_numpy(dtype=float)
        return self._codes[name]

    def stored_codes(self, name: str) -> np.ndarray:
        """The values of :meth:`codes` as the table stores them, without a copy (read-only).

        Categorical and ordered columns give their domain indices in the categorical's
        own narrow type (int8 up to 127 values, int16, int32); numeric columns their
        numbers in the stored type. :meth:`codes` widens every column to int64 or
        float64 on first use (8 bytes a cell); code that reads whole columns of a large
        table reads these instead, and widens only what its arithmetic needs.
        """
        col = self.table[name]
        out = col.array.codes if isinstance(col.dtype, pd.CategoricalDtype) else col.to_numpy()
        if out.flags.writeable:
            out = out.view()
            out.flags.writeable = False
        return out

    @cached_property
    def _codes(self) -> dict[str, np.ndarray]:
        return {}

    def active_domain(self, name: str) -> np.ndarray:
        """Mask over the domain of a categorical/ordered attribute: values present."""
        attr = self.schema[name]
        present = np.zeros(len(attr.domain), dtype=bool)
        present[np.unique(self.codes(name))] = True
        return present

    def protected_mask(self) -> np.ndarray:
        """Per row: is the record in the protected group? (needs a protected attribute)"""
        attr = self.schema[self._require("protected")]
        idx = [attr.domain.index(v) for v in attr.protected]
        return np.isin(self.codes(attr.name), idx)

    def negative_mask(self) -> np.ndarray:
        """Per row: is the decision negative? (needs a decision attribute)"""
        attr = self.schema[self._require("decision")]
        return self.codes(attr.name) == attr.domain.index(attr.negative)

    def _require(self, role: str) -> str:
        name = getattr(self.schema, role)
        if name is None:
            raise SchemaError(f"Instance {self.name!r} has no {role} attribute.")
        return name

    def subset(self, rows, name: str | None = None) -> "Instance":
        """The instance restricted to some record ids, with the same schema."""
        # The ignored columns live in `extra` but are still named by the schema.
        table = pd.concat([self.table.loc[rows], self.extra.loc[rows]], axis=1)
        for col in table.columns:
            if isinstance(table[col].dtype, pd.CategoricalDtype):
                table[col] = table[col].astype(str)
        return Instance(table, self.schema, name or f"{self.name}[subset]")

    def __repr__(self) -> str:
        parts = [f"{self.name!r}", f"n_rows={self.n_rows}", f"qi={list(self.schema.qi)}"]
        if self.schema.sensitive:
            parts.append(f"sensitive={list(self.schema.sensitive)}")
        if self.schema.protected:
            parts.append(f"protected={self.schema.protected!r}")
        if self.schema.decision:
            parts.append(f"decision={self.schema.decision!r}")
        return f"Instance({', '.join(parts)})"
