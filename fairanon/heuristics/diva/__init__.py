"""DIVA's heuristic parts: k-anonymization by suppression that keeps diversity
constraints (Milani, Huang, Chiang, EDBT 2021).

The method itself, Algorithm 1 of the paper with the exact choice and Integrate by
CP-SAT, is :func:`fairanon.methods.diva.diva`; its parts here are

- :mod:`.graph`: BuildGraph (a node per constraint, an edge where target records
  overlap) and the node orders of the coloring, :data:`NEXT_NODES` (DIVA-Basic,
  MinChoice, MaxFanOut);
- :mod:`.problem`: the instance and the constraints, coded once for every step;
- :mod:`.clusterings`: Clusterings(sigma, R), the candidate clusterings of a
  constraint's target records given the colors chosen so far;
- :mod:`.coloring`: DiverseClustering (Alg. 3-4), the backtracking coloring;
- :mod:`.pool`: the candidate clusters among which the exact choice picks;
- :mod:`.precheck`: the requirements DIVA enforces and the conditions that make a run
  hopeless;
- :mod:`.rest`: Suppress (Alg. 2) and the anonymization of the records outside the
  diverse clustering;
- :mod:`.signatures`: the problem with identical records merged into types, each
  choosing which constraint attributes it shows, and a greedy solution of it (the
  repair when the coloring fails; its exact model is
  :mod:`fairanon.solver.diva_signatures`).

The paper leaves Clusterings, IsConsistent and Integrate unspecified; these modules
follow docs/papers.md, DV-1 to DV-5 (see :func:`fairanon.methods.diva.diva`,
Notes).
"""

from .clusterings import clusterings
from .coloring import VALUE_ORDERS, DiverseClustering, diverse_clustering
from .graph import NEXT_NODES, constraint_graph, next_basic, next_maxfanout, next_minchoice
from .rest import ANONYMIZERS

__all__ = [
    "ANONYMIZERS",
    "NEXT_NODES",
    "VALUE_ORDERS",
    "DiverseClustering",
    "clusterings",
    "constraint_graph",
    "diverse_clustering",
    "next_basic",
    "next_maxfanout",
    "next_minchoice",
]
