"""Quality indices and comparators of per-tuple property vectors (Dewri et al. [1]_).

A property vector D = (d_1, …, d_N) holds one property (class size, risk, loss, …)
of every record, indexed by record id (:func:`fairanon.models.metrics.property_vectors`
computes them). Releases of the same data are compared through their vectors:

- **dominance** (paper Table 4): :func:`dominance` returns one of four outcomes,
  :func:`set_dominance` pairs several properties by name;
- **unary indices** (§3, §5.1): :func:`p_min`, :func:`p_mean` (P_s-avg), :func:`p_rank`,
  and the bias descriptors of :func:`descriptors` (variance, Gini, floor share: no
  better/worse direction, comparison spec §1.9);
- **binary indices** (§5.2–5.4): :func:`p_binary`, :func:`p_cov`, :func:`p_spr`,
  :func:`p_hv` (and :func:`log_p_hv`, its log-space form);
- **comparators** ▶: :func:`compare` gives FIRST_BETTER, SECOND_BETTER or TIE under one
  index;
- **several properties** (§5.5–5.7): :func:`wtd`, :func:`lex`, :func:`goal` and
  :func:`goal_unary`.

Every function assumes *higher is better*; :func:`orient` turns a lower-is-better
property around first (``negate``, ``flip`` against an upper bound, or ``reciprocal``;
only ``flip`` keeps the values non-negative, as P_hv needs). :data:`PROPERTIES` records
the direction, transform and ideal vector D_max of each column of
:func:`~fairanon.models.metrics.property_vectors`.

Exactness (comparison spec P-21): integer vectors and object vectors of
:class:`fractions.Fraction` are compared exactly; float vectors with an absolute
tolerance (default :data:`TOLERANCE`) applied the same way in ≥, > and ties. Counts
come back as ints and ratios of counts as Fractions.

Two facts worth knowing when reading results (spec F5, F7): ▶spr decides exactly as
the mean does, and ▶hv as the product (the geometric mean); only dominance and ▶cov
depend on *which* record gets which value (F9), and ▶cov is not transitive (F8).

References
----------
.. [1] R. Dewri, I. Ray, I. Ray, D. Whitley. On the comparison of microdata disclosure
   control algorithms. EDBT 2009.

Examples
--------
>>> a, b = [3, 3, 3, 3, 4, 4, 4, 3, 3, 4], [3, 7, 7, 3, 7, 7, 7, 3, 7, 7]  # T3a, T3b
>>> dominance(b, a), p_binary(b, a), p_cov(a, b), p_spr(b, a)
(<Dominance.BETTER: 'BETTER'>, 7, Fraction(3, 10), 24)
>>> compare(a, b, "min"), compare(a, b, "cov")
(<Verdict.TIE: 'TIE'>, <Verdict.SECOND_BETTER: 'SECOND_BETTER'>)
"""

from __future__ import annotations

import enum
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_fraction, check_option
from ..exceptions import InvalidParameterError

__all__ = [
    "BINARY_INDICES",
    "COMPARATORS",
    "NORMALIZATIONS",
    "PROPERTIES",
    "TOLERANCE",
    "UNARY_INDICES",
    "Dominance",
    "MultiResult",
    "PropertyContext",
    "PropertySpec",
    "Verdict",
    "compare",
    "descriptors",
    "dominance",
    "goal",
    "goal_unary",
    "index_pair",
    "lex",
    "log_p_hv",
    "orient",
    "p_binary",
    "p_cov",
    "p_hv",
    "p_max",
    "p_mean",
    "p_min",
    "p_rank",
    "p_spr",
    "p_sum",
    "set_dominance",
    "tuple_counts",
    "unary_value",
    "wtd",
]

#: Absolute tolerance for float vectors (comparison spec P-21); exact vectors use none.
TOLERANCE = 1e-12
#: Unary indices a comparator can use: ▶min, ▶s-avg (mean) and ▶rank.
UNARY_INDICES = ("min", "mean", "rank")
#: Binary indices: P_cov, P_spr, P_hv and P_binary.
BINARY_INDICES = ("cov", "spr", "hv", "binary")
#: The single-property comparators, in the order reports show them.
COMPARATORS = ("min", "mean", "rank", "cov", "spr", "hv")
#: How :func:`wtd`, :func:`lex` and :func:`goal` scale binary index values (spec P-12).
NORMALIZATIONS = ("default", "raw", "share", "range")
# Exact products for P_hv verdicts up to this many records; log space above.
_EXACT_PRODUCT_MAX = 2000


class Dominance(str, enum.Enum):
    """Outcome of :func:`dominance`; exactly one holds for any two vectors."""

    EQUAL = "EQUAL"
    BETTER = "BETTER"
    WORSE = "WORSE"
    INCOMPARABLE = "INCOMPARABLE"

    def __str__(self) -> str:
        return self.value


class Verdict(str, enum.Enum):
    """Outcome of a ▶ comparator: a TIE means equally good under the index, not
    incomparable."""

    FIRST_BETTER = "FIRST_BETTER"
    SECOND_BETTER = "SECOND_BETTER"
    TIE = "TIE"

    def __str__(self) -> str:
        return self.value

    def swapped(self) -> Verdict:
        return {
            Verdict.FIRST_BETTER: Verdict.SECOND_BETTER,
            Verdict.SECOND_BETTER: Verdict.FIRST_BETTER,
            Verdict.TIE: Verdict.TIE,
        }[self]


# ------------------------------------------------------------------ properties
@dataclass(frozen=True)
class PropertyContext:
    """What the ideal vectors and flip bounds of :data:`PROPERTIES` depend on.

    Attributes
    ----------
    n_rows : int
        N, the number of records.
    n_qi : int
        a, the number of quasi-identifiers (the bound of the per-tuple loss and utility).
    n_sensitive : int, optional
        Distinct sensitive values in the original table (the ideal distinct l).
    """

    n_rows: int
    n_qi: int
    n_sensitive: int | None = None


