"""What a published pattern set must satisfy and what is published (Hajian et al., DMKD 2015).

:class:`PatternRequirements` states α-protection (Def. 11, or Ruggieri's non-strict
reading), optionally k-anonymity of the set (Def. 2) and d-explainability (Def. 17).
:class:`PatternRelease` is what every pattern method returns: the sanitized set, the
original, the requirements, how the method ended and, once checked, the independent
verifier's report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pandas as pd

from .._validation import check_fraction, check_int, check_option
from ..release import Status, _jsonable
from .measures import CHANCE, READINGS, check_alpha, check_measure
from .patternset import PatternSet
from .sanitize import SanitizationResult
from .utility import utility_report
from .verify import PatternReport

__all__ = ["PatternRelease", "PatternRequirements"]


@dataclass(frozen=True)
class PatternRequirements:
    """What a published pattern set must satisfy.

    Parameters
    ----------
    measure : str, default="slift"
        slift, clift, elift, slift_d, elift_d, slift_c, elift_c or olift.
    alpha : rational, default=6/5
    reading : {"strict", "nonstrict"}, default="strict"
        Hajian et al.'s f < α (Def. 11) or Ruggieri's f <= α (reversed for the chance
        measures).
    k : int, optional
        k-anonymity of the pattern set (Def. 2).
    d : rational in [0, 1], optional
        Only d-unexplainable discrimination must go (Def. 17).
    strict_undefined : bool, default=False
        A PD pattern whose measure is undefined counts as a violation (docs/papers.md, HJ-4).

    >>> str(PatternRequirements("elift", 1.2, k=5, d=0.9))
    '1.2-protection (elift < 1.2), 5-anonymity, 0.9-explainable'
    """

    measure: str = "slift"
    alpha: Any = Fraction(6, 5)
    reading: str = "strict"
    k: int | None = None
    d: Any = None
    strict_undefined: bool = False

    def __post_init__(self):
        object.__setattr__(self, "measure", check_measure(self.measure, "PatternRequirements"))
        object.__setattr__(self, "alpha", check_alpha(self.alpha, "PatternRequirements"))
        check_option(self.reading, "reading", "PatternRequirements", READINGS)
        if self.k is not None:
            object.__setattr__(self, "k", check_int(self.k, "k", "PatternRequirements", low=1))
        if self.d is not None:
            object.__setattr__(self, "d", check_fraction(self.d, "d", "PatternRequirements", low=0, high=1))

    def __str__(self) -> str:
        op = (">" if self.measure in CHANCE else "<") + ("" if self.reading == "strict" else "=")
        parts = [f"{_show(self.alpha)}-protection ({self.measure} {op} {_show(self.alpha)})"]
        if self.k is not None:
            parts.append(f"{self.k}-anonymity")
        if self.d is not None:
            parts.append(f"{_show(self.d)}-explainable")
        return ", ".join(parts)


def _show(x: Fraction) -> str:
    f = float(x)
    return (repr(f).removesuffix(".0") if Fraction(repr(f)) == x else str(x))


@dataclass(frozen=True, eq=False)
class PatternRelease:
    """A published pattern set with how it was made and its verification.

    Attributes
    ----------
    patterns : PatternSet
        The sanitized set (base supports plus the ledger of virtual transactions).
    original : PatternSet
    requirements : PatternRequirements
    status : Status
        FEASIBLE (greedy, every requirement met), OPTIMAL (exact, proven), INFEASIBLE
        (see `reason`: no convergence, unsanitizable patterns, ...), UNKNOWN (time ran out).
    reason : str, optional
    objective : int, optional
        Total support added over the published itemsets.
    bound : int, optional
        Proven lower bound of the objective (exact method).
    provenance : mapping
    result : SanitizationResult, optional
        The greedy run (steps, rounds, residual patterns).
    report : PatternReport, optional
        The independent verification.
    """

    patterns: PatternSet
    original: PatternSet
    requirements: PatternRequirements
    status: Status = Status.FEASIBLE
    reason: str | None = None
    objective: Any = None
    bound: Any = None
    provenance: Mapping = field(default_factory=dict)
    result: SanitizationResult | None = None
    report: PatternReport | None = None

    @property
    def passed(self) -> bool:
        """The method found a release and the independent verifier confirms it."""
        return self.status in (Status.OPTIMAL, Status.FEASIBLE) and self.report is not None and self.report.passed

    def published(self) -> dict:
        return self.patterns.published()

    def changes(self) -> dict:
        """Utility measures against the original set (Fractions)."""
        return utility_report(self.original, self.patterns)

    def to_frame(self) -> pd.DataFrame:
        """One row per published itemset: items, support, original support."""
        pub = self.published()
        rows = [
            {"itemset": " & ".join(sorted(x)), "size": len(x), "support": s, "original_support": self.original.supports.get(x)}
            for x, s in pub.items()
        ]
        return pd.DataFrame(rows, columns=["itemset", "size", "support", "original_support"])

    def summary(self) -> dict:
        return {
            "requirements": str(self.requirements),
            "status": str(self.status),
            "reason": self.reason,
            "objective": self.objective,
            "bound": self.bound,
            "n_patterns": len(self.published()),
            "published_empty_support": self.patterns.empty_support,
            "virtual_records": self.patterns.ledger_total,
            "changes": {k: _jsonable(v) for k, v in self.changes().items()},
            "provenance": {k: _jsonable(v) for k, v in self.provenance.items()},
            "report": None if self.report is None else self.report.to_dict(),
        }

    def __repr__(self) -> str:
        return f"PatternRelease(method={self.provenance.get('method', '?')!r}, status={self.status}, n_patterns={len(self.patterns)}, virtual_records={self.patterns.ledger_total})"
