"""Risk requirements for the top-down methods: the smallest k whose release meets them.

Average risk, sample uniques and population uniques are properties of the whole
release, not of each class, so top-down splitting cannot check them cut by cut. They
are enforced around a run instead: the method runs with k-anonymity added (the
requirements' own k, else 1), the released classes are checked exactly
(:func:`fairanon.models.risk.requirements.risk_requirement`, the verifier's function),
and k is doubled until the release meets every risk requirement, then bisected down to
the smallest k that does. Larger classes lower the average risk (J ≤ n/k ≤ r·n once
k ≥ 1/r) and remove sample uniques (none once k ≥ 2, and then Zayatz's and Dankar's
estimates are 0), so the search ends for those; Pitman's and SNB's estimates need not
fall with k, and when no k up to n meets them the release is INFEASIBLE with the reason.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

from ..models.requirements import RISK_REQUIREMENTS, KAnonymity, Requirement
from ..models.risk.classes import risk_classes
from ..models.risk.requirements import risk_requirement
from ..release import Release, Status

__all__ = ["split_risk", "smallest_k"]


def split_risk(requirements: Sequence[Requirement]) -> tuple[list, list]:
    """(risk requirements, the others)."""
    risk = [r for r in requirements if isinstance(r, RISK_REQUIREMENTS)]
    return risk, [r for r in requirements if not isinstance(r, RISK_REQUIREMENTS)]


def _unmet(instance, release: Release, risk: Sequence[Requirement]) -> list[str]:
    sizes = risk_classes(instance, release, caller="the risk search").sizes
    return [f"{req} ({result.detail})" for req in risk if not (result := risk_requirement(req, sizes)).passed]


def smallest_k(
    run: Callable[[list, float | None], Release],
    instance,
    requirements: Sequence[Requirement],
    time_limit: float | None,
) -> Release:
    """The release of `run` for the smallest k found to meet the risk requirements.

    Parameters
    ----------
    run : callable
        ``run(requirements, time_limit) -> Release``: the method on requirements without
        risk requirements (and with the k tried).
    instance : Instance
    requirements : sequence of Requirement
        All the requirements, risk ones included.
    time_limit : float or None
        Seconds for the whole search; each run gets what is left.

    Returns
    -------
    Release
        The release for the smallest k that met them, with ``provenance["risk_k"]``
        (that k) and ``provenance["risk_tries"]`` (k → met or not), and the original
        requirements in its provenance; INFEASIBLE when no k up to n meets them, or when
        the method itself finds the other requirements infeasible; UNKNOWN when the time
        runs out first.
    """
    started = time.perf_counter()
    risk, others = split_risk(requirements)
    base = max([r.k for r in others if isinstance(r, KAnonymity)] + [1])
    rest = [r for r in others if not isinstance(r, KAnonymity)]
    n = instance.n_rows
    tries: dict[int, bool] = {}
    releases: dict[int, Release] = {}

    def left() -> float | None:
        return None if time_limit is None else max(time_limit - (time.perf_counter() - started), 1e-3)

    last: dict = {}

    def outcome(k: int) -> str:
        """"meets", "fails" (a release that misses a risk requirement) or "infeasible"."""
        release = run(rest + [KAnonymity(k)], left())
        last["release"] = release
        if release.status in (Status.INFEASIBLE, Status.UNKNOWN):
            last["infeasible"] = (k, release.reason)
            return "infeasible"
        unmet = _unmet(instance, release, risk)
        tries[k] = not unmet
        if unmet:
            last["unmet"] = unmet
            return "fails"
        releases[k] = release
        return "meets"

    def finish(status=None, reason=None) -> Release:
        extra = {"requirements": [str(r) for r in requirements],
                 "risk_tries": {str(k): v for k, v in sorted(tries.items())}}
        if status is None:
            k = min(releases)
            extra["risk_k"] = k
            return releases[k].with_provenance(**extra)
        return dataclasses.replace(last["release"], status=status, reason=reason).with_provenance(**extra)

    def out_of_time() -> bool:
        return time_limit is not None and time.perf_counter() - started >= time_limit

    lo = min(base, n)
    first = outcome(lo)
    if first == "meets":
        return finish()
    if first == "infeasible":
        return finish(Status.INFEASIBLE, last["infeasible"][1])
    # Gallop: double k until a release meets them, or k is infeasible, or k = n.
    top = None
    while top is None:
        if out_of_time():
            return finish(Status.UNKNOWN, f"the time ran out before a k met {'; '.join(last['unmet'])}")
        if lo >= n:
            return finish(Status.INFEASIBLE, f"no k up to the {n} records gives a release meeting "
                                             f"{'; '.join(last['unmet'])}")
        k = min(2 * lo, n)
        result = outcome(k)
        if result == "fails":
            lo = k
        else:
            top = k
    # Bisect (lo, top): lo fails; top meets them or is infeasible.
    while top - lo > 1 and not out_of_time():
        mid = (lo + top) // 2
        result = outcome(mid)
        if result == "fails":
            lo = mid
        else:
            top = mid
    if releases:
        return finish()
    if out_of_time():
        return finish(Status.UNKNOWN, f"the time ran out before a k met {'; '.join(last['unmet'])}")
    k, why = last["infeasible"]
    return finish(Status.INFEASIBLE, f"no k up to {lo} meets {'; '.join(last['unmet'])}, and k = {k} is "
                                     f"infeasible: {why}")
