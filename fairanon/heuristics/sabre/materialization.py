"""Sabre's materialization: planned classes filled with records (Cao, Karras, Kalnis, Tan,
VLDB J. 2011; docs/papers.md, B-3).

Each planned class takes a seed record from one of its buckets, then the seed's nearest
live neighbours in quasi-identifier space from every bucket it draws on
(:class:`~fairanon.heuristics.sabre.neighbours.NeighbourPool`); :func:`class_ids` turns
the classes into the class of every record. Shared by Sabre, dSabre and the DS
bucketization.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence

import numpy as np

from ...exceptions import SolverError
from ...instances.instance import Instance
from .neighbours import TIE_WINDOW, NeighbourPool

__all__ = ["SEED_BUCKET_RULES", "SEED_TUPLE_RULES", "class_ids", "id_order", "materialize"]

#: How the bucket of a class's first record is chosen: the lowest ratio of remaining
#: records to records the class still needs from it (Ruggieri §5.2 and footnote 4),
#: the lowest inverse ratio (the reading that matches Ruggieri's Example 22), or at
#: random (Sabre). Ties go to the lowest bucket.
SEED_BUCKET_RULES = ("size/need", "need/size", "random")
#: How the first record is chosen inside its bucket: at random (Sabre) or the smallest
#: record id (the deterministic setting of the test vectors).
SEED_TUPLE_RULES = ("random", "min_id")


def materialize(
    pool: NeighbourPool,
    needs: Sequence[np.ndarray],
    bucket_ids: Sequence[np.ndarray],
    rng: np.random.Generator,
    *,
    seed_bucket: str = "size/need",
    seed_tuple: str = "random",
    wave: int = 128,
    deadline: float | None = None,
) -> list[list[int]]:
    """Fill every planned class from the pool (docs/papers.md, B-3), or the first ones
    if `deadline` (a ``time.perf_counter()`` value, read before each wave) passes: the
    records of the rest are then left live in the pool.

    Parameters
    ----------
    pool : NeighbourPool
    needs : sequence of int arrays
        Records each class takes from each of its buckets.
    bucket_ids : sequence of int arrays
        The pool buckets those counts refer to (same length as the matching need).
    rng : numpy.random.Generator
    seed_bucket, seed_tuple
        See :data:`SEED_BUCKET_RULES` and :data:`SEED_TUPLE_RULES`.
    wave : int, default=128
        Neighbour searches whose seeds are drawn, and candidates fetched, together.

    Returns
    -------
    list of list of int
        The records of each class: the seed first, then its nearest neighbours.

    Notes
    -----
    Classes are filled one after the other, but in waves: the seed bucket of every
    class of a wave follows from the counts alone, its seed is drawn among the records
    live when the wave starts, and the neighbours of all the wave's seeds are fetched in
    one batched kd-tree query per bucket. A seed taken by an earlier class of the wave
    is drawn again, and a class whose fetched candidates no longer settle its nearest
    neighbours searches again, so every class still gets the nearest records live when
    its turn comes. Large requests scan the bucket instead (:meth:`NeighbourPool.is_large`).
    """
    needs = np.asarray(needs, dtype=np.int64).reshape(len(needs), -1)
    bucket_ids = np.asarray(bucket_ids, dtype=np.int64).reshape(needs.shape)
    # Per class, its (pool bucket, need) pairs with need > 0, as Python lists.
    cls_of, col_of = np.nonzero(needs)
    pairs = [[] for _ in range(len(needs))]
    for i, b, k in zip(cls_of.tolist(), bucket_ids[cls_of, col_of].tolist(), needs[cls_of, col_of].tolist()):
        pairs[i].append((b, k))
    draws = rng.random(len(needs)).tolist()
    bucket_draws = rng.random(len(needs)).tolist() if seed_bucket == "random" else None
    sizes = [pool.size(b) for b in range(pool.n_buckets)]
    classes: list[list[int]] = []
    start = 0
    while start < len(needs):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        # A wave: classes until `wave` neighbour searches (singletons need none).
        stop, searches = start, 0
        while stop < len(needs) and searches < wave and stop - start < 64 * wave:
            cell = pairs[stop]
            if len(cell) > 1 or cell[0][1] > 1:
                searches += len(cell)
            stop += 1
        firsts, seeds = [], []
        for i in range(start, stop):
            cell = pairs[i]
            if seed_bucket == "random":
                first = int(bucket_draws[i] * len(cell))
            else:  # sizes as they will be when the class's turn comes; exact ratios
                first = 0
                for j in range(1, len(cell)):
                    lhs = sizes[cell[j][0]] * cell[first][1]
                    rhs = sizes[cell[first][0]] * cell[j][1]
                    if (lhs < rhs) if seed_bucket == "size/need" else (lhs > rhs):
                        first = j
            firsts.append(first)
            seeds.append(pool.choose(cell[first][0], seed_tuple, draws[i]))
            for b, k in cell:
                sizes[b] -= k
        wanted: dict[int, list] = {}
        for i, first, seed_row in zip(range(start, stop), firsts, seeds):
            for j, (b, k) in enumerate(pairs[i]):
                k -= j == first
                if k > 0 and not pool.is_large(b, k):
                    wanted.setdefault(b, []).append((seed_row, k))
        fetched: dict[int, dict] = {}
        for b, rows in wanted.items():
            # Small needs apart from large ones: a batch fetches its largest need for all.
            for part in ([r for r in rows if r[1] <= 4], [r for r in rows if r[1] > 4]):
                if part:
                    got = pool.prefetch(b, [r for r, _ in part], max(k for _, k in part) + TIE_WINDOW)
                    fetched.setdefault(b, {}).update(got or {})
        for i, first, seed_row in zip(range(start, stop), firsts, seeds):
            cell = pairs[i]
            if not pool.alive[seed_row]:  # taken by an earlier class of the wave
                seed_row = pool.choose(cell[first][0], seed_tuple, float(rng.random()))
            pool.remove(seed_row)
            members = [seed_row]
            for j, (b, k) in enumerate(cell):
                k -= j == first
                if k > 0:
                    members.extend(pool.take(b, seed_row, k, fetched.get(b)))
            classes.append(members)
        start = stop
    return classes


def class_ids(classes: Sequence[Sequence[int]], order: np.ndarray, n: int) -> np.ndarray:
    """The class of every record (instance order) from classes of internal positions
    (``order[position]`` is the record's row); raises SolverError unless every record
    is in exactly one class."""
    lengths = np.fromiter((len(c) for c in classes), dtype=np.int64, count=len(classes))
    flat = np.fromiter(itertools.chain.from_iterable(classes), dtype=np.int64, count=int(lengths.sum()))
    groups = np.full(n, -1, dtype=np.int64)
    groups[order[flat]] = np.repeat(np.arange(len(classes), dtype=np.int64), lengths)
    if len(flat) != n or (groups < 0).any():  # pragma: no cover - a bug, not bad input
        raise SolverError("Records were lost or repeated while materializing classes.")
    return groups


def id_order(instance: Instance) -> np.ndarray:
    """Row positions sorted by record id (row order when ids do not compare)."""
    try:
        return np.argsort(instance.row_ids.to_numpy(), kind="stable").astype(np.int64)
    except TypeError:
        return np.arange(instance.n_rows, dtype=np.int64)
