"""Best-first branch and bound over the lattice.

Every node has a lower bound of its cost: for the separable objectives its cost
without suppression plus what suppression must add (:mod:`.evaluate`), for
discernibility (n per suppressed record, :mod:`.evaluate`) ``k n``,
``sum_p n_p^2 / (classes the node can have)`` and the bounds other nodes prove. The
search repeatedly takes the open node with the least bound and checks it:

- a failure of k, l or t (or, with suppression, more records forced into suppression
  than the limit: those of classes smaller than k, and those t-closeness forces out of
  the classes failing it, :mod:`.closeness`) condemns the node's whole down-set: the
  node is first raised, one attribute at a time, while it keeps failing, to a maximal
  failing node, and all nodes below it are closed (Flash's and OLA's predictive
  tagging; each step of the climb rolls up from the node below it);
- any other outcome closes the node alone and tightens the bounds of the nodes it
  informs (below it with suppression, above it for discernibility);
- with suppression, before checking a node the search first climbs to its open
  parents of least bound while any is below the incumbent: a coarser node's suppressed
  records bound the whole sublattice below it, so checking the top of a region first
  settles most of it without touching it.

It stops when no open node has a bound below the incumbent: the incumbent is then
optimal (or, with no incumbent, no node is feasible); or, before that, at the deadline or
when the CP-SAT master would pass the memory limit to pick its next node (the best node
found so far is then returned as FEASIBLE, with the least open bound). The open nodes live in a
:class:`LatticeFrontier` (arrays over every node) or, for lattices too large to list,
in the CP-SAT master of :mod:`.master`, which holds the same cuts as constraints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...release import Status
from .evaluate import FEASIBLE, FAILED, MONOTONE, Evaluator
from .lattice import OutOfTime, Space

__all__ = [
    "LatticeFrontier",
    "OutOfMemory",
    "OutOfTime",
    "Outcome",
    "best_first",
    "discernibility_lower",
    "lattice_levels",
    "separable_costs",
]


class OutOfMemory(Exception):
    """The frontier would pass the memory limit to pick its next node, after the search
    has begun (a refusal before any work is a MemoryLimitError); the message is the
    refusal's."""


@dataclass
class Outcome:
    """How a search ended: its status, the best node and its cost, the least bound of
    the nodes left open, the nodes checked, the requirements that cut the lattice and,
    when the memory limit ended it early, the refusal (`stopped`)."""

    status: Status
    best: tuple | None
    cost: int | None
    bound: int | None
    nodes: int
    attributed: set = field(default_factory=set)
    stopped: str | None = None


