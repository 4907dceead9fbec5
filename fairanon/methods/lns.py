"""The lns method: the best heuristic release, improved by large-neighbourhood search
over the exact local-recoding model, with a certified lower bound.

:func:`lns` starts from the best verified release of the fast heuristics
(:func:`~fairanon.methods.starts.best_heuristic`; never worse than any of them) or
from a release given, improves it with :func:`fairanon.solver.lns.search` until the
time runs out, and bounds the objective from below (:func:`best_bound`), so the
release carries its gap to the optimum. Under k-anonymity alone with objective "ncp"
or "lm", the first :data:`MOVES_SHARE` of the search's time goes to the local search
over record moves, swaps and class splits (:func:`fairanon.heuristics.moves.local_search`),
whose release the re-solves then improve -- unless the table is small enough for the
search to re-solve it whole first (`whole_types`). :func:`improve` is the search alone,
after any release.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import signal
import time
from collections.abc import Sequence

import numpy as np

from .._memory import Limit, check_memory, current_limit, format_bytes, memory_limit
from .._processes import can_fork, cores, start_forked
from .._validation import check_bool, check_int, check_option
from ..exceptions import (
    FairanonError,
    IncompatibleRequirementError,
    InvalidParameterError,
    MemoryLimitError,
    SolverError,
)
from ..heuristics.moves import MOVE_OBJECTIVES, local_search
from ..instances.instance import Instance
from ..models.bounds import LowerBound, lower_bound
from ..models.objectives import (
    Objective,
    objective_spec,
    objective_value,
    relative_gap,
    value_for_display,
)
from ..models.requirements import (
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    Requirement,
    TCloseness,
    validate_requirements,
)
from ..models.risk.requirements import LINEAR_RISK, refuse_risk
from ..models.verify import verify
from ..release import Release, Status, generalize_partition, provenance
from ..solver import _cpsat
from ..solver.bounds import lp_bound
from ..solver.lns import (
    NEIGHBOURHOOD_MAX_VARS,
    STRATEGIES,
    WHOLE_MOVE_TIMES,
    Incumbent,
    Registry,
    default_move_time,
    every_label,
    processes,
    processes_for,
    re_solved_whole,
    release_labels,
    search,
    suppression_only,
)
from ..solver.local_recoding.encoding import BuildStopped
from ..solver.local_recoding.labels import RECODINGS, missing_labels
from ..solver.local_recoding.memory import model_memory
from ..solver.local_recoding.solve import check_hint, check_stretch, local_recoding, privacy_summary
from .starts import HEURISTICS, CheckedStart, _first_check_seconds, checked_start, heuristic_start

__all__ = ["REQUIREMENTS", "best_bound", "improve", "lns"]

#: The share of the time limit the search leaves to the lower bound (when the bound does
#: not run beside the search, in a process of its own).
BOUND_SHARE = 0.15
#: Memory below which the bound does not run beside the search (the limit in force less
#: the search's model): the LP bound would be refused anyway.
BOUND_MIN_BYTES = 64 * 2**20
#: The share of the time limit the starting heuristics may take at most.
START_SHARE = 0.4
#: The share of the time limit kept for building, verifying and returning the release.
FINISH_SHARE = 0.05
#: The search of :func:`improve` ends this many times the seconds its start took to be
#: checked and set up before the time limit, for building and verifying its release.
FINISH_FACTOR = 1.5
#: Seconds the search and the bound get when no time limit is given.
DEFAULT_SECONDS = 60.0
#: Seconds left below which lns computes no bound after the search: the bounds' set-up
#: (reading the records, the first attribute's labels) passes a shorter deadline.
BOUND_MIN_SECONDS = 0.05
#: Seconds the bound would get below which it does not run beside the search: on UCI
#: Adult (limits of 0.3-0.5 s) the forked bound answered nothing in under 0.25 s (its
#: LP's set-up alone takes 0.1-0.2 s) while starting and ending its process took
#: 0.05-0.08 s of the limit; the bound is then computed after the search, if time is left.
BESIDE_MIN_SECONDS = 0.25
#: Parts searched at once by default: both cores of a 2-core machine.
SEARCHES = 2
#: The requirements lns enforces (those of cpsat).
REQUIREMENTS = (KAnonymity, LDiversity, TCloseness, DiversityConstraint, AlphaProtection, *LINEAR_RISK)


def _check(instance, requirements, objective, recoding, caller, stretch_k=None):
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {caller} must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller=caller)
    refuse_risk(requirements, caller, LINEAR_RISK)
    for req in requirements:
        if not isinstance(req, REQUIREMENTS):
            raise IncompatibleRequirementError(
                f"{caller} enforces k-anonymity, l-diversity, t-closeness, diversity constraints, "
                f"alpha-protection, average risk and sample uniques; it cannot enforce {req}. "
                "Use method='auto'."
            )
    check_option(recoding, "recoding", caller, RECODINGS)
    objective = objective_spec(
        objective,
        caller,
        stretch_k=stretch_k,
        default="stars" if recoding == "suppression" else "ncp",
    )
    check_stretch(objective, requirements, caller)
    return requirements, objective


#: The share of the bound's time the LP bound may take under k-anonymity alone; the rest
#: is kept for the per-record bound, for when the LP's closure is cut by the time and it
#: does not apply after all.
LP_BOUND_SHARE = 0.9


def best_bound(
    instance: Instance,
    requirements: Sequence[Requirement],
    objective,
    *,
    release: Release | None = None,
    time_limit: float | None = None,
    recoding: str = "generalization",
) -> LowerBound | None:
    """The strongest lower bound found in the time: the LP bound of the type model under
    k (:func:`fairanon.solver.bounds.lp_bound`, when it applies) and the per-record
    bound (:func:`fairanon.models.bounds.lower_bound`, which also counts l-diversity),
    whichever is larger.

    Without l-diversity the LP goes first, with :data:`LP_BOUND_SHARE` of the time:
    where it applies it holds the per-record bound from its first round (its Lagrangian
    at the cheapest covers) and is the stronger (German credit, 7 QIs, NCP: 1,237
    against 816 for k = 5), and it finds out quickly when it does not apply (a join
    closure too large), leaving the per-record bound nearly all the time. With
    l-diversity, which only
    the per-record bound counts (German credit, 7 QIs, k = 5, l = 2, NCP: 888 against
    the LP's 816), the per-record bound goes first with half the time. When the LP bound
    would need more than the memory limit, the per-record bound, with
    ``details["lp_bound"]`` saying why. A privacy objective gets the bound of one class
    per protected value; a lexicographic one none (None).

    Under ``recoding="suppression"`` a cell is ``*`` exactly when it differs from the
    record's value, so the ``stars`` of such a release are its ``generalized`` cells,
    and so are its NCP and LM (1 for ``*``, 0 for a value's own label): the bound of
    those objectives is that of ``generalized`` over every release (generalizations too),
    which counts a cell for any two values a class mixes, where the bound of ``stars``
    counts only labels that tell nothing (German credit, 7 QIs, k = 5: 1,715 against
    235 for a release of 2,182 stars); ``details["counted_as"]`` says so. It bounds
    the stars of the releases that suppress (values and ``*`` only), the problem solved
    under that recoding, as CP-SAT's bound and proof do there."""
    started = time.perf_counter()
    if recoding == "suppression" and objective in ("stars", "ncp", "lm"):
        found = best_bound(instance, requirements, "generalized", release=release,
                           time_limit=time_limit)
        return dataclasses.replace(
            found, objective=objective, details={**found.details, "counted_as": "generalized"}
        )
    if isinstance(objective, Objective):
        if objective.secondary is not None:
            return None
        return lower_bound(instance, requirements, objective)

    def left() -> float | None:
        # No floor: the bounds stay valid when their time runs out (records left count 0).
        return None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - started))

    def per_record(seconds, ascent=True):
        # The ascent takes whatever time is left, so only a bound with a time limit runs it.
        return lower_bound(instance, requirements, objective, release=release, time_limit=seconds,
                           ascent=ascent and seconds is not None)

    found = None
    if any(isinstance(r, LDiversity) for r in requirements):
        found = per_record(None if time_limit is None else time_limit / 2)
    lp, why = None, None
    try:
        share = left() if found is not None or time_limit is None else LP_BOUND_SHARE * time_limit
        lp = lp_bound(instance, requirements, objective, release=release, time_limit=share)
    except MemoryLimitError as exc:
        why = f"not computed: {exc}"
    if found is None:
        rest = left()
        if lp is not None and rest == 0:
            # With no time the per-record bound bounds no record (0) after a set-up that
            # only passes the limit (0.03 s on UCI Adult): the LP's bound is the larger.
            return lp
        # The ascent's multipliers are a point of the LP's dual: below a solved LP.
        found = per_record(rest, ascent=lp is None or not lp.complete)
    if why is not None:
        return dataclasses.replace(found, details={**found.details, "lp_bound": why})
    if lp is not None and lp.value >= found.value:
        return lp
    return found