@dataclass(frozen=True)
class PropertySpec:
    """Direction, orientation and ideal of one property vector (comparison spec §1.2).

    Attributes
    ----------
    name : str
        The column of :func:`~fairanon.models.metrics.property_vectors`.
    label : str
        The spec's id and a readable name.
    direction : {"higher", "lower"}
    transform : {"none", "negate", "flip", "reciprocal"}
        How :func:`orient` makes it higher-is-better.
    upper : str
        The flip bound U: "1", "N" (records) or "a" (quasi-identifiers).
    ideal : str
        D_max after orientation: "N", "a", "1", "N-1" or "l" (distinct sensitive values).
    privacy : bool
        A privacy property (else utility).
    """

    name: str
    label: str
    direction: str
    transform: str
    upper: str = ""
    ideal: str = ""
    privacy: bool = True

    def bound(self, ctx: PropertyContext, which: str):
        key = self.upper if which == "upper" else self.ideal
        values = {
            "1": 1,
            "N": ctx.n_rows,
            "N-1": ctx.n_rows - 1,
            "a": ctx.n_qi,
            "l": ctx.n_sensitive,
        }
        return values.get(key)


#: The per-tuple properties of :func:`fairanon.models.metrics.property_vectors`.
PROPERTIES: dict[str, PropertySpec] = {
    "size": PropertySpec("size", "PV-size: class size", "higher", "none", ideal="N"),
    "risk": PropertySpec("risk", "PV-reid: re-identification risk 1/s", "lower", "flip", "1", "1"),
    "sfreq": PropertySpec(
        "sfreq", "PV-sfreq: own sensitive value in class", "lower", "flip", "N", "N-1"
    ),
    "ldist": PropertySpec(
        "ldist", "PV-ldist: distinct sensitive values", "higher", "none", ideal="l"
    ),
    "adisc": PropertySpec("adisc", "PV-adisc: attribute disclosure c/s", "lower", "flip", "1", "1"),
    "tclose": PropertySpec("tclose", "PV-tclose: EMD to the table", "lower", "flip", "1", "1"),
    "loss": PropertySpec("loss", "PV-loss: Iyengar loss", "lower", "flip", "a", "a", privacy=False),
    "util_paper": PropertySpec(
        "util_paper", "PV-util: utility Σ(1 − M_ij/M_j)", "higher", "none", ideal="a", privacy=False
    ),
}


def _vec(values, name: str = "D", caller: str = "quality index") -> np.ndarray:
    """A 1-D numeric vector: int64, float64, or object (Fractions, ints)."""
    if isinstance(values, np.ndarray):
        arr = values
    elif hasattr(values, "to_numpy"):
        arr = values.to_numpy()
    else:
        arr = np.asarray(list(values) if not isinstance(values, (list, tuple)) else values)
    if arr.ndim != 1 or len(arr) == 0:
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a non-empty 1-D vector. "
            f"Got shape {arr.shape} instead."
        )
    kind = arr.dtype.kind
    if kind in "iub":
        return arr.astype(np.int64, copy=False)
    if kind == "f":
        if not np.isfinite(arr).all():
            raise InvalidParameterError(
                f"The {name!r} parameter of {caller} must hold finite numbers. Got NaN or inf."
            )
        return arr.astype(np.float64, copy=False)
    if kind == "O":
        if all(
            isinstance(v, (numbers.Integral, Fraction)) and not isinstance(v, bool) for v in arr
        ):
            return arr
        if all(isinstance(v, numbers.Real) for v in arr):
            return arr.astype(np.float64)
    raise InvalidParameterError(
        f"The {name!r} parameter of {caller} must hold numbers. Got dtype {arr.dtype} instead."
    )


def _exact(*arrays: np.ndarray) -> bool:
    return all(a.dtype.kind in "iO" for a in arrays)


def _pair(d1, d2, caller: str) -> tuple[np.ndarray, np.ndarray, float]:
    a, b = _vec(d1, "D1", caller), _vec(d2, "D2", caller)
    if len(a) != len(b):
        raise InvalidParameterError(
            f"{caller} compares vectors of the same records; got lengths {len(a)} and {len(b)}."
        )
    return a, b, (0.0 if _exact(a, b) else TOLERANCE)


def _total(arr: np.ndarray):
    """Exact sum for exact vectors, an accurately rounded float sum otherwise."""
    if arr.dtype.kind == "i":
        return _power_sum(arr, 1)
    if arr.dtype.kind == "O":
        return (
            sum(arr.tolist(), Fraction(0))
            if any(isinstance(v, Fraction) for v in arr)
            else sum(arr.tolist())
        )
    return _float_sum(arr)


def _float_sum(arr: np.ndarray) -> float:
    """A float sum that does not depend on the order of the entries (sorted first), so
    that a vector and any permutation of it get the same index values (spec F9)."""
    return float(np.sort(np.asarray(arr, dtype=np.float64)).sum())


def _power_sum(arr: np.ndarray, power: int):
    """Σ x^power, exact for int and object vectors (ints are grouped by value, so the
    Python arithmetic runs over the distinct values only)."""
    if arr.dtype.kind == "i":
        values, counts = np.unique(arr, return_counts=True)
        return sum(int(c) * int(v) ** power for v, c in zip(values, counts))
    if arr.dtype.kind == "O":
        return sum((Fraction(v) ** power for v in arr.tolist()), Fraction(0))
    return _float_sum(arr**power)


def _extreme(arr: np.ndarray, which):
    if arr.dtype.kind == "O":
        return _simplify(which(arr.tolist()))
    value = arr.min() if which is min else arr.max()
    return int(value) if arr.dtype.kind == "i" else float(value)


