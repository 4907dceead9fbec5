"""DIVA's Clusterings(sigma, R) (Milani, Huang, Chiang, EDBT 2021, §3.3): the candidate
clusterings of a diversity constraint's target records, given the colors chosen so far.

The paper leaves Clusterings unspecified; this follows docs/papers.md, DV-1 (see
:func:`fairanon.methods.diva.diva`, Notes): small pools of target records are enumerated
(every minimal clustering, fewest stars first), larger ones are sorted and cut into blocks
of k..2k-1 records (:func:`_chunk`), grown by free records when the blocks run out
(:func:`_grow`). :func:`sorted_blocks` cuts whole parts of a table the same way (the
anonymizer of large rests).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence

import networkx as nx
import numpy as np

from ..._validation import check_int
from ...exceptions import InvalidParameterError
from ...instances.instance import Instance
from ...models.diversity import encode_constraints
from ...models.requirements import Requirement, validate_requirements
from .graph import encoded_graph
from .precheck import k_of
from .problem import Problem

__all__ = ["candidate_clusterings", "clusterings", "sorted_blocks"]


class _TooMany(Exception):
    """An enumeration of clusterings outgrew its limit."""


def candidate_clusterings(d: Problem, v: int, rows: np.ndarray, need: int, room: int, counts,
                          colored: set, graph: nx.Graph, value_order: str, rng, cap: int, spare=None,
                          deadline: float | None = None):
    """Clusterings(sigma_v, R) given the colors chosen so far, lazily, cheapest first.

    Small pools are enumerated exactly (every minimal clustering, as in the paper's
    examples); larger ones are chunked after sorting the records so that clusters agree
    on many attributes, in several variants (see :func:`fairanon.methods.diva.diva`, Notes),
    until `deadline` (a ``time.perf_counter`` value).
    """
    listed = _enumerate(d, rows, need, room, limit=4 * cap + 64)
    if listed is not None:
        if value_order == "random":
            order = rng.permutation(len(listed))
        else:
            order = sorted(range(len(listed)), key=lambda i: (listed[i][0], listed[i][1]))
        for i in order:
            yield [np.array(c, dtype=np.int64) for c in listed[i][1]]
        return
    # Cells: records in the same uncolored neighbours' target sets (those sharing most
    # records with v's pool first), so that a cluster inside a cell counts for all of
    # them too; within a cell, records sorted on the attributes with fewest values first.
    uncolored = [u for u in graph[v] if u not in colored]
    overlap = {u: int(d.I[rows, u].sum()) for u in uncolored}
    uncolored.sort(key=lambda u: (-overlap[u], u))
    members = [d.I[rows, u] for u in uncolored]
    by_card = sorted(range(len(d.gen)), key=lambda j: (d.cardinality[j], j))
    near = sorted({d.attr_index[a] for u in graph[v] for a in d.encoded[u].attributes},
                  key=lambda j: (d.cardinality[j], j))
    others = [j for j in by_card if j not in near]
    variants = [] if value_order == "random" else [
        (members, by_card, "conflict"), (members, by_card, "cost"), ([], others + near, "cost")]
    for _ in range(cap):
        if deadline is not None and time.perf_counter() > deadline:
            return
        if variants:
            cells, attrs, rank = variants.pop(0)
        else:
            cells = [members[j] for j in rng.permutation(len(members))]
            attrs, rank = [int(j) for j in rng.permutation(len(d.gen))], "random"
        clustering = _chunk(d, v, rows, need, room, counts, cells, attrs, rank, uncolored, rng, spare)
        if clustering is not None:
            yield clustering


def _blocks(d: Problem, keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Cut a sorted sequence into blocks of k..2k-1 consecutive records, each as
    homogeneous as possible on `keys` (per position; the protected value first): runs
    equal on a longer prefix of the keys are cut first, and what their cuts leave over
    (fewer than k records each) is cut with the other records of the shorter prefix.
    Returns the block of every position (-1: left out, fewer than k records of its
    protected value remain; blocks numbered in order of position) and the block sizes.

    One vectorized pass per prefix length, longest first: the records not yet in a
    block are grouped by the prefix, and every group of k or more is cut into blocks
    of k..2k-1 sizes as even as possible."""
    k = d.k
    n = len(keys[0])
    block_of = np.full(n, -1, dtype=np.int64)
    if not n:
        return block_of, np.zeros(0, dtype=np.int64)
    prefix_ids = []
    change = np.zeros(n, dtype=bool)
    for col in keys:
        change = change | np.r_[True, col[1:] != col[:-1]]
        prefix_ids.append(np.cumsum(change) - 1)
    remaining = np.ones(n, dtype=bool)
    n_blocks = 0
    for ids in reversed(prefix_ids):
        pos = np.flatnonzero(remaining)
        if not len(pos):
            break
        group = ids[pos]
        counts = np.bincount(group)
        take = counts[group] >= k
        pos, group = pos[take], group[take]
        if not len(pos):
            continue
        # Rank of each record in its group (positions are sorted, groups contiguous).
        first = np.r_[True, group[1:] != group[:-1]]
        starts = np.flatnonzero(first)
        rank = np.arange(len(pos)) - np.repeat(starts, np.diff(np.r_[starts, len(pos)]))
        m = counts[group]
        q = m // k
        base = k + (m - q * k) // q
        n_big = (m - q * k) % q
        big = base + 1
        local = np.where(rank < n_big * big, rank // big, n_big + (rank - n_big * big) // base)
        offset = np.cumsum(np.r_[0, q[starts][:-1]])
        block_of[pos] = n_blocks + np.repeat(offset, np.diff(np.r_[starts, len(pos)])) + local
        n_blocks += int(q[starts].sum())
        remaining[pos] = False
    # Number the blocks in order of their first position.
    placed = block_of >= 0
    first_pos = np.full(n_blocks, n, dtype=np.int64)
    np.minimum.at(first_pos, block_of[placed], np.flatnonzero(placed))
    renumber = np.empty(n_blocks, dtype=np.int64)
    renumber[np.argsort(first_pos, kind="stable")] = np.arange(n_blocks)
    block_of[placed] = renumber[block_of[placed]]
    return block_of, np.bincount(block_of[placed], minlength=n_blocks).astype(np.int64)


def sorted_blocks(d: Problem, parts: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Classes of k..2k-1 records inside each of `parts` (each protected-pure with at
    least k records): the records are sorted by part, then by the attributes with fewest
    values first, and cut into blocks as :func:`_blocks` does with the part and every
    attribute as keys (records agreeing on more of them are blocked first); the few
    records of a part that no block takes join the block before them (or after).
    O(n log n) for n records."""
    parts = [np.asarray(p, dtype=np.int64) for p in parts if len(p)]
    if not parts:
        return []
    rows = np.concatenate(parts)
    part_id = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
    by_card = sorted(range(len(d.gen)), key=lambda j: (d.cardinality[j], j))
    keys = [part_id] + [d.codes[rows, j] for j in by_card]
    order = np.lexsort(keys[::-1])
    block_of, _ = _blocks(d, [key[order] for key in keys])
    # Records left out (fewer than k left of a part): the nearest block of their part.
    ordered_part = part_id[order]
    missing = np.flatnonzero(block_of < 0)
    if len(missing):
        known = np.flatnonzero(block_of >= 0)
        before = np.searchsorted(known, missing) - 1
        for m, b in zip(missing, before):
            prev = known[b] if b >= 0 else -1
            if prev >= 0 and ordered_part[prev] == ordered_part[m]:
                block_of[m] = block_of[prev]
            else:
                nxt = known[b + 1]
                block_of[m] = block_of[nxt]
    sorted_rows = rows[order]
    by_block = np.argsort(block_of, kind="stable")
    cuts = np.flatnonzero(np.diff(block_of[by_block])) + 1
    return [np.sort(c) for c in np.split(sorted_rows[by_block], cuts)]


def _chunk(d: Problem, v: int, rows: np.ndarray, need: int, room: int, counts, cells: list[np.ndarray], attrs,
           rank: str, uncolored: list[int], rng, spare=None) -> list[np.ndarray] | None:
    """One candidate clustering of `rows` (free target records of node v) adding
    `need`..`room` records to v's count: sort the records (protected value, the `cells`
    keys, then `attrs`), cut them into blocks (:func:`_blocks`), take the best-ranked
    blocks that keep every upper bound (and hide no more target records of a node than
    its `spare`) until `need` is reached, then trim blocks above k records down to
    `need`, or grow blocks with free records when the blocks run out."""
    k = d.k
    levels = [d.prot[rows]] + [np.asarray(c, dtype=np.int64) for c in cells]
    keys = [d.codes[rows, j] for j in reversed(attrs)] + levels[::-1]
    if rank == "random":
        keys.insert(0, rng.random(len(rows)))
    order = np.lexsort(keys)
    ordered = rows[order]
    block_of, sizes = _blocks(d, [key[order] for key in levels])
    if not len(sizes):
        return None
    members = np.argsort(block_of, kind="stable")[np.sum(block_of < 0):]
    flat = ordered[members]
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    stars = d.stars(flat, starts, sizes)
    contrib = d.contributions(flat, starts)
    per_row = stars / sizes
    if rank == "conflict" and uncolored:
        # Records of uncolored neighbours a block would hide from them (it is not
        # homogeneous on their targets): each eats into their slack.
        hits = np.add.reduceat(d.I[flat][:, uncolored].astype(np.int64), starts, axis=0)
        lost = (hits - contrib[:, uncolored]).sum(axis=1)
        order = np.lexsort((np.arange(len(sizes)), per_row, lost))
    elif rank == "random":
        order = np.lexsort((rng.random(len(sizes)), per_row))
    else:
        order = np.lexsort((np.arange(len(sizes)), per_row))
    rooms = d.upper - counts
    mine = contrib[:, v]
    others = np.delete(np.arange(contrib.shape[1]), v)
    if spare is None:
        spare = np.full(contrib.shape[1], np.inf)
    hidden = np.add.reduceat(d.I[flat].astype(np.int64), starts, axis=0) - contrib
    fast = np.cumsum(mine[order])
    stop = int(np.searchsorted(fast, need)) + 1
    head = order[:stop]
    if (stop <= len(order) and (contrib[head][:, others].sum(axis=0) <= rooms[others]).all()
            and (hidden[head].sum(axis=0) <= spare).all()):
        picked = list(head)
    else:
        picked, left, afford, total = [], rooms.copy(), spare.copy(), 0
        for b in order:
            if total >= need:
                break
            if (contrib[b, others] <= left[others]).all() and (hidden[b] <= afford).all() and total + k <= room:
                picked.append(int(b))
                left -= contrib[b]
                afford -= hidden[b]
                total += int(mine[b])
    clusters = [flat[starts[b] : starts[b] + sizes[b]] for b in picked]
    total = sum(len(c) for c in clusters)
    # Trim blocks above k (removing records keeps a block homogeneous) toward `need`.
    excess = total - need
    for i in range(len(clusters)):
        if excess <= 0:
            break
        cut = min(excess, len(clusters[i]) - k)
        if cut > 0:
            clusters[i] = clusters[i][: len(clusters[i]) - cut]
            excess -= cut
    total = sum(len(c) for c in clusters)
    if total > room:
        return None
    if total < need:
        clusters = _grow(d, clusters, ordered, need - total, counts)
    return clusters


def _grow(d: Problem, clusters: list[np.ndarray], ordered: np.ndarray, deficit: int, counts) -> list[np.ndarray] | None:
    """Add `deficit` free records of `ordered` to the clusters (each up to 2k - 1
    records, same protected value), fewest new stars first, keeping every upper bound;
    None if that is impossible. Candidates: the free records nearest the clusters in the
    sorted order (at most 2048), each with the clusters within a few places of it."""
    k = d.k
    if not clusters or deficit > 4 * k:  # growing is a repair, not a way to build clusters
        return None
    taken = np.zeros(len(ordered), dtype=bool)
    first_pos = np.empty(len(clusters), dtype=np.int64)
    index = {int(r): i for i, r in enumerate(ordered)}
    for i, c in enumerate(clusters):
        pos = [index[int(r)] for r in c]
        taken[pos] = True
        first_pos[i] = min(pos)
    free = np.flatnonzero(~taken)
    if len(free) < deficit:
        return None
    near = taken[np.maximum(free - 1, 0)] | taken[np.minimum(free + 1, len(ordered) - 1)]
    free = np.concatenate([free[near], free[~near]])[:2048]
    by_pos = np.argsort(first_pos, kind="stable")
    window = min(len(clusters), deficit + 2, 16)
    slot = np.searchsorted(first_pos[by_pos], free)
    cand = slot[:, None] + np.arange(-window, window)[None, :]
    valid = (cand >= 0) & (cand < len(clusters))
    ci = by_pos[cand[valid]]
    rows = ordered[np.repeat(free, valid.sum(axis=1))]
    out = list(clusters)
    flat, starts, sizes = d.flatten(out)
    lo = np.minimum.reduceat(d.codes[flat], starts, axis=0)
    hi = np.maximum.reduceat(d.codes[flat], starts, axis=0)
    inside = np.minimum.reduceat(d.G[flat].astype(np.int8), starts, axis=0).astype(bool)
    hits = np.add.reduceat(d.I[flat].astype(np.int64), starts, axis=0)
    prot = d.prot[flat[starts]]
    total = counts + (inside * hits).sum(axis=0)
    for _ in range(deficit):
        # Every candidate pair at once: new stars, and the counts after the move.
        same = lo[ci] == hi[ci]
        cost = ((same & (lo[ci] != d.codes[rows])) * (sizes[ci, None] + 1) + ~same).sum(axis=1).astype(float)
        after = (inside[ci] & d.G[rows]) * (hits[ci] + d.I[rows])
        fits = ((total - inside[ci] * hits[ci] + after) <= d.upper).all(axis=1)
        cost[~fits | (sizes[ci] >= 2 * k - 1) | (d.prot[rows] != prot[ci])] = np.inf
        if not len(cost) or not np.isfinite(cost.min()):
            return None
        j = int(np.argmin(cost))
        c, r = int(ci[j]), int(rows[j])
        total = total - inside[c] * hits[c] + after[j]
        out[c] = np.append(out[c], r)
        lo[c], hi[c] = np.minimum(lo[c], d.codes[r]), np.maximum(hi[c], d.codes[r])
        inside[c] &= d.G[r]
        hits[c] += d.I[r]
        sizes[c] += 1
        keep = rows != r
        ci, rows = ci[keep], rows[keep]
    return out


def _enumerate(d: Problem, rows: np.ndarray, need: int, room: int, *, limit: int):
    """Every minimal clustering of `rows` (stars, clusters), or None if there are too
    many. Minimal: removing any cluster drops the total below `need` [DIVA §3.3]."""
    k = d.k
    clusters = []
    for p in np.unique(d.prot[rows]):
        part = sorted(rows[d.prot[rows] == p].tolist())
        for size in range(k, min(2 * k - 1, len(part)) + 1):
            if math.comb(len(part), size) + len(clusters) > 400:
                return None
            clusters.extend(itertools.combinations(part, size))
    clusters.sort()
    if not clusters:
        return []
    flat, starts, sizes = d.flatten([np.array(c) for c in clusters])
    stars = d.stars(flat, starts, sizes)
    out = []

    def walk(start: int, used: set, chosen: list, total: int, cost: int) -> None:
        for i in range(start, len(clusters)):
            c = clusters[i]
            if used.intersection(c):
                continue
            grown = total + len(c)
            if grown >= need:
                smallest = min([len(x) for x in chosen] + [len(c)])
                if grown <= room and grown - smallest < need:
                    out.append((cost + int(stars[i]), tuple(chosen) + (c,)))
                    if len(out) > limit:
                        raise _TooMany
            else:
                walk(i + 1, used.union(c), chosen + [c], grown, cost + int(stars[i]))

    try:
        walk(0, set(), [], 0, 0)
    except _TooMany:
        return None
    return out


def clusterings(instance: Instance, requirements: Sequence[Requirement], constraint: int, *,
                limit: int = 16) -> list[list[list]]:
    """DIVA's Clusterings(sigma, R) before any color is chosen: candidate clusterings of
    the `constraint`-th diversity constraint, fewest stars first, as lists of record ids.

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        The diversity constraints and KAnonymity (k; default 1).
    constraint : int
        Position of the constraint among the diversity constraints.
    limit : int, default=16

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> clusterings(inst, [fa.KAnonymity(2), *diva_sigma()], 0)  # sigma_1 = (ETH[Asian], 2, 5)
    [[[8, 10]], [[8, 9]], [[9, 10]], [[8, 9, 10]]]
    """
    requirements = validate_requirements(instance, requirements, caller="clusterings")
    encoded = [e for e in encode_constraints(instance, requirements) if not e.fixed]
    if not 0 <= constraint < len(encoded):
        raise InvalidParameterError(
            f"The 'constraint' parameter of clusterings must be the position of one of the {len(encoded)} "
            f"diversity constraints whose targets can be suppressed. Got {constraint!r} instead."
        )
    d = Problem(instance, encoded, k_of(requirements))
    e = encoded[constraint]
    if e.lower <= 0:
        return [[]]
    gen = candidate_clusterings(d, constraint, d.targets[constraint], e.lower, e.upper,
                                np.zeros(len(encoded), dtype=np.int64), set(), encoded_graph(encoded),
                                "cost", np.random.default_rng(0), check_int(limit, "limit", "clusterings", low=1))
    ids = instance.row_ids
    return [[sorted(ids[c].tolist()) for c in clustering] for clustering in itertools.islice(gen, limit)]
