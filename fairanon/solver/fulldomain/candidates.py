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
from .method import _classes_of_rows, _release_table, fulldomain_problem
from .search import lattice_levels

__all__ = ["CANDIDATE_NODES", "Candidate", "Candidates", "candidates"]

#: Lattices up to this many nodes are listed (every node is checked, one roll-up each).
CANDIDATE_NODES = 1 << 16


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

    When the time limit ran out, `reason` says so, `checked` nodes of the lattice were
    checked, `feasible` counts the passing ones among them and nothing is listed (the
    Pareto front of part of a lattice is not the lattice's)."""

    objective: str
    lattice_size: int
    feasible: int
    pareto: int
    candidates: tuple
    checked: int
    reason: str | None = None

    def to_dict(self) -> dict:
        """A JSON document of the listing; exact numbers as text (``"1/4"``)."""
        return {
            "objective": self.objective,
            "lattice_size": self.lattice_size,
            "checked": self.checked,
            "feasible": self.feasible,
            "pareto": self.pareto,
            "reason": self.reason,
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
            objective = Fraction(c["objective"])
            listed.append(
                Candidate(
                    levels={str(name): int(j) for name, j in c["levels"].items()},
                    objective=int(objective) if objective.denominator == 1 else objective,
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
        )


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

    Every node of the lattice is checked with the search's exact evaluator (so lattices
    above ``CANDIDATE_NODES`` nodes are refused). Each feasible node's risk is read from
    the classes the verifier would form; the Pareto-relevant ones (no other node as
    cheap and as safe on both risks, and strictly better on one) come first by
    objective, then the cheapest others, `limit` in all; LM_avg is computed on each
    listed node's release. `time_limit` (seconds) bounds the check of the nodes: when it
    runs out, nothing is listed and ``reason`` says how far the check came.

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
    if space.size > CANDIDATE_NODES:
        raise InvalidParameterError(
            f"The lattice has {space.size} nodes; candidates lists lattices of at most "
            f"{CANDIDATE_NODES} nodes (fewer quasi-identifiers or shallower hierarchies)."
        )
    evaluator = Evaluator(space, problem.recs, instance.schema, requirements, problem.limit)
    nodes, costs, highest, average = [], [], [], []
    for checked, column in enumerate(lattice_levels(space).T):
        if deadline is not None and perf_counter() >= deadline:
            reason = (
                f"the time limit ({time_limit} s) ran out after checking {checked:,} of the "
                f"lattice's {space.size:,} nodes"
            )
            return Candidates(objective, space.size, len(nodes), 0, (), checked, reason)
        node = tuple(int(j) for j in column)
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
        value = costs[i]
        listed.append(
            Candidate(
                levels={attr.name: j for attr, j in zip(space.attributes, nodes[i])},
                objective=int(value) if value.denominator == 1 else value,
                lm_avg=loss_metric(instance, release, exact=True)["LM_avg"],
                suppressed=int(suppressed.sum()),
                prosecutor_highest=highest[i],
                prosecutor_average=average[i],
                pareto=bool(front[i]),
            )
        )
    return Candidates(objective, space.size, len(nodes), int(front.sum()), tuple(listed), space.size)
