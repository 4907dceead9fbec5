"""Running a suite: every run in a fresh process with a time and a memory limit.

One bad algorithm cannot take the benchmark down: each run is a new process, forked
from a server process that has imported fairanon and every method once
(:mod:`~fairanon.bench.forkserver`), in a session of its own and with its own
address-space limit; a run still going ``grace`` seconds after its time limit is killed
(with any process it started), and a crash or a MemoryError is a result like any other.
Every finished run appends one row to ``results.csv`` at once, so a benchmark stopped
halfway keeps what finished, and ``resume=True`` skips the runs already in the file (a
last row torn by the interruption is cut off, and its run done again).

Output directory::

    results.csv       one row per run, appended as runs finish
    results.parquet   the same table, written at the end
    suite.json        the suite as it was run
    vectors/KEY.parquet   per-tuple property vectors of each release
    logs/KEY.log      standard output and error of each run (logs/server.log: the server's)
    logs/KEY.ATTEMPT.messages   what a run reports while it runs (removed when it ends;
                      a resumed benchmark removes those an interruption left)

Files are written whole through temporary ``<file>.<pid>.tmp`` files in the same folder; those of
runs killed when the benchmark is interrupted are removed once the runs are stopped,
and any left by a benchmark killed outright are removed when the next one starts in the
folder.

Row columns: the run's description (``run_id``, ``release``, ``instance``,
``requirements``, ``algorithm``, ``method``, ``params``, ``seed``, ``repetition``,
``p.<parameter>`` and ``i.<instance parameter>``), ``outcome`` (ok, timeout, memout,
error, crash), ``status`` and ``reason`` of the release, ``time_s`` (the method's wall
time), ``cpu_s``, ``setup_s``, ``verify_s``, ``peak_rss_mb`` (the process's
``ru_maxrss``), ``verified``, ``verify.<check>`` and ``achieved.<check>`` per
requirement and integrity check, every metric of :func:`fairanon.models.metrics.summary`
(and ``MRE`` when asked), ``objective``, ``bound``, ``gap`` and ``solver_status`` when
the method reports them, ``bound.ncp``, ``gap.ncp``, ``bound.lm`` and ``gap.lm`` (lower
bounds on the NCP and LM losses: the release's own, or computed when the suite's
``metrics.bound`` is on), ``utility.<figure>`` (or ``utility.error`` when the utility
cannot be measured, e.g. a classifier without a decision attribute), and ``error`` for
failed runs.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from ..exceptions import FairanonError, InvalidParameterError
from ..instances.files import interrupts_deferred, safe_file_name
from .forkserver import kill_run
from .spec import RunSpec, Suite

__all__ = [
    "OUTCOMES",
    "BenchResult",
    "ResultsFile",
    "failures",
    "read_results",
    "run_suite",
    "terminal_progress",
]

#: How a run can end.
OUTCOMES = ("ok", "timeout", "memout", "error", "crash")
RESULTS_CSV = "results.csv"
RESULTS_PARQUET = "results.parquet"


class ResultsFile:
    """``results.csv``, one row appended (and flushed to disk) per finished run.

    A row bringing new columns (another requirement's verdict, a solver's gap) rewrites
    the file once with the wider header, through a temporary file and an atomic rename.
    """

    def __init__(self, path: str):
        self.path = path
        self.header: list[str] = []
        self.run_ids: set[str] = set()
        if os.path.exists(path) and os.path.getsize(path):
            rows = self._whole_rows()
            if rows:
                self.header = rows[0]
                index = self.header.index("run_id") if "run_id" in self.header else None
                self.run_ids = {row[index] for row in rows[1:] if index is not None and row[index]}

    def _whole_rows(self) -> list[list[str]]:
        """The rows of the file; a last row torn by an interrupted write (no line end, an
        open quote or too few fields) is cut off the file, so its run counts as not done."""
        with open(self.path, "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
        rows: list[list[str]] = []
        try:
            rows.extend(csv.reader(io.StringIO(text, newline=""), strict=True))
            torn = False
        except csv.Error as exc:
            if "unexpected end of data" not in str(exc):
                raise InvalidParameterError(f"{self.path!r} is not a results file: {exc}.") from None
            torn = True  # a quoted cell left open at the end; the reader dropped that row
        if not torn and (not text.endswith("\n") or (len(rows) > 1 and len(rows[-1]) != len(rows[0]))):
            rows.pop()
            torn = True
        if torn:
            _write_atomic(self.path, lambda tmp: self._write(tmp, lambda fh: csv.writer(fh).writerows(rows)))
        return rows

    @staticmethod
    def _write(path: str, write: Callable) -> None:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())

    @staticmethod
    def _cell(value):
        if value is None:
            return ""
        if isinstance(value, float):
            return repr(value)
        return value

    def append(self, row: dict) -> None:
        row = {k: self._cell(v) for k, v in row.items()}
        new = [k for k in row if k not in self.header]
        if new and self.header:
            with open(self.path, newline="", encoding="utf-8") as fh:
                old = list(csv.DictReader(fh))
            self.header += new

            def rewrite(fh):
                writer = csv.DictWriter(fh, self.header, restval="")
                writer.writeheader()
                writer.writerows(old)
                writer.writerow(row)

            _write_atomic(self.path, lambda tmp: self._write(tmp, rewrite))
        else:
            first = not self.header
            if first:
                self.header = list(row)
            with open(self.path, "a", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, self.header, restval="")
                if first:
                    writer.writeheader()
                writer.writerow(row)
                fh.flush()
                os.fsync(fh.fileno())
        self.run_ids.add(str(row.get("run_id")))


def failures(results: pd.DataFrame) -> pd.DataFrame:
    """The runs that count as failures: an error or a crash of the method, or a release
    that fails verification (a guarantee that does not hold, or an infeasible release).
    Timeouts and memory-outs are limits doing their job and are not failures."""
    if results.empty:
        return results
    outcome = results["outcome"].astype(str)
    verified = (
        results["verified"].astype(str)
        if "verified" in results.columns
        else pd.Series("", index=results.index)
    )
    return results[outcome.isin(["error", "crash"]) | ((outcome == "ok") & ~verified.eq("True"))]


@contextlib.contextmanager
def terminal_progress(enabled: bool = True):
    """A rich progress bar over the runs of a suite; yields the `progress` callback of
    :func:`run_suite` (a no-op when not `enabled`, e.g. when output is piped)."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task("benchmark", total=None)

        def update(row, finished: int, total: int) -> None:
            text = "starting" if row is None else f"{row['outcome']:<7} {row['label']}"
            bar.update(task, total=total, completed=finished, description=text[:70])

        yield update


