"""The large-neighbourhood search loop: free some classes, re-solve them exactly, keep
improvements, until the time or the rounds run out.

Each round picks a strategy by roulette over adaptive weights (ALNS: a strategy's
weight moves towards 1 when its move improves the release, towards 0.1 when not), builds
a neighbourhood of about ``size`` records (:mod:`.neighbourhoods`) and re-solves it
(:mod:`.subproblem`). The size adapts: it grows by a quarter after a move proven
optimal in under half its time, shrinks by a fifth after a move that was not proven
(times in CP-SAT's deterministic clock), and stays below ``max_size`` records and
:data:`MAX_CLASSES` classes of the mean size.
A table small enough is first re-solved whole, which proves the optimum when it fits
in the time. Unless a requirement reads the labels (diversity constraints,
alpha-protection) or the recoding is suppression, every class is released as its tight
summary at the start, after the whole-table re-solve and after each move that changes
it (:meth:`~.state.Incumbent.tighten`, which stops between classes at the deadline): a
heuristic's start, or a re-solve stopped by its time limit, can leave a class on wider
labels than its records need. On German credit with the 7 quasi-identifiers of
``benchmarks/exact.py`` (``fa.load("german", qi=GERMAN_QI, roles={"personal_status":
"qi"})``), ``fa.anonymize(german, [fa.KAnonymity(5)], method="lns", objective="ncp",
seed=0, max_rounds=0)`` narrows lattice-local's start from an NCP of 1,521.55 to
1,516.88; after 40 rounds (``max_rounds=40, bound=False, searches=1``, seeds 0-2) the
release ends 5.3, 7.7 and 14.8 lower than without narrowing for k = 5, and 7.0 and 7.8
higher and 19.6 lower for k = 10 -- within the spread between seeds.

With ``searches`` > 1 (both cores of a 2-core machine), the classes are cut into that
many parts of about equal records along one attribute (drawn each epoch), and each part
is searched on its own for :data:`EPOCH_ROUNDS` rounds, the first in this process, the
others in forked processes (CP-SAT and the model building run in parallel); the parts'
new labels are then put together and the next epoch cuts along another attribute, so
that no border stays fixed. This is sound when every requirement is per class and
union-monotone (a class of one part that takes the vector of a class of another merges
with it and still meets them) and the objective is a sum over cells (the parts' changes
add up); otherwise the search runs in one process.

Determinism: every random choice comes from one generator seeded by the caller, and
each re-solve is bounded in CP-SAT's deterministic time, so the same seed and worker
count give the same sequence of releases, round after round (with more than one worker
CP-SAT's interleaved search, deterministic too, is used); with several searches, each
part keeps its own generator (drawn from the caller's) from epoch to epoch, and the
epochs are counted in rounds, so the same seed and number of searches give the same
releases. The wall clock decides only how many rounds run -- and, when the rounds are
not counted (no `max_rounds`), on a machine so loaded that a re-solve takes more than
``WALL_FACTOR`` times its deterministic budget in seconds, where that re-solve stops,
or that a part's process does not answer by the deadline (give or take
:func:`part_grace`), whether that part's last epoch counts. With `max_rounds`, only the
deadline (if any) cuts a re-solve in wall-clock time: any load gives the same releases
as long as the rounds end before the deadline, and without a deadline nothing bounds a
re-solve's wall-clock time (its deterministic budget applies to each CP-SAT call of
it: the lazy cuts of entropy l-diversity and the phases of a lexicographic objective
make several). A
part whose process dies without answering (killed by the system) or runs out of memory
(MemoryError) is dropped likewise; a part whose search raises another error makes the
search raise :class:`~fairanon.exceptions.SolverError` naming it.
"""

from __future__ import annotations

import contextlib
import copy
import multiprocessing
import signal
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..._arrays import unique_rows
from ..._processes import can_fork, start_forked
from ...exceptions import SolverError
from ...models.requirements import (
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    Requirement,
)
from ...models.risk.requirements import LINEAR_RISK
from .. import _cpsat
from .labels import Registry, suppression_only
from .neighbourhoods import STRATEGIES, ClassIndex
from .state import Incumbent
from .subproblem import solve_neighbourhood

