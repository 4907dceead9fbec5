"""The ``fulldomain`` method: parameters, the search, the release and its explanation."""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from ..._validation import check_fraction
from ...exceptions import (
    IncompatibleRequirementError,
    InvalidParameterError,
    MemoryLimitError,
    SolverError,
)
from ...instances.hierarchy import SUPPRESSED
from ...instances.instance import Instance
from ...models.objectives import objective_value
from ...models.requirements import (
    RISK_REQUIREMENTS,
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    Requirement,
    TCloseness,
    validate_requirements,
)
from ...release import Release, Status, generalize_partition, provenance
from .. import _cpsat
from ..local_recoding.labels import OBJECTIVES, _active
from ..local_recoding.solve import _verified
from .evaluate import Evaluator, whole_table_alpha
from .frequency import Records, records, roll_up
from .lattice import OutOfTime, Space, build_space, ladders
from .master import MasterFrontier
from .memory import check_fulldomain_memory, fulldomain_memory
from .node import chosen_node, node_outcome
from .search import (
    LatticeFrontier,
    Outcome,
    best_first,
    discernibility_lower,
    lattice_levels,
    separable_costs,
)

__all__ = ["LATTICE_NODES", "SEARCHES", "fulldomain"]

#: Lattices up to this many nodes are searched with arrays over every node (16 bytes an
#: attribute, 2 a level and 32 a node, :mod:`.memory`); larger ones with the CP-SAT
#: master. On a random 10-attribute lattice of 2^20 nodes the arrays prove the optimum
#: in 75 s where the master, each of whose steps solves a growing model, has not within
#: 120 s (benchmarks/fulldomain.py shows the same on Adult).
LATTICE_NODES = 1 << 20
#: How the open nodes are held: "auto" (by lattice size), "lattice" or "master".
SEARCHES = ("auto", "lattice", "master")
#: The time kept for the release, its objective and its verification once the search
#: ends (:func:`release_reserve`): this many times the set-up's time (the lattice, the
#: records' frequency set), at most half the limit; fulldomain and lattice-local keep
#: it. UCI Adult, k = 5, LM: set-up 0.01-0.015 s CPU, fulldomain's release and its
#: verification 0.02-0.035 s (with suppression too), lattice-local's repair of the
#: blocks, release and verification 0.035-0.05 s; German credit: set-up 0.005 s, then
#: 0.01 s and 0.02 s.
FINISH_FACTOR = 3.0
_SUPPORTED = (KAnonymity, LDiversity, TCloseness, DiversityConstraint, AlphaProtection, *RISK_REQUIREMENTS)


def _check(objective, max_suppressed, search_, n: int) -> int:
    """Validate the options; the suppression limit in records."""
    if objective not in OBJECTIVES:
        raise InvalidParameterError(
            "The 'objective' parameter of fulldomain must be one of "
            f"{', '.join(map(repr, OBJECTIVES))}. "
            f"Got {objective!r} instead."
        )
    if search_ not in SEARCHES:
        raise InvalidParameterError(
            "The 'search' parameter of fulldomain must be one of "
            f"{', '.join(map(repr, SEARCHES))}. Got {search_!r} instead."
        )
    message = (
        "The 'max_suppressed' parameter of fulldomain must be a number of records (an int "
        "in [0, inf)) or a share of the records (a float or Fraction in [0, 1], e.g. 0.05). "
        f"Got {max_suppressed!r} instead."
    )
    if isinstance(max_suppressed, bool):
        raise InvalidParameterError(message)
    if isinstance(max_suppressed, numbers.Integral):
        if max_suppressed < 0:
            raise InvalidParameterError(message)
        return int(max_suppressed)
    try:
        share = check_fraction(max_suppressed, "max_suppressed", "fulldomain", low=0, high=1)
    except InvalidParameterError:
        raise InvalidParameterError(message) from None
    return math.floor(share * n)


