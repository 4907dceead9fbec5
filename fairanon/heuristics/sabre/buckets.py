"""Sabre's bucketization of the sensitive values (Cao, Karras, Kalnis, Tan, VLDB J. 2011;
docs/papers.md, B-3).

The values of the sensitive attribute are partitioned into buckets of similar values,
greedily and top-down, until the EMD upper bound U of an equivalence class drawing from
every bucket in proportion to the bucket sizes is at most t. Buckets are any value sets
(equal ground distance), contiguous runs (ordered) or hierarchy nodes (hierarchical).
:func:`bucketize` returns the first such stage, :func:`bucketize_stages` every later one.
"""

from __future__ import annotations

import bisect
import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["Bucketing", "bucketize", "bucketize_stages"]


@dataclass(frozen=True)
class Bucketing:
    """A partition of the sensitive values into buckets, with each bucket's worst case.

    Attributes
    ----------
    buckets : tuple of ndarray
        Value indices (columns of the global counts) of each bucket, in value order.
    bucket_of : ndarray of int
        The bucket of every value.
    wc_num : ndarray of int
        Numerators of the local worst cases: WC(B) = wc_num[B] / (N * scale).
    scale : int
        The span of the ordered domain (m - 1 over the values present), 1 (equal) or
        the tree height H (hierarchical).
    counts : ndarray of int
        Global counts of the values (N = their sum).
    """

    buckets: tuple
    bucket_of: np.ndarray
    wc_num: np.ndarray
    scale: int
    counts: np.ndarray

    @property
    def n_buckets(self) -> int:
        return len(self.buckets)

    @property
    def sizes(self) -> np.ndarray:
        """Records per bucket in the whole table."""
        return np.array([int(self.counts[b].sum()) for b in self.buckets], dtype=np.int64)

    def upper_bound(self) -> Fraction:
        """U = Σ_B WC(B), the EMD bound of a class drawing proportionally from every bucket."""
        return Fraction(int(self.wc_num.sum()), int(self.counts.sum()) * self.scale)


class _TreeWorstCase:
    """The worst case of a bucket (a node's values present) from per-node sums, without
    the values-by-values table of LCA heights (8 m^2 bytes: 80 GB for 100,000 values).

    For a value v of the bucket under node b, moving the bucket's share onto v costs
    Σ_{u in B} h(LCA(u, v)) c_u, h a node's height (a leaf's 0). h(LCA(u, v)) sums, over
    the nodes X on v's path up to the LCA (v included, the LCA not), w_X = h(parent of
    X) - h(X); u counts in the term of X exactly when it is not under X. So, with C(X)
    the count of the values under X (all in B when X is under b), the cost is
    Σ_X w_X (C(B) - C(X)) over v's path up to b, that is h(b) C(B) - (Q(v) - Q(b)),
    Q(N) the sum of w_X C(X) over the path from depth 1 down to N. O(nodes) to set up,
    O(|B|) per bucket.
    """

    def __init__(self, hierarchy, values: Sequence[str], counts: np.ndarray):
        self.height = hierarchy.height
        self.counts = counts
        leaf = np.array([hierarchy.leaf_index[v] for v in values], dtype=np.int64)
        at = np.zeros(len(hierarchy.leaves) + 1, dtype=np.int64)
        at[hierarchy.leaf_positions[leaf] + 1] = counts
        cum = np.cumsum(at)
        # Each Q is its parent's plus the node's own term, computed a depth at a time
        # over the node arrays (a loop over the nodes took 0.2 s CPU at 111,111 nodes).
        nodes = hierarchy.node_arrays()
        own = cum[nodes.end] - cum[nodes.first]
        q = np.zeros(len(own), dtype=np.int64)
        by_depth = np.argsort(nodes.depth, kind="stable")
        bounds = np.searchsorted(nodes.depth[by_depth], np.arange(self.height + 2))
        for d in range(1, self.height + 1):
            at_d = by_depth[bounds[d] : bounds[d + 1]]
            above = nodes.parent[at_d]
            q[at_d] = q[above] + (nodes.height[above] - nodes.height[at_d]) * own[at_d]
        self.q: dict[str, int] = dict(zip(hierarchy.nodes, q.tolist()))
        self.node_height: dict[str, int] = dict(zip(hierarchy.nodes, nodes.height.tolist()))
        self.q_value = q[nodes.leaf_node[leaf]]

    def __call__(self, node: str, vals: list[int]) -> int:
        """Numerator of WC of the bucket `vals` under `node` (over N * H)."""
        if len(vals) < 2:
            return 0
        size = int(self.counts[vals].sum())
        moved = self.node_height[node] * size - (self.q_value[vals] - self.q[node])
        return int(moved.max())


