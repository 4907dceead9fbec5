"""The process that starts benchmark runs: it imports fairanon once, then forks a new
process per run.

``python -m fairanon.bench.forkserver`` reads one JSON task per line on standard input
and writes one JSON event per line on standard output:

- ``{"kind": "server-ready"}`` once fairanon and every method of
  :data:`fairanon.METHODS` are imported;
- ``{"kind": "started", "key": ..., "pid": ...}`` when a run's process is forked;
- ``{"kind": "exited", "key": ..., "pid": ..., "status": ..., "maxrss": ...}`` when it
  has ended (``status`` and ``maxrss``, its peak resident memory, as :func:`os.wait4`
  gives them: kilobytes on Linux).

Each run is a fresh process: it is forked from this server, which imports modules and
never runs a method, so no state passes from one run to the next, and the import time
(seconds, with scipy, networkx and the solver) is paid once per benchmark instead of once
per run. When standard input closes, the runs still going are killed and the server
exits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys

__all__ = ["kill_run", "serve"]


def kill_run(pid: int) -> None:
    """Kill a run's process and everything it started (its session's process group)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:  # not yet in a session of its own
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _emit(fd: int, event: dict) -> None:
    data = (json.dumps(event) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def _preload() -> None:
    # Everything a run needs, imported before the first fork.
    from .. import api, jobs  # noqa: F401
    from ..instances import synthetic  # noqa: F401
    from ..models import metrics, verify  # noqa: F401
    from . import child, spec  # noqa: F401

    api.METHODS.load()  # the methods too (imported on first use, else in each run's time limit)


def _fork(task: dict) -> int:
    from .child import run_child

    pid = os.fork()
    if pid == 0:  # the run's process: it never returns into the server loop
        code = 1
        try:
            code = run_child(task)
        finally:
            os._exit(code)
    return pid


def serve(stdin_fd: int = 0, stdout_fd: int = 1) -> None:
    """Serve tasks from `stdin_fd` until it closes (see the module docstring)."""
    _preload()
    sys.stdout.flush()
    _emit(stdout_fd, {"kind": "server-ready"})
    runs: dict[int, str] = {}
    buffer = b""
    closed = False
    while not closed or runs:
        ready = []
        if not closed:
            ready, _, _ = select.select([stdin_fd], [], [], 0.05 if runs else None)
        else:
            select.select([], [], [], 0.05)
        if ready:
            chunk = os.read(stdin_fd, 65536)
            if not chunk:
                closed = True
                for pid in runs:
                    kill_run(pid)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    task = json.loads(line)
                    pid = _fork(task)
                    runs[pid] = task["key"]
                    _emit(stdout_fd, {"kind": "started", "key": task["key"], "pid": pid})
        while runs:
            try:
                pid, status, rusage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            key = runs.pop(pid)
            _emit(
                stdout_fd,
                {
                    "kind": "exited",
                    "key": key,
                    "pid": pid,
                    "status": status,
                    "maxrss": rusage.ru_maxrss,
                },
            )


if __name__ == "__main__":
    serve()