def check_search_memory(workers: int, searches: int, caller: str) -> None:
    """Raise MemoryLimitError when the search's models would need more than the memory
    limit: one neighbourhood model of at most
    :data:`~fairanon.solver.lns.search.NEIGHBOURHOOD_MAX_VARS` assignment variables
    (:func:`~fairanon.solver.local_recoding.memory.model_memory`) per search process,
    each solved by `workers` workers."""
    check_memory(
        searches * model_memory(NEIGHBOURHOOD_MAX_VARS, workers),
        f"The large-neighbourhood search's models ({searches} at once, up to "
        f"{NEIGHBOURHOOD_MAX_VARS:,} assignment variables each, solved by {workers} workers)",
        ("use searches=1 or " if searches > 1 else "use ")
        + "fewer CP-SAT workers (num_workers), or a heuristic (method='mondrian')",
        caller=caller,
    )


def search_processes(inc: Incumbent, requirements, workers: int, searches: int) -> tuple[int, str | None]:
    """The processes the search of `inc` runs in (:func:`fairanon.solver.lns.processes`),
    one when the memory limit allows one but not that many, and why it is one then (one
    process is checked before any work, by :func:`check_search_memory`)."""
    parts = processes(inc, requirements, searches)
    if parts == 1:
        return 1, None
    try:
        check_search_memory(workers, parts, "improve")
    except MemoryLimitError as exc:
        return 1, (
            f"searched in one process: {parts} would need about {format_bytes(exc.need)} of "
            f"memory, more than the limit of {format_bytes(exc.limit)}"
        )
    return parts, None


def _check_search(instance, caller, max_rounds, size, max_size, around, move_time, whole_types,
                  strategies, max_range_values, guides=()) -> None:
    """Refuse the search's options out of their ranges (before any heuristic runs)."""
    if max_rounds is not None:
        check_int(max_rounds, "max_rounds", caller, low=0)
    if size is not None:
        check_int(size, "size", caller, low=1)
    check_int(max_size, "max_size", caller, low=1)
    check_int(around, "around", caller, low=0)
    check_int(whole_types, "whole_types", caller, low=0)
    check_int(max_range_values, "max_range_values", caller, low=1)
    if move_time is not None and (
        isinstance(move_time, bool) or not isinstance(move_time, (int, float))
        or not 0 < move_time < float("inf")
    ):
        raise InvalidParameterError(
            f"The 'move_time' parameter of {caller} must be a positive number (CP-SAT's "
            f"deterministic time per re-solve) or None. Got {move_time!r} instead."
        )
    if isinstance(strategies, str) or not isinstance(strategies, Sequence) or not strategies:
        raise InvalidParameterError(
            f"The 'strategies' parameter of {caller} must be a non-empty list of names from "
            f"{list(STRATEGIES)}. Got {strategies!r} instead."
        )
    for name in strategies:
        check_option(name, "strategies", caller, STRATEGIES)
    for guide in guides:
        if not isinstance(guide, Release):
            raise InvalidParameterError(
                f"The 'guides' parameter of {caller} must be releases of the instance. "
                f"Got {type(guide).__name__} instead."
            )
        check_hint(instance, guide, "guides", caller)


def _starts(start, caller: str) -> list | None:
    """`start` as a list of releases or of heuristics' names (None: the heuristics')."""
    if start is None:
        return None
    items = [start] if isinstance(start, (Release, str)) else start
    names = [h[0] for h in HEURISTICS]
    kinds = ({type(s) for s in items} if isinstance(items, Sequence) else {None})
    if not (kinds <= {Release} or kinds <= {str}):
        raise InvalidParameterError(
            f"The 'start' parameter of {caller} must be a release, a heuristic's name from "
            f"{names}, or a list of releases or of names (not both; empty: no heuristic). "
            f"Got {start!r} instead."
        )
    for item in items:
        if isinstance(item, str):
            check_option(item, "start", caller, names)
    return list(items)


def _outside_suppression(registries: list[Registry], labels: np.ndarray) -> str | None:
    """A cell of `labels` (registry ids per record) that generalizes a value, as text
    for messages, and how many records have one; None when every cell is a value or
    ``*``."""
    outside = np.flatnonzero(~suppression_only(registries, labels))
    if not len(outside):
        return None
    row = labels[outside[0]]
    name, text = next(
        (reg.name, reg.texts[j]) for reg, j in zip(registries, row.tolist())
        if j >= reg.m and not reg.star[j]
    )
    return f"{len(outside)} records have a generalized value, such as {text!r} in '{name}'"


