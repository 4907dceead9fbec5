"""Utility and discrimination-impact measures of a transformed pattern set TP against
the original FP (Hajian et al. §7.1), as exact Fractions.

- support-altered: share of FP's itemsets whose support differs in TP;
- pattern distortion error: ``(1/|FP|) Σ_{I ∈ FP ∩ TP} (supp_TP(I) - supp_FP(I)) / supp_FP(I)``,
  signed as in the paper (also the mean absolute relative error, docs/papers.md, HJ-9, which DP
  noise cannot cancel out in);
- misses cost MC = |FP \\ TP| / |FP| and ghost cost GC = |TP \\ FP| / |TP|;
- DPD: share of FP's α-discriminatory patterns that TP no longer has as discriminatory;
  NDD: share of TP's α-discriminatory patterns that were not discriminatory in FP.
"""

from __future__ import annotations

from fractions import Fraction

from .detect import detect_discriminatory
from .patternset import PatternSet

__all__ = [
    "absolute_distortion",
    "discrimination_impact",
    "distortion",
    "dpd",
    "ghost_cost",
    "misses_cost",
    "ndd",
    "support_altered",
    "utility_report",
]


def _maps(original, transformed):
    fp = original.published() if isinstance(original, PatternSet) else dict(original)
    tp = transformed.published() if isinstance(transformed, PatternSet) else dict(transformed)
    return fp, tp


def support_altered(original, transformed) -> Fraction:
    """Share of the original itemsets whose support changed (or that are missing).

    >>> support_altered({frozenset("a"): 5, frozenset("b"): 4}, {frozenset("a"): 6, frozenset("b"): 4})
    Fraction(1, 2)
    """
    fp, tp = _maps(original, transformed)
    if not fp:
        return Fraction(0)
    return Fraction(sum(1 for x, s in fp.items() if tp.get(x) != s), len(fp))


def distortion(original, transformed) -> Fraction:
    """The paper's pattern distortion error (signed; missing itemsets are left out and
    show up in :func:`misses_cost`).

    >>> distortion({frozenset("a"): 5, frozenset("b"): 4}, {frozenset("a"): 6, frozenset("b"): 4})
    Fraction(1, 10)
    """
    fp, tp = _maps(original, transformed)
    if not fp:
        return Fraction(0)
    return sum((Fraction(tp[x] - s, s) for x, s in fp.items() if x in tp and s), Fraction(0)) / len(fp)


def absolute_distortion(original, transformed) -> Fraction:
    """Mean absolute relative support error over the original itemsets present in TP."""
    fp, tp = _maps(original, transformed)
    if not fp:
        return Fraction(0)
    return sum((Fraction(abs(tp[x] - s), s) for x, s in fp.items() if x in tp and s), Fraction(0)) / len(fp)


def misses_cost(original, transformed) -> Fraction:
    """|FP \\ TP| / |FP|."""
    fp, tp = _maps(original, transformed)
    return Fraction(len(set(fp) - set(tp)), len(fp)) if fp else Fraction(0)


def ghost_cost(original, transformed) -> Fraction:
    """|TP \\ FP| / |TP| (the published set as denominator, as the paper's prose has it)."""
    fp, tp = _maps(original, transformed)
    return Fraction(len(set(tp) - set(fp)), len(tp)) if tp else Fraction(0)


def dpd(before: set, after: set) -> Fraction | None:
    """Discrimination prevention degree; None when FP has no α-discriminatory pattern.

    >>> dpd({1, 2, 3, 4}, {1, 5})
    Fraction(3, 4)
    """
    before = set(before)
    return Fraction(len(before - set(after)), len(before)) if before else None


def ndd(before: set, after: set) -> Fraction | None:
    """New (ghost) discrimination degree; None when TP has no α-discriminatory pattern.

    >>> ndd({1, 2, 3, 4}, {1, 5})
    Fraction(1, 2)
    """
    after = set(after)
    return Fraction(len(after - set(before)), len(after)) if after else None


def discrimination_impact(
    before: PatternSet, after: PatternSet, measure: str, alpha, *, reading: str = "strict", negation: str = "subtraction"
) -> dict:
    """DPD and NDD of `after` against `before`, with the underlying counts.

    `negation="complement"` reads the counts of ¬A as the paper's Table 8 does (the
    records carrying another value of the protected attributes); fairanon's default
    "subtraction" also counts the virtual records of the privacy step that carry none
    (docs/papers.md, HJ-5).
    """
    old = set(detect_discriminatory(before, measure, alpha, reading=reading, negation=negation).patterns())
    new = set(detect_discriminatory(after, measure, alpha, reading=reading, negation=negation).patterns())
    return {
        "discriminatory_before": len(old),
        "discriminatory_after": len(new),
        "removed": len(old - new),
        "created": len(new - old),
        "dpd": dpd(old, new),
        "ndd": ndd(old, new),
    }


def utility_report(original, transformed) -> dict:
    """Every utility measure at once (Fractions)."""
    return {
        "support_altered": support_altered(original, transformed),
        "distortion": distortion(original, transformed),
        "absolute_distortion": absolute_distortion(original, transformed),
        "misses_cost": misses_cost(original, transformed),
        "ghost_cost": ghost_cost(original, transformed),
    }
