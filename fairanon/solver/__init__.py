"""Exact CP-SAT models: local recoding and suppression, full-domain generalization, and
DIVA's exact choice and Integrate, with the CP-SAT plumbing they share. They never import
the heuristics in :mod:`fairanon.heuristics`; methods that use both live in
:mod:`fairanon.methods`."""