class LatticeFrontier:
    """The open nodes and their lower bounds as arrays over the whole lattice.

    Parameters
    ----------
    space : Space
    lower : numpy.ndarray
        Each node's initial lower bound (mixed-radix order of the levels).
    separable : numpy.ndarray or None
        Each node's cost without suppression (the base of suppression bounds).
    closed : numpy.ndarray of bool
        Nodes excluded before the search.
    """

    def __init__(self, space: Space, lower: np.ndarray, separable, closed: np.ndarray):
        self.space = space
        self.shape = tuple(h + 1 for h in space.heights)
        self.levels = lattice_levels(space)
        self._strides = [int(np.prod(self.shape[a + 1 :])) for a in range(space.d)]
        self._next = [
            [(space.coarser(a, j) or [-1])[0] for j in range(h + 1)]
            for a, h in enumerate(space.heights)
        ]
        # Each node's levels as positions in its attributes' bounds laid end to end
        # (as small as the levels: two bytes a level up to 2^15 levels in all).
        starts = np.cumsum([0] + [h + 1 for h in space.heights])
        small = np.int16 if starts[-1] < 2**15 else np.int32
        self._positions = self.levels.astype(small) + starts[:-1, None].astype(small)
        self.lower_ = lower
        self.separable = separable
        self.open = ~closed
        self._below: dict = {}
        self._above: dict = {}

    def _index(self, levels) -> int:
        return sum(j * s for j, s in zip(levels, self._strides))

    def _mask(self, levels, up: bool) -> np.ndarray:
        """Nodes whose classes merge into `levels`' (or, `up`, that merge its)."""
        cache = self._above if up else self._below
        mask = np.ones(self.levels.shape[1], dtype=bool)
        for a, (attr, u) in enumerate(zip(self.space.attributes, levels)):
            key = (a, int(u))
            if key not in cache:
                relation = attr.covers[u, :] if up else attr.covers[:, u]
                cache[key] = relation[self.levels[a]]
            mask &= cache[key]
        return mask

    def pop(self, incumbent):
        candidates = self.open if incumbent is None else self.open & (self.lower_ < incumbent)
        where = np.flatnonzero(candidates)
        if not len(where):
            return None
        i = where[np.argmin(self.lower_[where])]
        return tuple(int(j) for j in self.levels[:, i])

    def ascend(self, levels, incumbent) -> tuple:
        """From `levels`, move to the open parent of least bound below the incumbent
        while there is one (ties: the first attribute)."""
        current = list(levels)
        i = self._index(levels)
        while True:
            best = None
            for a, row in enumerate(self._next):
                u = row[current[a]]
                if u < 0:
                    continue
                j = i + (u - current[a]) * self._strides[a]
                if not self.open[j]:
                    continue
                value = self.lower_[j]
                if (incumbent is None or value < incumbent) and (best is None or value < best[0]):
                    best = (value, a, u, j)
            if best is None:
                return tuple(current)
            _, a, current[a], i = best

    def bound(self):
        where = np.flatnonzero(self.open)
        return None if not len(where) else self.lower_[where].min()

    def is_open(self, levels) -> bool:
        return bool(self.open[self._index(levels)])

    def lower(self, levels):
        return self.lower_[self._index(levels)]

    def close(self, levels) -> None:
        self.open[self._index(levels)] = False

    def kill_down(self, levels) -> None:
        self.open &= ~self._mask(levels, up=False)

    def bound_down(self, levels, down) -> None:
        where = np.flatnonzero(self._mask(levels, up=False) & self.open)
        if self.separable is None:
            self.lower_[where] = np.maximum(self.lower_[where], down)
            return
        flat = np.concatenate(
            [np.asarray(bound, dtype=self.lower_.dtype) for bound in down]
            or [np.zeros(0, dtype=self.lower_.dtype)]
        )
        extra = flat[self._positions[:, where]].sum(axis=0, dtype=self.lower_.dtype)
        self.lower_[where] = np.maximum(self.lower_[where], self.separable[where] + extra)

    def bound_up(self, levels, value) -> None:
        where = np.flatnonzero(self._mask(levels, up=True) & self.open)
        self.lower_[where] = np.maximum(self.lower_[where], value)


def lattice_levels(space: Space) -> np.ndarray:
    """Every node's levels, shape (d, nodes), in mixed-radix order."""
    shape = tuple(h + 1 for h in space.heights)
    return np.indices(shape, dtype=np.int16).reshape(len(shape), space.size)


def separable_costs(space: Space, levels: np.ndarray) -> np.ndarray:
    """Each node's cost without suppression."""
    out = np.zeros(levels.shape[1], dtype=space.dtype)
    for a in range(space.d):
        out += np.asarray(space.level_cost[a], dtype=space.dtype)[levels[a]]
    return out