def read_results(out: str) -> pd.DataFrame:
    """The results table of an output directory (from ``results.csv``)."""
    path = os.path.join(out, RESULTS_CSV)
    if not os.path.exists(path):
        raise InvalidParameterError(f"No results in {out!r}: {path!r} does not exist.")
    return pd.read_csv(path, low_memory=False)


@dataclass
class BenchResult:
    """What :func:`run_suite` did.

    Attributes
    ----------
    out : str
        The output directory.
    results : pandas.DataFrame
        Every row of ``results.csv`` (earlier runs included when resuming).
    ran : int
        Runs executed now.
    skipped : int
        Runs found finished in the results file.
    outcomes : dict
        Outcome -> count among the runs executed now.
    elapsed_s : float
    """

    out: str
    results: pd.DataFrame
    ran: int
    skipped: int
    outcomes: dict = field(default_factory=dict)
    elapsed_s: float = 0.0


class _Server:
    """The :mod:`~fairanon.bench.forkserver` process and the events it has sent."""

    def __init__(self, out: str, startup_limit: float):
        env = dict(os.environ)
        # The runs see the modules this process sees (methods given as "module:function").
        env["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in sys.path)
        self.log = open(os.path.join(out, "logs", "server.log"), "ab")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fairanon.bench.forkserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            start_new_session=True,
            env=env,
        )
        self.fd = self.proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buffer = b""
        self.eof = False
        deadline = time.monotonic() + startup_limit
        while True:
            events = self.events(timeout=max(0.0, min(0.5, deadline - time.monotonic())))
            if any(e["kind"] == "server-ready" for e in events):
                return
            if self.eof or time.monotonic() > deadline:
                self.close()
                raise FairanonError(
                    "The benchmark's process server did not start; see "
                    f"{os.path.join(out, 'logs', 'server.log')}."
                )

    def submit(self, task: dict) -> None:
        self.proc.stdin.write((json.dumps(task, default=str) + "\n").encode())
        self.proc.stdin.flush()

    def events(self, timeout: float) -> list[dict]:
        if not self.eof:
            select.select([self.fd], [], [], timeout)
        while not self.eof:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                self.eof = True
                break
            self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.log.close()


