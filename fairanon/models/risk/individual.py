"""Individual risk per record (Benedetti & Franconi), expected re-identifications, global risk.

R. Benedetti, L. Franconi. Statistical and technological solutions for controlled data
dissemination. Pre-proceedings of New Techniques and Technologies for Statistics,
Sorrento, 1998; in the form of L. Franconi, S. Polettini. Individual risk estimation in
μ-Argus: a review. Privacy in Statistical Databases, LNCS 3050:262-272, 2004, as
sdcMicro's ``measure_risk`` computes it.

A record of class k has sample frequency f_k (the records with its released
quasi-identifier values) and estimated population frequency F_k = Σ_{i ∈ k} w_i, the
sum of the sampling weights of the class's records. Given f_k, the population frequency
is modelled as F = f_k + G with G negative binomial of size f_k and success probability
p_k = f_k / F_k, and the individual risk is the expected chance of a correct match,

    r_k = E[1/F | f_k] = Σ_{h ≥ f_k} (1/h) C(h−1, f_k−1) p_k^{f_k} (1−p_k)^{h−f_k}
        = (p_k / f_k) · ₂F₁(1, 1; f_k + 1; 1 − p_k)
        = p_k ∫_0^1 (1−t)^{f_k−1} / (1 − (1−p_k) t) dt,

with the closed forms r = (p/q) ln(1/p) for f = 1 and (p/q²)(p ln p + q) for f = 2
(q = 1 − p). fairanon evaluates it exactly (to rounding): by the hypergeometric series
Σ_j j! q^j / ((f+1)…(f+j)) when q < 1/2 or f ≥ 24, where it converges geometrically,
else by the stable forward recurrence I_f = (1/(f−1) − p I_{f−1}) / q from
I_1 = ln(1/p)/q (r = p I_f). ``method="sdcmicro"`` reproduces the figures of sdcMicro's
C++ routine (``compute_risk``, behind ``measure_risk``) instead: p shifted down by 10⁻⁴,
the closed forms for f = 1, 2 and p/(f − q) for f > 2 (its R ``indivRisk(method =
"approx")`` has the same forms without the shift).

The expected number of re-identifications is ER = Σ_records r_k and the global risk
ER / n (sdcMicro's ``global_risk_ER`` and ``global_risk``).

Weights: a weight column of the instance (the number of population records a record
stands for, ≥ 1 as a rule; every class needs F_k ≥ f_k) — by default its attribute of
role "weight" (:data:`fairanon.instances.schema.ROLES`) —, else the uniform weight N/n of
a population model, else none — the table is the population, F_k = f_k and r_k = 1/f_k,
the prosecutor risk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from ...exceptions import InvalidParameterError, SchemaError
from .classes import RiskClasses
from .population import PopulationModel

__all__ = ["INDIVIDUAL_METHODS", "IndividualRisk", "benedetti_franconi", "individual_risk"]

#: How r_k is evaluated: "exact" (the expectation) or "sdcmicro" (sdcMicro's formulas).
INDIVIDUAL_METHODS = ("exact", "sdcmicro")

_SERIES_F = 24


def benedetti_franconi(f, p, *, method: str = "exact") -> np.ndarray:
    """r = E[1/F | f] for sample frequencies `f` (ints ≥ 1) and p = f/F in (0, 1].

    >>> benedetti_franconi([1, 2, 5], [1.0, 1.0, 1.0]).tolist()
    [1.0, 0.5, 0.2]
    >>> round(float(benedetti_franconi([1], [0.5])[0]), 12)  # (p/q) ln(1/p) = ln 2
    0.69314718056
    """
    f = np.asarray(f, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    if f.shape != p.shape:
        raise InvalidParameterError("benedetti_franconi needs as many frequencies as probabilities.")
    if len(f) and ((f < 1).any() or (p <= 0).any() or (p > 1).any() or not np.isfinite(p).all()):
        raise InvalidParameterError("benedetti_franconi needs frequencies >= 1 and probabilities in (0, 1].")
    if method == "sdcmicro":
        pk = p - 0.0001
        with np.errstate(divide="ignore", invalid="ignore"):
            odds = pk / (1 - pk)
            one = odds * np.log(1 / pk)
            two = odds - odds**2 * np.log(1 / pk)
            more = pk / (f - (1 - pk))
        return np.where(f == 1, one, np.where(f == 2, two, more))
    if method != "exact":
        raise InvalidParameterError(
            f"The 'method' parameter of benedetti_franconi must be one of {INDIVIDUAL_METHODS}. Got {method!r} instead."
        )
    q = 1.0 - p
    out = np.empty_like(p)
    series = (q < 0.5) | (f >= _SERIES_F)
    if series.any():
        fs, qs = f[series], q[series]
        term = np.ones_like(qs)
        total = np.ones_like(qs)
        for j in range(1, 400):
            term *= j * qs / (fs + j)
            total += term
            if not (term > 1e-17 * total).any():
                break
        out[series] = p[series] / fs * total
    rest = ~series
    if rest.any():  # q >= 1/2 and f < 24: the forward recurrence is stable (p/q <= 1)
        fr, pr, qr = f[rest], p[rest], q[rest]
        integral = np.log(1.0 / pr) / qr
        result = integral.copy()
        for g in range(2, int(fr.max()) + 1):
            integral = (1.0 / (g - 1) - pr * integral) / qr
            result[fr == g] = integral[fr == g]
        out[rest] = pr * result
    return out


@dataclass(frozen=True)
class IndividualRisk:
    """Individual risks and what sdcMicro's ``measure_risk`` reports from them.

    Attributes
    ----------
    per_class : numpy.ndarray
        r_k of every class k (a record carries the risk of its class).
    classes : RiskClasses
        The classes measured.
    risk : pandas.Series
        r_k of every record, indexed by record id (in table order); made on first use,
        since the figures below are per-class sums and a table on Dask may hold more
        records than one machine holds arrays of.
    source : str
        Where F_k came from: "weights <column>", "population model" or "none (F = f)".
    method : str
    expected_reidentifications : float
        ER = Σ r.
    global_risk : float
        ER / n.
    highest : float
    threshold : float or None
    records_above : int or None
        Records with r strictly above `threshold`.
    """

    per_class: np.ndarray = field(repr=False, compare=False)
    classes: RiskClasses = field(repr=False, compare=False)
    source: str
    method: str
    expected_reidentifications: float
    global_risk: float
    highest: float
    threshold: float | None = None
    records_above: int | None = None

    @cached_property
    def risk(self) -> pd.Series:
        return pd.Series(self.per_class[self.classes.ids], index=self.classes.table.index, name="individual_risk")

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "method": self.method,
            "expected_reidentifications": self.expected_reidentifications,
            "global_risk": self.global_risk,
            "highest": self.highest,
            "threshold": self.threshold,
            "records_above_threshold": self.records_above,
        }


def _weights(classes: RiskClasses, name: str) -> np.ndarray:
    inst = classes.instance
    if name in inst.table.columns:
        column = inst.table[name]
    elif name in inst.extra.columns:
        column = inst.extra[name]
    else:
        raise SchemaError(f"The weight column {name!r} is not a column of instance {inst.name!r}.")
    try:
        w = pd.to_numeric(column, errors="raise").to_numpy(dtype=float)
    except (ValueError, TypeError):
        raise SchemaError(f"The weight column {name!r} is not numeric.") from None
    w = w[classes.positions]
    bad = ~np.isfinite(w) | (w <= 0)
    if bad.any():
        raise SchemaError(
            f"The weight column {name!r} holds {int(bad.sum())} weight(s) that are not finite and > 0."
        )
    return w


def individual_risk(
    classes: RiskClasses,
    *,
    weights: str | None = None,
    population: PopulationModel | None = None,
    method: str = "exact",
    threshold=None,
) -> IndividualRisk:
    """Benedetti & Franconi's individual risk of every record of a regrouped table.

    Parameters
    ----------
    classes : RiskClasses
    weights : str, optional
        A numeric column of the instance holding sampling weights (for a release, read
        by record id). Takes precedence over `population`.
    population : PopulationModel, optional
        Uniform weights N / n when no weight column is given.
    method : {"exact", "sdcmicro"}, default="exact"
    threshold : float, optional
        Count the records whose individual risk is strictly above it.

    Raises
    ------
    SchemaError
        If the weight column is missing, not numeric, or holds weights that are not
        finite and > 0.
    InvalidParameterError
        If a class's weights sum to less than its records (F_k < f_k).
    """
    if method not in INDIVIDUAL_METHODS:
        raise InvalidParameterError(
            f"The 'method' parameter of individual_risk must be one of {INDIVIDUAL_METHODS}. Got {method!r} instead."
        )
    sizes = classes.sizes.astype(np.float64)
    if weights is not None:
        w = _weights(classes, weights)
        big = np.bincount(classes.ids, weights=w, minlength=classes.n_classes)
        source = f"weights {weights}"
    elif population is not None:
        big = sizes * (population.population_size / population.sample_size)
        source = "population model"
    else:
        big = sizes.copy()
        source = "none (F = f)"
    # F_k >= f_k up to the rounding of the weights' sum.
    short = np.flatnonzero(big < sizes * (1 - 1e-12))
    if len(short):
        g = int(short[0])
        raise InvalidParameterError(
            f"The weights of class {classes.class_labels(g)} sum to {big[g]:g}, less than its {int(sizes[g])} "
            "records: sampling weights count the population records each record stands for."
        )
    p = np.minimum(sizes / big, 1.0)
    if weights is None and population is None:  # sdcMicro's unweighted risk too
        per_class = 1.0 / sizes
    else:
        per_class = benedetti_franconi(sizes, p, method=method)
    # Summed exactly rounded: the classes' order (record-id order) does not change it.
    expected = math.fsum((per_class * sizes).tolist())
    above = None
    if threshold is not None:
        threshold = float(threshold)
        above = int(sizes[per_class > threshold].sum())
    return IndividualRisk(
        per_class=per_class,
        classes=classes,
        source=source,
        method=method,
        expected_reidentifications=expected,
        global_risk=expected / classes.n_records,
        highest=float(per_class.max()),
        threshold=threshold,
        records_above=above,
    )
