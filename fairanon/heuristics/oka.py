"""OKA: one-pass k-means for k-anonymization (Lin and Wei, PAIS 2008).

K = floor(n / k) clusters start from K seed records; every other record joins the
cluster with the nearest centroid, in one pass (no iteration to convergence). Then
each cluster larger than k gives up the records farthest from its centroid, and
those records fill the clusters smaller than k (or, once none is left, join the
nearest cluster). Reconstructed (docs/papers.md, B-5) from
Gong's code and the literature).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from .._memory import check_memory
from .._validation import check_option, check_random_state
from ..exceptions import InvalidParameterError
from ..instances.instance import Instance
from ..models.requirements import validate_requirements
from ..release import Release
from .kmember import (
    CAT_LOSSES,
    RECODINGS,
    RecordSpace,
    clustered_release,
    infeasible_small_class,
    kmember_memory,
    protected_classes,
    single_k,
)

__all__ = ["ORDERS", "oka", "oka_clusters", "oka_memory"]

#: The order of the one pass: table order ("input") or a seeded shuffle.
ORDERS = ("input", "shuffle")
#: Records placed between two reads of the clock (each costs O(K d): a few
#: milliseconds for 64 on UCI Adult's 6,000 clusters).
CLOCK_RECORDS = 64


class _Centroids:
    """Cluster centroids: the mean of the scaled numeric values and the lowest common
    ancestor of the categorical values (as in Gong's ``Cluster.center``)."""

    def __init__(self, space: RecordSpace, seeds: np.ndarray):
        self.space = space
        self.sum = space.num[seeds].astype(float).copy()
        self.count = np.ones(len(seeds))
        self.lca = space.nodes[seeds].copy()

    def reset(self, j: int, rows: np.ndarray) -> None:
        st = self.space.state(rows)
        self.sum[j] = self.space.num[rows].sum(axis=0)
        self.count[j] = len(rows)
        self.lca[j] = st.lca

    def add(self, j: int, r: int) -> None:
        self.sum[j] += self.space.num[r]
        self.count[j] += 1
        for a in range(len(self.space.cat_names)):
            self.lca[j, a] = int(self.space.lca(a, np.int64(self.lca[j, a]), np.int64(self.space.nodes[r, a])))

    def distance(self, r: int, clusters: np.ndarray) -> np.ndarray:
        """Distance from record r to the centroids of `clusters`."""
        sp = self.space
        mean = self.sum[clusters] / self.count[clusters][:, None]
        out = np.abs(mean - sp.num[r]).sum(axis=1)
        for a in range(len(sp.cat_names)):
            out += sp.weight[a][sp.lca(a, self.lca[clusters, a], np.int64(sp.nodes[r, a]))]
        return out

    def spread(self, j: int, rows: np.ndarray) -> np.ndarray:
        """Distance from each record of `rows` to the centroid of cluster j."""
        sp = self.space
        out = np.abs(sp.num[rows] - self.sum[j] / self.count[j]).sum(axis=1)
        for a in range(len(sp.cat_names)):
            out += sp.weight[a][sp.lca(a, np.int64(self.lca[j, a]), sp.nodes[rows, a])]
        return out


def oka_memory(instance: Instance, k: int) -> int:
    """Bytes OKA needs on `instance` with clusters of `k` records, its input aside:
    :func:`~fairanon.heuristics.kmember.kmember_memory` (the coded records, the clusters
    and the release; a scan of OKA covers the n / k centroids, fewer than the n free
    records k-member scans) plus the centroids (per cluster the numeric sums, a count
    and the categorical lowest common ancestors, 8 bytes each). Measured with
    tracemalloc on Adult, k = 5: 244 bytes a record; this gives 340.

    >>> oka_memory(fa.load("adult"), 5) // fa.load("adult").n_rows
    340
    """
    names = list(instance.schema.generalizable)
    return kmember_memory(instance) + 8 * (len(names) + 1) * (instance.n_rows // k)


def oka_clusters(
    space: RecordSpace,
    rows: np.ndarray,
    k: int,
    *,
    seeds: Sequence[int] | None = None,
    order: str = "input",
    rng: np.random.Generator | None = None,
    deadline: float | None = None,
) -> tuple[list[np.ndarray], bool]:
    """OKA clusters of `rows` (positions), each of at least k records, and whether
    `deadline` cut them short.

    Parameters
    ----------
    space : RecordSpace
    rows : array of int
        At least k positions.
    k : int
    seeds : sequence of int, optional
        floor(|rows| / k) distinct positions among `rows`; default a random draw.
    order : {"input", "shuffle"}, default="input"
    rng : numpy.random.Generator, optional
    deadline : float, optional
        ``time.perf_counter()`` value read every :data:`CLOCK_RECORDS` records placed
        (in either stage); past it the clusters of k records or more stay and every
        other record (those not yet placed and the clusters still smaller than k)
        forms one last cluster, or joins the last cluster kept when fewer than k.

    Notes
    -----
    Stage 1 costs O(n K d) = O(n² d / k), stage 2 O(n K d). Ties: the lowest cluster
    index; among records equally far from a centroid, the later one is removed first
    (docs/papers.md, B-5).
    """
    rows = np.asarray(rows, dtype=np.int64)
    rng = rng if rng is not None else np.random.default_rng(0)
    n_clusters = len(rows) // k
    if n_clusters == 0:
        raise InvalidParameterError(f"OKA needs at least k={k} records; got {len(rows)}.")
    if seeds is None:
        seeds = rng.choice(rows, size=n_clusters, replace=False)
    seeds = np.asarray(seeds, dtype=np.int64)
    if len(seeds) != n_clusters or len(set(seeds.tolist())) != n_clusters or not np.isin(seeds, rows).all():
        raise InvalidParameterError(
            f"OKA needs floor({len(rows)} / {k}) = {n_clusters} distinct seed records among those "
            f"clustered. Got {len(seeds)} seed(s) instead."
        )
    centroids = _Centroids(space, seeds)
    members: list[list[int]] = [[int(s)] for s in seeds]
    rest = rows[~np.isin(rows, seeds)]
    if order == "shuffle":
        rest = rng.permutation(rest)
    every = np.arange(n_clusters)

    def late(i: int) -> bool:
        return deadline is not None and i % CLOCK_RECORDS == 0 and time.perf_counter() > deadline

    # Stage 1: one pass, nearest centroid.
    for i, r in enumerate(rest):
        if late(i):
            return _cut(members, rest[i:].tolist(), k), True
        j = int(np.argmin(centroids.distance(int(r), every)))
        members[j].append(int(r))
        centroids.add(j, int(r))
    # Stage 2: trim the clusters larger than k, then fill the small ones.
    removed: list[int] = []
    for j, cluster in enumerate(members):
        excess = len(cluster) - k
        if excess <= 0:
            continue
        arr = np.array(cluster, dtype=np.int64)
        dist = centroids.spread(j, arr)
        drop = set(arr[np.lexsort((-arr, -dist))[:excess]].tolist())
        members[j] = [r for r in cluster if r not in drop]
        removed.extend(drop)
        centroids.reset(j, np.array(members[j], dtype=np.int64))
    removed.sort()
    for i, r in enumerate(removed):
        if late(i):
            return _cut(members, removed[i:], k), True
        sizes = np.array([len(c) for c in members])
        small = np.flatnonzero(sizes < k)
        pool = small if len(small) else every
        j = int(pool[int(np.argmin(centroids.distance(r, pool)))])
        members[j].append(r)
        centroids.add(j, r)
    return [np.array(c, dtype=np.int64) for c in members], False


def _cut(members: list[list[int]], left: list[int], k: int) -> list[np.ndarray]:
    """The clusters when the deadline passed: those of k records or more, then one of
    the records `left` unplaced and those of the smaller clusters (k-member's last
    cluster), which join the last cluster kept when they are fewer than k (a cluster
    only grows, so it keeps k). The records of `rows` number k or more, so some
    cluster holds k."""
    kept = [c for c in members if len(c) >= k]
    pool = [r for c in members if len(c) < k for r in c] + [int(r) for r in left]
    if len(pool) >= k or not kept:
        kept.append(pool)
    elif pool:
        kept[-1] = kept[-1] + pool
    return [np.array(c, dtype=np.int64) for c in kept if c]


def oka(
    instance: Instance,
    requirements,
    *,
    seed=None,
    time_limit: float | None = None,
    seeds: Sequence | None = None,
    order: str = "input",
    cat_loss: str = "height",
    recoding: str = "tight",
    memory_limit=None,
) -> Release:
    """One-pass k-means anonymization, OKA [1]_ (docs/papers.md, B-5).

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        One or more KAnonymity (the largest k is used); nothing else.
    seed : None, int or numpy.random.Generator
        Draws the seed records (unless `seeds` is given) and the shuffled order.
    time_limit : float, optional
        Seconds; the clock is read every :data:`CLOCK_RECORDS` records placed, and
        past the limit the records not yet in a cluster of k form one last cluster
        (:func:`oka_clusters`), as k-member's do: FEASIBLE with
        ``provenance["time_limit_reached"]``. The release is then built and its
        Total-IL computed (a fraction of a second past the limit on UCI Adult).
    seeds : sequence of record ids, optional
        The initial cluster centres: floor(n_p / k) records of each protected class of
        n_p records (the whole table without a protected attribute).
    order : {"input", "shuffle"}, default="input"
    cat_loss : {"height", "leaves"}, default="height"
        See :class:`~fairanon.heuristics.kmember.RecordSpace`.
    recoding : {"tight", "suppress"}, default="tight"
        As in :func:`~fairanon.heuristics.kmember.kmember`.
    memory_limit : None, int, float or str, optional
        As in :func:`~fairanon.heuristics.kmember.kmember`; the need is
        :func:`oka_memory`, estimated before the work.

    Returns
    -------
    Release
        FEASIBLE with objective Byun's Total-IL (exact); INFEASIBLE when a protected
        value has fewer than k records.

    Raises
    ------
    MemoryLimitError
        When :func:`oka_memory` is above `memory_limit`.

    Notes
    -----
    O(n² d / k). Centroids: the mean of the numeric (and rank-coded ordered) values and
    the lowest common ancestor of the categorical ones; the distance of a record to a
    centroid sums |value − mean| / range and the cost of LCA(value, centroid node)
    (reconstructed, docs/papers.md, B-5). Gong's residual-loop bug (comparing a
    cluster with k instead of its size) is not reproduced.

    References
    ----------
    .. [1] J.-L. Lin, M.-C. Wei. An efficient clustering method for k-anonymization.
       PAIS 2008.

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> rel = oka(inst, [fa.KAnonymity(3)], seed=0)
    >>> rel.n_groups, fa.verify(inst, rel, [fa.KAnonymity(3)]).passed
    (3, True)
    """
    started = time.perf_counter()
    requirements = validate_requirements(instance, requirements, caller="oka")
    k = single_k(requirements, "oka")
    check_option(order, "order", "oka", ORDERS)
    check_option(cat_loss, "cat_loss", "oka", CAT_LOSSES)
    check_option(recoding, "recoding", "oka", RECODINGS)
    rng = check_random_state(seed)
    if seeds is not None and (isinstance(seeds, (str, bytes))
                              or not isinstance(seeds, (Sequence, np.ndarray))):
        raise InvalidParameterError(
            "The 'seeds' parameter of oka must be a list of record ids of the instance, or "
            f"None. Got {seeds!r} instead."
        )
    params = {"order": order, "cat_loss": cat_loss, "recoding": recoding,
              "seeds": None if seeds is None else [s.item() if hasattr(s, "item") else s for s in seeds]}
    bad = infeasible_small_class(instance, "oka", params, requirements, seed, started, k)
    if bad is not None:
        return bad
    given = None
    if seeds is not None:
        positions = instance.row_ids.get_indexer(list(seeds))
        if (positions < 0).any():
            raise InvalidParameterError(
                f"The 'seeds' parameter of oka must list record ids of the instance. "
                f"Got {[s for s, p in zip(seeds, positions) if p < 0][:5]} which it does not hold."
            )
        given = positions
    check_memory(
        oka_memory(instance, k),
        f"OKA on the {instance.n_rows:,} records of {instance.name!r}",
        "anonymize fewer records at a time, or use Mondrian (method='mondrian')",
        memory_limit,
        caller="oka",
    )
    deadline = None if time_limit is None else started + time_limit
    space = RecordSpace(instance, cat_loss=cat_loss)
    clusters, timed_out = [], False
    for _, rows in protected_classes(instance):
        class_seeds = None if given is None else given[np.isin(given, rows)]
        part, cut = oka_clusters(space, rows, k, seeds=class_seeds, order=order, rng=rng,
                                 deadline=deadline)
        clusters.extend(part)
        timed_out = timed_out or cut
    return clustered_release(instance, clusters, "oka", params, requirements, seed, started,
                             recoding=recoding, space=space, time_limit_reached=timed_out)