def improve(
    instance: Instance,
    requirements: Sequence[Requirement],
    release: Release,
    *,
    seed=None,
    time_limit: float | None = None,
    objective=None,
    stretch_k: int | None = None,
    recoding: str = "generalization",
    num_workers: int = 1,
    max_rounds: int | None = None,
    size: int | None = None,
    max_size: int = 1000,
    around: int = 50,
    move_time: float | None = None,
    whole_types: int = 300,
    strategies: Sequence[str] = STRATEGIES,
    max_range_values: int = 16,
    searches: int = SEARCHES,
    guides: Sequence[Release] = (),
) -> Release:
    """Improve a valid release by large-neighbourhood search (no bound).

    Returns the improved release, verified, with method ``lns``: status FEASIBLE, or
    OPTIMAL when the whole table was re-solved to optimality; ``provenance["search"]``
    says where it started, how many rounds ran and what each improved. The parameters
    are those of :func:`lns`; `guides` are other releases of the table whose classes
    the search may take (:func:`fairanon.solver.lns.search`; they need not be valid;
    with ``recoding="suppression"`` only their classes of values and ``*`` are offered).
    Two search processes run only on a table of at least 2 x 200 classes, and then one
    when the memory limit does not allow two (``provenance["search"]["memory"]`` says
    so). When the time limit passes while the start's (or a guide's) labels are read,
    or the search's deadline while the start is set up, before any search, the start
    itself is returned (FEASIBLE, its objective, no bound, verified once, without
    metrics), ``provenance["search"]["stopped"]`` saying so.

    Raises
    ------
    InvalidParameterError
        When `release` fails the verifier, or generalizes a value under
        ``recoding="suppression"`` (which releases values and ``*`` only).
    MemoryLimitError
        When not even one search process fits in the memory limit.
    """
    started = time.perf_counter()
    requirements, objective = _check(
        instance, requirements, objective, recoding, "improve", stretch_k
    )
    report = verify(instance, release, requirements, metrics=False)
    if not report.passed:
        raise InvalidParameterError(
            "improve needs a release that meets the requirements; the verifier rejects this one."
        )
    # Its objective is read as the search is set up (computed when that stops first).
    checked = CheckedStart(report.to_dict(), None, 0.0)
    return _search_from(
        instance, requirements, objective, release, checked, started, seed=seed,
        time_limit=time_limit, recoding=recoding, num_workers=num_workers,
        max_rounds=max_rounds, size=size, max_size=max_size, around=around,
        move_time=move_time, whole_types=whole_types, strategies=strategies,
        max_range_values=max_range_values, searches=searches, guides=guides,
    )


def _search_from(
    instance: Instance,
    requirements: list[Requirement],
    objective,
    release: Release,
    checked: CheckedStart,
    started: float,
    *,
    seed,
    time_limit: float | None,
    recoding: str,
    num_workers: int,
    max_rounds: int | None,
    size: int | None,
    max_size: int,
    around: int,
    move_time: float | None,
    whole_types: int,
    strategies: Sequence[str],
    max_range_values: int,
    searches: int,
    guides: Sequence[Release],
) -> Release:
    """:func:`improve` from `release`, which the verifier has passed (`checked`: its
    report, its objective when known, the seconds the check took), under checked
    `requirements` and `objective`, its time counted from `started`. :func:`lns` calls
    it with the start it chose and verified, which is not verified again."""
    limit = _cpsat.check_time_limit(time_limit, "improve")
    workers = check_int(num_workers, "num_workers", "improve", low=1)
    searches = check_int(searches, "searches", "improve", low=1)
    check_search_memory(workers, 1, "improve")
    _check_search(instance, "improve", max_rounds, size, max_size, around, move_time,
                  whole_types, strategies, max_range_values, guides)
    params = {
        "objective": str(objective),
        "recoding": recoding,
        "time_limit": limit,
        "num_workers": workers,
        "searches": searches,
        "max_rounds": max_rounds,
        "move_time": move_time,
        "max_size": max_size,
        "around": around,
        "strategies": list(strategies),
    }
    # Registering the values' labels and reading the start's and the guides' labels stop
    # at the time limit (the start is then the release); under suppression a start not
    # known to be in suppression form is checked whatever the time.
    form_unknown = recoding == "suppression" and not checked.values_or_stars
    setup_deadline = None if limit is None or form_unknown else started + limit
    try:
        registries = [
            Registry(instance, name, deadline=setup_deadline)
            for name in instance.schema.generalizable
        ]
        inc = Incumbent.from_release(
            instance, requirements, registries, release, objective, deadline=setup_deadline
        )
        guide_labels = [release_labels(instance, registries, g, setup_deadline) for g in guides]
    except BuildStopped as exc:
        why = f"the time limit passed while {exc.stage}, before the search started"
        return _unsearched(instance, requirements, release, objective, params, seed, started, why,
                           checked, guides)
    checked_s = time.perf_counter() - started + checked.seconds  # the start checked and set up
    if form_unknown:
        found = _outside_suppression(registries, inc.labels)
        if found is not None:
            raise InvalidParameterError(
                f"improve with recoding='suppression' needs a release of values and '*'; in this "
                f"one {found}. Put it in suppression form (each class's common value or '*') or "
                "use recoding='generalization'."
            )
    parts, memory_note = search_processes(inc, requirements, workers, searches)
    start_value = inc.value
    deadline = None if limit is None else started + limit
    if deadline is None and max_rounds is None:
        deadline = started + DEFAULT_SECONDS
    elif deadline is not None:
        # The release is then built and verified, with its metrics: about what checking
        # and setting up the start took, FINISH_FACTOR times over.
        deadline -= FINISH_FACTOR * checked_s
    if deadline is not None and time.perf_counter() >= deadline:
        # No round would run, and building and verifying a release would only pass the
        # limit: the start, already verified, is the release.
        why = "the time limit passed while the start was set up, before the search started"
        return _unsearched(instance, requirements, release, objective, params, seed, started, why,
                           dataclasses.replace(checked, value=start_value), guides)
    # A table the search re-solves whole first is proven there, mostly in a fraction of a
    # second; the local search first would take MOVES_SHARE of the time before it
    # (German credit on 2 QIs, k = 5, 120 s: 86 s to OPTIMAL, the re-solve 0.07 s of it).
    moved = None if re_solved_whole(inc, whole_types) else _moves_first(
        instance, requirements, objective, recoding, inc, seed, deadline, max_rounds)
    if moved is not None and moved[0] is not None:
        inc = Incumbent.from_release(instance, requirements, registries, moved[0], objective)
        parts, memory_note = search_processes(inc, requirements, workers, searches)
    result = search(
        inc,
        requirements,
        seed=_cpsat.random_seed(seed),
        deadline=deadline,
        max_rounds=max_rounds,
        recoding=recoding,
        num_workers=workers,
        size=size,
        max_size=max_size,
        around=around,
        move_time=move_time,
        whole_types=whole_types,
        max_range_values=max_range_values,
        strategies=strategies,
        searches=parts,
        guides=guide_labels,
    )
    stats = {
        "start": release.method,
        "guides": [g.method for g in guides],
        "start_objective": start_value,
        "objective": inc.value,
        "rounds": result.rounds,
        "improvements": result.improvements,
        "proven": result.proven,
        "history": [(round(t, 3), v) for t, v in result.history],
        "strategies": result.strategies,
        "size": result.size,
        "refused": result.refused,
        "parts": result.parts,
        "search_s": time.perf_counter() - started,
    }
    if memory_note is not None:
        stats["memory"] = memory_note
    if moved is not None:
        stats["moves"] = moved[1]
    out = Release(
        table=inc.table(),
        groups=inc.groups(),
        status=Status.OPTIMAL if result.proven else Status.FEASIBLE,
        objective=inc.value,
        bound=inc.value if result.proven else None,
        provenance=provenance(
            "lns",
            params,
            requirements,
            seed,
            started,
            objective_name=str(objective),
            search=stats,
            gap=0.0 if result.proven else None,
        ),
    )
    if isinstance(objective, Objective):
        out = out.with_provenance(privacy=privacy_summary(out.groups, objective))
    report = verify(instance, out, requirements)
    if not report.passed:
        failed = "; ".join(f"{c.name}: {c.detail or c.achieved}" for c in report.failures)
        raise SolverError(
            f"The verifier rejected a large-neighbourhood search release ({failed}); this is a "
            "bug, please report it."
        )
    return out.with_provenance(verification=report.to_dict())


