"""The independent checker of a published pattern set.

It reads only what is published — itemsets with supports, the published supp(∅), the
item roles — and, for itemsets the set does not list (clift's comparison groups, the
d-instance term supp(A, B, D)), an optional support function the caller provides (the
database plus the published virtual transactions, or published noisy bins). It imports
none of the algorithms of :mod:`fairanon.patterns`: discrimination measures, d-instance
conditions and inference-channel supports are recomputed here from their definitions
(Hajian et al. Defs. 1-2, 6-17) in exact arithmetic.

Scope (docs/papers.md, HJ-8): k-anonymity is checked in the form of Def. 2 — no published
pattern and no inference channel ``C_I^J`` between published itemsets (I non-empty) has
a support in (0, k). Other deductions (support bounds of non-derivable itemsets,
channels with an empty lower end from the published supp(∅)) are out of scope.
ε-differential privacy is a property of the mechanism, not of its output, and cannot be
checked here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["Check", "PatternReport", "verify_patterns"]

_MEASURES = ("slift", "clift", "elift", "slift_d", "elift_d", "slift_c", "elift_c", "olift")
_SMALLER_IS_WORSE = ("slift_c", "elift_c")


@dataclass(frozen=True)
class Check:
    """One verified property: whether it holds, the achieved value and a witness."""

    name: str
    passed: bool
    value: Any = None
    witness: Any = None
    detail: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "value": _plain(self.value), "witness": _plain(self.witness), "detail": self.detail}


def _plain(x):
    if isinstance(x, Fraction):
        return float(x)
    if isinstance(x, frozenset):
        return sorted(x)
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


@dataclass(frozen=True)
class PatternReport:
    """The checks of a published pattern set; ``passed`` when every one holds."""

    checks: tuple
    notes: tuple = ()
    counts: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def __getitem__(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict:
        return {"passed": self.passed, "checks": [c.to_dict() for c in self.checks], "notes": list(self.notes), "counts": _plain(self.counts)}

    def __str__(self) -> str:
        lines = [f"Pattern set verification: {'PASSED' if self.passed else 'FAILED'}"]
        for c in self.checks:
            value = f" = {float(c.value):.6g}" if isinstance(c.value, Fraction) else (f" = {c.value}" if c.value is not None else "")
            lines.append(f"  [{'ok' if c.passed else 'FAIL'}] {c.name}{value}: {c.detail}")
            if not c.passed and c.witness is not None:
                lines.append(f"         witness: {_plain(c.witness)}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


class _Supports:
    """Published supports, derived ones for closed sets, then the caller's function."""

    def __init__(self, published: Mapping, empty: int, closed: bool, support_of: Callable | None):
        self.published = {frozenset(x): int(s) for x, s in published.items()}
        self.empty = int(empty)
        self.closed = closed
        self.support_of = support_of
        self.index: dict = {}
        if closed:
            for pos, x in enumerate(self.published):
                for item in x:
                    self.index.setdefault(item, set()).add(pos)
            self.values = list(self.published.values())

    def __call__(self, itemset) -> int | None:
        x = frozenset(itemset)
        if not x:
            return self.empty
        found = self.published.get(x)
        if found is not None:
            return found
        if self.closed:
            ids = None
            for item in x:
                ids = set(self.index.get(item, ())) if ids is None else ids & self.index.get(item, set())
                if not ids:
                    break
            if ids:
                return max(self.values[i] for i in ids)
        if self.support_of is not None:
            return int(self.support_of(x))
        return None


def _attr(item: str) -> str:
    return item.split("=", 1)[0]


