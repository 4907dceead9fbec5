"""Local search over the classes of a k-anonymous partition, for a per-cell loss.

A partition of the records into classes of at least k records is released with each
class's tight labels, as :func:`fairanon.release.generalize_partition` writes them: on
a categorical attribute the lowest common ancestor of the class's values in the
hierarchy, on an ordered or numeric one the range from its least to its greatest
value. Its loss under ``objective="ncp"`` or ``"lm"`` is a sum over classes of the
class's size times the cell losses of its labels (:mod:`fairanon.models.metrics`:
NCP counts the active leaves under a node over the active domain, 0 for one value,
the rank span over m - 1 on an ordered attribute, the width over the range on a
numeric one; LM (M_ij - 1) / (M_j - 1) and the same widths), and a label's loss
depends only on the least and the greatest of the class's values in an order of the
values (hierarchy leaves in depth-first preorder, ranks, numbers): every class is
kept as that box, and a move's change of the loss is exact up to float rounding.

:func:`local_search` is iterated local search (Lourenço, Martin and Stützle,
"Iterated local search", Handbook of Metaheuristics, 2003) over three moves, each kept
only when it lowers the loss and keeps every class at k or more records:

- *move* a record to another class;
- *swap* two records of two classes;
- *split* a class of at least 2k records in two at a cut of one attribute's order
  (Mondrian's cut, LeFevre et al., ICDE 2006, taken only when it lowers the loss).

A descent applies, record after record (in a seeded random order), the best move or swap
of that record (steepest over its candidates), and after each change re-examines the
records of the classes it touched and of their nearest classes (:data:`REQUEUE`), until
no record has an improving move (a local optimum). A record's candidates are the classes
of its protected value that it joins most cheaply; above :data:`PREFILTER_CLASSES`
classes, among the :data:`NEAR_CLASSES` nearest classes of its own class only. Records
next in the descent's queue are priced together on the partition as it is
(:data:`FIRST_BATCH` after a change, doubling up to :data:`BATCH` after each batch
without an improving change), and the first with an improving change is applied: the
same changes in the same order as one by one. This pays off with small classes (German
credit, 7 QIs, k = 10, from Mondrian's release, 200 kicks: 5.4 s CPU one by one, 3.2-3.4
s batched); a batch's cells are capped by :data:`BATCH_CELLS`, swaps included, and a
record whose swaps may read more than :data:`SWAP_ROWS` records is priced alone (UCI
Adult with race as a QI, k = 50, the first 1,000 changes: 1.0-1.3 s one by one, 2.3-2.5
s in uncapped batches, 1.2-1.9 s now; k = 1,000: a batch of 64 records held 544 MB, now
13 MB). Above :data:`PREFILTER_CLASSES` classes of a value, records are priced together
on their own candidates, from the first record's class up to the first record whose
class's nearest classes are not kept yet (one by one they would be found later, on the
partition as it is then); the arrays of a value's classes are kept for every value, so
neither the prefilter nor the nearest classes gather every class's box again for each
record; and a class a change touched keeps its nearest classes, found with those whose
records the descent queues again (one search, not two). UCI Adult (race protected, 7
QIs, 3,790 classes of white records), k = 5, LM, from lattice-local's release, the first
descent: 22.4-22.6 s CPU with the arrays gathered again for each record, 10.6-11.5 s
with them kept, 10.5-10.8 s with the records batched too (the same partition), 9.4-9.5 s
with the nearest classes kept on a change; 30 s CPU, seed 0: 304, 2,029, 2,409-2,716 and
3,124-3,169 kicks, LM_avg 0.0354, 0.0345, 0.0343-0.0344 and 0.0340-0.0341.

A perturbation (``kick="regroup"``, the default) pools a class (drawn with probability
proportional to its loss per record) and its two nearest classes and cuts the pool
again greedily: from a random record, a class grows by the record that joins its box
most cheaply until it holds k, the last class taking the rest (a destroy-and-repair
step of Shaw's large-neighbourhood search, CP 1998, without the exact re-solve). Other
kicks: "dissolve" the drawn class, each of its records joining the one of the class's
six nearest classes that it joins most cheaply; "merge" it with one of its three
nearest (a class of at least 2k records that the descent may split elsewhere);
"mixed", dissolve three times in four, else merge. The descent from a kick is kept
when it ends below the partition it started from plus a threshold that falls to 0 over
the search (:data:`ACCEPT`, threshold accepting), else undone; the least loss found is
returned. "Nearest" is by how much joining two classes' boxes grows the loss.

Only k-anonymity with a per-cell loss (``ncp``, ``lm``): other requirements (l, t,
alpha-protection, diversity constraints, risk) are not kept by these moves, and
:func:`local_search` refuses them (:class:`IncompatibleRequirementError`). Records of
different protected values never share a class (classes are released vectors, and
the protected attribute is released unchanged). Losses are counted in floats, a change
kept only when it lowers the loss by more than :data:`EPS`; lns
(:mod:`fairanon.methods.lns`) keeps the result only when its exact loss
(:func:`fairanon.models.objectives.objective_value` of its release) is below its start's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .._memory import check_memory
from .._validation import check_int, check_option, check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.instance import Instance
from ..models.metrics.classes import equivalence_classes
from ..models.requirements import KAnonymity, Requirement
from ..release import Release

__all__ = ["KICKS", "MOVE_OBJECTIVES", "MoveSearch", "MovesResult", "local_search",
           "partition_of"]

#: The objectives the moves measure exactly (sums of per-cell losses of tight labels).
MOVE_OBJECTIVES = ("ncp", "lm")
#: The perturbations of :func:`local_search`.
KICKS = ("regroup", "mixed", "dissolve", "merge")
#: Classes of one protected value above which a record's candidate classes are taken
#: among the :data:`NEAR_CLASSES` nearest classes of its own class (kept until that
#: class changes), not among all: on UCI Adult (k = 5, about 4,000 classes) pricing every
#: class for every record took the first descent past half a minute.
PREFILTER_CLASSES = 512
#: See :data:`PREFILTER_CLASSES`.
NEAR_CLASSES = 128
#: The nearest classes of a class a change touched whose records the descent queues
#: again (with the class's own), up to :data:`PREFILTER_CLASSES` classes of its
#: protected value, and :data:`REQUEUE_MANY` above. German credit (7 QIs, NCP, about
#: 100-200 classes), 30 s, seeds 0-3, two runs at once on 2 cores, GCP on average for
#: k = 5 and 10: 0.1917 and 0.2981 with 4, 0.1924 and 0.2980 with 2, 0.1924 and 0.2995
#: with 1; UCI Adult (7 QIs and race, k = 5, LM, about 5,000 classes), 40 s, seeds 0
#: and 1: LM_avg 0.03313 with 4, 0.03298 with 2, 0.03284 with 1, 0.03287 with none
#: (a change there moves few records, and the time goes to more kicks).
REQUEUE = 4
#: See :data:`REQUEUE`.
REQUEUE_MANY = 1
#: A change is applied only when it lowers the loss by more than this (objective units:
#: cells), so that float rounding never passes for an improvement.
EPS = 1e-9
#: Leaves of a hierarchy above which the pairwise table of lowest-common-ancestor losses
#: (leaves^2 floats) is not built and the search refuses the attribute.
MAX_TABLE_LEAVES = 2048
#: Records a descent prices together at most (:meth:`MoveSearch.best_changes`): after a
#: change it prices :data:`FIRST_BATCH` records, then twice as many after each batch
#: without one. German credit 7 QIs, k = 10, NCP, 200 kicks from lattice-local's
#: release: 2.0 s CPU from 1 record after a change, 1.76-1.92 s from 8, 1.70 s from 16
#: (the same partition; a record after the first with a change is priced again).
BATCH = 64
#: See :data:`BATCH`.
FIRST_BATCH = 8
#: Cells a batch prices at most: records x candidate classes x attributes, and records
#: x the records of their swap classes x the columns of a class's block (4 d + 3, or
#: 5 d + 4 with the joins), so about 2 MB an array.
BATCH_CELLS = 1 << 18
#: Arrays of up to :data:`BATCH_CELLS` 8-byte cells a batch holds at once at most (a swap
#: block, the lows and highs it joins with, their sum; 8 MB), which the memory check of
#: :func:`local_search` counts.
BATCH_ARRAYS = 4
#: Records a record's swaps may read (the sizes of its value's `swap_classes` largest
#: classes summed) above which records are priced one at a time: with larger classes
#: the swaps dominate, and pricing records after the first with a change costs more
#: than the calls saved.
SWAP_ROWS = 256
#: Records times values (summed over the attributes) up to which the loss of every box
#: joined with every value is kept (:class:`MoveSearch`, `joins`; 8 bytes a cell for the
#: records, as many for the classes at most).
JOIN_CELLS = 1 << 21
#: A kick's descent is accepted when it ends below the current partition's loss plus a
#: threshold that falls linearly to 0 over the search (threshold accepting, Dueck and
#: Scheuer, J. Comput. Phys. 90, 1990): this share of k records' loss, at the mean loss
#: per record after the first descent (a kick regroups about 3 k records). From
#: lattice-local's release, CPU-bound runs of a fixed number of kicks, mean loss:
#: German credit (7 QIs, NCP, 3,000 kicks), k = 5 over seeds 0-2: 1,355 without a
#: threshold (a descent kept only when no higher), 1,340 with 0.1, 1,344 with 0.2,
#: 1,348 with 0.4; k = 10 over seeds 0-5: 2,087 without, 2,064 with 0.1 (seeds 2-5),
#: 2,061 with 0.2, 2,081 with 0.3 (seeds 2-5); UCI Adult (7 QIs and race, LM, k = 5,
#: 2,000 kicks, seeds 0-1, before :data:`ACCEPT_KICKS`, which now leaves it out there):
#: 8,082 without, 8,061 with 0.1, 8,084 with 0.2, 8,102 with 0.4.
ACCEPT = 0.1
#: The threshold applies when the search can expect at least this many kicks per class
#: (counted, or estimated from the first :data:`RATE_KICKS` kicks' pace to the
#: deadline), else a descent is kept only when no higher: with fewer, a worse partition
#: accepted is seldom walked back from. German credit (7 QIs) gets 40-60 kicks a class in
#: lns's minute; UCI Adult (k = 5, about 5,000 classes) about one, where the threshold of
#: 0.1 gave, with auto's 60 s on ARX's Adult at k = 5, LM_avg 0.02984 and 0.02978 against
#: 0.02967 and 0.02977 without (UCI Adult, lns's 60 s: 0.03251 against 0.03258).
ACCEPT_KICKS = 10
#: Kicks after which the pace of a search with a deadline is read.
RATE_KICKS = 64
#: The clock the deadline is read on (``time.perf_counter``).
_clock = time.perf_counter


def _take_rows(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``np.take_along_axis(x, idx, axis=1)`` for a 2-d x, as one read of x's cells."""
    return x.reshape(-1)[idx + (np.arange(len(x)) * x.shape[1])[:, None]]


