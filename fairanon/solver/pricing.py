"""Exact pricing of the LP bound by branch and bound over the labels, without the join closure.

The Lagrangian bound of :mod:`fairanon.solver.bounds` needs, for duals u, the minimum
over every candidate vector v of a protected group of

    mean_k(v) = c_v - top_k(v) / k,

where c_v is the cost per record of v's labels (a sum over the attributes, for NCP and
LM) and top_k(v) the sum of the k largest duals among the records v covers (records of
a type count once each). Only vectors covering at least k records count: a class holds
at least k. The minimum over *every* label combination is the minimum over the join
closure: the k records that give a vector its top_k have a tight summary (their join)
that costs no more and covers them, so it is at least as low.

:class:`LabelSearch` finds that minimum without listing the vectors: depth-first branch
and bound choosing a label per attribute, one attribute after another, each label one
of the tightest with its cover of the records still covered (labels covering the same
of them: the cheapest), covering at least k of them. Below a node that has chosen labels
of cost P and still covers the records S, a vector v covers some k records T of S and
costs at least P + g(t) for each t of T, where g(t) sums, over the attributes left, the
cost of the cheapest label covering t's value and at least k records of S (it must
cover t and the rest of T). So

    mean_k(v) = (1/k) sum over t in T of (c_v - u_t) >= P + (1/k) (sum of the k smallest
                g(t) - u_t over the records of S),

the node's bound (computed for each child from its parent's g, which only lowers it: a
label covering k records of the child covers k of the parent). For the records that
give the children their bounds, g(t) is raised to the pairwise bound: v covers t and
k - 1 other records s of S, so on the attributes left it costs at least the (k - 1)-th
least D(t, s), the sum over them of the cheapest label covering both values (the
per-record bound's argument, :mod:`fairanon.models.bounds`); at nodes of more than
:data:`NODE_PAIRS` types, over the whole group instead (weaker, as the group holds S,
but computed once per record and number of attributes left, for every node and
search). A node whose bound is
not below the best vector found so far is pruned, so the best found is the minimum when
the search ends, and when its time runs out the least of it and the bounds of the
nodes left open is a lower bound on the minimum -- never more than it. The bounds and
the exact means of the last attribute's labels are computed for all labels at once from
each attribute value's k records of least (largest) key.

Costs are the labels' exact losses times a common denominator `scale` (integers, held as
floats: a loss is at most 1, so sums of at most d of them are exact while d * scale is
below 2**53).

Limits: the arrays the search holds and makes (:func:`search_memory`) are checked against
the memory limit before they are made -- with ``pricing="search"``,
:func:`~fairanon.solver.bounds.lp_bound` checks them from the labels' count before the
labels themselves are built. With ``"auto"`` the labels are built first, by
:func:`~fairanon.solver.local_recoding.encode` (which checks only the labels' count, at
400 bytes a label, against the limit in force: :func:`fairanon._memory.check_memory`),
and the search's arrays are checked when "auto" chooses the search, once the closure is
found larger than ``max_vectors`` or not to fit the limit. The records' narrowest
costs, the rounds raising them, the records' pairing, the children's bounds, the
pairwise costs and the vectors' listing and summaries read the deadline between blocks
of at most :data:`CELLS` cells, the coarsest vectors per attribute
(:class:`~fairanon.solver.local_recoding.labels.BuildStopped` past it, which a search
turns into its bound so far); a node's children are listed (one labels x values array
per attribute) between two reads.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._memory import check_memory
from .local_recoding.encoding import Encoding
from .local_recoding.labels import BuildStopped, check_deadline
from .local_recoding.model import _lcm

__all__ = ["LabelSearch", "SearchResult", "search_memory"]

#: Rounds of raising the bound of the records that give a node's children their bounds.
REFINE_ROUNDS = 2
#: Records of a node up to which the pairwise bound is taken over the node's records
#: (above, over the group's, computed once).
NODE_PAIRS = 2000
#: Children pushed between two reads of the clock.
CHILDREN_STEP = 4096
#: Cells of the temporary arrays the search builds a block at a time (8 bytes each at
#: most: 16 MB).
CELLS = 2_000_000


def search_memory(sizes, n_types: int = 0) -> tuple[int, int]:
    """Bytes the search over label spaces of `sizes` ((labels, values) per attribute) and
    `n_types` record types holds and makes at most: held, the label rows (a byte per
    label and value), the pairwise costs (8 bytes per pair of values) and the groups'
    pairwise bounds (8 bytes per type and number of attributes left below the root);
    made per node or release, the float64 labels x values arrays of narrowest and
    _children with their bool covers and the float32 rows of summaries (at most 9 bytes
    per label and value, one attribute at a time).

    >>> search_memory([(3, 2), (5, 4)], 10)
    (266, 180)
    """
    sizes = list(sizes)
    held = sum(n * m + 8 * m * m for n, m in sizes) + 8 * max(len(sizes) - 1, 0) * n_types
    return held, max([9 * n * m for n, m in sizes] + [0])


@dataclass
class SearchResult:
    """What one pricing search found in a protected group.

    Attributes
    ----------
    lower : float
        A lower bound on the group's minimum mean_k (the minimum itself when
        `complete`), in the scaled costs.
    leaves : list of (float, tuple)
        Vectors found of mean_k below 0 (their labels, one per attribute), most
        negative first.
    complete : bool
        Whether the search ended (else the time ran out and `lower` is the least bound
        of the nodes left open).
    nodes : int
        Nodes expanded.
    """

    lower: float
    leaves: list
    complete: bool
    nodes: int


class LabelSearch:
    """The branch and bound of the module docstring over the label spaces of `enc`.

    Parameters
    ----------
    enc : Encoding
        The record types and label spaces (:func:`~fairanon.solver.local_recoding.encode`).
    k : int
    objective : {"ncp", "lm"}
        Per-record costs that are the vector's whatever the record.
    deadline : float, optional
        ``time.perf_counter`` value past which building the pairwise costs stops
        (:class:`~fairanon.solver.local_recoding.labels.BuildStopped`).
    limit : optional
        The memory limit (:mod:`fairanon._memory`) of `caller` the arrays of
        :meth:`memory` are checked against before they are made (MemoryLimitError).
    """

    def __init__(self, enc: Encoding, k: int, objective: str, deadline: float | None = None,
                 limit=None, caller: str = "lp_bound"):
        tables = [space.ncp if objective == "ncp" else space.lm for space in enc.spaces]
        self.scale = _lcm({c.denominator for table in tables for c in table})
        self.icost = [[int(c * self.scale) for c in table] for table in tables]
        self.cost = [np.array(table, dtype=float) for table in self.icost]
        sizes = [(space.n_labels, space.m) for space in enc.spaces]
        self.held, self.temporary = search_memory(sizes, enc.n_types)
        check_memory(self.held + self.temporary,
                     f"the pricing search's label rows and pairwise costs over the "
                     f"{enc.n_types:,} record types of {enc.instance.name!r} "
                     f"(values per attribute {[m for _, m in sizes]})",
                     "use fewer quasi-identifiers or coarser numeric hierarchies", limit,
                     caller=caller)
        self.masks = [space.mask_rows(limit, caller) for space in enc.spaces]
        self.values = [np.ascontiguousarray(enc.qi[:, a]) for a in range(enc.d)]
        self.w = enc.weight.astype(float)
        self.k = k
        self.d = enc.d
        # Per attribute, the cost of the cheapest label covering each pair of values.
        self.pair = [_pair_costs(m, c, deadline) for m, c in zip(self.masks, self.cost)]
        # The group being searched and, per group (its types' bytes) and number of
        # attributes left, its records' pairwise bounds over the whole group
        # (:meth:`_group_pairwise`, by position in the group: the groups' types
        # partition the types, so they hold 8 bytes per type and number left, counted in
        # `held`): kept per group, as the LP's rounds search the protected groups in turn.
        self._group: np.ndarray | None = None
        self._cache: dict = {}
        self._caches: dict = {}
        # Attributes with the most labels first: their labels split the records most,
        # and the bounds below them see the small attributes' costs through g.
        self.order = sorted(range(enc.d), key=lambda a: -len(self.cost[a]))

    def memory(self) -> int:
        """Bytes the search holds at most (its arrays, held and temporary; the groups'
        pairwise bounds included)."""
        return self.held + self.temporary

    # ---------------------------------------------------------------- helpers
    def narrowest(self, types: np.ndarray, attrs, deadline: float | None = None) -> np.ndarray:
        """Per type of `types`, the sum over `attrs` of the cost of the cheapest label
        covering its value and at least k records of `types`; BuildStopped past
        `deadline`, read per block of labels."""
        out = np.zeros(len(types))
        for a in attrs:
            x = self.values[a][types]
            wv = np.bincount(x, weights=self.w[types], minlength=self.masks[a].shape[1])
            present = np.flatnonzero(wv > 0)
            cheapest = np.full(len(present), np.inf)
            step = max(1, CELLS // max(len(present), 1))
            for lo in range(0, len(self.cost[a]), step):
                check_deadline(deadline, "bounding the records' costs")
                cover = self.masks[a][lo : lo + step, present]
                enough = cover @ wv[present] >= self.k
                cost = np.where(cover & enough[:, None], self.cost[a][lo : lo + step, None], np.inf)
                cheapest = np.minimum(cheapest, cost.min(axis=0))
            per_value = np.zeros(len(wv))
            per_value[present] = cheapest
            out += per_value[x]
        return out

    def coarsest(self, types: np.ndarray, deadline: float | None = None) -> tuple:
        """The cheapest label per attribute covering every value of `types`;
        BuildStopped past `deadline`, read per attribute."""
        labels = []
        for a in range(self.d):
            check_deadline(deadline, "listing the groups' coarsest vectors")
            present = np.unique(self.values[a][types])
            full = self.masks[a][:, present].all(axis=1)
            labels.append(int(np.flatnonzero(full)[np.argmin(self.cost[a][full])]))
        return tuple(labels)

    def covered(self, types: np.ndarray, labels: np.ndarray,
                deadline: float | None = None) -> list[np.ndarray]:
        """Per row of `labels` (a label per attribute), the types of `types` it covers;
        BuildStopped past `deadline`, checked per block of rows."""
        labels = np.asarray(labels, dtype=np.int64).reshape(-1, self.d)
        out: list[np.ndarray] = []
        step = max(1, CELLS // max(len(types), 1))
        for lo in range(0, len(labels), step):
            check_deadline(deadline, "listing the types of the vectors found")
            part = labels[lo : lo + step]
            keep = np.ones((len(part), len(types)), dtype=bool)
            for a in range(self.d):
                keep &= self.masks[a][part[:, a]][:, self.values[a][types]]
            out.extend(types[row] for row in keep)
        return out

    def summaries(self, classes: np.ndarray, types: np.ndarray, n_classes: int,
                  deadline: float | None = None) -> np.ndarray:
        """Per class, the cheapest label per attribute covering the values of its types
        (`classes` and `types`: the (class, type) pairs), shape (n_classes, d);
        BuildStopped past `deadline`, checked per block of classes."""
        out = np.empty((n_classes, self.d), dtype=np.int64)
        for a in range(self.d):
            n_labels, m = self.masks[a].shape
            outside_label = (~self.masks[a]).T.astype(np.float32)
            # Classes a block at a time: the classes x labels products stay a few MB.
            step = max(1, CELLS // max(n_labels + m, 1))
            for lo in range(0, n_classes, step):
                check_deadline(deadline, "summarising the release's classes")
                mine = (classes >= lo) & (classes < lo + step)
                present = np.zeros((min(step, n_classes - lo), m), dtype=np.float32)
                present[classes[mine] - lo, self.values[a][types[mine]]] = 1.0
                # A label covers a class when none of the class's values lies outside it.
                outside = present @ outside_label
                out[lo : lo + step, a] = np.where(outside == 0, self.cost[a][None, :],
                                                  np.inf).argmin(axis=1)
        return out

    def int_cost(self, labels: tuple) -> int:
        """c_v of the labels, in the scaled costs."""
        return sum(self.icost[a][label] for a, label in enumerate(labels))

    def _children(self, types: np.ndarray, a: int):
        """The labels of attribute a a child may choose under the node covering
        `types`: per distinct cover of their values, the cheapest label, covering at
        least k records; with the values present and the covers."""
        x = self.values[a][types]
        wv = np.bincount(x, weights=self.w[types], minlength=self.masks[a].shape[1])
        present = np.flatnonzero(wv > 0)
        cover = self.masks[a][:, present]
        ok = np.flatnonzero(cover @ wv[present] >= self.k)
        if not len(ok):
            return ok, present, cover[:0], x
        packed = np.packbits(cover[ok], axis=1)
        _, group = np.unique(packed, axis=0, return_inverse=True)
        group = group.reshape(-1)
        pick = np.lexsort((ok, self.cost[a][ok], group))
        first = np.ones(len(pick), dtype=bool)
        first[1:] = group[pick][1:] != group[pick][:-1]
        labels = ok[pick[first]]
        return labels, present, self.masks[a][labels][:, present], x

    def _per_value(self, x: np.ndarray, key: np.ndarray, weight: np.ndarray, present: np.ndarray,
                   ids: bool = False):
        """Per value of `present`, its k records of least `key` (records of values `x`
        and weights `weight`, a record per unit of weight; +inf where fewer), shape
        (len(present), k); with `ids`, shape (len(present), k, 2): each key and the
        position of its record."""
        k = self.k
        slot = np.searchsorted(present, x)
        order = np.lexsort((key, slot))
        slot, key, w = slot[order], key[order], weight[order].astype(np.int64)
        before = np.cumsum(w) - w
        start = np.searchsorted(slot, slot, side="left")
        before = before - before[start]
        units = np.clip(k - before, 0, w)
        rows = np.repeat(slot, units)
        offsets = np.cumsum(units) - units
        pos = np.arange(len(rows)) - np.repeat(offsets, units) + np.repeat(before.clip(0, k), units)
        if not ids:
            out = np.full((len(present), k), np.inf)
            out[rows, pos] = np.repeat(key, units)
            return out
        out = np.full((len(present), k, 2), np.inf)
        out[rows, pos, 0] = np.repeat(key, units)
        out[rows, pos, 1] = np.repeat(order, units)
        return out

    def _refined(self, here, x, present, rest, g, u, rounds: int = REFINE_ROUNDS,
                 deadline: float | None = None):
        """Per value of `present`, its k records of least g(t) - u_t (as
        :meth:`_per_value`), g raised for the records among them to the pairwise bound:
        a vector covering t and k - 1 other records s of `here` costs, on the attributes
        `rest`, at least the (k - 1)-th least of D(t, s), the sum over `rest` of the
        cheapest label covering both values. Records whose g is raised may leave the k
        least; those that enter are raised in the next of `rounds` rounds. BuildStopped
        past `deadline`, read per round and per block of records paired."""
        done = np.zeros(len(here), dtype=bool)
        w = self.w[here]
        for _ in range(rounds):
            check_deadline(deadline, "raising the records' bounds")
            low = self._per_value(x, g - u[here], w, present, ids=True)
            chosen = np.unique(low[np.isfinite(low[:, :, 0])][:, 1].astype(np.int64))
            chosen = chosen[~done[chosen]]
            if not len(chosen):
                break
            if len(here) <= NODE_PAIRS:
                g[chosen] = np.maximum(g[chosen], self._pairwise(here, chosen, rest, deadline))
            else:
                g[chosen] = np.maximum(g[chosen], self._group_pairwise(here[chosen], rest, deadline))
            done[chosen] = True
        return self._per_value(x, g - u[here], w, present)

    def _group_pairwise(self, types, rest, deadline: float | None = None) -> np.ndarray:
        """The pairwise bound of `types` over the records of their whole group (weaker
        than over a node's, which the group holds, but the same at every node of a depth
        and at any duals: kept from one node and one search to the next, by position in
        the group)."""
        cache = self._cache.setdefault(len(rest), np.full(len(self._group), np.nan))
        rows = np.searchsorted(self._group, types)
        missing = rows[np.isnan(cache[rows])]
        if len(missing):
            cache[missing] = self._pairwise(self._group, missing, rest, deadline)
        return cache[rows]

    def _pairwise(self, here, rows, rest, deadline: float | None = None) -> np.ndarray:
        """For the records at positions `rows` of `here`: the (k - 1)-th least D(t, s)
        over the other records s of `here` (module docstring; a type's own other records
        at D(t, t), the sum over `rest` of the cheapest label covering its value);
        BuildStopped past `deadline`, read per block of rows."""
        need = self.k - 1
        out = np.zeros(len(rows))
        step = max(1, CELLS // max(len(here), 1))
        w = self.w[here]
        for lo in range(0, len(rows), step):
            check_deadline(deadline, "pairing the records")
            part = rows[lo : lo + step]
            dist = np.zeros((len(part), len(here)))
            for b in rest:
                vb = self.values[b]
                dist += self.pair[b][vb[here[part]]][:, vb[here]]
            weight = np.broadcast_to(w, dist.shape).copy()
            weight[np.arange(len(part)), part] -= 1  # the type's own other records
            dist[weight == 0] = np.inf
            near = np.argpartition(dist, need - 1, axis=1)[:, :need] if need < len(here) else (
                np.argsort(dist, axis=1)[:, :need])
            d_near = np.take_along_axis(dist, near, axis=1)
            w_near = np.take_along_axis(weight, near, axis=1)
            by = np.argsort(d_near, axis=1)
            d_near = np.take_along_axis(d_near, by, axis=1)
            reach = np.cumsum(np.take_along_axis(w_near, by, axis=1), axis=1)
            first = np.argmax(reach >= need, axis=1)
            out[lo : lo + step] = d_near[np.arange(len(part)), first]
        return out

    def _k_least(self, covers: np.ndarray, table: np.ndarray,
                 deadline: float | None = None) -> np.ndarray:
        """Per row of `covers` (values covered), the sum of the k least entries of
        `table` over those values; BuildStopped past `deadline`, read per block of rows."""
        k = self.k
        out = np.empty(len(covers))
        step = max(1, CELLS // max(table.size, 1))
        for lo in range(0, len(covers), step):
            check_deadline(deadline, "bounding the children")
            part = covers[lo : lo + step]
            vals = np.where(part[:, :, None], table[None, :, :], np.inf).reshape(len(part), -1)
            out[lo : lo + step] = np.partition(vals, k - 1, axis=1)[:, :k].sum(axis=1)
        return out

    # ---------------------------------------------------------------- search
    def search(
        self,
        u: np.ndarray,
        types: np.ndarray,
        incumbent: float = math.inf,
        deadline: float | None = None,
        most: int = 1000,
    ) -> SearchResult:
        """The minimum of mean_k over the vectors of the group of `types` at duals `u`
        (module docstring), below `incumbent` (the mean_k of a known vector, or inf).

        Returns the bound, the vectors found of mean_k below 0 (at most `most`), and
        whether the search ended before `deadline` (``time.perf_counter``)."""
        k = self.k
        best = incumbent
        self._group = types
        self._cache = self._caches.setdefault(types.tobytes(), {})
        leaves: list = []
        # Open nodes: (bound, depth, labels chosen, their cost, the parent's types and
        # their values on the parent's attribute, the label chosen there); the root has
        # no parent. A child's types are found when it is expanded, not held meanwhile.
        stack: list = [(self._root_bound(u, types), 0, (), 0.0, types, None, None)]
        nodes = 0

        def late() -> bool:
            return deadline is not None and time.perf_counter() >= deadline

        def cut(expanding: float = math.inf) -> SearchResult:
            """The search stopped by its deadline: the least of the best found, the
            open nodes' bounds and that of the node being expanded (`expanding`)."""
            lower = min([best, expanding] + [entry[0] for entry in stack])
            return SearchResult(lower, _most_negative(leaves, most), False, nodes)

        while stack:
            if late():
                return cut()
            bound, depth, labels, partial, parent, parent_x, label = stack.pop()
            if bound >= best:
                continue
            nodes += 1
            if parent_x is None:
                here = parent
            else:
                here = parent[self.masks[self.order[depth - 1]][label][parent_x]]
            a = self.order[depth]
            cands, present, covers, x = self._children(here, a)
            if not len(cands):
                continue
            if late():
                return cut(bound)
            cost = partial + self.cost[a][cands]
            try:
                if depth == self.d - 1:
                    # The last attribute: the children are vectors, their means exact.
                    top = self._per_value(x, -u[here], self.w[here], present)
                    means = cost + self._k_least(covers, top, deadline) / k
                    for j in np.flatnonzero(means < 0.0).tolist():
                        leaves.append((float(means[j]), self._labels(labels, depth, int(cands[j]))))
                    if len(leaves) > 4 * most:
                        leaves = _most_negative(leaves, most)
                    best = min(best, float(means.min()))
                    continue
                rest = self.order[depth + 1 :]
                g = self.narrowest(here, rest, deadline)
                if late():
                    return cut(bound)
                low = self._refined(here, x, present, rest, g, u, deadline=deadline)
                if late():
                    return cut(bound)
                bounds = cost + self._k_least(covers, low, deadline) / k
            except BuildStopped:
                # The clock read inside the node's bounds (per block of labels, records
                # or children): the node's own bound holds its children's.
                return cut(bound)
            alive = np.flatnonzero(bounds < best)
            # Least bound popped first: the best vectors are found early and prune.
            # A node may have hundreds of thousands of children (the ranges of a wide
            # numeric attribute): the clock is read every CHILDREN_STEP of them.
            for i, j in enumerate(alive[np.argsort(-bounds[alive], kind="stable")].tolist()):
                if i % CHILDREN_STEP == 0 and i and late():
                    return cut(bound)
                stack.append((float(bounds[j]), depth + 1, labels + ((a, int(cands[j])),),
                              float(cost[j]), here, x, int(cands[j])))
        return SearchResult(best, _most_negative(leaves, most), True, nodes)

    def _root_bound(self, u: np.ndarray, types: np.ndarray) -> float:
        """The root's bound: costs are at least 0, so every vector's mean_k is at least
        minus the k largest duals of the group's records over k (finite, so a search cut
        before the root is expanded still bounds the minimum)."""
        order = types[np.argsort(-u[types], kind="stable")]
        w = self.w[order]
        take = np.clip(self.k - (np.cumsum(w) - w), 0.0, w)
        return -float(take @ u[order]) / self.k

    def _labels(self, chosen: tuple, depth: int, last: int) -> tuple:
        """The labels of a vector in attribute order, from the (attribute, label) pairs
        chosen and the last attribute's label."""
        out = [0] * self.d
        for a, label in chosen:
            out[a] = label
        out[self.order[depth]] = last
        return tuple(out)


def _pair_costs(masks: np.ndarray, cost: np.ndarray, deadline: float | None = None) -> np.ndarray:
    """The cost of the cheapest label (rows of `masks`, costs `cost`) covering each pair
    of values, labels a block at a time (O(labels x values^2): BuildStopped past
    `deadline`, checked per block)."""
    n_labels, m = masks.shape
    out = np.full((m, m), np.inf)
    step = max(1, CELLS // max(m * m, 1))
    for lo in range(0, n_labels, step):
        check_deadline(deadline, "pairing the values of an attribute")
        part = masks[lo : lo + step]
        both = part[:, :, None] & part[:, None, :]
        out = np.minimum(out, np.where(both, cost[lo : lo + step, None, None], np.inf).min(axis=0))
    return out


def _most_negative(leaves: list, most: int) -> list:
    """The `most` leaves of least mean_k, distinct vectors, least first."""
    seen: dict = {}
    for mean, labels in sorted(leaves):
        if labels not in seen:
            seen[labels] = mean
            if len(seen) == most:
                break
    return [(mean, labels) for labels, mean in seen.items()]
