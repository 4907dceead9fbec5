"""An instance held by a Dask DataFrame: the schema completed from distributed counts,
and the table's value statistics, so that each partition is coded exactly as the whole
table would be by :class:`~fairanon.instances.instance.Instance`."""

from __future__ import annotations

import gzip
import os
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial, reduce

import numpy as np
import pandas as pd
from pandas._libs.parsers import STR_NA_VALUES  # the texts read_csv takes for missing

from ..exceptions import FairanonError, InvalidParameterError, SchemaError
from ..instances.files import GZIP_ERRORS, as_record_ids, check_first_row
from ..instances.instance import (
    MISSING_CELLS,
    MISSING_POLICIES,
    Instance,
    _plain,
    check_numbers,
    parse_numbers,
)
from ..instances.schema import Schema
from ..instances.texts import cell_texts, check_kinds

__all__ = ["FILE_ERRORS", "READING_TASKS", "DaskInstance", "as_dask_instance", "check_ids", "compute", "dask_ids", "dask_instance",
           "id_facts", "merge_id_facts", "read_table", "reader_errors", "reading_failed", "release_ids",
           "release_readings", "tree", "typed_ids"]


def _dd():
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - the extra is installed in the test environment
        raise InvalidParameterError(
            "engine='dask' needs Dask: pip install 'fairanon[dask]' (dask[dataframe] and distributed)."
        ) from None
    return dd


#: The bytes of a CSV file read by one task (Dask's ``blocksize``).
CSV_BLOCKSIZE = "64MB"


def read_table(path: str, *, id_column: str | None = None, what: str | None = None, id_type=None,
               numbered: bool = True, all_text: bool = False, as_written: bool = False,
               neutralized: bool | None = False):
    """A Dask DataFrame of a Parquet file or directory (or a CSV file), indexed by
    `id_column` when given, else by the file's index or (`numbered`) the row numbers.
    Column types come from the Parquet schema.

    A CSV file's columns are parsed by Dask, spaces after a separator skipped
    (:func:`fairanon.jobs.read_table`); with `all_text`, every column as text, not parsed
    (``01234`` stays ``'01234'``; the caller parses the numbers it uses as one machine
    does: Dask guesses a parsed column's type from the file's first 256 kB, and would
    fail on a later 33.5 even in a column nobody reads); with `as_written`, every cell as the text written, nothing read as missing and no
    space skipped (a release file: :func:`fairanon.jobs.read_release`), and the formulas
    the writer neutralized read back as one machine reads them
    (:func:`~fairanon.instances.files.reads_restored` of `neutralized`, the report's
    ``neutralized_formulas``: True restored, None restored unless a partition holds a
    formula written as it is, False as written). Its `id_column`
    is read as text, as one machine reads it
    (:func:`fairanon.jobs.read_table`: the id written ``1`` is ``'1'``, ``007`` stays
    ``'007'``), so that both engines name the same records; or as the numpy type
    `id_type` (a release's ``record_id`` column read as the instance's ids: a CSV
    file's as text, then each partition by one machine's
    :func:`~fairanon.instances.files.as_record_ids`, as
    :func:`fairanon.jobs.external_release` reads them; Dask's parser would read ``1.0``
    or `` 1`` as the id 1). The ids of
    `id_column` are checked as :func:`dask_ids` checks a table's (`what` names the table
    in the message; default: its path), in the pass that finds whether they are sorted
    already.

    Raises
    ------
    InvalidParameterError
        A missing file, or an id that is not of `id_type` (when the ids are read).
    SchemaError
        An unknown `id_column`, a missing id, ids of mixed kinds.
    """
    dd = _dd()
    if not os.path.exists(path):
        raise InvalidParameterError(f"Data file {path!r} does not exist.")
    typed = id_column is not None and id_type is not None
    parsing = partial(_parsing, path)
    if path.endswith((".csv", ".csv.gz")):
        with parsing():  # an empty file, a header that is not UTF-8
            header = _csv_header(path) if as_written or all_text or id_column is not None else []
            # Else Dask would read the first fields of every row as its index, which
            # _row_numbers replaces: the columns silently shifted.
            check_first_row(path, skipinitialspace=not as_written)
        if as_written:
            dtype, options = dict.fromkeys(header, str), {"keep_default_na": False}
        else:
            dtype, options = dict.fromkeys(header, str), {"skipinitialspace": True}
        if id_column is not None:
            # As text, then as one machine reads it: Dask's parser would read 1.0 as the
            # int64 id 1, which as_record_ids refuses.
            dtype[id_column] = str
            if not as_written:
                # An id is read as written: only a blank one is missing, where pandas
                # takes "NA" or "None" for one (the other columns keep that reading).
                missing = {c: sorted(STR_NA_VALUES) for c in header if c != id_column}
                options.update(keep_default_na=False, na_values={**missing, id_column: [""]})
        # A compressed file cannot be split into blocks: one partition, without Dask's warning.
        blocksize = None if path.endswith(".gz") else CSV_BLOCKSIZE
        with parsing():  # Dask parses the first rows here
            ddf = dd.read_csv(path, blocksize=blocksize, dtype=dtype or None, **options)
        if as_written:
            with parsing():  # a pass when `neutralized` is None
                ddf = _restored(ddf, neutralized)
    else:
        try:
            ddf = dd.read_parquet(path)
        except KeyError as exc:
            raise SchemaError(
                f"Dask cannot read the record ids of {path!r} (kept as a pandas RangeIndex in the file's "
                f"metadata: {exc}); write them as a column (df.reset_index().to_parquet(...)) and name it in "
                "id_column."
            ) from None
    if id_column is not None:
        if id_column not in ddf.columns:
            raise SchemaError(f"id_column {id_column!r} is not a column of {path!r}; columns: {list(ddf.columns)}.")
        if typed:
            ddf = ddf.assign(**{id_column: ddf[id_column].map_partitions(
                _record_ids, id_type, path, id_column, meta=ddf._meta[id_column].astype(id_type))})
        with parsing():  # the pass that reads the ids
            ddf = _index_by(ddf, id_column, what or repr(path))
    elif ddf.index.name is None and numbered:
        with parsing():  # the pass that counts each block's rows parses them all
            ddf = _row_numbers(ddf)
    return ddf


