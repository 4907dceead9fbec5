"""DIVA's Suppress and Anonymize steps (Milani, Huang, Chiang, EDBT 2021, Alg. 1-2):
the records outside the diverse clustering are clustered by k-member (or Mondrian, for
large tables); fewer than k left-over records of a protected value join the cluster
that costs fewest stars without breaking a lower bound; and every cluster releases the
values its records share and ``*`` elsewhere.
"""

from __future__ import annotations

import numpy as np

from ...models.requirements import KAnonymity
from ...release import Release, Status, generalize_partition
from ..kmember import RecordSpace, kmember_clusters
from ..mondrian import mondrian
from .problem import Problem

__all__ = ["ANONYMIZERS", "anonymize_rest", "attach", "release_by_suppression"]

#: How the records outside the diverse clustering are anonymized ("auto": k-member up
#: to ``kmember_max_rows`` records, Mondrian beyond).
ANONYMIZERS = ("auto", "kmember", "mondrian")


def anonymize_rest(d: Problem, rest: np.ndarray, anonymizer: str, kmember_max_rows: int, rng, deadline):
    """Clusters of the rest (each >= k, protected-pure), the left-over records
    (protected values with fewer than k of them in the rest) and the anonymizer used
    ("kmember", "mondrian", or "none" when every record is left over)."""
    clusters, leftovers = [], []
    parts = []
    for p in np.unique(d.prot[rest]):
        part = rest[d.prot[rest] == p]
        (parts if len(part) >= d.k else leftovers).append(part)
    if not parts:
        return clusters, np.concatenate(leftovers) if leftovers else np.zeros(0, dtype=np.int64), "none"
    n_rest = sum(len(p) for p in parts)
    method = anonymizer if anonymizer != "auto" else ("kmember" if n_rest <= kmember_max_rows else "mondrian")
    if method == "kmember":
        space = RecordSpace(d.instance)
        for part in parts:
            found, _ = kmember_clusters(space, part, d.k, rng=rng, deadline=deadline)
            clusters.extend(found)
    else:
        rows = np.sort(np.concatenate(parts))
        sub = d.instance.subset(d.instance.row_ids[rows])
        release = mondrian(sub, [KAnonymity(d.k)])
        groups = np.asarray(release.groups)
        for g in np.unique(groups):
            clusters.append(rows[groups == g])
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
                           deadline: float | None) -> Release | tuple[Status, str]:
    """Anonymize and Suppress (Alg. 1, lines 3-5) around the diverse clustering `chosen`.

    The records outside it are clustered (:func:`anonymize_rest`), those left over join
    a cluster (:func:`attach`), and every cluster releases what its records share,
    ``*`` elsewhere and on the voluntary stars `starred` (per attribute, the records of
    whole starred clusters). Returns a Release with `status` and `bound` whose
    provenance counts the diverse clusters, their records and the left-over records, or
    (status, reason) when some left-over record fits nowhere.
    """
    covered = np.zeros(d.n, dtype=bool)
    for c in chosen:
        covered[c] = True
    rest = np.flatnonzero(~covered)
    rest_clusters, leftovers, rest_method = anonymize_rest(d, rest, anonymize, kmember_max_rows, rng,
                                                           deadline)
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
    return Release(table=table, groups=groups, status=status, bound=bound, provenance=info)
