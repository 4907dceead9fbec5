"""Whether work may be shared with forked processes, and how many cores there are for it."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading

__all__ = ["can_fork", "cores", "start_forked"]


def can_fork() -> bool:
    """Whether this process may fork workers: the platform forks, and this is not a
    daemonic process (a pool's worker), which may not start processes."""
    return ("fork" in multiprocessing.get_all_start_methods()
            and not multiprocessing.current_process().daemon)


def cores() -> int:
    """The cores this process may run on (its affinity where the platform tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def start_forked(process: multiprocessing.process.BaseProcess) -> None:
    """Start `process` so that a Ctrl-C arriving while it forks is not lost: one that
    lands in a callback the fork runs (such as logging's release of its lock) raises
    KeyboardInterrupt there, which Python prints as ignored and drops, and the work
    then runs on to its end. Here it is held until the fork is done and delivered
    after it, to whatever SIGINT did before. The package's forked children set their
    own SIGINT disposition first thing (they ignore it). From a thread other than the
    main one, which cannot set handlers and gets no signals, it starts `process`."""
    if threading.current_thread() is not threading.main_thread():
        process.start()
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda *_: caught.append(True))
    try:
        process.start()
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)