def reader_errors() -> tuple[type, ...]:
    """The exceptions, with their subclasses, of the readers on a bad file: a CSV row
    the parser cannot read, text that is not UTF-8, a Parquet file Arrow cannot read
    (ArrowInvalid: Arrow's other errors, such as ArrowMemoryError, are faults), a
    damaged ``.csv.gz`` file (:data:`~fairanon.instances.files.GZIP_ERRORS`).
    :func:`reading_failed` and the filter of the workers' logs
    (:mod:`fairanon.distributed.cluster`) read the same ones, and :data:`FILE_ERRORS`."""
    import pyarrow

    return (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, pyarrow.ArrowInvalid,
            *GZIP_ERRORS)


#: The OSErrors of a reader on a file it cannot open or read (a plain OSError is what
#: Arrow raises on a damaged Parquet file), matched by their exact type: the other
#: subclasses of OSError (a connection reset, a time-out, a closed comm) are faults of
#: the cluster, not of a file. A plain OSError is also a fault's (distributed's
#: "Timed out trying to connect", a full disk, too many open files): the workers' log
#: filter keeps it but in a reading task (:data:`READING_TASKS`).
FILE_ERRORS = (OSError, FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError,
               gzip.BadGzipFile)

#: How the keys of Dask's tasks that read a file begin ("read-csv-...", the tasks fused
#: with them "read-_to_string_dtype-...", "read-fused-...", and "read_parquet-..."):
#: the reader's own steps (the row numbers, the record ids) run fused with them.
READING_TASKS = ("read-", "read_parquet-")

#: How Dask's error on a column whose type it guessed from a file's first blocks, and a
#: later block contradicts, begins (a ValueError, like many faults).
MISMATCHED_DTYPES = "Mismatched dtypes"


#: The modules of Dask's readers, by path (a worker's frames reach the client as file
#: names): an OSError raised within them is a reader's.
READER_MODULES = ("/dask/dataframe/io/", "/dask/bytes/")


def reading_failed(exc: BaseException) -> bool:
    """Whether `exc` is a reader's error on a bad file (:func:`reader_errors`,
    :data:`FILE_ERRORS`, or a column whose type Dask guessed from the file's first blocks and a later block
    contradicts), which its caller reports in one line. Any other exception is a fault,
    to be raised with its traceback. A plain OSError is a reader's only when it names a
    file or was raised within Dask's readers (:data:`READER_MODULES`: Arrow's on a
    damaged Parquet file); elsewhere it is a fault of the cluster (distributed's
    "Timed out trying to connect", a full disk)."""
    if type(exc) is OSError:
        return exc.filename is not None or any(
            module in frame.filename.replace("\\", "/")
            for frame in traceback.extract_tb(exc.__traceback__) for module in READER_MODULES)
    return (isinstance(exc, reader_errors()) or type(exc) in FILE_ERRORS
            or isinstance(exc, ValueError) and str(exc).startswith(MISMATCHED_DTYPES))