def _value(measure: str, a1: int, n1: int, a2: int, n2: int, s_b: int, s_bc: int) -> Fraction | None:
    """The measure from its definition (paper Fig. 2); None when a denominator is 0."""
    if n1 <= 0:
        return None
    p1 = Fraction(a1, n1)
    if measure in ("slift", "clift", "slift_d", "slift_c", "olift"):
        if n2 <= 0:
            return None
        p2 = Fraction(a2, n2)
        if measure in ("slift", "clift"):
            return p1 / p2 if p2 else None
        if measure == "slift_d":
            return p1 - p2
        if measure == "slift_c":
            return (1 - p1) / (1 - p2) if p2 != 1 else None
        return p1 * (1 - p2) / (p2 * (1 - p1)) if p2 and p1 != 1 else None
    if s_b <= 0:
        return None
    p = Fraction(s_bc, s_b)
    if measure == "elift":
        return p1 / p if p else None
    if measure == "elift_d":
        return p1 - p
    return (1 - p1) / (1 - p) if p != 1 else None


def _bad(measure: str, value: Fraction, alpha: Fraction, reading: str) -> bool:
    if measure in _SMALLER_IS_WORSE:
        return value <= alpha if reading == "strict" else value < alpha
    return value >= alpha if reading == "strict" else value > alpha


def _rule_value(measure, pattern, roles, supp, domain):
    """(value, note) of the PD rule of `pattern`; note says why it is None."""
    c = roles.decision
    a = pattern & frozenset(roles.protected)
    b = pattern - a - {c}
    counts = [supp(pattern), supp(a | b), supp(b), supp(b | {c})]
    if any(v is None for v in counts):
        return None, "unknown support"
    a1, n1, s_b, s_bc = counts
    if measure != "clift":
        return _value(measure, a1, n1, s_bc - a1, s_b - n1, s_b, s_bc), "undefined"
    if len(a) != 1:
        return None, "undefined"
    (item,) = a
    worst = None
    for other in domain:
        if other == item or _attr(other) != _attr(item):
            continue
        n_v, a_v = supp(b | {other}), supp(b | {other, c})
        if not n_v or not a_v:
            continue
        conf = Fraction(a_v, n_v)
        if worst is None or conf < worst[0]:
            worst = (conf, a_v, n_v)
    if worst is None:
        return None, "undefined"
    return _value("slift", a1, n1, worst[1], worst[2], s_b, s_bc), "undefined"


def _explained(pattern, roles, supp, d: Fraction, candidates) -> bool:
    c = roles.decision
    a = pattern & frozenset(roles.protected)
    b = pattern - a - {c}
    bc = b | {c}
    s_ab, s_abc = supp(a | b), supp(pattern)
    for p_d in candidates:
        if not bc <= p_d:
            continue
        dset = p_d - bc
        if not dset or not dset <= frozenset(roles.admissible):
            continue
        s_dbc, s_db, s_abd = supp(p_d), supp(dset | b), supp(a | b | dset)
        if None in (s_dbc, s_db, s_abd):
            continue
        if Fraction(s_dbc) * s_ab >= d * s_abc * s_db and s_abd >= d * s_ab:
            return True
    return False


def _channels(frequent: Mapping, k: int, limit: int = 20) -> tuple[int, list]:
    """Number of channels with support in (0, k) among `frequent` (downward closed), and
    up to `limit` witnesses, by inclusion-exclusion over each upper end J."""
    by_size: dict[int, list] = {}
    for x in frequent:
        if len(x) >= 2:
            by_size.setdefault(len(x), []).append(x)
    found, witnesses = 0, []
    for m, uppers in by_size.items():
        full = (1 << m) - 1
        subsets = [[j for j in range(m) if mask >> j & 1] for mask in range(full + 1)]
        table = np.zeros((len(uppers), full + 1), dtype=object)
        sorted_uppers = [sorted(u) for u in uppers]
        for r, items in enumerate(sorted_uppers):
            for mask in range(1, full + 1):
                table[r, mask] = frequent[frozenset(items[j] for j in subsets[mask])]
        # c(I, J) = Σ_{I ⊆ X ⊆ J} (-1)^{|X \ I|} supp(X), one bit of J \ I at a time
        for bit in (1 << j for j in range(m)):
            for mask in range(1, full + 1):
                if not mask & bit:
                    table[:, mask] = table[:, mask] - table[:, mask | bit]
        values = table[:, 1:full].astype(np.int64)
        bad = (values > 0) & (values < k)
        found += int(bad.sum())
        for r, col in zip(*np.nonzero(bad)):
            if len(witnesses) < limit:
                mask = col + 1
                lower = frozenset(sorted_uppers[r][j] for j in subsets[mask])
                witnesses.append({"I": sorted(lower), "J": sorted(uppers[r]), "support": int(values[r, col])})
    return found, witnesses


