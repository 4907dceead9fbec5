"""DIVA: k-anonymization by suppression that keeps diversity constraints (Milani,
Huang, Chiang, EDBT 2021).

Algorithm 1 of the paper, in four steps:

1. **DiverseClustering** (Alg. 3-4): a graph with a node per constraint and an edge
   where two constraints' target records overlap is colored by backtracking; the color
   of a node is a clustering of its target records (clusters of k to 2k - 1 records,
   enough of them to reach the lower bound) that is consistent with the colors already
   chosen: clusters disjoint or equal, no upper bound exceeded. The node order is one
   of :data:`NEXT_NODES` (DIVA-Basic, MinChoice, MaxFanOut). With
   ``clustering="exact"`` (and as the fallback when the search gives up) the choice is
   made by CP-SAT instead (:mod:`fairanon.solver.diva_model`).
2. **Suppress** (Alg. 2): each cluster releases the values its records share and ``*``
   elsewhere.
3. **Anonymize**: the records left out are clustered by k-member (or Mondrian, for
   large tables) and suppressed the same way; fewer than k left-over records of a
   protected value join the cluster that costs fewest stars without breaking a lower
   bound.
4. **Integrate**: upper bounds that the anonymized rest exceeds are restored by
   starring whole classes, fewest cells first (CP-SAT).

The paper leaves Clusterings, IsConsistent and Integrate unspecified; this module
follows the reconstruction of baselines spec §7.3 (see :func:`diva`, Notes).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from .._validation import check_int, check_option, check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.instance import Instance
from ..models.diversity import EncodedConstraint, encode_constraints
from ..models.requirements import (
    DiversityConstraint,
    KAnonymity,
    Requirement,
    validate_requirements,
)
from ..release import Release, Status, generalize_partition, provenance
from ..solver.diva_model import ClusterPool, integrate, solve_diva
from .kmember import RecordSpace, kmember_clusters, protected_classes
from .mondrian import mondrian

__all__ = [
    "ANONYMIZERS",
    "CLUSTERINGS",
    "NEXT_NODES",
    "VALUE_ORDERS",
    "DiverseClustering",
    "clusterings",
    "constraint_graph",
    "diva",
    "diverse_clustering",
    "next_basic",
    "next_maxfanout",
    "next_minchoice",
]

#: How the diverse clustering is chosen: DIVA's backtracking coloring, or CP-SAT.
CLUSTERINGS = ("coloring", "exact")
#: The order in which a node's candidate clusterings are tried: fewest stars first, or
#: at random (DIVA-Basic "randomly select[s] a constraint and a clustering").
VALUE_ORDERS = ("cost", "random")
#: How the records outside the diverse clustering are anonymized ("auto": k-member up
#: to ``kmember_max_rows`` records, Mondrian beyond).
ANONYMIZERS = ("auto", "kmember", "mondrian")


# ------------------------------------------------------------------ the graph
def constraint_graph(instance: Instance, requirements: Sequence[Requirement]) -> nx.Graph:
    """DIVA's BuildGraph: a node per diversity constraint (its position among them), an
    edge where two constraints share target records.

    Nodes carry ``constraint`` (the requirement) and ``targets`` (|I_sigma|); edges carry
    ``overlap`` (|I_i ∩ I_j|).

    Examples
    --------
    >>> from fairanon.instances.datasets import diva_sigma
    >>> g = constraint_graph(fa.load("diva_table1"), diva_sigma())
    >>> sorted(g.edges(data="overlap"))  # Example 3.3: {v1, v3} (t8, t10), {v2, v3} (t6)
    [(0, 2, 2), (1, 2, 1)]
    """
    return _graph(encode_constraints(instance, requirements))


def _graph(encoded: Sequence[EncodedConstraint]) -> nx.Graph:
    g = nx.Graph()
    for i, e in enumerate(encoded):
        g.add_node(i, constraint=e.requirement, targets=e.n_targets)
    if encoded:
        targets = np.column_stack([e.target for e in encoded]).astype(np.int64)
        overlap = targets.T @ targets
        for i, j in itertools.combinations(range(len(encoded)), 2):
            if overlap[i, j]:
                g.add_edge(i, j, overlap=int(overlap[i, j]))
    return g


# ------------------------------------------------------------------ node orders
def next_basic(graph: nx.Graph, colored: set, count_choices: Callable[[int], int], rng: np.random.Generator) -> int:
    """DIVA-Basic: a random uncolored node."""
    free = sorted(v for v in graph if v not in colored)
    return int(free[int(rng.integers(len(free)))])


def next_minchoice(graph: nx.Graph, colored: set, count_choices: Callable[[int], int], rng: np.random.Generator) -> int:
    """MinChoice: the uncolored node with the fewest consistent candidate clusterings
    (given the colors chosen so far); ties to the lowest index."""
    free = sorted(v for v in graph if v not in colored)
    return min(free, key=lambda v: (count_choices(v), v))


def next_maxfanout(graph: nx.Graph, colored: set, count_choices: Callable[[int], int], rng: np.random.Generator) -> int:
    """MaxFanOut: the uncolored node with the most uncolored neighbours; ties to the
    lowest index."""
    free = sorted(v for v in graph if v not in colored)
    return max(free, key=lambda v: (sum(1 for u in graph[v] if u not in colored), -v))


#: Node orders of DIVA's coloring by name. A strategy maps (graph, colored nodes, a
#: function counting a node's consistent candidates, rng) to the next node; any
#: callable with that signature, or a sequence of node indices (a fixed order), works too.
NEXT_NODES: dict[str, Callable] = {
    "basic": next_basic,
    "minchoice": next_minchoice,
    "maxfanout": next_maxfanout,
}


# ------------------------------------------------------------------ problem data
class _Data:
    """Coded instance and constraints shared by the search, the pool and the rest."""

    def __init__(self, instance: Instance, encoded: list[EncodedConstraint], k: int):
        self.instance = instance
        self.k = k
        self.n = instance.n_rows
        self.encoded = encoded
        self.gen = list(instance.schema.generalizable)
        self.codes = (
            np.column_stack([instance.codes(a).astype(float) for a in self.gen])
            if self.gen else np.zeros((self.n, 0))
        )
        self.cardinality = np.array([len(np.unique(self.codes[:, j])) for j in range(len(self.gen))])
        protected = instance.schema.protected
        self.prot = instance.codes(protected).astype(np.int64) if protected else np.zeros(self.n, dtype=np.int64)
        s = len(encoded)
        self.I = np.column_stack([e.target for e in encoded]) if s else np.zeros((self.n, 0), dtype=bool)
        self.G = np.column_stack([e.match for e in encoded]) if s else np.zeros((self.n, 0), dtype=bool)
        self.lower = np.array([e.lower for e in encoded], dtype=np.int64)
        self.upper = np.array([e.upper for e in encoded], dtype=np.int64)
        self.attr_index = {a: j for j, a in enumerate(self.gen)}
        self.targets = [np.flatnonzero(e.target) for e in encoded]

    def label(self, i: int) -> str:
        return repr(self.encoded[i].requirement)

    # Clusters as a flat array of positions and the start of each cluster.
    @staticmethod
    def flatten(clusters: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sizes = np.array([len(c) for c in clusters], dtype=np.int64)
        flat = np.concatenate(clusters) if clusters else np.zeros(0, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else sizes
        return flat.astype(np.int64), starts, sizes

    def stars(self, flat: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Suppressed cells of each cluster (Suppress: every attribute its records disagree on)."""
        if not len(sizes):
            return sizes
        sub = self.codes[flat]
        differ = np.minimum.reduceat(sub, starts, axis=0) != np.maximum.reduceat(sub, starts, axis=0)
        return differ.sum(axis=1) * sizes

    def contributions(self, flat: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """(clusters x constraints): target records each cluster makes count."""
        if not len(starts) or not self.I.shape[1]:
            return np.zeros((len(starts), self.I.shape[1]), dtype=np.int64)
        inside = np.minimum.reduceat(self.G[flat].astype(np.int8), starts, axis=0)
        hits = np.add.reduceat(self.I[flat].astype(np.int64), starts, axis=0)
        return inside * hits


# ------------------------------------------------------------------ the coloring
@dataclass
class DiverseClustering:
    """What DIVA's DiverseClustering found.

    Attributes
    ----------
    clusters : list of numpy.ndarray
        The clusters of S_Σ (row positions), in the order they were chosen.
    found : bool
        Whether every node was colored (False: the search failed or gave up).
    gave_up : bool
        Whether the search stopped on its budget or time limit rather than exhausting
        the candidates.
    order : list of int
        The nodes in the order they were finally colored.
    trace : list of tuple
        ("color", node, clusters as record ids), ("uncolor", node), ("dead end", node)
        and ("rest left over", None) (every node colored, but the records outside the
        clusters cannot all be released) events, in search order.
    tries : int
        Candidate clusterings evaluated.
    """

    clusters: list = field(default_factory=list)
    found: bool = False
    gave_up: bool = False
    order: list = field(default_factory=list)
    trace: list = field(default_factory=list)
    tries: int = 0


class _GiveUp(Exception):
    """The coloring reached its budget or time limit."""


class _TooMany(Exception):
    """An enumeration of clusterings outgrew its limit."""


class _Lazy:
    """A generator whose items are kept, so that counting them and iterating over them
    later share the work."""

    def __init__(self, gen):
        self.gen, self.items, self.done = gen, [], False

    def get(self, i: int):
        while len(self.items) <= i and not self.done:
            try:
                self.items.append(next(self.gen))
            except StopIteration:
                self.done = True
        return self.items[i] if i < len(self.items) else None

    def count(self, limit: int) -> int:
        self.get(limit - 1)
        return min(len(self.items), limit)


class _Search:
    """Backtracking coloring (Alg. 4) over lazily generated candidate clusterings."""

    def __init__(self, data: _Data, *, next_node, value_order: str, rng, max_candidates: int,
                 max_tries: int, deadline: float | None, record_trace: bool, lookahead: bool = True):
        self.d = data
        self.graph = _graph(data.encoded)
        self.next_node = next_node
        self.value_order = value_order
        self.rng = rng
        self.max_candidates = max_candidates
        self.max_tries = max_tries
        self.deadline = deadline
        self.record_trace = record_trace
        self.owner = np.full(data.n, -1, dtype=np.int64)
        self.counts = np.zeros(len(data.encoded), dtype=np.int64)
        self.lookahead = lookahead
        self.prot_index = np.unique(data.prot, return_inverse=True)[1].reshape(-1)
        self.n_classes = int(self.prot_index.max()) + 1 if data.n else 0
        every = np.arange(data.n)
        self.free_i = self._per_class(data.I, every)
        self.free_g = self._per_class(data.G, every)
        self.clusters: list[np.ndarray] = []
        self.colored: dict[int, int] = {}
        self.order: list[int] = []
        self.trace: list[tuple] = []
        self.tries = 0
        self.state = 0
        self._cache: dict[tuple[int, int], _Lazy] = {}
        self.jump_to: int | None = None
        self.culprits_of_jump: set[int] = set()
        self._state_counter = itertools.count(1)

    # ---------------------------------------------------------------- candidates
    def candidates(self, v: int) -> _Lazy:
        key = (v, self.state)
        if key not in self._cache:
            self._cache[key] = _Lazy(self._consistent(v))
        return self._cache[key]

    def _consistent(self, v: int):
        """Consistent candidate clusterings of node v, each a list of new clusters."""
        d = self.d
        need = int(d.lower[v] - self.counts[v])
        room = int(d.upper[v] - self.counts[v])
        if need <= 0:
            yield []
            return
        rows = d.targets[v][self.owner[d.targets[v]] < 0]
        if len(rows) < need:
            return
        produced = 0
        seen = set()
        spare = None
        if self.lookahead:
            # How many more target records each uncolored node can afford to lose.
            reach = self.counts + (self.free_i * (self.free_g >= d.k)).sum(axis=0)
            spare = (reach - d.lower).astype(float)
            spare[list(self.colored) + [v]] = np.inf
        for clustering in _candidate_clusterings(d, v, rows, need, room, self.counts,
                                                 set(self.colored), self.graph, self.value_order,
                                                 self.rng, self.max_candidates, spare):
            key = hash(b"|".join(np.sort(c).tobytes() for c in clustering))
            if key in seen:
                continue
            seen.add(key)
            if self._fits(v, clustering):
                yield clustering
                produced += 1
                if produced >= self.max_candidates:
                    return

    def _fits(self, v: int, clustering: list[np.ndarray]) -> bool:
        """IsConsistent: new clusters are disjoint from chosen ones (by construction),
        no upper bound is exceeded, and v's lower bound is reached."""
        self.tries += 1
        if self.tries > self.max_tries or (self.deadline is not None and time.perf_counter() > self.deadline):
            raise _GiveUp
        flat, starts, _ = self.d.flatten(clustering)
        added = self.d.contributions(flat, starts).sum(axis=0)
        total = self.counts + added
        if not ((total <= self.d.upper).all() and total[v] >= self.d.lower[v]):
            return False
        if not self.lookahead:
            return True
        # Forward check: every other uncolored node can still reach its lower bound with
        # the target records left free, counting per protected value only those with at
        # least k free matching records (a visible record needs such a class).
        free_i = self.free_i - self._per_class(self.d.I, flat)
        free_g = self.free_g - self._per_class(self.d.G, flat)
        reachable = total + (free_i * (free_g >= self.d.k)).sum(axis=0)
        pending = np.ones(len(total), dtype=bool)
        pending[list(self.colored)] = False
        pending[v] = False
        return bool((reachable[pending] >= self.d.lower[pending]).all())

    def _per_class(self, mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """(protected values x constraints): rows of `rows` in each constraint's mask."""
        out = np.zeros((self.n_classes, mask.shape[1]), dtype=np.int64)
        np.add.at(out, self.prot_index[rows], mask[rows].astype(np.int64))
        return out

    def count_choices(self, v: int) -> int:
        # Large pools are counted only as 0, 1 or "more": each candidate costs a sort.
        free = int((self.owner[self.d.targets[v]] < 0).sum())
        return self.candidates(v).count(self.max_candidates if free <= 64 else 2)

    # ---------------------------------------------------------------- search
    def _apply(self, v: int, clustering: list[np.ndarray]) -> int:
        first = len(self.clusters)
        for c in clustering:
            self.owner[c] = len(self.clusters)
            self.clusters.append(c)
        if clustering:
            flat, starts, _ = self.d.flatten(clustering)
            self.counts += self.d.contributions(flat, starts).sum(axis=0)
            self.free_i -= self._per_class(self.d.I, flat)
            self.free_g -= self._per_class(self.d.G, flat)
        self.colored[v] = first
        self.order.append(v)
        self.state = next(self._state_counter)
        self._cache = {key: lazy for key, lazy in self._cache.items() if key[1] == self.state}
        if self.record_trace:
            ids = self.d.instance.row_ids
            self.trace.append(("color", v, [sorted(ids[c].tolist()) for c in clustering]))
        return self.state

    def _undo(self, v: int, parent_state: int) -> None:
        first = self.colored.pop(v)
        removed = self.clusters[first:]
        del self.clusters[first:]
        if removed:
            flat, starts, _ = self.d.flatten(removed)
            self.counts -= self.d.contributions(flat, starts).sum(axis=0)
            self.free_i += self._per_class(self.d.I, flat)
            self.free_g += self._per_class(self.d.G, flat)
            self.owner[flat] = -1
        self.order.pop()
        self.state = parent_state
        if self.record_trace:
            self.trace.append(("uncolor", v))

    def _pick(self) -> int:
        if isinstance(self.next_node, list):
            return next(v for v in self.next_node if v not in self.colored)
        return int(self.next_node(self.graph, set(self.colored), self.count_choices, self.rng))

    def completable(self) -> bool:
        """Whether the records outside the coloring can be released: per protected
        value none or at least k of them, or the few left join chosen clusters without
        breaking any bound (Alg. 1 then always completes)."""
        free = self.owner < 0
        left = []
        for p in np.unique(self.d.prot[free]):
            part = np.flatnonzero(free & (self.d.prot == p))
            if len(part) < self.d.k:
                left.append(part)
        if not left:
            return True
        if not self.clusters:
            return False
        _, why = _attach(self.d, list(self.clusters), np.concatenate(left), strict=True)
        return why is None

    def color(self) -> bool:
        """Color the remaining nodes. On failure, ``self.jump_to`` names the colored
        node to resume at (conflict-directed backjumping): the nodes in between did not
        cause the failure, so trying their other candidates cannot help."""
        if len(self.colored) == self.graph.number_of_nodes():
            if self.completable():
                return True
            if self.record_trace:
                self.trace.append(("rest left over", None))
            self.jump_to = self.order[-1] if self.order else None
            return False
        v = self._pick()
        parent = self.state
        lazy = self.candidates(v)
        inherited: set[int] = set()
        i = 0
        while True:
            clustering = lazy.get(i)
            if clustering is None:
                break
            i += 1
            self._apply(v, clustering)
            if self.color():
                return True
            self._undo(v, parent)
            if self.jump_to is not None and self.jump_to != v:
                return False  # a node colored earlier caused the failure
            inherited |= self.culprits_of_jump
        if self.record_trace:
            self.trace.append(("dead end", v))
        self._set_jump(v, inherited)
        return False

    def _set_jump(self, v: int, inherited: set[int]) -> None:
        """After node v ran out of candidates: its conflict set is the colored nodes
        whose clusters hide target records of v or of an uncolored node with no records
        to spare, plus those inherited from the failures below v; resume at the latest."""
        d = self.d
        reach = self.counts + (self.free_i * (self.free_g >= d.k)).sum(axis=0)
        tight = [w for w in self.graph if w not in self.colored and (w == v or reach[w] - d.lower[w] < d.k)]
        culprits = set(inherited) - {v}
        firsts = sorted(self.colored.items(), key=lambda item: item[1])
        for n, (u, first) in enumerate(firsts):
            end = firsts[n + 1][1] if n + 1 < len(firsts) else len(self.clusters)
            if end == first:
                continue
            flat, starts, _ = d.flatten(self.clusters[first:end])
            hidden = np.add.reduceat(d.I[flat][:, tight].astype(np.int64), starts, axis=0).sum(axis=0)
            hidden -= d.contributions(flat, starts)[:, tight].sum(axis=0)
            if hidden.any():
                culprits.add(u)
        latest = [u for u in reversed(self.order) if u in culprits]
        # Without a culprit, go back one node (chronological backtracking).
        self.jump_to = latest[0] if latest else (self.order[-1] if self.order else None)
        self.culprits_of_jump = culprits - {self.jump_to}


def _resolve_next_node(next_node, n_nodes: int):
    if isinstance(next_node, str):
        check_option(next_node, "next_node", "diva", NEXT_NODES)
        return NEXT_NODES[next_node], next_node
    if callable(next_node):
        return next_node, getattr(next_node, "__name__", "custom")
    try:
        order = [int(v) for v in next_node]
    except (TypeError, ValueError):
        order = None
    if order is None or sorted(order) != list(range(n_nodes)):
        raise InvalidParameterError(
            f"The 'next_node' parameter of diva must be one of {sorted(NEXT_NODES)}, a callable, or an "
            f"order of the {n_nodes} diversity constraints (a permutation of 0..{n_nodes - 1}). "
            f"Got {next_node!r} instead."
        )
    return order, f"fixed {order}"


# ------------------------------------------------------------------ Clusterings
def _candidate_clusterings(d: _Data, v: int, rows: np.ndarray, need: int, room: int, counts,
                           colored: set, graph: nx.Graph, value_order: str, rng, cap: int, spare=None):
    """Clusterings(sigma_v, R) given the colors chosen so far, lazily, cheapest first.

    Small pools are enumerated exactly (every minimal clustering, as in the paper's
    examples); larger ones are chunked after sorting the records so that clusters agree
    on many attributes, in several variants (see :func:`diva`, Notes).
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
        if variants:
            cells, attrs, rank = variants.pop(0)
        else:
            cells = [members[j] for j in rng.permutation(len(members))]
            attrs, rank = [int(j) for j in rng.permutation(len(d.gen))], "random"
        clustering = _chunk(d, v, rows, need, room, counts, cells, attrs, rank, uncolored, rng, spare)
        if clustering is not None:
            yield clustering


def _blocks(d: _Data, keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Cut a sorted sequence into blocks of k..2k-1 consecutive records, each as
    homogeneous as possible on `keys` (per position; the protected value first): runs
    equal on a longer prefix of the keys are cut first, and what their cuts leave over
    (fewer than k records each) is cut with the other records of the shorter prefix.
    Returns the block of every position (-1: left out, fewer than k records of its
    protected value remain) and the block sizes."""
    k = d.k
    n = len(keys[0])
    # change[level][i]: position i starts a new run of the first level + 1 keys.
    change = []
    acc = np.zeros(n, dtype=bool)
    for col in keys:
        acc = acc.copy()
        acc[1:] |= col[1:] != col[:-1]
        acc[0] = True
        change.append(acc)
    block_of = np.full(n, -1, dtype=np.int64)
    sizes: list[int] = []

    def cut(positions: np.ndarray) -> None:
        q = len(positions) // k
        r = len(positions) - q * k
        part = k + r // q + (np.arange(q) < r % q)
        edges = np.r_[0, np.cumsum(part)]
        for b in range(q):
            block_of[positions[edges[b] : edges[b + 1]]] = len(sizes)
            sizes.append(int(part[b]))

    def chunk(start: int, stop: int, level: int) -> list[np.ndarray]:
        """Blocks in [start, stop) (equal on the first `level` keys); the records left."""
        if level == len(keys):
            cut(np.arange(start, stop))
            return []
        bounds = np.r_[start + np.flatnonzero(change[level][start + 1 : stop]) + 1, stop]
        left, lo = [], start
        for hi in np.r_[start, bounds][1:]:
            if hi - lo >= k:
                left.extend(chunk(lo, hi, level + 1))
            else:
                left.append(np.arange(lo, hi))
            lo = hi
        rest = np.concatenate(left) if left else np.zeros(0, dtype=np.int64)
        if level > 0 and len(rest) >= k:  # never mix protected values
            cut(rest)
            return []
        return [rest] if len(rest) else []

    chunk(0, n, 0)
    return block_of, np.array(sizes, dtype=np.int64)


def _chunk(d: _Data, v: int, rows: np.ndarray, need: int, room: int, counts, cells: list[np.ndarray], attrs,
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


def _grow(d: _Data, clusters: list[np.ndarray], ordered: np.ndarray, deficit: int, counts) -> list[np.ndarray] | None:
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


def _enumerate(d: _Data, rows: np.ndarray, need: int, room: int, *, limit: int):
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
    >>> from fairanon.instances.datasets import diva_sigma
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
    d = _Data(instance, encoded, _k_of(requirements))
    e = encoded[constraint]
    if e.lower <= 0:
        return [[]]
    gen = _candidate_clusterings(d, constraint, d.targets[constraint], e.lower, e.upper,
                                 np.zeros(len(encoded), dtype=np.int64), set(), _graph(encoded),
                                 "cost", np.random.default_rng(0), check_int(limit, "limit", "clusterings", low=1))
    ids = instance.row_ids
    return [[sorted(ids[c].tolist()) for c in clustering] for clustering in itertools.islice(gen, limit)]


def diverse_clustering(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    next_node="maxfanout",
    value_order: str | None = None,
    seed=None,
    max_candidates: int = 16,
    max_tries: int = 5000,
    time_limit: float | None = None,
    trace: bool = False,
    lookahead: bool = True,
) -> DiverseClustering:
    """DIVA's DiverseClustering (Alg. 3-4): color the constraint graph by backtracking.

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        The diversity constraints are the nodes; k comes from KAnonymity (default 1).
    next_node : {"basic", "minchoice", "maxfanout"}, callable or sequence of int
        The node order (:data:`NEXT_NODES`), or a fixed order of the constraints'
        positions (e.g. ``(0, 2, 1)`` for the paper's v1, v3, v2).
    value_order : {"cost", "random"}, optional
        Default "random" for "basic" (the paper picks clusterings at random there),
        "cost" otherwise.
    seed : None, int or numpy.random.Generator
    max_candidates : int, default=16
        Candidate clusterings tried per node and state (the cap of Clusterings).
    max_tries : int, default=5000
        Candidate evaluations before the search gives up.
    time_limit : float, optional
    trace : bool, default=False
        Record the search events in :attr:`DiverseClustering.trace`.
    lookahead : bool, default=True
        Reject a candidate that leaves some uncolored constraint unable to reach its
        lower bound (forward checking); without it the search backtracks only at dead
        ends, as in the paper's Algorithm 4.

    Returns
    -------
    DiverseClustering

    Examples
    --------
    >>> from fairanon.instances.datasets import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> found = diverse_clustering(inst, [fa.KAnonymity(2), *diva_sigma()])
    >>> found.found, [sorted(inst.row_ids[c].tolist()) for c in found.clusters]
    (True, [[8, 10], [5, 6]])
    """
    requirements = validate_requirements(instance, requirements, caller="diverse_clustering")
    k = _k_of(requirements)
    encoded = [e for e in encode_constraints(instance, requirements) if not e.fixed]
    data = _Data(instance, encoded, k)
    rng = check_random_state(seed)
    chooser, _ = _resolve_next_node(next_node, len(encoded))
    order = value_order or ("random" if next_node == "basic" else "cost")
    check_option(order, "value_order", "diverse_clustering", VALUE_ORDERS)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    return _run_coloring(data, chooser, order, rng, check_int(max_candidates, "max_candidates", "diva", low=1),
                         check_int(max_tries, "max_tries", "diva", low=1), deadline, trace,
                         _check_bool(lookahead, "lookahead"))


def _run_coloring(data, chooser, value_order, rng, max_candidates, max_tries, deadline, trace,
                  lookahead=True) -> DiverseClustering:
    search = _Search(data, next_node=chooser, value_order=value_order, rng=rng, max_candidates=max_candidates,
                     max_tries=max_tries, deadline=deadline, record_trace=trace, lookahead=lookahead)
    gave_up = False
    try:
        found = search.color()
    except _GiveUp:
        found, gave_up = False, True
    return DiverseClustering(
        clusters=list(search.clusters) if found else [],
        found=found,
        gave_up=gave_up,
        order=list(search.order) if found else [],
        trace=search.trace,
        tries=search.tries,
    )


# ------------------------------------------------------------------ prechecks
def _check_bool(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidParameterError(f"The {name!r} parameter of diva must be a bool. Got {value!r} instead.")
    return value


def _k_of(requirements) -> int:
    others = [r for r in requirements if not isinstance(r, (KAnonymity, DiversityConstraint))]
    if others:
        raise IncompatibleRequirementError(
            f"diva enforces KAnonymity and DiversityConstraint only; it cannot enforce "
            f"{', '.join(str(r) for r in others)}. Use method='mondrian' for l-diversity and t-closeness."
        )
    return max([r.k for r in requirements if isinstance(r, KAnonymity)], default=1)


def _precheck(instance: Instance, all_encoded: list[EncodedConstraint], k: int) -> str | None:
    """A reason, naming the requirements, if the instance cannot satisfy them (cheap
    necessary conditions), else None."""
    for value, rows in protected_classes(instance):
        if len(rows) < k:
            return (
                f"{k}-anonymity is violated by the {len(rows)} records with {instance.schema.protected}={value!r}: "
                "the protected attribute is released unchanged, so these records only form classes among themselves."
            )
    prot = (instance.codes(instance.schema.protected).astype(np.int64)
            if instance.schema.protected else np.zeros(instance.n_rows, dtype=np.int64))
    for e in all_encoded:
        if e.fixed:
            count = e.n_targets
            if not e.lower <= count <= e.upper:
                names = ", ".join(a for a, _ in e.requirement.target)
                return (
                    f"{e.requirement!r} can never hold: {names} is released unchanged, so every release shows "
                    f"exactly {count} target records, outside [{e.lower}, {e.upper}]."
                )
            continue
        if e.n_targets < e.lower:
            return (
                f"{e.requirement!r} needs at least {e.lower} visible target records, but the table has only "
                f"{e.n_targets} records with those values."
            )
        reach = sum(
            int((e.target & (prot == p)).sum()) for p in np.unique(prot) if int((e.match & (prot == p)).sum()) >= k
        )
        if reach < e.lower:
            return (
                f"{e.requirement!r} needs at least {e.lower} visible target records, but at most {reach} can stay "
                f"visible: a visible record needs a class of at least k={k} records all showing "
                f"{', '.join(f'{a}={v}' for a, v in e.requirement.target if a in e.attributes)}."
            )
    for a, b in itertools.permutations([e for e in all_encoded if not e.fixed], 2):
        # If b's target records are a's and b's suppressible attributes include a's,
        # every record counted for b is counted for a: count(a) >= count(b).
        if (
            b.n_targets
            and not (b.target & ~a.target).any()
            and set(a.attributes) <= set(b.attributes)
            and b.lower > a.upper
        ):
            return (
                f"{a.requirement!r} and {b.requirement!r} conflict: every record counted for the second is "
                f"counted for the first, so the first's count is at least {b.lower} > its upper bound {a.upper}."
            )
    return None


# ------------------------------------------------------------------ exact choice
def _complete_pool_size(d: _Data, cap: int) -> int:
    """How many protected-pure sets of k..2k-1 records the table has (counting stops
    above `cap`)."""
    total = 0
    for p in np.unique(d.prot):
        size = int((d.prot == p).sum())
        for s in range(d.k, min(2 * d.k - 1, size) + 1):
            total += math.comb(size, s)
            if total > cap:
                return total
    return total


def _complete_pool(d: _Data, cap: int) -> list[np.ndarray] | None:
    """Every protected-pure set of k..2k-1 records, if there are at most `cap`."""
    if _complete_pool_size(d, cap) > cap:
        return None
    clusters = []
    for part in (np.flatnonzero(d.prot == p) for p in np.unique(d.prot)):
        for size in range(d.k, min(2 * d.k - 1, len(part)) + 1):
            clusters.extend(np.array(c, dtype=np.int64) for c in itertools.combinations(part.tolist(), size))
    return clusters


def _candidate_pool(d: _Data, rng, per_constraint: int) -> list[np.ndarray]:
    """The clusters of the first candidate clusterings of every constraint (no colors chosen)."""
    graph = _graph(d.encoded)
    seen, pool = set(), []
    counts = np.zeros(len(d.encoded), dtype=np.int64)
    for v, e in enumerate(d.encoded):
        if e.lower <= 0:
            continue
        gen = _candidate_clusterings(d, v, d.targets[v], int(e.lower), int(e.upper), counts, set(), graph,
                                     "cost", rng, per_constraint)
        for clustering in itertools.islice(gen, per_constraint):
            for c in clustering:
                key = tuple(sorted(c.tolist()))
                if key not in seen:
                    seen.add(key)
                    pool.append(np.array(key, dtype=np.int64))
    return pool


def _pool_data(d: _Data, clusters: list[np.ndarray], cover_all: bool) -> ClusterPool:
    flat, starts, sizes = d.flatten(clusters)
    stars = d.stars(flat, starts, sizes)
    contrib = d.contributions(flat, starts)
    counts = [{int(i): int(contrib[c, i]) for i in np.flatnonzero(contrib[c])} for c in range(len(clusters))]
    return ClusterPool(
        n_rows=d.n,
        clusters=clusters,
        stars=[int(s) for s in stars],
        counts=counts,
        attributes=[e.attributes for e in d.encoded],
        lower=[int(x) for x in d.lower],
        upper=[int(x) for x in d.upper],
        labels=[d.label(i) for i in range(len(d.encoded))],
        cover_all=cover_all,
    )


# ------------------------------------------------------------------ Anonymize the rest
def _anonymize_rest(d: _Data, rest: np.ndarray, anonymizer: str, kmember_max_rows: int, rng, deadline):
    """Clusters of the rest (each >= k, protected-pure) and the left-over records
    (protected values with fewer than k of them in the rest)."""
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


def _attach(d: _Data, clusters: list[np.ndarray], leftovers: np.ndarray, *, strict: bool = False,
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


# ------------------------------------------------------------------ the method
def _blank_release(instance: Instance, status: Status, reason: str, prov: dict) -> Release:
    """The release of a failed run: every generalizable cell suppressed, one class per
    protected value (a release that is never handed out as a table)."""
    groups = np.zeros(instance.n_rows, dtype=np.int64)
    for g, (_, rows) in enumerate(protected_classes(instance)):
        groups[rows] = g
    table = generalize_partition(instance, groups, suppress=tuple(instance.schema.generalizable))
    return Release(table=table, groups=groups, status=status, reason=reason, provenance=prov)


def diva(
    instance: Instance,
    requirements,
    *,
    seed=None,
    time_limit: float | None = None,
    next_node="maxfanout",
    value_order: str | None = None,
    clustering: str = "coloring",
    fallback: bool = True,
    anonymize: str = "auto",
    kmember_max_rows: int = 3000,
    max_candidates: int = 16,
    max_tries: int = 5000,
    exact_pool_cap: int = 20000,
    pool_candidates: int = 4,
    num_workers: int | None = None,
    trace: bool = False,
    lookahead: bool = True,
) -> Release:
    """DIVA [1]_: a k-anonymous release by suppression that satisfies diversity constraints.

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        DiversityConstraint (any number) and KAnonymity (k; default 1).
    seed : None, int or numpy.random.Generator
        For DIVA-Basic's random choices and the random candidate variants; the same
        seed gives the same release.
    time_limit : float, optional
        Seconds for the whole run; a search that runs out gives up (and falls back).
    next_node : {"basic", "minchoice", "maxfanout"}, callable or sequence of int, default="maxfanout"
        DIVA's node order (:data:`NEXT_NODES`) or a fixed order of the constraints.
    value_order : {"cost", "random"}, optional
        Order of a node's candidate clusterings; default "random" for "basic", else
        "cost" (fewest stars first).
    clustering : {"coloring", "exact"}, default="coloring"
        DIVA's backtracking coloring, or the exact choice by CP-SAT
        (:func:`fairanon.solver.diva_model.solve_diva`).
    fallback : bool, default=True
        When the coloring fails or gives up, make the choice with CP-SAT instead (which
        also names the conflicting constraints when there is no choice).
    anonymize : {"auto", "kmember", "mondrian"}, default="auto"
        Anonymizer of the records outside the diverse clustering; "auto" uses k-member
        (quadratic) up to `kmember_max_rows` records and Mondrian beyond.
    kmember_max_rows : int, default=3000
    max_candidates : int, default=16
        The cap of Clusterings: candidates tried per node and search state.
    max_tries : int, default=5000
        Candidate evaluations before the coloring gives up.
    exact_pool_cap : int, default=20000
        The exact choice takes every set of k..2k-1 records as a candidate cluster
        (and so is optimal over all releases) when there are at most this many;
        otherwise the clusters of each constraint's first `pool_candidates` candidates.
    pool_candidates : int, default=4
    num_workers : int, optional
        CP-SAT workers (default every core); an optimal clustering is made independent
        of thread timing as :func:`~fairanon.solver.diva_model.solve_diva` says.
    trace : bool, default=False
        Keep the coloring's search events in ``provenance["search"]["trace"]``.
    lookahead : bool, default=True
        Forward checking in the coloring (see :func:`diverse_clustering`).

    Returns
    -------
    Release
        Status FEASIBLE (coloring, or exact choice over capped candidates), OPTIMAL
        (exact choice over every cluster, proven optimal), INFEASIBLE with a reason
        naming the conflicting constraints, or UNKNOWN (time ran out). Objective: the
        number of suppressed cells.

    Raises
    ------
    IncompatibleRequirementError
        For requirements other than KAnonymity and DiversityConstraint.

    Notes
    -----
    Reconstruction (baselines spec §7.3) and departures from [1]_:

    - Clusterings(sigma, R) holds clusters of sigma's target records only, of k to
      2k - 1 records, not mixing protected values (the protected attribute is released
      unchanged), whose sizes sum to a total in [lower, upper] minus what the chosen
      colors already make count. They are generated lazily given the colors chosen so
      far, so condition 1 of IsConsistent (disjoint or equal) holds by construction: a
      record in a chosen cluster is used again only through that cluster, which
      already counts for sigma. Small pools are enumerated (every minimal clustering,
      fewest stars first). Larger ones are cut into blocks of k..2k-1 records after
      sorting them by protected value, then by membership in the target sets of
      sigma's uncolored neighbours (largest overlap first), then by the attributes with
      fewest values: records sharing those memberships are blocked together first, so
      a block counts for the neighbours too, and only the few left over are mixed. The
      blocks are taken, best first, while they keep every upper bound, until the lower
      bound is reached (then trimmed to it, or grown by free records when the blocks run
      out). Variants, in order: rank blocks by the neighbours' records they would hide
      from them, then by stars per record; by stars alone; without the membership
      cells and with the neighbours' attributes sorted last; then random orders. At
      most `max_candidates` per node and state: polynomial for fixed k, as the paper
      claims.
    - IsConsistent checks every constraint's upper bound (the paper checks the
      neighbours'; the others cannot change) and, looking ahead, that every uncolored
      constraint can still reach its lower bound with the target records left free.
    - MinChoice counts consistent candidates (up to the cap for pools of at most 64
      free records; as 0, 1 or more beyond, since each costs a sort), recomputed as
      nodes are colored. Ties: lowest index.
    - The backtracking jumps back to the latest colored node whose clusters hide target
      records of the failed node, or of an uncolored node left without spare records
      (conflict-directed backjumping); with no such node, to the previous one. The paper's §3.3 list swaps the descriptions of
      MinChoice and MaxFanOut; the names follow its dedicated paragraphs.
    - Constraints whose target attributes are all released unchanged (protected,
      sensitive, ...) are not nodes: their counts are fixed and checked upfront.
    - A complete coloring is accepted only if the records it leaves out can be released:
      per protected value none or at least k of them, or the few left join chosen
      clusters without breaking any bound (else the search goes on). Integrate may also
      star classes of the diverse clustering, as long as every lower bound holds.
    - The exact choice (``clustering="exact"``, or the fallback) starts from a
      coloring when one is found; if the records its clustering leaves out cannot be
      released, the release is built from that coloring instead.

    Cost: building a candidate costs O(|I| log |I| d) for |I| target records and d
    quasi-identifiers; the coloring evaluates at most `max_tries` candidates; the rest
    costs O(n² d) with k-member, O(n d log n) with Mondrian.

    References
    ----------
    .. [1] M. Milani, Y. Huang, F. Chiang. Preserving diversity in anonymized data.
       EDBT 2021. (Also: Diversifying anonymized data with diversity constraints,
       arXiv:2007.09141.)

    Examples
    --------
    >>> from fairanon.instances.datasets import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> reqs = [fa.KAnonymity(2), *diva_sigma()]
    >>> rel = diva(inst, reqs, next_node="maxfanout")
    >>> rel.status, fa.verify(inst, rel, reqs).passed
    (<Status.FEASIBLE: 'FEASIBLE'>, True)
    """
    started = time.perf_counter()
    requirements = validate_requirements(instance, requirements, caller="diva")
    k = _k_of(requirements)
    check_option(clustering, "clustering", "diva", CLUSTERINGS)
    check_option(anonymize, "anonymize", "diva", ANONYMIZERS)
    _check_bool(fallback, "fallback")
    _check_bool(lookahead, "lookahead")
    max_candidates = check_int(max_candidates, "max_candidates", "diva", low=1)
    max_tries = check_int(max_tries, "max_tries", "diva", low=1)
    kmember_max_rows = check_int(kmember_max_rows, "kmember_max_rows", "diva", low=0)
    exact_pool_cap = check_int(exact_pool_cap, "exact_pool_cap", "diva", low=0)
    pool_candidates = check_int(pool_candidates, "pool_candidates", "diva", low=1)
    rng = check_random_state(seed)
    all_encoded = encode_constraints(instance, requirements)
    encoded = [e for e in all_encoded if not e.fixed]
    chooser, node_name = _resolve_next_node(next_node, len(encoded))
    order = value_order or ("random" if next_node == "basic" else "cost")
    check_option(order, "value_order", "diva", VALUE_ORDERS)
    deadline = None if time_limit is None else started + time_limit
    params = {
        "next_node": node_name, "value_order": order, "clustering": clustering, "fallback": fallback,
        "anonymize": anonymize, "kmember_max_rows": kmember_max_rows, "max_candidates": max_candidates,
        "max_tries": max_tries, "exact_pool_cap": exact_pool_cap, "pool_candidates": pool_candidates,
        "time_limit": time_limit, "k": k, "lookahead": lookahead,
    }
    method = "diva-exact" if clustering == "exact" else "diva"

    def prov(**extra):
        return provenance(method, params, requirements, seed, started, **extra)

    reason = _precheck(instance, all_encoded, k)
    if reason is not None:
        return _blank_release(instance, Status.INFEASIBLE, reason, prov(stage="precheck"))
    d = _Data(instance, encoded, k)
    search_info: dict = {}
    failure: tuple[Status, str] | None = None
    if clustering == "coloring":
        found = _run_coloring(d, chooser, order, rng, max_candidates, max_tries, deadline, trace, lookahead)
        search_info = {"found": found.found, "gave_up": found.gave_up, "tries": found.tries, "order": found.order}
        if trace:
            search_info["trace"] = found.trace
        if found.found:
            outcome = _finish(d, requirements, found.clusters, {}, Status.FEASIBLE, None, anonymize,
                              kmember_max_rows, rng, seed, deadline, num_workers)
            if isinstance(outcome, Release):
                return outcome.with_provenance(**prov(search=search_info, **outcome.provenance))
            failure = outcome
            search_info["finish"] = outcome[1]
        else:
            why = "gave up (budget or time limit)" if found.gave_up else "exhausted its candidate clusterings"
            names = ", ".join(d.label(i) for i in range(len(encoded)))
            failure = (Status.UNKNOWN if found.gave_up else Status.INFEASIBLE,
                       f"DIVA's coloring {why} without satisfying {names}.")
        if not fallback:
            return _blank_release(instance, failure[0], failure[1], prov(search=search_info))
        if deadline is None:
            deadline = time.perf_counter() + FALLBACK_TIME
    hint = None
    if clustering == "exact" and _complete_pool_size(d, exact_pool_cap) > exact_pool_cap:
        # A coloring, when one is found quickly, is the solver's starting point.
        found = _run_coloring(d, chooser, order, rng, max_candidates, max_tries, deadline, False, lookahead)
        search_info["hint"] = {"found": found.found, "tries": found.tries}
        hint = found.clusters if found.found else None
    choice = _exact_choice(d, rng, seed, deadline, num_workers, exact_pool_cap, pool_candidates, hint)
    search_info["exact"] = choice["info"]
    if "failure" in choice:
        return _blank_release(instance, *choice["failure"], prov(search=search_info))
    outcome = _finish(d, requirements, choice["clusters"], choice["starred"], choice["status"], choice["bound"],
                      anonymize, kmember_max_rows, rng, seed, deadline, num_workers)
    if not isinstance(outcome, Release) and hint is not None:
        # The exact choice leaves records that fit nowhere; the coloring that was its
        # starting point does not (the search checks that).
        search_info["exact"]["finish"] = outcome[1]
        outcome = _finish(d, requirements, hint, {}, Status.FEASIBLE, None, anonymize, kmember_max_rows, rng,
                          seed, deadline, num_workers)
    if not isinstance(outcome, Release):
        return _blank_release(instance, outcome[0], outcome[1], prov(search=search_info))
    return outcome.with_provenance(**prov(search=search_info, **outcome.provenance))


#: Seconds the exact fallback of the coloring may take when no time limit is given.
FALLBACK_TIME = 120.0


def _exact_choice(d: _Data, rng, seed, deadline, num_workers, exact_pool_cap: int, pool_candidates: int,
                  hint: list[np.ndarray] | None = None) -> dict:
    """The diverse clustering chosen by CP-SAT: clusters, voluntary stars, status and
    bound, or a failure (status, reason naming the conflicting constraints). `hint`
    (clusters of a coloring) joins the pool and is the solver's first solution."""
    pool = _complete_pool(d, exact_pool_cap)
    complete = pool is not None
    hinted = None
    if pool is None:
        pool = _candidate_pool(d, rng, pool_candidates)
        if hint:
            index = {tuple(sorted(c.tolist())): i for i, c in enumerate(pool)}
            hinted = []
            for c in hint:
                key = tuple(sorted(c.tolist()))
                if key not in index:
                    index[key] = len(pool)
                    pool.append(np.array(key, dtype=np.int64))
                hinted.append(index[key])
    data = _pool_data(d, pool, cover_all=complete)
    remaining = None if deadline is None else max(0.01, deadline - time.perf_counter())
    solution = solve_diva(data, time_limit=remaining, seed=seed, num_workers=num_workers, hint=hinted)
    info = {"pool_clusters": len(pool), "complete": complete, "status": str(solution.status), **solution.stats}
    if not solution.chosen and solution.status in (Status.INFEASIBLE, Status.UNKNOWN):
        if solution.status == Status.UNKNOWN:
            return {"info": info, "failure": (
                Status.UNKNOWN, "The time ran out before the exact diverse clustering found a solution.")}
        conflict = solution.conflict
        scope = ("No k-anonymous release by suppression satisfies" if complete else
                 "No choice among the candidate clusters satisfies")
        if conflict is None:
            names = "the constraints (the explanation ran out of time)"
        elif not conflict:
            names = "k-anonymity alone"
        else:
            names = " together with ".join(conflict)
        minimal = " (a minimal conflicting set)" if solution.minimal and conflict else ""
        return {"info": info, "failure": (Status.INFEASIBLE, f"{scope} {names}{minimal}.")}
    starred: dict[str, np.ndarray] = {}
    for c, a in solution.starred:
        starred.setdefault(a, np.zeros(d.n, dtype=bool))[pool[c]] = True
    return {
        "info": info,
        "clusters": [pool[c] for c in solution.chosen],
        "starred": starred,
        "status": Status.OPTIMAL if complete and solution.status == Status.OPTIMAL else Status.FEASIBLE,
        "bound": solution.bound if complete else None,
    }


def _finish(d: _Data, requirements, chosen, starred, status, bound, anonymize, kmember_max_rows, rng, seed,
            deadline, num_workers):
    """Suppress, Anonymize and Integrate (Alg. 1, lines 3-6): a Release, or (status,
    reason) when the rest cannot be completed."""
    covered = np.zeros(d.n, dtype=bool)
    for c in chosen:
        covered[c] = True
    rest = np.flatnonzero(~covered)
    rest_clusters, leftovers, rest_method = _anonymize_rest(d, rest, anonymize, kmember_max_rows, rng, deadline)
    clusters = list(chosen) + rest_clusters
    if len(leftovers):
        clusters, why = _attach(d, clusters, leftovers, starred=starred)
        if why is not None:
            return Status.INFEASIBLE, f"DIVA could not complete the release: {why}"
    groups = np.empty(d.n, dtype=np.int64)
    for g, c in enumerate(clusters):
        groups[c] = g
    # A voluntary star covers its whole cluster, records that joined it included.
    starred = {a: (np.bincount(groups, weights=mask, minlength=len(clusters)) > 0)[groups]
               for a, mask in starred.items()}
    table = generalize_partition(d.instance, groups, recoding="suppress", starred=starred or None)
    release = Release(table=table, groups=groups, status=status, bound=bound)
    remaining = None if deadline is None else max(0.01, deadline - time.perf_counter())
    release = integrate(d.instance, release, requirements, seed=seed, time_limit=remaining, num_workers=1)
    if release.status in (Status.INFEASIBLE, Status.UNKNOWN):
        return release.status, release.reason
    integrated = release.provenance.get("integrate")
    if integrated is not None and status == Status.OPTIMAL:
        status = Status.FEASIBLE
    stars = int((release.table[list(d.gen)].astype(str).to_numpy() == "*").sum()) if d.gen else 0
    info = {
        "diverse_clusters": len(chosen),
        "diverse_records": int(covered.sum()),
        "rest_anonymizer": rest_method,
        "leftovers": len(leftovers),
        "integrate": integrated,
        "objective": "suppressed cells",
    }
    return Release(table=release.table, groups=groups, status=status, objective=stars, bound=bound, provenance=info)
