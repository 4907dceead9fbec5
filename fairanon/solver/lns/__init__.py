"""Large-neighbourhood search over the exact local-recoding model.

Starting from a valid release, the search repeatedly frees the records of a few classes
-- nearby classes in quasi-identifier space, classes of one protected group, classes
where a requirement is tight, a large class and its neighbours (to split it), the
classes around one record's values (to move records across a border), the classes
under one hierarchy node or range (to re-cut the subtree), a suppressed class and the
classes nearest its records, random ones; chosen by adaptive weights -- and re-solves
them exactly with the
weighted-type CP-SAT model of :mod:`fairanon.solver.local_recoding`, everything else
fixed, keeping every improvement. Per-class requirements (k, l, t) hold inside the
neighbourhood and on the outside classes its records join; global ones (diversity
constraints, alpha-protection) hold through the fixed contribution of the rest of the
table. Modules, bottom up: :mod:`.labels` (every label met, with exact costs, and the
labels of a neighbourhood), :mod:`.state` (the incumbent), :mod:`.subproblem` (one
move), :mod:`.neighbourhoods` (which classes to free) and :mod:`.search` (the loop,
in one process or over parts of the table in several).
The method that starts it from the best heuristic release is
:func:`fairanon.methods.lns.lns`.
"""

from .labels import Registry, neighbourhood_space, suppression_only
from .neighbourhoods import STRATEGIES
from .search import (
    NEIGHBOURHOOD_MAX_VARS,
    WHOLE_MOVE_TIMES,
    SearchResult,
    default_move_time,
    every_label,
    processes,
    processes_for,
    re_solved_whole,
    search,
)
from .state import Incumbent, release_labels

__all__ = ["NEIGHBOURHOOD_MAX_VARS", "STRATEGIES", "WHOLE_MOVE_TIMES", "Incumbent", "Registry",
           "SearchResult", "default_move_time", "every_label", "neighbourhood_space", "processes",
           "processes_for", "re_solved_whole", "release_labels", "search", "suppression_only"]