__all__ = ["NEIGHBOURHOOD_MAX_VARS", "WHOLE_MOVE_TIMES", "SearchResult", "default_move_time",
           "every_label", "processes", "processes_for", "re_solved_whole", "search"]

#: A re-solve stops at `move_time` units of CP-SAT's deterministic time, or at this many
#: times `move_time` seconds of wall-clock time, whichever comes first (not when the
#: rounds are counted: `max_rounds` of :func:`search`). (One unit took
#: about 2.5 s on the 2-core machine of the benchmarks, for these models.)
WALL_FACTOR = 10.0
#: Without a deadline (rounds counted), the whole table's re-solve stops at this many
#: times `move_time` units of CP-SAT's deterministic time, so that it ends, at the same
#: point under any load (it had no limit: German credit, 3 QIs, k = 5, discernibility
#: ran past 5 minutes).
WHOLE_MOVE_TIMES = 50
#: Records above which re-solves get a shorter default budget (measured on UCI Adult,
#: 30,162 rows: more improvements in a minute with 0.05 than with 0.2).
MANY_ROWS = 10_000


def default_move_time(n_rows: int) -> float:
    """CP-SAT's deterministic time per re-solve by default: 0.2, or 0.05 on tables of
    more than :data:`MANY_ROWS` records."""
    return 0.05 if n_rows > MANY_ROWS else 0.2
#: Rounds of each part in one epoch of a search in several processes.
EPOCH_ROUNDS = 30
#: Classes per part below which the search stays in one process (forking a process
#: costs more than it gives on a small table).
MIN_PART_CLASSES = 200
#: Seconds a part's process may overrun the deadline before its work is dropped, at
#: most (see :func:`part_grace`).
PART_GRACE = 2.0
#: The share of the search's time a part's process may overrun the deadline by: a
#: method's time limit keeps a few per cent for finishing (FINISH_SHARE of
#: :mod:`fairanon.methods.lns`), so the wait for a part stays within it.
PART_GRACE_SHARE = 0.01
#: What a neighbourhood's candidate vectors may cost at most, per record, relative to
#: what its records pay now (`cost_cap` of :func:`search`).
COST_CAP = 1.3
#: Assignment variables of a neighbourhood's model at most (`max_vars` of :func:`search`),
#: which bounds the memory of each search process.
NEIGHBOURHOOD_MAX_VARS = 30_000
#: Classes of the current mean size a neighbourhood holds at most (`max_classes` of
#: :func:`search`): on German credit about 230 records for k = 5 and 460 for k = 10.
MAX_CLASSES = 40


@dataclass
class SearchResult:
    """How the search went.

    Attributes
    ----------
    incumbent : Incumbent
        The best release found (it never gets worse).
    proven : bool
        The whole table was re-solved to optimality: the release is optimal.
    rounds, improvements : int
    history : list of (float, value)
        Seconds since the search started and the objective after each improvement.
    strategies : dict
        Per strategy: rounds, improvements and final weight.
    size : int
        The neighbourhood size (records) at the end.
    parts : int
        Parts searched at once (1: one process).
    """

    incumbent: Incumbent
    proven: bool = False
    rounds: int = 0
    improvements: int = 0
    history: list = field(default_factory=list)
    strategies: dict = field(default_factory=dict)
    size: int = 0
    refused: int = 0
    parts: int = 1


