"""The front door: :func:`anonymize` and the table of methods behind it."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import sys
import time
from collections.abc import Callable, MutableMapping, Sequence
from typing import TYPE_CHECKING

from ._limits import MIN_METHOD_SECONDS
from ._memory import memory_limit_context
from ._validation import check_bool, check_random_state, check_time_limit
from .exceptions import IncompatibleRequirementError, InvalidParameterError, MemoryLimitError
from .instances.instance import Instance
from .models.requirements import (
    RISK_REQUIREMENTS,
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    MultiplicativeTCloseness,
    Requirement,
    StochasticTCloseness,
    validate_requirements,
)
from .release import Release, Status

if TYPE_CHECKING:
    from .models.risk.report import RiskReport
    from .models.verify import Report

__all__ = ["ENGINES", "METHODS", "anonymize", "check_options", "choose_method", "method_options", "risk", "verify"]

#: The verifier's and the risk report's functions, imported on first use like the methods
#: (:func:`_late`): importing this module imports neither (scipy among them).
_LATE = {
    "_verify_local": ("fairanon.models.verify", "verify"),
    "_risk_local": ("fairanon.models.risk.report", "risk"),
    "release_risk": ("fairanon.models.risk.report", "release_risk"),
    "risk_options": ("fairanon.models.risk.report", "risk_options"),
}


def _late(name: str):
    """The function `name` of :data:`_LATE`, imported on first use and kept as this
    module's global of that name (which stays replaceable, e.g. by a test)."""
    value = globals().get(name)
    if value is None:
        module, attr = _LATE[name]
        value = globals()[name] = getattr(importlib.import_module(module), attr)
    return value