class _Run:
    """One run's process, as seen from the runner: its messages, deadline and end."""

    def __init__(self, run: RunSpec, out: str):
        self.run = run
        self.started = time.monotonic()
        self.deadline = self.started + run.setup_limit
        self.phase = "setup"
        self.messages: list[dict] = []
        self.pid: int | None = None
        self.killed = False
        self.exit: dict | None = None
        self.log = os.path.join("logs", f"{run.key}.log")
        # A file of its own per attempt: a resumed benchmark never reads the messages of
        # an interrupted attempt, nor shares a file with a process left from it.
        logs = glob.escape(os.path.join(out, "logs"))
        for stale in glob.glob(os.path.join(logs, f"{run.key}*.messages")):
            with contextlib.suppress(OSError):
                os.remove(stale)
        self.messages_path = os.path.join(out, "logs", f"{run.key}.{uuid.uuid4().hex[:12]}.messages")
        self.offset = 0
        self.buffer = b""
        self.task = run.to_task()
        self.task.update(
            vectors_path=os.path.join(out, "vectors", f"{run.key}.parquet"),
            out_dir=out,
            log_path=os.path.join(out, self.log),
            messages_path=self.messages_path,
        )

    def read(self) -> None:
        """Read the messages the run has written since the last call."""
        try:
            with open(self.messages_path, "rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
        except FileNotFoundError:
            return
        self.offset += len(chunk)
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            if line.strip():
                self._message(json.loads(line))

    def _message(self, msg: dict) -> None:
        self.messages.append(msg)
        now = time.monotonic()
        if msg["kind"] == "ready":
            self.phase = "method"
            limit = self.run.time_limit
            self.deadline = now + limit + self.run.grace if limit is not None else float("inf")
        elif msg["kind"] == "solved":
            self.phase = "verification"
            self.deadline = now + self.run.setup_limit

    def kill(self) -> None:
        if self.pid is not None and not self.killed:
            self.killed = True
            kill_run(self.pid)

    def row(self) -> dict:
        row = self.run.row()
        final = next(
            (m for m in reversed(self.messages) if m["kind"] in ("done", "error", "memout")), None
        )
        ready = next((m for m in self.messages if m["kind"] == "ready"), None)
        if ready is not None:
            row.update(ready["info"])
        status = self.exit["status"] if self.exit else None
        if final is not None and final["kind"] == "done":
            row["outcome"] = "ok"
            row.update(final["row"])
        elif final is not None:
            row["outcome"] = "memout" if final["kind"] == "memout" else "error"
            row["error_type"] = final.get("error_type", "MemoryError")
            row["error"] = final.get("error")
        elif self.killed:
            row["outcome"] = "timeout"
            row["error"] = (
                f"killed in the {self.phase} phase after {time.monotonic() - self.started:.1f} s"
            )
        else:
            row["outcome"] = "crash"
            code = os.waitstatus_to_exitcode(status) if status is not None else None
            if code is None:
                row["error"] = "the benchmark's process server stopped during the run"
            elif code < 0:
                row["error"] = f"killed by signal {signal.Signals(-code).name}"
            else:
                row["error"] = f"exit code {code}"
            if self.run.memory_limit and code is not None:
                row["error"] += " (the memory limit may be too low)"
        if row["outcome"] != "ok":
            solved = next((m for m in self.messages if m["kind"] == "solved"), None)
            if solved is not None:
                row["time_s"] = solved["time_s"]
        row["timeout_phase"] = self.phase if row["outcome"] == "timeout" else None
        scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KB on Linux
        row["peak_rss_mb"] = self.exit["maxrss"] * scale / 2**20 if self.exit else None
        row["wall_s"] = time.monotonic() - self.started
        row["log"] = self.log
        return row


def _dump_json(document, path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(document, fh, indent=2, default=str)


def _write_atomic(path: str, write: Callable[[str], None]) -> None:
    """Write through a temporary file in the same folder, so `path` is whole or absent."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)


#: The temporary name :func:`_write_atomic` and :func:`~fairanon.bench.vectors.write_frame`
#: give a file: ``<file>.<pid>.tmp``.
_TEMPORARY = re.compile(r"(?P<file>.+)\.[0-9]+\.tmp")


def _remove_temporaries(out: str) -> None:
    """Remove the temporary files the benchmark and its runs write — ``<file>.<pid>.tmp``
    of its own files in `out` and of the vectors (``*.parquet``) in ``vectors/`` —:
    called when no run of it is left to write them. Other ``*.tmp`` files are the
    user's (`out` may be any folder) and are kept."""
    own = {"": {RESULTS_CSV, RESULTS_PARQUET, "suite.json"}, "vectors": None}
    for folder, names in own.items():
        for path in glob.glob(os.path.join(glob.escape(os.path.join(out, folder)), "*.tmp")):
            match = _TEMPORARY.fullmatch(os.path.basename(path))
            if match is None or not (match["file"] in names if names is not None
                                     else match["file"].endswith(".parquet")):
                continue
            with contextlib.suppress(OSError):
                os.remove(path)


def _prepare_out(out: str, *, resume: bool, overwrite: bool) -> None:
    results = os.path.join(out, RESULTS_CSV)
    if os.path.exists(results) and not (resume or overwrite):
        raise InvalidParameterError(
            f"{results!r} already exists; pass resume=True (--resume) to continue it or "
            "overwrite=True (--overwrite) to start again."
        )
    if overwrite:
        for name in (RESULTS_CSV, RESULTS_PARQUET, "report.html", "suite.json"):
            path = os.path.join(out, name)
            if os.path.exists(path):
                os.remove(path)
        for name in ("vectors", "logs", "comparison"):
            shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    for name in ("", "vectors", "logs"):
        os.makedirs(os.path.join(out, name), exist_ok=True)
    _remove_temporaries(out)


def run_suite(
    suite: Suite,
    out: str | None = None,
    *,
    resume: bool = False,
    overwrite: bool = False,
    jobs: int | None = None,
    progress: Callable[[dict, int, int], None] | None = None,
) -> BenchResult:
    """Run every run of `suite` that is not finished yet.

    Parameters
    ----------
    suite : Suite
    out : str, optional
        Output directory; default the suite's ``out``, else
        ``benchmarks/results/<suite name>``.
    resume : bool, default=False
        Keep ``results.csv`` and skip the runs it already holds (whatever their outcome).
    overwrite : bool, default=False
        Delete earlier results first. Without `resume` or `overwrite` existing results
        are an error.
    jobs : int, optional
        Runs at a time (default the suite's ``jobs``, 1). Timings are cleanest with 1.
    progress : callable (row, finished, total), optional
        Called once with ``row=None`` before the first run, then after each run with its
        results row (:func:`terminal_progress` gives a progress bar).

    Returns
    -------
    BenchResult

    Raises
    ------
    InvalidParameterError
        Existing results without `resume`/`overwrite`, or a bad `jobs`.
    """
    if not isinstance(suite, Suite):
        raise InvalidParameterError(
            f"The 'suite' parameter of run_suite must be a Suite. Got {type(suite).__name__} instead."
        )
    jobs = suite.jobs if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidParameterError(
            f"The 'jobs' parameter of run_suite must be an int ≥ 1. Got {jobs!r} instead."
        )
    default = os.path.join("benchmarks", "results", safe_file_name(suite.name, "suite"))
    out = os.path.abspath(out or suite.out or default)
    started = time.monotonic()
    _prepare_out(out, resume=resume, overwrite=overwrite)
    _write_atomic(os.path.join(out, "suite.json"), lambda path: _dump_json(suite.to_dict(), path))
    results = ResultsFile(os.path.join(out, RESULTS_CSV))
    runs = suite.runs()
    todo = deque(r for r in runs if r.key not in results.run_ids)
    skipped = len(runs) - len(todo)
    total = len(todo)
    outcomes: Counter = Counter()
    active: dict[str, _Run] = {}
    finished = 0
    if progress is not None:
        progress(None, 0, total)
    server = _Server(out, suite.setup_limit) if todo else None

    def finish(run: _Run) -> None:
        nonlocal finished
        run.read()
        del active[run.run.key]
        row = run.row()
        if os.path.exists(run.messages_path):
            os.remove(run.messages_path)
        results.append(row)
        outcomes[row["outcome"]] += 1
        finished += 1
        if progress is not None:
            progress(row, finished, total)

    try:
        while todo or active:
            while todo and len(active) < jobs:
                run = _Run(todo.popleft(), out)
                active[run.run.key] = run
                server.submit(run.task)
            now = time.monotonic()
            wait = max(0.0, min([0.1] + [r.deadline - now for r in active.values()]))
            for event in server.events(timeout=wait):
                run = active.get(event.get("key"))
                if run is None:
                    continue
                if event["kind"] == "started":
                    run.pid = event["pid"]
                elif event["kind"] == "exited":
                    run.exit = event
                    finish(run)
            now = time.monotonic()
            for run in list(active.values()):
                run.read()
                if now >= run.deadline:
                    run.kill()
            if server.eof:
                # The server died: its runs cannot be waited for; record them and go on.
                for run in list(active.values()):
                    run.kill()
                    finish(run)
                server.close()
                server = _Server(out, suite.setup_limit) if todo else None
    finally:
        # Also after Ctrl-C: no run outlives the benchmark, and a second Ctrl-C waits.
        with interrupts_deferred():
            for run in active.values():
                run.kill()
                with contextlib.suppress(OSError):
                    os.remove(run.messages_path)
            if server is not None:
                server.close()
            # what the killed runs were writing (their vectors) is no result
            _remove_temporaries(out)
    frame = read_results(out) if os.path.exists(os.path.join(out, RESULTS_CSV)) else pd.DataFrame()
    if len(frame):
        _write_atomic(
            os.path.join(out, RESULTS_PARQUET), lambda path: frame.to_parquet(path, engine="pyarrow")
        )
    return BenchResult(
        out,
        frame,
        ran=finished,
        skipped=skipped,
        outcomes=dict(outcomes),
        elapsed_s=time.monotonic() - started,
    )
