"""A command's time limit: what of it the method gets, on one machine and on Dask."""

from __future__ import annotations

from time import perf_counter

__all__ = ["MIN_METHOD_SECONDS", "method_seconds"]

#: Seconds the method gets at least, however little of the limit start-up and loading
#: left (it then returns what it has, as at any limit).
MIN_METHOD_SECONDS = 0.01


def method_seconds(time_limit: float | None, started: float, keep: float = 0.0) -> float | None:
    """The seconds a method gets of a command's `time_limit`, counted from the command's
    start `started` (a :func:`time.perf_counter` reading): the limit less the share
    `keep` of it kept for what follows the method, less the time already spent; at least
    :data:`MIN_METHOD_SECONDS`. None without a limit."""
    if time_limit is None:
        return None
    return max(MIN_METHOD_SECONDS, (1 - keep) * time_limit - (perf_counter() - started))
