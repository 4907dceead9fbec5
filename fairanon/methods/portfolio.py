"""The portfolio behind ``auto`` for per-class requirements: several fast methods, the
best verified release.

No single heuristic wins everywhere: on ARX's Adult setting the lattice local recoding
loses 30-55 % less than Mondrian-style cutting (``benchmarks/arx.py``), while on a
numeric table without levels it cannot run at all, and sabre is made for t-closeness.
:func:`portfolio` runs the candidates in order, each with all the time left, has the
verifier check every release, measures each exactly under the objective
(:func:`fairanon.models.objectives.objective_value`) and keeps the least; the
provenance lists every candidate's loss, time or why it was skipped, and names the
winner. The result is never worse than any candidate it ran, by construction.
Without a time limit it is deterministic: candidates run to completion or are skipped
by rules on the table's size, never by a clock.
"""

from __future__ import annotations

import math
import textwrap
import time
from collections.abc import Callable, Sequence

from ..exceptions import FairanonError, IncompatibleRequirementError, InvalidParameterError
from ..heuristics.kmember import kmember
from ..heuristics.lossmondrian import mondrian_loss
from ..heuristics.mondrian import mondrian
from ..heuristics.oka import oka
from ..heuristics.sabre import sabre
from ..instances.instance import Instance
from ..models.objectives import objective_spec, objective_value, value_for_display
from ..models.requirements import Requirement
from ..models.verify import verify
from ..release import Release, Status, provenance
from ..solver.fulldomain import lattice_local
from ..solver.fulldomain.local import OBJECTIVES as LATTICE_LOCAL_OBJECTIVES
from .lns import _all_suppressed
from .starts import QUADRATIC_SECONDS, _cell_loss, _expected_seconds, too_long

__all__ = ["CANDIDATES", "LATTICE_LOCAL_ROWS", "PORTFOLIO_SECONDS", "portfolio", "ranked"]

#: The candidates, in the order they run (each gets all the time left): Mondrian first,
#: a fraction of a second on the bundled data and complete whatever the limit, so that
#: even a short limit on a busy machine gets its release; then the methods that lose
#: least, fastest first. Each refuses what it cannot enforce (IncompatibleRequirementError,
#: or SchemaError for quasi-identifiers without levels), which skips it.
CANDIDATES: dict[str, Callable[..., Release]] = {
    "mondrian": mondrian,
    "mondrian-loss": mondrian_loss,
    "lattice-local": lattice_local,
    "sabre": sabre,
    "kmember": kmember,
    "oka": oka,
}
#: The candidates told the objective (a cell loss: "lm" or "ncp"). Mondrian-loss keeps
#: its own NCP-scored cuts, which on the default job lose less LM (0.403) than its
#: LM-scored ones (0.411).
_LOSS_LED = ("lattice-local",)
#: Without a time limit, the seconds a candidate may be expected to take: each runs to
#: completion (no clock decides anything, so the same input and seed give the same
#: release on any machine and under any load), and one expected to take longer is
#: skipped by a rule on the table's size alone.
PORTFOLIO_SECONDS = 10.0
#: Without a time limit, the records up to which the lattice local recoding runs: its
#: rounds cost little per record but each searches the lattice again (UCI Adult, 30,162
#: records: 6-10 s CPU on a 2-core machine, against 6 s for 10,000).
LATTICE_LOCAL_ROWS = 100_000
#: Mondrian with least-loss cuts costs about n d^2 log2(n) steps for n records and d
#: quasi-identifiers; steps per second measured on a 2-core machine (UCI Adult and
#: Adult's 45,222 records: 0.7-1.2e7), with a margin.
MONDRIAN_LOSS_RATE = 5e6