def _simplify(value):
    """Fractions with denominator 1 as ints."""
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value.numerator)
    return value


def orient(values, direction: str = "higher", transform: str = "flip", upper=None) -> np.ndarray:
    """Make a property vector higher-is-better (comparison spec §1.5.0).

    Parameters
    ----------
    values : array-like
    direction : {"higher", "lower"}, default="higher"
        How the values read as they are; "higher" returns them unchanged.
    transform : {"flip", "negate", "reciprocal"}, default="flip"
        For "lower": x ↦ U − x (keeps values ≥ 0, required by P_hv), x ↦ −x, or x ↦ 1/x.
    upper : number, optional
        U for "flip"; every value must be ≤ U.

    Returns
    -------
    numpy.ndarray
        Exact (int or Fraction) when the input is.

    Examples
    --------
    >>> orient([1, 2], "lower", "flip", upper=3).tolist()
    [2, 1]
    >>> [str(v) for v in orient([2, 4], "lower", "reciprocal")]
    ['1/2', '1/4']
    """
    caller = "orient"
    check_option(direction, "direction", caller, ("higher", "lower"))
    check_option(transform, "transform", caller, ("flip", "negate", "reciprocal", "none"))
    arr = _vec(values, "values", caller)
    if direction == "higher" or transform == "none":
        return arr
    if transform == "negate":
        return -arr
    if transform == "reciprocal":
        if _extreme(arr, min) <= 0:
            raise InvalidParameterError("The 'reciprocal' transform of orient needs values > 0.")
        if _exact(arr):
            return np.array([Fraction(1) / Fraction(v) for v in arr.tolist()], dtype=object)
        return 1.0 / arr
    if upper is None:
        raise InvalidParameterError("The 'flip' transform of orient needs an 'upper' bound U.")
    if isinstance(upper, float) and arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    out = upper - arr
    if _extreme(out, min) < -TOLERANCE:
        raise InvalidParameterError(
            f"The 'upper' parameter of orient must bound every value; got {upper!r} below "
            f"the largest value {max(arr.tolist())!r}."
        )
    return out


# ------------------------------------------------------------------ dominance
def tuple_counts(d1, d2) -> tuple[int, int, int]:
    """(W12, W21, T): records where D1 is better, where D2 is better, and ties.

    >>> tuple_counts([2, 2, 3, 4, 5], [3, 2, 4, 2, 3])
    (2, 2, 1)
    """
    a, b, tol = _pair(d1, d2, "tuple_counts")
    diff = a - b
    w12 = int(np.count_nonzero((diff > tol).astype(bool)))
    w21 = int(np.count_nonzero((diff < -tol).astype(bool)))
    return w12, w21, len(a) - w12 - w21


def dominance(d1, d2) -> Dominance:
    """The dominance relation between two vectors of one property (paper Table 4).

    Returns EQUAL (d1_i = d2_i for all i), BETTER (D1 ≻ D2: never worse, once
    better), WORSE (D2 ≻ D1) or INCOMPARABLE (D1 ∥ D2).

    >>> dominance([4, 6, 4, 4, 6, 6, 6, 4, 6, 6], [3, 7, 7, 3, 7, 7, 7, 3, 7, 7])
    <Dominance.INCOMPARABLE: 'INCOMPARABLE'>
    """
    w12, w21, _ = tuple_counts(d1, d2)
    if w12 == 0 and w21 == 0:
        return Dominance.EQUAL
    if w21 == 0:
        return Dominance.BETTER
    if w12 == 0:
        return Dominance.WORSE
    return Dominance.INCOMPARABLE


def set_dominance(u1: Mapping[str, Any], u2: Mapping[str, Any]) -> Dominance:
    """Set-level dominance of two property sets paired by name (spec P-9).

    Υ1 ⪰ Υ2 iff D1p ⪰ D2p for every property p; BETTER (≻) iff also strictly better
    on at least one; INCOMPARABLE iff neither weakly dominates the other.

    >>> set_dominance({"s": [3, 4], "u": [1, 1]}, {"s": [3, 3], "u": [1, 1]})
    <Dominance.BETTER: 'BETTER'>
    """
    _same_properties(u1, u2, "set_dominance")
    outcomes = [dominance(u1[p], u2[p]) for p in u1]
    weak12 = all(o in (Dominance.EQUAL, Dominance.BETTER) for o in outcomes)
    weak21 = all(o in (Dominance.EQUAL, Dominance.WORSE) for o in outcomes)
    if weak12 and weak21:
        return Dominance.EQUAL
    if weak12:
        return Dominance.BETTER
    if weak21:
        return Dominance.WORSE
    return Dominance.INCOMPARABLE


def _same_properties(u1: Mapping, u2: Mapping, caller: str) -> None:
    if not isinstance(u1, Mapping) or not isinstance(u2, Mapping):
        raise InvalidParameterError(
            f"{caller} compares property sets given as mappings name -> vector. "
            f"Got {type(u1).__name__} and {type(u2).__name__} instead."
        )
    if list(u1) != list(u2):
        raise InvalidParameterError(
            f"{caller} pairs properties by name and order; got {list(u1)} and {list(u2)}."
        )
    if not u1:
        raise InvalidParameterError(f"{caller} needs at least one property.")


# ------------------------------------------------------------------ unary indices
def p_min(d):
    """P_k-anon generalized: the smallest entry (▶min; paper §4, P-13).

    >>> p_min([3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    3
    """
    return _extreme(_vec(d, "D", "p_min"), min)


def p_max(d):
    """The largest entry."""
    return _extreme(_vec(d, "D", "p_max"), max)


def p_sum(d):
    """Σ d_i, exact for exact vectors; on class sizes it is the discernibility metric
    (Σ_i s_i = Σ_E |E|², spec §1.5.1).

    >>> p_sum([3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    34
    """
    return _simplify(_total(_vec(d, "D", "p_sum")))