#: The share of the search's time that the local search over record moves, swaps and
#: class splits (:func:`fairanon.heuristics.moves.local_search`) takes before the
#: re-solves, under k-anonymity alone with objective "ncp" or "lm", generalization, a
#: deadline and no `max_rounds` (a search counted in rounds stays the re-solves alone),
#: on a table the search does not re-solve whole first (more than `whole_types` distinct
#: records: that re-solve mostly proves the optimum at once).
#: lns, 60 s, 2 cores shared (benchmarks/lns_moves.py, seeds 0-2): German credit, 7 QIs,
#: GCP 0.2071-0.2110 with the re-solves alone, 0.1948-0.1984 with a share of 0.5,
#: 0.1937-0.1963 with 0.75 (k = 5); 0.3104-0.3150, 0.3014-0.3068, 0.3021-0.3065 (k = 10);
#: Adult, k = 5, LM_avg 0.0392, 0.0363, 0.0358 (seed 0; with the local search's candidates
#: cut to nearby classes on large tables, 0.0402 with the re-solves alone, 0.0354 with 0.75).
#: With the local search as it is now (seeds 0 and 1, shares 0.75 / 0.9 / 0.95 / 1.0):
#: German credit k = 5, GCP 0.1905 / 0.1905 / 0.1908 / 0.1916 (seed 0), 0.1903 / 0.1897
#: (seed 1); k = 10, 0.2958 / 0.2957 / 0.2960 / 0.2965, 0.2940 / 0.2945; Adult 0.0339 /
#: 0.0337 / 0.0336 / 0.0336, 0.0338 / 0.0337: the re-solves still pay on German credit.
MOVES_SHARE = 0.9


def _moves_apply(requirements, objective, recoding: str, max_rounds) -> bool:
    """Whether a search with a deadline starts with the local search (:data:`MOVES_SHARE`):
    k-anonymity alone, a loss it prices, generalization, not counted in rounds."""
    return (MOVES_SHARE > 0 and max_rounds is None and recoding == "generalization"
            and isinstance(objective, str) and objective in MOVE_OBJECTIVES
            and all(isinstance(r, KAnonymity) for r in requirements))


def _moves_first(instance, requirements, objective, recoding, inc: Incumbent, seed, deadline,
                 max_rounds) -> tuple[Release | None, dict] | None:
    """The release of the local search from `inc`'s classes, in :data:`MOVES_SHARE` of
    the time to `deadline`, when it applies (else None), and what it did; the release is
    None when it loses no less than `inc` (exactly, as the verifier counts)."""
    if deadline is None or not _moves_apply(requirements, objective, recoding, max_rounds):
        return None
    began = time.perf_counter()
    try:
        found = local_search(instance, requirements, inc.groups(), objective=objective,
                             seed=_cpsat.random_seed(seed),
                             deadline=began + MOVES_SHARE * max(0.0, deadline - began))
    except (IncompatibleRequirementError, MemoryLimitError) as exc:
        return None, {"skipped": str(exc)}
    if found.stopped == "set-up":
        return None, {"skipped": "the time limit passed while the local search was set up",
                      "seconds": time.perf_counter() - began}
    stats = {"seconds": time.perf_counter() - began, "kicks": found.kicks, "accepted": found.accepted,
             "kept": found.kept,
             "changes": found.changes, "stopped": found.stopped}
    if not found.value < found.start_value:
        return None, stats
    release = Release(generalize_partition(instance, found.groups), found.groups)
    value = objective_value(instance, release, objective)
    stats["objective"] = value
    return (release if value < inc.value else None), stats


def _unsearched(instance, requirements, release: Release, objective, params, seed, started, why,
                checked: CheckedStart, guides: Sequence[Release]) -> Release:
    """The start itself as :func:`improve`'s release (FEASIBLE, no bound), when the time
    limit passed before the search could start; ``provenance["search"]["stopped"]``
    says why, and its other keys are those of a search that ran no round. Its
    verification is the start's (`checked`: without metrics for a heuristic's start, a
    given one or every cell ``*``, with them for the whole table re-solved): the same
    table and classes, not verified again past the time limit, under this release's
    method and status. Its objective is the one found when the start was checked or
    set up, else computed: never the release's own ``provenance["start_objective"]``,
    which may be under another objective or table."""
    value = checked.value
    if value is None:
        value = objective_value(instance, release, objective)
    stats = {"start": release.method, "guides": [g.method for g in guides], "start_objective": value,
             "objective": value, "rounds": 0, "improvements": 0, "proven": False, "history": [],
             "strategies": {}, "size": 0, "refused": 0, "parts": 0, "stopped": why,
             "search_s": time.perf_counter() - started}
    out = Release(
        table=release.table,
        groups=release.groups,
        status=Status.FEASIBLE,
        objective=value,
        provenance=provenance("lns", params, requirements, seed, started,
                              objective_name=str(objective), search=stats, gap=None),
    )
    # What the verifier says of this release: the start's report names the start.
    out = out.with_provenance(verification={**checked.verification, "method": out.method,
                                            "status": str(out.status)})
    if isinstance(objective, Objective):
        out = out.with_provenance(privacy=privacy_summary(out.groups, objective))
    return out