def portfolio(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    seed=None,
    time_limit: float | None = None,
    objective="lm",
    methods: Sequence[str] | None = None,
    stretch_k: int | None = None,
) -> Release:
    """The verified release with the least `objective` among the candidates.

    Parameters
    ----------
    instance, requirements, seed
        As in :func:`fairanon.anonymize`.
    time_limit : float, optional
        Seconds for all candidates together; each candidate gets all the time left and
        one that would not fit (k-member and OKA by their expected time) is skipped.
        Without it every candidate runs to completion and no clock decides anything,
        so the same input and seed give the same release; candidates expected to take
        long are skipped by rules on the table's size (:func:`_too_long`).
    objective : str or pair of str, default="lm"
        The objective the releases are compared by, exactly
        (:func:`fairanon.models.objectives.objective_value`): ``"lm"``, ``"ncp"``, any
        other of :data:`fairanon.models.objectives.OBJECTIVES`, a privacy objective or
        a lexicographic pair. The lattice local recoding is told it when it takes it
        (``"lm"``, ``"ncp"``, ``"generalized"``, ``"stars"``), else its cell loss (LM for
        ``"lm"``, else NCP).
    methods : sequence of str, optional
        Names from :data:`CANDIDATES`, in the order to run them (default: all).
    stretch_k : int, optional
        k' of ``objective="privacy_stretch"``.

    Returns
    -------
    Release
        The winner's release; ``provenance["portfolio"]`` lists every candidate (its
        exact loss for display, seconds, or why it was skipped or rejected),
        ``provenance["portfolio_method"]`` and ``provenance["portfolio_winner"]`` name
        the winner and ``provenance["portfolio_objective"]`` gives the loss compared.

        When no candidate gives a verified release and one proved that none exists
        (Mondrian: the whole table, or the records of one protected value, fail a
        union-monotone requirement), that candidate's INFEASIBLE release with its reason.
        When the time limit runs out before any candidate gives a verified release, an
        UNKNOWN release (every cell ``*``, not a release to publish) whose ``reason``
        says what each candidate did.

    Raises
    ------
    IncompatibleRequirementError
        When no candidate gives a verified release, none proved that no release
        exists, and time was not what stopped them.
    InvalidParameterError
        For an unknown candidate or objective.
    """
    return ranked(
        instance, requirements, seed=seed, time_limit=time_limit, objective=objective,
        methods=methods, stretch_k=stretch_k,
    )[0]


