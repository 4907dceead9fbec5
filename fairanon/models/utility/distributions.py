"""Per attribute, the distribution before and after anonymization.

Each original record falls, for each attribute, in one of four cases by its released
cell:

- **exact**: the label is the original value itself (a categorical or ordered value's
  name, or the numeric point equal to the number: ``37`` and ``37.0`` both read 37) — the
  complement of :func:`~fairanon.models.metrics.generalized_cells`;
- **generalized**: another label that covers the value (a range, a hierarchy node);
- **suppressed**: ``*``, or a generalized label that covers every value present (a
  hierarchy's root with another name, the range from the least value to the greatest),
  which tells no more than ``*`` (as :func:`~fairanon.models.metrics.suppressed_cells`
  counts it);
- **untruthful**: a label that does not cover the value (none in a release that passes
  the verifier's truthfulness check).

These counts are given per original value (categorical and ordered attributes, over the
values present in the original table) or per bin of original values (numeric
attributes), beside two histograms on the same rows: the original counts, and the
*released* counts read with the uniform spread of :mod:`.encoding` (each released cell
shares its one record among the values or the part of the range its label covers). Their
total variation distance ½ Σ |original − released| / n summarizes how far the release
moves the attribute's distribution (0: the same histogram; 1: disjoint).

Numeric attributes also get summary statistics (mean, standard deviation with ddof = 0,
minimum, quartiles, maximum) of the original numbers and of the released labels read at
their midpoints, and the standard deviation under the uniform spread (the law of total
variance: the variance of the midpoints plus the mean variance within labels).

Bins of numeric attributes: `bins` equal-width bins over the original range; for
integer data the edges are moved to half-integers (one bin per integer when the range
holds at most `bins` integers), so a bin holds whole integers and the uniform spread of
an integer label gives each integer the same share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..metrics.classes import _Column, _Prepared
from .encoding import numeric_reading

__all__ = ["CASES", "AttributeDistribution", "attribute_distribution", "column_distribution"]

#: The cases of a released cell, in the order of the count columns.
CASES = ("exact", "generalized", "suppressed", "untruthful")


@dataclass(frozen=True)
class AttributeDistribution:
    """One attribute before and after anonymization.

    Attributes
    ----------
    name, kind : str
    n : int
        Records.
    n_labels : int
        Distinct released labels.
    values : tuple of str
        The rows of the histograms: the active values (categorical, ordered) or the bins
        (numeric, e.g. ``[17-23]``).
    original : numpy.ndarray of int
        Original records per row.
    released : numpy.ndarray of float
        Released records per row under the uniform spread.
    cases : numpy.ndarray of int, shape (rows, 4)
        Per row, the original records released exact, generalized, suppressed,
        untruthful (:data:`CASES`).
    unplaced : float
        Released records whose label covers no value present in the original table
        (they are in no row of `released`).
    tv_distance : float
        ½ Σ |original − released| / n.
    labels : tuple of (str, int)
        Each released label and its records, most frequent first.
    edges : tuple of float
        Numeric attributes: the bin edges (empty otherwise).
    summary : dict
        Numeric attributes: ``{"before": {...}, "after": {...}}``, the statistics of the
        original numbers and of the midpoints, ``after`` with ``std_uniform`` too.
    """

    name: str
    kind: str
    n: int
    n_labels: int
    values: tuple[str, ...]
    original: np.ndarray
    released: np.ndarray
    cases: np.ndarray
    unplaced: float
    tv_distance: float
    labels: tuple[tuple[str, int], ...]
    edges: tuple[float, ...] = ()
    summary: dict = field(default_factory=dict)

    @property
    def totals(self) -> dict[str, int]:
        """Records per case over the whole attribute."""
        return {case: int(v) for case, v in zip(CASES, self.cases.sum(axis=0))}

    def shares(self) -> dict[str, float]:
        """The share of records per case."""
        return {case: v / self.n if self.n else 0.0 for case, v in self.totals.items()}

    def to_dict(self) -> dict:
        rows = [
            {
                "value": value,
                "original": int(self.original[i]),
                "released": float(self.released[i]),
                **{case: int(self.cases[i, j]) for j, case in enumerate(CASES)},
            }
            for i, value in enumerate(self.values)
        ]
        out = {
            "name": self.name,
            "kind": self.kind,
            "n": self.n,
            "n_labels": self.n_labels,
            **self.totals,
            "unplaced": float(self.unplaced),
            "tv_distance": float(self.tv_distance),
            "histogram": rows,
            "labels": {label: count for label, count in self.labels},
        }
        if self.edges:
            out["edges"] = [float(e) for e in self.edges]
        if self.summary:
            out["summary"] = {k: {s: float(v) for s, v in d.items()} for k, d in self.summary.items()}
        return out


def attribute_distribution(p: _Prepared, name: str, bins: int = 10) -> AttributeDistribution:
    """The distribution of attribute `name` before and after, from a prepared release
    (:func:`fairanon.models.metrics.classes._prepare`)."""
    return column_distribution(p.column(name), bins)


def column_distribution(col: _Column, bins: int = 10, weights: np.ndarray | None = None) -> AttributeDistribution:
    """The distribution of one released column before and after.

    Parameters
    ----------
    col : _Column
        The column: a label code and an original value per row, and what each label
        covers.
    bins : int, default=10
    weights : numpy.ndarray of int, optional
        Records per row of `col`. With weights, a row stands for that many records with
        its label and original value, and ``col.label_rows`` must count records
        (weighted): the Dask engine reduces a release to the counts of its (original
        value, released label) pairs and measures those. Every figure is then the one of
        the records themselves — the counts are sums, the numeric summaries weighted
        means and the quantiles of the records in order (:func:`_weighted_quantiles`).
    """
    labels = _label_counts(col)
    if col.numeric:
        return _numeric(col, labels, bins, weights)
    return _categorical(col, labels, weights)


def _label_counts(col: _Column) -> tuple[tuple[str, int], ...]:
    rows = col.label_rows
    order = np.lexsort((np.arange(len(rows)), -rows))
    return tuple((col.labels[i], int(rows[i])) for i in order if rows[i])


def _case_codes(exact: np.ndarray, star: np.ndarray, cover: np.ndarray) -> np.ndarray:
    """0 exact, 1 generalized, 2 suppressed, 3 untruthful, per row."""
    case = np.full(len(exact), 3, dtype=np.int64)
    case[cover] = 1
    case[star] = 2
    case[exact] = 0
    return case


def _tv(original: np.ndarray, released: np.ndarray, n: int) -> float:
    return float(np.abs(original - released).sum() / (2 * n)) if n else 0.0


def _cases(where: np.ndarray, case: np.ndarray, rows: int, weights: np.ndarray | None) -> np.ndarray:
    """Records per (row of the histogram, case), shape (rows, 4)."""
    counts = np.bincount(where * 4 + case, weights=weights, minlength=4 * rows)
    # Weighted counts are sums of whole numbers, exact in float64 below 2**53.
    return counts.astype(np.int64).reshape(rows, 4)


def _records(col: _Column, weights: np.ndarray | None) -> int:
    return len(col.codes) if weights is None else int(weights.sum())


def _categorical(col: _Column, labels, weights: np.ndarray | None) -> AttributeDistribution:
    attr = col.attr
    domain = attr.domain
    m = len(domain)
    codes, orig = col.codes.astype(np.int64), col.orig.astype(np.int64)
    # Labels are read as ranges of values (LabelCovers), never as a labels-by-values
    # table: an ID-like attribute of 100,000 values would need 10^10 bytes.
    covers = col.covers
    index = {v: i for i, v in enumerate(domain)}
    leaf = np.array([index.get(label, -1) for label in col.labels], dtype=np.int64)
    exact = leaf[codes] == orig
    star = col.tells_nothing[codes]
    cover = covers.contains(codes, orig)
    case = _case_codes(exact, star, cover)
    cases = _cases(orig, case, m, weights)
    active = col.active
    count = col.count  # active values each label covers
    rows = col.label_rows.astype(float)
    share = np.where(count > 0, rows / np.maximum(count, 1), 0.0)
    released = covers.value_sums(share)[active]
    # A value that no label with records covers gets exactly 0, not the rounding left
    # by the prefix sums of cancelling shares.
    released[covers.value_sums((share > 0).astype(np.int64))[active] == 0] = 0.0
    original = cases[active].sum(axis=1)
    n = _records(col, weights)
    return AttributeDistribution(
        name=col.name,
        kind=attr.kind,
        n=n,
        n_labels=col.n_labels,
        values=tuple(v for v, a in zip(domain, active) if a),
        original=original,
        released=released,
        cases=cases[active],
        unplaced=float(rows[count == 0].sum()),
        tv_distance=_tv(original, released, n),
        labels=labels,
    )


def _edges(values: np.ndarray, integer: bool, bins: int) -> np.ndarray:
    vmin, vmax = float(values[0]), float(values[-1])
    if integer:
        if vmax - vmin + 1 <= bins:
            return np.arange(vmin - 0.5, vmax + 1.0)
        inner = np.floor(np.linspace(vmin - 0.5, vmax + 0.5, bins + 1)[1:-1]) + 0.5
        return np.unique(np.concatenate([[vmin - 0.5], inner, [vmax + 0.5]]))
    if vmin == vmax:
        return np.array([vmin - 0.5, vmax + 0.5])
    return np.linspace(vmin, vmax, bins + 1)


def _bin_names(edges: np.ndarray, integer: bool) -> tuple[str, ...]:
    names = []
    last = len(edges) - 2
    for j, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        if integer:
            lo, hi = int(np.ceil(a)), int(np.floor(b))
            names.append(str(lo) if lo == hi else f"[{lo}-{hi}]")
        else:
            names.append(f"[{a:.6g}-{b:.6g}{']' if j == last else ')'}")
    return tuple(names)


#: The quantiles of the numeric summaries: minimum, quartiles, maximum.
_QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _weighted_quantiles(x: np.ndarray, weights: np.ndarray, q) -> np.ndarray:
    """The quantiles `q` of the records, `weights[i]` of them of value `x[i]`: what
    :func:`numpy.quantile` (its default "linear" method, Hyndman and Fan's type 7)
    gives on the records themselves. The records are sorted; the quantile q lies at
    position h = (n − 1) q, between the records of ranks ⌊h⌋ and ⌊h⌋ + 1, each found in
    the cumulative counts, and is interpolated between them as numpy does.

    >>> x, w = np.array([3.0, 1.0, 2.0]), np.array([1, 2, 1])
    >>> _weighted_quantiles(x, w, [0, 0.5, 1]).tolist(), np.quantile([1, 1, 2, 3], [0, 0.5, 1]).tolist()
    ([1.0, 1.5, 3.0], [1.0, 1.5, 3.0])
    """
    order = np.argsort(x, kind="stable")
    xs, cum = x[order], np.cumsum(weights[order])
    n = int(cum[-1])
    h = (n - 1) * np.asarray(q, dtype=float)
    below = np.floor(h)
    t = h - below
    rank = below.astype(np.int64)
    a = xs[np.searchsorted(cum, rank, side="right")]
    b = xs[np.searchsorted(cum, np.minimum(rank + 1, n - 1), side="right")]
    # numpy's lerp: from the nearer end, so that t = 1 gives b exactly.
    return np.where(t >= 0.5, b - (b - a) * (1 - t), a + (b - a) * t)


def _moments(x: np.ndarray, weights: np.ndarray | None) -> tuple[float, float]:
    """Mean and variance (ddof = 0) of the records."""
    if weights is None:
        return float(x.mean()), float(x.var())
    n = weights.sum()
    mean = float((weights * x).sum() / n)
    return mean, float((weights * (x - mean) ** 2).sum() / n)


def _stats(x: np.ndarray, weights: np.ndarray | None = None) -> dict[str, float]:
    q = np.quantile(x, _QUANTILES) if weights is None else _weighted_quantiles(x, weights, _QUANTILES)
    mean, var = _moments(x, weights)
    return {
        "mean": mean,
        "std": float(np.sqrt(var)),
        "min": float(q[0]),
        "q25": float(q[1]),
        "median": float(q[2]),
        "q75": float(q[3]),
        "max": float(q[4]),
    }


def _spread(reading, edges: np.ndarray) -> np.ndarray:
    """Share of each label's uniform spread in each bin, shape (L, bins)."""
    a, b = reading.spread_lo, reading.spread_hi
    width = b - a
    point = width <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        cdf = np.clip((edges[None, :] - a[:, None]) / np.where(point, 1.0, width)[:, None], 0.0, 1.0)
    share = np.diff(cdf, axis=1)
    if point.any():
        n_bins = len(edges) - 1
        at = np.clip(np.searchsorted(edges, a[point], side="right") - 1, 0, n_bins - 1)
        share[point] = 0.0
        share[np.flatnonzero(point), at] = 1.0
    return share


def _numeric(col: _Column, labels, bins: int, weights: np.ndarray | None) -> AttributeDistribution:
    values = col.values
    reading = numeric_reading(col.covers, values)
    edges = _edges(values, reading.integer, bins)
    n_bins = len(edges) - 1
    codes = col.codes.astype(np.int64)
    orig = np.asarray(col.orig, dtype=float)
    c = col.covers
    point = (c.lo == c.hi) & ~c.lo_open & ~c.hi_open
    exact = point[codes] & (c.lo[codes] == orig)
    star = col.tells_nothing[codes]
    cover = c.contains(codes, orig)
    case = _case_codes(exact, star, cover)
    where = np.clip(np.searchsorted(edges, orig, side="right") - 1, 0, n_bins - 1)
    cases = _cases(where, case, n_bins, weights)
    original = cases.sum(axis=1)
    released = col.label_rows.astype(float) @ _spread(reading, edges)
    mid = reading.mid[codes]
    after = _stats(mid, weights)
    # The law of total variance: the variance of the midpoints plus the mean variance
    # within labels.
    within, _ = _moments(reading.variance[codes], weights)
    after["std_uniform"] = float(np.sqrt(_moments(mid, weights)[1] + within))
    n = _records(col, weights)
    return AttributeDistribution(
        name=col.name,
        kind="numeric",
        n=n,
        n_labels=col.n_labels,
        values=_bin_names(edges, reading.integer),
        original=original,
        released=released,
        cases=cases,
        unplaced=0.0,
        tv_distance=_tv(original, released, n),
        labels=labels,
        edges=tuple(float(e) for e in edges),
        summary={"before": _stats(orig, weights), "after": after},
    )
