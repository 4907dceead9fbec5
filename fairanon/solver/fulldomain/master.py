"""The CP-SAT master: the search's open nodes as a model over level choices, for
lattices too large to list.

One-hot Booleans ``b[A, j]`` choose each attribute's level. The objective is the
lower bound the search orders nodes by: the cost without suppression, plus a variable
``E`` for what suppression adds (separable objectives), or a variable ``theta``
(discernibility). The search's cuts become constraints (logic-based Benders
decomposition): a closed node is a no-good clause; a condemned down-set is the clause
"some attribute is above F's level"; a suppression bound is ``E >= sum_A down[A, j]
b[A, j]`` enforced on the down-set; a discernibility bound is ``theta >= D`` enforced
on the up-set. Each call to :meth:`MasterFrontier.pop` solves the master to optimality:
its optimum is the least bound of any open node, so the search stops, proven optimal,
when it reaches the incumbent or the master becomes infeasible.

The model grows with the cuts, so its memory is checked before each solve
(:func:`.memory.master_memory`): over the limit before the first solve, the master
refuses (MemoryLimitError); after, it ends the search as the deadline does
(:class:`.search.OutOfMemory`), keeping the best node found.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from ..._memory import check_memory, current_limit
from ...exceptions import InvalidParameterError, MemoryLimitError
from ...release import Status
from .. import _cpsat
from .lattice import Space
from .memory import master_memory
from .search import OutOfMemory, OutOfTime

__all__ = ["MASTER_MAGNITUDE", "MasterFrontier"]

#: The largest scaled cost the master takes: CP-SAT's coefficients and the sums it forms
#: stay well inside 64 bits.
MASTER_MAGNITUDE = 2**50

#: What lowers the master's memory, by the method that runs it (lattice-local has no
#: choice of search).
_ADVICE = {
    "fulldomain": (
        "use search='lattice' (arrays over a lattice of up to a few million nodes), "
        "fewer quasi-identifiers or shallower hierarchies, or a time_limit"
    ),
    "lattice_local": "use fewer quasi-identifiers or shallower hierarchies, or a time_limit",
}


class MasterFrontier:
    """The interface of :class:`~.search.LatticeFrontier` on a CP-SAT model.

    `held` is the bytes the search holds besides the master (its records, counted in
    each memory check); `caller` the method running it (``"fulldomain"`` or
    ``"lattice_local"``), named in its messages."""

    def __init__(
        self,
        space: Space,
        *,
        k: int,
        n: int,
        limit: int,
        deadline,
        seed: int,
        held: int = 0,
        caller: str = "fulldomain",
    ):
        if space.magnitude >= MASTER_MAGNITUDE:
            search = (
                "search='lattice' (lattices up to a few million nodes), "
                if caller == "fulldomain"
                else ""
            )
            raise InvalidParameterError(
                f"The CP-SAT master of {caller} cannot take the exact costs of objective "
                f"{space.objective!r} on this instance (their common denominator is "
                f"{space.scale}; fractional numeric values make it large). Use {search}"
                "objective='generalized' or 'stars', or round the numeric values."
            )
        self.space = space
        self.deadline = deadline
        self.seed = seed
        self.k, self.n = k, n
        model = cp_model.CpModel()
        self.model = model
        self.b = [
            [model.new_bool_var(f"level[{attr.name}]={j}") for j in range(attr.height + 1)]
            for attr in space.attributes
        ]
        for row in self.b:
            model.add_exactly_one(row)
        self.extra = self.theta = None
        if space.objective == "discernibility":
            self.theta = model.new_int_var(max(k, 1) * n, n * n, "theta")
            model.minimize(self.theta)
        else:
            terms = [
                (self.b[a][j], int(space.level_cost[a][j]))
                for a in range(space.d)
                for j in range(space.attributes[a].height + 1)
            ]
            objective = cp_model.LinearExpr.weighted_sum(
                [t for t, _ in terms], [c for _, c in terms]
            )
            if limit:
                self.extra = model.new_int_var(0, space.star_total * n, "suppression")
                objective = objective + self.extra
            model.minimize(objective)
        self._literals: dict = {}
        self.closed: set = set()
        self.kills: list = []
        self.downs: list = []
        self.ups: list = []
        self.last_bound = None
        # The model's size, for its memory (:func:`.memory.master_memory`): one-hot rows
        # and objective so far; each cut adds its literals.
        self.held = held
        self.caller = caller
        self.constraints = space.d + 1
        self.literals = sum(len(row) for row in self.b) + len(model.Proto().objective.vars)
        self.solves = 0
        self.memory_limit = current_limit(None, caller)
        self._check_memory()

    def _grow(self, literals: int) -> None:
        self.constraints += 1
        self.literals += literals

    def _check_memory(self) -> None:
        """Raise MemoryLimitError when solving the master as it now stands would need
        more than the memory limit (checked before each solve: the model only grows)."""
        check_memory(
            self.held + master_memory(self.constraints, self.literals),
            f"{self.caller}'s CP-SAT master ({self.constraints:,} constraints of "
            f"{self.literals:,} literals after {len(self.closed):,} nodes closed and "
            f"{len(self.kills):,} down-sets condemned) with the records it searches",
            _ADVICE[self.caller],
            self.memory_limit,
            caller=self.caller,
        )

    # ------------------------------------------------------------------ queries
    def pop(self, incumbent):
        try:
            self._check_memory()
        except MemoryLimitError as refusal:
            if not self.solves:
                raise
            raise OutOfMemory(str(refusal)) from refusal
        self.solves += 1
        solver, outcome = _cpsat.solve(
            self.model,
            time_limit=_cpsat.remaining(self.deadline),
            num_workers=1,
            seed=self.seed,
        )
        if outcome.status == Status.INFEASIBLE:
            self.last_bound = None
            return None
        if outcome.status == Status.UNKNOWN:
            raise OutOfTime
        levels = tuple(
            next(j for j, lit in enumerate(row) if solver.boolean_value(lit)) for row in self.b
        )
        # The objective read exactly from the solution (objective_value is a float).
        if self.theta is not None:
            value = solver.value(self.theta)
        else:
            value = self.space.separable(levels)
            if self.extra is not None:
                value += solver.value(self.extra)
        self.last_bound = value
        if incumbent is not None and value >= incumbent:
            return None
        return levels

    def bound(self):
        return self.last_bound

    def ascend(self, levels, incumbent) -> tuple:
        """As :meth:`~.search.LatticeFrontier.ascend`."""
        while True:
            best = None
            for a in range(self.space.d):
                coarser = self.space.coarser(a, levels[a])
                if not coarser:
                    continue
                parent = levels[:a] + (coarser[0],) + levels[a + 1 :]
                if not self.is_open(parent):
                    continue
                value = self.lower(parent)
                if (incumbent is None or value < incumbent) and (best is None or value < best[0]):
                    best = (value, parent)
            if best is None:
                return levels
            levels = best[1]

    def _below(self, levels, top) -> bool:
        return all(attr.covers[j, u] for attr, j, u in zip(self.space.attributes, levels, top))

    def is_open(self, levels) -> bool:
        return levels not in self.closed and not any(self._below(levels, f) for f in self.kills)

    def lower(self, levels):
        if self.theta is not None:
            return max(
                [max(self.k, 1) * self.n]
                + [value for u, value in self.ups if self._below(u, levels)]
                + [value for u, value in self.downs if self._below(levels, u)]
            )
        extra = max(
            [0]
            + [
                sum(int(down[a][j]) for a, j in enumerate(levels))
                for u, down in self.downs
                if self._below(levels, u)
            ]
        )
        return self.space.separable(levels) + extra

    # ------------------------------------------------------------------ cuts
    def _within(self, a: int, levels: list[int]):
        """A literal true when attribute a's level is one of `levels` (None: always)."""
        if len(levels) == len(self.b[a]):
            return None
        key = (a, tuple(levels))
        if key not in self._literals:
            lit = self.model.new_bool_var(f"level[{self.space.attributes[a].name}] in {levels}")
            self.model.add(lit == sum(self.b[a][j] for j in levels))
            self._grow(len(levels) + 1)
            self._literals[key] = lit
        return self._literals[key]

    def _guards(self, top, up: bool) -> list:
        guards = []
        for a, (attr, u) in enumerate(zip(self.space.attributes, top)):
            relation = attr.covers[u, :] if up else attr.covers[:, u]
            lit = self._within(a, [j for j in range(attr.height + 1) if relation[j]])
            if lit is not None:
                guards.append(lit)
        return guards

    def close(self, levels) -> None:
        self.closed.add(levels)
        self.model.add_bool_or([self.b[a][j].negated() for a, j in enumerate(levels)])
        self._grow(len(levels))

    def kill_down(self, levels) -> None:
        self.kills.append(levels)
        clause = [
            self.b[a][j]
            for a, (attr, u) in enumerate(zip(self.space.attributes, levels))
            for j in range(attr.height + 1)
            if not attr.covers[j, u]
        ]
        self.model.add_bool_or(clause)
        self._grow(len(clause))

    def exclude(self, assignment: dict) -> None:
        """No node with these levels (attribute -> level) is feasible."""
        self.model.add_bool_or([self.b[a][j].negated() for a, j in assignment.items()])
        self._grow(len(assignment))

    def bound_down(self, levels, down) -> None:
        self.downs.append((levels, down))
        guards = self._guards(levels, up=False)
        if self.theta is not None:
            self.model.add(self.theta >= int(down)).only_enforce_if(guards)
            self._grow(len(guards) + 1)
            return
        terms = [
            int(down[a][j]) * self.b[a][j]
            for a in range(self.space.d)
            for j in range(len(down[a]))
            if down[a][j]
        ]
        self.model.add(self.extra >= sum(terms)).only_enforce_if(guards)
        self._grow(len(guards) + len(terms) + 1)

    def bound_up(self, levels, value) -> None:
        self.ups.append((levels, value))
        guards = self._guards(levels, up=True)
        self.model.add(self.theta >= int(value)).only_enforce_if(guards)
        self._grow(len(guards) + 1)
