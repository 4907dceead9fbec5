"""The candidate transformations of a full-domain lattice: its nodes that meet the
requirements, each with its loss and its re-identification risk.

ARX shows the solution space of its lattice and lets the user pick any node that meets
the requirements, not only the optimum (Prasser et al., AMIA 2014, "Explore results").
:func:`candidates` lists those nodes, with the loss they cost (the objective and
Iyengar's LM_avg) and the prosecutor risk they leave (highest 1/min f_j and average
J/n, :mod:`fairanon.models.risk.sample`); :func:`~.node.chosen_node` reads one node's levels,
which ``fulldomain(..., levels=...)`` then releases (:mod:`.node`). A listing is
written as JSON by :meth:`Candidates.to_dict` (``fairanon anonymize --candidates``) and
read back by :meth:`Candidates.from_dict`.

A lattice of more than :data:`CANDIDATE_NODES` nodes (up to
:data:`~.method.LATTICE_NODES`) is not checked node by node: fulldomain's own best-first
search (:func:`~.search.best_first`) runs on it with no incumbent, so it prunes nothing
by cost and goes on past the optimum, each time checking the open node of least lower
bound, and a failure of k, l or t settles the node's whole down-set unchecked. It stops
after :data:`CANDIDATE_NODES` checks (or at the time limit), and the listing is of the
feasible nodes costing less than the least bound of the nodes still open
(``cost_below``): every other node is infeasible or costs at least that bound, so these
are all the lattice's nodes below it, and which of them are Pareto-relevant is as in
the whole lattice (a node that dominates another costs at most as much). The low-loss
end of the loss-risk trade-off, where the optimum lies, is thus exact; the nodes above
the bound are not shown, and the listing says so. When the search settles every node
before that, the listing is of the whole lattice.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from time import perf_counter

import numpy as np

from ...exceptions import InvalidParameterError
from ...models.metrics.loss import loss_metric
from ...models.requirements import Requirement
from ...release import Release
from .. import _cpsat
from .evaluate import FEASIBLE, Evaluator
from .method import (
    LATTICE_NODES,
    _classes_of_rows,
    _exclusions,
    _release_table,
    fulldomain_problem,
    lattice_frontier,
)
from .search import best_first, lattice_levels

__all__ = ["CANDIDATE_NODES", "Candidate", "Candidates", "candidates"]

#: Lattices up to this many nodes are checked whole (one roll-up a node); the search
#: over a larger lattice stops after this many checks.
CANDIDATE_NODES = 1 << 16
#: The share of the time left that the search over a larger lattice gets; the rest reads
#: the risks of the nodes it found (a read takes about as long as a check).
SEARCH_SHARE = 0.5


@dataclass(frozen=True)
class Candidate:
    """One lattice node that meets the requirements.

    Attributes
    ----------
    levels : dict
        Attribute name -> generalization level (0 = the values themselves).
    objective : int or Fraction
        The method's objective at this node, suppression included.
    lm_avg : Fraction
        Iyengar's loss per cell of the release (:func:`~fairanon.models.metrics.loss_metric`).
    suppressed : int
        Records suppressed at this node.
    prosecutor_highest, prosecutor_average : Fraction
        1 / (smallest released class) and (released classes) / n.
    pareto : bool
        No other candidate is as good on the objective and both risks and better on one.
    """

    levels: dict
    objective: int | Fraction
    lm_avg: Fraction
    suppressed: int
    prosecutor_highest: Fraction
    prosecutor_average: Fraction
    pareto: bool


@dataclass(frozen=True)
class Candidates:
    """The listed candidates (Pareto ones first by objective, then the cheapest others,
    at most `limit`), and how many there are in all.

    When the time limit ran out while checking a whole lattice, `reason` says so,
    `checked` nodes of the lattice were checked, `feasible` counts the passing ones
    among them and nothing is listed (the Pareto front of part of a lattice is not the
    lattice's).

    `cost_below` is None when every node was settled. Otherwise (a lattice of more
    than :data:`CANDIDATE_NODES` nodes whose search stopped first) `checked` nodes were
    checked in order of their lower bounds, and `feasible`, `pareto` and the candidates
    are those of the whole lattice that cost less than `cost_below`; `stopped` says why
    the search stopped there. On such a lattice `checked` counts the search's checks
    also when it settled every node (the failures settle nodes unchecked)."""

    objective: str
    lattice_size: int
    feasible: int
    pareto: int
    candidates: tuple
    checked: int
    reason: str | None = None
    cost_below: int | Fraction | None = None
    stopped: str | None = None

    def summary(self) -> str:
        """What was checked and found, in a sentence (the command line's and the app's).

        >>> c = candidates(fa.load("ruggieri_loan"), [fa.KAnonymity(2)], objective="generalized")
        >>> c.summary().startswith("3 of the lattice's 4 nodes meet the requirements")
        True
        """
        if self.reason:
            return f"no candidates listed ({self.reason})"
        if self.cost_below is None:
            return (
                f"{self.feasible:,} of the lattice's {self.lattice_size:,} nodes meet the "
                f"requirements ({self.pareto:,} Pareto-relevant)"
            )
        return (
            f"{self.feasible:,} nodes meet the requirements among those costing less than "
            f"{self.cost_below} ({self.objective}), {self.pareto:,} of them Pareto-relevant in the "
            f"whole lattice; {self.checked:,} of the lattice's {self.lattice_size:,} nodes were "
            f"checked, in order of their least possible cost, before {self.stopped}, so the nodes "
            f"costing {self.cost_below} or more are not shown"
        )

    def to_dict(self) -> dict:
        """A JSON document of the listing; exact numbers as text (``"1/4"``)."""
        return {
            "objective": self.objective,
            "lattice_size": self.lattice_size,
            "checked": self.checked,
            "feasible": self.feasible,
            "pareto": self.pareto,
            "reason": self.reason,
            "cost_below": None if self.cost_below is None else str(self.cost_below),
            "stopped": self.stopped,
            "candidates": [
                {
                    "levels": dict(c.levels),
                    "objective": str(c.objective),
                    "lm_avg": str(c.lm_avg),
                    "suppressed": c.suppressed,
                    "prosecutor_highest": str(c.prosecutor_highest),
                    "prosecutor_average": str(c.prosecutor_average),
                    "pareto": c.pareto,
                }
                for c in self.candidates
            ],
        }

    @classmethod
    def from_dict(cls, document: dict) -> Candidates:
        """The listing :meth:`to_dict` wrote.

        >>> c = candidates(fa.load("ruggieri_loan"), [fa.KAnonymity(2)], objective="generalized")
        >>> Candidates.from_dict(c.to_dict()) == c
        True
        """
        listed = []
        for c in document["candidates"]:
            listed.append(
                Candidate(
                    levels={str(name): int(j) for name, j in c["levels"].items()},
                    objective=_whole(Fraction(c["objective"])),
                    lm_avg=Fraction(c["lm_avg"]),
                    suppressed=int(c["suppressed"]),
                    prosecutor_highest=Fraction(c["prosecutor_highest"]),
                    prosecutor_average=Fraction(c["prosecutor_average"]),
                    pareto=bool(c["pareto"]),
                )
            )
        return cls(
            str(document["objective"]),
            int(document["lattice_size"]),
            int(document["feasible"]),
            int(document["pareto"]),
            tuple(listed),
            int(document["checked"]),
            document.get("reason"),
            None
            if document.get("cost_below") is None
            else _whole(Fraction(document["cost_below"])),
            document.get("stopped"),
        )


def _whole(value: Fraction) -> int | Fraction:
    """A cost as the listing gives it: an int when whole."""
    return int(value) if value.denominator == 1 else value


def _pareto(points: list[tuple]) -> np.ndarray:
    """Which of `points` (cost, highest, average; all minimised) no other point
    dominates (at most as large everywhere, smaller somewhere). One sweep in sorted
    order over a staircase of the (highest, average) pairs kept so far, so a point is
    dominated exactly when a kept one has highest and average at most its own."""
    verdict = {}
    highs, lows = [], []  # the staircase: highest increasing, average decreasing
    for point in sorted(set(points)):
        _, high, low = point
        j = bisect_right(highs, high)
        verdict[point] = not (j and lows[j - 1] <= low)
        if verdict[point]:
            k = m = bisect_left(highs, high)
            while m < len(highs) and lows[m] >= low:
                m += 1
            highs[k:m], lows[k:m] = [high], [low]
    return np.array([verdict[p] for p in points], dtype=bool)


def candidates(
    instance,
    requirements: Sequence[Requirement],
    *,
    objective: str = "lm",
    max_suppressed: int | float | Fraction = 0,
    limit: int = 20,
    time_limit: float | None = None,
) -> Candidates:
    """The lattice nodes of :func:`~fairanon.solver.fulldomain.fulldomain` that meet
    `requirements` under the same suppression rule, as loss against risk.

    Every node of a lattice of at most ``CANDIDATE_NODES`` nodes is checked with the
    search's exact evaluator. A larger lattice, up to ``LATTICE_NODES`` nodes, is
    searched in order of least possible cost for ``CANDIDATE_NODES`` checks, and the
    listing is of the nodes costing less than ``cost_below`` (exactly the lattice's:
    see the module docstring); larger lattices are refused. Each feasible node's risk
    is read from the classes the verifier would form; the Pareto-relevant ones (no
    other node as cheap and as safe on both risks, and strictly better on one) come
    first by objective, then the cheapest others, `limit` in all; LM_avg is computed on
    each listed node's release. `time_limit` (seconds) bounds the check of the nodes:
    when it runs out on a whole lattice, nothing is listed and ``reason`` says how far
    the check came; on a larger lattice the search stops there as after its checks, and
    when it runs out while the found nodes' risks are read (cheapest first), the listing
    is cut at the cost of the first node not read.

    >>> import fairanon as fa
    >>> c = candidates(fa.load("ruggieri_loan"), [fa.KAnonymity(2)], objective="generalized")
    >>> c.candidates[0].levels, c.candidates[0].objective
    ({'purpose': 1, 'emp': 0}, 17)
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidParameterError(
            "The 'limit' parameter of candidates must be an int in [1, inf). "
            f"Got {limit!r} instead."
        )
    time_limit = _cpsat.check_time_limit(time_limit, "candidates")
    deadline = None if time_limit is None else perf_counter() + time_limit
    problem, requirements = fulldomain_problem(
        instance, requirements, objective, max_suppressed, "lattice", caller="candidates"
    )
    space = problem.space
    if space.size > LATTICE_NODES:
        raise InvalidParameterError(
            f"The lattice has {space.size:,} nodes; candidates lists lattices of at most "
            f"{LATTICE_NODES:,} nodes, whose bounds it holds as arrays over every node (fewer "
            "quasi-identifiers or shallower hierarchies)."
        )
    evaluator = Evaluator(space, problem.recs, instance.schema, requirements, problem.limit)
    ran_out = None if time_limit is None else f"the time left ({time_limit:g} s) ran out"
    below = stopped = None
    whole = space.size <= CANDIDATE_NODES
    if not whole:
        found: list = []
        excluded = _exclusions(space, problem.recs, requirements, problem.limit)
        frontier = lattice_frontier(problem, evaluator, excluded)
        searched = None
        if deadline is not None:
            now = perf_counter()
            searched = now + SEARCH_SHARE * (deadline - now)
        outcome = best_first(
            evaluator, frontier, searched, False, found=found, max_nodes=CANDIDATE_NODES
        )
        checked, below = outcome.nodes, outcome.bound  # None: every node settled
        if below is not None:
            stopped = (
                f"the limit of {CANDIDATE_NODES:,} checks"
                if checked >= CANDIDATE_NODES
                else f"the search's {SEARCH_SHARE:.0%} of the time left ({time_limit:g} s) ran out"
            )
        # Below the bound only: every node that costs less was found, so every node that
        # could dominate one of them was too. Cheapest first, so that the nodes read when
        # the time runs out in the loop below are all those costing less than the next.
        walk = sorted(
            (n for n in found if below is None or evaluator.results[n].cost < below),
            key=lambda n: (evaluator.results[n].cost, n),
        )
    else:
        walk = (tuple(int(j) for j in column) for column in lattice_levels(space).T)
    nodes, costs, highest, average = [], [], [], []
    for seen, node in enumerate(walk):
        if deadline is not None and perf_counter() >= deadline:
            if whole:
                reason = (
                    f"{ran_out} after checking {seen:,} of the lattice's {space.size:,} nodes"
                )
                return Candidates(objective, space.size, len(nodes), 0, (), seen, reason)
            # Reading each node's classes takes as long as a check: the listing is cut at
            # this node's cost, below which every node was read (ties with it dropped).
            below, stopped = evaluator.results[node].cost, ran_out
            while nodes and evaluator.results[nodes[-1]].cost == below:
                for figures in (nodes, costs, highest, average):
                    figures.pop()
            break
        result = evaluator.evaluate(node)
        if result.kind != FEASIBLE:
            continue
        fs = evaluator.classes(tuple(j + 1 for j in node))[0]
        bad = evaluator.failing(fs)[1] if problem.limit else np.zeros(fs.n, dtype=bool)
        sizes = evaluator.released_sizes(node, fs, bad)
        nodes.append(node)
        costs.append(Fraction(result.cost, space.scale))
        highest.append(Fraction(1, int(sizes.min())))
        average.append(Fraction(len(sizes), int(sizes.sum())))
    front = _pareto(list(zip(costs, highest, average)))
    order = sorted(range(len(nodes)), key=lambda i: (not front[i], costs[i], highest[i], nodes[i]))
    listed = []
    for i in order[:limit]:
        groups, suppressed = _classes_of_rows(problem, evaluator, nodes[i])
        table = _release_table(instance, space, problem.values, nodes[i], suppressed)
        release = Release(
            table=table,
            groups=groups,
            suppressed=tuple(instance.row_ids[suppressed].tolist()),
        )
        listed.append(
            Candidate(
                levels={attr.name: j for attr, j in zip(space.attributes, nodes[i])},
                objective=_whole(costs[i]),
                lm_avg=loss_metric(instance, release, exact=True)["LM_avg"],
                suppressed=int(suppressed.sum()),
                prosecutor_highest=highest[i],
                prosecutor_average=average[i],
                pareto=bool(front[i]),
            )
        )
    if whole:
        checked = space.size
    return Candidates(
        objective,
        space.size,
        len(nodes),
        int(front.sum()),
        tuple(listed),
        checked,
        None,
        None if below is None else _whole(Fraction(int(below), space.scale)),
        stopped,
    )
