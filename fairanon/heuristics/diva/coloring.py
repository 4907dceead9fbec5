"""DIVA's DiverseClustering (Milani, Huang, Chiang, EDBT 2021, Alg. 3-4): the constraint
graph colored by backtracking.

The color of a node is a clustering of its target records
(:mod:`~fairanon.heuristics.diva.clusterings`) that is consistent with the colors
already chosen: clusters disjoint or equal, no upper bound exceeded. Nodes are visited
in one of the orders of :data:`~fairanon.heuristics.diva.NEXT_NODES`; a candidate that
leaves some uncolored constraint unable to reach its lower bound is rejected at once
(forward checking), and a node that runs out of candidates sends the search back to the
latest node that caused the failure (conflict-directed backjumping).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..._validation import check_int, check_option, check_random_state
from ...instances.instance import Instance
from ...models.diversity import encode_constraints
from ...models.requirements import Requirement, validate_requirements
from .clusterings import candidate_clusterings
from .graph import encoded_graph, resolve_next_node
from .precheck import check_bool, k_of
from .problem import Problem
from .rest import attach

__all__ = ["VALUE_ORDERS", "DiverseClustering", "diverse_clustering", "run_coloring"]

#: The order in which a node's candidate clusterings are tried: fewest stars first, or
#: at random (DIVA-Basic "randomly select[s] a constraint and a clustering").
VALUE_ORDERS = ("cost", "random")


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
    partial : list of numpy.ndarray
        When no coloring was found: the clusters of the partial coloring that colored
        the most nodes (the first such), a starting point for a repair.
    partial_nodes : list of int
        The nodes that partial coloring colored.
    """

    clusters: list = field(default_factory=list)
    found: bool = False
    gave_up: bool = False
    order: list = field(default_factory=list)
    trace: list = field(default_factory=list)
    tries: int = 0
    partial: list = field(default_factory=list)
    partial_nodes: list = field(default_factory=list)


class _GiveUp(Exception):
    """The coloring reached its budget or time limit."""


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

    def __init__(self, data: Problem, *, next_node, value_order: str, rng, max_candidates: int,
                 max_tries: int, deadline: float | None, record_trace: bool, lookahead: bool = True):
        self.d = data
        self.graph = encoded_graph(data.encoded)
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
        self.node_of_cluster: list[int] = []
        self.partial: list[np.ndarray] = []
        self.partial_nodes: list[int] = []
        self._relevant: dict[int, np.ndarray] = {}

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
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _GiveUp
        produced = 0
        seen = set()
        spare = None
        if self.lookahead:
            # How many more target records each uncolored node can afford to lose.
            reach = self.counts + (self.free_i * (self.free_g >= d.k)).sum(axis=0)
            spare = (reach - d.lower).astype(float)
            spare[list(self.colored) + [v]] = np.inf
        for clustering in candidate_clusterings(d, v, rows, need, room, self.counts,
                                                set(self.colored), self.graph, self.value_order,
                                                self.rng, self.max_candidates, spare, self.deadline):
            if self.deadline is not None and time.perf_counter() > self.deadline:
                raise _GiveUp
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
            self.node_of_cluster.append(v)
        if clustering:
            flat, starts, _ = self.d.flatten(clustering)
            self.counts += self.d.contributions(flat, starts).sum(axis=0)
            self.free_i -= self._per_class(self.d.I, flat)
            self.free_g -= self._per_class(self.d.G, flat)
        self.colored[v] = first
        self.order.append(v)
        if len(self.order) > len(self.partial_nodes):
            self.partial, self.partial_nodes = list(self.clusters), list(self.order)
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
        del self.node_of_cluster[first:]
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
        _, why = attach(self.d, list(self.clusters), np.concatenate(left), strict=True)
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
            # Whether the rest can be released depends on every chosen cluster.
            self.jump_to = self.order[-1] if self.order else None
            self.culprits_of_jump = set(self.order[:-1])
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

    def _relevant_rows(self, v: int) -> np.ndarray:
        """Records whose owner can change what node v's candidates are and which of them
        pass: the target and matching records of v and of every node some record of
        I_v could count for or hide from (computed at v's first dead end)."""
        if v not in self._relevant:
            d = self.d
            mine = d.I[:, v]
            near = [x for x in range(d.I.shape[1]) if (d.I[mine, x] | d.G[mine, x]).any()]
            touch = d.I[:, near] | d.G[:, near]
            self._relevant[v] = np.flatnonzero(touch.any(axis=1))
        return self._relevant[v]

    def _set_jump(self, v: int, inherited: set[int]) -> None:
        """After node v ran out of candidates: its conflict set is the colored nodes
        that own a target or matching record of v, or of a node that some record of
        I_v could count for or hide from (their choices decide which records v may
        use, the upper bounds its clusters meet and what the lookahead leaves to the
        uncolored nodes), plus those inherited from the failures below v; resume at
        the latest. The nodes colored after it took no such record, so other choices
        for them leave v's candidates and their checks as they were."""
        owners = self.owner[self._relevant_rows(v)]
        clusters = np.unique(owners[owners >= 0])
        culprits = {self.node_of_cluster[c] for c in clusters.tolist()} | set(inherited)
        culprits.discard(v)
        latest = [u for u in reversed(self.order) if u in culprits]
        # Without a culprit, go back one node (chronological backtracking).
        self.jump_to = latest[0] if latest else (self.order[-1] if self.order else None)
        self.culprits_of_jump = culprits - {self.jump_to}


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
        The node order (:data:`~fairanon.heuristics.diva.NEXT_NODES`), or a fixed order
        of the constraints' positions (e.g. ``(0, 2, 1)`` for the paper's v1, v3, v2).
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
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> found = diverse_clustering(inst, [fa.KAnonymity(2), *diva_sigma()])
    >>> found.found, [sorted(inst.row_ids[c].tolist()) for c in found.clusters]
    (True, [[8, 10], [5, 6]])
    """
    requirements = validate_requirements(instance, requirements, caller="diverse_clustering")
    k = k_of(requirements)
    encoded = [e for e in encode_constraints(instance, requirements) if not e.fixed]
    data = Problem(instance, encoded, k)
    rng = check_random_state(seed)
    chooser, _ = resolve_next_node(next_node, len(encoded))
    order = value_order or ("random" if next_node == "basic" else "cost")
    check_option(order, "value_order", "diverse_clustering", VALUE_ORDERS)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    return run_coloring(data, chooser, order, rng, check_int(max_candidates, "max_candidates", "diva", low=1),
                        check_int(max_tries, "max_tries", "diva", low=1), deadline, trace,
                        check_bool(lookahead, "lookahead"))


def run_coloring(data: Problem, chooser, value_order, rng, max_candidates, max_tries, deadline, trace,
                 lookahead=True) -> DiverseClustering:
    """:func:`diverse_clustering` on coded data with checked options: `chooser` is a node
    order as :func:`~fairanon.heuristics.diva.graph.resolve_next_node` returns it."""
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
        partial=[] if found else list(search.partial),
        partial_nodes=[] if found else list(search.partial_nodes),
    )