def p_mean(d):
    """P_s-avg: the mean entry, exact for exact vectors (paper §3).

    >>> p_mean([3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    Fraction(17, 5)
    """
    arr = _vec(d, "D", "p_mean")
    total = _total(arr)
    if _exact(arr):
        return Fraction(total) / len(arr)
    return total / len(arr)


def _ideal_vector(d_max, n: int, caller: str):
    """`d_max` as a vector of length n, or as a scalar that broadcasts."""
    if isinstance(d_max, (numbers.Real, Fraction)) and not isinstance(d_max, bool):
        if isinstance(d_max, (numbers.Integral, Fraction)):
            return d_max if isinstance(d_max, Fraction) else int(d_max)
        return float(d_max)
    arr = _vec(d_max, "d_max", caller)
    if len(arr) != n:
        raise InvalidParameterError(
            f"The 'd_max' parameter of {caller} must be a number or a vector of length {n}. "
            f"Got length {len(arr)} instead."
        )
    return arr


def _rank_power(d, d_max, p) -> tuple[Any, float]:
    """(Σ |d_i − dmax_i|^p, p): exact for exact input and integer p."""
    arr = _vec(d, "D", "p_rank")
    ideal = _ideal_vector(d_max, len(arr), "p_rank")
    if p != math.inf and (isinstance(p, bool) or not isinstance(p, numbers.Real) or p < 1):
        raise InvalidParameterError(
            f"The 'p' parameter of p_rank must be a number ≥ 1 or inf. Got {p!r} instead."
        )
    if isinstance(ideal, Fraction) and arr.dtype.kind != "O":
        arr = arr.astype(object)
    gap = ideal - arr
    if gap.dtype.kind == "O" and any(isinstance(v, float) for v in gap.tolist()):
        gap = gap.astype(np.float64)
    if _extreme(gap, min) < -TOLERANCE:
        warnings.warn(
            "p_rank: d_max is not an upper bound of the vector, so equal ranks need not mean "
            "equal or incomparable (comparison spec P-10).",
            RuntimeWarning,
            stacklevel=3,
        )
    diffs = np.abs(gap)
    if p == math.inf:
        return _extreme(diffs, max), p
    if _exact(diffs) and float(p).is_integer():
        return Fraction(_power_sum(diffs, int(p))), p
    return _float_sum(diffs.astype(np.float64) ** p), p


def p_rank(d, d_max, *, p: float = 2) -> float:
    """P_rank = ‖D − D_max‖_p, the distance to the ideal vector (paper §5.1); lower is
    better.

    Parameters
    ----------
    d : array-like
    d_max : number or array-like
        The point of interest, usually the best attainable value of every record
        (:data:`PROPERTIES` gives one per property). A warning says when it is not an
        upper bound of `d` (spec P-10).
    p : float, default=2
        The norm; the paper's arcs are Euclidean.

    >>> round(p_rank([3, 3, 3, 3, 4, 4, 4, 3, 3, 4], 10), 3)
    20.928
    """
    power, p = _rank_power(d, d_max, p)
    if p == math.inf:
        return float(power)
    return float(power) ** (1.0 / p)


def descriptors(d, quantiles: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 0.9)) -> dict:
    """Bias descriptors of one vector: no better/worse direction (comparison spec §1.9).

    Returns
    -------
    dict
        ``variance`` (population form), ``cv`` (coefficient of variation), ``gini``
        (Σ_i Σ_j |d_i − d_j| / (2 N² mean)), ``floor_share`` (#{d_i = min D}/N) and one
        ``q<p>`` per quantile. Exact (Fraction) for exact vectors except cv and the
        quantiles.

    Examples
    --------
    >>> out = descriptors([3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    >>> out["gini"], out["variance"], out["floor_share"]
    (Fraction(6, 85), Fraction(6, 25), Fraction(3, 5))
    """
    arr = _vec(d, "D", "descriptors")
    n = len(arr)
    exact = _exact(arr)
    low, high = _extreme(arr, min), _extreme(arr, max)
    if exact:
        total = Fraction(_power_sum(arr, 1))
        mean = total / n
        variance = (Fraction(_power_sum(arr, 2)) - total * mean) / n
        weighted = _rank_weighted_sum(arr)
        gini_offset = Fraction(n + 1, n)
    else:
        total = _float_sum(arr)
        mean = total / n
        variance = float(np.var(arr))
        weighted = float(np.dot(np.arange(1, n + 1, dtype=np.float64), np.sort(arr)))
        gini_offset = (n + 1) / n
    if total == 0:
        gini = 0 if low == high else math.nan
    else:
        # Σ_i Σ_j |d_i − d_j| / (2 N² mean) = 2 Σ_i i·d_(i) / (N Σ d) − (N + 1)/N (sorted, 1-based)
        gini = 2 * weighted / (n * total) - gini_offset
    tol = 0 if exact else TOLERANCE
    floor = int(np.count_nonzero((arr - low <= tol).astype(bool)))
    out = {
        "variance": variance,
        "cv": math.sqrt(float(variance)) / float(mean) if mean else math.nan,
        "gini": gini,
        "floor_share": Fraction(floor, n),
    }
    floats = arr.astype(np.float64)
    for q in quantiles:
        out[f"q{round(100 * q):g}"] = float(np.quantile(floats, q))
    return out


def _rank_weighted_sum(arr: np.ndarray):
    """Σ_i i·d_(i) over the sorted vector (1-based), exactly."""
    if arr.dtype.kind == "i":
        values, counts = np.unique(arr, return_counts=True)
        ends = np.cumsum(counts)
        # positions start+1 .. end hold value v: Σ i = (start+1 + end)·count/2
        return sum(
            int(v) * (int(e - c + 1) + int(e)) * int(c) // 2
            for v, c, e in zip(values, counts, ends)
        )
    return sum((Fraction(i + 1) * v for i, v in enumerate(sorted(arr.tolist()))), Fraction(0))


