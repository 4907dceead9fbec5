"""Detection of α-discriminatory patterns (Hajian et al. Alg. 1, DETDISCPATT) and of
d-unexplainable ones (Alg. 3, DETUNEXPLAINPATT), with the impact order of Alg. 5.

Supports are always the *current* ones (the base supports plus every virtual
transaction so far; docs/papers.md, HJ-4): the paper's Scenarios 1-2 depend on detection
seeing what k-anonymization changed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .._validation import check_fraction, check_option
from .measures import (
    CHANCE,
    NEGATIONS,
    READINGS,
    Contingency,
    check_alpha,
    check_measure,
    contingency,
    is_discriminatory,
    measure_value,
)
from .mining import canonical
from .patternset import PatternSet, Workspace, split_pattern

__all__ = ["Detection", "Finding", "detect_discriminatory", "detect_unexplainable", "domain_of", "explanation", "impact_order"]


@dataclass(frozen=True)
class Finding:
    """A PD pattern with its rule's contingency table and measure value."""

    pattern: frozenset
    table: Contingency
    value: Fraction | None
    impact: int = 0
    explained_by: frozenset | None = None

    @property
    def rule(self) -> str:
        return ", ".join(sorted(self.pattern))


@dataclass(frozen=True)
class Detection:
    """What a detection pass found.

    discriminatory : α-discriminatory PD patterns (for Alg. 3: the d-unexplainable ones),
        in impact order.
    explained : α-discriminatory patterns that are d-explainable (Alg. 3 only), with the
        admissible itemset D that explains each.
    undefined : PD patterns whose measure is undefined (a zero denominator, docs/papers.md, HJ-4).
    """

    discriminatory: tuple
    explained: tuple = ()
    undefined: tuple = ()

    def patterns(self) -> list:
        return [f.pattern for f in self.discriminatory]

    def __len__(self) -> int:
        return len(self.discriminatory)


def _workspace(patterns) -> Workspace:
    return patterns if isinstance(patterns, Workspace) else Workspace(patterns)


def domain_of(patterns: PatternSet) -> frozenset:
    """Every item known to the set: those of its itemsets and of its source."""
    items = {i for x in patterns.supports for i in x}
    items.update(getattr(patterns.source, "items", ()) or ())
    return frozenset(items)


def _severity(measure: str, value: Fraction) -> Fraction:
    return -value if measure in CHANCE else value


def impact_order(findings: Sequence[Finding], measure: str) -> list:
    """Alg. 5's order: impact (the number of α-discriminatory proper subsets) descending;
    ties by size descending, then by how discriminatory (docs/papers.md, HJ-4), then by the
    canonical item order.
    """
    pats = [f.pattern for f in findings]
    members = set(pats)
    impacts = []
    for p in pats:
        if 2 ** len(p) < len(pats):
            count = sum(
                1 for r in range(1, len(p)) for sub in itertools.combinations(sorted(p), r) if frozenset(sub) in members
            )
        else:
            count = sum(1 for q in pats if q < p)
        impacts.append(count)
    out = [Finding(f.pattern, f.table, f.value, imp, f.explained_by) for f, imp in zip(findings, impacts)]
    out.sort(key=lambda f: (-f.impact, -len(f.pattern), -_severity(measure, f.value), canonical(f.pattern)))
    return out


def _scan(ws: Workspace, measure: str, alpha: Fraction, reading: str, negation: str = "subtraction"):
    roles = ws.patterns.roles
    domain = domain_of(ws.patterns) if measure == "clift" or negation == "complement" else ()
    found, undefined = [], []
    for p in ws.patterns.pd_patterns():
        table = contingency(ws.supp, p, roles, measure=measure, domain=domain, negation=negation)
        value = measure_value(measure, table)
        if value is None:
            undefined.append(p)
        elif is_discriminatory(measure, value, alpha, reading):
            found.append(Finding(p, table, value))
    return found, undefined


def detect_discriminatory(
    patterns, measure: str = "slift", alpha=Fraction(6, 5), *, reading: str = "strict", negation: str = "subtraction"
) -> Detection:
    """DETDISCPATT [1]_ (Alg. 1): the α-discriminatory PD patterns of a set.

    Parameters
    ----------
    patterns : PatternSet
        Current supports are used (base + virtual transactions).
    measure : {"slift", "clift", "elift", "slift_d", "elift_d", "slift_c", "elift_c", "olift"}
    alpha : rational
    reading : {"strict", "nonstrict"}, default="strict"
        Def. 11 (f >= α is discriminatory) or Ruggieri's (f > α); reversed for the
        chance measures.
    negation : {"subtraction", "complement"}, default="subtraction"
        How the counts of ¬A are read (:data:`~fairanon.patterns.measures.NEGATIONS`);
        the two differ only once virtual records were added.

    Returns
    -------
    Detection
        In impact order (Alg. 5 line 5); undefined measures listed apart (docs/papers.md, HJ-4).

    References
    ----------
    .. [1] S. Hajian, J. Domingo-Ferrer, A. Monreale, D. Pedreschi, F. Giannotti.
       Discrimination- and privacy-aware patterns. Data Mining and Knowledge Discovery
       29(6), 2015.

    Examples
    --------
    >>> from fairanon.patterns import PatternSet, Roles, TransactionDB
    >>> db = TransactionDB.from_counts({("f", "v", "C"): 20, ("f", "v"): 14, ("v", "C"): 19, ("v",): 28})
    >>> ps = PatternSet.from_db(db, 1, Roles({"f"}, "C"), backend="apriori")
    >>> d = detect_discriminatory(ps, "slift", 1.25)
    >>> [sorted(p) for p in d.patterns()], round(float(d.discriminatory[0].value), 4)
    ([['C', 'f', 'v'], ['C', 'f']], 1.4551)
    """
    measure = check_measure(measure, "detect_discriminatory")
    alpha = check_alpha(alpha, "detect_discriminatory")
    check_option(reading, "reading", "detect_discriminatory", READINGS)
    check_option(negation, "negation", "detect_discriminatory", NEGATIONS)
    ws = _workspace(patterns)
    found, undefined = _scan(ws, measure, alpha, reading, negation)
    return Detection(tuple(impact_order(found, measure)), (), tuple(sorted(undefined, key=canonical)))


