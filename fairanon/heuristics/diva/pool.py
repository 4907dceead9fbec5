"""The pool of candidate clusters from which DIVA's exact choice picks (Milani, Huang,
Chiang, EDBT 2021, with the coloring replaced by CP-SAT): every protected-pure set of
k..2k-1 records when the table has few enough, else the clusters of each constraint's
first candidate clusterings
(:func:`~fairanon.heuristics.diva.clusterings.candidate_clusterings`).

Both pools keep to a memory limit: the complete pool's need is known from its size
before it is enumerated, the candidate pool's is checked as it grows; either raises
:class:`~fairanon.exceptions.MemoryLimitError` naming the option that shrinks it.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from ..._memory import check_memory, current_limit
from .clusterings import candidate_clusterings
from .graph import encoded_graph
from .problem import Problem

__all__ = ["POOL_CLUSTER_BYTES", "POOL_ENTRY_BYTES", "candidate_pool", "complete_pool", "complete_pool_size",
           "pool_memory"]

#: Bytes a pool and the exact choice's CP-SAT model over it (8 workers) take per
#: cluster and per (cluster, record) entry; measured on German credit (k = 5 and 20,
#: 55 to 2,356 candidate clusters, 1,168 to 12,055 entries: 4.2 kB an entry and 19 kB
#: a cluster with the search running 18 s).
POOL_ENTRY_BYTES = 4096
POOL_CLUSTER_BYTES = 16384


def pool_memory(clusters: int, entries: int) -> int:
    """Bytes the exact choice needs for a pool of `clusters` clusters holding
    `entries` records in all.

    >>> pool_memory(1000, 20_000)
    98304000
    """
    return clusters * POOL_CLUSTER_BYTES + entries * POOL_ENTRY_BYTES


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


def complete_pool(d: Problem, cap: int, memory_limit=None) -> list[np.ndarray] | None:
    """Every protected-pure set of k..2k-1 records, if there are at most `cap`.

    Raises MemoryLimitError when they would need more than `memory_limit`
    (:func:`pool_memory`)."""
    if complete_pool_size(d, cap) > cap:
        return None
    sets = entries = 0
    for p in np.unique(d.prot):
        size = int((d.prot == p).sum())
        for s in range(d.k, min(2 * d.k - 1, size) + 1):
            sets += math.comb(size, s)
            entries += s * math.comb(size, s)
    check_memory(
        pool_memory(sets, entries),
        f"DIVA's exact choice among every one of the {sets:,} protected-pure sets of {d.k} to "
        f"{2 * d.k - 1} records",
        f"lower exact_pool_cap (below {sets:,}) so that the pool holds the clusters of a few "
        "candidate clusterings per constraint, or use DIVA's coloring (method 'diva')",
        memory_limit,
        caller="diva",
    )
    clusters = []
    for part in (np.flatnonzero(d.prot == p) for p in np.unique(d.prot)):
        for size in range(d.k, min(2 * d.k - 1, len(part)) + 1):
            clusters.extend(np.array(c, dtype=np.int64) for c in itertools.combinations(part.tolist(), size))
    return clusters


def candidate_pool(d: Problem, rng, per_constraint: int, deadline: float | None = None,
                   memory_limit=None) -> list[np.ndarray]:
    """The clusters of the first candidate clusterings of every constraint (no colors
    chosen), as many as are built before `deadline` (a ``time.perf_counter`` value).

    Raises MemoryLimitError as soon as the pool would need more than `memory_limit`
    (:func:`pool_memory`)."""
    limit = current_limit(memory_limit, "diva")
    graph = encoded_graph(d.encoded)
    seen, pool = set(), []
    entries = 0
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
                    entries += len(key)
            if limit.bytes is not None and pool_memory(len(pool), entries) > limit.bytes:
                check_memory(
                    pool_memory(len(pool), entries),
                    f"DIVA's exact choice among the clusters of {per_constraint} candidate clusterings per "
                    f"constraint ({len(pool):,} clusters of {entries:,} records when the pool passed the limit)",
                    "lower pool_candidates, or use DIVA's coloring (method 'diva')",
                    limit,
                    caller="diva",
                    at_least=True,
                )
    return pool
