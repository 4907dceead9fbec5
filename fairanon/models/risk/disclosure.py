"""Attribute disclosure beside l-diversity and t-closeness: δ-disclosure and β-likeness.

For a class g and a value v of a sensitive attribute, let q = c_gv / f_g be the value's
share in the class and p = T_v / n its share in the whole table; their ratio is exactly
q / p = c_gv · n / (f_g · T_v).

- **δ-disclosure** (J. Brickell, V. Shmatikov. The cost of privacy: destruction of
  data-mining utility in anonymized data publishing. KDD 2008, Def. 4): a class is
  δ-disclosure-private when |ln(q / p)| < δ for every value v of the table. The achieved
  δ is max_{g,v} |ln(q/p)| (infinite when a class lacks a value of the table); the
  table is δ-disclosure-private for every δ above it.
- **β-likeness** (J. Cao, P. Karras. Publishing microdata with a robust privacy
  guarantee. PVLDB 5(11):1388-1399, 2012): basic β-likeness bounds the relative gain of
  every value whose share grows, (q − p)/p ≤ β for q > p (Def. 2); the achieved β is the
  largest such gain, exact. Enhanced β-likeness (Def. 3) bounds it by min(β, −ln p); it
  holds for the achieved β exactly when every gain is also at most −ln p, which is
  reported with the worst value.

Classes are the released classes (the suppressed block is one of them, see
:mod:`fairanon.models.risk.classes`); the sensitive values are read from the released
table, where they are unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...exceptions import InvalidParameterError
from .classes import RiskClasses

__all__ = ["Disclosure", "attribute_disclosure"]


@dataclass(frozen=True)
class Disclosure:
    """δ-disclosure and β-likeness of one sensitive attribute.

    Attributes
    ----------
    attribute : str
    delta : float
        The achieved δ, max |ln(q/p)| (inf when a class lacks a value of the table).
    delta_ratio : Fraction
        The exact ratio q/p at which it is reached.
    delta_witness : dict
    beta : Fraction
        The achieved basic β, max (q − p)/p over q > p (0 when every class has the
        table's distribution).
    beta_witness : dict
    enhanced : bool
        Whether enhanced β-likeness holds for the achieved β (every gain ≤ −ln p).
    enhanced_witness : dict or None
        The value whose gain most exceeds −ln p, when it does not hold.
    """

    attribute: str
    delta: float
    delta_ratio: Fraction
    delta_witness: dict
    beta: Fraction
    beta_witness: dict
    enhanced: bool
    enhanced_witness: dict | None = None

    def to_dict(self) -> dict:
        return {
            "attribute": self.attribute,
            "delta": self.delta if math.isfinite(self.delta) else "inf",
            "delta_ratio": str(self.delta_ratio),
            "delta_witness": self.delta_witness,
            "beta": {"value": float(self.beta), "exact": str(self.beta)},
            "beta_witness": self.beta_witness,
            "enhanced_beta_likeness": self.enhanced,
            "enhanced_witness": self.enhanced_witness,
        }


def _exact_extreme(counts, sizes, totals, n, rows, cols, largest: bool) -> tuple[Fraction, int, int]:
    """The exact largest (or smallest) ratio c·n/(f·T) among candidate cells."""
    best = None
    for g, v in zip(rows.tolist(), cols.tolist()):
        r = Fraction(int(counts[g, v]) * n, int(sizes[g]) * int(totals[v]))
        if best is None or (r > best[0] if largest else r < best[0]):
            best = (r, g, v)
    return best


def attribute_disclosure(classes: RiskClasses, attribute: str) -> Disclosure:
    """δ-disclosure and β-likeness of `attribute` over the classes of a regrouped table.

    Raises
    ------
    SchemaError
        If the table lacks the attribute's column.
    InvalidParameterError
        If the attribute is a quasi-identifier (its released values are generalized).
    """
    if attribute in classes.qi:
        raise InvalidParameterError(
            f"attribute_disclosure measures a sensitive attribute, not the quasi-identifier {attribute!r}."
        )
    counts, values = classes.value_counts(attribute)
    n = classes.n_records
    sizes = classes.sizes
    totals = counts.sum(axis=0)
    # ratio[g, v] = c·n / (f·T), in floats to find the candidates, then exact.
    ratio = counts * (n / totals)[None, :] / sizes[:, None]
    hi = ratio.max()
    lo = ratio.min()
    tol = 1e-9

    def witness(g, v, r, **extra):
        out = {"class": classes.class_labels(g), "size": int(sizes[g]), "value": str(values[v]),
               "in_class": int(counts[g, v]), "in_table": int(totals[v]), "ratio": str(r)}
        out.update(extra)
        return out

    rows, cols = np.nonzero(ratio >= hi * (1 - tol))
    r_hi, g_hi, v_hi = _exact_extreme(counts, sizes, totals, n, rows, cols, True)
    if lo == 0:
        rows, cols = np.nonzero(counts == 0)
        r_lo, g_lo, v_lo = Fraction(0), int(rows[0]), int(cols[0])
    else:
        rows, cols = np.nonzero(ratio <= lo * (1 + tol))
        r_lo, g_lo, v_lo = _exact_extreme(counts, sizes, totals, n, rows, cols, False)
    up = math.log(r_hi.numerator) - math.log(r_hi.denominator)
    down = math.inf if r_lo == 0 else -(math.log(r_lo.numerator) - math.log(r_lo.denominator))
    if up >= down:
        delta, delta_ratio, dw = up, r_hi, witness(g_hi, v_hi, r_hi)
    else:
        delta, delta_ratio, dw = down, r_lo, witness(g_lo, v_lo, r_lo)
    beta = max(r_hi - 1, Fraction(0))
    bw = witness(g_hi, v_hi, r_hi, gain=str(beta))
    # Enhanced: gain (q−p)/p ≤ −ln p for every value whose share grows.
    p = totals / n
    slack = (ratio - 1.0) + np.log(p)[None, :]
    grows = ratio > 1.0
    enhanced, ew = True, None
    if grows.any():
        masked = np.where(grows, slack, -np.inf)
        g, v = np.unravel_index(int(np.argmax(masked)), masked.shape)
        if masked[g, v] > 0:
            enhanced = False
            r = Fraction(int(counts[g, v]) * n, int(sizes[g]) * int(totals[v]))
            ew = witness(int(g), int(v), r, gain=str(r - 1), bound=float(-np.log(p[v])))
    return Disclosure(attribute, delta, delta_ratio, dw, beta, bw, enhanced, ew)