def _exclusions(space: Space, recs: Records, requirements, limit: int) -> list[tuple[dict, int]]:
    """Level choices no feasible node makes, known before any node is checked:
    (attribute -> level, requirement index); an empty choice excludes every node.

    A diversity constraint counts at most the records whose labels read as its target
    values and, when suppressed records do not read so, at least that many minus the
    suppression limit; alpha-protection's empty itemset is the whole table."""
    out = []
    base = recs.base
    for index, target in recs.diversity_of(requirements):
        req = target.requirement
        row = base.cols[target.row]
        if not target.matches:
            count = int(row.sum())
            if not req.lower <= count <= req.upper:
                out.append(({}, index))
            continue
        if target.star_matches:
            continue
        attrs = [a for a, _ in target.matches]
        for combo in np.ndindex(*(space.attributes[a].height + 1 for a in attrs)):
            shown = np.ones(base.n, dtype=bool)
            for (a, matches), j in zip(target.matches, combo):
                attr = space.attributes[a]
                shown &= matches[j + 1][attr.codes[j + 1][base.codes[a]]]
            available = int(row[shown].sum())
            if available < req.lower or available - limit > req.upper:
                out.append((dict(zip(attrs, (int(j) for j in combo))), index))
    for index, req in enumerate(requirements):
        if isinstance(req, AlphaProtection) and not whole_table_alpha(req, recs):
            out.append(({}, index))
    return out


@dataclass
class _Problem:
    """What every search of one call shares: the lattice, the records and the limit."""

    instance: Instance
    space: Space
    recs: Records
    values: list[np.ndarray]  # each row's active value per attribute
    limit: int
    deadline: float | None
    seed: int
    search: str


def release_reserve(time_limit: float, set_up_s: float) -> float:
    """Seconds kept for the release, its objective and its verification: FINISH_FACTOR
    times the set-up's seconds (the same passes over the records, on this machine now),
    at most half the limit."""
    return min(time_limit / 2, FINISH_FACTOR * set_up_s)


def _run(
    problem: _Problem, requirements, *, caller: str = "fulldomain", held: int | None = None
) -> tuple[Evaluator, Outcome]:
    """One search; the evaluator (with its counters) and the outcome. `caller` names
    the method in the CP-SAT master's messages; `held` is the bytes it holds besides
    the master (default: :func:`~.memory.fulldomain_memory`'s, the records)."""
    space, recs, limit = problem.space, problem.recs, problem.limit
    evaluator = Evaluator(space, recs, problem.instance.schema, requirements, limit)
    excluded = _exclusions(space, recs, requirements, limit)
    k = evaluator.k
    n = recs.n_rows
    if problem.search == "master" or (
        problem.search == "auto" and space.size > LATTICE_NODES
    ):
        frontier = MasterFrontier(
            space, k=k, n=n, limit=limit, deadline=problem.deadline, seed=problem.seed,
            held=(
                fulldomain_memory(problem.instance, LATTICE_NODES, "master")
                if held is None
                else held
            ),
            caller=caller,
        )
        for assignment, _ in excluded:
            frontier.exclude(assignment)
    else:
        frontier = lattice_frontier(problem, evaluator, excluded)
    climb = bool(limit) and space.objective != "discernibility"
    outcome = best_first(evaluator, frontier, problem.deadline, climb)
    outcome.attributed |= {i for _, i in excluded}
    return evaluator, outcome


def lattice_frontier(problem: _Problem, evaluator: Evaluator, excluded: list) -> LatticeFrontier:
    """The open nodes of the whole lattice as arrays, with their static lower bounds
    (:mod:`.search`), the nodes of `excluded` (:func:`_exclusions`) closed."""
    space, recs, limit = problem.space, problem.recs, problem.limit
    levels = lattice_levels(space)
    closed = np.zeros(levels.shape[1], dtype=bool)
    for assignment, _ in excluded:
        mask = np.ones(levels.shape[1], dtype=bool)
        for a, j in assignment.items():
            mask &= levels[a] == j
        closed |= mask
    if space.objective == "discernibility":
        per_protected = np.bincount(
            recs.base.protected, weights=recs.base.sizes, minlength=recs.n_protected
        ).astype(np.int64)
        lower = discernibility_lower(space, levels, evaluator.k, recs.n_rows, per_protected, limit)
        separable = None
    else:
        separable = separable_costs(space, levels)
        lower = separable.copy()
    return LatticeFrontier(space, lower, separable, closed)


