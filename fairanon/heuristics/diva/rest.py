"""DIVA's Suppress and Anonymize steps (Milani, Huang, Chiang, EDBT 2021, Alg. 1-2):
the records outside the diverse clustering are clustered by k-member (quadratic, so
for large tables by sorted blocks or Mondrian instead); fewer than k left-over records
of a protected value join the cluster that costs fewest stars without breaking a lower
bound; and every cluster releases the values its records share and ``*`` elsewhere.
"""

from __future__ import annotations

import time

import numpy as np

from ...release import Release, Status, generalize_partition
from ..kmember import RecordSpace, kmember_clusters
from ..mondrian import mondrian_parts
from .clusterings import sorted_blocks
from .problem import Problem

__all__ = ["ANONYMIZERS", "anonymize_rest", "attach", "cluster_parts", "release_by_suppression"]

#: How the records outside the diverse clustering are anonymized: k-member (the paper's
#: choice), Mondrian, or sorted blocks (:func:`~fairanon.heuristics.diva.clusterings.sorted_blocks`,
#: k..2k-1 records agreeing on the attributes with fewest values first); "auto":
#: k-member up to ``kmember_max_rows`` records, sorted blocks beyond (on Census-Income
#: samples of 180,000 records they leave about half the stars of Mondrian's classes).
ANONYMIZERS = ("auto", "kmember", "mondrian", "blocks")
#: k-member's time on n records, about a·n + b·n² seconds (measured on Census-Income,
#: 12 quasi-identifiers, 2 cores: 0.2 s for 500 records, 2.4 s for 3,000).
KMEMBER_SECONDS = (4e-4, 1.5e-7)


def cluster_parts(d: Problem, parts: list[np.ndarray], anonymizer: str, kmember_max_rows: int, rng,
                  deadline) -> tuple[list[np.ndarray], str]:
    """Classes of at least k records inside each of `parts` (each protected-pure with
    at least k records) and the anonymizer used (:data:`ANONYMIZERS`; "auto" is
    k-member with at most `kmember_max_rows` records in all, and when it is expected
    to take at most half the time left before `deadline` (:data:`KMEMBER_SECONDS`),
    else sorted blocks)."""
    if not parts:
        return [], "none"
    n_rows = sum(len(p) for p in parts)
    method = anonymizer
    if anonymizer == "auto":
        per_row, per_pair = KMEMBER_SECONDS
        expected = sum(per_row * len(p) + per_pair * len(p) ** 2 for p in parts)
        left = None if deadline is None else deadline - time.perf_counter()
        fits = n_rows <= kmember_max_rows and (left is None or expected <= left / 2)
        method = "kmember" if fits else "blocks"
    if method == "blocks":
        return sorted_blocks(d, parts), method
    if method == "kmember":
        space = RecordSpace(d.instance)
        clusters = []
        for part in parts:
            found, _ = kmember_clusters(space, part, d.k, rng=rng, deadline=deadline)
            clusters.extend(np.asarray(c, dtype=np.int64) for c in found)
        return clusters, method
    clusters, _ = mondrian_parts(d.instance, d.k, parts, deadline=deadline)
    return clusters, method


def anonymize_rest(d: Problem, rest: np.ndarray, anonymizer: str, kmember_max_rows: int, rng, deadline):
    """Clusters of the rest (each >= k, protected-pure), the left-over records
    (protected values with fewer than k records in the rest) and the anonymizer used
    ("kmember", "mondrian", or "none" when every record is left over)."""
    parts, leftovers = [], []
    for p in np.unique(d.prot[rest]):
        part = rest[d.prot[rest] == p]
        (parts if len(part) >= d.k else leftovers).append(part)
    clusters, method = cluster_parts(d, parts, anonymizer, kmember_max_rows, rng, deadline)
    left = np.concatenate(leftovers) if leftovers else np.zeros(0, dtype=np.int64)
    return clusters, left, method


def attach(d: Problem, clusters: list[np.ndarray], leftovers: np.ndarray, *, strict: bool = False,
           starred: dict[str, np.ndarray] | None = None) -> tuple[list[np.ndarray], str | None]:
    """Each left-over record joins the cluster of its protected value that adds fewest
    stars and keeps every lower bound (and every upper bound when possible, always if
    `strict`); a reason if some record fits nowhere. `starred` are the voluntary stars
    of whole clusters (a starred cluster counts for no constraint on that attribute)."""
    clusters = [np.asarray(c, dtype=np.int64) for c in clusters]
    flat, starts, sizes = d.flatten(clusters)
    lo = np.minimum.reduceat(d.codes[flat], starts, axis=0)
    hi = np.maximum.reduceat(d.codes[flat], starts, axis=0)
    inside = np.minimum.reduceat(d.G[flat].astype(np.int8), starts, axis=0).astype(bool)
    for a, mask in (starred or {}).items():
        hidden = np.maximum.reduceat(mask[flat].astype(np.int8), starts).astype(bool)
        for i, e in enumerate(d.encoded):
            if a in e.attributes:
                inside[:, i] &= ~hidden
    hits = np.add.reduceat(d.I[flat].astype(np.int64), starts, axis=0)
    prot = d.prot[flat[starts]]
    for r in np.sort(leftovers):
        r = int(r)
        contrib = inside * hits
        counts = contrib.sum(axis=0)
        new_inside = inside & d.G[r]
        new_contrib = new_inside * (hits + d.I[r])
        new_counts = counts - contrib + new_contrib
        ok = (prot == d.prot[r]) & (new_counts >= d.lower).all(axis=1)
        within = ok & (new_counts <= d.upper).all(axis=1)
        if within.any() or strict:  # else Integrate restores the upper bounds afterwards
            ok = within
        if not ok.any():
            return clusters, (
                f"record {d.instance.row_ids[r]!r} is left over (fewer than k={d.k} records of its protected "
                "value remain outside the diverse clustering) and joining any class would break a lower bound."
            )
        same = lo == hi
        breaks = same & (lo != d.codes[r])
        cost = (breaks * (sizes[:, None] + 1) + ~same).sum(axis=1)
        best = int(np.flatnonzero(ok)[np.argmin(cost[ok])])
        clusters[best] = np.append(clusters[best], r)
        lo[best] = np.minimum(lo[best], d.codes[r])
        hi[best] = np.maximum(hi[best], d.codes[r])
        inside[best] = new_inside[best]
        hits[best] = hits[best] + d.I[r]
        sizes[best] += 1
    return clusters, None


