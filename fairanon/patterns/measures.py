"""Discrimination measures of PD rules ``A, B -> C`` read off pattern supports, the
α-test in both readings, and the smallest support increase Δ that makes a pattern
α-protective (Hajian et al. §3.3, §5.1; docs/papers.md, HJ-4).

Two readings of "α-protective" are kept apart:

- ``reading="strict"`` (Hajian et al. Def. 11, the default here): protective iff
  ``f < α`` (``f > α`` for the chance measures slift_c, elift_c); ``f = α`` is
  discriminatory.
- ``reading="nonstrict"`` (Ruggieri; fairanon's :class:`~fairanon.AlphaProtection`
  default): protective iff ``f <= α`` (``f >= α`` for the chance measures).

Values are exact :class:`~fractions.Fraction` s; the shared measures come from
:func:`fairanon.models.measures.discrimination_exact` once this module has checked that
the rule's denominators are non-zero (the paper leaves undefined measures undefined;
the shared function would apply Ruggieri's tokenism extension instead).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .._validation import check_fraction, check_option
from ..models.measures import discrimination_exact
from .patternset import Roles, attribute_of, split_pattern

__all__ = [
    "CHANCE",
    "ELIFT_FAMILY",
    "MEASURES",
    "NEGATIONS",
    "READINGS",
    "SLIFT_FAMILY",
    "TARGETS",
    "Contingency",
    "check_alpha",
    "check_measure",
    "contingency",
    "delta",
    "is_discriminatory",
    "measure_value",
    "target",
]

#: The seven measures of the paper plus the odds ratio (olift, an extension [X]).
MEASURES = ("slift", "clift", "elift", "slift_d", "elift_d", "slift_c", "elift_c", "olift")
#: Sanitized by raising {A, B} (a1 and a2 fixed, n1 grows).
SLIFT_FAMILY = frozenset({"slift", "clift", "slift_d", "slift_c", "olift"})
#: Sanitized by raising {B, C} (a1 and n1 fixed, p grows).
ELIFT_FAMILY = frozenset({"elift", "elift_d", "elift_c"})
#: Smaller is worse: protective iff f > α (strict) / f >= α (nonstrict).
CHANCE = frozenset({"slift_c", "elift_c"})
READINGS = ("strict", "nonstrict")
#: How the counts of ¬A are read: "subtraction" (supp(B) - supp(A, B): every record of
#: the context outside A, virtual records included) or "complement" (the records of the
#: context that carry another value of A's attributes, as the paper's Scenarios 1-2 read
#: supp(male, B) for ¬female; docs/papers.md, HJ-5).
NEGATIONS = ("subtraction", "complement")

_CODES = {"slift": "RR", "clift": "RR", "elift": "ER", "slift_d": "RD", "elift_d": "ED", "slift_c": "RC", "elift_c": "EC", "olift": "OR"}


def check_measure(measure: Any, caller: str) -> str:
    """Validate a measure name (case-insensitive)."""
    name = str(measure).lower() if isinstance(measure, str) else measure
    return check_option(name, "measure", caller, MEASURES)


def check_alpha(alpha: Any, caller: str) -> Fraction:
    """α as an exact rational (``1.2`` becomes 6/5)."""
    return check_fraction(alpha, "alpha", caller)


@dataclass(frozen=True)
class Contingency:
    """The 2x2 table of a PD rule in its context B (paper Fig. 2), plus sB = supp(B) and
    sBC = supp(B, C); for clift, the comparison group's counts.

    a1 = supp(A,B,C), n1 = supp(A,B), a2 = supp(¬A,B,C) = sBC - a1, n2 = supp(¬A,B) = sB - n1.
    """

    a1: int
    n1: int
    a2: int
    n2: int
    sB: int
    sBC: int
    comparison: str | None = None
    a_v2: int | None = None
    n_v2: int | None = None

    @property
    def p1(self) -> Fraction | None:
        return Fraction(self.a1, self.n1) if self.n1 else None

    @property
    def p2(self) -> Fraction | None:
        return Fraction(self.a2, self.n2) if self.n2 else None

    @property
    def p(self) -> Fraction | None:
        return Fraction(self.sBC, self.sB) if self.sB else None


def contingency(
    supp: Callable[[frozenset], int],
    pattern: frozenset,
    roles: Roles,
    *,
    measure: str = "slift",
    domain: Iterable[str] = (),
    negation: str = "subtraction",
) -> Contingency:
    """The contingency table of PD pattern `pattern` from a support function.

    `domain` lists the known items (needed by clift to find the most favoured value of
    the protected attribute: the value a=v2 with the smallest non-zero confidence
    conf(a=v2, B -> C), Def. 7, and by the complement reading of ¬A).

    `negation` (see :data:`NEGATIONS`): with "complement", n2 and a2 count the records
    of the context whose protected attributes all carry a value and differ from A
    somewhere (``Σ supp(B ∪ values) - n1`` over the value combinations of A's
    attributes in `domain`); on a database without missing values of those attributes
    both readings agree, and they part once virtual records without those attributes
    raise supp(B). When an attribute of A has no other value in `domain`, the
    subtraction is used.

    >>> s = {frozenset("fvC"): 20, frozenset("fv"): 34, frozenset("vC"): 39, frozenset("v"): 81}
    >>> contingency(s.__getitem__, frozenset("fvC"), Roles({"f"}, "C"))
    Contingency(a1=20, n1=34, a2=19, n2=47, sB=81, sBC=39, comparison=None, a_v2=None, n_v2=None)
    """
    a, b = split_pattern(pattern, roles)
    c = roles.decision
    a1 = supp(pattern)
    n1 = supp(a | b)
    s_b = supp(b)
    s_bc = supp(b | {c})
    known_b, known_bc = s_b, s_bc
    if negation == "complement":
        combos = _value_combinations(a, domain)
        if combos:
            known_b = sum(supp(b | combo) for combo in combos)
            known_bc = sum(supp(b | combo | {c}) for combo in combos)
    out = Contingency(a1, n1, known_bc - a1, known_b - n1, s_b, s_bc)
    if measure != "clift" or len(a) != 1:
        return out
    (item,) = a
    attr = attribute_of(item)
    best = None
    for other in sorted(set(domain)):
        if other == item or attribute_of(other) != attr:
            continue
        n_v2 = supp(b | {other})
        if n_v2 == 0:
            continue
        a_v2 = supp(b | {other, c})
        if a_v2 == 0:
            continue
        conf = Fraction(a_v2, n_v2)
        if best is None or conf < best[0]:
            best = (conf, other, a_v2, n_v2)
    if best is None:
        return out
    return Contingency(a1, n1, out.a2, out.n2, s_b, s_bc, best[1], best[2], best[3])


def _value_combinations(a: frozenset, domain: Iterable[str]) -> list:
    """Every itemset giving each attribute of A one of its values in `domain` (A's own
    included), or [] when some attribute of A has no other value there."""
    values: dict[str, set] = {attribute_of(i): set() for i in a}
    for item in domain:
        attr = attribute_of(item)
        if attr in values:
            values[attr].add(item)
    if any(len(v - a) == 0 for v in values.values()):
        return []
    for item in a:
        values[attribute_of(item)].add(item)
    return [frozenset(c) for c in itertools.product(*(sorted(values[k]) for k in sorted(values)))]


def _defined(measure: str, t: Contingency) -> bool:
    if t.n1 <= 0:
        return False
    if measure == "clift":
        return t.comparison is not None
    if measure in ("slift", "slift_d", "slift_c", "olift") and t.n2 <= 0:
        return False
    if measure in ("elift", "elift_d", "elift_c") and t.sB <= 0:
        return False
    if measure == "slift":
        return t.a2 > 0
    if measure == "elift":
        return t.sBC > 0
    if measure == "slift_c":
        return t.a2 < t.n2
    if measure == "elift_c":
        return t.sBC < t.sB
    if measure == "olift":
        return t.a2 > 0 and t.a1 < t.n1
    return True


def measure_value(measure: str, t: Contingency) -> Fraction | None:
    """f(A, B -> C) as an exact Fraction, or None where the paper leaves it undefined
    (a zero denominator: docs/papers.md, HJ-4).

    >>> t = Contingency(20, 34, 19, 47, 81, 39)
    >>> [round(float(measure_value(m, t)), 4) for m in ("slift", "elift", "slift_d", "elift_d", "slift_c", "elift_c", "olift")]
    [1.4551, 1.2217, 0.184, 0.1068, 0.6912, 0.7941, 2.1053]
    >>> measure_value("slift", Contingency(5, 10, 0, 4, 14, 5)) is None
    True
    """
    if not _defined(measure, t):
        return None
    if measure == "clift":
        a, b, c, d = t.a1, t.n1 - t.a1, t.a_v2, t.n_v2 - t.a_v2
    else:
        a, b, c, d = t.a1, t.n1 - t.a1, t.a2, t.n2 - t.a2
    value = discrimination_exact(_CODES[measure], a, b, c, d, a + c, a + b + c + d)
    return value if isinstance(value, Fraction) else None


def is_discriminatory(measure: str, value: Fraction | None, alpha: Fraction, reading: str = "strict") -> bool:
    """Def. 11: is a rule with measure `value` α-discriminatory? (False when undefined.)

    >>> is_discriminatory("slift", Fraction(5, 4), Fraction(5, 4)), is_discriminatory("slift", Fraction(5, 4), Fraction(5, 4), "nonstrict")
    (True, False)
    >>> is_discriminatory("slift_c", Fraction(4, 5), Fraction(4, 5))
    True
    """
    if value is None:
        return False
    if measure in CHANCE:
        return value <= alpha if reading == "strict" else value < alpha
    return value >= alpha if reading == "strict" else value > alpha


#: Which virtual transactions the slift family adds: the paper's {A, B}, or {A, B} with
#: the protected items of the attributes it leaves free (docs/papers.md, HJ-2).
TARGETS = ("paper", "union")


def target(measure: str, pattern: frozenset, roles: Roles, targets: str = "paper") -> frozenset:
    """p_t, the itemset whose support (and its subsets') Alg. 2 raises: {A, B} for the
    slift family, {B, C} for the elift family (Alg. 2 lines 8-12; the chance measures
    join their families as in Theorem 4 and Alg. 4).

    With ``targets="union"`` a slift-family target (clift aside: it compares values of
    one attribute) also holds, for every attribute that neither A nor B names, its
    protected item when DI_b has exactly one of that attribute. Such a virtual record
    raises n1 of every PD rule it supports instead of counting as ¬A′ for the other
    protected items A′, so it lowers p1 and never lowers p2 of any of them: it can only
    harm a rule whose context lacks an attribute that B fixes to an unprotected value
    (docs/papers.md, HJ-2). For olift it also makes a rule with a1 = n1 (undefined odds)
    defined, which the re-check then fixes (HJ-2, V10).

    >>> roles = Roles({"sex=F", "age=young"}, "C")
    >>> sorted(target("slift", frozenset({"sex=F", "job=x", "C"}), roles, "union"))
    ['age=young', 'job=x', 'sex=F']
    >>> sorted(target("slift", frozenset({"sex=F", "age=old", "C"}), roles, "union"))
    ['age=old', 'sex=F']
    """
    if measure not in SLIFT_FAMILY:
        return pattern - roles.protected
    t = pattern - {roles.decision}
    if targets == "paper" or measure == "clift":
        return t
    used = {attribute_of(i) for i in t}
    free: dict[str, list] = {}
    for item in roles.protected:
        if attribute_of(item) not in used:
            free.setdefault(attribute_of(item), []).append(item)
    return t | {items[0] for items in free.values() if len(items) == 1}


def _rhs(measure: str, t: Contingency, alpha: Fraction) -> Fraction | None:
    """The right-hand side of "Δ > RHS" (docs/papers.md, HJ-4), or None when no Δ can help."""
    a1, n1, a2, n2, sb, sbc = (Fraction(v) for v in (t.a1, t.n1, t.a2, t.n2, t.sB, t.sBC))
    if measure == "slift":
        return a1 * n2 / (a2 * alpha) - n1 if alpha > 0 else None
    if measure == "clift":
        return a1 * t.n_v2 / (t.a_v2 * alpha) - n1 if alpha > 0 else None
    if measure == "olift":
        return a1 * (n2 - a2) / (alpha * a2) + a1 - n1 if alpha > 0 else None
    if measure == "slift_d":
        bound = alpha + a2 / n2
        return a1 / bound - n1 if bound > 0 else None
    if measure == "slift_c":
        bound = 1 - alpha * (1 - a2 / n2)
        return a1 / bound - n1 if bound > 0 else None
    if measure == "elift":
        den = alpha * n1 - a1
        return (a1 * sb - alpha * n1 * sbc) / den if den > 0 else None
    if measure == "elift_d":
        q = a1 / n1 - alpha
        return (q * sb - sbc) / (1 - q) if q < 1 else None
    if measure == "elift_c":
        p1 = a1 / n1
        return alpha * (sb - sbc) / (1 - p1) - sb if p1 < 1 else None
    raise ValueError(measure)


def delta(measure: str, t: Contingency, alpha: Fraction, reading: str = "strict", *, ceil: bool = False) -> int | None:
    """Δ_f: the fewest virtual transactions equal to :func:`target` that make the rule
    α-protective (0 if it already is), or None if no number of them can (the
    feasibility conditions of docs/papers.md, HJ-4; undefined measures included).

    The strict reading takes ``floor(RHS) + 1``, not the paper's ``ceil(RHS)``, which
    lands on f = α when RHS is an integer (docs/papers.md, HJ-1); the nonstrict reading
    takes ``ceil(RHS)``. ``ceil=True`` forces the paper's literal ceiling.

    >>> t = Contingency(20, 34, 19, 47, 81, 39)   # Example 3/5 of the paper
    >>> delta("slift", t, Fraction(5, 4)), delta("elift", t, Fraction(6, 5)), delta("elift_c", t, Fraction(9, 10))
    (6, 2, 11)
    """
    if not _defined(measure, t):
        return None
    rhs = _rhs(measure, t, alpha)
    if rhs is None:
        return None
    step = math.floor(rhs) + 1 if reading == "strict" and not ceil else math.ceil(rhs)
    return max(0, step)
