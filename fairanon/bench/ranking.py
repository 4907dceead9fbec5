"""Ranking several releases: the Pareto set and Copeland tournaments that report cycles.

Dominance is a partial order, so the only ranking-free statement about many releases
is their **Pareto set** (those no other release strictly dominates). A ▶ comparator
gives a verdict per pair; :func:`tournament` turns the verdicts into Copeland scores
(wins − losses, ties 0) and, since ▶cov is not transitive (docs/papers.md, DW-6), finds
every 3-cycle and every group of releases that beat one another in a circle, so that a
score order is never mistaken for a ranking by ▶ (docs/papers.md, DW-6).

Examples
--------
The coverage cycle of docs/papers.md, DW-6:

>>> from fairanon.bench.quality import compare
>>> runs = {"A": [1, 2, 2, 3, 3, 3], "B": [3, 1, 2, 2, 3, 3], "C": [2, 3, 2, 1, 3, 3]}
>>> r = tournament(list(runs), lambda a, b: compare(runs[a], runs[b], "cov"), comparator="cov")
>>> r.cycles, r.transitive
((('A', 'B', 'C'),), False)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

from ..exceptions import InvalidParameterError
from .quality import Dominance, Verdict, dominance, set_dominance

__all__ = ["Ranking", "pareto_set", "tournament"]


def pareto_set(candidates: Mapping[str, object]) -> list[str]:
    """The candidates no other candidate strictly dominates, in their given order.

    Parameters
    ----------
    candidates : mapping name -> vector, or name -> mapping property -> vector
        Oriented vectors (higher is better). With property mappings dominance is the
        set-level ⪰ of :func:`~fairanon.bench.quality.set_dominance`.

    Returns
    -------
    list of str

    Examples
    --------
    >>> pareto_set({"T3a": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4],
    ...             "T3b": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7],
    ...             "T4": [4, 6, 4, 4, 6, 6, 6, 4, 6, 6]})
    ['T3b', 'T4']
    """
    names = list(candidates)
    relation = set_dominance if names and isinstance(candidates[names[0]], Mapping) else dominance
    dominated = set()
    for a, b in itertools.combinations(names, 2):
        outcome = relation(candidates[a], candidates[b])
        if outcome is Dominance.BETTER:
            dominated.add(b)
        elif outcome is Dominance.WORSE:
            dominated.add(a)
    return [n for n in names if n not in dominated]


@dataclass(frozen=True)
class Ranking:
    """A Copeland tournament under one comparator.

    Attributes
    ----------
    comparator : str
    order : tuple of str
        By score, highest first; equal scores keep the input order. With cycles this is
        an aggregate, not an order by the comparator.
    scores, wins, losses, ties : dict name -> int
        Copeland score = wins − losses.
    beats : tuple of (str, str)
        Every pair (a, b) with a ▶ b.
    cycles : tuple of (str, str, str)
        Every 3-cycle a ▶ b ▶ c ▶ a, each once (starting at its first name in input
        order).
    cyclic_groups : tuple of tuple of str
        Groups of two or more releases joined by a cycle of any length (strongly
        connected components of the "beats" graph).
    """

    comparator: str
    order: tuple[str, ...]
    scores: dict
    wins: dict
    losses: dict
    ties: dict
    beats: tuple[tuple[str, str], ...] = field(default=())
    cycles: tuple[tuple[str, str, str], ...] = field(default=())
    cyclic_groups: tuple[tuple[str, ...], ...] = field(default=())

    @property
    def transitive(self) -> bool:
        """True when the verdicts contain no cycle, so the order is a ranking by ▶."""
        return not self.cyclic_groups

    def describe_cycles(self) -> list[str]:
        """Each 3-cycle as text, e.g. ``A ▶ B ▶ C ▶ A``; longer cycles by group."""
        out = [" ▶ ".join((*c, c[0])) for c in self.cycles]
        in_triangles = {frozenset(c) for c in self.cycles}
        for group in self.cyclic_groups:
            if not any(t <= set(group) for t in in_triangles):
                out.append("cycle among " + ", ".join(group))
        return out


def tournament(
    names: Sequence[str], verdict: Callable[[str, str], Verdict], *, comparator: str = ""
) -> Ranking:
    """Copeland scores of a round robin, with cycles detected and reported.

    Parameters
    ----------
    names : sequence of str
        Distinct release names.
    verdict : callable (a, b) -> Verdict
        The comparator, called once per unordered pair (a before b in `names`).
    comparator : str
        Its name, for reports.

    Returns
    -------
    Ranking

    Notes
    -----
    O(R²) verdicts and O(R³) for the 3-cycles of R releases.
    """
    names = list(names)
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"tournament needs distinct names; got {names}.")
    wins = dict.fromkeys(names, 0)
    losses = dict.fromkeys(names, 0)
    ties = dict.fromkeys(names, 0)
    graph = nx.DiGraph()
    graph.add_nodes_from(names)
    for a, b in itertools.combinations(names, 2):
        v = verdict(a, b)
        if v is Verdict.FIRST_BETTER:
            wins[a] += 1
            losses[b] += 1
            graph.add_edge(a, b)
        elif v is Verdict.SECOND_BETTER:
            wins[b] += 1
            losses[a] += 1
            graph.add_edge(b, a)
        elif v is Verdict.TIE:
            ties[a] += 1
            ties[b] += 1
        else:
            raise InvalidParameterError(
                f"tournament: the verdict of ({a!r}, {b!r}) is {v!r}, not a Verdict."
            )
    scores = {n: wins[n] - losses[n] for n in names}
    position = {n: i for i, n in enumerate(names)}
    order = tuple(sorted(names, key=lambda n: (-scores[n], position[n])))
    cycles = []
    for a, b, c in itertools.combinations(names, 3):
        for x, y, z in ((a, b, c), (a, c, b)):
            if graph.has_edge(x, y) and graph.has_edge(y, z) and graph.has_edge(z, x):
                cycles.append((x, y, z))
    groups = [
        tuple(sorted(comp, key=position.__getitem__))
        for comp in nx.strongly_connected_components(graph)
        if len(comp) > 1
    ]
    groups.sort(key=lambda g: position[g[0]])
    return Ranking(
        comparator=comparator,
        order=order,
        scores=scores,
        wins=wins,
        losses=losses,
        ties=ties,
        beats=tuple(graph.edges()),
        cycles=tuple(cycles),
        cyclic_groups=tuple(groups),
    )