def lns(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    seed=None,
    time_limit: float | None = None,
    objective=None,
    stretch_k: int | None = None,
    recoding: str = "generalization",
    start=None,
    bound: bool = True,
    num_workers: int = 1,
    max_rounds: int | None = None,
    size: int | None = None,
    max_size: int = 1000,
    around: int = 50,
    move_time: float | None = None,
    whole_types: int = 300,
    strategies: Sequence[str] = STRATEGIES,
    max_range_values: int = 16,
    searches: int = SEARCHES,
) -> Release:
    """Near-optimal local recoding at scale, with a certified gap: the best heuristic
    release improved by large-neighbourhood search over the exact model [1]_ [2]_.

    Parameters
    ----------
    instance, seed
        As in :func:`fairanon.anonymize`; the same seed, worker count and number of rounds
        give the same release.
    requirements : sequence of Requirement
        What ``cpsat`` takes: KAnonymity, LDiversity, TCloseness, DiversityConstraint,
        AlphaProtection. Per-class requirements hold in every re-solved neighbourhood and
        on the classes its records join; diversity constraints and alpha-protection hold
        through the fixed contribution of the rest of the table.
    time_limit : float, optional
        Seconds for the whole run (default 60): the starting heuristics take at most
        40 %, checking their releases included (the first release is checked past
        that share, but not past the whole limit: it is then not a start;
        ``provenance["starts"]`` says which heuristic ran past its share or was
        skipped; while none has given a start they run to the whole limit less the
        finishing 5 %), the bound 15 % (when `bound`), the search the rest; the best
        release so far is returned when it runs out. The start is verified once. With
        `max_rounds` and no time limit the run is counted, not timed, and may take
        longer than 60 s on large tables (see `max_rounds`).
    objective : str or pair of str, optional
        Default "ncp" ("stars" with suppression); a loss objective ("ncp", "lm",
        "stars", "generalized", "discernibility"), a privacy objective ("privacy_log",
        "privacy_stretch") or a lexicographic pair of one of each, most important
        first (:mod:`fairanon.models.objectives`). Moves are kept only when they
        improve the exact value; a lexicographic objective has no bound.
    stretch_k : int, optional
        k' of ``privacy_stretch`` (above the k of the requirements).
    recoding : {"generalization", "suppression"}, default="generalization"
    start : str, sequence of str, Release or sequence of Release, optional
        The starting release, or the heuristics to take the best of (default: every
        heuristic of :data:`~fairanon.methods.starts.HEURISTICS` that can enforce the
        requirements and fits the table). Of several releases (such as a portfolio's),
        the one that loses least among those that pass the verifier and fit the recoding
        (values and ``*`` only, with suppression) starts the search, and the others
        guide it: the classes they give a neighbourhood's records are candidates of its
        re-solve. ``provenance["starts"]`` says why a release did not start it. An
        empty list runs no heuristic: the search starts from every cell ``*``, or from
        the whole table re-solved when it is small.
    bound : bool, default=True
        Compute a lower bound on the objective (``Release.bound``, ``provenance["gap"]``)
        (:func:`best_bound`). When the search runs in one process and this one has two
        cores, the bound runs beside it in a forked process for the whole search time
        (within the memory limit less the search's model); when the search's re-solves
        run in several processes but it starts with the local search (k-anonymity with
        NCP or LM, :data:`MOVES_SHARE`), which runs in this one, the bound runs beside
        the local search on the second core and then beside the re-solves' processes,
        for the whole search time too (UCI Adult, k = 5, LM, 60 s: the per-record bound
        then has about 50 s, where it had 33 s beside the local search alone, and 11 s,
        the ``BOUND_SHARE`` after the search, before that).
        Beside the search when that is at least
        ``BESIDE_MIN_SECONDS``, else after it in
        ``BOUND_SHARE`` of the time; if that process fails, the bound is computed after
        the search and ``provenance["lower_bound"]["beside_search"]`` says why.
    num_workers : int, default=1
        CP-SAT workers per re-solve.
    max_rounds : int, optional
        Stop after this many re-solves. Without a time limit the run is counted, not
        timed: the starts, the whole table's re-solve (when no heuristic gave a start),
        every cell '*' as a start and the search then read no clock, so that the release
        depends on the seed, workers and rounds alone (a quadratic heuristic starts when
        expected to take at most 12 s). The starts run to their end, so such a run may
        take longer than the default 60 s on large tables; the bound has an allotment
        of its own, ``BOUND_SHARE`` of the default 60 s (9 s), beside the search or
        after it.
    size, max_size : int
        Records per neighbourhood at the start (default 4k, at least 24) and at most.
    around : int, default=50
        Classes next to a neighbourhood that its records may join.
    move_time : float, optional
        CP-SAT deterministic time per re-solve, so that a re-solve stops at the same
        point on any machine load (default 0.2, about half a second on a 2-core machine;
        0.05 above 10,000 records).
    whole_types : int, default=300
        Tables with at most this many distinct records (quasi-identifiers and protected
        value) are first re-solved whole, in at most half the time (which proves the
        optimum when it finishes); without a heuristic start, in all the search's time
        (which also proves that no release exists).
    strategies : sequence of str
        Neighbourhood kinds (:data:`fairanon.solver.lns.STRATEGIES`).
    max_range_values : int, default=16
        Ranges over at most this many values of a neighbourhood; more values get the
        ranges between evenly spaced ones and the ends of the labels in use.
    searches : int, default=2
        Parts of the table searched at once, each in its own process (both cores of a
        2-core machine), the cut between them redrawn every epoch
        (:func:`fairanon.solver.lns.search`); used under per-class union-monotone
        requirements and a per-cell objective on tables of at least 200 classes per
        part, else one process; one too when the memory limit allows one neighbourhood
        model but not that many. The release depends on the seed and the number of
        processes searched, not on the machine -- except through that memory rule:
        the default memory limit is a share of the memory available, so give
        ``memory_limit`` explicitly (or ``searches=1``) for a release reproducible on
        any machine (``provenance["search"]["parts"]`` says how many ran).

    Raises
    ------
    MemoryLimitError
        When the memory limit does not allow one neighbourhood model, before any work.

    Returns
    -------
    Release
        FEASIBLE (OPTIMAL when the whole table was re-solved to optimality, or when
        its objective equals the lower bound, ``provenance["lower_bound"]["proves"]``
        then saying so), verified,
        with ``objective`` (exact), ``bound`` and ``provenance["gap"]`` (no bound when
        the search left no time for one: ``provenance["lower_bound"]["reason"]`` says
        so), the starting heuristic and what every heuristic gave
        (``provenance["starts"]``), and the search's rounds, improvements and history
        (``provenance["search"]["stopped"]`` when the limit passed before the search
        started: the start is then the release). When no heuristic gives a valid
        release to start from, a table of at most `whole_types` distinct records is
        re-solved whole by the exact model: OPTIMAL when its labels are every label a
        release may use (:func:`fairanon.solver.lns.every_label`), else its release
        starts the search (``provenance["starts"]`` says so); INFEASIBLE with the reason
        and ``provenance["conflict"]`` naming a minimal set of conflicting requirements
        (as ``cpsat``), under the same condition on its labels; UNKNOWN, with the reason,
        when that does not answer in the time or proves infeasibility over its candidate
        labels only. A larger table, or one for whose attribute the exact model has no
        labels (more than `max_range_values` values and no hierarchy or nested
        intervals), starts the search from every cell ``*`` instead, when that meets
        the requirements, else the release is UNKNOWN and its reason says what to
        change; UNKNOWN too when no time is left to try either.

    References
    ----------
    .. [1] P. Shaw. Using constraint programming and local search methods to solve
       vehicle routing problems. CP 1998 (large-neighbourhood search).
    .. [2] S. Ropke, D. Pisinger. An adaptive large neighborhood search heuristic for the
       pickup and delivery problem with time windows. Transportation Science 40(4), 2006.

    Examples
    --------
    >>> inst = fa.load("dewri_t1")
    >>> reqs = [fa.KAnonymity(3)]
    >>> rel = lns(inst, reqs, seed=0, time_limit=10)
    >>> rel.status, fa.verify(inst, rel, reqs).passed, rel.objective == rel.bound
    (<Status.OPTIMAL: 'OPTIMAL'>, True, True)
    """
    started = time.perf_counter()
    objective_arg = objective
    requirements, objective = _check(instance, requirements, objective, recoding, "lns", stretch_k)
    limit = _cpsat.check_time_limit(time_limit, "lns")
    check_int(searches, "searches", "lns", low=1)
    _check_search(instance, "lns", max_rounds, size, max_size, around, move_time, whole_types,
                  strategies, max_range_values)
    check_bool(bound, "bound", "lns")
    start = _starts(start, "lns")
    # One process at least; whether there will be more is known from the start release.
    check_search_memory(check_int(num_workers, "num_workers", "lns", low=1), 1, "lns")
    budget = DEFAULT_SECONDS if limit is None else limit
    deadline = started + budget
    # Counted rounds without a time limit read no clock before the bound: the starts
    # and the search run whole, so that the same seed, workers and rounds give the same
    # release whatever the machine's load (the starts had wall-clock shares of
    # DEFAULT_SECONDS, and lattice-local's rounds read them).
    counted = limit is None and max_rounds is not None
    tried: list[dict] = []
    guides: list[Release] = []
    given = bool(start) and isinstance(start[0], Release)
    if given:
        first, guides, tried, checked = _given_start(instance, requirements, objective, recoding,
                                                     list(start), None if counted else deadline)
    else:
        methods = start
        first, tried, checked = heuristic_start(
            instance,
            requirements,
            objective,
            seed=seed,
            recoding=recoding,
            methods=methods,
            deadline=None if counted else started + START_SHARE * budget,
            # lns's own limit less its finishing share: without a start in hand the
            # heuristics' time runs to it, not to the starts' share.
            limit=None if counted else deadline - FINISH_SHARE * budget,
            # Without a deadline, the quadratic heuristics expected to fit in half the
            # starts' share (12 s; on UCI Adult, k = 5, neither OKA, 20 s expected, 33 s
            # wall, nor k-member: the others took 11 s wall, lattice-local 8.7 s of it).
            quadratic_seconds=START_SHARE * budget / 2,
        )
    search_end = deadline - (BOUND_SHARE * budget if bound else 0.0) - FINISH_SHARE * budget
    params = {"objective": str(objective), "recoding": recoding, "time_limit": limit}
    if first is None:
        reason = (
            "no release given" if given else "no heuristic gave a release"
        ) + " meeting the requirements to start from: " + "; ".join(
            f"{t['method']}: {t.get('skipped') or t.get('status')}" for t in tried
        )
        if not counted and time.perf_counter() >= search_end:
            # Another start (the whole table re-solved, every cell '*' checked) would
            # only pass the limit.
            reason += "; no time was left to try another start"
            return _empty(instance, requirements, seed, started, params, tried, reason)
        distinct = distinct_records(instance)
        small = distinct <= whole_types
        unmodelled = _unmodelled(instance, recoding, max_range_values) if small else None
        if not small or unmodelled is not None:
            # The whole table is not re-solved: too large, or the exact model has no
            # labels for an attribute (the search has its own: ranges between evenly
            # spaced values). The search starts from every cell '*' when that meets
            # the requirements.
            if unmodelled is None:
                why = (f"the whole table is not re-solved: it has {distinct:,} distinct records, "
                       f"more than whole_types={whole_types}")
                remedy = "raise whole_types"
            else:
                why = ("the whole table is not re-solved: max_range_values="
                       f"{max_range_values} of lns is smaller than {unmodelled[0]}")
                remedy = f"raise max_range_values, {unmodelled[1]}"
            first, checked, reason = _suppressed_start(instance, requirements, objective, seed,
                                                       started, tried, reason, why, remedy,
                                                       None if counted else deadline)
            if first is None:
                return _empty(instance, requirements, seed, started, params, tried, reason)
        else:
            # A small table is re-solved whole even without a start: the exact model
            # finds a release the heuristics missed, or proves that none exists.
            whole = local_recoding(
                instance,
                requirements,
                seed=seed,
                time_limit=None if counted else max(0.01, search_end - time.perf_counter()),
                # Counted in rounds, it ends as the start's whole re-solve does.
                deterministic_limit=(WHOLE_MOVE_TIMES * (move_time or default_move_time(
                    instance.n_rows)) if counted else None),
                recoding=recoding,
                objective=objective_arg,
                stretch_k=stretch_k,
                num_workers=num_workers,
                hint=None,
                max_range_values=max_range_values,
            )
            if whole.status in (Status.OPTIMAL, Status.INFEASIBLE):
                try:
                    registries = [Registry(instance, name, deadline=None if counted else deadline)
                                  for name in instance.schema.generalizable]
                    every = every_label(registries, objective, recoding, max_range_values)
                    only = ("over the model's candidate labels only (an attribute has more "
                            f"than max_range_values={max_range_values} values)")
                except BuildStopped:
                    every = False  # not known: neither the optimum nor infeasibility is claimed
                    only = ("over the model's candidate labels only (the time limit passed "
                            "before they were compared with every label a release may use)")
                if every:
                    return _whole_release(whole, params, requirements, seed, started, tried)
                # Proven over the model's candidate labels only (an attribute with more than
                # max_range_values values has tree nodes or nested intervals, not every
                # range): a release with other ranges may cost less, or meet requirements
                # that are not kept by merging classes (diversity constraints,
                # α-protection), so neither the optimum nor infeasibility is claimed; an
                # optimum starts the search and the bound is computed as for any start.
                if whole.status == Status.INFEASIBLE:
                    reason += f"; the whole table re-solved: no release {only}"
                    return _empty(instance, requirements, seed, started, params, tried, reason)
                tried.append({
                    "method": "the whole table re-solved",
                    "objective": value_for_display(whole.objective),
                    "status": f"OPTIMAL {only}",
                })
            if whole.status not in (Status.OPTIMAL, Status.FEASIBLE):
                reason += f"; the whole table re-solved: {whole.reason or whole.status}"
                return _empty(instance, requirements, seed, started, params, tried, reason)
            # The exact model's release is verified (with its metrics) before it is returned.
            first = whole
            verification = whole.provenance["verification"]
            checked = CheckedStart(verification, whole.objective, verification["elapsed_s"])
    # Under suppression every start above releases values and '*' only: heuristics' in
    # suppression form, given ones checked, every cell '*', the exact model's.
    checked = dataclasses.replace(checked, values_or_stars=recoding == "suppression")
    moves = _moves_apply(requirements, objective, recoding, max_rounds)
    apart, whole = (_bound_apart(first, requirements, objective, searches, num_workers, moves)
                    if bound else (None, True))
    # The bound beside the search has until the search ends, less a tenth kept for its
    # last LP round and its answer; beside the local search too, and then beside the
    # re-solves' processes: on UCI Adult (k = 5, LM, 60 s) the per-record bound needs
    # about 50 s, and the re-solves, which improve the release by 0.2 % there, lose a
    # third of their CPU for the rest.
    beside_s = 0.9 * max(0.0, deadline - FINISH_SHARE * budget - time.perf_counter())
    if counted:
        # A run counted in rounds is not timed: the bound has an allotment of its own,
        # BOUND_SHARE of the default, beside the search or after it.
        beside_s = 0.9 * BOUND_SHARE * budget
    if beside_s < BESIDE_MIN_SECONDS:
        apart = None
    beside = None
    if apart is not None:
        # The search takes the bound's share too; the bound runs beside it until then.
        search_end = deadline - FINISH_SHARE * budget
        beside = _BoundProcess(instance, requirements, objective, first, beside_s, apart,
                               recoding)
        beside_began = time.perf_counter()
    try:
        release = _search_from(
            instance,
            requirements,
            objective,
            first,
            checked,
            time.perf_counter(),
            seed=seed,
            time_limit=None if counted else max(0.01, search_end - time.perf_counter()),
            recoding=recoding,
            num_workers=num_workers,
            max_rounds=max_rounds,
            size=size,
            max_size=max_size,
            around=around,
            move_time=move_time,
            whole_types=whole_types,
            strategies=strategies,
            max_range_values=max_range_values,
            searches=1 if beside is not None and whole else searches,
            guides=guides,
        )
    except BaseException:  # Ctrl-C or an error: the bound's process is not waited for
        if beside is not None:
            beside.stop()
        raise
    low = None
    if release.status == Status.OPTIMAL:
        if beside is not None:
            beside.stop()
        low = release.objective
        bound_info = {"method": "whole table solved", "value": value_for_display(low)}
    elif bound:
        found, why = None, None
        if counted and beside is not None:
            # Its own allotment, however long the search took.
            found, why = beside.result(beside_began + BOUND_SHARE * budget - time.perf_counter())
        elif beside is not None:
            found, why = beside.result(deadline - FINISH_SHARE * budget / 2 - time.perf_counter())
        if counted:
            # After the search, not what is left of DEFAULT_SECONDS: the starts run to
            # their end and often used it all (200,000 records, 7 QIs: 155 s, no bound).
            deadline = time.perf_counter() + BOUND_SHARE * budget
        left = deadline - time.perf_counter()
        # A lexicographic objective has no bound, whatever the time (best_bound: None).
        exists = not (isinstance(objective, Objective) and objective.secondary is not None)
        # With (nearly) no time left the bound would only pass the limit: its set-up
        # alone takes a quarter of a second on UCI Adult, for a bound of 0.
        if found is None and exists and left >= BOUND_MIN_SECONDS:
            found = best_bound(instance, requirements, objective, release=release, time_limit=left,
                               recoding=recoding)
        if found is not None and why is not None:
            found = dataclasses.replace(found, details={**found.details, "beside_search": why})
        if found is None:
            reason = (f"no bound for {objective}" if not exists or left >= BOUND_MIN_SECONDS
                      else "no time was left for a bound")
            low, bound_info = None, {"method": "none", "reason": reason}
            if why is not None:
                bound_info["beside_search"] = why
        else:
            low = found.value
            bound_info = found.to_dict()
    else:
        bound_info = None
    out = dataclasses.replace(release, bound=low)
    if low is not None and out.status == Status.FEASIBLE and release.objective == low:
        # The release meets a lower bound on every release: none loses less.
        out = dataclasses.replace(out, status=Status.OPTIMAL)
        bound_info = {**bound_info, "proves": "the release's objective equals the bound"}
    return out.with_provenance(
        gap=relative_gap(release.objective, low),
        lower_bound=bound_info,
        starts=tried,
        elapsed_s=time.perf_counter() - started,
    )