def lattice_space(
    instance: Instance, objective: str, deadline: float | None = None
) -> tuple[Space, list[np.ndarray]]:
    """The lattice of `instance` under `objective`, and each row's active value per
    attribute; past `deadline`, read before each attribute's steps, OutOfTime."""
    lads = ladders(instance, deadline)
    values = [_active(instance, lad.name)[1] for lad in lads]
    space = build_space(
        instance,
        lads,
        objective,
        [np.bincount(v, minlength=len(lad.codes[0])) for v, lad in zip(values, lads)],
        deadline,
    )
    return space, values


def fulldomain_problem(
    instance: Instance,
    requirements,
    objective,
    max_suppressed,
    search_,
    deadline: float | None = None,
    seed=None,
    caller: str = "fulldomain",
    set_up_deadline: float | None = None,
) -> tuple[_Problem, list]:
    """The checked options and requirements of a fulldomain call, as a problem. The
    set-up (the lattice, the records' frequency set) reads `set_up_deadline` between
    its steps and, past it, raises OutOfTime; the options are checked first."""
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {caller} must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller=caller)
    for req in requirements:
        if not isinstance(req, _SUPPORTED):
            raise IncompatibleRequirementError(
                f"fulldomain cannot enforce {req}: it enforces k-anonymity, l-diversity, "
                "t-closeness, diversity constraints and alpha-protection."
            )
    limit = _check(objective, max_suppressed, search_, instance.n_rows)
    check_fulldomain_memory(instance, LATTICE_NODES, search_)
    space, values = lattice_space(instance, objective, set_up_deadline)
    problem = _Problem(
        instance,
        space,
        records(instance, requirements, space, values, set_up_deadline),
        values,
        limit,
        deadline,
        _cpsat.random_seed(seed),
        search_,
    )
    return problem, requirements


def _release_table(instance, space, values, levels, suppressed_rows) -> pd.DataFrame:
    out = {}
    names = [attr.name for attr in space.attributes]
    for name in instance.table.columns:
        if not instance.schema[name].released:
            continue
        if name not in names:
            out[name] = instance.table[name]
            continue
        a = names.index(name)
        lad = space.attributes[a].ladder
        texts = lad.texts[levels[a]] + [SUPPRESSED]
        row_codes = lad.codes[levels[a]][values[a]]
        row_codes = np.where(suppressed_rows, len(texts) - 1, row_codes)
        used, inverse = np.unique(row_codes, return_inverse=True)
        categories = list(dict.fromkeys(texts[c] for c in used))
        remap = np.array([categories.index(texts[c]) for c in used], dtype=np.int64)
        out[name] = pd.Categorical.from_codes(remap[inverse.reshape(-1)], categories)
    return pd.DataFrame(out, index=instance.table.index)


def _classes_of_rows(problem: _Problem, evaluator: Evaluator, levels):
    """Each row's released class and whether it is suppressed, at `levels`."""
    recs = problem.recs
    grains = tuple(j + 1 for j in levels)
    fs, inverse = roll_up(problem.space, recs.base, grains, recs.n_protected)
    bad = evaluator.failing(fs)[1] if problem.limit else np.zeros(fs.n, dtype=bool)
    merged = evaluator.merged(levels, fs, bad)
    key = np.where(merged, -1 - fs.protected, np.arange(fs.n))
    final = pd.factorize(key)[0].astype(np.int64)
    node_class = inverse[recs.row_class]
    return final[node_class], bad[node_class]