def bucketize(
    counts: np.ndarray,
    distance: str,
    t: Fraction,
    *,
    hierarchy=None,
    values: Sequence[str] | None = None,
    positions: Sequence[int] | None = None,
    span: int | None = None,
) -> Bucketing:
    """Greedy top-down bucketization of the sensitive values (docs/papers.md, B-3).

    Starting from one bucket holding every value, split one bucket at a time, always
    the split giving the smallest U = Σ_B WC(B), until U <= t (exactly). WC(B) is the
    cost of moving B's share of the global distribution onto its worst single value.

    Parameters
    ----------
    counts : array of int
        Global counts of the m values present, in their order.
    distance : {"equal", "ordered", "hierarchical"}
        Buckets are any value sets (equal), contiguous runs (ordered) or hierarchy
        nodes (hierarchical).
    t : Fraction
    hierarchy, values
        The hierarchy and the value names (hierarchical only).
    positions, span
        Ordered only: the values' ranks in the ordered domain and its span (the
        ground distance is |pos_i - pos_j| / span; default: the m values present,
        0..m-1, span m - 1), as in :meth:`~fairanon.models.measures.EMDGround.ordered`.

    Returns
    -------
    Bucketing
        The first bucketing with U <= t (fewest buckets).

    See Also
    --------
    bucketize_stages : every later stage of the same greedy, down to single values.

    Notes
    -----
    Ordered: O(m) per split with prefix sums, O(m^2) in all. Equal: splitting off the
    most frequent value is always best. Hierarchical: a node splits into its children;
    a bucket's worst case takes O(|B|) from per-node sums (no table of the values' pairs)
    and its best split is found once. Ties go to the lowest bucket, then the lowest cut.

    Examples
    --------
    The salary column of docs/papers.md, B-3 (nine values, one record each):

    >>> b = bucketize(np.ones(9, dtype=int), "ordered", Fraction(3, 10))
    >>> [list(map(int, x)) for x in b.buckets], b.upper_bound()
    ([[0, 1, 2, 3], [4, 5, 6, 7, 8]], Fraction(2, 9))
    """
    return next(bucketize_stages(counts, distance, t, hierarchy=hierarchy, values=values,
                                 positions=positions, span=span))


def bucketize_stages(
    counts: np.ndarray,
    distance: str,
    t: Fraction,
    *,
    hierarchy=None,
    values: Sequence[str] | None = None,
    positions: Sequence[int] | None = None,
    span: int | None = None,
    deadline: float | None = None,
):
    """Every stage of :func:`bucketize`'s greedy from the first with U <= t on, one
    more bucket each, until every value is alone, or until `deadline` (a
    ``time.perf_counter()`` value, read at each stage of the greedy) has passed: then no
    more stages, and none at all if it passed before the first with U <= t.

    More buckets lower U, which leaves the redistribution more room to split classes,
    but each class then draws from more buckets; :func:`~fairanon.heuristics.sabre.sabre`
    picks the stage that plans the most classes.

    >>> [b.n_buckets for b in bucketize_stages(np.ones(9, dtype=int), "ordered", Fraction(3, 10))]
    [2, 3, 4, 5, 6, 7, 8, 9]
    """
    counts = np.asarray(counts, dtype=np.int64)
    m = len(counts)
    total = int(counts.sum())
    t = Fraction(t)
    if distance == "ordered":
        rank = np.arange(m, dtype=np.int64) if positions is None else np.asarray(positions, dtype=np.int64)
        scale = max(m - 1 if span is None else int(span), 1)
        stages = _greedy_ordered(counts, rank)
    elif distance == "equal":
        scale = 1
        stages = _greedy_equal(counts)
    else:
        scale = max(hierarchy.height, 1)
        stages = _greedy_tree(counts, hierarchy, list(values), deadline)
    # The buckets kept in order of their least value, each sorted once as a read-only
    # array, and updated by each stage's split only (every bucket was sorted and
    # converted again at every stage, O(m) in Python per stage: Sabre under equal
    # closeness took 7.9 s CPU at 3,000 values with it, 1.6 s without). `least` holds each bucket's
    # least value in the greedy's own order, to find the one split; bucket_of is read
    # through each bucket's slot (no concatenation of every bucket per stage).
    mins: list[int] = []
    arrays: list[np.ndarray] = []
    worst: list[int] = []
    slots: list[int] = []  # each bucket's slot: a number of its own, for bucket_of
    least: list[int] = []
    slot_of = np.zeros(m, dtype=np.int64)  # each value's bucket's slot
    wc_total = 0

    def place(vals, wc: int) -> int:
        arr = np.sort(np.asarray(vals, dtype=np.int64))
        arr.flags.writeable = False
        low = int(arr[0])
        at = bisect.bisect_left(mins, low)
        slot = made[0]
        made[0] += 1
        slot_of[arr] = slot
        for kept, item in ((mins, low), (arrays, arr), (worst, int(wc)), (slots, slot)):
            kept.insert(at, item)
        return low

    made = [0]  # slots handed out
    for buckets, wcs, split in stages:
        if deadline is not None and time.perf_counter() >= deadline:
            return
        if split is None:  # the first stage: every bucket
            least = [place(vals, wc) for vals, wc in zip(buckets, wcs)]
            wc_total = sum(int(w) for w in wcs)
        else:
            pos, parts = split
            at = bisect.bisect_left(mins, least[pos])
            wc_total -= worst[at]
            for kept in (mins, arrays, worst, slots):
                del kept[at]
            new = buckets[pos : pos + parts]
            least[pos : pos + 1] = [place(vals, wc) for vals, wc in zip(new, wcs[pos : pos + parts])]
            wc_total += sum(int(w) for w in wcs[pos : pos + parts])
        if not _within(wc_total, total, scale, t):
            continue
        rank = np.zeros(made[0], dtype=np.int64)
        rank[np.array(slots, dtype=np.int64)] = np.arange(len(slots))
        yield Bucketing(tuple(arrays), rank[slot_of], np.array(worst, dtype=object), scale, counts)