def _bound_apart(first: Release, requirements, objective, searches: int, workers: int,
                 moves: bool = False) -> tuple[Limit | None, bool]:
    """Whether the lower bound runs in a process of its own while the search runs in
    this one: with a loss objective and at least two cores for this process, when the
    search would run in one process anyway
    (:func:`fairanon.solver.lns.processes_for`, counted on the start's classes) -- for
    the whole search -- or, when it would not but starts with the local search (`moves`,
    which runs in this process alone), beside the local search and then beside the
    re-solves' processes; and when the memory limit leaves room beside the search's
    models (one, or `searches` when the re-solves run in several processes). Returns
    the limit the bound keeps to then (the limit in force less the search's models),
    else None, and whether the search runs in one process."""
    if isinstance(objective, Objective) or not can_fork() or cores() < 2:
        return None, True
    whole = processes_for(first.n_groups, objective, requirements, searches) <= 1
    if not whole and not moves:
        return None, True
    limit = current_limit(None, "lns")
    if limit.bytes is None:
        return limit, whole
    models = 1 if whole else searches
    left = limit.bytes - models * model_memory(NEIGHBOURHOOD_MAX_VARS, workers)
    if left < BOUND_MIN_BYTES:
        return None, True
    return Limit(left, f"{limit.source}, less the search's model" + ("" if whole else "s")), whole