def _csv_header(path: str) -> list[str]:
    """The column names of a CSV file, from its first line: the columns :func:`read_table`
    is to read as text (Dask would guess the others' types from the file's first 256 kB
    and fail on a later 33.5)."""
    return [str(c) for c in pd.read_csv(path, nrows=0, encoding="utf-8").columns]


def release_ids(path: str, dinst, neutralized: bool | None = None) -> dict:
    """How :func:`read_table` reads a release file, as one machine reads it
    (:func:`fairanon.jobs.read_release`): its ``record_id`` column as the instance's ids
    (numbers when they are numbers, else the ids as stored); a CSV file's cells as the
    text written, the formulas the writer neutralized read back (`neutralized`: what the
    report written with it says, None when none does). A Parquet release without a
    ``record_id`` column (the Dask engine's, its ids the index) is read by its index."""
    dtype = dinst.data.index.dtype
    ids = {"id_column": "record_id", "what": "the release",
           "id_type": dtype if getattr(dtype, "kind", "O") in "iuf" else None}
    if path.endswith((".csv", ".csv.gz")):
        return {**ids, "as_written": True, "neutralized": neutralized}
    if os.path.exists(path) and "record_id" in _dd().read_parquet(path).columns:
        return ids
    return {}


def release_readings(path: str, dinst, neutralized: bool | None = None) -> list[dict]:
    """The :func:`read_table` options of each reading a release file may be meant in,
    likeliest first, as one machine reads it (:func:`fairanon.jobs.release_readings`): a
    CSV file whose report is not known (`neutralized` None) read restored first, then
    (if that reading fails, :func:`~fairanon.instances.files.verified_reading`) with its
    cells as written; any other file the one reading of :func:`release_ids`."""
    first = release_ids(path, dinst, neutralized)
    if first.get("as_written") and neutralized is None:
        return [first, {**first, "neutralized": False}]
    return [first]


@contextmanager
def _parsing(path: str):
    """The reader's errors on the blocks of `path` that a pass parses: a row it cannot
    read, as one machine reports a file it cannot read
    (:func:`~fairanon.instances.files.read_csv_table`). Any other error is raised as it is."""
    try:
        yield
    except FairanonError:
        raise
    except pd.errors.ParserError as exc:
        raise SchemaError(f"Cannot read {path!r} as CSV: {' '.join(str(exc).split())}") from None
    except pd.errors.EmptyDataError:
        raise SchemaError(f"{path!r} holds no header row.") from None
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{path!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8.") from None
    except GZIP_ERRORS as exc:
        reason = str(exc).strip() or type(exc).__name__
        raise SchemaError(f"Cannot read {path!r} as CSV: a damaged gzip file ({reason})") from None


def _restored(ddf, neutralized: bool | None):
    """`ddf`, a CSV file's cells as written, with the formulas the writer neutralized
    read back partition by partition by one machine's code
    (:func:`~fairanon.instances.files.restore_formulas`, a cell at a time), when
    :func:`~fairanon.instances.files.reads_restored` says so (with `neutralized` None,
    after a pass that looks for a formula written as it is)."""
    import dask

    from ..instances.files import reads_restored, restore_formulas, unneutralized_formulas

    def unneutralized() -> bool:
        return any(dask.compute(*[dask.delayed(unneutralized_formulas)(part) for part in ddf.to_delayed()]))

    if not reads_restored(neutralized, unneutralized):
        return ddf
    return ddf.map_partitions(restore_formulas, meta=ddf._meta)


def _record_ids(values: pd.Series, id_type, path: str, id_column: str) -> pd.Series:
    """One partition's ids of `id_column` (text in a CSV file, as the Parquet file holds
    them) as the instance's ids of the numpy type `id_type`, by one machine's
    :func:`~fairanon.instances.files.as_record_ids`. An id that is not of `id_type` (its
    ValueError, TypeError or OverflowError, as :func:`fairanon.jobs.external_release`
    catches them) is a fairanon error raised by the task itself, so that a worker logs
    no traceback for it (:mod:`fairanon.distributed.cluster`) and the client raises it
    in one line."""
    try:
        return as_record_ids(values, id_type)
    except (ValueError, TypeError, OverflowError) as exc:
        reason = str(exc).splitlines()[-1]
        raise InvalidParameterError(
            f"The {id_column} values of {path!r} are not the instance's record ids ({id_type}): {reason}"
        ) from None


def _row_numbers(ddf):
    """Record ids 0..n-1 in file order, as pandas gives a table read without ids."""
    import dask

    lengths = dask.compute(*[dask.delayed(len)(p) for p in ddf.to_delayed()])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)

    def number(part, partition_info=None):
        start = offsets[partition_info["number"]] if partition_info else 0
        out = part.copy()
        out.index = pd.RangeIndex(start, start + len(part))
        return out

    meta = ddf._meta.copy()
    meta.index = pd.RangeIndex(0)
    out = ddf.map_partitions(number, meta=meta)
    return out.clear_divisions()


