"""The front door: :func:`anonymize` and the table of methods behind it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ._validation import check_random_state
from .exceptions import IncompatibleRequirementError, InvalidParameterError
from .heuristics.mondrian import mondrian
from .instances.instance import Instance
from .models.requirements import Requirement, validate_requirements
from .release import Release

__all__ = ["METHODS", "anonymize", "choose_method"]


def _auto(instance: Instance, requirements: Sequence[Requirement], *, seed=None, time_limit=None, **options) -> Release:
    """Pick a method for the instance and the requirements, and say which in provenance."""
    name, why = choose_method(instance, requirements)
    release = METHODS[name](instance, requirements, seed=seed, time_limit=time_limit, **options)
    return release.with_provenance(auto_choice=name, auto_reason=why)


#: Method names and the functions behind them. Each takes
#: ``(instance, requirements, *, seed, time_limit, **options)`` and returns a Release.
METHODS: dict[str, Callable[..., Release]] = {
    "auto": _auto,
    "mondrian": mondrian,
}


def choose_method(instance: Instance, requirements: Sequence[Requirement]) -> tuple[str, str]:
    """The method ``"auto"`` runs, and why.

    Raises
    ------
    IncompatibleRequirementError
        If no available method can enforce every requirement.
    """
    unsupported = [r for r in requirements if not r.union_monotone]
    if unsupported:
        raise IncompatibleRequirementError(
            f"No available method enforces {', '.join(str(r) for r in unsupported)} "
            f"together with split-based anonymization; methods: {sorted(METHODS)}."
        )
    return "mondrian", "every requirement is union-monotone, so top-down Mondrian splitting enforces them"


def anonymize(
    instance: Instance,
    requirements: Sequence[Requirement] | Requirement,
    method: str | Callable[..., Release] = "auto",
    *,
    seed=None,
    time_limit: float | None = None,
    **options,
) -> Release:
    """Anonymize `instance` so that it meets every requirement.

    Parameters
    ----------
    instance : Instance
        For example ``fa.load("adult")``.
    requirements : sequence of Requirement
        KAnonymity, LDiversity, TCloseness, DiversityConstraint, AlphaProtection.
    method : str or callable, default="auto"
        A name from :data:`METHODS`, or any callable with the same signature.
    seed : None, int or numpy.random.Generator
        For every randomized step; the same input and seed give the same release.
    time_limit : float, optional
        Seconds; methods stop (with a valid, possibly coarser release) when it runs out.
    **options
        Passed to the method (e.g. ``cut_rule="balanced"`` for Mondrian).

    Returns
    -------
    Release
        Check it with :func:`fairanon.verify`; nothing returned here is trusted unchecked.

    Raises
    ------
    InvalidParameterError
        Unknown method, bad seed or time limit, k larger than the table, ...
    IncompatibleRequirementError
        The method cannot enforce a requirement, or a requirement does not fit the data.

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> rel = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian")
    >>> rel.status, fa.verify(inst, rel, [fa.KAnonymity(3)]).passed
    (<Status.FEASIBLE: 'FEASIBLE'>, True)
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of anonymize must be an Instance (e.g. fa.load('adult')). "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="anonymize")
    if callable(method):
        func, name = method, getattr(method, "__name__", "custom")
    elif isinstance(method, str) and method in METHODS:
        func, name = METHODS[method], method
    else:
        raise InvalidParameterError(
            f"The 'method' parameter of anonymize must be one of {sorted(METHODS)} or a callable. "
            f"Got {method!r} instead."
        )
    check_random_state(seed)
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or time_limit <= 0):
        raise InvalidParameterError(
            f"The 'time_limit' parameter of anonymize must be a positive number of seconds or None. Got {time_limit!r} instead."
        )
    release = func(instance, requirements, seed=seed, time_limit=time_limit, **options)
    if not isinstance(release, Release):
        raise InvalidParameterError(f"Method {name!r} returned {type(release).__name__}, not a Release.")
    return release.with_provenance(
        method=release.provenance.get("method", name), total_elapsed_s=time.perf_counter() - started
    )
