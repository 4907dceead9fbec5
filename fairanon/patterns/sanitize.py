"""Anti-discrimination pattern sanitization (Hajian et al. Alg. 2, 4, 5 and 6) with the
fixes of docs/papers.md (Hajian et al.).

- Δ is the smallest integer that makes the rule protective: ``floor(RHS) + 1`` under the
  paper's strict reading, not ``ceil(RHS)``, which lands on f = α (HJ-1).
- A pattern whose Δ is below 1 is skipped (the paper's lines 15-18 would reuse a stale
  target, HJ-4); a pattern no Δ can fix is reported, never looped on (HJ-4).
- With k-anonymity, a fairness bump that would raise a channel of support 0 by fewer
  than k records is raised to k (the gap in Theorem 4, HJ-3).
- Theorem 1 fails for the slift family with two or more protected items (HJ-2): after the
  paper's single pass, a bounded re-check loop re-detects on the current supports and
  sanitizes again, and reports non-convergence (HJ-2: Adult at σ = 10 %, α = 1.2, k >= 25)
  instead of looping. ``targets="union"`` adds the other protected attributes' items to
  each virtual record, after which the loop settles (HJ-2).

Every function returns a :class:`SanitizationResult`; none of them trusts its own
detection as a verification: :func:`fairanon.patterns.verify_patterns` re-checks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .._validation import check_fraction, check_int, check_option
from ..exceptions import InvalidParameterError
from .detect import (
    Finding,
    _instances,
    detect_discriminatory,
    detect_unexplainable,
    domain_of,
    explanation,
)
from .measures import (
    ELIFT_FAMILY,
    READINGS,
    TARGETS,
    check_alpha,
    check_measure,
    contingency,
    delta,
    is_discriminatory,
    measure_value,
    target,
)
from .patternset import PatternSet, Workspace
from .privacy import ChannelTable, PrivacyResult, k_anonymize

__all__ = [
    "SanitizationResult",
    "Step",
    "alpha_protective",
    "alpha_protective_k_anonymous",
    "antidisc_sanitize",
    "explainable_alpha_protective",
    "explainable_alpha_protective_k_anonymous",
    "sanitize",
    "unexplainable_sanitize",
]

#: Above this many virtual records per real record the re-check loop is diverging (V9).
DIVERGENCE_FACTOR = 1000


@dataclass(frozen=True)
class Step:
    """One sanitization: `count` virtual transactions equal to `target` for `pattern`."""

    pattern: frozenset
    target: frozenset
    count: int
    round: int
    guarded: bool = False


@dataclass(frozen=True)
class SanitizationResult:
    """A sanitized pattern set and how it was obtained.

    Attributes
    ----------
    patterns : PatternSet
        The sanitized set (its ledger holds every virtual transaction, privacy first).
    converged : bool
        The last detection pass found nothing to fix.
    rounds : int
        Sanitization passes run (1 = the paper's single pass).
    steps : tuple of Step
    residual : tuple of Finding
        Patterns still α-discriminatory (d-unexplainable) after the last pass.
    unsanitizable : tuple of frozenset
        Patterns no Δ of the method can fix (docs/papers.md, HJ-4).
    undefined : tuple of frozenset
        PD patterns with an undefined measure at the end (left out of Def. 13, P7).
    privacy : PrivacyResult, optional
    stop_reason : str
    """

    patterns: PatternSet
    converged: bool
    rounds: int
    steps: tuple = ()
    residual: tuple = ()
    unsanitizable: tuple = ()
    undefined: tuple = ()
    privacy: PrivacyResult | None = None
    stop_reason: str = ""
    options: dict = field(default_factory=dict)

    @property
    def added_support(self) -> int:
        """Total support added over the itemsets of the set (Σ_X supp'(X) - supp(X))."""
        ps = self.patterns
        return sum(ps.support(x) - ps.base_support(x) for x in ps.supports)


def _step(ws, pattern, measure, alpha, reading, ceil, channels, k, round_no, unsanitizable, targets) -> Step | None:
    """Alg. 2 lines 5-18 for one pattern on the current supports."""
    roles = ws.patterns.roles
    domain = domain_of(ws.patterns) if measure == "clift" else ()
    table = contingency(ws.supp, pattern, roles, measure=measure, domain=domain)
    d = delta(measure, table, alpha, reading, ceil=ceil)
    if d is None:
        unsanitizable.add(pattern)
        return None
    if d < 1:
        return None
    p_t = target(measure, pattern, roles, targets)
    guarded = False
    if channels is not None and d < k and channels.opened_by(p_t):
        d, guarded = k, True
    ws.bump(p_t, d)
    return Step(pattern, p_t, d, round_no, guarded)


def antidisc_sanitize(
    ws: Workspace,
    findings,
    measure: str,
    alpha: Fraction,
    *,
    reading: str = "strict",
    ceil: bool = False,
    channels: ChannelTable | None = None,
    k: int = 0,
    round_no: int = 1,
    unsanitizable: set | None = None,
    targets: str = "paper",
) -> list:
    """ANTIDISCPATTSANIT [1]_ (Alg. 2) on a workspace, in the order given.

    For each pattern p = {A, B, C}: Δ from the current supports (§5.1.1-5.1.2,
    docs/papers.md, HJ-4), then Δ virtual transactions equal to {A, B} (slift family) or {B, C} (elift
    family), or as `targets` says (:func:`~fairanon.patterns.measures.target`). Returns the steps taken.

    References
    ----------
    .. [1] S. Hajian et al. Discrimination- and privacy-aware patterns. DMKD 29(6), 2015.
    """
    unsanitizable = set() if unsanitizable is None else unsanitizable
    steps = []
    for f in findings:
        p = f.pattern if isinstance(f, Finding) else frozenset(f)
        s = _step(ws, p, measure, alpha, reading, ceil, channels, k, round_no, unsanitizable, targets)
        if s is not None:
            steps.append(s)
    return steps


def _pd_subsets(ws: Workspace, p: frozenset) -> list:
    roles = ws.patterns.roles
    c = roles.decision
    rest = sorted(p - {c})
    out = []
    for r in range(len(rest) - 1, 0, -1):
        for sub in itertools.combinations(rest, r):
            q = frozenset(sub) | {c}
            if q & roles.protected and q in ws.current:
                out.append(q)
    return out


def unexplainable_sanitize(
    ws: Workspace,
    findings,
    measure: str,
    alpha: Fraction,
    d: Fraction,
    *,
    reading: str = "strict",
    ceil: bool = False,
    channels: ChannelTable | None = None,
    k: int = 0,
    round_no: int = 1,
    unsanitizable: set | None = None,
    targets: str = "paper",
) -> list:
    """UNEXPLAINANTIDISCPATTSANIT [1]_ (Alg. 4); `targets` as in :func:`antidisc_sanitize`.

    elift family: Alg. 2 on the d-unexplainable patterns (safe by Theorem 2). slift
    family: a work list; after sanitizing p, every PD proper subset of p that is now
    α-discriminatory *and* d-unexplainable joins the list (Theorem 3; docs/papers.md, HJ-10: an
    index loop over a list that grows).

    References
    ----------
    .. [1] S. Hajian et al. Discrimination- and privacy-aware patterns. DMKD 29(6), 2015.
    """
    unsanitizable = set() if unsanitizable is None else unsanitizable
    patterns = [f.pattern if isinstance(f, Finding) else frozenset(f) for f in findings]
    if measure in ELIFT_FAMILY:
        return antidisc_sanitize(
            ws, patterns, measure, alpha, reading=reading, ceil=ceil, channels=channels, k=k,
            round_no=round_no, unsanitizable=unsanitizable, targets=targets,
        )
    roles = ws.patterns.roles
    instances = _instances(ws.patterns)
    domain = domain_of(ws.patterns) if measure == "clift" else ()
    worklist = list(patterns)
    listed = set(worklist)
    steps = []
    i = 0
    while i < len(worklist):
        p = worklist[i]
        i += 1
        s = _step(ws, p, measure, alpha, reading, ceil, channels, k, round_no, unsanitizable, targets)
        if s is not None:
            steps.append(s)
        for q in _pd_subsets(ws, p):
            if q in listed:
                continue
            table = contingency(ws.supp, q, roles, measure=measure, domain=domain)
            value = measure_value(measure, table)
            if not is_discriminatory(measure, value, alpha, reading):
                continue
            if explanation(ws, Finding(q, table, value), d, instances) is None:
                worklist.append(q)
                listed.add(q)
    return steps


def _check_common(measure, alpha, reading, max_rounds, caller):
    measure = check_measure(measure, caller)
    alpha = check_alpha(alpha, caller)
    check_option(reading, "reading", caller, READINGS)
    max_rounds = check_int(max_rounds, "max_rounds", caller, low=1)
    return measure, alpha, max_rounds


def sanitize(
    patterns: PatternSet,
    measure: str = "slift",
    alpha: Any = Fraction(6, 5),
    *,
    k: int | None = None,
    d: Any = None,
    reading: str = "strict",
    recheck: bool = True,
    max_rounds: int = 100,
    ceil: bool = False,
    guard_channels: bool = True,
    targets: str = "paper",
) -> SanitizationResult:
    """Publishable pattern set: α-protective, optionally d-explainable and k-anonymous.

    Runs the privacy step first when `k` is given (Alg. 5-6 line 3), then detection
    (Alg. 1, or Alg. 3 when `d` is given), the impact order, and sanitization (Alg. 2,
    or Alg. 4), then re-detects on the current supports and repeats while patterns are
    left, at most `max_rounds` passes.

    Parameters
    ----------
    patterns : PatternSet
    measure : str, default="slift"
        One of slift, clift, elift, slift_d, elift_d, slift_c, elift_c, olift.
    alpha : rational, default=6/5
    k : int, optional
        Make the set k-anonymous first (Def. 2).
    d : rational in [0, 1], optional
        Only d-unexplainable discrimination is removed (Def. 17); DI_e comes from the roles.
    reading : {"strict", "nonstrict"}, default="strict"
        Def. 11's f < α, or Ruggieri's f <= α (reversed for slift_c, elift_c).
    recheck : bool, default=True
        False: the paper's single pass (then the verifier reports what is left).
    max_rounds : int, default=100
    ceil : bool, default=False
        True: the paper's ``Δ = ceil(RHS)`` (can land on f = α, docs/papers.md, HJ-1).
    guard_channels : bool, default=True
        With k: raise a Δ below k to k when it would open a channel of support 0 (P13).
    targets : {"paper", "union"}, default="paper"
        The virtual transactions of the slift family: the paper's {A, B}, or {A, B} with
        the protected item of every protected attribute that A and B leave free, which
        never counts against another protected group, so that the re-check loop settles
        where the paper's does not (docs/papers.md, HJ-2). The elift family and clift
        are not affected.

    Returns
    -------
    SanitizationResult

    Notes
    -----
    Cost per pass: one detection (O(|PD patterns|) support look-ups) and, per fixed
    pattern, 2^|p_t| support updates; with k, O(|FP|) per virtual transaction to keep
    the channel table current. The re-check loop stops early when a pass changes nothing
    or the virtual records exceed ``DIVERGENCE_FACTOR`` times |D| (V9 grows about 6.4x
    per pass).

    Examples
    --------
    >>> from fairanon.patterns import PatternSet, Roles, TransactionDB
    >>> db = TransactionDB.from_counts({("f", "v", "C"): 20, ("f", "v"): 14, ("v", "C"): 19, ("v",): 28})
    >>> res = sanitize(PatternSet.from_db(db, 1, Roles({"f"}, "C"), backend="apriori"), "slift", 1.25)
    >>> res.converged, [(sorted(s.target), s.count) for s in res.steps]
    (True, [(['f', 'v'], 6)])
    """
    caller = "sanitize"
    measure, alpha, max_rounds = _check_common(measure, alpha, reading, max_rounds, caller)
    check_option(targets, "targets", caller, TARGETS)
    if not isinstance(patterns, PatternSet):
        raise InvalidParameterError(f"The 'patterns' parameter of {caller} must be a PatternSet. Got {type(patterns).__name__} instead.")
    if k is not None:
        k = check_int(k, "k", caller, low=1)
    if d is not None:
        d = check_fraction(d, "d", caller, low=0, high=1)
        if not patterns.roles.admissible:
            raise InvalidParameterError(
                "d-explainability needs admissible items (DI_e) in the roles; "
                "use Roles.paper(...) or pass admissible=... ."
            )
    ws = Workspace(patterns)
    privacy = None
    channels = None
    if k is not None:
        privacy = k_anonymize(ws, k)
        channels = privacy.channels if guard_channels else None
    unsanitizable: set = set()
    steps: list = []
    rounds = 0
    limit = DIVERGENCE_FACTOR * max(patterns.n_records, 1)

    def detect():
        if d is None:
            return detect_discriminatory(ws, measure, alpha, reading=reading)
        return detect_unexplainable(ws, measure, alpha, d, reading=reading)

    found = detect()
    stop = ""
    while True:
        todo = [f for f in found.discriminatory if f.pattern not in unsanitizable]
        if not todo:
            stop = "no α-discriminatory pattern left" if not found.discriminatory else "only unsanitizable patterns left"
            break
        if rounds == max_rounds or (rounds == 1 and not recheck):
            stop = "single pass (recheck=False)" if not recheck else f"did not converge in {max_rounds} passes"
            break
        rounds += 1
        common = dict(reading=reading, ceil=ceil, channels=channels, k=k or 0, round_no=rounds, unsanitizable=unsanitizable,
                      targets=targets)
        if d is None:
            new = antidisc_sanitize(ws, todo, measure, alpha, **common)
        else:
            new = unexplainable_sanitize(ws, todo, measure, alpha, d, **common)
        steps.extend(new)
        found = detect()
        if not new:
            stop = "a pass changed nothing"
            break
        if ws.total > limit:
            stop = f"diverging: more than {DIVERGENCE_FACTOR}x |D| virtual records after {rounds} passes"
            break
    residual = tuple(found.discriminatory)
    return SanitizationResult(
        patterns=ws.result(),
        converged=not residual,
        rounds=rounds,
        steps=tuple(steps),
        residual=residual,
        unsanitizable=tuple(sorted(unsanitizable, key=lambda x: sorted(x))),
        undefined=tuple(found.undefined),
        privacy=privacy,
        stop_reason=stop,
        options={"measure": measure, "alpha": str(alpha), "k": k, "d": None if d is None else str(d), "reading": reading,
                 "recheck": recheck, "max_rounds": max_rounds, "ceil": ceil, "guard_channels": guard_channels,
                 "targets": targets},
    )


def alpha_protective(patterns: PatternSet, measure: str = "slift", alpha: Any = Fraction(6, 5), **options) -> SanitizationResult:
    """FP*: an α-protective version of the set (Alg. 1 then Alg. 2 in impact order).

    See :func:`sanitize` for the options.
    """
    return sanitize(patterns, measure, alpha, **options)


def alpha_protective_k_anonymous(
    patterns: PatternSet, k: int, measure: str = "slift", alpha: Any = Fraction(6, 5), **options
) -> SanitizationResult:
    """FP'': ANTI-DISCRIMINATION k-ANONYMOUS PATTERN SANITIZATION (Alg. 5): the privacy
    step, then detection on the k-anonymous supports and Alg. 2 in impact order."""
    return sanitize(patterns, measure, alpha, k=k, **options)


def explainable_alpha_protective(
    patterns: PatternSet, measure: str = "slift", alpha: Any = Fraction(6, 5), d: Any = Fraction(9, 10), **options
) -> SanitizationResult:
    """A d-explainable α-protective set (Alg. 3 then Alg. 4)."""
    return sanitize(patterns, measure, alpha, d=d, **options)


def explainable_alpha_protective_k_anonymous(
    patterns: PatternSet, k: int, measure: str = "slift", alpha: Any = Fraction(6, 5), d: Any = Fraction(9, 10), **options
) -> SanitizationResult:
    """UNEXPLAINABLE DISCRIMINATION PROTECTED AND ANONYMOUS SANITIZATION (Alg. 6)."""
    return sanitize(patterns, measure, alpha, k=k, d=d, **options)
