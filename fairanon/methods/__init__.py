"""Methods composed of heuristics and exact models.

Heuristics (:mod:`fairanon.heuristics`) and exact models (:mod:`fairanon.solver`) never
import each other; a method that uses both (a heuristic with an exact fallback, an exact
model started from heuristic releases) is put together here, one layer above them.
"""
