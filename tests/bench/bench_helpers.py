"""Methods that misbehave on purpose, for the runner's tests: they are given to suites as
``"bench_helpers:<name>"`` and are not registered in fairanon.METHODS."""

import os
import signal
import time

import numpy as np


def sleepy(instance, requirements, *, seed=None, time_limit=None, **options):
    """Ignores its time limit."""
    time.sleep(120)
    raise AssertionError("sleepy should have been killed")


def broken(instance, requirements, *, seed=None, time_limit=None, **options):
    raise RuntimeError("broken on purpose")


def greedy(instance, requirements, *, seed=None, time_limit=None, **options):
    """Allocates 4 GiB."""
    return np.ones(2**32, dtype=np.uint8)


def crashing(instance, requirements, *, seed=None, time_limit=None, **options):
    os.kill(os.getpid(), signal.SIGKILL)


def unhurried(instance, requirements, *, seed=None, time_limit=None, **options):
    """Mondrian after a pause, so that an interruption can land inside a run."""
    from fairanon.heuristics.mondrian import mondrian

    time.sleep(0.4)
    return mondrian(instance, requirements, seed=seed, time_limit=time_limit)