def discernibility_lower(space: Space, levels, k: int, n: int, per_protected, limit: int):
    """Each node's static discernibility bound: ``k n`` (every record costs at least
    k) and, by Cauchy-Schwarz, ``sum_p n_p^2 / c`` with c the number of classes of
    protected value p the node can form (one more with suppression: the block of
    suppressed records). A record released as ``*`` everywhere costs n, at least the
    size of its block, so the sum of squared class and block sizes bounds the cost."""
    classes = np.ones(levels.shape[1], dtype=float)
    for a, attr in enumerate(space.attributes):
        classes *= np.asarray(attr.n_labels[1:], dtype=float)[levels[a]]
    classes += 1 if limit else 0
    squares = float(sum(int(c) ** 2 for c in per_protected))
    # Rounded down with room for the float error: a bound may only be too low.
    spread = np.floor(squares / classes * (1 - 1e-9)).astype(np.int64)
    return np.maximum(spread, k * n)


def best_first(
    evaluator: Evaluator, frontier, deadline: float | None, climb_parents: bool, *,
    found: list | None = None, max_nodes: int | None = None
) -> Outcome:
    """The best-first search of the module docstring.

    With `found`, every feasible node's levels are appended to it and none becomes the
    incumbent, so nothing is pruned by cost and the search goes on past the optimum,
    always checking the open node of least bound, until no node is open (status
    INFEASIBLE, bound None), `max_nodes` nodes have been checked or the deadline (status
    UNKNOWN, bound the least open bound): every feasible node costing less than the
    bound is then in `found` (:func:`~.candidates.candidates`)."""
    space = evaluator.space
    state = {"incumbent": None, "best": None}
    attributed: set = set()
    visited = [0]

    def visit(levels):
        fresh = levels not in evaluator.results
        result = evaluator.evaluate(levels, state["incumbent"])
        if not fresh:
            return result
        visited[0] += 1
        if result.down is not None:
            frontier.bound_down(levels, result.down)
        if result.up is not None:
            frontier.bound_up(levels, result.up)
        if result.kind != MONOTONE:
            frontier.close(levels)
        if result.kind == FAILED:
            attributed.update(result.failed)
        if result.kind == FEASIBLE and found is not None:
            found.append(levels)
        elif result.kind == FEASIBLE and (
            state["incumbent"] is None or result.cost < state["incumbent"]
        ):
            state["incumbent"], state["best"] = result.cost, levels
        return result

    def climb(levels):
        current = levels
        for a in range(space.d):
            while True:
                if deadline is not None and time.perf_counter() >= deadline:
                    # Every node below a failing one fails too: the climb may stop at
                    # any step (its 17 checks took 0.012-0.02 s on UCI Adult, k = 5).
                    return current
                coarser = space.coarser(a, current[a])
                if not coarser:
                    break
                trial = current[:a] + (coarser[0],) + current[a + 1 :]
                if visit(trial).kind != MONOTONE:
                    break
                current = trial
        return current

    status = stopped = None
    while status is None:
        if (deadline is not None and time.perf_counter() >= deadline) or (
            max_nodes is not None and visited[0] >= max_nodes
        ):
            status = Status.FEASIBLE if state["best"] is not None else Status.UNKNOWN
            break
        try:
            levels = frontier.pop(state["incumbent"])
        except OutOfTime:
            status = Status.FEASIBLE if state["best"] is not None else Status.UNKNOWN
            break
        except OutOfMemory as refusal:
            # As at the deadline: the work done so far stands.
            status = Status.FEASIBLE if state["best"] is not None else Status.UNKNOWN
            stopped = f"memory limit: {refusal}"
            break
        if levels is None:
            status = Status.OPTIMAL if state["best"] is not None else Status.INFEASIBLE
            break
        if climb_parents:
            levels = frontier.ascend(levels, state["incumbent"])
        if visit(levels).kind == MONOTONE:
            top = climb(levels)
            frontier.kill_down(top)
            attributed.update(evaluator.results[top].failed)
    bound = state["incumbent"]
    if status != Status.OPTIMAL:
        open_bound = frontier.bound()
        if open_bound is not None:
            bound = open_bound if bound is None else min(bound, open_bound)
    return Outcome(
        status, state["best"], state["incumbent"], bound, visited[0], attributed, stopped
    )