def fulldomain(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    seed=None,
    time_limit: float | None = None,
    objective: str = "lm",
    max_suppressed: int | float | Fraction = 0,
    search: str = "auto",
    explain: bool = True,
    levels: dict | None = None,
) -> Release:
    """Optimal full-domain generalization with an optional record-suppression limit, as
    in ARX [1]_ and k-Optimize [2]_, by the best-first lattice search of
    :mod:`fairanon.solver.fulldomain`.

    Parameters
    ----------
    instance, seed, time_limit
        As in :func:`fairanon.anonymize`; the CP-SAT master's seed derives from `seed`.
        The set-up (the lattice and the records' frequency set, 0.01-0.015 s CPU on
        UCI Adult) reads the deadline before each attribute's steps and each
        requirement's counts and stops at half the limit (past it the search would get
        no time) with every generalizable cell ``*``, verified; the search then stops
        :data:`FINISH_FACTOR` times the set-up's time (at most half the limit) before
        the limit, kept for the release and its verification (0.02-0.04 s on Adult), and
        so does a climb to a maximal failing node. UCI Adult, k = 5 under three race
        constraints (``fa.anonymize``, 2 shared cores at a load of 3.5, 6 runs): at
        0.01 s returned after 0.010-0.018 s (0.006-0.011 s CPU), UNKNOWN; at 0.05 s
        after 0.034-0.037 s (0.022-0.025 s CPU), UNKNOWN; at 0.1 s after 0.060-0.063 s,
        UNKNOWN; at 0.2 s after 0.095-0.177 s, OPTIMAL in 5 of 6. When the set-up and
        the climbs read no clock: 0.030-0.034 s (0.021-0.022 s CPU) at 0.01 s and
        0.088-0.164 s (0.059-0.109 s CPU) at 0.1 s, FEASIBLE there. The release of a
        stopped set-up is verified (0.015-0.02 s CPU on Adult): at 0.01 s 0.025-0.030 s
        CPU, FEASIBLE under k = 5 alone, UNKNOWN under the race constraints (every cell
        ``*`` shows no Amer-Indian-Eskimo woman); unverified, UNKNOWN after
        0.009-0.011 s (8 runs each, a load of 1-2).
    requirements : sequence of Requirement
        KAnonymity, LDiversity, TCloseness, DiversityConstraint, AlphaProtection.
    objective : {"stars", "generalized", "discernibility", "ncp", "lm"}, default="lm"
        As in :func:`fairanon.solver.local_recoding.local_recoding` (totals over cells; a suppressed
        record's cells count as ``*``; discernibility charges n per suppressed record,
        as :func:`fairanon.models.metrics.discernibility` does).
    max_suppressed : int, float or Fraction, default=0
        How many records may be suppressed: a count (an int) or, as ARX's suppression
        limit, a share of the records (a float or Fraction in [0, 1]: ``0.05`` allows
        ``floor(0.05 n)``, ``1.0`` every record). Records of classes that fail k, l or t
        are released with ``*`` on every generalizable quasi-identifier (listed in
        ``Release.suppressed``); together, per protected value, they form one more
        class, which must meet the requirements too (the verifier sees it).
    search : {"auto", "lattice", "master"}, default="auto"
        Where the open nodes live: arrays over the whole lattice ("lattice") or the
        CP-SAT master ("master"); "auto" takes the arrays up to ``LATTICE_NODES``.
    explain : bool, default=True
        On infeasibility, shrink the requirements that cut the lattice to a minimal
        conflicting set by re-running the search without each of them.
    levels : dict, optional
        Release exactly this lattice node (attribute name -> level, every generalizable
        quasi-identifier once), with the suppression `max_suppressed` allows, instead of
        searching: one of :func:`~fairanon.solver.fulldomain.candidates.candidates`.
        Status FEASIBLE, no bound. A node that does not meet the requirements, or a bad
        level, raises InvalidParameterError.

    Returns
    -------
    Release
        OPTIMAL with the node's exact objective, FEASIBLE with a proven bound when the
        time ran out or the CP-SAT master reached the memory limit during the search,
        INFEASIBLE (no node works); when no node passed before either stop, the
        lattice's top node (``provenance["top_node"]``): FEASIBLE (no bound) when the
        verifier finds that it meets the requirements, else UNKNOWN naming those it
        fails (UNKNOWN unchecked when the time kept for the release is too short for
        the check). When the time ran out during the set-up, every generalizable cell ``*``:
        FEASIBLE (no bound) when the verifier finds that it meets the requirements, else
        UNKNOWN (its records listed as suppressed only when `max_suppressed` allows
        every one).
        ``provenance["levels"]`` gives the chosen level of each attribute,
        ``provenance["search"]`` the lattice size, the nodes checked, the frequency
        sets computed and, when the memory limit or the set-up's deadline ended the
        search, why (``"stopped"``);
        ``provenance["verification"]`` holds the verifier's report.

    Raises
    ------
    SchemaError
        A numeric quasi-identifier without intervals (levels).
    IncompatibleRequirementError
        A requirement fulldomain does not enforce.
    MemoryLimitError
        Before the lattice is built, when :func:`~.memory.fulldomain_memory` is above
        the memory limit (:mod:`fairanon._memory`); with the CP-SAT master, before its
        first solve when that would pass it (:func:`~.memory.master_memory`). A later
        solve that would pass it (the master grows with the search's cuts) ends the
        search instead, as the time limit does.

    Notes
    -----
    Levels: a categorical (or ordered) attribute's levels are the depths of its
    hierarchy above the leaves (``Hierarchy.generalize``, a shallow leaf stopping at the
    root); an ordered attribute without a hierarchy has levels value and ``*``; a
    numeric one its intervals (``IntervalHierarchy.generalize``, then ``*``).

    Each checked node costs one roll-up, linear in the rows of the finer frequency set
    it starts from. In the worst case (alpha-protection or diversity constraints that
    fail almost everywhere) every node of the lattice is checked.

    References
    ----------
    .. [1] F. Prasser, F. Kohlmayer, R. Lautenschläger, K. A. Kuhn. ARX -- a
       comprehensive tool for anonymizing biomedical data. AMIA 2014 (Flash).
    .. [2] R. J. Bayardo, R. Agrawal. Data privacy through optimal k-anonymization.
       ICDE 2005.

    Examples
    --------
    >>> inst = fa.load("ruggieri_loan")
    >>> rel = fulldomain(inst, [fa.KAnonymity(2)], objective="generalized", seed=0)
    >>> rel.status, rel.objective, rel.provenance["levels"]
    (<Status.OPTIMAL: 'OPTIMAL'>, 17, {'purpose': 1, 'emp': 0})
    >>> fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
    True
    """
    started = time.perf_counter()
    cpu_started = time.process_time()
    time_limit = _cpsat.check_time_limit(time_limit, "fulldomain")
    deadline = None if time_limit is None else started + time_limit
    # release_reserve keeps FINISH_FACTOR times the set-up's time, at most half the
    # limit: a set-up that passes half the limit leaves the search nothing, so it stops
    # there (it took 0.013-0.015 s on UCI Adult, read no clock and ended 0.01-0.017 s
    # past a limit of 0.01 s).
    set_up_deadline = None if deadline is None else started + time_limit / 2
    params = {
        "objective": objective,
        "max_suppressed": (
            max_suppressed if isinstance(max_suppressed, int) else str(max_suppressed)
        ),
        "search": search,
        "time_limit": time_limit,
        "explain": explain,
    }
    try:
        problem, requirements = fulldomain_problem(
            instance, requirements, objective, max_suppressed, search, deadline, seed,
            set_up_deadline=set_up_deadline,
        )
    except OutOfTime:
        return _set_up_stopped(
            instance, requirements, params, seed, started, objective, max_suppressed
        )
    set_up_s = time.perf_counter() - started
    if deadline is not None:
        # The search (and the explanation of an infeasibility) stops early enough for
        # the release and its verification.
        problem.deadline = deadline - release_reserve(time_limit, set_up_s)
    space, values, limit = problem.space, problem.values, problem.limit
    if levels is None:
        evaluator, outcome = _run(problem, requirements)
    else:
        # One node, chosen (e.g. from candidates()): checked exactly, not searched.
        node = chosen_node(space, levels)
        evaluator = Evaluator(space, problem.recs, instance.schema, requirements, limit)
        outcome = node_outcome(evaluator, node, requirements)
    if levels is not None:
        params["levels"] = dict(zip([attr.name for attr in space.attributes], outcome.best))
    info = {
        "lattice_size": space.size,
        "suppression_limit": limit,
        "types": problem.recs.base.n,
        "nodes_evaluated": outcome.nodes,
        "frequency_sets": evaluator.frequency_sets,
        "rows_rolled": evaluator.rows_rolled,
        "search_s": time.perf_counter() - started,
        "search_cpu_s": time.process_time() - cpu_started,
    }
    if outcome.stopped is not None:
        info["stopped"] = outcome.stopped

    def record(**extra) -> dict:
        return provenance("fulldomain", params, requirements, seed, started, search=info, **extra)

    if outcome.best is not None:
        release = _optimum(problem, evaluator, outcome, record)
        return _verified(instance, release, requirements)
    top = tuple(attr.height for attr in space.attributes)
    table = _release_table(instance, space, values, top, np.zeros(instance.n_rows, dtype=bool))
    groups = problem.recs.base.protected[problem.recs.row_class]
    if outcome.status == Status.INFEASIBLE:
        conflict = _minimal_conflict(problem, requirements, sorted(outcome.attributed), explain)
        names = [str(requirements[i]) for i in conflict]
        why = (
            f"{names[0]} cannot be met by any full-domain generalization on its own"
            if len(names) == 1
            else f"these requirements conflict on every lattice node: {'; '.join(names)}"
        )
        reason = f"no full-domain generalization satisfies the requirements: {why}"
        if limit:
            reason += f" (with at most {limit} suppressed records)"
        return Release(
            table=table,
            groups=groups,
            status=Status.INFEASIBLE,
            reason=reason,
            provenance=record(conflict=names),
        )
    reason = (
        f"the time limit ({time_limit} s, less the time kept for the release) ran "
        "out before any lattice node passed"
        if outcome.stopped is None
        else f"the search stopped before any lattice node passed: {outcome.stopped}"
    )
    levels_at = dict(zip([attr.name for attr in space.attributes], top))
    if deadline is not None and time.perf_counter() + FINISH_FACTOR * set_up_s > deadline:
        # No time to check it: the reserve, at most half the limit, was spent (UCI
        # Adult at 0.03-0.05 s, where the check ended up to 0.018 s past the limit).
        return Release(
            table=table, groups=groups, status=Status.UNKNOWN,
            reason=f"{reason}; no time was left to check the lattice's top node",
            provenance=record(top_node=True, levels=levels_at),
        )
    # The lattice's top node, unchecked by the search, is judged by the verifier: a
    # release as the set-up stopped earlier gives it (FEASIBLE when it meets the
    # requirements), not UNKNOWN for a longer limit.
    release = Release(
        table=table, groups=groups, provenance=record(top_node=True, levels=levels_at)
    )
    value = Fraction(objective_value(instance, release, objective))
    release = dataclasses.replace(
        release, objective=int(value) if value.denominator == 1 else value,
        reason=f"{reason}; the lattice's top node (every attribute at its top level) is released",
    )

    def failing(names):
        return dataclasses.replace(
            release, status=Status.UNKNOWN, objective=None,
            reason=f"{reason}; the lattice's top node fails {'; '.join(names)}",
        )

    return judged(instance, release, requirements, failing)


