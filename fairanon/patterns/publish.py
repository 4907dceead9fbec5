"""Publishing a pattern set: the methods table, the orchestration and the re-check.

:func:`publish` takes a mined :class:`PatternSet` and :class:`PatternRequirements`
(measure, α, reading, and optionally k and d), runs a method ("greedy": the paper's
algorithms with the fixes of docs/papers.md; "exact": the CP-SAT model of
:mod:`fairanon.patterns.exact`), then re-checks the result with the independent
:func:`verify_patterns` and returns a :class:`PatternRelease`. :func:`publish_dp` does
the same from a database through PrivBasis (Alg. 7).
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Callable
from typing import Any

from ..exceptions import InvalidParameterError
from ..release import Status, provenance
from .dp import privbasis
from .exact import exact_patterns
from .measures import SLIFT_FAMILY
from .mining import TransactionDB
from .patternset import PatternSet, Roles
from .release import PatternRelease, PatternRequirements
from .sanitize import SanitizationResult, sanitize
from .verify import PatternReport, verify_patterns

__all__ = ["PATTERN_METHODS", "greedy", "publish", "publish_dp", "verify_release"]


def verify_release(release: PatternRelease) -> PatternReport:
    """Run :func:`verify_patterns` on a release's published set, with the database plus
    the published virtual transactions (or the published noisy bins) as the source of
    supports for itemsets the set does not list."""
    reqs = release.requirements
    ps = release.patterns
    notes = []
    if ps.provenance.get("epsilon") is not None:
        notes.append("ε-differential privacy holds by construction (PrivBasis then post-processing); it cannot be checked from the output")
    return verify_patterns(
        ps.published(),
        roles=ps.roles,
        empty_support=ps.empty_support,
        measure=reqs.measure,
        alpha=reqs.alpha,
        reading=reqs.reading,
        d=reqs.d,
        k=reqs.k,
        closed=ps.closed,
        support_of=ps.support if ps.source is not None else None,
        original=release.original.published() if ps.provenance.get("epsilon") is None else None,
        domain=getattr(ps.source, "items", ()) or (),
        strict_undefined=reqs.strict_undefined,
        notes=notes,
    )


def _reason(result: SanitizationResult) -> str | None:
    if result.converged:
        return None
    parts = [result.stop_reason]
    if result.residual:
        shown = "; ".join(f"{{{', '.join(sorted(f.pattern))}}} = {float(f.value):.4g}" for f in result.residual[:5])
        parts.append(f"{len(result.residual)} pattern(s) still α-discriminatory: {shown}")
    if result.unsanitizable:
        parts.append(f"{len(result.unsanitizable)} pattern(s) no support increase of this method can make protective")
    # Union targets change only slift-family targets other than clift's (measures.target).
    union_helps = result.options.get("measure") in SLIFT_FAMILY - {"clift"}
    if result.options.get("targets") == "paper" and result.residual and union_helps:
        parts.append("try targets='union' (docs/papers.md, HJ-2) or method='exact'")
    else:
        parts.append("try method='exact'")
    return "; ".join(p for p in parts if p)


def greedy(patterns: PatternSet, requirements: PatternRequirements, *, seed=None, time_limit=None, **options) -> PatternRelease:
    """The paper's algorithms with the fixes of docs/papers.md (:func:`fairanon.patterns.sanitize`).

    Options: ``recheck`` (default True), ``max_rounds`` (100), ``ceil`` (False),
    ``guard_channels`` (True), ``targets`` ("paper"; "union" settles the re-check loop, HJ-2). `seed` and `time_limit` are accepted for the common
    method signature; the method is deterministic.
    """
    started = time.perf_counter()
    result = sanitize(
        patterns, requirements.measure, requirements.alpha, k=requirements.k, d=requirements.d,
        reading=requirements.reading, **options,
    )
    status = Status.FEASIBLE if result.converged else Status.INFEASIBLE
    return PatternRelease(
        patterns=result.patterns,
        original=patterns,
        requirements=requirements,
        status=status,
        reason=_reason(result),
        objective=result.added_support,
        provenance=provenance("greedy", {**result.options}, [str(requirements)], seed, started,
                              rounds=result.rounds, steps=len(result.steps), stop_reason=result.stop_reason),
        result=result,
    )


#: Methods for pattern sets; each is ``(patterns, requirements, *, seed, time_limit, **options) -> PatternRelease``.
PATTERN_METHODS: dict[str, Callable[..., PatternRelease]] = {"greedy": greedy, "exact": exact_patterns}
#: The options :func:`greedy` passes on to :func:`~fairanon.patterns.sanitize`.
GREEDY_OPTIONS = ("recheck", "max_rounds", "ceil", "guard_channels", "targets")


def _options_of(method: str) -> tuple:
    """The keyword options a named method takes besides `seed` and `time_limit`."""
    if method == "greedy":
        return GREEDY_OPTIONS
    params = inspect.signature(PATTERN_METHODS[method]).parameters.values()
    return tuple(p.name for p in params if p.kind == p.KEYWORD_ONLY and p.name not in ("seed", "time_limit"))


def publish(
    patterns: PatternSet,
    requirements: PatternRequirements | None = None,
    *,
    method: str | Callable = "greedy",
    seed=None,
    time_limit: float | None = None,
    verify: bool = True,
    **options,
) -> PatternRelease:
    """Publish a pattern set that meets `requirements`, verified independently.

    Parameters
    ----------
    patterns : PatternSet
        From :meth:`PatternSet.from_db` (or any PatternSet).
    requirements : PatternRequirements, optional
        Default: slift < 1.2 (strict reading), no k, no d.
    method : {"greedy", "exact"} or callable, default="greedy"
    seed, time_limit
        As in :func:`fairanon.anonymize`.
    verify : bool, default=True
        Attach the :func:`verify_patterns` report.
    **options
        Passed to the method.

    Returns
    -------
    PatternRelease

    Examples
    --------
    >>> from fairanon.patterns import PatternSet, Roles, TransactionDB
    >>> db = TransactionDB.from_counts({("f", "v", "C"): 20, ("f", "v"): 14, ("v", "C"): 19, ("v",): 28})
    >>> ps = PatternSet.from_db(db, 1, Roles({"f"}, "C"), backend="apriori")
    >>> rel = publish(ps, PatternRequirements("slift", 1.25))
    >>> rel.status, rel.passed, [(sorted(t), n) for t, n in rel.patterns.ledger]
    (<Status.FEASIBLE: 'FEASIBLE'>, True, [(['f', 'v'], 6)])
    """
    if not isinstance(patterns, PatternSet):
        raise InvalidParameterError(f"The 'patterns' parameter of publish must be a PatternSet. Got {type(patterns).__name__} instead.")
    requirements = PatternRequirements() if requirements is None else requirements
    if not isinstance(requirements, PatternRequirements):
        raise InvalidParameterError(
            f"The 'requirements' parameter of publish must be a PatternRequirements. Got {type(requirements).__name__} instead."
        )
    if callable(method):
        func = method
    elif isinstance(method, str) and method in PATTERN_METHODS:
        func = PATTERN_METHODS[method]
    else:
        raise InvalidParameterError(f"The 'method' parameter of publish must be one of {sorted(PATTERN_METHODS)} or a callable. Got {method!r} instead.")
    if isinstance(method, str):
        unknown = sorted(set(options) - set(_options_of(method)))
        if unknown:
            raise InvalidParameterError(
                f"publish(method={method!r}) takes the options {list(_options_of(method))}. Got {unknown} instead."
            )
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or time_limit <= 0):
        raise InvalidParameterError(f"The 'time_limit' parameter of publish must be a positive number of seconds or None. Got {time_limit!r} instead.")
    release = func(patterns, requirements, seed=seed, time_limit=time_limit, **options)
    if not isinstance(release, PatternRelease):
        raise InvalidParameterError(f"Method {method!r} returned {type(release).__name__}, not a PatternRelease.")
    if verify:
        release = _with_report(release, verify_release(release))
    return release


def _with_report(release: PatternRelease, report: PatternReport) -> PatternRelease:
    return dataclasses.replace(release, report=report)


def publish_dp(
    db: TransactionDB,
    k_top: int,
    epsilon: Any,
    roles: Roles,
    requirements: PatternRequirements | None = None,
    *,
    seed=None,
    privbasis_options: dict | None = None,
    **options,
) -> PatternRelease:
    """α-protective ε-DP patterns (Alg. 7): PrivBasis, then the greedy sanitization of
    the noisy set, then verification against the noisy supports.

    `requirements.k` and `requirements.d` must be None (the paper combines DP with
    α-protection only).
    """
    requirements = PatternRequirements() if requirements is None else requirements
    if requirements.k is not None or requirements.d is not None:
        raise InvalidParameterError("publish_dp combines ε-DP with α-protection only; set k=None and d=None.")
    unknown = sorted(set(options) - set(GREEDY_OPTIONS))
    if unknown:
        raise InvalidParameterError(f"publish_dp takes the options {list(GREEDY_OPTIONS)}. Got {unknown} instead.")
    started = time.perf_counter()
    priv = privbasis(db, k_top, epsilon, roles, seed=seed, **(privbasis_options or {}))
    release = greedy(priv.patterns, requirements, seed=seed, **options)
    release = _dp_provenance(release, priv, started, seed)
    return _with_report(release, verify_release(release))


def _dp_provenance(release, priv, started, seed):
    prov = dict(release.provenance)
    prov.update(provenance("privbasis+greedy", {"epsilon": str(priv.epsilon), "split": [str(s) for s in priv.split]},
                           [str(release.requirements)], seed, started, lam=priv.lam, n_bases=len(priv.bins.bases)))
    return dataclasses.replace(release, provenance=prov)

