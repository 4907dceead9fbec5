"""The pool of candidate clusters from which DIVA's exact choice picks (Milani, Huang,
Chiang, EDBT 2021, with the coloring replaced by CP-SAT): every protected-pure set of
k..2k-1 records when the table has few enough, else the clusters of each constraint's
first candidate clusterings
(:func:`~fairanon.heuristics.diva.clusterings.candidate_clusterings`).
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from .clusterings import candidate_clusterings
from .graph import encoded_graph
from .problem import Problem

__all__ = ["candidate_pool", "complete_pool", "complete_pool_size"]


def complete_pool_size(d: Problem, cap: int) -> int:
    """How many protected-pure sets of k..2k-1 records the table has (counting stops
    above `cap`)."""
    total = 0
    for p in np.unique(d.prot):
        size = int((d.prot == p).sum())
        for s in range(d.k, min(2 * d.k - 1, size) + 1):
            total += math.comb(size, s)
            if total > cap:
                return total
    return total


def complete_pool(d: Problem, cap: int) -> list[np.ndarray] | None:
    """Every protected-pure set of k..2k-1 records, if there are at most `cap`."""
    if complete_pool_size(d, cap) > cap:
        return None
    clusters = []
    for part in (np.flatnonzero(d.prot == p) for p in np.unique(d.prot)):
        for size in range(d.k, min(2 * d.k - 1, len(part)) + 1):
            clusters.extend(np.array(c, dtype=np.int64) for c in itertools.combinations(part.tolist(), size))
    return clusters


def candidate_pool(d: Problem, rng, per_constraint: int, deadline: float | None = None) -> list[np.ndarray]:
    """The clusters of the first candidate clusterings of every constraint (no colors
    chosen), as many as are built before `deadline` (a ``time.perf_counter`` value)."""
    graph = encoded_graph(d.encoded)
    seen, pool = set(), []
    counts = np.zeros(len(d.encoded), dtype=np.int64)
    for v, e in enumerate(d.encoded):
        if e.lower <= 0:
            continue
        gen = candidate_clusterings(d, v, d.targets[v], int(e.lower), int(e.upper), counts, set(), graph,
                                    "cost", rng, per_constraint)
        for clustering in itertools.islice(gen, per_constraint):
            if deadline is not None and time.perf_counter() > deadline:
                return pool
            for c in clustering:
                key = tuple(sorted(c.tolist()))
                if key not in seen:
                    seen.add(key)
                    pool.append(np.array(key, dtype=np.int64))
    return pool
