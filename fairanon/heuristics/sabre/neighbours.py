"""Nearest-neighbour retrieval in quasi-identifier space for Sabre's materialization
(Cao, Karras, Kalnis, Tan, VLDB J. 2011; docs/papers.md, B-3).

:class:`QISpace` gives every record normalized coordinates over the generalizable
quasi-identifiers; :class:`NeighbourPool` splits the records into buckets and hands out,
bucket by bucket, the live records nearest to a given one, removing them as they are
taken: exact k-nearest neighbours on kd-trees (or a scan for large requests), or an
approximate walk along a Hilbert curve (:func:`hilbert_order`). Shared by Sabre, dSabre
(:mod:`fairanon.heuristics.dsabre`) and the DS bucketization
(:mod:`fairanon.heuristics.bucketization`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._validation import check_option
from ...instances.instance import Instance
from ...models.released import combine_codes

__all__ = ["RETRIEVALS", "TIE_WINDOW", "NeighbourPool", "QISpace", "hilbert_order"]

#: Nearest-neighbour retrieval: exact k-nearest neighbours (kd-trees) or an approximate
#: walk along a Hilbert curve (Sabre's two instantiations, docs/papers.md, B-3).
RETRIEVALS = ("knn", "approx")


# ====================================================================== QI space
class QISpace:
    """Normalized coordinates of the generalizable quasi-identifiers.

    Parameters
    ----------
    instance : Instance
    scale : {"values", "ranks"}, default="values"
        Numeric attributes as (v - min)/(max - min) ("values", docs/papers.md, B-3) or
        as normalized ranks (r - 1)/(|dom| - 1) over the distinct values present
        ("ranks", Ruggieri footnote 5). Ordered and categorical attributes are always
        normalized ranks over their present values, in the attribute's order (the
        hierarchy's leaf order for categorical ones, so that siblings are close).

    Attributes
    ----------
    coords : ndarray of shape (n_rows, d)
        In [0, 1]; one column per generalizable quasi-identifier (a single zero column
        when there is none).
    names : list of str

    Examples
    --------
    >>> space = QISpace(fa.load("ruggieri_loan"), scale="ranks")
    >>> space.names, space.coords[:2].tolist()
    (['purpose', 'emp'], [[0.0, 0.0], [0.0, 0.0]])
    """

    def __init__(self, instance: Instance, scale: str = "values"):
        check_option(scale, "scale", "QISpace", ("values", "ranks"))
        self.names = list(instance.schema.generalizable)
        columns = []
        for name in self.names:
            attr = instance.schema[name]
            codes = instance.codes(name)
            if attr.kind == "numeric" and scale == "values":
                lo, hi = float(codes.min()), float(codes.max())
                columns.append((codes - lo) / (hi - lo) if hi > lo else np.zeros(len(codes)))
                continue
            if attr.kind == "numeric":
                uniq, rank = np.unique(codes, return_inverse=True)
                m = len(uniq)
            else:
                present = np.bincount(codes, minlength=len(attr.domain)) > 0
                rank = (np.cumsum(present) - 1)[codes]
                m = int(present.sum())
            columns.append(rank.reshape(-1) / (m - 1) if m > 1 else np.zeros(len(codes)))
        if not columns:
            columns = [np.zeros(instance.n_rows)]
        self.coords = np.column_stack(columns).astype(float)

    @property
    def dim(self) -> int:
        return self.coords.shape[1]


def hilbert_order(coords: np.ndarray, bits: int | None = None) -> np.ndarray:
    """Positions of the rows of `coords` (in [0, 1]^d) along a Hilbert curve.

    Quantizes every coordinate to `bits` bits (default: as many as fit 64 bits per key,
    at most 16) and sorts by the Hilbert index (Skilling's transpose algorithm,
    AIP Conf. Proc. 707, 2004); ties keep row order.

    >>> hilbert_order(np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])).tolist()
    [0, 2, 1, 3]
    """
    coords = np.asarray(coords, dtype=float)
    n, d = coords.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if bits is None:
        bits = max(1, min(16, 64 // max(d, 1)))
    top = (1 << bits) - 1
    x = np.clip(np.floor(coords * top + 0.5), 0, top).astype(np.uint64)
    # Inverse undo of the Hilbert transform (Skilling's AxestoTranspose), vectorized.
    q = 1 << (bits - 1)
    while q > 1:
        p = np.uint64(q - 1)
        for i in range(d):
            hit = (x[:, i] & np.uint64(q)) != 0
            if i == 0:
                x[:, 0] = np.where(hit, x[:, 0] ^ p, x[:, 0])
                continue
            swap = np.where(hit, np.uint64(0), (x[:, 0] ^ x[:, i]) & p)
            x[:, 0] = np.where(hit, x[:, 0] ^ p, x[:, 0] ^ swap)
            x[:, i] ^= swap
        q >>= 1
    for i in range(1, d):
        x[:, i] ^= x[:, i - 1]
    flip = np.zeros(n, dtype=np.uint64)
    q = 1 << (bits - 1)
    while q > 1:
        flip ^= np.where((x[:, d - 1] & np.uint64(q)) != 0, np.uint64(q - 1), np.uint64(0))
        q >>= 1
    x ^= flip[:, None]
    # The index reads the bit planes from the top, dimension by dimension: pack them
    # into 63-bit words, most significant first, and sort by the words.
    words, word, used = [], np.zeros(n, dtype=np.uint64), 0
    for b in range(bits - 1, -1, -1):
        for i in range(d):
            word = (word << np.uint64(1)) | ((x[:, i] >> np.uint64(b)) & np.uint64(1))
            used += 1
            if used == 63:
                words.append(word)
                word, used = np.zeros(n, dtype=np.uint64), 0
    if used:
        words.append(word)
    order = np.lexsort([np.arange(n)] + words[::-1])
    return order.astype(np.int64)


# ====================================================================== neighbour pools
#: Extra candidate points a nearest-neighbour search fetches to break distance ties by
#: record id; ties that reach beyond them go by id among the fetched candidates and
#: otherwise keep the kd-tree's (deterministic) order.
TIE_WINDOW = 8
# A kd-tree is rebuilt over its live points once 1/_REBUILD of its points are dead: dead
# points crowd the neighbourhoods already used, where later queries land.
_REBUILD = 8
# ... or once _MISSES searches came back short and 1/(8 _REBUILD) of its points are dead.
_MISSES = 32
# A request for dozens of records scans its bucket when it asks for 1/_SCAN_SHARE of it.
_SCAN_SHARE = 64

def _point_ids(coords: np.ndarray) -> np.ndarray:
    """Dense ids of the distinct rows of `coords`, column by column (hashing, O(n d))."""
    key, n_key = np.zeros(len(coords), dtype=np.int64), 1
    for column in coords.T:
        values, codes = np.unique(column, return_inverse=True)
        key, n_key = combine_codes(key, n_key, codes.reshape(-1), len(values))
    return key


class _KnnBucket:
    """Exact nearest neighbours among the live rows of one bucket.

    Identical points are stored once with their rows in id order, so ties between
    duplicates cost nothing; the kd-tree is rebuilt over the live points when
    1/_REBUILD of its points are dead, or sooner when searches keep landing on taken
    records (:meth:`nearest`). Per-point bookkeeping is in Python lists: it is read one
    entry at a time.
    """

    def __init__(self, rows: np.ndarray, coords: np.ndarray, point_ids: np.ndarray, point_of: np.ndarray):
        # point_ids: one id per distinct coordinate vector (equal ids, equal points).
        uniq, first, inverse = np.unique(point_ids[rows], return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        pts = coords[rows[first]] if len(rows) else np.zeros((0, coords.shape[1]))
        order = np.argsort(inverse, kind="stable")  # rows of a point stay in id order
        counts = np.bincount(inverse, minlength=len(uniq))
        start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self.point_rows = rows[order].tolist()
        self.ptr = start.tolist()
        self.end = (start + counts).tolist()
        self.live = counts.tolist()
        self.points = pts
        point_of[rows[order]] = np.repeat(np.arange(len(pts)), counts)
        self._build()

    def _build(self) -> None:
        # scipy.spatial takes a second to import; only Sabre's materialization needs it.
        from scipy.spatial import cKDTree

        self.tree_points = np.flatnonzero(np.asarray(self.live) > 0)
        self.dead_in_tree = 0
        self.misses = 0
        self.tree = cKDTree(self.points[self.tree_points]) if len(self.tree_points) else None

    def kill(self, point: int) -> None:
        self.live[point] -= 1
        if self.live[point] == 0:
            self.dead_in_tree += 1

    def query(self, xs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """The k nearest tree points of every row of `xs` (distances rounded so that
        equal distances compare equal), and whether that is every tree point."""
        if self.dead_in_tree * _REBUILD > len(self.tree_points) and len(self.tree_points) > 16:
            self._build()
        n_tree = len(self.tree_points)
        # Dead points still in the tree take places among the k nearest.
        k = min(n_tree, k * n_tree // max(n_tree - self.dead_in_tree, 1))
        dist, idx = self.tree.query(xs, k=k)
        dist = np.round(np.asarray(dist, dtype=float).reshape(len(xs), k), 12)
        return dist, self.tree_points[np.asarray(idx).reshape(len(xs), k)], k >= n_tree

    def _first_live(self, point: int, limit: int, alive) -> list[int]:
        out = []
        i, end, rows = self.ptr[point], self.end[point], self.point_rows
        while i < end and len(out) < limit:
            r = rows[i]
            if alive[r]:
                out.append(r)
            elif not out:
                self.ptr[point] = i + 1  # a dead prefix is never read again
            i += 1
        return out

    def select(self, dist: list, pts: list, complete: bool, need: int, alive) -> list[int] | None:
        """The `need` nearest live rows among fetched points (lists sorted by
        distance), ties by smallest row; None when the fetch has too few live rows, or
        when a point not fetched could tie with the last one taken and fewer than
        ``need + TIE_WINDOW`` points were fetched (beyond that, ties with unfetched
        points follow the tree's order)."""
        live = self.live
        kept, total, boundary, j = [], 0, None, 0
        for j, (d, p) in enumerate(zip(dist, pts)):
            c = live[p]
            if c:
                kept.append((d, p))
                total += c
                if total >= need:
                    boundary = d
                    break
        if boundary is None:
            return None
        if not (complete or dist[-1] > boundary or len(pts) >= need + TIE_WINDOW):
            return None
        # Every fetched live point tied with the last one counted competes for its slots.
        j += 1
        while j < len(pts) and dist[j] == boundary:
            if live[pts[j]]:
                kept.append((boundary, pts[j]))
            j += 1
        out: list[int] = []
        i = 0
        while len(out) < need:
            d0 = kept[i][0]
            group_pts = []
            while i < len(kept) and kept[i][0] == d0:
                group_pts.append(kept[i][1])
                i += 1
            remaining = need - len(out)
            group = []
            for p in group_pts:
                group.extend(self._first_live(p, remaining, alive))
            if len(group_pts) > 1:
                group.sort()
            out.extend(group[:remaining])
        return out

    def nearest(self, x: np.ndarray, need: int, alive, start: int | None = None) -> list[int]:
        """The `need` live rows closest to `x` (see :meth:`select`; not removed),
        searching `start` points first (default: need + TIE_WINDOW)."""
        if start is not None:
            # A short search fell on taken records: dead points crowd the places searched,
            # so a few such misses justify a rebuild even when few points are dead overall.
            self.misses += 1
            if self.misses >= _MISSES and self.dead_in_tree * _REBUILD * 8 > len(self.tree_points):
                self._build()
        kq = start or need + TIE_WINDOW
        while True:
            dist, pts, complete = self.query(x[None, :], kq)
            out = self.select(dist[0].tolist(), pts[0].tolist(), complete, need, alive)
            if out is not None:
                return out
            kq *= 2


class _CurveBucket:
    """Approximate nearest neighbours: the live rows of one bucket closest to a row
    along a space-filling curve (positions in curve order, with path-compressed skip
    pointers over removed rows)."""

    def __init__(self, rows: np.ndarray, curve_pos: np.ndarray):
        order = np.argsort(curve_pos[rows], kind="stable")
        self.seq = rows[order]
        self.keys = curve_pos[self.seq]
        n = len(self.seq)
        self._keys = self.keys.tolist()
        self._rows = self.seq.tolist()
        self._next = list(range(n + 1))  # smallest live index >= i; n is a sentinel
        self._prev = list(range(n + 1))  # slot j: largest live index <= j - 1; slot 0 = -1

    @staticmethod
    def _find(links: list, i: int) -> int:
        root = i
        while links[root] != root:
            root = links[root]
        while links[i] != root:
            links[i], i = root, links[i]
        return root

    def kill_index(self, i: int) -> None:
        self._next[i] = i + 1
        self._prev[i + 1] = i

    def nearest(self, key: int, need: int, alive: np.ndarray) -> list[int]:
        keys, n = self._keys, len(self._keys)
        p = int(np.searchsorted(self.keys, key))
        right = self._find(self._next, p)
        left = self._find(self._prev, p) - 1
        out = []
        while len(out) < need and (left >= 0 or right < n):
            if right >= n or (left >= 0 and key - keys[left] <= keys[right] - key):
                out.append(self._rows[left])
                left = self._find(self._prev, left) - 1
            else:
                out.append(self._rows[right])
                right = self._find(self._next, right + 1)
        return out


class NeighbourPool:
    """Records split into buckets, each searchable for the live records nearest to a
    point; records leave the pool once taken.

    Parameters
    ----------
    coords : ndarray of shape (n, d)
        Normalized quasi-identifier coordinates (:class:`QISpace`); rows are record
        positions, and a smaller position means a smaller record id (callers order
        records by id first).
    bucket_of : ndarray of int, shape (n,)
        The bucket of every record (-1: not in the pool).
    n_buckets : int
    retrieval : {"knn", "approx"}, default="knn"
        Exact k-nearest neighbours (Euclidean, ties by smallest id) or the nearest live
        records along a Hilbert curve.

    Examples
    --------
    >>> pool = NeighbourPool(np.array([[0.0], [0.1], [0.9], [0.5]]), np.array([0, 1, 1, 1]), 2)
    >>> pool.take(1, 0, 2), pool.size(1)
    ([1, 3], 1)
    """

    def __init__(
        self,
        coords: np.ndarray,
        bucket_of: np.ndarray,
        n_buckets: int,
        retrieval: str = "knn",
    ):
        check_option(retrieval, "retrieval", "NeighbourPool", RETRIEVALS)
        self.coords = np.asarray(coords, dtype=float)
        bucket_of = np.asarray(bucket_of, dtype=np.int64)
        self.retrieval = retrieval
        self.n_buckets = n_buckets
        n = len(bucket_of)
        # Scalar bookkeeping in Python containers: it is touched one record at a time.
        self.alive = bytearray((bucket_of >= 0).astype(np.uint8).tobytes())
        self._bucket_of = bucket_of.tolist()
        members = [np.flatnonzero(bucket_of == b) for b in range(n_buckets)]
        self._members = [m.tolist() for m in members]
        self._member_array = members
        self._alive_view = np.frombuffer(self.alive, dtype=np.uint8)  # shares `alive`
        # For scans: each bucket's records (compacted as they are taken), their
        # coordinates and squared norms.
        self._scan_rows = list(members)
        self._scan_points = [self.coords[m] for m in members] if retrieval == "knn" else []
        self._scan_norms = [(p**2).sum(axis=1) for p in self._scan_points]
        self._mlist = [m.tolist() for m in members]  # live rows, swap-removed
        self._mpos = [0] * n
        for m in self._mlist:
            for i, r in enumerate(m):
                self._mpos[r] = i
        self._min_ptr = [0] * n_buckets
        self._curve_pos = None
        if retrieval == "knn":
            point_of = np.full(n, -1, dtype=np.int64)
            ids = _point_ids(self.coords)
            self._buckets = [_KnnBucket(m, self.coords, ids, point_of) for m in members]
            self._point_of = point_of.tolist()
        else:
            curve = self.curve_positions()
            self._buckets = [_CurveBucket(m, curve) for m in members]
            seq_index = np.zeros(n, dtype=np.int64)
            for bucket in self._buckets:
                seq_index[bucket.seq] = np.arange(len(bucket.seq))
            self._seq_index = seq_index.tolist()
            self._curve_list = curve.tolist()

    def curve_positions(self) -> np.ndarray:
        """Position of every record along the Hilbert curve of the coordinates."""
        if self._curve_pos is None:
            order = hilbert_order(self.coords)
            pos = np.empty(len(order), dtype=np.int64)
            pos[order] = np.arange(len(order))
            self._curve_pos = pos
        return self._curve_pos

    def size(self, bucket: int) -> int:
        """Live records left in `bucket`."""
        return len(self._mlist[bucket])

    def remove(self, row: int) -> None:
        """Take `row` out of the pool."""
        b = self._bucket_of[row]
        self.alive[row] = 0
        live = self._mlist[b]
        moved = live.pop()
        if moved != row:
            i = self._mpos[row]
            live[i], self._mpos[moved] = moved, i
        if self.retrieval == "knn":
            self._buckets[b].kill(self._point_of[row])
        else:
            self._buckets[b].kill_index(self._seq_index[row])

    def choose(self, bucket: int, rule: str, draw: float) -> int:
        """A live record of `bucket`: the one at position ``floor(draw * size)`` of the
        live records (`draw` uniform in [0, 1): a uniform choice), or the smallest id
        (see :data:`~fairanon.heuristics.sabre.materialization.SEED_TUPLE_RULES`)."""
        if rule == "random":
            live = self._mlist[bucket]
            return live[int(draw * len(live))]
        rows = self._members[bucket]
        i = self._min_ptr[bucket]
        while not self.alive[rows[i]]:
            i += 1
        self._min_ptr[bucket] = i
        return rows[i]

    def is_large(self, bucket: int, need: int) -> bool:
        """Whether a request is better served by scanning every live record of the bucket
        (a quarter of them or more, or dozens of them out of at most a few thousand: a
        kd-tree search for that many neighbours visits most of the tree anyway) than by
        a kd-tree search. A scan costs the whole bucket; in a large bucket a search for
        even hundreds of neighbours stays local."""
        live = len(self._mlist[bucket])
        return 4 * need >= live or (need >= 64 and need * _SCAN_SHARE >= live)

    def _scan(self, bucket: int, row: int, need: int) -> list[int]:
        """The `need` live records of `bucket` nearest to `row` by a scan (exact, ties by
        id): squared distances by one matrix product, the need-th smallest by partition,
        then the exact distances of the records that can reach it."""
        rows = self._scan_rows[bucket]
        live = self._alive_view[rows] == 1
        if 2 * int(live.sum()) < len(rows):  # compact the taken records away
            rows = self._member_array[bucket]
            rows = rows[self._alive_view[rows] == 1]
            points = self.coords[rows]
            self._scan_rows[bucket], self._scan_points[bucket] = rows, points
            self._scan_norms[bucket] = (points**2).sum(axis=1)
            live = np.ones(len(rows), dtype=bool)
        points, x = self._scan_points[bucket], self.coords[row]
        approx = self._scan_norms[bucket] - 2 * (points @ x) + x @ x
        approx = np.where(live, approx, np.inf)
        cut = np.partition(approx, need - 1)[need - 1]
        near = np.flatnonzero(approx <= cut + 1e-9)  # every record at most that far
        exact = np.round(((points[near] - x) ** 2).sum(axis=1), 12)
        return rows[near[np.lexsort((rows[near], exact))[:need]]].tolist()

    def prefetch(self, bucket: int, rows: Sequence[int], k: int):
        """Candidates for later :meth:`take` calls from records `rows`: their k nearest
        points of `bucket`, in one batched kd-tree query (None for "approx")."""
        if self.retrieval != "knn" or not len(rows):
            return None
        dist, pts, complete = self._buckets[bucket].query(self.coords[np.asarray(rows)], k)
        dist, pts = dist.tolist(), pts.tolist()
        return {int(r): (dist[i], pts[i], complete) for i, r in enumerate(rows)}

    def take(self, bucket: int, row: int, need: int, prefetched=None) -> list[int]:
        """Remove and return the `need` live records of `bucket` nearest to record `row`
        (using a :meth:`prefetch` of `row` when it settles the answer)."""
        if need <= 0:
            return []
        if self.retrieval == "knn" and self.is_large(bucket, need):
            out = self._scan(bucket, row, need)
        elif self.retrieval == "knn":
            knn = self._buckets[bucket]
            out = None
            start = None
            if prefetched is not None and row in prefetched:
                dist, pts, complete = prefetched[row]
                out = knn.select(dist, pts, complete, need, self.alive)
                if out is None:
                    # Records near `row` already taken: look as much further as the
                    # share of live points among those fetched suggests.
                    live = sum(1 for p in pts if knn.live[p])
                    start = 2 * (need + TIE_WINDOW) * len(pts) // max(live, 1)
            if out is None:
                out = knn.nearest(self.coords[row], need, self.alive, start)
        else:
            out = self._buckets[bucket].nearest(self._curve_list[row], need, self.alive)
        for r in out:
            self.remove(r)
        return out
