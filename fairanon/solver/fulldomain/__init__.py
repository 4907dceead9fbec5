"""Optimal full-domain generalization: one level per attribute, over the lattice of levels.

Full-domain (global) recoding releases every value of an attribute at the same level
of its hierarchy (categorical and ordered attributes) or of its interval ladder
(numeric attributes, :class:`~fairanon.instances.hierarchy.IntervalHierarchy`); a
solution is a lattice node, one level per generalizable quasi-identifier, optionally
with the records of classes that fail k, l or t suppressed up to a limit (a count, or
a share of the records as ARX gives it).

ARX's Flash finds the best node under monotone privacy models by checking nodes on
frequency sets rolled up from their predecessors and tagging whole sublattices from
each check. This package does the same and more, exactly and with a proof:

- :mod:`.lattice`: each attribute's levels, which levels refine which, the exact
  integer cell costs;
- :mod:`.frequency`: frequency sets (classes with additive counts) and their roll-up
  from a finer cached one, so a node's check reads a few thousand rows, not the table;
- :mod:`.evaluate`: the exact check of a node -- k, l, t, suppression, the suppressed
  block, diversity constraints, alpha-protection -- and the bounds it proves for other
  nodes (a failing down-set; the least extra cost suppression adds below a node; the
  least discernibility above it);
- :mod:`.closeness`: what a class failing t-closeness forces every refinement to
  suppress, which extends those bounds to t under suppression;
- :mod:`.search`: best-first branch and bound over the open nodes, which stops when no
  open node's bound is below the incumbent (proven optimal) or none is left
  (infeasible);
- :mod:`.master`: the same open nodes as a CP-SAT model over level choices (the cuts
  become constraints), for lattices too large to list;
- :mod:`.method`: :func:`fulldomain`, the release and its explanation;
- :mod:`.candidates`: :func:`candidates`, every node that meets the requirements as
  loss against risk, any of which ``fulldomain(levels=...)`` releases;
- :mod:`.local`: :func:`lattice_local`, local recoding by full-domain rounds over the
  records each round leaves (ARX's local recoding scheme), then class-wise lowering.

Alpha-protection and diversity constraints are not monotone on the lattice (Flash
cannot take them): a node failing them is closed alone, after its cost and bounds have
been counted, so they cost checks but never correctness.
"""

from .candidates import Candidate, Candidates, candidates
from .lattice import Ladder, ladders, lattice_size
from .local import lattice_local
from .method import LATTICE_NODES, SEARCHES, fulldomain

__all__ = [
    "LATTICE_NODES",
    "SEARCHES",
    "Candidate",
    "Candidates",
    "Ladder",
    "candidates",
    "fulldomain",
    "ladders",
    "lattice_local",
    "lattice_size",
]