def stars_release(
    instance: Instance, record: dict, objective: str, suppress: bool = True
) -> Release:
    """Every generalizable cell ``*``, one class per protected value, its records listed
    as suppressed (with `suppress`; else released as the classes of every hierarchy's
    top, as under a suppression limit below the table's records): the release when the
    time ran out during the set-up, before any lattice was built. FEASIBLE, its objective
    the stars' `objective`, until :func:`judged` reads it; `record` is its provenance."""
    schema = instance.schema
    groups = (
        instance.codes(schema.protected).astype(np.int64)
        if schema.protected
        else np.zeros(instance.n_rows, dtype=np.int64)
    )
    gen = tuple(schema.generalizable)
    release = Release(
        table=generalize_partition(instance, groups, suppress=gen),
        groups=groups,
        suppressed=tuple(instance.row_ids.tolist()) if gen and suppress else (),
    )
    value = Fraction(objective_value(instance, release, objective))
    value = int(value) if value.denominator == 1 else value
    return dataclasses.replace(release, objective=value, provenance=record)


def judged(instance: Instance, release: Release, requirements, failing) -> Release:
    """`release` when the verifier finds that it meets `requirements`, else
    ``failing(names)``, a release of the same table for the requirements it fails; either
    with the verifier's report in ``provenance["verification"]``, as
    :func:`~fairanon.solver.local_recoding.solve._verified` gives it. The verdict reads the
    requirements' checks only: a failed integrity check is a bug of the method
    (SolverError), not a sign that no release exists."""
    from ...models.verify import verify

    report = verify(instance, release, requirements)
    broken = [c for c in report.failures if c.integrity]
    if broken:
        failed = "; ".join(f"{c.name}: {c.detail or c.achieved}" for c in broken)
        raise SolverError(
            f"The verifier rejected a {release.method} release ({failed}); this is a bug, "
            "please report it."
        )
    failed = [c.name for c in report.failures]
    if failed:
        release = failing(failed)
        # The checks read the table alone, which is the same.
        report = dataclasses.replace(report, status=str(release.status), reason=release.reason)
    return release.with_provenance(verification=report.to_dict())