def _sum_rows(x: np.ndarray) -> np.ndarray:
    """x summed over its first axis, in the order numpy's sum over a contiguous last
    axis of that length adds (one after the other below 8 terms, then in 8 running sums
    paired up, then the rest; numpy's pairwise summation): the same floats as
    ``x.T.sum(axis=-1)`` on a contiguous copy, without the pass per short row."""
    d = len(x)
    if d < 8:
        out = x[0].copy()
        for j in range(1, d):
            out += x[j]
        return out
    if d <= 128:
        r = [x[j].copy() for j in range(8)]
        i = 8
        while i < d - d % 8:
            for j in range(8):
                r[j] += x[i + j]
            i += 8
        out = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(i, d):
            out += x[i]
        return out
    return np.ascontiguousarray(np.moveaxis(x, 0, -1)).sum(axis=-1)


def partition_of(instance: Instance, release: Release) -> np.ndarray:
    """The released equivalence class of every record, in instance order (classes as
    the verifier forms them: records of one released vector)."""
    table = release.table
    if not table.index.equals(instance.row_ids):
        release = Release(table.loc[instance.row_ids], np.zeros(instance.n_rows, dtype=np.int64))
    return np.asarray(equivalence_classes(instance, release), dtype=np.int64)


class _Attribute:
    """One generalizable quasi-identifier: each record's position in the value order,
    and the loss of the tight label of a box (least, greatest position)."""

    def __init__(self, instance: Instance, name: str, objective: str, check=None):
        """`check` is called now and then while a categorical attribute's table is
        built (it raises when the deadline has passed)."""
        attr = instance.schema[name]
        codes = instance.codes(name)
        if attr.kind == "numeric":
            values, pos = np.unique(codes, return_inverse=True)
            span = float(values[-1] - values[0]) if len(values) > 1 else 0.0
            self.kind = "width"
            self.values = values.astype(float)
            self.scale = 1.0 / span if span > 0 else 0.0
        elif attr.kind == "categorical":
            if attr.hierarchy is None:
                raise IncompatibleRequirementError(
                    f"local_search needs a hierarchy for categorical attribute {name!r}."
                )
            h = attr.hierarchy
            node_id = {node: i for i, node in enumerate(h.nodes)}
            present = np.unique(codes).astype(np.int64)
            m = len(present)
            if m > MAX_TABLE_LEAVES:
                raise IncompatibleRequirementError(
                    f"local_search keeps at most {MAX_TABLE_LEAVES} values of categorical "
                    f"attribute {name!r}; it has {m}."
                )
            chains = [[node_id[x] for x in reversed(h.ancestors(attr.domain[int(c)]))]
                      for c in present]
            leaf_node = np.array([chain[-1] for chain in chains])
            order = np.argsort(leaf_node, kind="stable")  # active leaves in preorder
            rank_of_code = np.full(int(np.max(codes)) + 1, -1, dtype=np.int64)
            rank_of_code[present[order]] = np.arange(m)
            pos = rank_of_code[codes.astype(np.int64)]
            chains = [chains[i] for i in order]
            # Active leaves under each node.
            under: dict[int, int] = {}
            for chain in chains:
                for node in set(chain):
                    under[node] = under.get(node, 0) + 1
            # Active leaves under the lowest common ancestor of leaves i and i + 1; that
            # of leaves a < b (preorder) is the highest of those of a..b-1, so the one
            # with the most leaves under it: a row of the table is a running maximum.
            between = np.ones(max(m - 1, 0))
            for i in range(m - 1):
                ca, cb = chains[i], chains[i + 1]
                depth = 0
                while depth + 1 < min(len(ca), len(cb)) and ca[depth + 1] == cb[depth + 1]:
                    depth += 1
                between[i] = under[ca[depth]]
            count = np.ones((m, m))
            for a in range(m - 1):
                if check is not None:
                    check()
                row = np.maximum.accumulate(between[a:])
                count[a, a + 1:] = row
                count[a + 1:, a] = row
            # In place: the table is the one m x m array of floats being built (its
            # memory is what local_search counts).
            if objective == "ncp":
                count[count <= 1] = 0.0
                count /= m
            elif m > 1:
                count -= 1
                count /= m - 1
            else:
                count[:] = 0.0
            self.kind = "table"
            self.table = count
        else:  # ordered: the rank span over the active values, for NCP and LM alike
            values, pos = np.unique(codes, return_inverse=True)
            m = len(values)
            self.kind = "width"
            self.values = np.arange(m, dtype=float)
            self.scale = 1.0 / (m - 1) if m > 1 else 0.0
        self.name = name
        self.pos = np.asarray(pos, dtype=np.int64).reshape(-1)

    def loss(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The cell loss of the tight label of boxes lo..hi (positions, lo <= hi)."""
        if self.kind == "table":
            return self.table[lo, hi]
        return (self.values[hi] - self.values[lo]) * self.scale

    def as_table(self) -> np.ndarray | None:
        """The loss of every box as an m x m table (None above
        :data:`MAX_TABLE_LEAVES` values)."""
        if self.kind == "table":
            return self.table
        if len(self.values) > MAX_TABLE_LEAVES:
            return None
        return np.abs(self.values[None, :] - self.values[:, None]) * self.scale


@dataclass
class MovesResult:
    """What :func:`local_search` returns.

    Attributes
    ----------
    groups : numpy.ndarray of int
        Class id of every record (instance order).
    value, start_value : float
        The loss (objective units) of the result and of the start, as the search counts
        it (floats); the exact loss is that of the release built from `groups`.
    descents, kicks, accepted, kept : int
        Descents run, perturbations tried, perturbations whose descent was accepted
        and those among them that lowered the least loss found.
    changes : dict of str -> int
        Moves, swaps and splits applied (undone ones included).
    stopped : str
        Why the search ended: "local optimum" (also at once when the start loses
        nothing, or when every protected value has one class and no class has 2k
        records: no move, swap, split or kick can change it), "kicks", "deadline", or
        "set-up" when the deadline passed while the tables and classes were built
        (`groups` is then the start, `value` and `start_value` NaN).
    """

    groups: np.ndarray
    value: float
    start_value: float
    descents: int = 0
    kicks: int = 0
    accepted: int = 0
    kept: int = 0
    changes: dict = field(default_factory=lambda: {"move": 0, "swap": 0, "split": 0})
    stopped: str = "local optimum"


class _Stop(Exception):
    pass


class MoveSearch:
    """The partition under search: classes as boxes (see the module docstring).

    Class ids are slots of fixed arrays; a class emptied by a merge frees its slot,
    and a split takes a free one. A slot's `born` is the count of births when its class
    came alive, and a class's kept nearest classes are read only in slots born no later
    than they were found (`near_tick`): a slot reborn since holds another class.
    """

    def __init__(self, instance: Instance, k: int, groups: np.ndarray, objective: str,
                 *, candidates: int = 48, swap_classes: int = 12, seed=None,
                 deadline: float | None = None):
        self.k = k
        self.deadline = deadline
        self._check_time()
        self.attrs = [_Attribute(instance, name, objective, self._check_time)
                      for name in instance.schema.generalizable]
        n = instance.n_rows
        self.n = n
        self.pos = (np.column_stack([a.pos for a in self.attrs]) if self.attrs
                    else np.zeros((n, 0), dtype=np.int64))
        self.d = self.pos.shape[1]
        tables = []
        for a in self.attrs:
            self._check_time()
            tables.append(a.as_table())
        self.tabled = np.array([j for j, t in enumerate(tables) if t is not None], dtype=np.int64)
        self.untabled = [j for j, t in enumerate(tables) if t is None]
        sizes = [t.size for t in tables if t is not None]
        self.flat = np.concatenate([t.reshape(-1) for t in tables if t is not None]
                                   or [np.zeros(1)])
        self.offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if sizes else \
            np.zeros(0, dtype=np.int64)
        self.stride = np.array([t.shape[0] for t in tables if t is not None], dtype=np.int64)
        prot = instance.schema.protected
        self.key_of = (np.asarray(instance.codes(prot), dtype=np.int64) if prot
                       else np.zeros(n, dtype=np.int64))
        _, dense = np.unique(np.asarray(groups), return_inverse=True)
        dense = dense.reshape(-1).astype(np.int64)
        c = int(dense.max()) + 1 if n else 0
        cap = max(c, n // max(k, 1)) + 2
        self.group = dense
        self.members: list[np.ndarray | None] = [None] * cap
        order = np.argsort(dense, kind="stable")
        cuts = np.cumsum(np.bincount(dense, minlength=c))[:-1]
        for g, part in enumerate(np.split(order, cuts)):
            self.members[g] = part
        self.free = list(range(cap - 1, c - 1, -1))
        self.alive = np.zeros(cap, dtype=bool)
        self.alive[:c] = True
        self.size = np.zeros(cap, dtype=np.int64)
        self.lo = np.zeros((cap, self.d), dtype=np.int64)
        self.hi = np.zeros((cap, self.d), dtype=np.int64)
        self.cost = np.zeros(cap)
        self.key = np.full(cap, -1, dtype=np.int64)
        self.births = 0
        self.born = np.zeros(cap, dtype=np.int64)
        self.near_tick = np.zeros(cap, dtype=np.int64)
        self.wlo = np.zeros((n, self.d), dtype=np.int64)
        self.whi = np.zeros((n, self.d), dtype=np.int64)
        # Every attribute tabled (the common case): a box's losses are read from `flat`
        # at offset + lo * stride + hi, so positions are kept premultiplied (`pos_at`,
        # `wlo_at`: offset + position * stride; min(lo, p) * stride = min(lo * stride,
        # p * stride) as strides are positive), and best_change reads the boxes, sizes
        # and losses of the classes of a protected value from arrays kept per value
        # (`_key_cache`: a class's row rewritten when it changes) and each class's records
        # as one block (`_block_cache`, dropped when it changes): the same integers and
        # the same float sums as through `unit`, so the same changes.
        self.fast = not self.untabled and np.array_equal(self.tabled, np.arange(self.d))
        if self.fast:
            self.pos_at = self.pos * self.stride + self.offset
            self.wlo_at = np.zeros((n, self.d), dtype=np.int64)
        # Up to JOIN_CELLS, the loss per record of each class's box joined with each
        # value of each attribute (`join_box`, a row per class) and of each record's box
        # without it joined with each value (`join_without`, a row per record), read by
        # best_changes at a record's columns (`pofs`: the attribute's first column plus
        # its position): the same table entries, one read instead of a minimum, a
        # maximum and a sum of indices per cell.
        width = int(self.stride.sum()) if self.fast else 0
        self.joins = self.fast and self.d > 0 and n * width <= JOIN_CELLS
        if self.joins:
            self.width = width
            first = np.concatenate([[0], np.cumsum(self.stride)[:-1]]).astype(np.int64)
            self.pofs = self.pos + first
            jj = np.repeat(np.arange(self.d), self.stride)  # attribute of each column
            jp = np.arange(width) - first[jj]  # value of each column
            self._jcols = (jj, jp, self.offset[jj], self.stride[jj])
            self.join_box = np.zeros((cap, width))
            self.join_without = np.zeros((n, width))
        self._key_cache: dict[int, tuple] = {}
        self._block_cache: dict[int, np.ndarray] = {}
        self.near_cache: dict[int, np.ndarray] = {}  # class -> its nearest classes
        for g in range(c):
            self._check_time()
            if len(np.unique(self.key_of[self.members[g]])) > 1:
                raise InvalidParameterError(
                    "local_search needs a partition whose classes hold one protected value each."
                )
            self._refresh(g)
        self.candidates = candidates
        self.swap_classes = swap_classes
        self.rng = check_random_state(seed)
        self.changes = {"move": 0, "swap": 0, "split": 0}
        self.journal: list[tuple[int, int]] | None = None  # (record, previous class)

    # ------------------------------------------------------------------ state
    def unit(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Loss per record of boxes (..., d): the sum of their labels' cell losses."""
        if self.fast:
            return self.flat[self.offset + lo * self.stride + hi].sum(axis=-1)
        tab = self.tabled
        out = self.flat[self.offset + lo[..., tab] * self.stride + hi[..., tab]].sum(axis=-1)
        for j in self.untabled:
            out = out + self.attrs[j].loss(lo[..., j], hi[..., j])
        return out

    @property
    def total(self) -> float:
        return float(self.cost[self.alive].sum())

    def _refresh(self, g: int) -> None:
        """Recompute class g's box, size, loss, key and its records' boxes without them."""
        rows = self.members[g]
        m = len(rows)
        self.size[g] = m
        self.near_cache.pop(g, None)
        self._block_cache.pop(g, None)
        was = (bool(self.alive[g]), int(self.key[g]))
        self._set_class(g, rows, m)
        # The cached arrays of the classes of g's value: g's row updated in place, or
        # dropped when g died, came alive or changed value.
        now = (bool(self.alive[g]), int(self.key[g]))
        if now != was:
            self._key_cache.pop(was[1], None)
            self._key_cache.pop(now[1], None)
        elif now[0] and now[1] in self._key_cache:
            same, lo_at, hi, grown, cost = self._key_cache[now[1]]
            j = int(np.searchsorted(same, g))
            lo_at[j] = self.lo[g] * self.stride + self.offset
            hi[j] = self.hi[g]
            grown[j] = self.size[g] + 1
            cost[j] = self.cost[g]

    def _set_class(self, g: int, rows, m: int) -> None:
        if m == 0:
            if self.alive[g]:
                self.free.append(g)
            self.alive[g] = False
            self.cost[g] = 0.0
            self.members[g] = None
            return
        if not self.alive[g]:
            self.births += 1
            self.born[g] = self.births
        self.alive[g] = True
        self.key[g] = self.key_of[rows[0]]
        x = self.pos[rows]
        lo, hi = x.min(axis=0), x.max(axis=0)
        self.lo[g], self.hi[g] = lo, hi
        self.cost[g] = m * float(self.unit(lo[None, :], hi[None, :])[0])
        if m == 1:
            self.wlo[rows] = np.iinfo(np.int64).max // 4
            self.whi[rows] = -1
            if self.fast:  # min(wlo, p) = p for every position p < stride
                self.wlo_at[rows] = (self.stride - 1) * self.stride + self.offset
            if self.joins:
                self._set_joins(g, rows)
            return
        part = np.partition(x, 1, axis=0)
        second_lo = part[1]
        part = np.partition(x, m - 2, axis=0)
        second_hi = part[m - 2]
        self.wlo[rows] = np.where(x == lo, second_lo, lo)
        self.whi[rows] = np.where(x == hi, second_hi, hi)
        if self.fast:
            self.wlo_at[rows] = self.wlo[rows] * self.stride + self.offset
        if self.joins:
            self._set_joins(g, rows)

    def _set_joins(self, g: int, rows) -> None:
        """Class g's row of `join_box` and its records' rows of `join_without`."""
        jj, jp, joff, jstride = self._jcols
        flat = self.flat
        self.join_box[g] = flat[joff + np.minimum(self.lo[g][jj], jp) * jstride
                                + np.maximum(self.hi[g][jj], jp)]
        self.join_without[rows] = flat[joff + np.minimum(self.wlo[rows][:, jj], jp) * jstride
                                       + np.maximum(self.whi[rows][:, jj], jp)]

    def _assign(self, rows: np.ndarray, g: int) -> None:
        """Move `rows` into class g (a slot, possibly free), journaled; boxes not
        refreshed."""
        if self.journal is not None:
            self.journal.extend((int(r), int(self.group[r])) for r in rows)
        self.group[rows] = g

    def _relocate(self, rows: np.ndarray, source: int, target: int) -> None:
        """Move `rows` from class source to class target and refresh both."""
        self._assign(rows, target)
        keep = self.members[source]
        self.members[source] = keep[~np.isin(keep, rows)]
        if self.members[target] is None:
            if target in self.free:
                self.free.remove(target)
            self.members[target] = np.asarray(rows, dtype=np.int64)
        else:
            self.members[target] = np.concatenate([self.members[target], rows])
        self._refresh(source)
        self._refresh(target)

    def can_change(self) -> bool:
        """Whether some protected value has two classes or some class 2k records
        (else no move, swap, split or kick applies)."""
        keys = self.key[self.alive]
        return bool(len(np.unique(keys)) < len(keys) or (self.size >= 2 * self.k).any())

    def _check_time(self) -> None:
        if self.deadline is not None and _clock() >= self.deadline:
            raise _Stop

    def nearest(self, g: int, count: int, keep: bool = False) -> np.ndarray:
        """The `count` live classes of g's protected value (g excluded) whose box
        joined with g's grows the loss least. With `keep`, above
        :data:`PREFILTER_CLASSES` classes of the value, g's :data:`NEAR_CLASSES` nearest
        are kept too (`near_cache`, the candidates of its records), from the same
        losses: a class just changed needs both."""
        key = int(self.key[g])
        if self.fast:  # the value's kept arrays: the same entries summed, g's left out
            same, lo_at, hi, grown, cost = self._key_entry(key)
            j = int(np.searchsorted(same, g))
            joined = self.flat[np.minimum(lo_at, lo_at[j]) + np.maximum(hi, hi[j])].sum(axis=-1)
            grow = np.delete((grown - 1 + self.size[g]) * joined - cost - self.cost[g], j)
            same = np.delete(same, j)
        else:
            same = np.flatnonzero(self.alive & (self.key == key))
            same = same[same != g]
            lo = np.minimum(self.lo[same], self.lo[g])
            hi = np.maximum(self.hi[same], self.hi[g])
            grow = ((self.size[same] + self.size[g]) * self.unit(lo, hi) - self.cost[same]
                    - self.cost[g])
        if keep and len(same) >= PREFILTER_CLASSES:
            self._keep_near(g, same if len(same) <= NEAR_CLASSES
                            else same[np.argpartition(grow, NEAR_CLASSES)[:NEAR_CLASSES]])
        if len(same) <= count:
            return same
        return same[np.argpartition(grow, count)[:count]]

    def _keep_near(self, g: int, near: np.ndarray) -> None:
        """Keep `near` as class g's nearest classes, found now (after `births` births)."""
        self.near_cache[g] = near
        self.near_tick[g] = self.births

    # ------------------------------------------------------------------ moves
    def _candidates(self, a: int, key: int) -> np.ndarray:
        """The classes record of class a (protected value `key`) may join: the live
        classes of its value but a, among the nearest of a above PREFILTER_CLASSES (those
        of its kept ones still alive in the slots they were found in: a slot born since
        holds a class they were not found among)."""
        same = self._same(key)
        if len(same) > PREFILTER_CLASSES:
            near = self.near_cache.get(a)
            if near is None:
                near = self.nearest(a, NEAR_CLASSES)
                self._keep_near(a, near)
            same = near[self.alive[near] & (self.born[near] <= self.near_tick[a])]
        return same[same != a]

    def _same(self, key: int) -> np.ndarray:
        """The live classes of protected value `key`, ascending."""
        return (self._key_entry(key)[0] if self.fast
                else np.flatnonzero(self.alive & (self.key == key)))

    def _block(self, b: int) -> np.ndarray:
        """Class b's records as columns: premultiplied positions, positions,
        premultiplied wlo, whi, record, class, size (d, d, d, d, 1, 1, 1), and with
        `joins` their columns in a join row (`pofs`, d) and first cell in `join_without`
        (1)."""
        block = self._block_cache.get(b)
        if block is None:
            rows = self.members[b]
            block = np.empty((len(rows), 5 * self.d + 4 if self.joins else 4 * self.d + 3),
                             dtype=np.int64)
            d = self.d
            block[:, :d] = self.pos_at[rows]
            block[:, d:2 * d] = self.pos[rows]
            block[:, 2 * d:3 * d] = self.wlo_at[rows]
            block[:, 3 * d:4 * d] = self.whi[rows]
            block[:, 4 * d] = rows
            block[:, 4 * d + 1] = b
            block[:, 4 * d + 2] = self.size[b]
            if self.joins:
                block[:, 4 * d + 3:5 * d + 3] = self.pofs[rows]
                block[:, 5 * d + 3] = rows * self.width
            self._block_cache[b] = block
        return block

    def _key_entry(self, key: int) -> tuple:
        """The live classes of protected value `key` (ascending) with their premultiplied
        lows, highs, sizes plus one and losses; kept (`_key_cache`) until a class of the
        value dies or is born (a class's row is rewritten when it changes)."""
        entry = self._key_cache.get(key)
        if entry is None:
            same = np.flatnonzero(self.alive & (self.key == key))
            entry = (same, self.lo[same] * self.stride + self.offset, self.hi[same],
                     self.size[same] + 1, self.cost[same])
            self._key_cache[key] = entry
        return entry

    def best_change(self, r: int):
        """The best move or swap of record r: (delta, kind, target class, other record)."""
        if not self.fast:
            return self._best_change_any(r)
        a = int(self.group[r])
        key = int(self.key[a])
        same, lo_at, hi, grown, cost = self._key_entry(key)
        if len(same) > PREFILTER_CLASSES:
            same = self._candidates(a, key)
            lo_at, hi = self.lo[same] * self.stride + self.offset, self.hi[same]
            grown, cost = self.size[same] + 1, self.cost[same]
        else:  # the classes of its value but a
            other = same != a
            same, lo_at, hi, grown, cost = (same[other], lo_at[other], hi[other],
                                            grown[other], cost[other])
        if not len(same):
            return 0.0, None, -1, -1
        flat = self.flat
        p = self.pos[r]
        p_at = self.pos_at[r]
        add = grown * flat[np.minimum(lo_at, p_at) + np.maximum(hi, p)].sum(axis=-1) - cost
        size_a = self.size[a]
        wlo_r, whi_r = self.wlo_at[r], self.whi[r]
        own = (float(flat[(wlo_r + whi_r)[None, :]].sum(axis=-1)[0])
               if size_a - 1 >= self.k else None)
        best, near = self._move_and_swap_classes(a, same, add, own)
        cache = self._block_cache
        block = np.concatenate([cache[b] if b in cache else self._block(b)
                                for b in near.tolist()])
        if len(block):
            d = self.d
            new_a = size_a * flat[np.minimum(wlo_r, block[:, :d])
                                  + np.maximum(whi_r, block[:, d:2 * d])].sum(axis=-1)
            gs = block[:, 4 * d + 1]
            new_b = block[:, 4 * d + 2] * flat[np.minimum(block[:, 2 * d:3 * d], p_at)
                                               + np.maximum(block[:, 3 * d:4 * d], p)].sum(axis=-1)
            delta = new_a + new_b - self.cost[a] - self.cost[gs]
            i = int(np.argmin(delta))
            if delta[i] < best[0]:
                best = (float(delta[i]), "swap", int(gs[i]), int(block[i, 4 * d]))
        return best

    def best_changes(self, rows: np.ndarray, cand: np.ndarray | None = None):
        """best_change of each of `rows` (records of one protected value, every
        attribute tabled), priced together on the partition as it is: arrays of the
        deltas, kinds (0 none, 1 move, 2 swap), target classes and other records. The
        candidates of a record are the classes of its value but its own, or its row of
        `cand` (:meth:`_candidates` of its class, rows of one length) above
        :data:`PREFILTER_CLASSES` classes. Each row reads the same table entries, sums
        them in the same order and breaks ties as best_change does (argpartition and
        argmin row by row), so the same changes."""
        flat, d, k = self.flat, self.d, self.k
        count = len(rows)
        at = np.arange(count)
        a = self.group[rows]
        if cand is None:
            same, lo_at, hi, grown, cost = self._key_entry(int(self.key[a[0]]))
            c = len(same) - 1  # candidates of each record: its value's classes but its own
        else:
            c = cand.shape[1]
            grown, cost = self.size[cand] + 1, self.cost[cand]
        delta = np.zeros(count)
        kind = np.zeros(count, dtype=np.int64)
        target = np.full(count, -1, dtype=np.int64)
        other = np.full(count, -1, dtype=np.int64)
        if c < 1:
            return delta, kind, target, other
        if self.joins:  # cells as (attribute, record, class): attributes summed in rows
            pofs = self.pofs[rows].T
            add = grown * _sum_rows(self.join_box.reshape(-1)[
                pofs[:, :, None] + (same if cand is None else cand) * self.width]) - cost
        else:
            p = self.pos[rows]
            p_at = self.pos_at[rows]
            if cand is None:
                add = grown * flat[np.minimum(lo_at, p_at[:, None, :])
                                   + np.maximum(hi, p[:, None, :])].sum(axis=-1) - cost
            else:  # in place: two arrays of records x candidates x attributes held at once
                idx = self.lo[cand]
                idx *= self.stride
                idx += self.offset
                np.minimum(idx, p_at[:, None, :], out=idx)
                hi = self.hi[cand]
                np.maximum(hi, p[:, None, :], out=hi)
                idx += hi
                del hi
                add = grown * flat[idx].sum(axis=-1) - cost
        if cand is None:
            cols = np.arange(c)
            cols = cols + (cols >= np.searchsorted(same, a)[:, None])  # a's column left out
            add = _take_rows(add, cols)
            cand = same[cols]
        if c > self.candidates:
            keep = np.argpartition(add, self.candidates, axis=1)[:, : self.candidates]
            cand = _take_rows(cand, keep)
            add = _take_rows(add, keep)
        size_a = self.size[a]
        wlo_r, whi_r = self.wlo_at[rows], self.whi[rows]
        own = flat[wlo_r + whi_r].sum(axis=-1)
        can = size_a - 1 >= k
        removed = self.cost[a] - (size_a - 1) * own
        move = add - removed[:, None]
        i = move.argmin(axis=1)
        best = move[at, i]
        moved = can & (best < 0.0)
        delta[moved] = best[moved]
        kind[moved] = 1
        target[moved] = cand[at, i][moved]
        if cand.shape[1] > self.swap_classes:
            keep = np.argpartition(add, self.swap_classes, axis=1)[:, : self.swap_classes]
            cand = _take_rows(cand, keep)
        cache = self._block_cache
        block = np.concatenate([cache[b] if b in cache else self._block(b)
                                for b in cand.reshape(-1).tolist()])
        lengths = self.size[cand].sum(axis=1)
        row = np.repeat(at, lengths)
        gs = block[:, 4 * d + 1]
        if self.joins:
            without = self.join_without.reshape(-1)
            new_a = size_a[row] * _sum_rows(without[block[:, 4 * d + 3:5 * d + 3].T
                                                    + (rows * self.width)[row]])
            new_b = block[:, 4 * d + 2] * _sum_rows(without[pofs[:, row]
                                                            + block[:, 5 * d + 3]])
        else:
            new_a = size_a[row] * flat[np.minimum(wlo_r[row], block[:, :d])
                                       + np.maximum(whi_r[row], block[:, d:2 * d])].sum(axis=-1)
            new_b = block[:, 4 * d + 2] * flat[np.minimum(block[:, 2 * d:3 * d], p_at[row])
                                               + np.maximum(block[:, 3 * d:4 * d], p[row])
                                               ].sum(axis=-1)
        swap = new_a + new_b - self.cost[a][row] - self.cost[gs]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        low = np.minimum.reduceat(swap, starts)
        hits = np.flatnonzero(swap == low[row])
        i = hits[np.searchsorted(row[hits], at)]  # each row's first least (as argmin)
        swapped = low < delta
        delta[swapped] = low[swapped]
        kind[swapped] = 2
        target[swapped] = gs[i][swapped]
        other[swapped] = block[i, 4 * d][swapped]
        return delta, kind, target, other

    def _move_and_swap_classes(self, a: int, same: np.ndarray, add: np.ndarray,
                               own: float | None):
        """Of the candidate classes `same` (what record r of class a adds to each: `add`),
        the `candidates` cheapest kept, r's best move to one of them (`own`: the cell
        loss of a's box without r, None when a cannot give r up) and the `swap_classes`
        of them r joins most cheaply, whose records r may swap with."""
        if len(same) > self.candidates:
            keep = np.argpartition(add, self.candidates)[: self.candidates]
            same, add = same[keep], add[keep]
        best = (0.0, None, -1, -1)
        if own is not None:
            delta = add - (self.cost[a] - (self.size[a] - 1) * own)
            i = int(np.argmin(delta))
            if delta[i] < best[0]:
                best = (float(delta[i]), "move", int(same[i]), -1)
        if len(same) > self.swap_classes:
            return best, same[np.argpartition(add, self.swap_classes)[: self.swap_classes]]
        return best, same

    def _best_change_any(self, r: int):
        """best_change when some attribute has no table (see `fast`)."""
        a = int(self.group[r])
        p = self.pos[r]
        key = self.key_of[r]
        same = self._candidates(a, key)
        if not len(same):
            return 0.0, None, -1, -1
        joined = self.unit(np.minimum(self.lo[same], p), np.maximum(self.hi[same], p))
        add = (self.size[same] + 1) * joined - self.cost[same]
        own = (float(self.unit(self.wlo[r][None, :], self.whi[r][None, :])[0])
               if self.size[a] - 1 >= self.k else None)
        best, near = self._move_and_swap_classes(a, same, add, own)
        others = np.concatenate([self.members[b] for b in near])
        if len(others):
            ps = self.pos[others]
            gs = self.group[others]
            new_a = self.size[a] * self.unit(np.minimum(self.wlo[r], ps),
                                             np.maximum(self.whi[r], ps))
            new_b = self.size[gs] * self.unit(np.minimum(self.wlo[others], p),
                                              np.maximum(self.whi[others], p))
            delta = new_a + new_b - self.cost[a] - self.cost[gs]
            i = int(np.argmin(delta))
            if delta[i] < best[0]:
                best = (float(delta[i]), "swap", int(gs[i]), int(others[i]))
        return best

    def apply(self, r: int, kind: str, b: int, s: int) -> tuple[int, int]:
        a = int(self.group[r])
        if kind == "move":
            self._relocate(np.array([r]), a, b)
        else:
            self._relocate(np.array([r]), a, b)
            self._relocate(np.array([s]), b, a)
        self.changes[kind] += 1
        return a, b

    def best_split(self, g: int):
        """The cut of class g (at least 2k records) along one attribute's order that
        lowers the loss most: (delta, rows of the second part), or (0, None)."""
        rows = self.members[g]
        m = len(rows)
        k = self.k
        if m < 2 * k or not self.free:
            return 0.0, None
        x = self.pos[rows]
        best = (0.0, None)
        for j in range(self.d):
            order = np.argsort(x[:, j], kind="stable")
            xs = x[order]
            plo = np.minimum.accumulate(xs, axis=0)
            phi = np.maximum.accumulate(xs, axis=0)
            slo = np.minimum.accumulate(xs[::-1], axis=0)[::-1]
            shi = np.maximum.accumulate(xs[::-1], axis=0)[::-1]
            cut = np.arange(k, m - k + 1)  # first part: xs[:cut]
            left = cut * self.unit(plo[cut - 1], phi[cut - 1])
            right = (m - cut) * self.unit(slo[cut], shi[cut])
            delta = left + right - self.cost[g]
            i = int(np.argmin(delta))
            if delta[i] < best[0] - EPS:
                best = (float(delta[i]), rows[order[cut[i]:]])
        return best

    def split(self, g: int, rows: np.ndarray) -> int:
        target = self.free.pop()
        self.members[target] = None
        self._relocate(rows, g, target)
        self.changes["split"] += 1
        return target

    # ------------------------------------------------------------------ descent
    def descend(self, rows: np.ndarray | None = None, classes: Sequence[int] = ()) -> None:
        """Apply improving changes until none of the records queued has one: all
        records (seeded random order) when `rows` is None. Classes touched queue their
        records and those of their nearest classes again."""
        queue = list(self.rng.permutation(self.n)) if rows is None else list(rows)
        split_queue = list(np.flatnonzero(self.alive)) if rows is None else list(classes)
        queued = np.zeros(self.n, dtype=bool)
        queued[queue] = True
        batch = FIRST_BATCH
        while queue or split_queue:
            self._check_time()
            touched: tuple[int, ...] = ()
            if split_queue:
                g = int(split_queue.pop())
                if not self.alive[g]:
                    continue
                delta, part = self.best_split(g)
                if part is None:
                    continue
                touched = (g, self.split(g, part))
            else:
                change = self._first_change(queue, queued, batch)
                if change is None:
                    batch = min(2 * batch, BATCH)
                    continue
                batch = FIRST_BATCH
                touched = self.apply(*change)
            for g in touched:
                if not self.alive[g]:
                    continue
                split_queue.append(g)
                many = len(self._same(int(self.key[g]))) > PREFILTER_CLASSES
                near = self.nearest(g, REQUEUE_MANY if many else REQUEUE, keep=True)
                for h in (g, *near.tolist()):
                    rows_h = self.members[h]
                    fresh = rows_h[~queued[rows_h]]
                    queued[fresh] = True
                    queue.extend(self.rng.permutation(fresh).tolist())

    def _first_change(self, queue: list, queued: np.ndarray, batch: int):
        """Pop records off the end of `queue` up to the first that has an improving move
        or swap, and return (record, kind, class, other record) of that change, or None
        when none of those popped has one. Up to `batch` records of one protected value
        are priced together (best_changes) when every attribute is tabled, above
        :data:`PREFILTER_CLASSES` classes of the value each on its own candidates
        (:meth:`_near_rows`); those after the first with a change stay queued."""
        key = int(self.key_of[queue[-1]])
        if self.fast and batch > 1:
            rows = np.array(queue[-batch:][::-1], dtype=np.int64)
            rows = rows[: np.argmin(np.append(self.key_of[rows] == key, False))]
            entry = self._key_entry(key)
            if len(entry[0]) > PREFILTER_CLASSES:
                rows, cand = self._near_rows(rows, key)
            else:
                rows, cand = rows[: self._batch_rows(entry)], None
            if len(rows) > 1:
                delta, kind, target, other = self.best_changes(rows, cand)
                found = np.flatnonzero((kind > 0) & (delta < -EPS))
                popped = len(rows) if not len(found) else int(found[0]) + 1
                del queue[-popped:]
                queued[rows[:popped]] = False
                if not len(found):
                    return None
                i = int(found[0])
                return (int(rows[i]), "move" if kind[i] == 1 else "swap", int(target[i]),
                        int(other[i]))
        r = int(queue.pop())
        queued[r] = False
        delta, kind, b, s = self.best_change(r)
        if kind is None or delta >= -EPS:
            return None
        return r, kind, b, s

    def _near_rows(self, rows: np.ndarray, key: int) -> tuple[np.ndarray, np.ndarray]:
        """Of `rows` (queued records of protected value `key`, more than
        :data:`PREFILTER_CLASSES` classes), the first ones best_changes may price
        together on their candidates (:meth:`_candidates`, of one length), and their
        candidates (a row each). Past the first record's class, a record whose class's
        nearest classes are not kept ends them: one by one, they would be found when
        that record is priced, after the changes before it (finding them now would
        change the search), and found for nothing when a record before it changes its
        class. So does a record whose swaps may read more than :data:`SWAP_ROWS`
        records (the sizes of the `swap_classes` largest of its candidates summed), and
        they keep records x candidates x attributes and records x swap records x block
        columns within :data:`BATCH_CELLS`."""
        near: dict[int, np.ndarray] = {}
        taken = []
        for r in rows.tolist():
            a = int(self.group[r])
            cand = near.get(a)
            if cand is None:
                if taken and a not in self.near_cache:
                    break
                cand = near[a] = self._candidates(a, key)
            if taken and len(cand) != len(taken[0]):
                break
            taken.append(cand)
        cand = np.array(taken, dtype=np.int64)
        c = cand.shape[1]
        top = min(self.swap_classes, self.candidates, c)
        swap = (np.partition(self.size[cand], c - top, axis=1)[:, c - top:].sum(axis=1) if top
                else np.zeros(len(cand), dtype=np.int64))
        width = 5 * self.d + 4 if self.joins else 4 * self.d + 3
        fits = (swap <= SWAP_ROWS) & (np.cumsum(swap) * width <= BATCH_CELLS)
        count = min(int(np.argmin(np.append(fits, False))), BATCH_CELLS // max(c * self.d, 1))
        return rows[:count], cand[:count]

    def _batch_rows(self, entry: tuple) -> int:
        """Records of the protected value of `entry` (_key_entry) that best_changes may
        price together: 0 when a record's swaps may read more than :data:`SWAP_ROWS`
        records (the sizes of the `swap_classes` largest classes of its value summed),
        else as many as keep its cells (records x classes x attributes, and records x
        swap records x block columns) within :data:`BATCH_CELLS`."""
        same, grown = entry[0], entry[3]
        c = len(same)
        top = min(self.swap_classes, self.candidates, c - 1)
        swap = int(np.partition(grown, c - top)[c - top:].sum()) - top if top > 0 else 0
        if swap > SWAP_ROWS:
            return 0
        width = 5 * self.d + 4 if self.joins else 4 * self.d + 3
        return BATCH_CELLS // max(c * max(self.d, 1), swap * width, 1)

    # ------------------------------------------------------------------ kicks
    def kick(self, kind: str = "regroup") -> tuple[int, np.ndarray]:
        """Perturb around a class g drawn by its loss (:meth:`_drawn`), one of
        :data:`KICKS` (module docstring): pool it with its two nearest and cut
        the pool again ("regroup"), merge it with one of its three nearest ("merge"),
        dissolve it, each record joining the nearby class it joins most cheaply
        ("dissolve"), or one of the last two ("mixed"). Returns a class and the records
        to re-examine."""
        g = self._drawn()
        if kind == "mixed":
            kind = "merge" if self.rng.random() < 0.25 else "dissolve"
        near = self.nearest(g, 2 if kind == "regroup" else 3)
        if not len(near):
            return g, np.zeros(0, dtype=np.int64)
        if kind == "regroup":
            return self._regroup(g, near)
        if kind == "merge":
            h = int(near[self.rng.integers(len(near))])
            self._relocate(self.members[h].copy(), h, g)
            around = [g, *self.nearest(g, 4).tolist()]
            return g, np.concatenate([self.members[x] for x in around])
        pool = self.nearest(g, 6)
        landed = set()
        for r in self.members[g].copy().tolist():
            p = self.pos[r]
            add = (self.size[pool] + 1) * self.unit(np.minimum(self.lo[pool], p),
                                                     np.maximum(self.hi[pool], p)) - self.cost[pool]
            b = int(pool[int(np.argmin(add))])
            self._relocate(np.array([r]), g, b)
            landed.add(b)
        landed = sorted(landed)
        return landed[0], np.concatenate([self.members[x] for x in pool if self.alive[x]])

    def _drawn(self) -> int:
        """A live class drawn with probability proportional to its loss per record (at
        random when every class is lossless): the classes that lose most have most to
        gain. UCI Adult (7 QIs and race), k = 5, LM, from lattice-local's release, 40 s,
        seeds 0 and 1: LM_avg 0.03386 and 0.03383 drawn at random, 0.03330 and 0.03323
        by loss per record, 0.03342 and 0.03338 by its square root, 0.03345 and 0.03339
        by its square; German credit (7 QIs, NCP, 30 s, seeds 0-3), 0.1922 and 0.2988 on
        average for k = 5 and 10 at random, 0.1918 and 0.2986 by loss."""
        live = np.flatnonzero(self.alive)
        weight = np.cumsum(self.cost[live] / self.size[live])
        if not weight[-1] > 0:  # every class lossless (or a loss not a number)
            return int(live[self.rng.integers(len(live))])
        at = np.searchsorted(weight, self.rng.random() * weight[-1], side="right")
        return int(live[min(int(at), len(live) - 1)])

    def _regroup(self, g: int, near: np.ndarray) -> tuple[int, np.ndarray]:
        """Pool class g and its nearest classes `near` (two), and cut the
        pool again greedily: from a random record, a class grows by the record that
        joins its box most cheaply until it holds k; the last class takes the rest."""
        classes = [g, *near.tolist()]
        pool = np.concatenate([self.members[x] for x in classes])
        left = self.rng.permutation(pool)
        parts = []
        for _ in range(len(pool) // self.k - 1):
            box_lo = box_hi = self.pos[left[0]]
            taken = [0]
            free = np.ones(len(left), dtype=bool)
            free[0] = False
            while len(taken) < self.k:
                idx = np.flatnonzero(free)
                x = self.pos[left[idx]]
                grow = self.unit(np.minimum(box_lo, x), np.maximum(box_hi, x))
                pick = int(idx[int(np.argmin(grow))])
                taken.append(pick)
                free[pick] = False
                box_lo = np.minimum(box_lo, self.pos[left[pick]])
                box_hi = np.maximum(box_hi, self.pos[left[pick]])
            parts.append(left[taken])
            left = left[free]
        parts.append(left)
        while len(classes) < len(parts):
            slot = self.free.pop()
            self.members[slot] = None
            classes.append(slot)
        for x, part in zip(classes, parts):
            for y in classes:
                if y != x:
                    moving = part[self.group[part] == y]
                    if len(moving):
                        self._relocate(moving, y, x)
        return g, pool

    def undo(self) -> None:
        """Return every record of the journal to the class it had before the kick."""
        journal, self.journal = self.journal, None
        previous: dict[int, int] = {}
        for r, g in journal:
            previous.setdefault(r, g)  # the first entry holds the class before the kick
        touched: dict[int, None] = {}
        for r, g in previous.items():
            touched[int(self.group[r])] = None
            touched[g] = None
            self.group[r] = g
        for g in touched:
            rows = np.flatnonzero(self.group == g)
            if len(rows) and not self.alive[g]:
                self.free.remove(g)
            self.members[g] = rows
            self._refresh(g)


def local_search(
    instance: Instance,
    requirements: Sequence[Requirement],
    groups: np.ndarray,
    *,
    objective: str = "ncp",
    seed=None,
    deadline: float | None = None,
    max_kicks: int | None = None,
    candidates: int = 48,
    swap_classes: int = 12,
    kick: str = "regroup",
    accept: float = ACCEPT,
) -> MovesResult:
    """Iterated local search from a k-anonymous partition (see the module docstring).

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        KAnonymity only (several: the largest k).
    groups : array of int
        A class id per record (instance order): a partition whose classes hold at
        least k records and one protected value each (:func:`partition_of` reads it
        from a release).
    objective : {"ncp", "lm"}
    seed : int, Generator or None
        The order records are examined in and the perturbations: the same seed, start
        and number of kicks give the same partition.
    deadline : float, optional
        ``time.perf_counter()`` value at which the search stops (checked before every
        record examined or batch of at most :data:`BATCH` records priced together, and
        while the tables and classes are set up) and returns the
        best partition found (the start when the set-up did not end in time).
    max_kicks : int, optional
        Perturbations after the first descent (default: until the deadline; 0 without
        a deadline).
    candidates, swap_classes : int
        Classes a record may move to (those it joins most cheaply), and among them the
        classes whose records it may swap with.
    kick : {"regroup", "mixed", "dissolve", "merge"}
        The perturbation (module docstring). On German credit (7 quasi-identifiers,
        NCP, seed 0) from lattice-local's release (1,521.55 for k = 5, 2,221.93 for
        k = 10), 40 s on a shared 2-core machine (8-11 s CPU each): "mixed" 1,433.3 and
        2,170.1; "regroup" of three classes 1,390.5 and 2,144.6, of two 1,422.3 and
        2,139.2, of two or three (drawn) 1,377.5 and 2,138.2. With the class drawn by
        its loss (:meth:`MoveSearch._drawn`), GCP averaged over seeds 0-3, 30 s each,
        two runs at once on 2 cores: regroup of two or three 0.1921 and 0.2987, of three
        (the default) 0.1917 and 0.2981; on UCI Adult (7 QIs and race, k = 5, LM, 40 s,
        seeds 0 and 1), LM_avg 0.03347 of two, 0.03327 of two or three, 0.03309 of
        three, 0.03316 of four.
    accept : float, default=ACCEPT
        The threshold of acceptance at the start of the kicks, in losses of k records
        at the mean loss per record after the first descent (:data:`ACCEPT`); it falls
        linearly to 0 by the last kick (`max_kicks`) or by the deadline, and applies
        when at least :data:`ACCEPT_KICKS` kicks a class are expected. 0: a kick's
        descent is kept only when it ends no higher than the partition it started from.

    Raises
    ------
    IncompatibleRequirementError
        For a requirement other than k-anonymity, or an attribute the moves cannot cost
        (a categorical one without hierarchy, or above :data:`MAX_TABLE_LEAVES` values).
    InvalidParameterError
        For another objective, or a partition with a class under k or of two protected
        values.
    MemoryLimitError
        When its arrays (positions, boxes with and without each record: about
        40 d + 64 bytes a record, and 16 bytes a record and value when records times
        values are at most :data:`JOIN_CELLS`; a table of the loss of every box of an attribute's
        m values, held twice: 16 m^2 bytes; every class's records as a block of 4 d + 3
        columns, 5 d + 4 with the joins, 8 bytes each; a batch's :data:`BATCH_ARRAYS`
        arrays of :data:`BATCH_CELLS` cells, 8 MB; kept per class, at most n / k + 2 of
        them, its box's arrays and when it was born and its nearest classes found, 40 +
        16 d bytes, its :data:`NEAR_CLASSES` nearest classes, 8 bytes each, and, when
        every attribute has a table, its row of its protected value's arrays, 16 d + 24
        bytes; a
        search for a class's nearest classes, 3 arrays of 8 d bytes a class of its
        protected value, 5 when an attribute has no table: see :func:`_nearest_peak`)
        exceed the memory limit.
    """
    check_option(objective, "objective", "local_search", MOVE_OBJECTIVES)
    check_option(kick, "kick", "local_search", KICKS)
    for req in requirements:
        if not isinstance(req, KAnonymity):
            raise IncompatibleRequirementError(
                f"local_search keeps k-anonymity only; it cannot keep {req}."
            )
    k = max((req.k for req in requirements), default=1)
    check_int(candidates, "candidates", "local_search", low=1)
    check_int(swap_classes, "swap_classes", "local_search", low=1)
    if (isinstance(accept, bool) or not isinstance(accept, (int, float))
            or not 0 <= accept < float("inf")):
        raise InvalidParameterError(
            f"The 'accept' parameter of local_search must be a number >= 0. Got {accept!r} instead."
        )
    groups = np.asarray(groups)
    if groups.shape != (instance.n_rows,):
        raise InvalidParameterError(
            f"The 'groups' parameter of local_search must hold one class per record "
            f"({instance.n_rows}). Got shape {groups.shape} instead."
        )
    if instance.n_rows and np.unique(groups, return_counts=True)[1].min() < k:
        raise InvalidParameterError(
            f"The 'groups' parameter of local_search must give classes of at least k = {k} records."
        )
    d = len(instance.schema.generalizable)
    # Each table of m values is held twice (the attribute's and the flat copy), and
    # building one takes a mask of m x m bytes besides.
    values = [len(np.unique(instance.codes(name))) for name in instance.schema.generalizable]
    width = sum(values)  # the joins' row (MoveSearch, JOIN_CELLS), every attribute tabled
    tabled = all(m <= MAX_TABLE_LEAVES for m in values)  # MoveSearch's `fast`
    joins = tabled and instance.n_rows * width <= JOIN_CELLS
    classes = instance.n_rows // max(k, 1) + 2
    check_memory(
        instance.n_rows * (8 * 5 * d + 64)
        + (16 * instance.n_rows * width if joins else 0)
        + sum(16 * m * m for m in values if m <= MAX_TABLE_LEAVES)
        + max((m * m for m in values if m <= MAX_TABLE_LEAVES), default=0)
        # The classes' blocks (kept once read, every class at most) and a batch's arrays.
        + 8 * instance.n_rows * (5 * d + 4 if joins else 4 * d + 3)
        + BATCH_ARRAYS * 8 * BATCH_CELLS
        # Kept per class: its box's arrays, when it was born and its nearest classes found,
        # and those classes; with every attribute tabled, its row of its value's arrays
        # (`_key_cache`: the class, its premultiplied lows, highs, size plus one, loss).
        + classes * (40 + 16 * d + 8 * min(NEAR_CLASSES, classes) + (16 * d + 24 if tabled else 0))
        # The arrays a search for a class's nearest classes holds at once.
        + _nearest_peak(classes, d, tabled),
        f"The local search over the classes of {instance.n_rows:,} records ({d} attributes)",
        "use method='mondrian'",
        caller="local_search",
    )
    try:
        state = MoveSearch(instance, k, groups, objective, candidates=candidates,
                           swap_classes=swap_classes, seed=seed, deadline=deadline)
    except _Stop:
        return MovesResult(groups=groups.copy(), value=float("nan"),
                           start_value=float("nan"), stopped="set-up")
    start = state.total
    result = MovesResult(groups=state.group.copy(), value=start, start_value=start)
    if instance.n_rows == 0 or start <= 0 or not state.can_change():
        return result
    try:
        state.descend()
        result.descents += 1
        best = current = state.total
        result.groups, result.value = state.group.copy(), best
        limit = max_kicks if max_kicks is not None else (None if deadline is not None else 0)
        threshold = accept * k * best / max(instance.n_rows, 1)
        classes = int(state.alive.sum())
        if limit is not None and limit < ACCEPT_KICKS * classes:
            threshold = 0.0
        began = _clock()
        while limit is None or result.kicks < limit:
            state.journal = []
            g, rows = state.kick(kick)
            result.kicks += 1
            state.descend(rows, state_classes(state, rows, g))
            result.descents += 1
            value = state.total
            # The share of the search left: by kicks when they are counted, so that the
            # same seed and kicks give the same partition; else by the clock.
            if limit is not None:
                left = 1 - (result.kicks - 1) / limit
            else:
                now = _clock()
                left = max(0.0, (deadline - now) / max(deadline - began, 1e-9))
                if result.kicks < RATE_KICKS:
                    left = 0.0  # the pace is not known yet
                elif result.kicks == RATE_KICKS:
                    expected = RATE_KICKS * (deadline - began) / max(now - began, 1e-9)
                    if expected < ACCEPT_KICKS * classes:
                        threshold = 0.0
            if value < current + threshold * left + EPS:
                current = value
                result.accepted += 1
                if value < best - EPS:
                    result.kept += 1
                    best = value
                    result.groups, result.value = state.group.copy(), value
                state.journal = None
            else:
                state.undo()
        result.stopped = "kicks" if max_kicks is not None else "local optimum"
    except _Stop:
        result.stopped = "deadline"
        if result.descents == 0:  # the first descent's changes so far, each an improvement
            result.groups, result.value = state.group.copy(), state.total
    result.changes = dict(state.changes)
    return result


def _nearest_peak(classes: int, d: int, tabled: bool) -> int:
    """Bytes :meth:`MoveSearch.nearest` holds at once for a value of `classes` classes (at
    most every class): arrays of classes x d 8-byte cells, 3 of them when every attribute
    is tabled (the joined lows, the joined highs and their sum as it is formed), 5
    otherwise (the joined lows and highs, alive through `unit`, which forms the sum of
    the tabled columns' premultiplied lows and their highs: three more). Counted as
    written; numpy may form a sum in a temporary operand's place (10,000 classes of 7
    attributes: 2.1 and 4.0 arrays traced). These are not the classes' kept arrays; on
    UCI Adult at k = 5 (at most 6,034 classes, d = 7) 1 MB."""
    return 8 * d * classes * (3 if tabled else 5)


def state_classes(state: MoveSearch, rows: np.ndarray, g: int) -> list[int]:
    """The live classes of `rows` and g, for the descent's split queue."""
    found = set(np.unique(state.group[rows]).tolist()) | {g}
    return [x for x in sorted(found) if state.alive[x]]