# ------------------------------------------------------------------ binary indices
def p_binary(d1, d2) -> int:
    """P_binary(D1, D2) = #{i : d1_i > d2_i}, a count of records (paper §3, P-6).

    >>> p_binary([3, 7, 7, 3, 7, 7, 7, 3, 7, 7], [3, 3, 3, 3, 4, 4, 4, 3, 3, 4])
    7
    """
    return tuple_counts(d1, d2)[0]


def p_cov(d1, d2) -> Fraction:
    """Coverage P_cov(D1, D2) = #{i : d1_i ≥ d2_i} / N (paper §5.2); ties count for both.

    >>> p_cov([2, 2, 3, 4, 5], [3, 2, 4, 2, 3])
    Fraction(3, 5)
    """
    w12, w21, ties = tuple_counts(d1, d2)
    return Fraction(w12 + ties, w12 + w21 + ties)


def p_spr(d1, d2):
    """Spread P_spr(D1, D2) = Σ_i max(d1_i − d2_i, 0) (paper §5.3).

    Exact (int or Fraction) for exact vectors. Its verdict equals the mean's (spec F5).

    >>> p_spr([2, 2, 3, 4, 5], [3, 2, 4, 2, 3]), p_spr([3, 2, 4, 2, 3], [2, 2, 3, 4, 5])
    (4, 2)
    """
    a, b, tol = _pair(d1, d2, "p_spr")
    diff = a - b
    gains = diff[(diff > tol).astype(bool)]
    return _simplify(_total(gains)) if len(gains) else 0


def _log_terms(arr: np.ndarray, reference) -> np.ndarray:
    if arr.dtype.kind == "O":
        shifted = np.array([float(v - reference) for v in arr.tolist()])
    else:
        shifted = arr.astype(np.float64) - float(reference)
    with np.errstate(divide="ignore"):
        return np.where(shifted > 0, np.log(np.maximum(shifted, 1e-300)), -np.inf)


def _warn_nonpositive(arrays, reference, caller: str) -> None:
    if any(_extreme(a, min) <= reference for a in arrays):
        warnings.warn(
            f"{caller}: some entries are ≤ the reference point {reference!r}, so their "
            "products are 0 and P_hv cannot separate the vectors (comparison spec P-11); "
            "orient lower-is-better properties with 'flip', not 'negate'.",
            RuntimeWarning,
            stacklevel=3,
        )


def _log_product(arr: np.ndarray, reference) -> float:
    terms = _log_terms(arr, reference)
    return -math.inf if np.isneginf(terms).any() else _float_sum(terms)


def _minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "O" or b.dtype.kind == "O":
        return np.array([min(x, y) for x, y in zip(a.tolist(), b.tolist())], dtype=object)
    return np.minimum(a, b)


def log_p_hv(d1, d2, *, reference=0) -> float:
    """log P_hv(D1, D2), evaluated in log space so that large N cannot overflow.

    log(Π(d1 − z) − Π(min(d1, d2) − z)) = S1 + log(1 − exp(Smin − S1)), with S the sums
    of logs; −inf when P_hv = 0.

    >>> round(math.exp(log_p_hv([3, 3, 3, 5, 5, 5, 5, 5], [4] * 8)))
    56727
    """
    a, b, _ = _pair(d1, d2, "log_p_hv")
    _warn_nonpositive((a, b), reference, "log_p_hv")
    s1 = _log_product(a, reference)
    if s1 == -math.inf:
        return -math.inf
    low = _minimum(a, b)
    smin = _log_product(low, reference)
    if smin == -math.inf:
        return s1
    gap = smin - s1
    if gap >= 0:
        return -math.inf
    return s1 + math.log(-math.expm1(gap))


def p_hv(d1, d2, *, reference=0):
    """Hypervolume P_hv(D1, D2) = Π_i (d1_i − z) − Π_i (min(d1_i, d2_i) − z) (paper §5.4).

    The volume D1 dominates and D2 does not, with reference point z (default the
    origin). Exact (big int or Fraction) for exact vectors; for float vectors
    ``exp(log_p_hv)``, which may be inf (compare with :func:`log_p_hv` or
    :func:`compare` then). Entries ≤ z give a warning (spec P-11).

    >>> p_hv([3, 3, 3, 5, 5, 5, 5, 5], [4] * 8), p_hv([4] * 8, [3, 3, 3, 5, 5, 5, 5, 5])
    (56727, 37888)
    """
    a, b, _ = _pair(d1, d2, "p_hv")
    if _exact(a, b):
        _warn_nonpositive((a, b), reference, "p_hv")
        return _simplify(_exact_product(a, reference) - _exact_product(_minimum(a, b), reference))
    log = log_p_hv(a, b, reference=reference)
    try:
        return math.exp(log)
    except OverflowError:
        return math.inf


# ------------------------------------------------------------------ comparators
def _close(x, y, eps, exact: bool) -> bool:
    if exact:
        return abs(x - y) <= eps
    return abs(float(x) - float(y)) <= float(eps) + TOLERANCE * max(
        1.0, abs(float(x)), abs(float(y))
    )


def _by_value(v1, v2, eps, exact: bool, higher: bool = True) -> Verdict:
    if _close(v1, v2, eps, exact):
        return Verdict.TIE
    return Verdict.FIRST_BETTER if (v1 > v2) == higher else Verdict.SECOND_BETTER


