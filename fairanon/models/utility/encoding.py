"""How released labels are read as numbers and features, for the utility analysis.

Two readings of a released cell, used by the distributions and by the classifiers:

**Numeric labels.** A label ``[lo-hi]`` (or a point, or ``*``) is first clipped to the
original data's range [min, max] (``*`` becomes the whole range). When every original
value of the attribute is an integer, the label is read as the integers it holds
(``(25-30]`` is 26..30); otherwise as the real interval (open bounds have measure zero
and are ignored). Then

- its *midpoint* is (lo + hi) / 2 of the clipped bounds: the number a classifier and the
  summary statistics read;
- its *uniform spread* is the uniform distribution over the label: continuous on
  [lo, hi] for real data, the same mass on each integer lo..hi for integer data
  (continuous on [lo − ½, hi + ½], so that a bin holding the integers a..b receives
  exactly their share). Its variance is (hi − lo)² / 12 for real data and
  ((hi − lo + 1)² − 1) / 12 for integer data (0 for a point).

**Categorical and ordered labels** cover a set of values of the attribute's domain
(:func:`~fairanon.instances.generalization.label_covers`); the uniform spread gives each
value of the *active domain* (the values present in the original table, as every metric
of :mod:`fairanon.models.metrics` counts them) that the label covers the same share.

**Original values in the release's label space** (:func:`label_weights`): a model
trained on one-hot released labels must read a held-out original record. Its value v is
mapped to every released label l that covers it, with the weight

    w(l | v) = (n_l / c_l) / Σ_{l' ∋ v} (n_l' / c_l'),

where n_l is the number of training records released as l and c_l the number of active
values l covers: the probability that a record of value v was released as l when the
release is read with the uniform spread (Bayes' rule with P(v | l) = 1 / c_l and
P(l) ∝ n_l). A value that no training label covers reads as all zeros.

The uniform spread is the uniformity assumption under which generalized data answer
count queries (K. LeFevre, D. J. DeWitt, R. Ramakrishnan, Workload-aware anonymization,
KDD 2006; the median relative error of :mod:`fairanon.models.metrics.queries`, which
however spreads a numeric range over the distinct data values it covers, not over its
span).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...exceptions import InvalidParameterError, SchemaError

__all__ = ["NumericReading", "label_weights", "numeric_reading", "released_attributes"]


@dataclass(frozen=True)
class NumericReading:
    """Per distinct label of a numeric attribute: clipped bounds, midpoint, spread.

    Attributes
    ----------
    integer : bool
        Whether every original value is an integer (labels are read as integers).
    lo, hi : numpy.ndarray
        Clipped bounds (integers when `integer`).
    mid : numpy.ndarray
        Midpoints (lo + hi) / 2.
    spread_lo, spread_hi : numpy.ndarray
        The interval of the continuous uniform spread ([lo − ½, hi + ½] for integers).
    variance : numpy.ndarray
        The variance of each label's uniform spread.
    data_min, data_max : float
        The original data's range.
    """

    integer: bool
    lo: np.ndarray
    hi: np.ndarray
    mid: np.ndarray
    spread_lo: np.ndarray
    spread_hi: np.ndarray
    variance: np.ndarray
    data_min: float
    data_max: float


def numeric_reading(covers, values: np.ndarray) -> NumericReading:
    """Read the labels of `covers` (a numeric :class:`LabelCovers`) against the sorted
    distinct original `values`, as described in the module docstring.

    >>> from fairanon.instances.generalization import label_covers
    >>> from fairanon.instances.schema import Attribute
    >>> c = label_covers(Attribute("age", kind="numeric"), ["[20-24]", "30", "*", "(25-30]"])
    >>> r = numeric_reading(c, np.array([20.0, 22.0, 30.0, 40.0]))
    >>> r.mid.tolist(), r.lo.tolist(), r.variance.tolist()
    ([22.0, 30.0, 30.0, 28.0], [20.0, 30.0, 20.0, 26.0], [2.0, 0.0, 36.666666666666664, 2.0])
    """
    vmin, vmax = float(values[0]), float(values[-1])
    integer = bool(np.all(values == np.floor(values)))
    lo, hi = covers.lo.astype(float), covers.hi.astype(float)
    with np.errstate(invalid="ignore"):
        if integer:
            lo = np.where(covers.lo_open, np.floor(lo) + 1, np.ceil(lo))
            hi = np.where(covers.hi_open, np.ceil(hi) - 1, np.floor(hi))
    lo = np.clip(lo, vmin, vmax)
    hi = np.maximum(np.clip(hi, vmin, vmax), lo)
    mid = (lo + hi) / 2
    if integer:
        width = hi - lo + 1
        variance = (width * width - 1) / 12
        spread_lo, spread_hi = lo - 0.5, hi + 0.5
    else:
        variance = (hi - lo) ** 2 / 12
        spread_lo, spread_hi = lo, hi
    return NumericReading(integer, lo, hi, mid, spread_lo, spread_hi, variance, vmin, vmax)


def label_weights(mask: np.ndarray, active: np.ndarray, label_rows: np.ndarray) -> sp.csr_matrix:
    """The weights w(l | v) of the module docstring: one row per domain value v, one
    column per label l (sparse; rows of uncovered values are empty).

    Parameters
    ----------
    mask : numpy.ndarray of bool, shape (L, m)
        ``mask[l, v]``: label l covers domain value v.
    active : numpy.ndarray of bool, shape (m,)
        The values present in the original table.
    label_rows : numpy.ndarray of int, shape (L,)
        n_l, the training records released under each label.

    >>> mask = np.array([[True, False], [True, True]])  # labels 'a' and '*'
    >>> label_weights(mask, np.array([True, True]), np.array([1, 4])).toarray().tolist()
    [[0.3333333333333333, 0.6666666666666666], [0.0, 1.0]]
    """
    covered = mask & active[None, :]
    count = covered.sum(axis=1)
    prior = np.where(count > 0, np.asarray(label_rows, dtype=float) / np.maximum(count, 1), 0.0)
    weights = covered.T * prior[None, :]  # (m, L)
    total = weights.sum(axis=1, keepdims=True)
    weights = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    return sp.csr_matrix(weights)


def released_attributes(names, parameter: str, instance, table) -> list[str]:
    """`names` (a name or a sequence of names, repeats dropped) checked as released
    attributes of `instance` that the released `table` holds, for the parameter
    `parameter` of :func:`fairanon.utility`.

    Raises
    ------
    InvalidParameterError
        If a name is not a released attribute of the instance.
    SchemaError
        If the release lacks the column.
    """
    schema = instance.schema
    if isinstance(names, str):
        names = [names]
    names = list(dict.fromkeys(names))
    for name in names:
        if name not in schema or not schema[name].released:
            raise InvalidParameterError(
                f"The {parameter!r} parameter of utility names {name!r}, which is not a released "
                f"attribute of instance {instance.name!r}; released: {list(schema.released)}."
            )
        if name not in table.columns:
            raise SchemaError(f"The release lacks the column {name!r} named in {parameter!r}.")
    return names
