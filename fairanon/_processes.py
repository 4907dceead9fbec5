"""Whether work may be shared with forked processes, and how many cores there are for it."""

from __future__ import annotations

import multiprocessing
import os

__all__ = ["can_fork", "cores"]


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