def _bound_child(conn, parents, instance, requirements, objective, release, seconds, limit,
                 recoding) -> None:
    """:func:`best_bound` in a forked process, its result (or error) sent to the parent;
    Ctrl-C is the parent's to handle (it ends this process). The parent's end of the
    pipe is closed here, so that sending fails when the parent has ended."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parents.close()
    try:
        with memory_limit(limit, "lns"):
            outcome = ("ok", best_bound(instance, requirements, objective, release=release,
                                        time_limit=seconds, recoding=recoding))
    except BaseException as exc:  # noqa: BLE001 -- the parent reports whatever ended the bound
        outcome = ("error", f"{type(exc).__name__}: {exc}")
    with contextlib.suppress(OSError):  # the parent has ended
        conn.send(outcome)
    conn.close()


class _BoundProcess:
    """The lower bound computed in a forked process (:func:`_bound_child`) while the
    search runs in this one: the second core of a 2-core machine, idle when the search
    runs in one process, gives the bound the whole search time instead of a share."""

    def __init__(self, instance, requirements, objective, release, seconds, limit: Limit,
                 recoding: str = "generalization"):
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_bound_child,
            args=(child, self._conn, instance, requirements, objective, release, seconds, limit,
                  recoding),
            daemon=True,
        )
        start_forked(self._process)
        child.close()

    def result(self, wait: float) -> tuple[LowerBound | None, str | None]:
        """The bound (or None and why) within `wait` seconds; the process is ended."""
        try:
            if not self._conn.poll(max(0.0, wait)):
                return None, "the bound's process did not answer in time"
            kind, value = self._conn.recv()
        except (EOFError, OSError):
            return None, "the bound's process ended without an answer"
        finally:
            self.stop()
        return (value, None) if kind == "ok" else (None, value)

    def stop(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(1.0)
        self._conn.close()


def _given_start(
    instance: Instance, requirements, objective, recoding: str, releases: list[Release],
    deadline: float | None,
) -> tuple[Release | None, list[Release], list[dict], CheckedStart | None]:
    """The release that starts the search, of those given: the least `objective` among
    those that fit `recoding` and pass the verifier (tried least first; ties in the
    order given); the others, which guide it; what each gave (its objective, and why
    it did not start the search); and what checking the one chosen found. Past
    `deadline` (``time.perf_counter``) no more release is checked (the labels read under
    suppression stop too), each left saying so."""
    registries = None
    values, tried = [], []
    for s in releases:
        try:
            check_hint(instance, s, "start", "lns")
            value = objective_value(instance, s, objective)
        except FairanonError as exc:  # a release of another table, say
            values.append(None)
            tried.append({"method": s.method, "skipped": f"{type(exc).__name__}: {exc}"})
        else:
            values.append(value)
            tried.append({"method": s.method, "objective": value_for_display(value)})
    readable = [i for i in range(len(releases)) if values[i] is not None]
    for i in sorted(readable, key=lambda i: (values[i], i)):
        if deadline is not None and time.perf_counter() >= deadline:
            tried[i]["skipped"] = "no time left to check it"
            continue
        if recoding == "suppression":
            try:
                if registries is None:
                    registries = [Registry(instance, name, deadline=deadline)
                                  for name in instance.schema.generalizable]
                found = _outside_suppression(
                    registries, release_labels(instance, registries, releases[i], deadline))
            except BuildStopped as exc:
                tried[i]["skipped"] = f"the time limit passed while {exc.stage}"
                continue
            if found is not None:
                tried[i]["skipped"] = f"recoding='suppression' releases values and '*' only; {found}"
                continue
        checked = checked_start(instance, releases[i], requirements, values[i])
        if checked is None:
            tried[i]["status"] = "not verified"
            continue
        tried[i]["status"] = str(releases[i].status)
        return releases[i], [releases[j] for j in readable if j != i], tried, checked
    return None, [releases[j] for j in readable], tried, None


def distinct_records(instance: Instance) -> int:
    """Distinct records as the whole-table re-solve counts them: quasi-identifier values
    and protected value."""
    prot = instance.schema.protected
    columns = [instance.codes(name).astype(np.float64) for name in instance.schema.generalizable]
    if prot:
        columns.append(instance.codes(prot).astype(np.float64))
    if not columns or instance.n_rows == 0:
        return min(instance.n_rows, 1)
    return len(np.unique(np.column_stack(columns), axis=0))


def _whole_release(whole: Release, params, requirements, seed, started, tried) -> Release:
    """The exact model's answer on the whole table (OPTIMAL, or INFEASIBLE with the
    conflicting requirements), as lns's release."""
    solver = {key: whole.provenance[key] for key in ("model", "solver", "conflict", "canonical", "verification")
              if key in whole.provenance}
    stats = {"start": "the whole table re-solved (no heuristic gave a start)", "rounds": 1,
             "improvements": 0, "proven": whole.status == Status.OPTIMAL, "search_s": time.perf_counter() - started}
    extra = {}
    if whole.status == Status.OPTIMAL:
        extra = {"objective_name": whole.provenance.get("objective_name"), "gap": 0.0,
                 "lower_bound": {"method": "whole table solved", "value": value_for_display(whole.objective)}}
    return dataclasses.replace(
        whole,
        bound=whole.objective if whole.status == Status.OPTIMAL else whole.bound,
        provenance=provenance("lns", params, requirements, seed, started, starts=tried, search=stats,
                              **solver, **extra),
    )