def search(
    inc: Incumbent,
    requirements: Sequence[Requirement],
    *,
    seed: int,
    deadline: float | None,
    max_rounds: int | None = None,
    recoding: str = "generalization",
    num_workers: int = 1,
    size: int | None = None,
    max_size: int = 1000,
    max_classes: int | None = MAX_CLASSES,
    around: int = 50,
    move_time: float | None = None,
    whole_types: int = 300,
    max_range_values: int = 16,
    max_vars: int = NEIGHBOURHOOD_MAX_VARS,
    max_contexts: int = 5_000,
    strategies: Sequence[str] = STRATEGIES,
    cost_cap: float | None = COST_CAP,
    searches: int = 1,
    guides: Sequence[np.ndarray] = (),
) -> SearchResult:
    """Improve `inc` in place by large-neighbourhood search (see the module docstring).

    Parameters
    ----------
    inc : Incumbent
        The starting release, a valid one.
    requirements : sequence of Requirement
    seed : int
        Seeds the choices and CP-SAT.
    deadline : float, optional
        A ``time.perf_counter`` value: no round starts after it, and a re-solve never
        runs past it.
    max_rounds : int, optional
        Stop after this many rounds (with several parts, rounded up to a multiple of
        their number: each part of an epoch runs as many).
    recoding : {"generalization", "suppression"}
    num_workers : int, default=1
        CP-SAT workers per re-solve.
    size : int, optional
        Records per neighbourhood at the start (default: 4k, at least 24).
    max_size : int, default=1000
    max_classes : int, optional
        Records per neighbourhood at most, besides `max_size`: this many times the mean
        size of the classes searched (at least 2k); None for `max_size` alone. With the
        default :data:`MAX_CLASSES` (40), on German credit (the 7 quasi-identifiers of
        ``benchmarks/exact.py``, NCP), 45 CPU seconds of re-solves alone from
        lattice-local's release (seeds 0-2, 2 cores, shared) ended at 1,413.1, 1,385.3
        and 1,403.7 for k = 5, against 1,441.5, 1,451.5 and 1,414.1 before (no such
        limit, and only the used assignment variables hinted: :mod:`.subproblem`),
        1,434.2, 1,408.6 and 1,436.7 with the limit alone, and 1,451.0, 1,479.5 and
        1,430.3 with the complete hint alone (quicker proofs let the neighbourhoods grow
        to 470 records, and about half as many rounds ran); for k = 10 at 2,177.2,
        2,177.5 and 2,164.2 against 2,201.9, 2,164.8 and 2,190.7 before. A limit of 200
        records (`max_size`) had helped k = 5 but not k = 10, whose classes are twice
        as large.
    around : int, default=50
        Classes offered to the freed records to join.
    move_time : float, optional
        CP-SAT deterministic time per re-solve (see :data:`WALL_FACTOR`); default 0.2
        (about half a second on the benchmarks' machine), 0.05 on tables of more than
        :data:`MANY_ROWS` records, where many small moves pay more than fewer large ones.
    whole_types : int, default=300
        Tables with at most this many distinct records (on the quasi-identifiers and
        the protected attribute) are first re-solved whole, in at most half the time
        (the optimum is proven when it finishes; else the search goes on from the best
        release found); without a deadline, in :data:`WHOLE_MOVE_TIMES` times `move_time`
        units of deterministic time.
    max_range_values, max_vars, max_contexts
        As in :func:`~fairanon.solver.local_recoding.local_recoding`, per neighbourhood.
    cost_cap : float, optional
        With the objectives "ncp" and "lm", a neighbourhood's candidate vectors cost at
        most this many times its costliest class per record, and a type's at most this
        many times what its costliest record, or the neighbourhood's records on
        average, pay now (:func:`~.subproblem.solve_neighbourhood`; the whole table is
        re-solved without the cap). The default 1.3 lets a move make some records pay
        more so that others pay less: on German credit (the 7 quasi-identifiers of
        ``benchmarks/exact.py``, NCP), 50 CPU seconds of search from lattice-local's
        release (2 cores, shared) ended 8.1 lower on average than with 1.0 for k = 5
        (seeds 0-2: 1,470.3, 1,473.0 and 1,480.4 against 1,476.9, 1,486.6 and
        1,484.5) and 2.1 lower for k = 10, within the spread between seeds (2,191.6,
        2,194.8 and 2,192.2 against 2,198.9, 2,203.5 and 2,182.6); 1.6 ended higher
        than 1.0 (seed 0: 1,483.9 and 2,208.2).
    strategies : sequence of str
        Among :data:`~.neighbourhoods.STRATEGIES`.
    searches : int, default=1
        Parts searched at once, each in its own process (see the module docstring);
        one process when the requirements or the objective do not allow it, the
        platform cannot fork, or a part would hold fewer than
        :data:`MIN_PART_CLASSES` classes.
    guides : sequence of numpy.ndarray
        Other releases (registry label ids per record, as :attr:`Incumbent.labels`),
        such as the runners-up of a portfolio: the vectors they give a
        neighbourhood's records join the candidates of its re-solve (up to `around`
        per release, the most common first), so that the search may take the classes
        another method formed where they lose less (path relinking: F. Glover,
        M. Laguna, R. Martí, Fundamentals of scatter search and path relinking,
        Control and Cybernetics 29(3), 2000). With ``recoding="suppression"``, a
        guide's vectors that hold a range or a hierarchy node are left out.
    """
    started = time.perf_counter()
    if move_time is None:
        move_time = default_move_time(inc.instance.n_rows)
    rng = np.random.default_rng(seed)
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    size = size or max(4 * k, 24)
    tally = {s: {"rounds": 0, "improvements": 0} for s in (*strategies, "whole")}
    result = SearchResult(inc)
    cells = None
    if any(isinstance(r, AlphaProtection) for r in requirements):
        prot = inc.instance.protected_mask()
        neg = inc.instance.negative_mask()
        cells = np.where(prot, 0, 2) + np.where(neg, 0, 1)
    solve = {
        "recoding": recoding,
        "max_range_values": max_range_values,
        "num_workers": num_workers,
        "max_vars": max_vars,
        "max_contexts": max_contexts,
        "alpha_cells": cells,
    }
    cap = cost_cap if inc.objective in ("ncp", "lm") else None
    # Per guide, the records whose vector the recoding allows (None: all of them).
    allowed = [
        suppression_only(inc.registries, g) if recoding == "suppression" else None for g in guides
    ]
    # Labels narrowed to each class's tight summary after every move (Incumbent.tighten):
    # a re-solve stopped by its time limit may leave a class on a wider label than its
    # records need. Not when a requirement reads the labels, nor under suppression. In a
    # part's process a narrowed class may take the vector of another part's class and
    # merge with it, as any move of a part may (sound under the parts' conditions).
    narrow = recoding == "generalization" and not any(
        isinstance(r, (DiversityConstraint, AlphaProtection)) for r in requirements
    )
    loop = _Loop(requirements, solve, k, cap, move_time, max_size, around,
                 list(zip(guides, allowed)), narrow, max_classes, max_rounds is not None)
    weights = {s: 1.0 for s in strategies}
    # Not a round: max_rounds=0 still narrows, but the deadline stops it between classes.
    if narrow and inc.tighten(deadline=deadline):
        result.history.append((time.perf_counter() - started, inc.value))

    def out_of_time() -> bool:
        if max_rounds is not None and result.rounds >= max_rounds:
            return True
        return deadline is not None and time.perf_counter() >= deadline

    if not out_of_time() and re_solved_whole(inc, whole_types):
        result.rounds += 1
        tally["whole"]["rounds"] += 1
        whole = ClassIndex(inc, k).whole()
        left = _cpsat.remaining(deadline)
        move = solve_neighbourhood(
            inc, requirements, whole, time_limit=None if left is None else left / 2,
            deterministic_limit=WHOLE_MOVE_TIMES * move_time if left is None else None,
            seed=int(rng.integers(2**31 - 1)), cost_cap=None,
            exact=True, deadline=None if left is None else time.perf_counter() + left / 2,
            **solve,
        )
        optimum = None if move.labels is None else inc.value_after(whole.vectors, whole.rows, move.labels)
        if optimum is not None and optimum <= inc.value:
            before = inc.value
            inc.replace(whole.vectors, whole.rows, move.labels)
            if narrow:
                inc.tighten(deadline=deadline)
            if inc.value < before:
                result.improvements += 1
                tally["whole"]["improvements"] += 1
                result.history.append((time.perf_counter() - started, inc.value))
        # The proof is over the model's candidate labels: it stands only when they are
        # every label a release may use (every range of each attribute's values present,
        # every node of a categorical one; not a sample of cut points, nor an ordered
        # attribute's tree beside its ranges) and the release is the model's optimum. A
        # start or a narrowing that does better with labels outside them leaves the
        # optimum unproven, and the search goes on (as cpsat returns such a release
        # FEASIBLE).
        complete = every_label(inc.registries, inc.objective, recoding, max_range_values)
        if move.proven and complete and inc.value == optimum:
            result.proven = True
            return _finish(result, tally, weights, size)

    parts = processes(inc, requirements, searches)
    result.parts = parts
    if out_of_time():  # no round: the classes are not indexed past the deadline
        return _finish(result, tally, weights, size)
    if parts == 1:
        size = loop.rounds(inc, rng, list(strategies), weights, size, tally, result,
                           out_of_time, deadline, started)
        return _finish(result, tally, weights, size)
    # One generator, weights and size per part, kept from epoch to epoch.
    states = [
        (np.random.default_rng(int(rng.integers(2**63 - 1))), dict(weights), size)
        for _ in range(parts)
    ]
    while not out_of_time():
        rounds = EPOCH_ROUNDS
        if max_rounds is not None:
            rounds = min(rounds, -(-(max_rounds - result.rounds) // parts))
        split = _split(inc, rng, parts)
        states = _epoch(inc, loop, split, states, list(strategies), rounds, tally, result,
                        deadline, started)
    weights = {s: float(np.mean([st[1][s] for st in states])) for s in strategies}
    return _finish(result, tally, weights, max(st[2] for st in states))


class _Loop:
    """The rounds of the search on one incumbent: the neighbourhood choice, the
    re-solve, the adaptive weights and size (see the module docstring)."""

    def __init__(self, requirements, solve, k, cap, move_time, max_size, around, guides, narrow,
                 max_classes=MAX_CLASSES, counted=False):
        self.requirements, self.solve, self.k, self.cap = requirements, solve, k, cap
        self.counted = counted  # the rounds are counted (max_rounds)
        self.move_time, self.max_size, self.around = move_time, max_size, around
        self.max_classes = max_classes
        self.guides, self.narrow = guides, narrow

    def _largest(self, index: ClassIndex) -> int:
        """The most records a neighbourhood may hold: `max_size`, and `max_classes`
        classes of the mean size of those in `index` (at least 2k)."""
        if self.max_classes is None or not len(index.sizes):
            return self.max_size
        return min(self.max_size, max(2 * self.k, int(self.max_classes * index.sizes.mean())))

    def guided(self, inc: Incumbent, nb) -> list[tuple]:
        """The vectors the guides give the records of `nb` that it does not hold yet,
        the most common first, up to `around` per guide; with suppression, only those
        made of values and ``*`` (a guide's range or hierarchy node is not a label the
        search may release then, and the objective "stars" would not charge it)."""
        held = set(nb.vectors) | set(nb.around)
        out = []
        for guide, allowed in self.guides:
            rows = nb.rows if allowed is None else nb.rows[allowed[nb.rows]]
            keys = np.column_stack([inc.protected[rows], guide[rows]])
            uniq, counts = np.unique(keys, axis=0, return_counts=True)
            order = np.lexsort((np.arange(len(uniq)), -counts))[: self.around]
            for row in uniq[order].tolist():
                vec = tuple(int(x) for x in row)
                if vec not in held:
                    held.add(vec)
                    out.append(vec)
        return out

    def rounds(
        self,
        inc: Incumbent,
        rng: np.random.Generator,
        names: list[str],
        weights: dict,
        size: int,
        tally: dict,
        result: SearchResult,
        stop: Callable[[], bool],
        deadline: float | None,
        started: float,
    ) -> int:
        """Rounds until `stop`, or until less time is left before `deadline` than the
        last round took (a round's model is built before its solve is cut at the
        deadline); returns the neighbourhood size reached."""
        move_time, k = self.move_time, self.k
        index = ClassIndex(inc, k)
        largest = self._largest(index)
        took_s = 0.0
        while not stop() and (deadline is None or deadline - time.perf_counter() > took_s):
            clock = time.perf_counter()
            p = np.array([weights[s] for s in names])
            strategy = names[int(rng.choice(len(names), p=p / p.sum()))]
            size = min(size, largest)
            nb = index.neighbourhood(strategy, rng, size, self.around)
            if self.guides:
                nb.around = nb.around + self.guided(inc, nb)
            # The deterministic limit decides; the wall-clock one only guards the
            # deadline and, unless the rounds are counted (which must give the same
            # releases under any load), a machine much slower than CP-SAT's
            # deterministic clock assumes.
            wall = None if self.counted else WALL_FACTOR * move_time
            if deadline is not None:
                left = max(0.01, deadline - time.perf_counter())
                wall = left if wall is None else min(wall, left)
            result.rounds += 1
            tally[strategy]["rounds"] += 1
            move = solve_neighbourhood(
                inc, self.requirements, nb, time_limit=wall, deterministic_limit=move_time,
                seed=int(rng.integers(2**31 - 1)), cost_cap=self.cap, deadline=deadline,
                **self.solve,
            )
            took = move.stats.get("deterministic_time", move_time)
            improved = False
            if move.labels is not None:
                if inc.value_after(nb.vectors, nb.rows, move.labels) < inc.value:
                    inc.replace(nb.vectors, nb.rows, move.labels)
                    if self.narrow:
                        keys = np.column_stack([inc.protected[nb.rows], move.labels])
                        # Sorted: which of two classes narrowing to one vector keeps it
                        # does not hang on a set's order.
                        inc.tighten(sorted({tuple(int(x) for x in key) for key in keys.tolist()}),
                                    deadline=deadline)
                    improved = True
            elif "refused" in move.stats:
                result.refused += 1
            if improved:
                result.improvements += 1
                tally[strategy]["improvements"] += 1
                result.history.append((time.perf_counter() - started, inc.value))
                index = ClassIndex(inc, k)
                largest = self._largest(index)
            weights[strategy] = 0.8 * weights[strategy] + 0.2 * (1.0 if improved else 0.1)
            if move.proven and took < move_time / 2:
                size = min(int(size * 1.25) + 1, largest)
            elif not move.proven:
                size = max(int(size * 0.8), 2 * k)
            took_s = time.perf_counter() - clock
        return size


def processes(inc: Incumbent, requirements: Sequence[Requirement], searches: int) -> int:
    """The processes :func:`search` runs on `inc` when asked for `searches`: that many
    when the parts may be searched apart (see the module docstring) and each would hold
    :data:`MIN_PART_CLASSES` classes, else one."""
    return processes_for(len(inc.classes), inc.objective, requirements, searches)


def processes_for(n_classes: int, objective, requirements: Sequence[Requirement], searches: int) -> int:
    """:func:`processes` for a release of `n_classes` classes under `objective`."""
    apart = (
        searches > 1
        and can_fork()
        and objective in ("ncp", "lm", "stars", "generalized")
        and all(
            r.union_monotone and not isinstance(r, (DiversityConstraint, AlphaProtection, *LINEAR_RISK))
            for r in requirements
        )
        and n_classes >= searches * MIN_PART_CLASSES
    )
    return searches if apart else 1


def _split(inc: Incumbent, rng: np.random.Generator, parts: int) -> list[list[tuple]]:
    """The classes cut into `parts` runs of about equal records, in the order of their
    middle on one attribute drawn at random (ties by first record); no run is empty
    (there are at least `parts` classes), even when one class holds half the records or
    more."""
    vectors = list(inc.classes)
    d = len(inc.registries)
    if d:
        a = int(rng.integers(d))
        pos = np.array(inc.registries[a].position, dtype=float).reshape(-1, 2)
        middle = pos[[v[a + 1] for v in vectors]].mean(axis=1)
    else:
        middle = np.zeros(len(vectors))
    first = np.array([int(inc.classes[v][0]) for v in vectors])
    order = np.lexsort((first, middle))
    sizes = np.cumsum([len(inc.classes[vectors[i]]) for i in order])
    cuts = np.searchsorted(sizes, sizes[-1] * np.arange(1, parts) / parts)
    # A class holding a share of the records or more puts two cuts together (or the
    # first at 0): cut i goes at least one class after cut i - 1, and leaves a class
    # to each later run.
    n = len(order)
    for i in range(parts - 1):
        low = cuts[i - 1] + 1 if i else 1
        cuts[i] = min(max(int(cuts[i]), low), n - (parts - 1 - i))
    return [[vectors[i] for i in chunk] for chunk in np.split(order, cuts)]


def _part(inc: Incumbent, vectors: list[tuple]) -> Incumbent:
    """A copy of `inc` that holds only the classes `vectors`: a search on it frees and
    joins only those (the objective, a sum over cells, still counts the whole table)."""
    part = copy.copy(inc)
    part.labels = inc.labels.copy()
    part.classes = {v: inc.classes[v] for v in vectors}
    part.uniques = sum(len(rows) == 1 for rows in part.classes.values())
    return part


def _search_part(inc, loop, vectors, state, names, rounds, deadline, started):
    """One part's rounds of an epoch: the rows it changed and their labels (registry
    ids), the labels it made (text and covered values per attribute, ids from the
    registries' sizes at the start), its generator, weights and size, and its tallies."""
    rng, weights, size = state
    part = _part(inc, vectors)
    known = [len(reg) for reg in inc.registries]
    tally = {s: {"rounds": 0, "improvements": 0} for s in names}
    result = SearchResult(part)

    def stop() -> bool:
        return result.rounds >= rounds or (
            deadline is not None and time.perf_counter() >= deadline
        )

    size = loop.rounds(part, rng, names, weights, size, tally, result, stop, deadline, started)
    rows = np.flatnonzero((part.labels != inc.labels).any(axis=1))
    made = [(known[a], reg.texts[known[a] :], reg.masks[known[a] :])
            for a, reg in enumerate(part.registries)]
    counts = {"rounds": result.rounds, "improvements": result.improvements,
              "refused": result.refused}
    return rows, part.labels[rows], made, (rng, weights, size), tally, counts


@dataclass(frozen=True)
class _Failed:
    """What a part's process sends when its search raised; `memory` when it ran out of
    memory (MemoryError), which drops the part as the system's killing it would."""

    error: str
    memory: bool = False


def _child(conn, parents, *args) -> None:
    """A part searched in a forked process; Ctrl-C is the parent's to handle (it ends
    this process). An error is sent to the parent as its name, message and place
    (exceptions need not pickle). The parent's end of the pipe is closed here, so that
    when the parent has ended, however it ended, sending fails and this process ends
    instead of waiting for ever on a full pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parents.close()
    try:
        outcome = _search_part(*args)
    except BaseException as exc:  # noqa: BLE001 -- the parent reports whatever ended the part
        frame = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" (at {frame[0].filename}:{frame[0].lineno} in {frame[0].name})" if frame else ""
        outcome = _Failed(f"{type(exc).__name__}: {exc}{where}", isinstance(exc, MemoryError))
    with contextlib.suppress(OSError):  # the parent has ended
        conn.send(outcome)
    conn.close()


def part_grace(deadline: float, started: float) -> float:
    """Seconds the parent waits past `deadline` for a part's process: a share
    (:data:`PART_GRACE_SHARE`) of the search's time, at most :data:`PART_GRACE`."""
    return min(PART_GRACE, PART_GRACE_SHARE * max(0.0, deadline - started))


def _receive(conn, wait: float | None):
    """A part's outcome, or None when its process did not answer in `wait` seconds or
    died without answering (killed by the system, e.g. out of memory)."""
    if not conn.poll(wait):
        return None
    try:
        outcome = conn.recv()
    except EOFError:
        return None
    if isinstance(outcome, _Failed) and outcome.memory:
        return None
    if isinstance(outcome, _Failed):
        raise SolverError(
            f"A part of the large-neighbourhood search failed in its process: {outcome.error}. "
            "Use searches=1 to search in one process."
        )
    return outcome


def _epoch(inc, loop, split, states, names, rounds, tally, result, deadline, started):
    """One epoch: the first part searched here, the others in forked processes at the
    same time; their changes put into `inc` when they improve it."""
    children = []
    context = multiprocessing.get_context("fork")
    try:
        for p in range(1, len(split)):
            there, here = context.Pipe(duplex=False)
            proc = context.Process(
                target=_child,
                args=(here, there, inc, loop, split[p], states[p], names, rounds, deadline,
                      started),
                daemon=True,
            )
            start_forked(proc)
            here.close()
            children.append((proc, there))
        outcomes = [_search_part(inc, loop, split[0], states[0], names, rounds, deadline, started)]
        for proc, conn in children:
            wait = None
            if deadline is not None:
                wait = max(0.0, deadline - time.perf_counter()) + part_grace(deadline, started)
            outcomes.append(_receive(conn, wait))
    finally:
        for proc, conn in children:
            if proc.is_alive():
                proc.terminate()
            proc.join()
            conn.close()
    labels = inc.labels.copy()
    new_states = []
    for p, outcome in enumerate(outcomes):
        if outcome is None:  # a part that did not answer keeps its classes
            new_states.append(states[p])
            continue
        rows, part_labels, made, state, part_tally, counts = outcome
        for a, (reg, (known, texts, masks)) in enumerate(zip(inc.registries, made)):
            column = part_labels[:, a]
            if p > 0 and len(texts):
                # Labels made in another process get their ids here.
                fresh = column >= known
                column[fresh] = reg.adopt(texts, masks)[column[fresh] - known]
            labels[rows, a] = column
        new_states.append(state)
        for s, t in part_tally.items():
            tally[s]["rounds"] += t["rounds"]
            tally[s]["improvements"] += t["improvements"]
        result.rounds += counts["rounds"]
        result.improvements += counts["improvements"]
        result.refused += counts["refused"]
    rows = np.arange(len(labels))
    if inc.value_after(list(inc.classes), rows, labels) < inc.value:
        inc.replace(list(inc.classes), rows, labels)
        result.history.append((time.perf_counter() - started, inc.value))
    return new_states


def every_label(
    registries: Sequence[Registry], objective, recoding: str, max_range_values: int
) -> bool:
    """Whether the exact model of the whole table ranges over every label a release may
    use at no more cost, so that its optimum is the optimum: a categorical tree's nodes;
    every range of a numeric or ordered attribute's values present (at most
    `max_range_values`; beyond, a sample of cut points here, nested intervals or tree
    nodes in :func:`~fairanon.solver.local_recoding.local_recoding`). An ordered
    attribute's tree nodes cost no less than the range of the same values (its rank
    span) except under LM, where a node that skips values in the order counts fewer
    values than that range (every objective but NCP, stars and generalized is read so)."""
    if recoding == "suppression":
        return True
    for reg in registries:
        attr = reg.attr
        if attr.kind == "categorical":
            continue
        if len(reg.values) > max_range_values:
            return False
        if attr.kind == "ordered" and attr.hierarchy is not None and objective not in ("ncp", "stars", "generalized"):
            tree, rank = attr.hierarchy, {v: i for i, v in enumerate(reg.values)}  # present, in order
            for node in tree.nodes:
                ranks = sorted(rank[v] for v, inside in zip(tree.leaves, tree.leaf_mask(node)) if inside and v in rank)
                if ranks and ranks[-1] - ranks[0] + 1 != len(ranks):
                    return False
    return True


def re_solved_whole(inc: Incumbent, whole_types: int) -> bool:
    """Whether :func:`search` re-solves the whole table first: at most `whole_types`
    distinct records on the quasi-identifiers and the protected attribute."""
    return _distinct(inc, whole_types) <= whole_types


def _distinct(inc: Incumbent, most: int | None = None) -> int:
    """Distinct records on the quasi-identifiers and the protected attribute; with
    `most`, those of the first 4 (`most` + 1) records when more than `most` (the table
    has more then: on UCI Adult the set-up read them all, 5 ms CPU, to find 300 exceeded)."""
    columns = [inc.protected, *(r.row_value for r in inc.registries)]
    if most is not None and len(inc.protected) > 4 * (most + 1):
        head = len(unique_rows(np.column_stack([c[: 4 * (most + 1)] for c in columns]))[0])
        if head > most:
            return head
    return len(unique_rows(np.column_stack(columns))[0])


def _finish(result: SearchResult, tally: dict, weights: dict, size: int) -> SearchResult:
    result.strategies = {
        s: {**t, "weight": round(weights.get(s, 0.0), 3)} for s, t in tally.items() if t["rounds"]
    }
    result.size = size
    return result