def _set_up_stopped(
    instance: Instance, requirements, params: dict, seed, started: float, objective: str,
    max_suppressed,
) -> Release:
    """The release when the time ran out during the set-up (:func:`stars_release`):
    FEASIBLE when the verifier finds that it meets the requirements, else UNKNOWN naming
    those it misses (not INFEASIBLE: a lower node may meet a diversity constraint or
    alpha-protection that it fails). Its records are listed as suppressed only when the
    suppression limit allows every one (else the release would break the limit the
    caller set: they are the classes of the lattice's top node)."""
    requirements = validate_requirements(instance, requirements, caller="fulldomain")
    limit = _check(objective, max_suppressed, params["search"], instance.n_rows)
    record = provenance(
        "fulldomain", params, requirements, seed, started,
        search={"stopped": "time limit during the set-up"}, objective_name=objective,
    )
    release = stars_release(instance, record, objective, suppress=limit >= instance.n_rows)
    reason = (
        f"the time limit ({params['time_limit']} s) ran out during the set-up (the lattice "
        "and the records' frequency set), before any lattice node was checked"
    )

    def failing(names):
        return dataclasses.replace(
            release, status=Status.UNKNOWN, objective=None,
            reason=f"{reason}; every generalizable cell * fails {'; '.join(names)}",
        )

    return judged(instance, release, requirements, failing)


