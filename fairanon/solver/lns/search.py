"""The large-neighbourhood search loop: free some classes, re-solve them exactly, keep
improvements, until the time or the rounds run out.

Each round picks a strategy by roulette over adaptive weights (ALNS: a strategy's
weight moves towards 1 when its move improves the release, towards 0.1 when not), builds
a neighbourhood of about ``size`` records (:mod:`.neighbourhoods`) and re-solves it
(:mod:`.subproblem`). The size adapts: it grows by a quarter after a move proven
optimal in under half its time, shrinks by a fifth after a move that was not proven
(times in CP-SAT's deterministic clock).
A table small enough is first re-solved whole, which proves the optimum when it fits
in the time.

Determinism: every random choice comes from one generator seeded by the caller, and
each re-solve is bounded in CP-SAT's deterministic time, so the same seed and worker
count give the same sequence of releases, round after round (with more than one worker
CP-SAT's interleaved search, deterministic too, is used). The wall clock decides only
how many rounds run -- and, on a machine so loaded that a re-solve takes more than
``WALL_FACTOR`` times its deterministic budget in seconds, where that re-solve stops.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...models.requirements import AlphaProtection, KAnonymity, Requirement
from .. import _cpsat
from .neighbourhoods import STRATEGIES, ClassIndex
from .state import Incumbent
from .subproblem import solve_neighbourhood

__all__ = ["SearchResult", "search"]

#: A re-solve stops at `move_time` units of CP-SAT's deterministic time, or at this many
#: times `move_time` seconds of wall-clock time, whichever comes first. (One unit took
#: about 2.5 s on the 2-core machine of the benchmarks, for these models.)
WALL_FACTOR = 10.0
#: Records above which re-solves get a shorter default budget (measured on UCI Adult,
#: 30,162 rows: more improvements in a minute with 0.05 than with 0.2).
MANY_ROWS = 10_000


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
    """

    incumbent: Incumbent
    proven: bool = False
    rounds: int = 0
    improvements: int = 0
    history: list = field(default_factory=list)
    strategies: dict = field(default_factory=dict)
    size: int = 0
    refused: int = 0


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
    around: int = 50,
    move_time: float | None = None,
    whole_types: int = 300,
    max_range_values: int = 16,
    max_vars: int = 30_000,
    max_contexts: int = 5_000,
    strategies: Sequence[str] = STRATEGIES,
    cost_cap: float | None = 1.0,
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
        Stop after this many rounds.
    recoding : {"generalization", "suppression"}
    num_workers : int, default=1
        CP-SAT workers per re-solve.
    size : int, optional
        Records per neighbourhood at the start (default: 4k, at least 24).
    max_size : int, default=1000
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
        release found).
    max_range_values, max_vars, max_contexts
        As in :func:`~fairanon.solver.local_recoding.local_recoding`, per neighbourhood.
    cost_cap : float, optional
        With the objectives "ncp" and "lm", a neighbourhood's candidate vectors cost at
        most this many times its costliest class, per record (the whole table is
        re-solved without the cap).
    strategies : sequence of str
        Among :data:`~.neighbourhoods.STRATEGIES`.
    """
    started = time.perf_counter()
    if move_time is None:
        move_time = 0.05 if inc.instance.n_rows > MANY_ROWS else 0.2
    rng = np.random.default_rng(seed)
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    size = size or max(4 * k, 24)
    weights = {s: 1.0 for s in strategies}
    tally = {s: {"rounds": 0, "improvements": 0} for s in (*strategies, "whole")}
    result = SearchResult(inc)
    cells = None
    if any(isinstance(r, AlphaProtection) for r in requirements):
        prot = inc.instance.protected_mask()
        neg = inc.instance.negative_mask()
        cells = np.where(prot, 0, 2) + np.where(neg, 0, 1)
    index = ClassIndex(inc, k)

    def out_of_time() -> bool:
        if max_rounds is not None and result.rounds >= max_rounds:
            return True
        return deadline is not None and time.perf_counter() >= deadline

    def run(
        nb,
        wall,
        deterministic,
        cap=cost_cap if inc.objective in ("ncp", "lm") else None,
        exact=False,
    ):
        return solve_neighbourhood(
            inc,
            requirements,
            nb,
            recoding=recoding,
            max_range_values=max_range_values,
            time_limit=wall,
            deterministic_limit=deterministic,
            seed=int(rng.integers(2**31 - 1)),
            num_workers=num_workers,
            max_vars=max_vars,
            max_contexts=max_contexts,
            alpha_cells=cells,
            cost_cap=cap,
            exact=exact,
        )

    distinct = len(
        np.unique(np.column_stack([inc.protected, *(r.row_value for r in inc.registries)]), axis=0)
    )
    if distinct <= whole_types and not out_of_time():
        result.rounds += 1
        tally["whole"]["rounds"] += 1
        whole = index.whole()
        left = _cpsat.remaining(deadline)
        move = run(whole, None if left is None else left / 2, None, cap=None, exact=True)
        if (
            move.labels is not None
            and inc.value_after(whole.vectors, whole.rows, move.labels) <= inc.value
        ):
            before = inc.value
            inc.replace(whole.vectors, whole.rows, move.labels)
            if inc.value < before:
                result.improvements += 1
                tally["whole"]["improvements"] += 1
                result.history.append((time.perf_counter() - started, inc.value))
            index = ClassIndex(inc, k)
        if move.proven:
            result.proven = True
            return _finish(result, tally, weights, size)

    names = list(strategies)
    while not out_of_time():
        p = np.array([weights[s] for s in names])
        strategy = names[int(rng.choice(len(names), p=p / p.sum()))]
        nb = index.neighbourhood(strategy, rng, size, around)
        # The deterministic limit decides; the wall-clock one only guards the deadline
        # and a machine much slower than CP-SAT's deterministic clock assumes.
        wall = WALL_FACTOR * move_time
        if deadline is not None:
            wall = min(wall, max(0.01, deadline - time.perf_counter()))
        result.rounds += 1
        tally[strategy]["rounds"] += 1
        move = run(nb, wall, move_time)
        took = move.stats.get("deterministic_time", move_time)
        improved = False
        if move.labels is not None:
            if inc.value_after(nb.vectors, nb.rows, move.labels) < inc.value:
                inc.replace(nb.vectors, nb.rows, move.labels)
                improved = True
        elif "refused" in move.stats:
            result.refused += 1
        if improved:
            result.improvements += 1
            tally[strategy]["improvements"] += 1
            result.history.append((time.perf_counter() - started, inc.value))
            index = ClassIndex(inc, k)
        weights[strategy] = 0.8 * weights[strategy] + 0.2 * (1.0 if improved else 0.1)
        if move.proven and took < move_time / 2:
            size = min(int(size * 1.25) + 1, max_size)
        elif not move.proven:
            size = max(int(size * 0.8), 2 * k)
    return _finish(result, tally, weights, size)


def _finish(result: SearchResult, tally: dict, weights: dict, size: int) -> SearchResult:
    result.strategies = {
        s: {**t, "weight": round(weights.get(s, 0.0), 3)} for s, t in tally.items() if t["rounds"]
    }
    result.size = size
    return result