def release_by_suppression(d: Problem, chosen: list[np.ndarray], starred: dict[str, np.ndarray],
                           status: Status, bound: int | None, anonymize: str, kmember_max_rows: int, rng,
                           deadline: float | None, planned: list | None = None,
                           finish_by: float | None = None) -> tuple[Release, set] | tuple[Status, str]:
    """Anonymize and Suppress (Alg. 1, lines 3-5) around the diverse clustering `chosen`.

    The records outside it are clustered (:func:`anonymize_rest`), those left over join
    a cluster (:func:`attach`), and every cluster releases what its records share,
    ``*`` elsewhere and on the voluntary stars `starred` (per attribute, the records of
    whole starred clusters).

    `planned` gives, per cluster of `chosen`, the constraint attributes whose counts the
    clustering relies on (None, the default, for every attribute it shares); the rest
    relies on none.
    Starring, in every class, the constraint attributes it shares beyond its plan brings
    each count back to the plan's: those (class, attribute) pairs are returned as the
    fallback of Integrate.

    The clustering of the rest stops at `deadline`; the table and the fallback pairs
    are built after it unless `finish_by` (default `deadline`) has passed: the caller
    sets it so that they, and what it does with them, end within its time margin.

    Returns (Release with `status` and `bound`, whose provenance counts the diverse
    clusters, their records and the left-over records; the fallback pairs), or (status,
    reason) when some left-over record fits nowhere (INFEASIBLE) or `finish_by` passed
    during the clustering of the rest (UNKNOWN, the release not built).
    """
    covered = np.zeros(d.n, dtype=bool)
    for c in chosen:
        covered[c] = True
    rest = np.flatnonzero(~covered)
    rest_clusters, leftovers, rest_method = anonymize_rest(d, rest, anonymize, kmember_max_rows, rng,
                                                           deadline)
    finish_by = deadline if finish_by is None else finish_by
    if finish_by is not None and time.perf_counter() >= finish_by:
        # The rest's clustering (0.02-0.025 s by sorted blocks on UCI Adult) ended too
        # late for the table and the fallback pairs (0.015-0.02 s more): not built.
        return Status.UNKNOWN, "the clustering of the records outside the diverse clustering"
    clusters = list(chosen) + rest_clusters
    if len(leftovers):
        clusters, why = attach(d, clusters, leftovers, starred=starred)
        if why is not None:
            return Status.INFEASIBLE, f"DIVA could not complete the release: {why}"
    groups = np.empty(d.n, dtype=np.int64)
    for g, c in enumerate(clusters):
        groups[c] = g
    # A voluntary star covers its whole cluster, records that joined it included.
    starred = {a: (np.bincount(groups, weights=mask, minlength=len(clusters)) > 0)[groups]
               for a, mask in starred.items()}
    table = generalize_partition(d.instance, groups, recoding="suppress", starred=starred or None)
    info = {
        "diverse_clusters": len(chosen),
        "diverse_records": int(covered.sum()),
        "rest_anonymizer": rest_method,
        "leftovers": len(leftovers),
    }
    release = Release(table=table, groups=groups, status=status, bound=bound, provenance=info)
    return release, _unplanned(d, clusters, len(chosen), planned)


def _unplanned(d: Problem, clusters: list[np.ndarray], n_chosen: int, planned: list | None) -> set:
    """(class, attribute) pairs where a class shares a constraint attribute beyond its plan."""
    attrs = sorted({a for e in d.encoded for a in e.attributes})
    if not clusters or not attrs:
        return set()
    cols = [d.attr_index[a] for a in attrs]
    flat, starts, _ = d.flatten(clusters)
    sub = d.codes[:, cols][flat]
    beyond = np.minimum.reduceat(sub, starts, axis=0) == np.maximum.reduceat(sub, starts, axis=0)
    allowed = np.zeros_like(beyond)
    allowed[:n_chosen] = True
    if planned is not None:
        position = {a: j for j, a in enumerate(attrs)}
        for g, plan in enumerate(planned):
            if plan is not None:
                allowed[g] = False
                allowed[g, [position[a] for a in plan]] = True
    beyond &= ~allowed
    return {(int(g), attrs[j]) for g, j in zip(*np.nonzero(beyond))}