def _all_frequent(published: Mapping, supp) -> dict:
    """Every subset of a published (closed) itemset with its derived support."""
    out = {}
    for x in published:
        items = sorted(x)
        for mask in range(1, 1 << len(items)):
            sub = frozenset(items[j] for j in range(len(items)) if mask >> j & 1)
            if sub not in out:
                out[sub] = supp(sub)
    return out


def verify_patterns(
    published: Mapping,
    *,
    roles,
    empty_support: int,
    measure: str | None = None,
    alpha: Any = None,
    reading: str = "strict",
    d: Any = None,
    k: int | None = None,
    closed: bool = False,
    support_of: Callable[[frozenset], int] | None = None,
    original: Mapping | None = None,
    domain: Iterable[str] = (),
    strict_undefined: bool = False,
    notes: Iterable[str] = (),
) -> PatternReport:
    """Re-check a published pattern set: consistency, α-protection (Def. 13),
    d-explainability (Def. 17) and k-anonymity (Def. 2).

    Parameters
    ----------
    published : mapping of itemset -> support
    roles : object with ``protected``, ``decision`` and ``admissible``
        (a :class:`~fairanon.patterns.Roles`).
    empty_support : int
        The published supp(∅) (|D| plus the virtual records, docs/papers.md, HJ-4).
    measure, alpha, reading : optional
        Check α-protection with this measure and threshold (strict: f < α as in Def. 11;
        nonstrict: f <= α; reversed for slift_c, elift_c).
    d : rational, optional
        Only d-unexplainable α-discriminatory patterns count as violations (Def. 17).
    k : int, optional
        Check Def. 2.
    closed : bool, default=False
        The set lists closed itemsets; other supports are derived (§5.2).
    support_of : callable, optional
        Supports of itemsets the set does not list.
    original : mapping, optional
        The set before sanitization: then no support may have decreased and (frequent
        sets) the itemsets must be the same.
    strict_undefined : bool, default=False
        Count a PD pattern with an undefined measure as a violation (docs/papers.md, HJ-4).

    Returns
    -------
    PatternReport

    Examples
    --------
    >>> from fairanon.patterns import Roles
    >>> pub = {frozenset("f"): 40, frozenset("v"): 87, frozenset("C"): 39, frozenset("fv"): 40,
    ...        frozenset("fC"): 20, frozenset("vC"): 39, frozenset("fvC"): 20}
    >>> rep = verify_patterns(pub, roles=Roles({"f"}, "C"), empty_support=87, measure="slift", alpha=1.25)
    >>> rep.passed, round(float(rep["alpha_protection"].value), 4)
    (True, 1.2368)
    """
    published = {frozenset(x): s for x, s in published.items()}
    supp = _Supports(published, empty_support, closed, support_of)
    checks: list[Check] = []
    notes = list(notes)
    counts: dict = {"itemsets": len(published)}

    # consistency: non-negative integers, no itemset above a subset (anti-monotone)
    broken = None
    for x, s in published.items():
        if not isinstance(s, (int, np.integer)) or s < 0 or s > supp.empty:
            broken = {"itemset": sorted(x), "support": s, "why": "not an int in [0, supp(∅)]"}
            break
        for item in x:
            parent = supp(x - {item})
            if parent is not None and parent < s:
                broken = {"itemset": sorted(x), "support": s, "subset": sorted(x - {item}), "subset_support": parent}
                break
        if broken:
            break
    checks.append(Check("consistency", broken is None, None, broken, "supports are non-negative integers and anti-monotone"))

    if original is not None:
        original = {frozenset(x): s for x, s in original.items()}
        missing = [x for x in original if x not in published]
        ghosts = [x for x in published if x not in original]
        lowered = [x for x, s in original.items() if x in published and published[x] < s]
        ok = not lowered and not missing and (closed or not ghosts)
        counts.update(misses=len(missing), ghosts=len(ghosts), lowered=len(lowered))
        witness = {"missing": [sorted(x) for x in missing[:5]], "ghosts": [sorted(x) for x in ghosts[:5]], "lowered": [sorted(x) for x in lowered[:5]]}
        checks.append(Check("structure", ok, None, None if ok else witness,
                            f"{len(missing)} misses, {len(ghosts)} ghosts, {len(lowered)} lowered supports"))

    if measure is not None:
        if measure not in _MEASURES:
            raise ValueError(f"unknown measure {measure!r}; known: {_MEASURES}")
        alpha = Fraction(alpha) if not isinstance(alpha, float) else Fraction(repr(alpha))
        c = roles.decision
        protected = frozenset(roles.protected)
        items = set(domain) | {i for x in published for i in x}
        pd = [p for p in published if c in p and p & protected]
        bad, undefined, unknown, worst = [], [], [], None
        for p in pd:
            value, why = _rule_value(measure, p, roles, supp, sorted(items))
            if value is None:
                (unknown if why == "unknown support" else undefined).append(p)
                continue
            severity = -value if measure in _SMALLER_IS_WORSE else value
            if worst is None or severity > worst[0]:
                worst = (severity, value, p)
            if _bad(measure, value, alpha, reading):
                bad.append((p, value))
        counts.update(pd_patterns=len(pd), discriminatory=len(bad), undefined=len(undefined), unknown=len(unknown))
        if d is not None:
            d = Fraction(d) if not isinstance(d, float) else Fraction(repr(d))
            instances = [p for p in published if c in p and not p & protected]
            unexplained = [(p, v) for p, v in bad if not _explained(p, roles, supp, d, instances)]
            counts.update(explainable=len(bad) - len(unexplained), unexplainable=len(unexplained))
        violations = bad if d is None else unexplained
        failing = list(violations) + ([(p, None) for p in undefined] if strict_undefined else []) + [(p, None) for p in unknown]
        op = ">" if measure in _SMALLER_IS_WORSE else "<"
        op = op if reading == "strict" else op + "="
        detail = (f"{len(pd)} PD patterns, {len(bad)} α-discriminatory (protective iff {measure} {op} {alpha})"
                  + (f", {len(undefined)} undefined" if undefined else "")
                  + (f", {len(unknown)} with unknown supports" if unknown else ""))
        witness = [{"pattern": sorted(p), "value": None if v is None else float(v)} for p, v in failing[:10]] or None
        checks.append(Check("alpha_protection" if d is None else "d_explainable_alpha_protection", not failing,
                            None if worst is None else worst[1], witness,
                            detail + ("" if d is None else f"; {counts['unexplainable']} of them {d}-unexplainable")))
        if d is not None:
            checks.append(Check("alpha_protection", True, None if worst is None else worst[1], None,
                                f"{len(bad)} α-discriminatory patterns (allowed when d-explainable)"))

    if k is not None:
        small = [x for x, s in published.items() if 0 < s < k]
        frequent = _all_frequent(published, supp) if closed else published
        n_channels, witnesses = _channels(frequent, int(k))
        counts.update(small_patterns=len(small), channels=n_channels)
        ok = not small and not n_channels
        witness = {"patterns": [sorted(x) for x in small[:5]], "channels": witnesses} if not ok else None
        checks.append(Check("k_anonymity", ok, n_channels, witness,
                            f"{len(small)} patterns and {n_channels} inference channels with support in (0, {k})"))
        notes.append("k-anonymity is checked as Def. 2 (patterns and inference channels C_I^J with I non-empty); "
                     "other deductions from the published supports are out of scope")
    return PatternReport(tuple(checks), tuple(notes), counts)
