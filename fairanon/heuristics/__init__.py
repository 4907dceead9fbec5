"""Heuristic anonymization algorithms: Mondrian and its relatives, Sabre and its relatives,
DIVA's coloring, k-member and OKA. They never import the exact models in
:mod:`fairanon.solver`; methods that use both live in :mod:`fairanon.methods`."""