def _hv_verdict(a: np.ndarray, b: np.ndarray, reference, eps) -> Verdict:
    # ▶hv decides as the product does (spec F7): the common term cancels.
    _warn_nonpositive((a, b), reference, "compare(index='hv')")
    if _exact(a, b) and len(a) <= _EXACT_PRODUCT_MAX:
        pa, pb = _exact_product(a, reference), _exact_product(b, reference)
        if pa == pb:
            return Verdict.TIE
        if eps:
            return _by_value(
                log_p_hv(a, b, reference=reference), log_p_hv(b, a, reference=reference), eps, False
            )
        return Verdict.FIRST_BETTER if pa > pb else Verdict.SECOND_BETTER
    s1, s2 = _log_product(a, reference), _log_product(b, reference)
    if s1 == s2:
        return Verdict.TIE
    if s1 == -math.inf or s2 == -math.inf:
        return Verdict.FIRST_BETTER if s1 > s2 else Verdict.SECOND_BETTER
    return _by_value(s1, s2, eps, False)


def _exact_product(arr: np.ndarray, reference):
    if arr.dtype.kind == "i" and isinstance(reference, int):
        values, counts = np.unique(arr, return_counts=True)
        return math.prod((int(v) - reference) ** int(c) for v, c in zip(values, counts))
    return math.prod(Fraction(v) - reference for v in arr.tolist())


def compare(d1, d2, index: str, *, d_max=None, p: float = 2, eps=0, reference=0) -> Verdict:
    """The ▶ comparator induced by one quality index (paper §4–5).

    Parameters
    ----------
    d1, d2 : array-like
        Vectors of one property over the same records, higher is better.
    index : {"min", "mean", "rank", "cov", "spr", "hv", "binary"}
        ▶min (min D1 > min D2), ▶s-avg (mean), ▶rank (closer to `d_max`), ▶cov
        (P_cov(D1,D2) > P_cov(D2,D1), a majority vote over records, F1), ▶spr,
        ▶hv (needs entries > `reference`); "binary" decides as "cov" (F1).
    d_max : number or array-like
        The ideal vector, needed by "rank".
    p : float, default=2
        The norm of "rank".
    eps : number, default=0
        Index values that differ by at most `eps` are a TIE (the paper's tolerance of
        ▶rank, available for every index). For "hv" it applies to log P_hv.
    reference : number, default=0
        The reference point of "hv".

    Returns
    -------
    Verdict
        FIRST_BETTER, SECOND_BETTER or TIE.

    Examples
    --------
    >>> t4, t3b = [4, 6, 4, 4, 6, 6, 6, 4, 6, 6], [3, 7, 7, 3, 7, 7, 7, 3, 7, 7]
    >>> compare(t3b, t4, "cov"), compare(t3b, t4, "rank", d_max=10)
    (<Verdict.FIRST_BETTER: 'FIRST_BETTER'>, <Verdict.FIRST_BETTER: 'FIRST_BETTER'>)
    """
    check_option(index, "index", "compare", UNARY_INDICES + BINARY_INDICES)
    a, b, _ = _pair(d1, d2, "compare")
    exact = _exact(a, b)
    eps = _check_eps(eps, "compare")
    if index == "min":
        return _by_value(p_min(a), p_min(b), eps, exact)
    if index == "mean":
        return _by_value(p_mean(a), p_mean(b), eps, exact)
    if index == "rank":
        if d_max is None:
            raise InvalidParameterError("compare(index='rank') needs 'd_max', the ideal vector.")
        if eps == 0 and float(p).is_integer() and p != math.inf:
            pa, _ = _rank_power(a, d_max, p)
            pb, _ = _rank_power(b, d_max, p)
            return _by_value(pa, pb, 0, exact and isinstance(pa, Fraction), higher=False)
        return _by_value(p_rank(a, d_max, p=p), p_rank(b, d_max, p=p), eps, False, higher=False)
    if index in ("cov", "binary"):
        w12, w21, _ = tuple_counts(a, b)
        n = len(a)
        if index == "cov":
            return _by_value(Fraction(n - w21, n), Fraction(n - w12, n), eps, True)
        return _by_value(w12, w21, eps, True)
    if index == "spr":
        return _by_value(p_spr(a, b), p_spr(b, a), eps, exact)
    return _hv_verdict(a, b, reference, eps)


def _check_eps(eps, caller: str):
    if isinstance(eps, bool) or not isinstance(eps, (numbers.Real, Fraction)) or eps < 0:
        raise InvalidParameterError(
            f"The 'eps' parameter of {caller} must be a number ≥ 0 (spec P-8). Got {eps!r} instead."
        )
    return eps


# ------------------------------------------------------------------ several properties
@dataclass(frozen=True)
class MultiResult:
    """Both index values of a set comparator and its verdict.

    ``first`` is P(Υ1, Υ2), ``second`` is P(Υ2, Υ1); for GOAL lower values win, for
    LEX the smaller property position wins (``math.inf``: no significant difference).
    """

    first: Any
    second: Any
    verdict: Verdict


def unary_value(d, index: str, *, d_max=None, p: float = 2):
    """A unary index oriented so that higher is better: min, mean, or −P_rank.

    >>> unary_value([1, 2], "rank", d_max=2)
    -1.0
    """
    check_option(index, "index", "unary_value", UNARY_INDICES)
    if index == "min":
        return p_min(d)
    if index == "mean":
        return p_mean(d)
    if d_max is None:
        raise InvalidParameterError("unary_value(index='rank') needs 'd_max'.")
    return -p_rank(d, d_max, p=p)


