"""A run of the app: the command line's own ``fairanon anonymize`` (and ``fairanon
utility``) on a job file, each a process of its own in a process group that the app
starts (:func:`start`: ``python -c`` with :data:`BOOT`, which calls :func:`run`), so
that the pages stay responsive and a run is cancelled by ending the group.

Running the same commands as ``fairanon anonymize JOB --out DIR`` makes the app's
release and ``report.json`` those of the command line, byte for byte, for the same
job file. Each step is written to ``status.json`` in the run's folder (replaced whole),
which the app reads and pushes to the page.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

STATUS_FILE = "status.json"
LOG_FILE = "log.txt"
UTILITY_FILE = "utility.json"
#: A fulldomain run's candidate transformations (``fairanon anonymize --candidates``).
CANDIDATES_FILE = "candidates.json"
#: The release formats of ``fairanon anonymize --format``.
FORMATS = ("csv", "parquet")


def write_status(run_dir: str, **status) -> None:
    """Replace the run's status file whole (a reader never sees half of it)."""
    path = os.path.join(run_dir, STATUS_FILE)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(status, fh)
    os.replace(tmp, path)


def read_status(run_dir: str) -> dict:
    try:
        with open(os.path.join(run_dir, STATUS_FILE), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {"state": "starting", "step": "starting the worker", "started": None}


def _cli(argv: list[str], log) -> int:
    log.write(f"$ fairanon {' '.join(argv)}\n")
    log.flush()
    return subprocess.run([sys.executable, "-m", "fairanon.cli", *argv], stdout=log, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, check=False).returncode


#: Seconds a cancelled run has to end by the command line's own Ctrl-C path (which writes
#: its output files whole or not at all) before its process group is killed.
CANCEL_GRACE = 10.0


#: What a worker's process runs: the SIGINT handler first, then the unblocking of SIGINT
#: (blocked by :func:`start`, so one sent while the interpreter starts waits for the
#: handler), then the imports (the package's take a while: a Ctrl-C meanwhile printed a
#: traceback on the app's terminal) and :func:`run`.
BOOT = """import signal, sys
interrupted = []
signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
import json
from fairanon.app.worker import run
run(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), interrupted)
"""


def start(job_path: str, run_dir: str, options: dict) -> subprocess.Popen:
    """Start :func:`run` in a new process group (ended whole by :func:`cancel`), with
    SIGINT blocked until :data:`BOOT` has its handler in place (a child keeps its
    parent's signal mask and the signals pending on it)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # this thread's mask only
    try:
        return subprocess.Popen([sys.executable, "-c", BOOT, job_path, run_dir, json.dumps(options)],
                                stdin=subprocess.DEVNULL, start_new_session=True)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def cancel(*processes: subprocess.Popen) -> None:
    """End runs started by :func:`start`, with the commands they run: SIGINT to each
    group, as Ctrl-C in a terminal (the command line then leaves its output folder as it
    was), and SIGKILL to what is left of each group once :data:`CANCEL_GRACE` seconds
    have passed. Every group is signalled before any is waited for, and all share one
    deadline: the app's stop with several runs takes the grace once, not once per run."""
    running = [p for p in processes if p.poll() is None]  # an ended one's group id may be another's by now
    for process in running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
    deadline = time.monotonic() + CANCEL_GRACE
    for process in running:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(max(0.0, deadline - time.monotonic()))
    for process in running:
        with contextlib.suppress(ProcessLookupError):  # the worker, or what it left behind in its group
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run(job_path: str, run_dir: str, options: dict, interrupted: list | None = None) -> None:
    """Anonymize and verify `job_path` into ``run_dir/out``, then measure the utility.

    `options`: ``format`` (``anonymize --format``), ``candidates`` (true: also list a
    fulldomain job's candidate transformations, ``anonymize --candidates``),
    ``classifier`` (for the utility analysis: "logistic" or "none") and ``seed`` (the
    job's, for the utility analysis's split; None: none). A SIGINT (:func:`cancel`) reaches the command it runs, which ends
    by its Ctrl-C path; the worker then stops, its state "cancelled". `interrupted`: where
    a handler installed before (:data:`BOOT`'s) notes a SIGINT, kept here."""
    interrupted = [] if interrupted is None else interrupted
    # not ignored (a child would inherit SIG_IGN) but noted: the command line handles it
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    try:
        _run(job_path, run_dir, options, interrupted)
    finally:
        signal.signal(signal.SIGINT, previous)


def _run(job_path: str, run_dir: str, options: dict, interrupted: list) -> None:
    started = time.time()
    out = os.path.join(run_dir, "out")
    argv = ["anonymize", job_path, "--out", out]
    if options.get("format") is not None:
        argv += ["--format", str(options["format"])]
    step = "anonymizing and verifying"
    if options.get("candidates"):  # here, under the job's limits and ended by Cancel, not in the app
        argv += ["--candidates", os.path.join(run_dir, CANDIDATES_FILE)]
        step += ", then listing the candidate transformations"
    with open(os.path.join(run_dir, LOG_FILE), "w", encoding="utf-8") as log:
        write_status(run_dir, state="running", step=step, started=started)
        code = _cli(argv, log) if not interrupted else None  # cancelled before the command started: not run
        release = _release_file(out)
        if interrupted or release is None:
            write_status(run_dir, state="cancelled" if interrupted else "done", step="finished", code=code,
                         started=started, ended=time.time())
            return
        write_status(run_dir, state="running", step="measuring the utility", code=code, started=started)
        utility = _cli(["utility", job_path, "--release", release, "--classifier", options.get("classifier", "none"),
                        "--out", os.path.join(run_dir, UTILITY_FILE)] +
                       (["--seed", str(options["seed"])] if options.get("seed") is not None else []), log)
        write_status(run_dir, state="cancelled" if interrupted else "done", step="finished", code=code,
                     utility_code=utility, started=started, ended=time.time())


def run_files(run_dir: str) -> dict:
    """The files of a run a user can download, by name: the job file, the release and
    ``report.json`` that ``anonymize`` wrote, ``utility.json`` and a fulldomain run's
    ``candidates.json``."""
    out = os.path.join(run_dir, "out")
    names = {n: os.path.join(run_dir, n) for n in ("job.yaml", UTILITY_FILE, CANDIDATES_FILE)}
    if os.path.isdir(out):
        names.update({n: os.path.join(out, n) for n in os.listdir(out) if n.startswith(("release", "report"))})
    return {n: p for n, p in names.items() if os.path.isfile(p)}


def read_report(run_dir: str) -> dict | None:
    """The ``report.json`` of a run, or None when it wrote none."""
    try:
        with open(os.path.join(run_dir, "out", "report.json"), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _release_file(out: str) -> str | None:
    """The release ``anonymize`` wrote in `out` (named by ``report.json``), if any."""
    try:
        with open(os.path.join(out, "report.json"), encoding="utf-8") as fh:
            name = json.load(fh).get("release_file")
    except (OSError, ValueError):
        return None
    return os.path.join(out, name) if name else None