def _optimum(problem: _Problem, evaluator: Evaluator, outcome: Outcome, record) -> Release:
    """The release of the best node found, with its exact objective and bound."""
    space, levels = problem.space, outcome.best
    groups, suppressed = _classes_of_rows(problem, evaluator, levels)
    table = _release_table(problem.instance, space, problem.values, levels, suppressed)
    value = Fraction(outcome.cost, space.scale)
    value = int(value) if value.denominator == 1 else value
    bound = value
    if outcome.status != Status.OPTIMAL:
        # A chosen node (no search) has no bound.
        bound = None if outcome.bound is None else Fraction(outcome.bound, space.scale)
        bound = int(bound) if bound is not None and bound.denominator == 1 else bound
    gap = None
    if bound is not None:
        gap = 0.0 if bound == value or not value else float((value - bound) / value)
    return Release(
        table=table,
        groups=groups,
        status=outcome.status,
        suppressed=tuple(problem.instance.row_ids[suppressed].tolist()),
        objective=value,
        bound=bound,
        provenance=record(
            objective_name=space.objective,
            gap=gap,
            levels={attr.name: int(j) for attr, j in zip(space.attributes, levels)},
        ),
    )


def _minimal_conflict(problem: _Problem, requirements, candidates: list[int], explain) -> list[int]:
    """Shrink the requirements that cut the lattice by deletion: drop one, search again."""
    core = list(candidates) or list(range(len(requirements)))
    if not explain:
        return core
    for index in list(core):
        if len(core) == 1 or (
            problem.deadline is not None and time.perf_counter() >= problem.deadline
        ):
            break
        trial = [i for i in core if i != index]
        try:
            _, outcome = _run(problem, [requirements[i] for i in trial])
        except MemoryLimitError:
            # A trial's master refused before its first solve: the set so far stands.
            break
        if outcome.status == Status.INFEASIBLE:
            core = trial
    return core