def ranked(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    seed=None,
    time_limit: float | None = None,
    objective="lm",
    methods: Sequence[str] | None = None,
    stretch_k: int | None = None,
) -> list[Release]:
    """Every verified release of the candidates, least `objective` first (ties in the
    order they ran), each with the provenance of :func:`portfolio`'s release but its own
    candidate's name in ``portfolio_method`` (``portfolio_winner`` is on the first
    only); the parameters, and the error when there is none, are :func:`portfolio`'s.
    The runners-up guide the large-neighbourhood search that ``auto`` runs after the
    winner (:func:`fairanon.methods.lns.lns`). When there is none and a candidate
    proved that none exists, its INFEASIBLE release alone."""
    started = time.perf_counter()
    spec = objective_spec(objective, "portfolio", stretch_k=stretch_k, default="lm")
    key = str(spec)  # the objective's name, as the entries and the provenance give it
    names = _names(methods)
    budget = None if time_limit is None else float(time_limit)
    deadline = None if budget is None else started + budget
    tried: list[dict] = []
    found: list[tuple] = []  # (value, order, release, name)
    proofs: list[tuple] = []  # (release, name) of candidates that proved infeasibility
    # Time kept for checking and measuring each release, re-estimated as they come.
    post = 0.0 if budget is None else 0.1 * budget
    for name in names:
        left = None if deadline is None else deadline - time.perf_counter() - post
        if left is not None and left <= 0:
            tried.append({"method": name, "skipped": "no time left"})
            continue
        skip = _too_long(name, instance, requirements, left)
        if skip:
            tried.append({"method": name, "skipped": skip})
            continue
        clock = time.perf_counter()
        told = spec if spec in LATTICE_LOCAL_OBJECTIVES else _cell_loss(spec)
        options = {"objective": told} if name in _LOSS_LED else {}
        try:
            release = CANDIDATES[name](
                instance, requirements, seed=seed, time_limit=left, **options
            )
        except FairanonError as exc:
            # Cut at a word, not in one.
            said = textwrap.shorten(str(exc), 160, placeholder=" …")
            tried.append({"method": name, "skipped": f"{type(exc).__name__}: {said}"})
            continue
        seconds = time.perf_counter() - clock
        measured = time.perf_counter()
        if release.status not in (Status.FEASIBLE, Status.OPTIMAL):
            tried.append({"method": name, "status": str(release.status), "seconds": seconds})
            if release.status == Status.INFEASIBLE:
                proofs.append((release, name))
            continue
        # Most methods attach the verifier's report (run on their release by the
        # independent verifier); any release without one is verified here.
        checked = (release.provenance.get("verification") or {}).get("passed")
        if checked is not True and not verify(instance, release, requirements, metrics=False).passed:
            tried.append({"method": name, "status": "not verified", "seconds": seconds})
            continue
        value = objective_value(instance, release, spec)
        post = max(post, 1.5 * (time.perf_counter() - measured))
        tried.append(
            {
                "method": name,
                "status": str(release.status),
                key: value_for_display(value),
                "seconds": seconds,
            }
        )
        found.append((value, len(found), release, name))
    if not found and proofs:
        release, name = proofs[0]
        return [release.with_provenance(portfolio=tried, portfolio_method=name,
                                        portfolio_objective=key, portfolio_winner=name)]
    if not found and deadline is not None and any(
            t.get("skipped") == "no time left" or t.get("status") == str(Status.UNKNOWN)
            for t in tried):
        # Out of time, not out of methods: say so in an UNKNOWN release, as the methods do.
        reason = (
            f"the time limit ({budget:g} s) ran out before a method of the portfolio gave a "
            "verified release: "
            + "; ".join(f"{t['method']}: {t.get('skipped', t.get('status'))}" for t in tried)
        )
        record = provenance("portfolio", {"objective": key, "time_limit": budget}, requirements,
                            seed, started, portfolio=tried, portfolio_objective=key,
                            portfolio_winner=None)
        return [_all_suppressed(instance, record, Status.UNKNOWN, reason)]
    if not found:
        raise IncompatibleRequirementError(
            "No method of the portfolio gave a verified release for "
            f"{', '.join(str(r) for r in requirements)}"
            + ("" if budget is None else f" within {budget:g} s")
            + ": "
            + "; ".join(f"{t['method']}: {t.get('skipped', t.get('status'))}" for t in tried)
        )
    found.sort(key=lambda f: (f[0], f[1]))
    out = [
        release.with_provenance(portfolio=tried, portfolio_method=name, portfolio_objective=key)
        for _, _, release, name in found
    ]
    out[0] = out[0].with_provenance(portfolio_winner=found[0][3])
    return out


def _names(methods) -> list[str]:
    """The candidates to run, checked: all of :data:`CANDIDATES` for None."""
    if methods is None:
        return list(CANDIDATES)
    try:
        names = None if isinstance(methods, str) else list(methods)
    except TypeError:
        names = None
    if not names or any(not isinstance(n, str) or n not in CANDIDATES for n in names):
        raise InvalidParameterError(
            f"The 'methods' parameter of portfolio must be a list of names from "
            f"{sorted(CANDIDATES)}. Got {methods!r} instead."
        )
    return names


def _too_long(name: str, instance: Instance, requirements, left: float | None) -> str:
    """Why candidate `name` is skipped (empty when it runs): k-member and OKA when their
    expected time does not fit in the time left (:data:`PORTFOLIO_SECONDS` without a
    time limit); without one, also the lattice local recoding above
    :data:`LATTICE_LOCAL_ROWS` records and Mondrian with least-loss cuts when its
    expected time (:data:`MONDRIAN_LOSS_RATE`) is above :data:`PORTFOLIO_SECONDS`."""
    fits = PORTFOLIO_SECONDS if left is None else min(left, QUADRATIC_SECONDS)
    expected = _expected_seconds(name, instance, requirements)
    if left is None and name == "mondrian-loss":
        n, d = instance.n_rows, max(len(instance.schema.generalizable), 1)
        expected = n * d * d * math.log2(max(n, 2)) / MONDRIAN_LOSS_RATE
    if expected is not None and expected > fits:
        return too_long(expected, fits) + (
            "; give a time limit to run it" if left is None else ""
        )
    if left is None and name == "lattice-local" and instance.n_rows > LATTICE_LOCAL_ROWS:
        return f"more than {LATTICE_LOCAL_ROWS:,} records; give a time limit to run it"
    return ""