def _within(num: int, total: int, scale: int, t: Fraction) -> bool:
    """num / (total * scale) <= t, in integers."""
    return int(num) * t.denominator <= t.numerator * total * scale


def _greedy_ordered(counts, rank):
    """Stages (buckets, WC numerators, split) of the ordered greedy: contiguous runs
    (each bucket a range of values). Value j sits at position rank[j] of the ordered
    domain. The split is None first, then (position, parts) of the bucket replaced."""
    m = len(counts)
    c = counts.astype(np.int64)
    pc = np.concatenate([[0], np.cumsum(c)])  # Σ c_j over [0, i)
    pjc = np.concatenate([[0], np.cumsum(c * rank)])  # Σ rank_j c_j over [0, i)

    def wc(a, b):  # numerator of WC([a, b]) (scaled by total * scale)
        s, sj = pc[b + 1] - pc[a], pjc[b + 1] - pjc[a]
        return int(max(sj - rank[a] * s, rank[b] * s - sj))

    def best_cut(a, b):
        # All cuts [a, c] | [c+1, b] at once, the largest reduction (first: lowest cut).
        cs = np.arange(a, b)
        left_s, left_sj = pc[cs + 1] - pc[a], pjc[cs + 1] - pjc[a]
        right_s, right_sj = pc[b + 1] - pc[cs + 1], pjc[b + 1] - pjc[cs + 1]
        left = np.maximum(left_sj - rank[a] * left_s, rank[cs] * left_s - left_sj)
        right = np.maximum(right_sj - rank[cs + 1] * right_s, rank[b] * right_s - right_sj)
        gain = wc(a, b) - (left + right)
        i = int(np.argmax(gain))
        return int(gain[i]), int(cs[i]), int(left[i]), int(right[i])

    buckets, wcs, cache, split = [(0, m - 1)], [wc(0, m - 1)], {}, None
    while True:
        yield [range(a, b + 1) for a, b in buckets], list(wcs), split
        best = None
        for pos, (a, b) in enumerate(buckets):
            if a == b:
                continue
            if (a, b) not in cache:
                cache[(a, b)] = best_cut(a, b)
            if best is None or cache[(a, b)][0] > best[0]:
                best = (cache[(a, b)][0], pos)
        if best is None:
            return
        pos = best[1]
        a, b = buckets[pos]
        _, cut, left, right = cache.pop((a, b))
        buckets[pos : pos + 1] = [(a, cut), (cut + 1, b)]
        wcs[pos : pos + 1] = [left, right]
        split = (pos, 2)


