"""The best of the fast heuristics: where the exact model and the neighbourhood search
start, so that they never end worse than any of them.

:func:`best_heuristic` runs every heuristic that can enforce the requirements (each
refuses the others with IncompatibleRequirementError) on a share of the time left,
has the verifier check each release and keeps the one with the least loss under the
objective, measured exactly (:func:`fairanon.models.objectives.objective_value`).
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..exceptions import FairanonError
from ..heuristics.dmondrian import dmondrian
from ..heuristics.dsabre import dsabre
from ..heuristics.kmember import kmember
from ..heuristics.lossmondrian import mondrian_loss
from ..heuristics.mondrian import mondrian, mondrian_relaxed
from ..heuristics.oka import oka
from ..heuristics.sabre import sabre
from ..instances.instance import Instance
from ..models.objectives import Objective, objective_value, value_for_display
from ..models.requirements import Requirement
from ..models.verify import verify
from ..release import Release, Status, generalize_partition
from ..solver.fulldomain import fulldomain, lattice_local
from .diva import diva

__all__ = [
    "HEURISTICS",
    "CheckedStart",
    "best_heuristic",
    "heuristic_start",
    "suppressed_form",
]

#: The heuristics tried, fastest first: (name, function, largest table it runs on).
#: Full-domain generalization is exact over its lattice and fast on every table with a
#: small one. The lattice local recoding, often the least loss, comes before k-member
#: and OKA, which are quadratic and ignore time limits, so they run only when their
#: expected time (:data:`QUADRATIC_RATES`) fits in the time left: run first, they took
#: its time on large tables (UCI Adult, k = 5, lns for 60 s: OKA's 18 s left the lattice
#: local recoding none, and lns ended at LM_avg 0.0514 from mondrian-loss's start;
#: 0.0393 from the lattice local recoding's).
HEURISTICS: tuple[tuple[str, Callable[..., Release], int | None], ...] = (
    ("mondrian", mondrian, None),
    ("mondrian-relaxed", mondrian_relaxed, None),
    ("mondrian-loss", mondrian_loss, None),
    ("dmondrian", dmondrian, None),
    ("sabre", sabre, None),
    ("dsabre", dsabre, None),
    ("diva", diva, 100_000),
    ("fulldomain", fulldomain, None),
    ("lattice-local", lattice_local, None),
    ("kmember", kmember, None),
    ("oka", oka, None),
)
#: Per quadratic heuristic, (units per second, whether k divides the work): it is
#: expected to take n^2 d / rate seconds (n^2 d / (k rate) for OKA) for n records and d
#: quasi-identifiers. Measured on a 2-core machine: k-member on UCI Adult (30,162
#: records, 8 quasi-identifiers) in 45 s CPU (1.6e8 units per second; the rate below
#: leaves a margin of 1.6, as k-member cannot be stopped), OKA on Adult (k = 5) in 20 s.
QUADRATIC_RATES = {"kmember": (1e8, False), "oka": (7e7, True)}
#: Per heuristic whose release takes a least time whatever its limit, that time
#: (seconds per run, per record): it is not started in a share below that when a start
#: is already in hand (without one it may be the only start, and gets all the time
#: left, whatever its share).
#: DIVA clusters the rest and suppresses, its whole work under k-anonymity alone:
#: 0.04-0.075 s CPU on UCI Adult (30,162 records), 0.006-0.011 s on German credit
#: (1,000), 2 shared cores; in lns's shares of 0.01-0.03 s it passed them by
#: 0.02-0.10 s.
LEAST_SECONDS = {"diva": (0.005, 2e-6)}
#: Without a start in hand such a heuristic's limit is the time left less this share of
#: the least it takes: it finishes a step begun before its limit (DIVA's Suppress and
#: Anonymize), and a release ending past the time left is not checked. DIVA alone on
#: UCI Adult under diversity constraints (k = 5; least 0.065 s), 2 shared cores, at
#: limits of 0.05 and 0.06 s: FEASIBLE, ending 0.006-0.02 s past them (once 0.04 s);
#: as lns's only start with all the time left (0.05-0.08 s at lns limits of 0.12-0.15
#: s) it ended 0.003-0.039 s past it, unchecked, and lns returned UNKNOWN (at 0.15 s
#: in 2 of 3 runs). With a third of its least kept: at 0.15 s FEASIBLE in 6 of 6 runs
#: (DIVA 0.005-0.007 s past its limit, checked; lns 0.118-0.122 s CPU); at 0.12 s DIVA
#: has 0.03 s and is UNKNOWN, as is lns (its release and check need about 0.12 s).
LAST_STEP_SHARE = 1 / 3
#: The heuristics that are told the objective's cell loss ("lm", else "ncp").
LOSS_LED = ("mondrian-loss", "lattice-local")
#: Seconds a quadratic heuristic may be expected to take when there is no time limit.
QUADRATIC_SECONDS = 120.0
#: Before a release has been checked (its objective and the verifier without metrics),
#: checking one is expected to take CHECK_SECONDS plus a second per
#: CHECK_CELLS_PER_SECOND cells of the table, kept out of the first heuristic's share.
#: Measured on a 2-core machine: German credit (1,000 x 9 cells) 0.019 s CPU, UCI Adult
#: (30,162 x 9) 0.04-0.06 s.
CHECK_SECONDS = 0.015
CHECK_CELLS_PER_SECOND = 6e6


@dataclass(frozen=True)
class CheckedStart:
    """What checking the chosen start found, passed on so that it is not checked again
    (:func:`fairanon.methods.lns.lns` used to verify its start twice: 0.05 s on UCI
    Adult, 0.5 s on a table of 30,000 values).

    Attributes
    ----------
    verification : dict
        The verifier's report on the start (``Report.to_dict()``, passed).
    value : object
        The start's exact objective.
    seconds : float
        What the verifier took on it.
    values_or_stars : bool
        Whether it is known to show each cell as its value or ``*`` (its form under
        ``recoding="suppression"``), so that the search need not read its labels
        whatever the time to find out.
    """

    verification: dict
    value: object
    seconds: float
    values_or_stars: bool = False


def checked_start(instance: Instance, release: Release, requirements, value) -> CheckedStart | None:
    """`release` verified (without metrics), with its objective `value`; None when the
    verifier rejects it."""
    clock = time.perf_counter()
    report = verify(instance, release, requirements, metrics=False)
    if not report.passed:
        return None
    return CheckedStart(report.to_dict(), value, time.perf_counter() - clock)


def _first_check_seconds(instance: Instance) -> float:
    """What checking a release is expected to take before one has been checked."""
    return CHECK_SECONDS + instance.n_rows * len(instance.table.columns) / CHECK_CELLS_PER_SECOND


def suppressed_form(instance: Instance, release: Release) -> Release:
    """The release with each class's common value or ``*`` per attribute (DIVA's
    semantics), for local suppression."""
    from ..models.metrics import equivalence_classes

    groups = equivalence_classes(instance, release)
    table = generalize_partition(instance, groups, recoding="suppress")
    return Release(table, groups, status=release.status, provenance=release.provenance)


def _cell_loss(objective) -> str:
    """The cell loss a loss-led heuristic scores its cuts by: LM for the objective "lm"
    (or a lexicographic one whose loss term it is), NCP otherwise."""
    loss = objective.loss if isinstance(objective, Objective) else objective
    return "lm" if loss == "lm" else "ncp"


def _expected_seconds(name: str, instance: Instance, requirements) -> float | None:
    """How long a quadratic heuristic should take on `instance` (None for the others)."""
    if name not in QUADRATIC_RATES:
        return None
    rate, by_k = QUADRATIC_RATES[name]
    k = max([getattr(r, "k", 1) for r in requirements] + [1])
    work = float(instance.n_rows) ** 2 * max(len(instance.schema.generalizable), 1)
    return work / (rate * (k if by_k else 1))


def too_long(expected: float, fits: float) -> str:
    """Why a heuristic expected to take `expected` seconds is skipped where it may take
    `fits`: whole seconds from 10 s, two significant digits below (a skip for want of
    0.07 s read "about 0 s")."""

    def text(x: float) -> str:
        return f"{x:,.0f}" if x >= 10 else f"{x:.2g}"

    return f"expected to take about {text(expected)} s, more than the {text(fits)} s it may take"


def best_heuristic(
    instance: Instance,
    requirements: Sequence[Requirement],
    objective,
    *,
    seed=None,
    deadline: float | None = None,
    limit: float | None = None,
    recoding: str = "generalization",
    methods: Sequence[str] | None = None,
) -> tuple[Release | None, list[dict]]:
    """The verified heuristic release with the least `objective`, and what each tried
    heuristic gave (name, status, objective, seconds, or why it was skipped): the first
    two answers of :func:`heuristic_start`, whose parameters these are. The first
    release found is checked whatever the time: without it there is no start."""
    release, tried, _ = heuristic_start(instance, requirements, objective, seed=seed,
                                        deadline=deadline, limit=limit, recoding=recoding,
                                        methods=methods)
    return release, tried


def heuristic_start(
    instance: Instance,
    requirements: Sequence[Requirement],
    objective,
    *,
    seed=None,
    deadline: float | None = None,
    limit: float | None = None,
    recoding: str = "generalization",
    methods: Sequence[str] | None = None,
    quadratic_seconds: float = QUADRATIC_SECONDS,
) -> tuple[Release | None, list[dict], CheckedStart | None]:
    """The verified heuristic release with the least `objective`, what each tried
    heuristic gave (name, status, objective, seconds, or why it was skipped), and what
    checking that release found (None with no release).

    Each heuristic gets half the time left before `deadline` (all of it for the last),
    less what checking a release is expected to take (the longest a check, computing
    its objective and, when it is the least so far, verifying it, has taken so far;
    before the first, :data:`CHECK_SECONDS` plus a second per
    :data:`CHECK_CELLS_PER_SECOND` cells), and starts only when that much is left;
    heuristics whose table limit is exceeded are skipped, and so are those whose share
    is below the least they take (:data:`LEAST_SECONDS`) when a start is already in
    hand; without one such a heuristic runs, whatever its share, with all the time left
    (to `limit`, less the check and :data:`LAST_STEP_SHARE` of its least time, the step
    it may finish past its limit), as it may be the only one that can enforce the
    requirements (DIVA under a diversity constraint, where lns would otherwise have no
    start and return UNKNOWN with time left). A heuristic that
    stopped at its time limit says so (``"stopped"``), and one that ran past its share
    says by how much (``"over_s"``). With ``recoding="suppression"`` each release is
    first put in suppression form. Each release with less loss than the best so far is
    verified at once, so nothing is left to do past `deadline` (the releases used to
    be verified after the last heuristic, least loss first: on UCI Adult, k = 5, at a
    deadline of 0.4 s the objective and the verification took 0.5 s more, wall-clock
    on a shared machine); the one chosen carries ``provenance["start_objective"]``.
    The first release found is checked even past `deadline`, without it there is no
    start, but not when its check would end past `limit` (a ``time.perf_counter``
    value, the caller's own time limit): it is then left unchecked, and not returned,
    its entry saying so -- never a release the verifier has not passed. While no start
    is in hand the time left, and so each share, is measured to `limit` rather than to
    `deadline` (when both are given): a heuristic is then skipped for want of time only
    when the caller has none left. Without a
    `deadline` a quadratic heuristic runs when it is expected to take at most
    `quadratic_seconds`.
    """
    tried: list[dict] = []
    best: tuple | None = None  # (value, release, checked)
    checking = 0.0  # the longest a release took to be checked
    expected = _first_check_seconds(instance)  # until one has been checked
    chosen = [h for h in HEURISTICS if methods is None or h[0] in methods]
    for i, (name, func, max_rows) in enumerate(chosen):
        if max_rows is not None and instance.n_rows > max_rows:
            tried.append({"method": name, "skipped": f"more than {max_rows} records"})
            continue
        # Without a start in hand the time left runs to `limit`, the caller's own time
        # limit, not to the starts' `deadline`: a heuristic skipped for want of time
        # there left lns without a start, UNKNOWN with time left (German credit under a
        # diversity constraint, 0.04 s: DIVA skipped at 0.017 s, "no time left").
        until = limit if best is None and limit is not None and deadline is not None else deadline
        left = None if until is None else until - time.perf_counter() - expected
        if left is not None and left <= 0:
            why = (f"no time left ({max(left + expected, 0.0):.3f} s to go; checking a release "
                   f"takes about {expected:.3f} s)")
            tried.append({"method": name, "skipped": why})
            continue
        share = None if left is None else (left if i == len(chosen) - 1 else left / 2)
        if share is not None and name in LEAST_SECONDS:
            least = LEAST_SECONDS[name][0] + LEAST_SECONDS[name][1] * instance.n_rows
            if share < least and best is not None:
                tried.append({"method": name, "skipped": f"its share ({share:.3f} s) is below the "
                                                         f"{least:.3f} s it takes at least"})
                continue
            if best is None:
                # No start in hand: it runs with all the time left to the caller's limit,
                # less the step it may finish past its own (LAST_STEP_SHARE of its
                # least). DIVA stops at its own limit, so a share it cannot build a
                # release in ends it with none, where it used to run past the share and
                # give lns its start (UCI Adult under diversity constraints, 2 shared
                # cores: its release takes 0.1-0.15 s wall; lns at 0.3 s gave it 0.11 s).
                share = max(left - LAST_STEP_SHARE * least, left / 2)
        quadratic = _expected_seconds(name, instance, requirements)
        fits = quadratic_seconds if left is None else left
        if quadratic is not None and quadratic > fits:
            tried.append({"method": name, "skipped": too_long(quadratic, fits)})
            continue
        clock = time.perf_counter()
        try:
            options = {"objective": _cell_loss(objective)} if name in LOSS_LED else {}
            release = func(instance, requirements, seed=seed, time_limit=share, **options)
            ran = time.perf_counter() - clock
            if release.status not in (Status.FEASIBLE, Status.OPTIMAL):
                tried.append({"method": name, "status": str(release.status), "seconds": ran})
                continue
            entry = {"method": name, "status": str(release.status)}
            if release.provenance.get("time_limit_reached"):
                entry["stopped"] = "at its time limit"
            if share is not None and ran > share:
                entry["over_s"] = round(ran - share, 3)
            if limit is not None and time.perf_counter() + expected > limit:
                entry.update(status="not checked", seconds=ran,
                             why=f"checking it (about {expected:.2f} s) would pass the time limit")
                tried.append(entry)
                continue
            if recoding == "suppression":
                release = suppressed_form(instance, release)
            value = objective_value(instance, release, objective)
        except FairanonError as exc:
            # Cut at a word, not in one.
            said = textwrap.shorten(str(exc), 120, placeholder=" …")
            tried.append({"method": name, "skipped": f"{type(exc).__name__}: {said}"})
            continue
        except MemoryError:
            tried.append({"method": name, "skipped": "MemoryError"})
            continue
        entry = {**entry, "objective": value_for_display(value)}
        tried.append(entry)
        if best is None or value < best[0]:
            checked = checked_start(instance, release, requirements, value)
            if checked is not None:
                best = (value, release, checked)
            else:
                entry["status"] = "not verified"
        checking = max(checking, time.perf_counter() - clock - ran)
        expected = checking
        entry["seconds"] = time.perf_counter() - clock
    if best is None:
        return None, tried, None
    return best[1].with_provenance(start_objective=best[0]), tried, best[2]