def index_pair(d1, d2, index: str, normalization: str = "default", *, reference=0) -> tuple:
    """(η(P(D1, D2)), η(P(D2, D1))) for a binary index, scaled as `normalization` says.

    Normalizations (spec P-12):

    - "raw": the values as defined (P_hv as a float, possibly inf);
    - "share": P(A,B) / (P(A,B) + P(B,A)), ½ when both are 0 (P_hv evaluated in log
      space);
    - "range": P_spr / (N · range of both vectors), P_binary / N, P_cov as is;
    - "default": P_cov raw (already in [0, 1], as the paper's example), P_binary / N,
      P_spr and P_hv "share".

    >>> index_pair([2, 2, 3, 4, 5], [3, 2, 4, 2, 3], "spr")
    (Fraction(2, 3), Fraction(1, 3))
    """
    check_option(index, "index", "index_pair", BINARY_INDICES)
    check_option(normalization, "normalization", "index_pair", NORMALIZATIONS)
    a, b, _ = _pair(d1, d2, "index_pair")
    n = len(a)
    if index == "cov":
        return p_cov(a, b), p_cov(b, a)
    if index == "binary":
        w12, w21, _ = tuple_counts(a, b)
        return (w12, w21) if normalization == "raw" else (Fraction(w12, n), Fraction(w21, n))
    mode = "share" if normalization == "default" else normalization
    if index == "spr":
        x, y = p_spr(a, b), p_spr(b, a)
        if mode == "raw":
            return x, y
        if mode == "range":
            values = a.tolist() + b.tolist()
            spread = max(values) - min(values)
            if spread == 0:
                return 0, 0
            scale = n * spread
            return (
                (Fraction(x) / scale, Fraction(y) / scale)
                if _exact(a, b)
                else (x / scale, y / scale)
            )
        if x + y == 0:
            return Fraction(1, 2), Fraction(1, 2)
        return (
            (Fraction(x) / (x + y), Fraction(y) / (x + y))
            if _exact(a, b)
            else (x / (x + y), y / (x + y))
        )
    lx, ly = log_p_hv(a, b, reference=reference), log_p_hv(b, a, reference=reference)
    if mode == "raw":
        return _safe_exp(lx), _safe_exp(ly)
    if mode == "range":
        raise InvalidParameterError(
            "index_pair: the 'range' normalization applies to spr, binary and cov, not hv."
        )
    if lx == ly == -math.inf:
        return 0.5, 0.5
    # x/(x+y) = 1/(1 + exp(ly − lx)), stable for huge volumes.
    first = 1.0 / (1.0 + _safe_exp(ly - lx)) if lx != -math.inf else 0.0
    return first, 1.0 - first


def _safe_exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _per_property(value, names: Sequence[str], what: str, caller: str) -> list:
    if isinstance(value, Mapping):
        missing = [p for p in names if p not in value]
        if missing:
            raise InvalidParameterError(
                f"The {what!r} parameter of {caller} has no entry for {missing}."
            )
        return [value[p] for p in names]
    if isinstance(value, (str, numbers.Real, Fraction)) and not isinstance(value, bool):
        return [value] * len(names)
    values = list(value)
    if len(values) != len(names):
        raise InvalidParameterError(
            f"The {what!r} parameter of {caller} needs one entry per property {list(names)}. "
            f"Got {len(values)} instead."
        )
    return values


def wtd(
    u1: Mapping, u2: Mapping, *, weights, index="cov", normalization: str = "default"
) -> MultiResult:
    """▶WTD: weighted sums S12 = Σ_p w_p η(P_p(D1p, D2p)) against S21 (paper §5.5).

    Parameters
    ----------
    u1, u2 : mapping property -> vector
        Oriented (higher is better), the same properties in the same order.
    weights : sequence or mapping
        0 < w_p < 1 with Σ w_p = 1 (a single property may have weight 1). Read exactly
        (0.5 is 1/2).
    index : str or mapping, default="cov"
        A binary index per property (or one for all).
    normalization : str, default="default"
        See :func:`index_pair`.

    Examples
    --------
    Paper §5.5: class size and utility of T3a and T3b with P_cov and equal weights.

    >>> a = {"size": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4], "util": [6, 5, 5, 6, 4, 4, 4, 6, 5, 4]}
    >>> b = {"size": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7], "util": [6, 2, 2, 6, 2, 2, 2, 6, 2, 2]}
    >>> wtd(a, b, weights=[0.5, 0.5])
    MultiResult(first=Fraction(13, 20), second=Fraction(13, 20), verdict=<Verdict.TIE: 'TIE'>)
    """
    caller = "wtd"
    _same_properties(u1, u2, caller)
    names = list(u1)
    ws = [
        check_fraction(w, "weights", caller, low=0, high=1, low_open=True)
        for w in _per_property(weights, names, "weights", caller)
    ]
    if len(ws) > 1 and any(w >= 1 for w in ws):
        raise InvalidParameterError(
            f"The 'weights' parameter of {caller} must hold values in (0, 1). Got {weights!r} instead."
        )
    if abs(sum(ws) - 1) > Fraction(1, 10**9):
        raise InvalidParameterError(
            f"The 'weights' parameter of {caller} must sum to 1. Got {weights!r} (sum {float(sum(ws)):g}) instead."
        )
    indices = _per_property(index, names, "index", caller)
    s12 = s21 = Fraction(0)
    exact = True
    for name, w, idx in zip(names, ws, indices):
        check_option(idx, "index", caller, BINARY_INDICES)
        x, y = index_pair(u1[name], u2[name], idx, normalization)
        if isinstance(x, float) or isinstance(y, float):
            exact = False
        s12 = s12 + w * (Fraction(x) if not isinstance(x, float) else x)
        s21 = s21 + w * (Fraction(y) if not isinstance(y, float) else y)
    return MultiResult(_simplify(s12), _simplify(s21), _by_value(s12, s21, 0, exact))