def _index_by(ddf, column: str, what: str):
    """`ddf` indexed by the record ids of `column`, after the check of :func:`dask_ids`
    (a missing id, numbers beside text), read in the one pass that also finds whether
    the column is sorted across partitions (so that indexing by it needs no shuffle:
    from the partitions' first and last values)."""
    import dask

    def facts(part: pd.Series):
        ends = (part.iloc[0], part.iloc[-1], part.is_monotonic_increasing) if len(part) else None
        return ends, id_facts(pd.Index(part))

    found = dask.compute(*[dask.delayed(facts)(part) for part in ddf[column].to_delayed()])
    missing, kinds = reduce(merge_id_facts, (f for _, f in found), (0, frozenset()))
    kind = check_ids(missing, kinds, what)
    ends = [e for e, _ in found if e is not None]
    ordered = all(e[2] for e in ends) and all(a[1] < b[0] for a, b in zip(ends, ends[1:]))
    return typed_ids(ddf.set_index(column, sorted=ordered), kind)


@dataclass
class _Stats:
    """Per-column facts of a table: rows, missing cells, distinct texts (non-numeric)
    and distinct numbers with counts (numeric)."""

    n_rows: int = 0
    missing: dict = field(default_factory=dict)
    texts: dict = field(default_factory=dict)
    numbers: dict = field(default_factory=dict)
    bad_number: dict = field(default_factory=dict)
    #: Per numeric column holding inf or -inf (1e400 parses to inf): the number of such
    #: cells, the first one and its record id, in table order.
    infinite: dict = field(default_factory=dict)
    #: The numeric columns with a missing cell, which pandas reads as floats from a whole
    #: CSV file (counted before rows are dropped; a fraction is in `kinds`).
    floats: set = field(default_factory=set)
    #: The record ids: missing ones and the kinds of the others (:func:`id_facts`).
    ids: tuple = (0, frozenset())
    #: Per numeric column, the kinds of number its partitions parse to (:func:`_number_kind`).
    kinds: dict = field(default_factory=dict)
    #: Per other column, the kinds of cell that read as each text
    #: (:func:`~fairanon.instances.texts.cell_texts`).
    text_kinds: dict = field(default_factory=dict)


def _number_kind(values: pd.Series) -> str:
    """What a partition's parsed numbers need: "f" (a fraction, or too large for any
    integer type), "u" (a whole number above int64's maximum: uint64), "-" (a negative
    whole number: int64 but never uint64) or "i" (whole numbers from 0 to int64's maximum)."""
    if values.dtype.kind in "fu":
        return values.dtype.kind
    return "-" if len(values) and values.min() < 0 else "i"


def _number_type(kinds: set, missing_or_fraction: bool):
    """The numpy type a whole CSV column of numbers whose partitions are of `kinds`
    (:func:`_number_kind`) is read as, as on one machine: float64 for a fraction or a
    missing cell, and for whole numbers above int64's maximum beside negative ones (no
    integer type holds both; one machine's Instance converts such a column to float64),
    uint64 for whole numbers of which one is above int64's maximum and none is
    negative, else int64."""
    if missing_or_fraction or "f" in kinds or {"u", "-"} <= kinds:
        return np.float64
    return np.uint64 if "u" in kinds else np.int64