def _unmodelled(instance: Instance, recoding: str, max_range_values: int) -> tuple[str, str] | None:
    """Why the exact model of the whole table has no labels for one of the attributes
    and what gives it some (:func:`~fairanon.solver.local_recoding.labels.missing_labels`);
    None when it has labels for all."""
    for name in instance.schema.generalizable:
        active = len(np.unique(instance.codes(name)))
        missing = missing_labels(instance.schema[name], active, recoding, max_range_values)
        if missing is not None:
            return missing
    return None


def _suppressed_start(instance, requirements, objective, seed, started, tried: list[dict],
                      reason: str, why: str, remedy: str, deadline: float | None
                      ) -> tuple[Release | None, CheckedStart | None, str]:
    """The release with every cell ``*`` (one class) as the search's start, when it
    passes the verifier, recorded in `tried` with `why` it is tried, and what checking
    it found; else None and `reason` extended with what to do (`remedy`). It is not
    built nor checked when its check is expected to end past `deadline`
    (``time.perf_counter``), the rule :func:`~fairanon.methods.starts.heuristic_start`
    keeps to: None, `reason` saying so. Without a `deadline` (rounds counted, no time
    limit) it is always built and checked."""
    expected = _first_check_seconds(instance)
    if deadline is not None and time.perf_counter() + expected > deadline:
        skipped = f"checking it (about {expected:.2f} s) would pass the time limit"
        tried.append({"method": "every cell '*'", "why": why, "status": "not checked",
                      "skipped": skipped})
        return None, None, f"{reason}; {why}, and every cell '*' was not tried: {skipped}"
    star = _all_suppressed(instance, provenance("every cell '*'", {}, requirements, seed, started))
    value = objective_value(instance, star, objective)
    entry = {"method": "every cell '*'", "objective": value_for_display(value), "why": why}
    tried.append(entry)
    checked = checked_start(instance, star, requirements, value)
    if checked is not None:
        entry["status"] = str(Status.FEASIBLE)
        return star, checked, reason
    entry["status"] = "not verified"
    return None, None, (f"{reason}; {why}, and every cell '*' does not meet the requirements: "
                        f"{remedy}, or give lns a start (start=...)")


def _all_suppressed(instance: Instance, record: dict, status: Status = Status.FEASIBLE,
                    reason: str | None = None) -> Release:
    """One class, every generalizable cell ``*``."""
    groups = np.zeros(instance.n_rows, dtype=np.int64)
    table = generalize_partition(instance, groups, suppress=list(instance.schema.generalizable))
    return Release(table=table, groups=groups, status=status, reason=reason, provenance=record)


def _empty(instance, requirements, seed, started, params, tried, reason) -> Release:
    return _all_suppressed(instance, provenance("lns", params, requirements, seed, started, starts=tried),
                           Status.UNKNOWN, reason)