def __getattr__(name: str):
    if name in _LATE:
        return _late(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Where a method runs: "local" (this process, pandas and numpy) or "dask" (a Dask
#: DataFrame, on the current distributed client or Dask's default scheduler).
ENGINES = ("local", "dask")


def _auto(instance: Instance, requirements: Sequence[Requirement], *, seed=None, time_limit=None, _started=None,
          **options) -> Release:
    """Pick a method for the instance and the requirements, and say which in provenance.
    The time limit counts from `_started` (a ``time.perf_counter`` value; default: now),
    :func:`anonymize`'s start, so that the import of the methods counts in it while the
    choice is made on the limit as given."""
    started = time.perf_counter() if _started is None else _started
    name, why, extra = _choose(instance, requirements, time_limit, options)
    options = {**extra, **options}
    check_options(name, options)
    given = time_limit
    if name in _EXACT and time_limit is None:
        time_limit = AUTO_EXACT_SECONDS  # the size rule promises an answer in about this time
    # What came before the method: anonymize's import of the methods and the choice.
    before = time.perf_counter() - started
    if name == "portfolio":
        return _auto_portfolio(instance, requirements, seed, time_limit, why, options,
                               started).with_provenance(auto_before_s=before)
    # The choice (the models' sizes: 0.1 s CPU on UCI Adult) counts in a time limit given;
    # what follows is decided on the limit as given. Without one, an exact model gets
    # all of AUTO_EXACT_SECONDS.
    if given is None:
        left = time_limit
    else:
        left = max(MIN_METHOD_SECONDS, time_limit - before)
    if name not in _EXACT and _lns_after(name, requirements, time_limit, options):
        from .methods.lns import lns

        release = lns(instance, requirements, seed=seed, time_limit=left, start=[name])
        why = (
            f"{why}; with {time_limit:g} s allowed, large-neighbourhood search (lns) then "
            f"improves {name}'s release by re-solving groups of its classes exactly"
            + (", and bounds the loss from below" if release.bound is not None else "")
        )
        return release.with_provenance(auto_choice=f"{name}+lns", auto_reason=why, auto_time_limit=time_limit,
                                       auto_before_s=before)
    release = METHODS[name](instance, requirements, seed=seed, time_limit=left, **options)
    if name == "fulldomain" and release.status in (Status.INFEASIBLE, Status.UNKNOWN):
        return _after_fulldomain(instance, requirements, seed, release, why, time_limit, started,
                                 before, options)
    return release.with_provenance(auto_choice=name, auto_reason=why, auto_time_limit=time_limit,
                                   auto_before_s=before)


def _after_fulldomain(instance, requirements, seed, found: Release, why, time_limit, started,
                      before, options) -> Release:
    """When no full-domain generalization was found to meet requirements that are not
    union-monotone, local recoding may still meet them (German credit, k = 5 and 300 to
    630 skilled workers shown: none of the 2,430 lattice nodes, while diva's release
    does): cpsat then runs in the time left (its heuristic starts, then its model or lns),
    and its release is returned. Without a release from it either, its UNKNOWN (or
    INFEASIBLE, a proof over local recoding) says both; fulldomain's proof covers its
    lattice only, so it is returned as INFEASIBLE only where :func:`_no_release_exists`
    proves that no release meets the requirements. Without a time limit, the
    two share AUTO_EXACT_SECONDS, as an exact choice gets."""
    from .exceptions import FairanonError

    left = time_limit - (time.perf_counter() - started)  # AUTO_EXACT_SECONDS when none given
    proven = found.status == Status.INFEASIBLE
    proof = _no_release_exists(instance, requirements) if proven else None
    if proof is not None:
        release = dataclasses.replace(found, reason=f"{found.reason}; {proof}")
        return release.with_provenance(auto_choice="fulldomain", auto_reason=why,
                                       auto_time_limit=time_limit, auto_before_s=before)
    said = f"fulldomain found no release ({found.status}: {found.reason})"
    if left < MIN_METHOD_SECONDS:
        release = dataclasses.replace(found, status=Status.UNKNOWN,
                                      reason=f"{said}; no time was left for local recoding")
        return release.with_provenance(auto_choice="fulldomain", auto_reason=why,
                                       auto_time_limit=time_limit, auto_before_s=before)
    # The options cpsat shares with fulldomain (the objective above all); the others
    # are fulldomain's own.
    accepted = inspect.signature(METHODS["cpsat"]).parameters
    shared = {key: value for key, value in options.items() if key in accepted}
    try:
        release = METHODS["cpsat"](instance, requirements, seed=seed, time_limit=left, **shared)
    except FairanonError as exc:
        release = dataclasses.replace(found, status=Status.UNKNOWN,
                                      reason=f"{said}; cpsat cannot search it: {exc}")
        return release.with_provenance(auto_choice="fulldomain", auto_reason=why,
                                       auto_time_limit=time_limit, auto_before_s=before)
    why = f"{why}; {said}, so cpsat searched local recodings in the {left:.1f} s left"
    if release.status == Status.UNKNOWN:
        release = dataclasses.replace(release, reason=f"{said}; {release.reason}")
    return release.with_provenance(auto_choice="fulldomain, then cpsat", auto_reason=why,
                                   auto_time_limit=time_limit, auto_before_s=before)


def _auto_portfolio(instance, requirements, seed, time_limit, why, options, started) -> Release:
    """The portfolio's best verified release, improved by lns when the time allows and
    the memory limit admits its search (else the portfolio's release, with the reason);
    the time limit counts from `started`, before the choice was made."""
    from .methods.lns import lns
    from .methods.portfolio import ranked

    after = _lns_after("portfolio", requirements, time_limit, {})
    budget = None
    if time_limit is not None:
        share = time_limit * AUTO_PORTFOLIO_SHARE if after else time_limit
        budget = max(share - (time.perf_counter() - started), MIN_METHOD_SECONDS)
    releases = ranked(instance, requirements, seed=seed, time_limit=budget, **options)
    release = releases[0]
    tried = release.provenance["portfolio"]
    winner = release.provenance["portfolio_winner"]
    if release.status == Status.INFEASIBLE:
        why = f"{why}; {winner} proved that no release exists"
        return release.with_provenance(auto_choice=winner, auto_reason=why,
                                       auto_time_limit=time_limit)
    if release.status == Status.UNKNOWN:  # the time ran out before any method's release
        return release.with_provenance(auto_choice="portfolio",
                                       auto_reason=f"{why}; {release.reason}",
                                       auto_time_limit=time_limit)
    key = release.provenance["portfolio_objective"]
    cells = instance.n_rows * max(len(instance.schema.qi), 1)
    ran = ", ".join(f"{t['method']} {_per_cell(t[key], cells)}" for t in tried if key in t)
    why = (
        f"{why}; of the portfolio's verified releases ({key} per cell: {ran}), "
        f"{winner}'s loses least"
    )
    choice = winner
    if after:
        left = time_limit - (time.perf_counter() - started)
        if left > 0:
            try:
                improved = lns(
                    instance, requirements, seed=seed, time_limit=left,
                    start=releases[:AUTO_LNS_GUIDES + 1], objective=options.get("objective", "lm"),
                    stretch_k=options.get("stretch_k"),
                )
            except MemoryLimitError as exc:
                # Refused before its search: the portfolio's release stands.
                said = str(exc)
                why = f"{why}; large-neighbourhood search (lns) would follow, but {said[:1].lower()}{said[1:]}"
            else:
                release = improved.with_provenance(portfolio=tried, portfolio_winner=winner)
                choice = f"{winner}+lns"
                why = (
                    f"{why}; with {time_limit:g} s allowed, large-neighbourhood search (lns) then "
                    f"improves it by re-solving groups of its classes exactly, the classes of the "
                    "next best releases among the candidates"
                    + (", and bounds the loss from below" if improved.bound is not None else "")
                )
    return release.with_provenance(auto_choice=choice, auto_reason=why, auto_time_limit=time_limit)


def _no_release_exists(instance: Instance, requirements) -> str | None:
    """Why no release at all meets `requirements`, when one of two checks proves it
    (else None): the whole table, a context of every release, fails an alpha-protection
    (the verifier's check of the release of one class, whose only context is the whole
    table); or a diversity constraint asks for more records showing its target values
    than the table shows with no cell generalized (a release only hides values)."""
    import numpy as np

    from .models.verify import verify
    from .release import generalize_partition

    said = []
    alphas = [r for r in requirements if isinstance(r, AlphaProtection)]
    if alphas:
        groups = np.zeros(instance.n_rows, dtype=np.int64)
        one = Release(generalize_partition(instance, groups), groups)
        failed = verify(instance, one, alphas, metrics=False).failures
        said += [f"the whole table, a context of every release, fails {c.name} "
                 f"({float(c.achieved):.4g})" for c in failed]
    floors = [r for r in requirements if isinstance(r, DiversityConstraint)]
    if floors:
        shown = Release(instance.table.copy(), np.arange(instance.n_rows))
        report = verify(instance, shown, floors, metrics=False)
        said += [f"{r} asks for at least {r.lower} records, and the table shows "
                 f"{report[str(r)].achieved} with no cell generalized"
                 for r in floors if report[str(r)].achieved < r.lower]
    return "; ".join(said) + ": no release meets it" if said else None


def _per_cell(value, cells: int) -> str:
    """A portfolio entry's value (a float, or a list for a lexicographic pair) per cell."""
    values = value if isinstance(value, list) else [value]
    return "/".join(f"{float(v) / cells:.4f}" for v in values)


#: The portfolio's runners-up whose classes guide the lns that follows it.
AUTO_LNS_GUIDES = 2
#: The share of a time limit the portfolio gets when lns follows it.
AUTO_PORTFOLIO_SHARE = 0.4

#: With a time limit of at least this many seconds, "auto" improves a heuristic's
#: release by large-neighbourhood search (the heuristic itself takes well under a second
#: on the bundled data; a search needs seconds to move).
AUTO_LNS_SECONDS = 10.0


def _lns_after(name: str, requirements: Sequence[Requirement], time_limit, options) -> bool:
    """Whether "auto" runs lns after the heuristic `name`: a time limit that allows it,
    requirements lns enforces, and no option meant for the heuristic alone."""
    from .methods.lns import REQUIREMENTS as LNS_REQUIREMENTS
    from .methods.starts import HEURISTICS

    return (
        time_limit is not None
        and time_limit >= AUTO_LNS_SECONDS
        and not options
        and (name == "portfolio" or name in {h[0] for h in HEURISTICS})
        and all(isinstance(r, LNS_REQUIREMENTS) for r in requirements)
    )


#: Where each method's function lives (module, name), "auto" being :func:`_auto` here.
_METHOD_SOURCES: dict[str, tuple[str, str]] = {
    "auto": (__name__, "_auto"),
    "mondrian": ("fairanon.heuristics.mondrian", "mondrian"),
    "mondrian-relaxed": ("fairanon.heuristics.mondrian", "mondrian_relaxed"),
    "mondrian-loss": ("fairanon.heuristics.lossmondrian", "mondrian_loss"),
    "dmondrian": ("fairanon.heuristics.dmondrian", "dmondrian"),
    "sabre": ("fairanon.heuristics.sabre", "sabre"),
    "dsabre": ("fairanon.heuristics.dsabre", "dsabre"),
    "bucketization": ("fairanon.heuristics.bucketization", "bucketization"),
    "stochastic": ("fairanon.heuristics.stochastic", "stochastic"),
    "cpsat": ("fairanon.methods.cpsat", "cpsat"),
    "lns": ("fairanon.methods.lns", "lns"),
    "fulldomain": ("fairanon.solver.fulldomain", "fulldomain"),
    "lattice-local": ("fairanon.solver.fulldomain", "lattice_local"),
    "portfolio": ("fairanon.methods.portfolio", "portfolio"),
    "diva": ("fairanon.methods.diva", "diva"),
    "diva-exact": ("fairanon.methods.diva", "diva_exact"),
    "kmember": ("fairanon.heuristics.kmember", "kmember"),
    "oka": ("fairanon.heuristics.oka", "oka"),
}


class _Methods(MutableMapping):
    """:data:`METHODS`: a mapping like a dict whose functions are imported on first use,
    so that importing this module (at ``fa.anonymize``'s first look-up) imports no method:
    :func:`anonymize` imports the one it runs (:meth:`load`) and counts that import in its
    time limit (every method's, OR-Tools among them: 0.6-0.7 s CPU on 2 shared cores)."""

    def __init__(self, sources: dict[str, tuple[str, str]]):
        # A name's (module, function) until imported, then the function.
        self._entries: dict[str, object] = dict(sources)

    def load(self, names=None) -> float:
        """Import the functions of `names` (default: every method) not imported yet;
        the seconds it took (0.0 when there were none)."""
        todo = [n for n in (self._entries if names is None else names)
                if isinstance(self._entries.get(n), tuple)]
        if not todo:
            return 0.0
        started = time.perf_counter()
        for name in todo:
            module, attr = self._entries[name]
            self._entries[name] = getattr(importlib.import_module(module), attr)
        return time.perf_counter() - started

    def __getitem__(self, name: str) -> Callable[..., Release]:
        if isinstance(self._entries[name], tuple):
            self.load((name,))
        return self._entries[name]

    def __setitem__(self, name: str, func: Callable[..., Release]) -> None:
        self._entries[name] = func

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self):
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"METHODS({sorted(self._entries)})"


#: Method names and the functions behind them. Each takes
#: ``(instance, requirements, *, seed, time_limit, **options)`` and returns a Release.
#: The functions are imported on first use (:class:`_Methods`).
METHODS: MutableMapping[str, Callable[..., Release]] = _Methods(_METHOD_SOURCES)
_EXACT = ("cpsat", "fulldomain")
#: Seconds the exact models get under "auto" when no time limit is given (all of them:
#: the import and the choice are not taken from them then), and the budget the size
#: rule of :func:`choose_method` is calibrated for (benchmarks/exact.py).
AUTO_EXACT_SECONDS = 60.0
#: The local model is chosen when it has at most this many weighted types and
#: assignment variables (per minute of time limit). In benchmarks/exact.py most models
#: of this size are proven optimal within the minute on 2 cores; larger ones often are
#: not (German credit with (10, Sigma), 1,567 variables: 9 % gap after 60 s).
AUTO_MAX_TYPES = 200
AUTO_MAX_PAIRS = 1_500
#: The largest multiple of those sizes a long time limit allows: a year's limit is
#: already far beyond any model CP-SAT could load.
AUTO_MAX_SCALE = 1e6
#: The full-domain model is chosen for non-monotone requirements on at most this many
#: lattice nodes.
AUTO_MAX_LATTICE = 20_000


#: Methods that pass their options on to another method, less the ones they set.
_FORWARDS = {"diva-exact": ("diva", ("clustering",))}


def _forwarded(name: str) -> tuple[str, ...]:
    """The method `name` passes its options on to (:data:`_FORWARDS`), if any."""
    return (_FORWARDS[name][0],) if name in _FORWARDS else ()


def method_options(method: str | Callable[..., Release]) -> tuple[str, ...] | None:
    """The options a method takes (None when it takes any keyword).

    >>> method_options("mondrian")
    ('cut_rule', 'relaxed', 'categorical')
    """
    name = method if isinstance(method, str) else None
    fixed: tuple[str, ...] = ()
    if name in _FORWARDS:
        name, fixed = _FORWARDS[name]
    func = METHODS[name] if name is not None else method
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(
        p.name for p in params
        if p.kind is p.KEYWORD_ONLY and p.name not in ("seed", "time_limit") and p.name not in fixed
    )


def check_options(method: str | Callable[..., Release], options) -> None:
    """Raise InvalidParameterError naming the options `method` does not take."""
    allowed = method_options(method)
    unknown = sorted(set(options) - set(allowed)) if allowed is not None else []
    if unknown:
        name = method if isinstance(method, str) else getattr(method, "__name__", "custom")
        raise InvalidParameterError(
            f"Method {name!r} has no option(s) {unknown}; its options are {list(allowed)}."
        )


def choose_method(
    instance: Instance, requirements: Sequence[Requirement], *, time_limit: float | None = None
) -> tuple[str, str]:
    """The method ``"auto"`` runs, and why.

    The rule, in order:

    0. a requirement that masks its target attribute goes to the one method that
       enforces it: :class:`~fairanon.MultiplicativeTCloseness` to
       ``"bucketization"`` and :class:`~fairanon.StochasticTCloseness` to
       ``"stochastic"``, with k-anonymity as the only other requirement those methods
       take;
    1. ``"cpsat"`` (optimal local recoding, every requirement type) when its model is
       small: at most ``AUTO_MAX_TYPES`` weighted types and ``AUTO_MAX_PAIRS``
       assignment variables, both scaled by ``time_limit / 60`` (default 60 s), the
       size up to which the benchmarks (``benchmarks/exact.py``) are mostly proven
       optimal within the minute on a 2-core machine (the release's status says
       whether this one was). Generalization is tried first, then local suppression
       (``recoding="suppression"``, a smaller model);
    2. ``"portfolio"`` when every requirement is union-monotone (k, l, t): the fast
       methods that enforce them (``mondrian``, ``mondrian-loss``, ``lattice-local``,
       ``sabre``, and ``kmember`` and ``oka`` when their expected time fits) run in
       turn within the time limit (without one, each to completion, those expected to
       take long skipped by rules on the table's size alone, so that the same input and
       seed give the same release) and the verified release with the least LM (or the
       ``objective`` option) is kept
       (:func:`fairanon.methods.portfolio.portfolio`; ``provenance["portfolio"]`` lists
       each candidate's loss);
    3. ``"fulldomain"`` (optimal full-domain generalization, which also takes
       diversity constraints and alpha-protection) when every quasi-identifier has
       levels and the lattice has at most ``AUTO_MAX_LATTICE`` nodes; when none of its
       nodes meets the requirements, ``"cpsat"`` then searches local recodings in the
       time left (``auto_choice`` ``"fulldomain, then cpsat"``);
    4. ``"portfolio"`` when the requirements that are not union-monotone are risk
       requirements (average risk, sample or population uniques): its Mondrian-family
       candidates meet them at the smallest k that does;
    5. else ``"cpsat"`` when its model can express the requirements, however large: it
       runs the heuristics that enforce them first, keeps its limit and gives its best
       release with its gap (lns improves it when the model is too large to build).

    When the choice is the portfolio (or a heuristic) and a time limit of at least
    ``AUTO_LNS_SECONDS`` is given, the portfolio gets ``AUTO_PORTFOLIO_SHARE`` of it and
    ``"auto"`` then improves its release by large-neighbourhood search
    (:func:`fairanon.methods.lns.lns` started from it and guided by the classes of the
    next ``AUTO_LNS_GUIDES`` releases of the portfolio, with a lower bound on the loss),
    and says so in ``provenance["auto_choice"]`` (e.g. ``"lattice-local+lns"``).

    Raises
    ------
    IncompatibleRequirementError
        If no available method can enforce every requirement.
    InvalidParameterError
        If `time_limit` is not a positive number of seconds or None.

    Examples
    --------
    >>> choose_method(fa.load("diva_table1"), [fa.KAnonymity(2)])[0]
    'cpsat'
    >>> choose_method(fa.load("adult"), [fa.KAnonymity(5)])[0]
    'portfolio'
    >>> choose_method(fa.load("diva_table1"), [fa.KAnonymity(2), fa.MultiplicativeTCloseness(2)])[0]
    'bucketization'
    """
    time_limit = check_time_limit(time_limit, "choose_method")
    name, why, _ = _choose(instance, requirements, time_limit, {})
    return name, why


def _choose(instance, requirements, time_limit, options) -> tuple[str, str, dict]:
    """:func:`choose_method`'s rule; also the options the chosen method needs."""
    from .exceptions import FairanonError
    from .solver.fulldomain import lattice_size
    from .solver.local_recoding import model_size

    masked = _masking_method(requirements)
    if masked is not None:
        return masked
    budget = AUTO_EXACT_SECONDS if time_limit is None else float(time_limit)
    # Capped: a limit of 1e308 s would make sizes no int holds.
    scale = min(budget / AUTO_EXACT_SECONDS, AUTO_MAX_SCALE)
    max_types, max_pairs = int(AUTO_MAX_TYPES * scale), int(AUTO_MAX_PAIRS * scale)
    recodings = [options["recoding"]] if "recoding" in options else ["generalization", "suppression"]
    modelled = None  # the first recoding whose exact model the requirements admit
    for recoding in recodings:
        try:
            size = model_size(instance, requirements, recoding=recoding, objective=options.get("objective"),
                              max_types=max_types, max_vars=max_pairs)
        except FairanonError:
            continue
        modelled = modelled or recoding
        if size["pairs"] is not None and size["pairs"] <= max_pairs:
            return "cpsat", (
                f"the exact model ({recoding}) is small ({size['types']} types <= {max_types}, "
                f"{size['pairs']} assignment variables <= {max_pairs} for a {budget:g} s budget), so "
                "cpsat proves the optimum"
            ), {"recoding": recoding}
    unsupported = [r for r in requirements if not r.union_monotone]
    if not unsupported:
        return "portfolio", (
            "every requirement is union-monotone (it holds class by class), so the fast methods "
            "that enforce such requirements run as a portfolio"
        ), {}
    try:
        nodes = lattice_size(instance)
    except FairanonError:
        nodes = None
    if nodes is not None and nodes <= AUTO_MAX_LATTICE:
        return "fulldomain", (
            f"{', '.join(str(r) for r in unsupported)} are not union-monotone and the instance is "
            f"too large for cpsat, but its generalization lattice has {nodes} nodes <= "
            f"{AUTO_MAX_LATTICE}, so fulldomain searches it exactly"
        ), {}
    if all(isinstance(r, RISK_REQUIREMENTS) for r in unsupported):
        return "portfolio", (
            "the requirements hold class by class except the risk requirements, which the Mondrian "
            "family of the portfolio meets at the smallest k that does"
        ), {}
    if modelled is not None:
        # The only method left: it runs its heuristic starts first, keeps its limit and
        # says what it proved (a 10-record table under a diversity constraint and 10 s
        # was refused as too large for the size rule's budget).
        return "cpsat", (
            f"{', '.join(str(r) for r in unsupported)} are not union-monotone, which only the "
            "exact model enforces here; it is larger than the size rule allows for a "
            f"{budget:g} s budget, so cpsat gives its best release in the time, with its gap"
        ), {"recoding": modelled}
    raise IncompatibleRequirementError(
        f"No available method enforces {', '.join(str(r) for r in unsupported)} on instance "
        f"{instance.name!r}: it is too large for the exact model cpsat and has no small "
        f"full-domain lattice (give numeric quasi-identifiers intervals); methods: {sorted(METHODS)}."
    )


#: The methods that enforce a requirement masking its target attribute, by requirement.
_MASKING_METHODS = {
    MultiplicativeTCloseness: ("bucketization", "Domingo-Ferrer and Soria-Comas's bucketization"),
    StochasticTCloseness: ("stochastic", "Mondrian with an epsilon-DP mask of the target"),
}


def _masking_method(requirements) -> tuple[str, str, dict] | None:
    """The method for a requirement that masks its target, or None when there is none.

    Such a requirement releases the target attribute coarsened or perturbed, which the
    other methods never do; the one method that enforces it takes k-anonymity besides.
    """
    masking = [r for r in requirements if type(r) in _MASKING_METHODS]
    if not masking:
        return None
    others = [
        r for r in requirements if type(r) not in _MASKING_METHODS and not isinstance(r, KAnonymity)
    ]
    if len(masking) > 1 or others:
        clash = [str(r) for r in masking[1:] + others]
        raise IncompatibleRequirementError(
            f"No available method enforces {masking[0]} together with {', '.join(clash)}: "
            f"{_MASKING_METHODS[type(masking[0])][0]} enforces it with k-anonymity only."
        )
    name, what = _MASKING_METHODS[type(masking[0])]
    return name, f"{masking[0]} masks its target attribute, which only {name} ({what}) enforces", {}


def anonymize(
    instance: Instance,
    requirements: Sequence[Requirement] | Requirement,
    method: str | Callable[..., Release] = "auto",
    *,
    seed=None,
    time_limit: float | None = None,
    engine: str = "local",
    schema=None,
    memory_limit=None,
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
        It counts from the call: the first call of a method in a process imports it (every
        method for "auto"; OR-Tools among them: 0.6-0.7 s CPU on 2 shared cores), and the
        method gets what that import left (at least 0.01 s), noted in
        ``provenance["import_s"]``; "auto" makes its choice on the limit as given and
        gives the method it runs what is left of it. ``provenance["time_limit_given"]``
        is the limit as given, ``provenance["params"]["time_limit"]`` the method's own
        share of it; "auto" records in ``provenance["auto_before_s"]`` what came before
        the method it runs (the import and its choice). When what came before the method
        (the import, and auto's choice; on Dask the engine's import and the instance's
        conversion) took half the limit or more, the release's reason says so. On Dask
        ``provenance["import_s"]`` is the engine's import (Dask with it), recorded only
        in the call that imported it, as locally, and ``provenance["conversion_s"]``
        the instance's conversion to the engine's input, recorded in every call.
    engine : {"local", "dask"}, default="local"
        "dask" runs the method on a Dask DataFrame (:mod:`fairanon.distributed`;
        ``pip install 'fairanon[dask]'``): `instance` is then a Dask DataFrame or a
        Parquet path with `schema`, a :class:`~fairanon.distributed.DaskInstance`, or
        an Instance (split into partitions). Methods that run distributed:
        :data:`fairanon.distributed.DISTRIBUTED_METHODS` ("auto" picks Mondrian).
    schema : Schema, optional
        The schema of a Dask DataFrame or Parquet path given as `instance`.
    memory_limit : None, int, float or str, optional
        Memory the method may take: bytes (``2_000_000_000``, ``"8GB"``), a share of the
        memory available (``0.5``), or ``"none"``. Methods whose memory can grow beyond
        their input (k-member, DIVA's candidate pools, cpsat's model, also when lns
        solves a small table whole, and :mod:`fairanon.patterns`'s mining) estimate it
        before the work and raise :class:`~fairanon.exceptions.MemoryLimitError`,
        naming the option to change, when it would be larger. Default: half the
        available memory.
    **options
        Passed to the method (e.g. ``cut_rule="balanced"`` for Mondrian; with
        ``engine="dask"``, ``max_rows`` per task and ``progress``).

    Returns
    -------
    Release
        Check it with :func:`fairanon.verify`; nothing returned here is trusted unchecked.
        With ``engine="dask"``, a :class:`~fairanon.distributed.DistributedRelease`.

    Raises
    ------
    InvalidParameterError
        Unknown method, bad seed or time limit, k larger than the table, ...
    IncompatibleRequirementError
        The method cannot enforce a requirement, or a requirement does not fit the data.
    MemoryLimitError
        The method's estimate of its memory is above `memory_limit`.

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> rel = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian")
    >>> rel.status, fa.verify(inst, rel, [fa.KAnonymity(3)]).passed
    (<Status.FEASIBLE: 'FEASIBLE'>, True)
    """
    started = time.perf_counter()
    limit = memory_limit_context(memory_limit, "anonymize")
    if engine != "local":
        return _anonymize_distributed(instance, requirements, method, engine, schema, seed=seed,
                                      time_limit=time_limit, started=started, **options)
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of anonymize must be an Instance (e.g. fa.load('adult')). "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="anonymize", at_least_one=True)
    imported = 0.0
    if callable(method):
        func, name = method, getattr(method, "__name__", "custom")
    elif isinstance(method, str) and method in METHODS:
        # The method's first use in the process imports it (auto: every method, which it
        # may run), here: that import counts in the time limit.
        imported = METHODS.load(None if method == "auto" else (method, *_forwarded(method)))
        func, name = METHODS[method], method
    else:
        raise InvalidParameterError(
            f"The 'method' parameter of anonymize must be one of {sorted(METHODS)} or a callable. "
            f"Got {method!r} instead."
        )
    check_random_state(seed)
    check_options(method, options)
    time_limit = check_time_limit(time_limit, "anonymize")  # inf: no limit
    given = time_limit
    with limit:
        if func is _auto:
            # It decides on the limit as given (lns after a heuristic from 10 s, say) and
            # counts it from here, the import of every method included.
            release = _auto(instance, requirements, seed=seed, time_limit=time_limit, _started=started, **options)
        else:
            if imported and time_limit is not None:
                time_limit = max(MIN_METHOD_SECONDS, time_limit - imported)
            release = func(instance, requirements, seed=seed, time_limit=time_limit, **options)
    if not isinstance(release, Release):
        raise InvalidParameterError(f"Method {name!r} returned {type(release).__name__}, not a Release.")
    extra = {"import_s": imported} if imported else {}
    if given is not None:
        extra["time_limit_given"] = given
    release = release.with_provenance(
        method=release.provenance.get("method", name), total_elapsed_s=time.perf_counter() - started, **extra
    )
    if func is _auto:
        # The method's share is what the import and the choice left (params' time_limit).
        before = release.provenance.get("auto_before_s", imported) if imported else 0.0
        return _before_the_method(release, "the first call's import of the methods and auto's "
                                  "choice", before, given,
                                  " (later calls in this process do not import)")
    return _before_the_method(release, f"the first call's import of {name}", imported, given,
                              " (later calls in this process do not import)")


#: When what anonymize does before the method (the first call's import of the method,
#: the Dask engine's import and conversion) takes at least this share of the time limit,
#: the release's reason says so.
BEFORE_METHOD_NOTED = 0.5


def _before_the_method(release, what: str, seconds: float, given, after: str = ""):
    """`release` with its reason saying that `what` took `seconds` of the time limit
    `given`, when that is at least :data:`BEFORE_METHOD_NOTED` of it: the method's own
    limit (``provenance["params"]["time_limit"]``) was then what was left, at least
    :data:`MIN_METHOD_SECONDS`."""
    if given is None or not seconds or seconds < BEFORE_METHOD_NOTED * given:
        return release
    left = max(MIN_METHOD_SECONDS, given - seconds)
    note = (f"{what} took {seconds:.2f} s of the {given:g} s time limit, leaving the method "
            f"{left:.2f} s{after}")
    reason = note if not release.reason else f"{release.reason}; {note}"
    return dataclasses.replace(release, reason=reason)


def _anonymize_distributed(instance, requirements, method, engine, schema, *, seed, time_limit, started,
                           **options):
    """The Dask engine's method, whose time limit counts from `started` (the call's
    start, a ``time.perf_counter`` value): the first call imports :mod:`fairanon.distributed`
    with Dask (0.44 s CPU, 1 s wall on 2 shared cores), which was outside the limit, as
    was the instance's conversion."""
    _check_engine(engine, "anonymize")
    # The first call in a process imports the engine (Dask with it); later ones do not.
    fresh = "fairanon.distributed" not in sys.modules
    began = time.perf_counter()
    distributed = importlib.import_module("fairanon.distributed")
    imported = time.perf_counter() - began if fresh else 0.0
    DISTRIBUTED_METHODS, mondrian_dask = distributed.DISTRIBUTED_METHODS, distributed.mondrian_dask

    name = method if isinstance(method, str) else getattr(method, "__name__", "custom")
    if name == "auto":
        name = "mondrian"
    if name not in DISTRIBUTED_METHODS:
        raise IncompatibleRequirementError(
            f"Method {name!r} does not run on Dask; the methods that run distributed are "
            f"{', '.join(DISTRIBUTED_METHODS)}. Use engine='local' for {name!r}."
        )
    began = time.perf_counter()
    dinst, _ = _dask_inputs(instance, None, schema)
    converted = time.perf_counter() - began
    before = time.perf_counter() - started
    given = time_limit
    if isinstance(time_limit, (int, float)) and not isinstance(time_limit, bool) and time_limit > 0:
        time_limit = max(MIN_METHOD_SECONDS, time_limit - before)
    else:
        given = None
    release = mondrian_dask(dinst, requirements, seed=seed, time_limit=time_limit, **options)
    extra = {"import_s": imported} if imported else {}
    extra["conversion_s"] = converted
    if given is not None:
        extra["time_limit_given"] = given
    release = dataclasses.replace(release, provenance={**release.provenance, **extra})
    what = ("the first call's import of the Dask engine and the instance's conversion"
            if imported else "the instance's conversion")
    return _before_the_method(release, what, before, given)


def verify(instance, release, requirements=(), *, metrics: bool = True, bound: bool = False, engine: str = "local",
           schema=None, progress: bool = False, risk: bool = False) -> Report:
    """Re-check every guarantee of `release` from its released table
    (:func:`fairanon.models.verify.verify`; ``bound=True`` adds the per-record lower
    bounds on the loss).

    With ``engine="dask"`` the checks run on Dask (:func:`fairanon.distributed.verify_dask`,
    same verdicts, achieved values, witnesses and metrics): `instance` as for
    :func:`anonymize`, `release` a :class:`~fairanon.distributed.DistributedRelease`,
    a Dask DataFrame or a Parquet path (or a Release).

    Every report carries ``report.risk``, the prosecutor-risk summary of the class sizes.
    With ``risk=True`` the report also has a ``risk_report`` attribute: every figure of
    :func:`risk` as the dict ``fairanon anonymize`` writes into ``report.json``
    (:func:`fairanon.models.risk.report.release_risk`; None for a release without rows,
    ``{"error": ...}`` when the figures cannot be measured). On Dask it is measured from
    the verifier's class counts and equals the local one, but for a weight column, which
    Dask does not read: its ``individual`` entry (and ``journalist``, read from it) is
    then ``{"error": ...}`` (``docs/risk.md``, "On Dask").

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> rel = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian")
    >>> fa.verify(inst, rel, [fa.KAnonymity(3)]).passed
    True
    >>> report = fa.verify(inst, rel, [fa.KAnonymity(3)], risk=True)
    >>> report.risk_report["sample"]["prosecutor_highest"]["value"] <= 1 / 3
    True
    """
    risk = check_bool(risk, "risk", "verify")
    if engine == "local":
        report = _late("_verify_local")(instance, release, requirements, metrics=metrics, bound=bound)
        if risk:
            object.__setattr__(report, "risk_report", _late("release_risk")(instance, release))
        return report
    _check_engine(engine, "verify")
    if bound:
        raise InvalidParameterError("bound=True needs engine='local': the per-record lower bounds are not computed on Dask.")
    from .distributed import verify_dask

    dinst, drelease = _dask_inputs(instance, release, schema)
    report = verify_dask(dinst, drelease, requirements, metrics=metrics, progress=progress, risk=risk)
    if isinstance(release, Release):
        figures = getattr(report, "risk_report", None)
        report = dataclasses.replace(report, method=release.method, status=str(release.status))
        if risk:
            object.__setattr__(report, "risk_report", figures)
    return report


def risk(instance, release=None, *, sampling_fraction=None, population_size=None, engine: str = "local",
         schema=None, progress: bool = False, **options) -> RiskReport:
    """Every re-identification and attribute-disclosure risk figure of `instance`, or
    of a release of it (:func:`fairanon.models.risk.report.risk`, whose other parameters
    `options` are: ``population``, ``weights``, ``threshold``, ``models``,
    ``individual_method``, ``suda_max_size``, ``sensitive``). ``population`` may also be
    the path of a CSV or Parquet file, read with `instance`'s schema on either engine.

    Parameters
    ----------
    instance, release
        As for :func:`verify`; `release` None measures the instance itself.
    sampling_fraction : rational in (0, 1], optional
        The population model: the table is a sample, drawn at fraction π, of a
        population of N = round(n/π) records (:func:`fairanon.models.risk.population.population_model`).
        With it the population uniques are estimated (Pitman, Zayatz, SNB and Dankar
        et al.'s rule), SUDA gives its DIS-SUDA scores, and the individual risk of a
        table without a weight column takes uniform weights N/n.
    population_size : int, optional
        N instead of π (π = n/N), at least the table's n records. At most one of the
        two; with neither, population uniques are not estimated.
    engine : {"local", "dask"}, default="local"
        "dask" measures on Dask (:func:`fairanon.distributed.risk_dask`): `instance` and
        `release` as for :func:`verify` with ``engine="dask"``. The classes come from the
        distributed verifier's counts and every figure is that of one machine from them
        (the same :class:`~fairanon.models.risk.report.RiskReport`): sample risk,
        uniqueness and the population estimators, individual risk, SUDA, δ-disclosure
        and β-likeness, and the journalist risk against a population table (which may
        also be a Dask DataFrame or a Parquet path, counted on Dask). A weight column,
        which Dask does not read, raises :class:`~fairanon.exceptions.InvalidParameterError`
        (pass ``weights=False``). SUDA stands a row per record on the client; above the
        memory limit it raises :class:`~fairanon.exceptions.MemoryLimitError` (pass
        ``suda_max_size=None``).
    schema : Schema, optional
        The schema of a Dask DataFrame or Parquet path given as `instance`.
    progress : bool, default=False
        With ``engine="dask"``, Dask's progress bar for each pass.

    Returns
    -------
    RiskReport

    Raises
    ------
    InvalidParameterError
        An unknown option or engine, a bad value, or a figure the engine cannot measure.
    SchemaError
        A release without a quasi-identifier column or without rows, or an unknown
        `sensitive` attribute.

    Examples
    --------
    >>> rep = fa.risk(fa.load("diva_table1"), suda_max_size=None)
    >>> rep.sample.highest, rep.uniqueness.sample_uniques
    (Fraction(1, 1), 10)
    """
    # The named population model goes on with the other options, checked as they are.
    options = {"sampling_fraction": sampling_fraction, "population_size": population_size, **options}
    allowed = [name for name in inspect.signature(_late("_risk_local")).parameters if name not in ("instance", "release")]
    if engine != "local":
        _check_engine(engine, "risk")
        # The Dask engine makes the classes itself.
        allowed = [name for name in allowed if name not in ("classes", "classes_seconds")]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise InvalidParameterError(f"risk has no option(s) {unknown}; its options are "
                                    f"{allowed + ['engine', 'schema', 'progress']}.")
    if options.get("population") is not None:
        if engine == "local" and hasattr(instance, "schema"):
            # The other options first: a mistake in them is found before a large file is read.
            _late("risk_options")(instance.schema, **{k: v for k, v in options.items()
                                             if k not in ("population", "classes", "classes_seconds")})
        options["population"] = _population_file(options["population"], instance, engine)
    if engine == "local":
        return _late("_risk_local")(instance, release, **options)
    from .distributed import risk_dask

    dinst, drelease = _dask_inputs(instance, release, schema)
    return risk_dask(dinst, drelease, progress=progress, **options)


def _population_file(population, instance, engine: str):
    """The population table of the journalist risk as the engine takes it: a CSV or
    Parquet path read by one machine with `instance`'s schema (its quasi-identifier
    columns only, a CSV file's as text: ``01234`` stays ``'01234'``, and the numeric
    ones are converted when counted, by
    :func:`~fairanon.instances.instance.parse_numbers`), left to the Dask engine, which
    reads it the same way partition by partition
    (:func:`fairanon.distributed.risk.count_population`); any other value as it is.

    Raises
    ------
    InvalidParameterError
        A path that does not exist.
    SchemaError
        A file that cannot be read.
    """
    if not isinstance(population, (str, os.PathLike)):
        return population
    path = os.fspath(population)
    if not os.path.exists(path):
        raise InvalidParameterError(f"The population file {path!r} does not exist.")
    if engine != "local":
        return path
    from .jobs import read_table

    schema = getattr(instance, "schema", None)
    if schema is None:
        return read_table(path, what="Population file")
    # Its quasi-identifiers only, which the journalist risk reads, as text: the numeric
    # ones are converted by parse_numbers, as the Dask engine converts its text.
    return read_table(path, text_columns=list(schema.qi), what="Population file", columns=list(schema.qi))


def _check_engine(engine, caller: str) -> None:
    if engine not in ENGINES:
        raise InvalidParameterError(f"The 'engine' parameter of {caller} must be one of {ENGINES}. Got {engine!r} instead.")


def _dask_inputs(instance, release, schema):
    """The Dask engine's instance and release (None stays None) from what the front door
    takes: :func:`fairanon.distributed.as_dask_instance` and
    :func:`~fairanon.distributed.as_dask_release`."""
    from .distributed import as_dask_instance, as_dask_release

    return as_dask_instance(instance, schema), as_dask_release(release)
