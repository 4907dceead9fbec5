"""The cpsat method: the exact local-recoding model, started from the best heuristic
release (or a release the caller gives) and never worse than it.

:func:`fairanon.solver.local_recoding.local_recoding` proves the optimal local
recoding (or local suppression) under every requirement type; a release given as a
warm start lets CP-SAT begin from a good incumbent. This method gives it the best
verified release of the fast heuristics (:func:`~fairanon.methods.starts.best_heuristic`),
or the caller's verified release, and, when the time runs out before CP-SAT finds a
release at least as good, returns that start instead, improved by large-neighbourhood
search when time is left -- which is why it is put together here, above all three.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Sequence

from ..exceptions import InvalidParameterError
from ..instances.instance import Instance
from ..models.objectives import (
    objective_spec,
    objective_value,
    relative_gap,
    value_for_display,
)
from ..models.requirements import Requirement, validate_requirements
from ..models.verify import verify
from ..release import Release, Status
from ..solver.local_recoding import check_hint, local_recoding
from .lns import REQUIREMENTS as LNS_REQUIREMENTS
from .lns import lns
from .starts import best_heuristic, suppressed_form

__all__ = ["HINT_SHARE", "LNS_SECONDS", "SEARCH_PAIRS_PER_SECOND", "cpsat"]

#: The share of the time limit the starting heuristics may take (10 s without a limit);
#: they run before the model is built, each on a share of what is left of it.
HINT_SHARE = 0.2
#: When the model cannot improve on the best start and at least this many seconds of
#: the time limit are left, large-neighbourhood search over the same model (re-solving
#: groups of the start's classes exactly) gets them, so the limit is used.
LNS_SECONDS = 5.0
#: With a start (``hint="auto"`` or a release) and a time limit, the model is built only
#: when it has at most this many assignment variables per second of the limit; a larger
#: one is not built and the start goes to large-neighbourhood search with the rest of
#: the limit. Measured on German credit (subsets of its quasi-identifiers, k = 5, NCP,
#: 60 s, 2 cores, 8 workers), CP-SAT's release against lns's (GCP, CP-SAT / lns;
#: ``python benchmarks/cpsat_cap.py``): on tables of more than 300 distinct records,
#: CP-SAT better at 88 variables a second (0.1188 / 0.1224), even at 165 (0.1521 /
#: 0.1514; 0.1528 / 0.1512 in another run), worse at 186, 259 and 347 (0.2046 / 0.1970,
#: 0.1950 / 0.1791, 0.1273 / 0.1158); on those of at most 300, which lns re-solves whole
#: first, lns proves the optimum sooner at 26 and 102 a second (0.7 s against 2.7 s,
#: 8.9 s against 18.4 s), is better at 256 and 273 (0.1294 / 0.1235 at k = 10; 0.0658 /
#: 0.0646) and even at 389 (0.0568 / 0.0566). From 512 a second on CP-SAT found nothing
#: better than the start within the minute, and at 24,600 a second (the 7 QIs'
#: 1,476,045 variables) nothing at all. The model is built all the same when lns cannot
#: take the start: no start, or less than ``LNS_SECONDS`` left. On the first 1,000 or 2,000
#: rows of UCI Adult (3 quasi-identifiers, k = 5, LM; LM_avg, CP-SAT / lns) likewise: of
#: more than 300 distinct records, CP-SAT better at 82 a second (0.0464, proven optimal
#: in 33 s / 0.0485), even at 115 (0.0359 / 0.0359), worse at 181 (0.0224 / 0.0223) and
#: 1,054 (0.0387 / 0.0254); of at most 300, worse at 357 and 645 (0.0308 / 0.0297,
#: 0.0235 / 0.0206). At 30 s (``--limit 30``; the same models, twice the variables a
#: second) the crossover lies at the same rate: CP-SAT better at 164 a second (Adult's
#: 4,918 variables: 0.0464 proven optimal / 0.0485), worse from 175 on (German credit's
#: 5,259: 0.1236 / 0.1220; 230: 0.0365 / 0.0358; 329-778: by 1-14 %), so the cap is
#: per second of the limit.
SEARCH_PAIRS_PER_SECOND = 100.0


def cpsat(
    instance: Instance, requirements: Sequence[Requirement], *, seed=None, **options
) -> Release:
    """Optimal local recoding (or local suppression) under every requirement type, with a
    certificate, and never worse than the fast heuristics.

    The parameters, the release and the errors are those of
    :func:`fairanon.solver.local_recoding.local_recoding`. With ``hint="auto"`` (the
    default) the heuristics that can enforce the requirements run first, before the
    model is built (their time counts in ``time_limit``: at most a fifth of it, or, until
    one gives a release, what is left of the limit less a release's check), and
    the search starts from their best verified release under the objective. When
    CP-SAT's release is worse than that one or it found none in the time (status
    FEASIBLE or UNKNOWN) -- also when the model could not be built, or loaded into
    CP-SAT, within the time limit -- the heuristic release is returned, with status
    FEASIBLE, CP-SAT's proven bound and gap when it has one, ``provenance["fallback"]``
    naming the heuristic and ``provenance["fallback_reason"]`` saying why. When at
    least ``LNS_SECONDS`` of the limit are then left, :func:`fairanon.methods.lns.lns`
    improves that release over the same model in them (``provenance["fallback"]`` e.g.
    ``"kmember+lns"``), so the limit is used. A model with more assignment variables
    than ``max_pairs_per_second`` (default :data:`SEARCH_PAIRS_PER_SECOND`; not with
    ``hint=None``) per second of the limit is not built: CP-SAT would spend the
    limit loading and presolving it, so the start goes to lns with the rest of the
    limit (``provenance["model"]["too_large"]``; ``fallback_reason`` gives the count);
    so does a model whose candidate classes exceed ``max_vars``, which is refused
    without a start. When lns cannot take the start -- no heuristic gave one, or less
    than ``LNS_SECONDS`` is left -- the model is built all the same in the time left,
    warm-started from the start when there is one (``provenance["capped"]`` says why).
    ``provenance["starts"]`` lists what each heuristic gave. A release given as
    ``hint`` is the start instead of the heuristics' (none run) when the verifier passes
    it, with the same promises as the heuristics' start; one that fails the
    requirements is only a warm start (its entry in ``starts`` says so). OPTIMAL is
    proven over the model's candidate labels (every hierarchy node, every range of
    attributes with at most ``max_range_values`` values, else nested intervals); when a
    start with ranges outside them is better, that start is returned (FEASIBLE, no bound:
    the proof says nothing outside the candidate labels).

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> reqs = [fa.KAnonymity(2), *diva_sigma()]
    >>> rel = cpsat(inst, reqs, recoding="suppression", seed=0, num_workers=1)
    >>> rel.status, rel.objective
    (<Status.OPTIMAL: 'OPTIMAL'>, 22)
    >>> fa.verify(inst, rel, reqs).passed
    True
    """
    started = time.perf_counter()
    # Read here and by the solver, so an iterator is read once.
    if isinstance(requirements, Requirement):
        requirements = [requirements]
    elif not isinstance(requirements, Sequence):
        try:
            each = iter(requirements)
        except TypeError:
            pass  # not iterable: the solver names the parameter
        else:
            requirements = tuple(each)
    given = options.pop("hint", "auto")
    if not (isinstance(given, Release) or (isinstance(given, str) and given == "auto")):
        if given is None and options.get("max_pairs_per_second") is not None:
            raise InvalidParameterError(
                "The 'max_pairs_per_second' parameter of cpsat hands the start to lns and "
                "applies with hint='auto' or a Release only. Got it with hint=None instead."
            )
        # None, or a hint the solver refuses by name
        return local_recoding(instance, requirements, seed=seed, hint=given, **options)
    recoding = options.get("recoding", "generalization")
    objective = objective_spec(
        options.get("objective"),
        "cpsat",
        stretch_k=options.get("stretch_k"),
        default="stars" if recoding == "suppression" else "ncp",
    )
    limit = options.get("time_limit")
    share = 10.0 if limit is None else HINT_SHARE * float(limit)
    lns_takes = isinstance(requirements, Sequence) and all(
        isinstance(r, LNS_REQUIREMENTS) for r in requirements
    )
    if lns_takes:
        # lns takes the start when the model is too large to be worth building
        options = {"max_pairs_per_second": SEARCH_PAIRS_PER_SECOND, **options}
    found: dict = {}

    def hint(inst, reqs, hint_seed):
        if isinstance(given, Release):
            check_hint(inst, given)
            found["release"], found["starts"] = _given_start(inst, reqs, given, objective, recoding)
            # the start as the fallback would be (its suppressed form), else as given: a
            # hint even when it fails the requirements
            return found["release"] if found["release"] is not None else given
        found["release"], found["starts"] = best_heuristic(
            inst,
            reqs,
            objective,
            seed=hint_seed,
            recoding=recoding,
            deadline=started + share,
            # Without a start in hand the heuristics may run to the caller's limit: a
            # fifth of 0.3-0.8 s on UCI Adult was less than checking a release takes, so
            # every heuristic was skipped and cpsat returned UNKNOWN with no release.
            limit=None if limit is None else started + float(limit),
        )
        return found["release"]

    release = local_recoding(instance, requirements, seed=seed, auto_hint=hint, **options)
    release = release.with_provenance(starts=found.get("starts", []))
    heuristic = found.get("release")
    source = "the given start" if isinstance(given, Release) else "the best heuristic release"
    if release.provenance.get("model", {}).get("too_large"):
        release = _built_anyway(instance, requirements, seed, options, release, heuristic,
                                started, found.get("starts", []),
                                given if isinstance(given, Release) else None)
    if heuristic is None:
        skipped = [f"{t['method']}: {t['skipped']}" for t in found.get("starts", [])
                   if "skipped" in t]
        if release.status == Status.UNKNOWN and release.reason and skipped:
            # Say why no start stands in for CP-SAT's release: the first one skipped.
            none = ("the given start cannot stand in" if isinstance(given, Release)
                    else "no heuristic gave a start")
            release = dataclasses.replace(
                release, reason=f"{release.reason}; {none} ({skipped[0]})"
            )
        return release
    value = heuristic.provenance["start_objective"]
    if release.status in (Status.OPTIMAL, Status.FEASIBLE) and release.objective <= value:
        return release
    bound = release.bound if release.bound is not None and release.bound <= value else None
    if release.status == Status.OPTIMAL:
        # The optimum is over the candidate labels: a heuristic release with ranges
        # outside them can be better, and the proven value bounds nothing outside them.
        bound = None
        why = (
            f"CP-SAT's optimum over its candidate labels (objective "
            f"{value_for_display(release.objective)}) is worse than it: the heuristic "
            "releases ranges outside those labels (attributes with more than "
            "max_range_values values)"
        )
    elif release.status == Status.FEASIBLE:
        why = (
            f"CP-SAT's best release (objective {value_for_display(release.objective)}) is "
            "worse than it"
        )
    elif release.reason:
        why = release.reason
    else:
        why = f"CP-SAT found no release within the time limit ({release.status})"
    prov = dict(release.provenance)
    prov.update(
        fallback=heuristic.method,
        fallback_reason=f"{source} ({heuristic.method}) is returned: {why}",
        solver_status=str(release.status),
        gap=relative_gap(value, bound),
        verification=verify(
            instance, heuristic, validate_requirements(instance, requirements, caller="cpsat")
        ).to_dict(),
        elapsed_s=time.perf_counter() - started,
    )
    if release.reason:
        prov["solver_reason"] = release.reason
    fallback = Release(
        table=heuristic.table,
        groups=heuristic.groups,
        status=Status.FEASIBLE,
        suppressed=heuristic.suppressed,
        objective=value,
        bound=bound,
        provenance=prov,
    )
    left = None if limit is None else started + float(limit) - time.perf_counter()
    if left is None or left < LNS_SECONDS or not lns_takes:
        return fallback
    improved = lns(
        instance,
        requirements,
        seed=seed,
        time_limit=left,
        start=heuristic,
        objective=options.get("objective"),
        stretch_k=options.get("stretch_k"),
        recoding=recoding,
        max_range_values=options.get("max_range_values", 16),
        num_workers=options.get("num_workers", 1),
        bound=bound is None,
    )
    if improved.objective >= value:
        return fallback
    # lns keeps every move exact and verified; CP-SAT's bound, when it has one, holds.
    better_bound = bound if bound is not None else improved.bound
    prov.update(
        fallback=f"{heuristic.method}+lns",
        fallback_reason=(
            f"{prov['fallback_reason']}; then large-neighbourhood search over the same "
            f"model improved it in the {left:.1f} s left"
        ),
        lns=dict(improved.provenance.get("search", {})),
        gap=relative_gap(improved.objective, better_bound),
        verification=improved.provenance.get("verification"),
        elapsed_s=time.perf_counter() - started,
    )
    return Release(
        table=improved.table,
        groups=improved.groups,
        status=Status.FEASIBLE,
        suppressed=improved.suppressed,
        objective=improved.objective,
        bound=better_bound,
        provenance=prov,
    )


def _given_start(instance, requirements, given: Release, objective, recoding: str):
    """The release a caller gave as hint, as a start: with its objective value
    (``provenance["start_objective"]``) when the verifier passes it (in suppression form
    for ``recoding="suppression"``, as a heuristic's), else None; and its entry for
    ``provenance["starts"]``."""
    if "method" not in given.provenance:  # a release made by hand
        given = given.with_provenance(method="hint")
    entry = {"method": given.method, "given": True}
    release = suppressed_form(instance, given) if recoding == "suppression" else given
    report = verify(instance, release, requirements, metrics=False)
    if not report.passed:
        failed = ", ".join(c.name for c in report.failures)
        return None, [{**entry, "skipped": f"it fails the requirements ({failed})"}]
    value = objective_value(instance, release, objective)
    entry.update(status=str(given.status), objective=value_for_display(value))
    return release.with_provenance(start_objective=value), [entry]


def _built_anyway(instance, requirements, seed, options, capped, heuristic, started,
                  starts, given=None) -> Release:
    """The release when the model was too large for ``max_pairs_per_second`` (`capped`):
    unchanged when lns can improve the start, else the model built and solved in the time
    left, warm-started from the start when there is one (or from the `given` hint that
    fails the requirements) -- without lns it is the only way to a better release (or to
    any)."""
    limit = float(options["time_limit"])
    left = limit - (time.perf_counter() - started)
    pairs = capped.provenance["model"]["pairs"]  # None: above max_vars
    if heuristic is None:
        # The model is the only way to a release; above max_vars the solver refuses it.
        why = ("the given start fails the requirements" if given is not None
               else "no heuristic gave a start")
    elif pairs is None or left >= LNS_SECONDS:
        return capped  # lns improves the start
    else:
        why = f"{max(left, 0.0):.1f} s were left, less than lns's {LNS_SECONDS:g} s"
    uncapped = {**options, "hint": heuristic if heuristic is not None else given,
                "time_limit": max(left, 1e-3), "max_pairs_per_second": None}
    release = local_recoding(instance, requirements, seed=seed, **uncapped)
    size = (f"has {pairs:,} assignment variables, more than max_pairs_per_second allows"
            if pairs is not None else "has more candidate classes than max_vars")
    built_anyway = (f"the model {size}, but {why}, so it was built in the "
                    f"{max(left, 0.0):.1f} s left")
    if release.reason:  # its limit is the time left: say why
        release = dataclasses.replace(release, reason=f"{built_anyway}: {release.reason}")
    params = {**release.provenance["params"], "time_limit": limit,
              "max_pairs_per_second": options["max_pairs_per_second"]}
    return release.with_provenance(
        params=params,
        starts=starts,
        capped={"pairs": pairs, "built_anyway": built_anyway},
        elapsed_s=time.perf_counter() - started,
    )


# The options are those of the solver's function (``auto_hint`` is supplied here), so
# that the front door can name the valid ones when a job file misspells one.
cpsat.__signature__ = inspect.signature(local_recoding).replace(
    parameters=[
        p.replace(default=SEARCH_PAIRS_PER_SECOND) if p.name == "max_pairs_per_second" else p
        for p in inspect.signature(local_recoding).parameters.values()
        if p.name != "auto_hint"
    ]
)