def _greedy_equal(counts):
    """Stages of the equal-distance greedy: WC(B) = Σ_B c - min_B c (over N).

    A stage moves out of its bucket the value whose move lowers WC the most (the first
    such value in the bucket's order). Only the first bucket ever holds two values or
    more (each move leaves the rest first and the value alone after it), so it is the
    one to split. Without value v, WC(B - v) = Σ_B c - c_v - min_(B - v) c, whose
    minimum is min_B c unless v alone holds it; so the best move is read from the
    bucket's sum and two least counts at once (each value's rest summed anew took
    O(m^3): 27 s CPU at 1,000 values, now 1.3 s). Each stage also gives its split:
    None first, then (position, parts) of the bucket it replaced."""
    counts = np.asarray(counts, dtype=np.int64)

    def wc(c):
        return int(c.sum() - c.min()) if len(c) else 0

    def best_move(c, whole):
        """(gain, index) of the best move out of a bucket of counts c (the first of the
        largest)."""
        least = c.min()
        at_least = c == least
        second = least if at_least.sum() > 1 else c[~at_least].min()
        rest_min = np.where(at_least, second, least)
        gain = whole - (int(c.sum()) - c - rest_min)
        i = int(np.argmax(gain))
        return int(gain[i]), i

    rest, c = np.arange(len(counts), dtype=np.int64), counts  # the first bucket and its counts
    buckets, wcs, split = [rest], [wc(c)], None
    while True:
        yield list(buckets), list(wcs), split
        if len(rest) < 2:
            return
        _, i = best_move(c, wcs[0])
        v, rest, c = int(rest[i]), np.delete(rest, i), np.delete(c, i)
        buckets[0:1] = [rest, [v]]
        wcs[0:1] = [wc(c), 0]
        split = (0, 2)


def _greedy_tree(counts, hierarchy, values, deadline: float | None = None):
    """Stages of the hierarchical greedy: buckets are nodes, split into their children
    (each stage with its split, as :func:`_greedy_ordered`'s); none when `deadline` (a
    ``time.perf_counter()`` value) passes during the set-up, read between its blocks
    (its per-node sums, then the first bucket and its split: 0.03 s and 0.05 s CPU at
    100,000 values, where the first read was at the first stage)."""
    if deadline is not None and time.perf_counter() >= deadline:
        return
    wc = _TreeWorstCase(hierarchy, values, counts)
    if deadline is not None and time.perf_counter() >= deadline:
        return
    # The value at each depth-first position (-1: a leaf with no value present), and how
    # many values lie before each position: a node's values are read from its range.
    value_at = np.full(len(hierarchy.leaves), -1, dtype=np.int64)
    value_at[hierarchy.leaf_positions[[hierarchy.leaf_index[v] for v in values]]] = np.arange(len(values))
    present = np.concatenate([[0], np.cumsum(value_at >= 0)])
    leaf_of = hierarchy.depth_first_leaves

    def populated(node) -> bool:
        first, end = hierarchy.leaf_range(node)
        return bool(present[end] > present[first])

    def leaves_under(node):
        # In leaf order, from the node's depth-first range rather than a mask over all leaves.
        first, end = hierarchy.leaf_range(node)
        under = value_at[first:end][np.argsort(leaf_of[first:end], kind="stable")]
        return under[under >= 0].tolist()

    def lowest(node):
        # Move down unary chains: a node with one populated child covers the same values.
        while True:
            kids = [k for k in hierarchy.children[node] if populated(k)]
            if len(kids) != 1:
                return node, kids, leaves_under(node)
            node = kids[0]

    def split(bucket):
        # A bucket's split, its parts' worst cases and its gain, found once: the bucket
        # does not change until split.
        node, kids, vals = bucket
        if node not in cache:
            parts = [lowest(k) for k in kids]
            part_wcs = [wc(p[0], p[2]) for p in parts]
            cache[node] = (wc(node, vals) - sum(part_wcs), parts, part_wcs)
        return cache[node]

    # The buckets that can split, on a heap by gain and then position: the buckets are
    # disjoint subtrees in depth-first order, so a bucket's position follows its first
    # depth-first leaf (`firsts`, in the buckets' order); the largest gain, the first of
    # them, is split, as a scan of every bucket at every stage found it.
    heap: list = []

    def push(bucket, first: int) -> None:
        if bucket[1]:
            heapq.heappush(heap, (-split(bucket)[0], first, bucket))

    cache: dict = {}
    buckets = [lowest(hierarchy.root)]
    wcs = [wc(buckets[0][0], buckets[0][2])]
    firsts = [hierarchy.leaf_range(buckets[0][0])[0]]
    push(buckets[0], firsts[0])
    changed = None
    while True:
        yield [b[2] for b in buckets], list(wcs), changed
        if not heap:
            return
        _, first, bucket = heapq.heappop(heap)
        pos = bisect.bisect_left(firsts, first)
        _, parts, part_wcs = split(bucket)
        del cache[bucket[0]]
        buckets[pos : pos + 1] = parts
        wcs[pos : pos + 1] = part_wcs
        firsts[pos : pos + 1] = [hierarchy.leaf_range(p[0])[0] for p in parts]
        for part, part_first in zip(parts, firsts[pos : pos + len(parts)]):
            push(part, part_first)
        changed = (pos, len(parts))
