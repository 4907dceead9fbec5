"""Reading and writing the files of a run: CSV tables checked before use, cells made safe
for spreadsheets, and outputs that appear whole or not at all.

- :func:`read_csv_table` turns every way a CSV file (or a ``.gz`` one) can be unreadable
  (0 bytes, binary content, not UTF-8, a malformed row, a column named twice, a damaged
  gzip file) into a
  :class:`~fairanon.exceptions.SchemaError` naming the file and the problem.
- :func:`neutralize_formulas` prefixes a ``'`` to every cell a spreadsheet would run as
  a formula (a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
  return that is not a plain number; OWASP, "CSV Injection"); :func:`restore_formulas`
  undoes it exactly, so a reader accepts both forms.
- :func:`write_csv` quotes every cell a CSV reader could misread (a separator, a quote,
  a line break of either kind, spaces at either end) and reads the file back to check.
- :func:`check_output_dir` and :func:`check_output_file` refuse an output location
  before any work is done (never a link or a device: they are not followed or
  replaced); :func:`commit` writes each output under a temporary name in its target
  folder, flushes them to disk and renames them all at the end, the one that names
  the others last, so an interrupted or failed run leaves no partial file and never a
  new file next to a stale one; temporary files a killed run left are removed by the
  next one.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import re
import signal
import shutil
import stat
import tempfile
import threading
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from .._memory import check_memory
from ..exceptions import InvalidParameterError, SchemaError

__all__ = [
    "FORMULA_TRIGGERS",
    "GZIP_ERRORS",
    "READ_CELLS",
    "as_record_ids",
    "check_first_row",
    "check_output_dir",
    "check_output_file",
    "commit",
    "formula_readings",
    "verified_reading",
    "interrupts_deferred",
    "neutralize_formulas",
    "read_csv_table",
    "reads_restored",
    "restore_formulas",
    "safe_file_name",
    "sha256_of",
    "unneutralized_formulas",
    "write_csv",
]

#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_SNIFF_BYTES = 8192


# ------------------------------------------------------------------ reading
def read_csv_table(path: str, *, what: str = "CSV file", sep: str = ",", columns=None, parsed=None,
                   **options) -> pd.DataFrame:
    """Read a CSV file with a header row, or raise a SchemaError saying why it cannot be.

    `options` go to :func:`pandas.read_csv`. A UTF-8 byte-order mark is skipped. With
    `columns`, only those of them the file holds are kept, and the file is read in
    chunks of about :data:`READ_CELLS` cells, each chunk's other columns dropped as it
    is read: they are never all in memory, and every row is still parsed whole
    (pandas' ``usecols`` would let a row of too many fields pass). With `parsed`, every
    column of the file but those is read as text (``dtype`` str; `options`' ``dtype``
    still names the type of any column).

    >>> read_csv_table("no/such.csv")
    Traceback (most recent call last):
    ...
    fairanon.exceptions.SchemaError: CSV file 'no/such.csv' does not exist.
    """
    if not os.path.exists(path):
        raise SchemaError(f"{what} {path!r} does not exist.")
    if os.path.isdir(path):
        raise SchemaError(f"{what} {path!r} is a directory, not a CSV file.")
    if os.path.getsize(path) == 0:
        raise SchemaError(f"{what} {path!r} is empty (0 bytes): it needs at least a header row.")
    try:
        # A gzip file's text is sniffed (pandas reads it by its name, as Dask does).
        with (gzip.open if path.endswith(".gz") else open)(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except GZIP_ERRORS as exc:
        raise _damaged(what, path, exc) from None
    if b"\x00" in head:
        raise SchemaError(f"{what} {path!r} is not a text CSV file (it holds binary data).")
    try:
        header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False,
                             encoding="utf-8", skipinitialspace=options.get("skipinitialspace", False))
        check_first_row(path, what, sep, skipinitialspace=options.get("skipinitialspace", False))
        if parsed is not None and len(header):
            options["dtype"] = {**{str(n): str for n in header.iloc[0] if str(n) not in set(parsed)},
                                **(options.get("dtype") or {})}
        with warnings.catch_warnings():
            # A column whose blocks parse to different types (numbers, then a word) holds
            # mixed values, which the callers read as they read text (parse_numbers, or
            # each cell as text); pandas' warning would reach the terminal where the Dask
            # engine, which reads such columns as text, prints none.
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            if columns is None:
                table = pd.read_csv(path, sep=sep, encoding="utf-8", **options)
            else:
                table = _read_columns(path, sep, columns, max(1, READ_CELLS // max(1, header.shape[1])), options)
    except SchemaError:  # check_first_row's, a ValueError
        raise
    except pd.errors.EmptyDataError:
        raise SchemaError(f"{what} {path!r} holds no header row.") from None
    except UnicodeDecodeError as exc:
        raise SchemaError(
            f"{what} {path!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8."
        ) from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise SchemaError(f"Cannot read {what} {path!r} as CSV: {str(exc).strip()}") from None
    except GZIP_ERRORS as exc:
        raise _damaged(what, path, exc) from None
    names = [str(n) for n in header.iloc[0]] if len(header) else []
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SchemaError(f"{what} {path!r} names column(s) {twice} more than once; column names must be unique.")
    return table


#: A damaged gzip file's errors, past its first bytes as in them: truncated (EOFError),
#: its compressed data damaged (zlib.error), not gzip or its checksum wrong (BadGzipFile).
GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)


def _damaged(what: str, path: str, exc: BaseException) -> SchemaError:
    return SchemaError(f"Cannot read {what} {path!r} as CSV: a damaged gzip file ({str(exc).strip() or type(exc).__name__})")


def check_first_row(path: str, what: str = "CSV file", sep: str = ",", *, skipinitialspace: bool = False) -> None:
    """Refuse a CSV file whose first data row has more fields than its header has names.

    pandas (and Dask, which parses with it) reads such a file without an error: the
    first fields of every row become row labels and the others shift into the named
    columns. The first row is read alone, as text: its labels are then never a
    RangeIndex, which pandas makes of labels that are consecutive whole numbers (so
    the table's index does not tell). Both engines call it before reading the rows.

    Raises
    ------
    SchemaError
        Naming the file and the number of names in its header.
    """
    first = pd.read_csv(path, sep=sep, nrows=1, dtype=str, keep_default_na=False, encoding="utf-8",
                        skipinitialspace=skipinitialspace)
    if not isinstance(first.index, pd.RangeIndex):
        raise SchemaError(
            f"{what} {path!r} has rows with more fields than its header has names "
            f"({len(first.columns)}); quote cells holding {sep!r} or name every column."
        )


#: Cells of a CSV file read at a time when only some of its columns are kept.
READ_CELLS = 1_000_000


def _read_columns(path: str, sep: str, columns, rows: int, options: dict) -> pd.DataFrame:
    """The `columns` a CSV file holds, read `rows` rows at a time, each chunk's other
    columns dropped; before each next chunk is read, the bytes held (the columns kept
    so far, and the next chunk read whole, taken as large as the last) are checked
    against the memory limit in force (:func:`~fairanon._memory.check_memory`), so a
    file too large is refused while it is read, not once held."""
    parts = []
    held = 0
    with pd.read_csv(path, sep=sep, encoding="utf-8", chunksize=rows, **options) as chunks:
        for chunk in chunks:
            kept = chunk[[c for c in columns if c in chunk.columns]]
            parts.append(kept)
            held += int(kept.memory_usage(deep=True).sum())
            check_memory(held + int(chunk.memory_usage(deep=True).sum()),
                         f"reading the columns {list(kept.columns)} of {path!r} (past row {sum(map(len, parts))})",
                         "pass a smaller file")
    if not parts:  # a header only
        empty = pd.read_csv(path, sep=sep, encoding="utf-8", nrows=0, **options)
        return empty[[c for c in columns if c in empty.columns]]
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


# ------------------------------------------------------------------ formulas
def _needs_prefix(text: str) -> bool:
    # Leading quotes are skipped so that a value which already starts with "'" is
    # prefixed too: the mapping stays one-to-one and restore_formulas can undo it.
    core = text.lstrip("'")
    return core[:1] in FORMULA_TRIGGERS and core != "" and not _NUMBER.fullmatch(core)


def _neutral(text: str) -> str:
    return "'" + text if _needs_prefix(text) else text


def _restored(text: str) -> str:
    return text[1:] if text[:1] == "'" and _needs_prefix(text[1:]) else text


def _map_cells(table: pd.DataFrame, func: Callable[[str], str]) -> pd.DataFrame:
    out = {}
    for name in range(table.shape[1]):  # by position: column names need not be unique
        col = table.iloc[:, name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            cats = [str(c) for c in col.cat.categories]
            mapped = [func(c) for c in cats]
            out[name] = col.cat.rename_categories(mapped) if mapped != cats else col
        elif col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            values = pd.unique(col.dropna().to_numpy())
            changes = {v: func(v) for v in values if isinstance(v, str) and func(v) != v}
            out[name] = col.replace(changes) if changes else col
        else:  # numbers are never formulas
            out[name] = col
    result = pd.DataFrame(out, index=table.index)
    result.columns = table.columns
    return result


def neutralize_formulas(table: pd.DataFrame) -> pd.DataFrame:
    """The table with every cell a spreadsheet would run as a formula prefixed by ``'``.

    Plain numbers (``-5``, ``+1.5e3``) are left as they are.

    >>> neutralize_formulas(pd.DataFrame({"a": ["=1+2", "-5", "@x", "ok"]}))["a"].tolist()
    ["'=1+2", '-5', "'@x", 'ok']
    """
    return _map_cells(table, _neutral)


def restore_formulas(table: pd.DataFrame) -> pd.DataFrame:
    """Undo :func:`neutralize_formulas`; a table that was never neutralized is returned
    unchanged, unless a cell itself starts with ``'`` and a formula character.

    >>> t = pd.DataFrame({"a": ["=1+2", "'=x", "-5", "'hello"]})
    >>> restore_formulas(neutralize_formulas(t)).equals(t)
    True
    """
    return _map_cells(table, _restored)


def as_record_ids(values: pd.Series, dtype) -> pd.Series:
    """A release file's ``record_id`` column as the instance's record ids, of the numpy
    type `dtype`, on either engine.

    Raises
    ------
    ValueError
        A value the cast would change (``1.5`` read as the id 1) or cannot make.
    """
    if values.dtype.kind in "iu" and np.dtype(dtype).kind in "iu" and len(values):
        # A cast between int64 and uint64 wraps (-1 becomes 2**64 - 1) and casts back
        # unchanged: the range is checked on Python ints instead.
        bounds = np.iinfo(dtype)
        outside = values[(values < int(bounds.min)) | (values > int(bounds.max))]
        if len(outside):
            raise ValueError(f"{outside.iloc[0]!r} is not a record id of type {np.dtype(dtype)}")
    if np.dtype(dtype).kind in "iu" and values.dtype.kind not in "iuf" and len(values):
        # Text is read as plain ASCII digits: Python's int() (what the cast calls) also
        # takes '1_0' and full-width digits, which the CSV parser of the Dask engine
        # refuses.
        plain = values.astype(str).str.fullmatch(r"[+-]?[0-9]+")
        if not plain.all():
            raise ValueError(f"{values[~plain].iloc[0]!r} is not a record id of type {np.dtype(dtype)}")
    ids = values.astype(dtype)
    if values.dtype.kind in "iuf":
        changed = ids.astype(values.dtype) != values
        if changed.any():
            raise ValueError(f"{values[changed].iloc[0]!r} is not a record id of type {np.dtype(dtype)}")
    return ids


def unneutralized_formulas(table: pd.DataFrame) -> bool:
    """Whether a cell would have been prefixed but is not: the table (or this part of
    it) was written as it is."""
    found = []

    def check(text: str) -> str:
        if _needs_prefix(text) and text[:1] != "'":
            found.append(text)
        return text

    _map_cells(table, check)
    return bool(found)


def reads_restored(neutralized: bool | None, unneutralized: Callable[[], bool]) -> bool:
    """Whether a table read from a CSV file is read with its formulas restored
    (:func:`restore_formulas`) first: when `neutralized` (a report written with the file
    says so), or when it is unknown (None) and no cell would have been prefixed but is
    not (`unneutralized()`, :func:`unneutralized_formulas` of the whole table, called
    only then). One machine reads a table so (:func:`formula_readings`), the Dask engine
    each of its partitions."""
    return bool(neutralized) or (neutralized is None and not unneutralized())


def formula_readings(table: pd.DataFrame, neutralized: bool | None = None) -> list[pd.DataFrame]:
    """The readings a table read from a CSV file may be meant in, likeliest first.

    With `neutralized` known (a report written with the file says it), the one reading.
    Else a file holding a cell a spreadsheet would run, without the ``'``, was written as
    it is; any other file is read restored (:func:`restore_formulas`) first and, when
    that differs, as it is second: ``'=x`` is ``=x`` neutralized, or a value ``'=x``
    written with neutralization off.

    >>> t = pd.DataFrame({"a": ["'=x", "ok"]})
    >>> [r["a"].tolist() for r in formula_readings(t)]
    [['=x', 'ok'], ["'=x", 'ok']]
    >>> [r["a"].tolist() for r in formula_readings(pd.DataFrame({"a": ["'=x", "=y"]}))]
    [["'=x", '=y']]
    """
    if not reads_restored(neutralized, lambda: unneutralized_formulas(table)):
        return [table]
    restored = restore_formulas(table)
    if neutralized or restored.equals(table):
        return [restored]
    return [restored, table]


def verified_reading(readings: list[Callable[[], object]], verify: Callable[[object], object]) -> tuple[object, list[str]]:
    """The report of a release read in its `readings` (likeliest first, each a callable
    giving the release: :func:`formula_readings`, or the Dask engine's), and notes for
    the user: the first reading's report, unless it fails and the second's passes (a file
    written with --no-neutralize-formulas, whose cells starting with ' are values, not
    neutralized formulas). `verify` gives a reading's report, which has ``passed``."""
    report = verify(readings[0]())
    if not report.passed and len(readings) > 1:
        as_written = verify(readings[1]())
        if as_written.passed:
            return as_written, ["cells starting with ' were read as they are (written with --no-neutralize-formulas)"]
    return report, []


# ------------------------------------------------------------------ writing CSV
#: Rows formatted and checked at a time, so a large table is never held as text whole.
_CSV_CHUNK = 100_000


def _risky(sep: str, n_columns: int) -> re.Pattern:
    """Cells a CSV reader could misread unquoted: the separator, a quote, a line break of
    either kind (Python's csv module quotes ``\\n`` but not ``\\r`` when rows end in
    ``\\n``, and a lone ``\\r`` ends a row for most readers), spaces at either end
    (dropped by readers that skip initial spaces) and, in a one-column table, the empty
    cell (an empty line is skipped as blank)."""
    empty = "|^$" if n_columns == 1 else ""
    return re.compile(f'[{re.escape(sep)}"\r\n]|^\\s|\\s$' + empty)


def _cells(column: pd.Series, risky: re.Pattern) -> tuple[np.ndarray, np.ndarray]:
    """A column's cells as text (``str`` of each value, missing values empty) and as
    written (the risky ones quoted as RFC 4180 says: in double quotes, inner quotes
    doubled). Numbers are never risky; other columns are formatted once per distinct
    value, as a release holds few."""
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iuf":
        values = column.to_numpy()
        text = values.astype(str).astype(object)
        if values.dtype.kind == "f":
            text[np.isnan(values)] = ""
        return text, text
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    texts = [str(v) for v in uniques]
    if any("\x00" in t for t in texts):
        raise SchemaError(
            f"A cell of column {column.name!r} holds a NUL character, which CSV readers do not keep; "
            "write Parquet instead."
        )
    written = ['"' + t.replace('"', '""') + '"' if risky.search(t) else t for t in texts]
    empty = '""' if risky.search("") else ""
    text = np.array(texts + [""], dtype=object)[codes]
    return text, np.array(written + [empty], dtype=object)[codes]


def _csv_frame(table: pd.DataFrame, index_label: str | None) -> pd.DataFrame:
    """The table as the columns of the file: the index first when it has a label."""
    frame = table.reset_index(drop=True)
    frame.columns = range(frame.shape[1])  # by position: names are written separately
    if index_label is not None:
        frame.insert(0, -1, table.index.to_numpy())
    return frame


def _chunk_cells(frame: pd.DataFrame, risky: re.Pattern) -> list[tuple[np.ndarray, np.ndarray]]:
    return [_cells(frame.iloc[:, position], risky) for position in range(frame.shape[1])]


def write_csv(table: pd.DataFrame, path, *, index_label: str | None = None, sep: str = ",") -> None:
    """Write `table` as a CSV file (UTF-8, rows ending in ``\\n``) that every CSV reader
    reads back cell for cell, and check that it does.

    Cells are written as ``str`` of their values (missing values empty); a cell holding
    the separator, a quote, ``\\r`` or ``\\n``, or a space at either end is quoted.
    With `index_label` the index is written first under that name. The file is then
    read back and compared with what was meant; a difference raises a SchemaError
    (write through :func:`commit`, so such a file never reaches its name).

    >>> import tempfile
    >>> t = pd.DataFrame({"a": ["\\r=1+1", " x", 'a "b" c'], "b": [1, None, 2.5]})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_csv(t, os.path.join(d, "t.csv"))
    ...     open(os.path.join(d, "t.csv"), newline="").read()
    'a,b\\n"\\r=1+1",1.0\\n" x",\\n"a ""b"" c",2.5\\n'
    """
    names = ([index_label] if index_label is not None else []) + [str(c) for c in table.columns]
    if not names:
        raise SchemaError("A table without columns cannot be written as CSV.")
    risky = _risky(sep, len(names))
    frame = _csv_frame(table, index_label)
    header = [written for _, written in _chunk_cells(pd.DataFrame([names], dtype=object), risky)]
    try:
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(sep.join(cell[0] for cell in header) + "\n")
            for start in range(0, len(frame), _CSV_CHUNK):
                written = [w.tolist() for _, w in _chunk_cells(frame.iloc[start:start + _CSV_CHUNK], risky)]
                fh.write("\n".join(map(sep.join, zip(*written))) + "\n")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start:exc.end]
        raise SchemaError(f"A cell cannot be written as UTF-8 ({exc.reason}): {bad!r}.") from None
    _check_read_back(path, names, frame, sep, risky)


def _check_read_back(path, names: list[str], frame: pd.DataFrame, sep: str, risky: re.Pattern) -> None:
    """Read the CSV file just written as ``fairanon verify`` does and compare it, cell for
    cell, with what was meant; a SchemaError says where they differ."""
    def differs(where: str) -> SchemaError:
        return SchemaError(f"The CSV file written to {path!r} does not read back as the table ({where}).")

    try:
        chunks = pd.read_csv(path, sep=sep, header=None, dtype=object, keep_default_na=False, encoding="utf-8",
                             skip_blank_lines=False, chunksize=_CSV_CHUNK)
        row = -1  # the header comes first
        for chunk in chunks:
            cells = chunk.to_numpy(dtype=object)
            if row < 0:
                if list(cells[0]) != names:
                    raise differs(f"header {list(cells[0])}")
                cells, row = cells[1:], 0
            meant = [text for text, _ in _chunk_cells(frame.iloc[row:row + len(cells)], risky)]
            if cells.shape != (len(cells), len(meant)):
                raise differs(f"{cells.shape[1]} fields near row {row}")
            for position, text in enumerate(meant):
                wrong = cells[:, position] != text
                if wrong.any():
                    raise differs(f"row {row + int(wrong.argmax())}, column {names[position]!r}")
            row += len(cells)
    except SchemaError:
        raise
    except (pd.errors.ParserError, ValueError) as exc:  # ParserError, EmptyDataError
        raise differs(str(exc).strip()) from None
    if row != len(frame):
        raise differs(f"{max(row, 0)} rows instead of {len(frame)}")


# ------------------------------------------------------------------ writing
def safe_file_name(text: str, default: str = "unnamed") -> str:
    """A name for a file or folder made from a label, that stays in its folder: letters,
    digits, ``.``, ``_`` and ``-`` only, never ``.``, ``..`` or a hidden name.

    >>> safe_file_name("synthetic n=1000, zipf"), safe_file_name(".."), safe_file_name("../../etc")
    ('synthetic_n_1000_zipf', 'unnamed', 'etc')
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).lstrip("._").rstrip("_")
    return name or default


def _read_only(path: str) -> bool:
    # The write bits are the owner's signal even for a superuser, whom access() ignores.
    mode = os.stat(path).st_mode
    return not (mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) or not os.access(path, os.W_OK)


def _check_parent(directory: str, option: str) -> None:
    parent = os.path.abspath(directory)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InvalidParameterError(f"{option} {directory!r} cannot be created: {parent!r} is a file.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidParameterError(f"{option} {directory!r}: the folder {parent!r} is not writable.")
    _probe_writable(directory, parent, option)


def _probe_writable(directory: str, parent: str, option: str) -> None:
    """Write in `parent` (the nearest existing folder of `directory`) once, before any
    work: permissions alone do not tell (a superuser passes every access test, yet
    cannot write in /proc, /sys or a read-only mount). A nameless file when `directory`
    exists, else a folder made and removed at once."""
    try:
        if os.path.abspath(directory) == parent:
            with tempfile.TemporaryFile(dir=parent, prefix=".fairanon-probe-"):
                pass
        else:
            os.rmdir(tempfile.mkdtemp(dir=parent, prefix=".fairanon-probe-"))
    except OSError as exc:
        raise InvalidParameterError(
            f"{option} {directory!r}: the folder {parent!r} is not writable "
            f"({exc.strerror or exc}); choose a folder you can write to."
        ) from None


def _check_named(path: str, option: str) -> None:
    if not str(path):
        raise InvalidParameterError(f"{option} '' names nothing; give a path ('.' for the current folder).")


#: The real paths of the files read as inputs by the command running (a set per
#: :func:`inputs_protected` block, innermost last; none outside one): no output replaces
#: them (a report written over the job file, the data or the release it checks).
_INPUTS: list[set[str]] = []


@contextlib.contextmanager
def inputs_protected():
    """Within the block, the files :func:`note_input` names are refused as outputs by the
    output checks and by :func:`commit`."""
    _INPUTS.append(set())
    try:
        yield
    finally:
        _INPUTS.pop()


def note_input(path) -> None:
    """Name `path` (a file, or a folder and the files in it) an input of the command
    running."""
    if _INPUTS:
        path = os.fspath(path)
        _INPUTS[-1].add(os.path.realpath(path))
        if os.path.isdir(path):
            _INPUTS[-1].update(os.path.realpath(os.path.join(path, name))
                               for name in os.listdir(path))


def _check_not_input(path: str, option: str) -> None:
    if _INPUTS and os.path.realpath(path) in _INPUTS[-1]:
        raise InvalidParameterError(
            f"{option}: {path!r} is an input of this command; an output never replaces an "
            "input: give another name."
        )


def _check_plain(path: str, option: str) -> None:
    """Refuse a link or a special file (a device, a pipe, a socket) where an output goes:
    writing through a link would put the file elsewhere, and renaming onto either would
    replace it with a plain file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise InvalidParameterError(
            f"{option}: {path!r} is a symbolic link; outputs never follow or replace links: "
            f"give the path it points to ({os.path.realpath(path)!r}) or another name."
        )
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        kind = ("device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "pipe" if stat.S_ISFIFO(mode) else "socket")
        raise InvalidParameterError(
            f"{option}: {path!r} is a {kind}, not a plain file; outputs never replace one: give another name."
        )


def check_output_dir(directory: str, names: Iterable[str], *, option: str = "--out") -> None:
    """Refuse, before any work, an output folder the outputs `names` cannot go to: an
    empty path, a link, an existing file, a folder that cannot be created or written, or
    an existing output that is a link, a device, read-only or a folder (a ``.parquet``
    output may be one: a Parquet dataset, which the run replaces)."""
    _check_named(directory, option)
    _check_plain(directory, option)
    _check_not_input(directory, option)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise InvalidParameterError(
            f"{option} {directory!r} is an existing file; give a folder for the outputs."
        )
    _check_parent(directory, option)
    for name in names:
        path = os.path.join(directory, name)
        _check_plain(path, option)
        _check_not_input(path, option)
        if os.path.isdir(path) and not name.endswith(".parquet"):
            raise InvalidParameterError(f"{option}: {path!r} is a folder; it would be overwritten by an output file.")
        if os.path.exists(path) and _read_only(path):
            raise InvalidParameterError(
                f"{option}: {path!r} is read-only; make it writable or choose another folder."
            )


def check_output_file(path: str, *, option: str = "--out") -> None:
    """Refuse, before any work, an output file path that is empty or names a link, a
    device, a folder, a read-only file or a place that cannot be written."""
    _check_named(path, option)
    _check_plain(path, option)
    _check_not_input(path, option)
    if os.path.isdir(path):
        raise InvalidParameterError(f"{option} {path!r} is a folder; give a file name.")
    if os.path.exists(path) and _read_only(path):
        raise InvalidParameterError(f"{option} {path!r} is read-only; make it writable or choose another file.")
    _check_parent(os.path.dirname(os.path.abspath(path)), option)


@contextlib.contextmanager
def interrupts_deferred():
    """Hold Ctrl-C back for the block (work that must finish once begun: renaming the
    outputs together, stopping a run's processes); it is delivered when the block ends."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def commit(
    outputs: Mapping[str, Callable[[str], None]],
    *,
    remove: Iterable[str] = (),
    manifest: tuple[str, dict] | None = None,
    staged: Mapping[str, str] | None = None,
    unlisted: Iterable[str] = (),
) -> None:
    """Write every output at once: ``outputs[path](tmp)`` writes the file for `path` to
    a temporary name in `path`'s folder; only when every one is written and flushed to
    disk are they renamed to their paths, in the order given, and the files in `remove`
    (stale outputs of an earlier run) deleted. On any failure or interruption the
    temporary files are removed and nothing changes.

    `staged` maps more output paths to what is already written for them under a
    temporary name in the same folder (a file, or a folder such as a Parquet dataset);
    they are flushed and renamed first, a folder replacing the one at its path.

    `manifest` is ``(path, document)``: a JSON file holding `document` and, under
    ``"files"``, the name, size and SHA-256 of every other output, renamed last. It is
    the commit point of the set: until its rename a reader finds the earlier manifest,
    whose checksums do not match a newer file, so it never takes a mixed set for a pair.
    Outputs in `unlisted` (written with the set, elsewhere) are not named in it.

    Temporary files that runs killed before their end left in these folders are
    removed first (their names carry the process id of their writer; those of live
    processes are kept).
    """
    staged = dict(staged or {})
    remove = list(remove)
    unlisted = set(unlisted)
    paths = [*staged, *outputs] + ([manifest[0]] if manifest else [])
    for folder, names in _names_by_folder([*paths, *remove]).items():
        _remove_stale_temporaries(folder, names)
    temps: dict[str, str] = {}
    try:
        for path, tmp in staged.items():
            _fsync(tmp)
            temps[path] = tmp
        for path, write in outputs.items():
            temps[path] = _write_temporary(path, write)
        if manifest is not None:
            document = dict(manifest[1])
            document["files"] = {os.path.basename(path): _file_entry(tmp)
                                 for path, tmp in temps.items() if path not in unlisted}
            temps[manifest[0]] = _write_temporary(manifest[0], _json_writer(document))
        for path in temps:  # again: the folder may have changed since the checks up front
            _check_plain(path, "output")
            _check_not_input(path, "output")
        for path in remove:  # a stale output to delete is never an input either
            _check_not_input(path, "output")
        with interrupts_deferred():
            for path, tmp in temps.items():
                # A folder is not renamed onto: replaced by a folder, or as a stale output.
                if os.path.isdir(path) and (os.path.isdir(tmp) or path in remove):
                    remove_output(path)
                os.replace(tmp, path)
            temps.clear()
            for path in remove:
                if path not in paths:
                    remove_output(path)
            for folder in {os.path.dirname(os.path.abspath(p)) for p in paths}:
                _fsync(folder)
    finally:
        for tmp in temps.values():
            with contextlib.suppress(OSError):
                remove_output(tmp)


def _write_temporary(path: str, write: Callable[[str], None]) -> str:
    """Write the file for `path` under a temporary name in its folder, flushed to disk;
    the name, ``.NAME.PID.RANDOM.part``, says which process wrote it."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.{os.getpid()}.", suffix=".part")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        _fsync(tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            remove_output(tmp)
        raise
    return tmp


def _json_writer(document: dict) -> Callable[[str], None]:
    def write(path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(document, fh, indent=2)

    return write


def sha256_of(path: str) -> str:
    """The SHA-256 of a file, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_entry(path: str) -> dict:
    if os.path.isdir(path):  # a Parquet dataset: its files, by name
        files = sorted(os.listdir(path))
        return {"files": {name: _file_entry(os.path.join(path, name)) for name in files}}
    return {"bytes": os.path.getsize(path), "sha256": sha256_of(path)}


def _fsync(path: str) -> None:
    """Flush a file, the files of a folder, or a folder's own entries, to disk."""
    if os.path.isdir(path):
        for name in os.listdir(path):
            if os.path.isfile(os.path.join(path, name)):
                _fsync(os.path.join(path, name))
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a folder cannot be opened on some systems (Windows)
        return
    try:
        with contextlib.suppress(OSError):  # some file systems cannot sync a folder
            os.fsync(fd)
    finally:
        os.close(fd)


def _names_by_folder(paths: Iterable[str]) -> dict[str, set[str]]:
    folders: dict[str, set[str]] = {}
    for path in paths:
        folders.setdefault(os.path.dirname(os.path.abspath(path)), set()).add(os.path.basename(path))
    return folders


def _remove_stale_temporaries(folder: str, names: set[str]) -> None:
    """Remove ``.NAME.PID[.RANDOM].part`` files and folders in `folder`, for the output
    `names`, whose writer no longer runs (older names without a process id too)."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        name = next((n for n in names if entry.startswith(f".{n}.") and entry.endswith(".part")), None)
        if name is None:
            continue
        writer = entry[len(name) + 2:-len(".part")].split(".")[0]
        if writer.isdigit() and _running(int(writer)):
            continue
        with contextlib.suppress(OSError):
            remove_output(os.path.join(folder, entry))


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    except (OverflowError, ValueError):  # no valid process id
        return False
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------ release files
#: Formats a release table is written in.
RELEASE_FORMATS = ("csv", "parquet")
#: Every name a release table can be written under: the plain name only when every
#: guarantee is verified, else a name that says why not (one of them exists after a run).
RELEASE_FILES = tuple(f"release{suffix}.{fmt}" for fmt in RELEASE_FORMATS
                      for suffix in ("", ".FAILED", ".INFEASIBLE", ".UNKNOWN"))


def release_file_name(passed: bool, status: str, fmt: str = "csv") -> str:
    """The file name of a release table: ``release.csv`` when it passed verification
    with status OPTIMAL or FEASIBLE, else ``release.INFEASIBLE.csv``,
    ``release.UNKNOWN.csv`` or ``release.FAILED.csv`` (same for Parquet).

    >>> release_file_name(False, "INFEASIBLE", "parquet")
    'release.INFEASIBLE.parquet'
    """
    verdict = "" if passed else f".{status}" if status in ("INFEASIBLE", "UNKNOWN") else ".FAILED"
    return f"release{verdict}.{fmt}"


def remove_output(path: str) -> None:
    """Delete a file or a directory of files (a Parquet dataset) if it exists."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)
