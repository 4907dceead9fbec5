"""Reading and writing the files of a run: CSV tables checked before use, cells made safe
for spreadsheets, and outputs that appear whole or not at all.

- :func:`read_csv_table` turns every way a CSV file can be unreadable (0 bytes, binary
  content, not UTF-8, a malformed row, a column named twice) into a
  :class:`~fairanon.exceptions.SchemaError` naming the file and the problem.
- :func:`neutralize_formulas` prefixes a ``'`` to every cell a spreadsheet would run as
  a formula (a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
  return that is not a plain number; OWASP, "CSV Injection"); :func:`restore_formulas`
  undoes it exactly, so a reader accepts both forms.
- :func:`check_output_dir` and :func:`check_output_file` refuse an output location
  before any work is done; :func:`commit` writes each output under a temporary name in
  its target folder and renames them all at the end, so an interrupted or failed run
  leaves no partial file and never a new file next to a stale one.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping

import pandas as pd

from ..exceptions import InvalidParameterError, SchemaError

__all__ = [
    "FORMULA_TRIGGERS",
    "check_output_dir",
    "check_output_file",
    "commit",
    "interrupts_deferred",
    "neutralize_formulas",
    "read_csv_table",
    "restore_formulas",
    "safe_file_name",
]

#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_SNIFF_BYTES = 8192


# ------------------------------------------------------------------ reading
def read_csv_table(path: str, *, what: str = "CSV file", sep: str = ",", **options) -> pd.DataFrame:
    """Read a CSV file with a header row, or raise a SchemaError saying why it cannot be.

    `options` go to :func:`pandas.read_csv`. A UTF-8 byte-order mark is skipped.

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
    with open(path, "rb") as fh:
        head = fh.read(_SNIFF_BYTES)
    if b"\x00" in head:
        raise SchemaError(f"{what} {path!r} is not a text CSV file (it holds binary data).")
    try:
        header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False,
                             encoding="utf-8", skipinitialspace=options.get("skipinitialspace", False))
        table = pd.read_csv(path, sep=sep, encoding="utf-8", **options)
    except pd.errors.EmptyDataError:
        raise SchemaError(f"{what} {path!r} holds no header row.") from None
    except UnicodeDecodeError as exc:
        raise SchemaError(
            f"{what} {path!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8."
        ) from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise SchemaError(f"Cannot read {what} {path!r} as CSV: {str(exc).strip()}") from None
    if "index_col" not in options and not isinstance(table.index, pd.RangeIndex):
        # pandas reads a first data row longer than the header as row labels plus data
        raise SchemaError(
            f"{what} {path!r} has rows with more fields than its header has names "
            f"({len(table.columns)}); quote cells holding {sep!r} or name every column."
        )
    names = [str(n) for n in header.iloc[0]] if len(header) else []
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SchemaError(f"{what} {path!r} names column(s) {twice} more than once; column names must be unique.")
    return table


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


def check_output_dir(directory: str, names: Iterable[str], *, option: str = "--out") -> None:
    """Refuse, before any work, an output folder the outputs `names` cannot go to: an
    existing file, a folder that cannot be created or written, or an existing output
    that is read-only or a folder."""
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise InvalidParameterError(
            f"{option} {directory!r} is an existing file; give a folder for the outputs."
        )
    _check_parent(directory, option)
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            raise InvalidParameterError(f"{option}: {path!r} is a folder; it would be overwritten by an output file.")
        if os.path.exists(path) and _read_only(path):
            raise InvalidParameterError(
                f"{option}: {path!r} is read-only; make it writable or choose another folder."
            )


def check_output_file(path: str, *, option: str = "--out") -> None:
    """Refuse, before any work, an output file path that names a folder, a read-only
    file or a place that cannot be written."""
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


def commit(outputs: Mapping[str, Callable[[str], None]], *, remove: Iterable[str] = ()) -> None:
    """Write every output at once: ``outputs[path](tmp)`` writes the file for `path` to
    a temporary name in `path`'s folder; only when every one is written are they renamed
    to their paths, and the files in `remove` (stale outputs of an earlier run) deleted.
    On any failure or interruption the temporary files are removed and nothing changes."""
    temps: dict[str, str] = {}
    try:
        for path, write in outputs.items():
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".part")
            os.close(fd)
            temps[path] = tmp
            write(tmp)
            os.chmod(tmp, 0o666 & ~_umask())
        with interrupts_deferred():
            for path, tmp in temps.items():
                os.replace(tmp, path)
            temps.clear()
            for path in remove:
                if path not in outputs:
                    remove_output(path)
    finally:
        for tmp in temps.values():
            with contextlib.suppress(OSError):
                os.remove(tmp)


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