def explanation(ws: Workspace, finding: Finding, d: Fraction, instances: Sequence[frozenset]) -> frozenset | None:
    """The admissible itemset D that makes `finding` d-explainable, or None (Defs. 15-16).

    The PND rule ``D, B -> C`` must share the context B (docs/papers.md, HJ-10): a PND pattern
    p_d qualifies when it holds B ∪ {C} and D = p_d \\ (B ∪ {C}) is non-empty and
    admissible. Condition 1: conf(D,B -> C) >= d·conf(A,B -> C); Condition 2:
    conf(A,B -> D) >= d; both cross-multiplied in exact arithmetic.
    """
    roles = ws.patterns.roles
    a, b = split_pattern(finding.pattern, roles)
    bc = b | {roles.decision}
    s_ab = ws.supp(a | b)
    s_abc = ws.supp(finding.pattern)
    for p_d in instances:
        if not bc <= p_d:
            continue
        dset = p_d - bc
        if not dset or not dset <= roles.admissible:
            continue
        s_dbc = ws.supp(p_d)
        s_db = ws.supp(dset | b)
        cond1 = s_dbc * s_ab * d.denominator >= d.numerator * s_abc * s_db
        if not cond1:
            continue
        cond2 = ws.supp(a | b | dset) * d.denominator >= d.numerator * s_ab
        if cond2:
            return dset
    return None


def _instances(patterns: PatternSet) -> list:
    roles = patterns.roles
    c = roles.decision
    return [p for p in patterns.supports if c in p and not p & roles.protected and p & roles.admissible]


def detect_unexplainable(
    patterns, measure: str = "slift", alpha=Fraction(6, 5), d=Fraction(9, 10), *, reading: str = "strict",
    negation: str = "subtraction",
) -> Detection:
    """DETUNEXPLAINPATT [1]_ (Alg. 3): the α-discriminatory PD patterns that are
    d-unexplainable by the admissible items DI_e of the roles (`reading` and `negation`
    as in :func:`detect_discriminatory`).

    Returns
    -------
    Detection
        ``discriminatory`` holds the d-unexplainable patterns (D_bad, impact order);
        ``explained`` the d-explainable ones with the explaining itemset.

    References
    ----------
    .. [1] S. Hajian et al. Discrimination- and privacy-aware patterns. DMKD 29(6), 2015.

    Examples
    --------
    >>> from fairanon.patterns import PatternSet, Roles, TransactionDB
    >>> db = TransactionDB.from_counts({("f", "v", "d", "C"): 20, ("f", "v", "d"): 11, ("f", "v"): 3,
    ...                                 ("v", "d", "C"): 10, ("v", "d"): 2, ("v",): 20})
    >>> ps = PatternSet.from_db(db, 1, Roles({"f"}, "C", admissible={"d"}), backend="apriori")
    >>> det = detect_unexplainable(ps, "slift", 1.25, 0.9)
    >>> len(det), sorted((sorted(f.pattern), sorted(f.explained_by)) for f in det.explained)
    (0, [(['C', 'f'], ['d']), (['C', 'f', 'v'], ['d'])])
    """
    measure = check_measure(measure, "detect_unexplainable")
    alpha = check_alpha(alpha, "detect_unexplainable")
    d = check_fraction(d, "d", "detect_unexplainable", low=0, high=1)
    check_option(reading, "reading", "detect_unexplainable", READINGS)
    check_option(negation, "negation", "detect_unexplainable", NEGATIONS)
    ws = _workspace(patterns)
    found, undefined = _scan(ws, measure, alpha, reading, negation)
    instances = _instances(ws.patterns)
    bad, legal = [], []
    for f in found:
        dset = explanation(ws, f, d, instances)
        if dset is None:
            bad.append(f)
        else:
            legal.append(Finding(f.pattern, f.table, f.value, 0, dset))
    return Detection(tuple(impact_order(bad, measure)), tuple(legal), tuple(sorted(undefined, key=canonical)))
