"""The per-tuple properties compared (docs/papers.md, DW-3) and their orientation.

:data:`PROPERTIES` records the direction, transform and ideal vector D_max of each
column of :func:`~fairanon.models.metrics.property_vectors` and of the fairness
vectors of :func:`~fairanon.models.metrics.fairness_vectors` (docs/papers.md, DW-10:
``alpha_<measure>`` per record, ``div_share`` per record or per group); :func:`orient` turns a
lower-is-better property around, since every quality index assumes *higher is better*
(``negate``, ``flip`` against an upper bound, or ``reciprocal``; only ``flip`` keeps the
values non-negative, as P_hv needs).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..._validation import check_option
from ...exceptions import InvalidParameterError
from .vectors import TOLERANCE, _exact, _extreme, _vec

__all__ = ["PROPERTIES", "PropertyContext", "PropertySpec", "orient"]


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
    """Direction, orientation and ideal of one property vector (docs/papers.md, DW-3).

    Attributes
    ----------
    name : str
        The column of :func:`~fairanon.models.metrics.property_vectors`.
    label : str
        The paper's id (PV-...) and a readable name.
    direction : {"higher", "lower"}
    transform : {"none", "negate", "flip", "reciprocal"}
        How :func:`orient` makes it higher-is-better.
    upper : str
        The flip bound U: "1", "N" (records), "a" (quasi-identifiers), or "N+1" and
        "N2+1" (above every finite value of a ratio measure, where an infinite value is
        recorded: :func:`~fairanon.models.metrics.infinite_cap`).
    ideal : str
        D_max after orientation: "N", "a", "1", "N-1" or "l" (distinct sensitive
        values); empty when no vector is ideal (P_rank is then not computed).
    family : {"privacy", "utility", "fairness"}
    group : bool
        Also measured per group (diversity constraints): with ``unit="group"`` the
        comparison runs over groups instead of records (docs/papers.md, DW-10).
    """

    name: str
    label: str
    direction: str
    transform: str
    upper: str = ""
    ideal: str = ""
    family: str = "privacy"
    group: bool = False

    def bound(self, ctx: PropertyContext, which: str):
        key = self.upper if which == "upper" else self.ideal
        values = {
            "1": 1,
            "N": ctx.n_rows,
            "N-1": ctx.n_rows - 1,
            "N+1": ctx.n_rows + 1,
            "N2+1": ctx.n_rows * ctx.n_rows + 1,
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
    "loss": PropertySpec(
        "loss", "PV-loss: Iyengar loss", "lower", "flip", "a", "a", family="utility"
    ),
    "util_paper": PropertySpec(
        "util_paper",
        "PV-util: utility Σ(1 − M_ij/M_j)",
        "higher",
        "none",
        ideal="a",
        family="utility",
    ),
}
_MEASURE_LABELS = {
    "RD": ("risk difference", "lower", "1"),
    "ED": ("extended difference", "lower", "1"),
    "RR": ("risk ratio (slift)", "lower", "N+1"),
    "ER": ("extended lift (elift)", "lower", "N+1"),
    "OR": ("odds ratio", "lower", "N2+1"),
    "RC": ("risk chance (slift_c)", "higher", ""),
    "EC": ("extended chance (elift_c)", "higher", ""),
}
for _m, (_text, _direction, _upper) in _MEASURE_LABELS.items():
    PROPERTIES[f"alpha_{_m}"] = PropertySpec(
        f"alpha_{_m}",
        f"PV-fair-alpha: worst {_text} of the record's contexts",
        _direction,
        "flip" if _direction == "lower" else "none",
        _upper,
        family="fairness",
    )
PROPERTIES["div_share"] = PropertySpec(
    "div_share",
    "PV-fair-div: share of the diversity group kept visible",
    "higher",
    "none",
    ideal="1",
    family="fairness",
    group=True,
)


def orient(values, direction: str = "higher", transform: str = "flip", upper=None) -> np.ndarray:
    """Make a property vector higher-is-better (docs/papers.md, DW-3).

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