def _partition_stats(part: pd.DataFrame, schema: Schema, drop: list | None = None) -> _Stats:
    """The facts of one partition, its rows missing a value of `drop` dropped first."""
    floats = {a.name for a in schema if a.kind == "numeric" and a.read and a.name in part.columns
              and part[a.name].isna().any()}
    if drop is not None:
        part = part.dropna(subset=drop)
    out = _Stats(n_rows=len(part), ids=id_facts(part.index), floats=floats)
    for attr in schema:
        if not attr.read or attr.name not in part.columns:
            continue
        col = part[attr.name]
        na = col.isna()
        out.missing[attr.name] = int(na.sum())
        col = col[~na]
        if attr.kind == "numeric":
            values = parse_numbers(col)  # as one machine's Instance reads the column
            check_numbers(col, values, attr.name)
            bad = values.isna()
            out.kinds[attr.name] = {_number_kind(values[~bad])}
            if bad.any():
                out.bad_number[attr.name] = col[bad].iloc[0]
            finite = np.isfinite(values[~bad].to_numpy(dtype=float))
            if not finite.all():
                first = int(np.argmin(finite))
                out.infinite[attr.name] = (int((~finite).sum()), float(values[~bad].iloc[first]),
                                           values[~bad].index[first])
            counts = values[~bad].value_counts(sort=False)
            out.numbers[attr.name] = counts
        elif isinstance(col.dtype, pd.CategoricalDtype):  # the categories read, not the rows
            counts = np.bincount(col.cat.codes.to_numpy(), minlength=len(col.cat.categories))
            text = pd.Series(counts, index=cell_texts(pd.Series(col.cat.categories))[0])
            out.texts[attr.name] = text[text > 0].groupby(level=0, sort=False).sum()
            out.text_kinds[attr.name] = cell_texts(pd.Series(col.cat.categories[counts > 0]))[1]
        else:
            texts, out.text_kinds[attr.name] = cell_texts(col)
            out.texts[attr.name] = pd.Series(texts).value_counts(sort=False)
    return out


def _merge_stats(a: _Stats, b: _Stats) -> _Stats:
    out = _Stats(n_rows=a.n_rows + b.n_rows)
    for key in set(a.missing) | set(b.missing):
        out.missing[key] = a.missing.get(key, 0) + b.missing.get(key, 0)
    for table, left, right in ((out.texts, a.texts, b.texts), (out.numbers, a.numbers, b.numbers)):
        for key in set(left) | set(right):
            parts = [s for s in (left.get(key), right.get(key)) if s is not None]
            table[key] = reduce(lambda x, y: x.add(y, fill_value=0), parts).astype(np.int64)
    out.bad_number = {**b.bad_number, **a.bad_number}
    out.infinite = {c: (a.infinite.get(c, (0,))[0] + b.infinite.get(c, (0,))[0],
                        *(a.infinite.get(c) or b.infinite[c])[1:]) for c in set(a.infinite) | set(b.infinite)}
    out.floats = a.floats | b.floats
    out.ids = merge_id_facts(a.ids, b.ids)
    out.kinds = {c: a.kinds.get(c, set()) | b.kinds.get(c, set()) for c in set(a.kinds) | set(b.kinds)}
    for c in set(a.text_kinds) | set(b.text_kinds):
        left, right = a.text_kinds.get(c), b.text_kinds.get(c)
        if left is None or right is None:
            out.text_kinds[c] = right if left is None else left
            continue
        texts = left.index.union(right.index)
        out.text_kinds[c] = pd.Series(left.reindex(texts, fill_value=0).to_numpy()
                                      | right.reindex(texts, fill_value=0).to_numpy(), index=texts)
    return out


@dataclass(frozen=True)
class Coder:
    """What a task needs to code a partition as the whole table (the completed schema),
    without the table itself."""

    schema: Schema
    name: str
    missing: str
    index_dtype: object

    def part(self, frame: pd.DataFrame) -> Instance:
        """One partition as an instance with the completed schema (its codes are the
        whole table's: domain indices, or the numbers themselves)."""
        return Instance(frame, self.schema, self.name, missing=self.missing)


