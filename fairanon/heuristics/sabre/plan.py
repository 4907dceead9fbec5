"""Sabre's redistribution: the plan of the equivalence classes as vectors of per-bucket
counts (Cao, Karras, Kalnis, Tan, VLDB J. 2011; docs/papers.md, B-3).

The counts of the whole table are halved recursively (:func:`halve`) while both halves
pass a test, for Sabre that they hold at least k records and that the sound EMD bound of
:class:`_PlanBound` on any class with those counts is at most t (:func:`plan_classes`;
dSabre passes its own split rule and test).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from scipy import sparse

from ...exceptions import InvalidParameterError
from ...models import measures as M
from .buckets import Bucketing

__all__ = ["halve", "plan_classes"]


class _PlanBound:
    """Sound EMD upper bound of any class with given per-bucket counts (docs/papers.md,
    B-3): Bound(x) = D(P', Q) + Σ_B (u_B / w_B) WC(B), where P' spreads each bucket's
    share u_B = x_B / |x| over the bucket like Q does.

    P' - Q is c_v a_B at every value v of bucket B, with a_B = u_B / w_B - 1 / N, so
    D(P', Q) is read from per-bucket sums made once instead of a row over the m values
    per plan (O(plans x m) per split: 118 s CPU at 100,000 values):

    - equal: D = ½ Σ_B |a_B| w_B;
    - hierarchical: a node within one bucket B adds its edges times |a_B| C(N), so those
      nodes are summed per bucket once; a node over several buckets adds its edges
      times |Σ_B a_B C(N ∩ B)| (a sparse nodes x buckets matrix);
    - ordered, buckets being runs of values in order: the prefix sum at value i of
      bucket B is P_B + a_B (G_i - G_{s_B}) (G: the global prefix counts, P_B: the sum of
      the buckets before), of one sign on each side of one point of the run, found by
      binary search; each side is summed from prefix sums of the steps and of the
      steps times G. Other bucketings take the row over the values.
    """

    def __init__(self, bucketing: Bucketing, ground: M.EMDGround):
        self.b = bucketing
        self.ground = ground
        self.total = int(bucketing.counts.sum())
        # the records of each bucket, w_B, in one pass over the values (Bucketing.sizes
        # sums bucket by bucket: 6 s CPU over Sabre's stages at 100,000 values)
        self.sizes = np.bincount(bucketing.bucket_of, weights=bucketing.counts,
                                 minlength=bucketing.n_buckets).astype(np.int64)
        self.c = bucketing.counts.astype(float)
        self.q = self.c / self.total
        self.share = self.c / self.sizes[bucketing.bucket_of]  # c_v / W_B(v)
        # WC(B) / w_B: a quotient of two integers below 2^53, correctly rounded as a
        # Fraction's float is
        self.wc_over_w = bucketing.wc_num.astype(np.int64) / (self.sizes * bucketing.scale)
        self._runs = None
        if ground.distance == "hierarchical":
            self._tree_sums()
        elif ground.distance == "ordered":
            self._ordered_sums()

    def _tree_sums(self) -> None:
        g, counts = self.ground, self.b.counts.astype(np.int64)
        at = self.b.bucket_of[g.order]  # bucket at each depth-first position
        cum = np.concatenate([[0], np.cumsum(counts[g.order])])
        lo, hi = g.node_lo, g.node_hi
        bounds = np.column_stack([lo, hi]).reshape(-1)  # reduceat over [lo, hi), a sentinel at m
        first = np.minimum.reduceat(np.append(at, 0), bounds)[::2] if len(lo) else lo
        last = np.maximum.reduceat(np.append(at, 0), bounds)[::2] if len(lo) else lo
        single = (first == last) | (hi <= lo)
        within = (g.weights[single] * (cum[hi[single]] - cum[lo[single]])).astype(float)
        self.tree_within = np.bincount(first[single], weights=within, minlength=self.b.n_buckets)
        multi = np.flatnonzero(~single)
        # C(N ∩ B) of every node over several buckets, from its positions' buckets: the
        # positions of a node in runs of one bucket (a bucket of the hierarchical greedy
        # is a subtree, one run), each run's records from the prefix counts; the sparse
        # matrix sums the runs of a node and bucket (every node's positions were sorted
        # at every stage before)
        change = np.flatnonzero(np.diff(at)) + 1  # depth-first positions where the bucket changes
        begin = np.searchsorted(change, lo[multi], side="right")
        inner = np.searchsorted(change, hi[multi], side="left") - begin  # changes inside each node
        runs = inner + 1
        node = np.repeat(np.arange(len(multi)), runs)
        cut = change[np.repeat(begin, inner) + (np.arange(int(inner.sum())) - np.repeat(np.cumsum(inner) - inner, inner))]
        is_first = np.zeros(len(node), dtype=bool)
        is_first[np.cumsum(runs) - runs] = True
        is_last = np.roll(is_first, -1)
        run_lo = np.empty(len(node), dtype=np.int64)
        run_hi = np.empty(len(node), dtype=np.int64)
        run_lo[is_first], run_lo[~is_first] = lo[multi], cut
        run_hi[is_last], run_hi[~is_last] = hi[multi], cut
        weight = (cum[run_hi] - cum[run_lo]).astype(float)
        self.tree_cross = sparse.csr_matrix((weight, (node, at[run_lo])), shape=(len(multi), self.b.n_buckets))
        self.tree_cross.sum_duplicates()  # one entry per node and bucket, by bucket
        self.tree_cross_weights = g.weights[multi].astype(float)

    def _ordered_sums(self) -> None:
        m, buckets = self.ground.m, self.b.buckets
        start = np.array([int(b[0]) for b in buckets], dtype=np.int64)
        stop = np.array([int(b[-1]) + 1 for b in buckets], dtype=np.int64)
        if not all(len(b) == e - s for b, s, e in zip(buckets, start, stop)):
            return  # buckets that are not runs take the row over the values
        order = np.argsort(start)
        self._runs = order, start[order], np.minimum(stop[order], m - 1)
        counts = self.b.counts.astype(np.int64)
        self.glob = np.cumsum(counts)  # G_i, counts up to value i
        steps = self.ground.steps.astype(float)
        self.step_sum = np.concatenate([[0.0], np.cumsum(steps)])
        self.step_glob = np.concatenate([[0.0], np.cumsum(steps * self.glob[: m - 1])])

    def _distance(self, a: np.ndarray) -> np.ndarray:
        """D(P', Q) of each row of a (rows x buckets)."""
        g = self.ground
        if g.distance == "equal":
            return 0.5 * (np.abs(a) @ self.sizes.astype(float))
        if g.distance == "hierarchical":
            cross = np.abs(self.tree_cross @ a.T).T @ self.tree_cross_weights
            return (np.abs(a) @ self.tree_within + cross) / (2 * g.height)
        if self._runs is None:
            r = a[:, self.b.bucket_of] * self.c
            return g.ordered_sum(r) / g.scale
        order, start, stop = self._runs
        a = a[:, order]
        before = np.cumsum(a * self.sizes[order].astype(float), axis=1) - a * self.sizes[order]
        base = np.where(start > 0, self.glob[np.maximum(start - 1, 0)], 0).astype(float)
        # within [start, stop): R_i = before + a (G_i - base); its sign changes where
        # G_i = base - before / a, at most once since G grows
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = np.where(a != 0, base - before / a, np.inf)
        split = np.clip(np.searchsorted(self.glob, cross.reshape(-1), side="left").reshape(cross.shape),
                        start, np.maximum(stop, start))
        stop = np.maximum(stop, start)

        def part(lo, hi):  # Σ_{lo <= i < hi} (before + a (G_i - base)) step_i
            steps = self.step_sum[hi] - self.step_sum[lo]
            return (before - a * base) * steps + a * (self.step_glob[hi] - self.step_glob[lo])

        return (np.abs(part(start, split)) + np.abs(part(split, stop))).sum(axis=1) / g.scale

    def values(self, plans: np.ndarray) -> np.ndarray:
        plans = np.atleast_2d(plans).astype(float)
        u = plans / plans.sum(axis=1, keepdims=True)
        a = u / self.sizes - 1 / self.total
        return self._distance(a) + u @ self.wc_over_w

    def exact(self, plan: np.ndarray) -> Fraction:
        plan = [int(v) for v in plan]
        size = sum(plan)
        sizes = [int(s) for s in self.sizes]
        u = [Fraction(x, size) for x in plan]
        r = [
            u[b] * int(c) / sizes[b] - Fraction(int(c), self.total)
            for c, b in zip(self.b.counts, self.b.bucket_of)
        ]
        g = self.ground
        if g.distance == "equal":
            d = sum(abs(v) for v in r) / 2
        elif g.distance == "ordered":
            acc, d = Fraction(0), Fraction(0)
            for v, step in zip(r, g.steps):
                acc += v
                d += abs(acc) * int(step)
            d /= g.scale
        else:
            d = g.tree_sum(np.array(r, dtype=object))[0] / (2 * g.height)
        wc = sum(u[i] * Fraction(int(n), sizes[i] * self.b.scale) for i, n in enumerate(self.b.wc_num))
        return d + wc

    def within(self, plans: np.ndarray, t: Fraction) -> np.ndarray:
        plans = np.atleast_2d(plans)
        return M.exact_compare(self.values(plans), lambda i: self.exact(plans[i]), t, "le")


def halve(plans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split per-bucket counts in two; odd counts give their extra unit alternately to
    the left and the right half, in bucket order (docs/papers.md, B-3). Rows of a 2-D
    array are split independently.

    >>> [x.tolist() for x in halve(np.array([4, 5]))], [x.tolist() for x in halve(np.array([3, 1, 1]))]
    ([[2, 3], [2, 2]], [[2, 0, 1], [1, 1, 0]])
    """
    plans = np.asarray(plans, dtype=np.int64)
    odd = plans % 2
    # Within a row, the 1st, 3rd, ... odd count gives its extra unit to the left half.
    first_of_pair = (np.cumsum(odd, axis=-1) % 2 == 1) & (odd == 1)
    left = plans // 2 + first_of_pair
    return left, plans - left


def plan_classes(
    root: np.ndarray,
    allowed: Callable[[np.ndarray], np.ndarray],
    *,
    split: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] = halve,
    deadline: float | None = None,
) -> tuple[list[np.ndarray], bool]:
    """Leaves of the recursive splitting of a count vector, in depth-first order (left
    first).

    Parameters
    ----------
    root : array of int
        Counts per bucket of the whole set.
    allowed : callable
        Takes a matrix of candidate children (one per row) and says which are
        acceptable; a node splits when both its children are.
    split : callable, default=:func:`halve`
        Maps a matrix of nodes to their (left, right) children.
    deadline : float, optional
        A ``time.perf_counter()`` value; nodes not yet split then stay leaves.

    Returns
    -------
    leaves : list of int arrays
    timed_out : bool

    Notes
    -----
    The tree is grown a level at a time, every node of a level in one vectorized call.

    >>> leaves, _ = plan_classes(np.array([4, 5]), lambda x: x.sum(axis=1) >= 2)
    >>> [x.tolist() for x in leaves]
    [[1, 2], [1, 1], [1, 1], [1, 1]]
    """
    level = np.asarray(root, dtype=np.int64)[None, :]
    paths = np.zeros(1, dtype=np.int64)
    done, done_paths, done_depths = [], [], []
    depth, timed_out = 0, False
    while len(level):
        if deadline is not None and time.perf_counter() > deadline:
            timed_out = True
            ok = np.zeros(len(level), dtype=bool)
        else:
            left, right = split(level)
            both = allowed(np.vstack([left, right]))
            ok = both[: len(level)] & both[len(level) :]
        done.append(level[~ok])
        done_paths.append(paths[~ok])
        done_depths.append(np.full(int((~ok).sum()), depth, dtype=np.int64))
        idx = np.flatnonzero(ok)
        if not len(idx):
            break
        level = np.empty((2 * len(idx), level.shape[1]), dtype=np.int64)
        level[0::2], level[1::2] = left[idx], right[idx]
        paths = np.repeat(2 * paths[idx], 2)
        paths[1::2] += 1
        depth += 1
    leaves = np.concatenate(done)
    # A leaf's path, padded to the deepest level, orders the leaves depth first (a
    # node is split only while both halves hold records, so depth < 63).
    keys = np.concatenate(done_paths) << (depth - np.concatenate(done_depths))
    return list(leaves[np.argsort(keys, kind="stable")]), timed_out


def _deadline(time_limit, started: float, caller: str) -> float | None:
    """The ``time.perf_counter()`` value `time_limit` seconds after `started` (None without
    a limit), for :func:`plan_classes`; raises InvalidParameterError, naming `caller`, for a
    time limit that is not a number of seconds >= 0."""
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit >= 0:
        raise InvalidParameterError(
            f"The 'time_limit' parameter of {caller} must be None or a number of seconds in "
            f"[0, inf]. Got {time_limit!r} instead."
        )
    return started + float(time_limit)