def lex(
    u1: Mapping, u2: Mapping, *, eps=0, index="cov", normalization: str = "default", d_max=None
) -> MultiResult:
    """▶LEX: the first property, in the order of `u1`, with a significant difference
    decides (paper §5.6).

    δ_p = η(P_p(D1p, D2p)) − η(P_p(D2p, D1p)) for a binary index, U_p(D1p) − U_p(D2p)
    for a unary one (−P_rank for "rank"). P_LEX(Υ1, Υ2) = min{p : δ_p > ε_p} (1-based;
    ``math.inf`` for none, spec P-8); the smaller position wins, both inf is a TIE.

    Parameters
    ----------
    eps : number, sequence or mapping, default=0
        ε_p ≥ 0, the largest difference still counted as equally good.
    index : str or mapping, default="cov"
        Binary or unary index per property.
    d_max : mapping, optional
        Ideal vectors for "rank".

    Examples
    --------
    >>> a = {"size": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4], "util": [6, 5, 5, 6, 4, 4, 4, 6, 5, 4]}
    >>> b = {"size": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7], "util": [6, 2, 2, 6, 2, 2, 2, 6, 2, 2]}
    >>> lex(a, b).verdict, lex(a, b, eps=[0.8, 0]).verdict
    (<Verdict.SECOND_BETTER: 'SECOND_BETTER'>, <Verdict.FIRST_BETTER: 'FIRST_BETTER'>)
    """
    caller = "lex"
    _same_properties(u1, u2, caller)
    names = list(u1)
    epss = [_check_eps(e, caller) for e in _per_property(eps, names, "eps", caller)]
    indices = _per_property(index, names, "index", caller)
    first = second = math.inf
    for pos, (name, e, idx) in enumerate(zip(names, epss, indices), start=1):
        check_option(idx, "index", caller, UNARY_INDICES + BINARY_INDICES)
        if idx in UNARY_INDICES:
            dm = None if d_max is None else d_max.get(name)
            x = unary_value(u1[name], idx, d_max=dm)
            y = unary_value(u2[name], idx, d_max=dm)
        else:
            x, y = index_pair(u1[name], u2[name], idx, normalization)
        delta = x - y
        exact = not isinstance(delta, float)
        if first == math.inf and _greater(delta, e, exact):
            first = pos
        if second == math.inf and _greater(-delta, e, exact):
            second = pos
    if first == second:
        return MultiResult(first, second, Verdict.TIE)
    return MultiResult(
        first, second, Verdict.FIRST_BETTER if first < second else Verdict.SECOND_BETTER
    )


def _greater(delta, eps, exact: bool) -> bool:
    if exact:
        return delta > eps
    return float(delta) > float(eps) + TOLERANCE


def goal(
    u1: Mapping,
    u2: Mapping,
    *,
    goals,
    index="cov",
    normalization: str = "default",
    one_sided: bool = False,
) -> MultiResult:
    """▶GOAL: squared distance of the index values from the goals; smaller wins (paper
    §5.7).

    E12 = Σ_p (η(P_p(D1p, D2p)) − g_p)², E21 likewise. With ``one_sided=True`` only a
    shortfall below the goal counts (spec P-20, a project extension).

    >>> a = {"size": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4], "util": [6, 5, 5, 6, 4, 4, 4, 6, 5, 4]}
    >>> b = {"size": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7], "util": [6, 2, 2, 6, 2, 2, 2, 6, 2, 2]}
    >>> goal(a, b, goals=[1, 1])
    MultiResult(first=Fraction(49, 100), second=Fraction(49, 100), verdict=<Verdict.TIE: 'TIE'>)
    """
    caller = "goal"
    _same_properties(u1, u2, caller)
    names = list(u1)
    gs = [check_fraction(g, "goals", caller) for g in _per_property(goals, names, "goals", caller)]
    indices = _per_property(index, names, "index", caller)
    e12 = e21 = Fraction(0)
    exact = True
    for name, g, idx in zip(names, gs, indices):
        check_option(idx, "index", caller, BINARY_INDICES)
        x, y = index_pair(u1[name], u2[name], idx, normalization)
        if isinstance(x, float) or isinstance(y, float):
            exact = False
            g = float(g)
        e12 = e12 + _goal_term(x, g, one_sided)
        e21 = e21 + _goal_term(y, g, one_sided)
    return MultiResult(_simplify(e12), _simplify(e21), _by_value(e12, e21, 0, exact, higher=False))


def _goal_term(value, g, one_sided: bool):
    gap = value - g
    if one_sided and gap > 0:
        return 0
    return gap * gap


def goal_unary(u: Mapping, *, goals, index="mean", d_max=None, one_sided: bool = False):
    """E(Υ) = Σ_p (U_p(D_p) − g_p)², a scalar per release that ranks directly (paper §5.7).

    Parameters
    ----------
    u : mapping property -> vector
    goals : sequence or mapping
        g_p, usually U_p of a goal vector, on the scale of the oriented index (−P_rank
        for "rank").
    index : str or mapping, default="mean"
        Unary index per property.
    d_max : mapping, optional
        Ideal vectors for "rank".

    >>> goal_unary({"size": [3, 3, 4, 4]}, goals=[4], index="min")
    1
    """
    caller = "goal_unary"
    if not isinstance(u, Mapping) or not u:
        raise InvalidParameterError(
            f"The 'u' parameter of {caller} must be a non-empty mapping property -> vector."
        )
    names = list(u)
    gs = [check_fraction(g, "goals", caller) for g in _per_property(goals, names, "goals", caller)]
    indices = _per_property(index, names, "index", caller)
    total = Fraction(0)
    for name, g, idx in zip(names, gs, indices):
        check_option(idx, "index", caller, UNARY_INDICES)
        value = unary_value(u[name], idx, d_max=None if d_max is None else d_max.get(name))
        if isinstance(value, float):
            total = total + _goal_term(value, float(g), one_sided)
        else:
            total = total + _goal_term(Fraction(value), g, one_sided)
    return _simplify(total)