class DaskInstance:
    """A table held by a Dask DataFrame (its index holds the record ids) and its schema.

    Built by :func:`dask_instance`, which completes the schema as
    :class:`~fairanon.instances.instance.Instance` does (orders and flat hierarchies
    from the values present, values checked against hierarchies) from distributed
    counts. :meth:`part` codes one partition exactly as the whole table would be.

    Attributes
    ----------
    data : dask.dataframe.DataFrame
    schema : Schema
        Completed.
    name : str
    n_rows : int
    numbers : dict
        Per numeric column, its distinct values (sorted) and their counts.
    domains : dict
        Per other column, the count of every value of its domain.
    """

    def __init__(self, data, schema: Schema, name: str, n_rows: int, numbers: dict, domains: dict, missing: str):
        self.data = data
        self.schema = schema
        self.name = name
        self.n_rows = n_rows
        self.numbers = numbers
        self.domains = domains
        self.missing = missing

    def value_counts(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The values of a column present in the table, in the order of its codes
        (domain indices, or numbers), and their counts."""
        if name in self.domains:
            counts = self.domains[name]
            present = np.flatnonzero(counts)
            return present, counts[present]
        series = self.numbers[name]
        return series.index.to_numpy(dtype=float), series.to_numpy(dtype=np.int64)

    @property
    def coder(self) -> Coder:
        return Coder(self.schema, self.name, self.missing, self.data.index.dtype)

    def part(self, frame: pd.DataFrame) -> Instance:
        """One partition as an instance with the completed schema."""
        return self.coder.part(frame)

    def __repr__(self) -> str:
        return (f"DaskInstance({self.name!r}, n_rows={self.n_rows}, qi={list(self.schema.qi)}, "
                f"partitions={self.data.npartitions})")


def dask_instance(data, schema: Schema, *, name: str | None = None, id_column: str | None = None,
                  missing: str = "error") -> DaskInstance:
    """Build a :class:`DaskInstance` from a Dask DataFrame or a Parquet path.

    Parameters
    ----------
    data : dask.dataframe.DataFrame or str
        The table, indexed by record id, or a Parquet file or directory (CSV also read).
    schema : Schema
    name : str, optional
    id_column : str, optional
        A column holding the record ids (default: the DataFrame's index).
    missing : {"error", "drop"}
        As for :class:`~fairanon.instances.instance.Instance`.

    Raises
    ------
    SchemaError
        Unknown columns, missing values, values outside a hierarchy or order,
        non-numbers in a numeric column: the messages of the single-machine instance.

    Notes
    -----
    Cells are read as one machine reads them (:mod:`fairanon.instances.texts`). A Dask
    DataFrame made from pandas with Dask's default ``dataframe.convert-string`` holds
    its object columns as text already, made by Dask: ``1.0`` there reads ``"1.0"``
    (one machine: ``"1"``), and ``1`` beside ``"1"`` is one value that one machine
    refuses. :func:`as_dask_instance` of an instance, a Parquet file or a CSV file
    read here do not depend on that setting.
    """
    dd = _dd()
    import dask

    if not isinstance(schema, Schema):
        raise SchemaError(f"An instance needs a Schema; got {type(schema).__name__}.")
    if missing not in MISSING_POLICIES:
        raise SchemaError(f"missing must be one of {MISSING_POLICIES}; got {missing!r}.")
    parsed = []  # a CSV file's numeric columns, read as text
    if isinstance(data, (str, os.PathLike)):
        path = os.fspath(data)
        name = name or os.path.splitext(os.path.basename(path.rstrip("/")))[0]
        if path.endswith((".csv", ".csv.gz")):
            # Read as text and parsed once checked (_parsed): Dask guesses a column's type
            # from the file's first 256 kB and would fail on a later 33.5 or blank cell.
            # The columns it does not parse (ignored ones, those outside the schema) stay
            # text for the same reason; the others are text on one machine too.
            parsed = [a.name for a in schema if a.kind == "numeric" and a.read]
        data = read_table(path, id_column=id_column, what=f"instance {name!r}", all_text=True)
    elif isinstance(data, dd.DataFrame):
        if id_column is not None:
            data = _index_by(data, id_column, f"instance {name or 'instance'!r}")
    else:
        raise InvalidParameterError(
            f"A distributed instance needs a Dask DataFrame or a Parquet path; got {type(data).__name__}."
        )
    name = name or "instance"
    columns = [str(c) for c in data.columns]
    unknown = [a.name for a in schema if a.name not in columns]
    if unknown:
        raise SchemaError(f"Unknown column(s) {unknown} in the schema of instance {name!r}; the table has {columns}.")
    used = [a.name for a in schema if a.read]
    drop = used if missing == "drop" else None
    (stats,) = dask.compute(tree([dask.delayed(_partition_stats)(p, schema, drop) for p in data.to_delayed()],
                                 _merge_stats))
    if drop is not None:
        data = data.dropna(subset=drop)
    if stats.n_rows == 0:
        raise SchemaError(f"Instance {name!r} has an empty table: nothing to anonymize.")
    # The ids of a Dask DataFrame or a Parquet file, checked in the same pass.
    data = typed_ids(data, check_ids(*stats.ids, f"instance {name!r}"))
    bad = {c: n for c, n in stats.missing.items() if n}
    if bad:
        details = ", ".join(f"{c!r} ({n} rows)" for c, n in bad.items())
        raise SchemaError(
            f"Missing values in {details} of instance {name!r}. Fill them with a value of "
            f"their own ({MISSING_CELLS}), or pass missing='drop'."
        )
    for attr in schema:  # in the schema's order, each column's checks in one machine's order (Instance)
        if attr.name in stats.bad_number:
            raise SchemaError(f"Column {attr.name!r} is declared numeric but holds {stats.bad_number[attr.name]!r}.")
        if attr.name in stats.text_kinds:
            check_kinds(attr.name, stats.text_kinds[attr.name])
        if attr.name in stats.infinite:
            count, value, record = stats.infinite[attr.name]
            raise SchemaError(
                f"Column {attr.name!r} is declared numeric but holds {value!r} ({count} non-finite value(s), "
                f"e.g. record {_plain(record)!r}); give finite numbers."
            )
    if parsed:
        data = _parsed(data, {c: _number_type(stats.kinds.get(c, set()), c in stats.floats) for c in parsed})
    # The schema is completed by the single-machine instance itself, from one row per
    # distinct value: orders, flat hierarchies and checks are then exactly its own.
    sample = {}
    length = max([len(v) for v in stats.texts.values()] + [1])
    for attr in schema:
        if not attr.read:
            sample[attr.name] = [0] * length
            continue
        if attr.kind == "numeric":
            values = list(stats.numbers[attr.name].index[:1]) or [0]
        else:
            values = sorted(stats.texts[attr.name].index)
        sample[attr.name] = [values[i % len(values)] for i in range(length)]
    completed = Instance(pd.DataFrame(sample), schema, name).schema
    numbers = {c: s.sort_index() for c, s in stats.numbers.items()}
    domains = {}
    for column, counts in stats.texts.items():
        domain = completed[column].domain
        index = {v: i for i, v in enumerate(domain)}
        domains[column] = np.bincount([index[v] for v in counts.index], weights=counts.to_numpy(),
                                      minlength=len(domain)).astype(np.int64)
    return DaskInstance(data, completed, name, stats.n_rows, numbers, domains, missing)


def _parsed(data, types: dict):
    """`data` with the columns of `types`, read as text, as numbers of those types (what
    one machine makes of the whole file: :func:`_number_type`), each partition read by
    one machine's :func:`~fairanon.instances.instance.parse_numbers`."""
    def parse(part: pd.DataFrame) -> pd.DataFrame:
        return part.assign(**{c: parse_numbers(part[c]).astype(t) for c, t in types.items()})

    return data.map_partitions(parse, meta=data._meta.astype(types))


def as_dask_instance(data, schema: Schema | None = None, *, partitions: int | None = None) -> DaskInstance:
    """A :class:`DaskInstance` from a DaskInstance (as is), an
    :class:`~fairanon.instances.instance.Instance` (split into `partitions`, default
    one per million rows, at least 2), or a Dask DataFrame or Parquet path with `schema`."""
    if isinstance(data, DaskInstance):
        return data
    if isinstance(data, Instance):
        dd = _dd()
        table = pd.concat([data.table, data.extra], axis=1) if len(data.extra.columns) else data.table
        n = partitions or max(2, -(-data.n_rows // 1_000_000))
        table = dask_ids(table, f"instance {data.name!r}")
        return dask_instance(persist(dd.from_pandas(table, npartitions=n)), data.schema, name=data.name)
    if schema is None:
        raise InvalidParameterError(
            "A Dask DataFrame or a Parquet path needs a schema: pass schema=fa.Schema([...])."
        )
    return dask_instance(data, schema)


def dask_ids(table: pd.DataFrame, what: str) -> pd.DataFrame:
    """`table` with record ids the Dask engine can sort as one machine does.

    Dask sorts and joins by record id, and holds object ids as Arrow text: ids held as
    Python objects that are all whole numbers become int64 (else Dask would turn them
    into text, which sorts "10" before "9"); text ids stay text. Ids that cannot be
    sorted are refused: a missing id, or numbers beside text. A Dask DataFrame or a
    Parquet file is checked the same way, in a pass over it (:func:`id_facts` per
    partition, then :func:`check_ids`).

    Raises
    ------
    SchemaError
        The problem and how to mend the ids.
    """
    kind = check_ids(*id_facts(table.index), what)
    return table.set_axis(table.index.astype(np.int64), axis=0) if kind == "integer" else table


def id_facts(index: pd.Index) -> tuple[int, frozenset]:
    """What :func:`check_ids` reads of record ids (a table's, or one partition's, to be
    merged with the others'): the number of missing ids, and the kinds of the others
    when they are held as Python objects or text (pandas' ``infer_dtype``: "integer",
    "string", "mixed-integer", ...; none for ids of a numpy type)."""
    missing = index.isna()
    n_missing = int(missing.sum())
    if not (index.dtype == object or isinstance(index.dtype, pd.StringDtype)):
        return n_missing, frozenset()
    present = index[~missing] if n_missing else index
    return n_missing, frozenset([pd.api.types.infer_dtype(present, skipna=False)]) if len(present) else frozenset()


def merge_id_facts(a: tuple[int, frozenset], b: tuple[int, frozenset]) -> tuple[int, frozenset]:
    """The :func:`id_facts` of two parts of a table, as those of the whole."""
    return a[0] + b[0], a[1] | b[1]


def check_ids(missing: int, kinds: frozenset, what: str) -> str | None:
    """The kind of record ids from their :func:`id_facts`: "integer" for whole numbers
    held as Python objects (to be read as int64), else None; `what` names the table.

    Raises
    ------
    SchemaError
        A missing id, ids of mixed kinds (numbers beside text), or ids of one kind
        that is neither (floats held as Python objects).
    """
    if missing:
        raise SchemaError(
            f"The record ids of {what} include {missing} missing value(s); the Dask engine sorts and joins by "
            "record id: give every record an id (or use engine='local')."
        )
    if len(kinds) == 1 and not kinds <= {"integer", "string"} and not next(iter(kinds)).startswith("mixed"):
        raise SchemaError(
            f"The record ids of {what} are Python objects of one kind ({next(iter(kinds))}), neither whole numbers "
            "nor text; the Dask engine sorts and joins by record id: make them whole numbers or text, e.g. "
            "table.index = table.index.astype(str) (or use engine='local')."
        )
    if len(kinds) > 1 or kinds - {"integer", "string"}:
        kind = next(iter(kinds)) if len(kinds) == 1 else "mixed"
        raise SchemaError(
            f"The record ids of {what} are of mixed kinds ({kind}: e.g. numbers beside text); the Dask engine "
            "sorts and joins by record id: make them all numbers or all text, e.g. "
            "table.index = table.index.astype(str) (or use engine='local')."
        )
    return "integer" if kinds == {"integer"} else None


def typed_ids(ddf, kind: str | None):
    """A Dask DataFrame whose ids :func:`check_ids` found to be whole numbers held as
    Python objects (possible when Dask keeps objects: ``dataframe.convert-string``
    off) with int64 ids, as :func:`dask_ids` gives them; else `ddf` as it is."""
    if kind != "integer" or ddf.index.dtype != object:
        return ddf
    meta = ddf._meta.set_axis(ddf._meta.index.astype(np.int64), axis=0)
    return ddf.map_partitions(lambda part: part.set_axis(part.index.astype(np.int64), axis=0), meta=meta)


def tree(parts: list, merge):
    """One delayed result of the delayed `parts`, merged two by two (``merge(a, b)``),
    so that no task merges them all."""
    import dask

    while len(parts) > 1:
        parts = [dask.delayed(merge)(*parts[i : i + 2]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def compute(obj, progress: bool = False):
    """Compute a Dask object, with Dask's progress bar when asked and a distributed
    client is running."""
    import dask

    if progress:
        try:
            from distributed import get_client, progress as show

            client = get_client()
        except (ImportError, ValueError):
            pass
        else:
            future = client.compute(obj)
            show(future)
            return future.result()
    (out,) = dask.compute(obj)
    return out


def persist(frame):
    """`frame` kept on the workers when a distributed client runs (else as it is): a
    table made on this machine is sent once, a graph computed once."""
    try:
        from distributed import get_client

        get_client()
    except (ImportError, ValueError):
        return frame
    return frame.persist()
