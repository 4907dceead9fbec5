"""Utility and risk metrics of a release, read from the released table alone.

Every metric takes the original :class:`~fairanon.instances.instance.Instance` and a
:class:`~fairanon.release.Release`. The two are aligned by record id (the release's
index against ``instance.row_ids``); released quasi-identifier cells are parsed with
:func:`~fairanon.instances.generalization.label_covers`, the same reading the verifier
uses. Equivalence classes are the rows with identical released values on every
quasi-identifier (:attr:`Schema.qi`, the protected attribute included), never the
method's own ``release.groups`` (baselines spec §0.3.5).

Domain statistics are taken from the original data (the *active domain*): M_j is the
number of distinct values of attribute j present in the original table, and a
generalized cell covers M_ij of them; numeric ranges are clipped to the data's
[min, max].

Exactness: counts (cells, class sizes, discernibility) are ints and ratios of counts
are :class:`fractions.Fraction` (``average_class_size``). Losses, NCP/GCP, the MRE and
the property vectors are floats by default (they are reports); pass ``exact=True`` to
:func:`loss_metric`, :func:`ncp` or :func:`property_vectors` for exact
:class:`~fractions.Fraction` values (slower: meant for tests and small tables).

Examples
--------
>>> import pandas as pd
>>> from fairanon.instances import Attribute, Instance, Schema
>>> from fairanon.release import Release, generalize_partition
>>> df = pd.DataFrame({"age": [21, 23, 35, 38], "sex": ["f", "m", "f", "m"],
...                    "disease": ["flu", "flu", "hiv", "flu"]})
>>> inst = Instance(df, Schema([Attribute("age", kind="numeric"), Attribute("sex"),
...                             Attribute("disease", role="sensitive")]))
>>> rel = Release(generalize_partition(inst, [0, 0, 1, 1]), groups=[0, 0, 1, 1])
>>> rel.table["age"].tolist(), rel.table["sex"].tolist()
(['[21-23]', '[21-23]', '[35-38]', '[35-38]'], ['*', '*', '*', '*'])
>>> equivalence_classes(inst, rel).tolist()
[0, 0, 1, 1]
>>> discernibility(inst, rel), generalized_cells(inst, rel), suppressed_cells(inst, rel)
(8, 8, 4)
>>> loss_metric(inst, rel, exact=True)["LM_sum"]  # (2·2/17 + 2·3/17 + 4·1) / 4
Fraction(39, 34)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
import pandas as pd

from .._validation import check_int, check_option, check_random_state
from ..exceptions import FairanonError, InvalidParameterError, SchemaError
from ..instances.generalization import LabelCovers, label_covers
from ..instances.hierarchy import SUPPRESSED
from ..instances.instance import Instance
from ..instances.schema import Attribute
from ..release import Release
from .released import combine_codes

__all__ = [
    "NUMERIC_LOSSES",
    "CountQueries",
    "average_class_size",
    "count_queries",
    "discernibility",
    "equivalence_classes",
    "generalized_cells",
    "loss_metric",
    "median_relative_error",
    "ncp",
    "property_vectors",
    "summary",
    "suppressed_cells",
]

#: How :func:`loss_metric` and :func:`property_vectors` measure a numeric cell:
#: "width" (Iyengar: clipped range width over the data range) or "values" (the
#: categorical form (M_ij − 1)/(M_j − 1) counting the distinct data values covered, i.e.
#: Ruggieri's integer-rank reading and the comparison paper's PV-loss).
NUMERIC_LOSSES = ("width", "values")


# ---------------------------------------------------------------------- preparation
def _factorize_labels(col: pd.Series, name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Codes 0..L-1 per row and the L distinct labels (as strings) of a released column."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        raw = col.cat.codes.to_numpy()
        if len(raw) and raw.min() < 0:
            raise SchemaError(f"The released column {name!r} has missing values.")
        present = np.bincount(raw, minlength=len(col.cat.categories)) > 0
        values = np.asarray(col.cat.categories, dtype=object)[present]
        raw = (np.cumsum(present) - 1)[raw]
    else:
        raw, values = pd.factorize(col)
        if (raw < 0).any():
            raise SchemaError(f"The released column {name!r} has missing values.")
        values = np.asarray(values, dtype=object)
    # Cells are symbols compared as text: 37 and "37" are one label.
    text = np.array([str(v) for v in values], dtype=object)
    merged, labels = pd.factorize(text)
    if len(labels) < len(text):
        raw = merged[raw]
    return raw.astype(np.int64, copy=False), tuple(str(v) for v in labels)


def _active_mask(instance: Instance, name: str) -> np.ndarray:
    """Mask over the domain of a categorical/ordered attribute: values present (O(n))."""
    return np.bincount(instance.codes(name), minlength=len(instance.schema[name].domain)) > 0


def _active_values(instance: Instance, name: str) -> np.ndarray:
    """Sorted distinct values of a numeric attribute (hashing, then a small sort)."""
    return np.sort(pd.unique(instance.codes(name)))


class _Column:
    """One released attribute: label codes per release row and what each label covers.

    All statistics are over the attribute's active domain, i.e. the distinct values of
    the original table, ranked in domain order (categorical, ordered) or by value
    (numeric).
    """

    def __init__(self, instance: Instance, name: str, col: pd.Series, pos: np.ndarray | None):
        self.name = name
        self.attr: Attribute = instance.schema[name]
        self.codes, labels = _factorize_labels(col, name)
        self.covers: LabelCovers = label_covers(self.attr, labels)
        self.labels = labels
        self.n_labels = len(labels)
        full = instance.codes(name)
        self.numeric = self.attr.kind == "numeric"
        if self.numeric:
            self.values = _active_values(instance, name)  # sorted active domain
            self.m = len(self.values)
        else:
            self.active = _active_mask(instance, name)
            self.m = int(self.active.sum())
        self._full_codes = full
        self._pos = pos

    @cached_property
    def orig(self) -> np.ndarray:
        """Original codes (or numeric values) aligned with the release rows."""
        return self._full_codes if self._pos is None else self._full_codes[self._pos]

    @cached_property
    def label_rows(self) -> np.ndarray:
        """Number of release rows carrying each label."""
        return np.bincount(self.codes, minlength=self.n_labels)

    @cached_property
    def _span(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per label: active values covered (M_ij), first and last covered active rank."""
        if self.numeric:
            c = self.covers
            first = np.where(
                c.lo_open,
                np.searchsorted(self.values, c.lo, "right"),
                np.searchsorted(self.values, c.lo, "left"),
            )
            end = np.where(
                c.hi_open,
                np.searchsorted(self.values, c.hi, "left"),
                np.searchsorted(self.values, c.hi, "right"),
            )
            count = np.maximum(end - first, 0)
            return (
                count.astype(np.int64),
                first.astype(np.int64),
                (first + count - 1).astype(np.int64),
            )
        cov = self.covers.mask[:, self.active]
        count = cov.sum(axis=1).astype(np.int64)
        first = cov.argmax(axis=1).astype(np.int64)
        last = np.where(count > 0, self.m - 1 - cov[:, ::-1].argmax(axis=1), first - 1).astype(
            np.int64
        )
        return count, first, last

    @property
    def count(self) -> np.ndarray:
        return self._span[0]

    @property
    def first(self) -> np.ndarray:
        return self._span[1]

    @property
    def last(self) -> np.ndarray:
        return self._span[2]

    @cached_property
    def contiguous(self) -> bool:
        """Whether every label covers a contiguous run of active ranks."""
        return bool(np.all(self.last - self.first + 1 == self.count))

    @cached_property
    def prefix(self) -> np.ndarray:
        """``prefix[l, r]`` = active values of rank < r covered by label l (L × (m+1))."""
        cov = self.covers.mask[:, self.active]
        out = np.zeros((self.n_labels, self.m + 1), dtype=np.int64)
        np.cumsum(cov, axis=1, out=out[:, 1:])
        return out

    @cached_property
    def clipped(self) -> tuple[np.ndarray, np.ndarray]:
        """Numeric labels clipped to the data's [min, max]."""
        lo = np.clip(self.covers.lo, self.values[0], self.values[-1])
        hi = np.clip(self.covers.hi, self.values[0], self.values[-1])
        return lo, np.maximum(hi, lo)

    @cached_property
    def is_star(self) -> np.ndarray:
        return np.array([lab == SUPPRESSED for lab in self.labels], dtype=bool)

    # ---- per-label cell values -------------------------------------------------
    def cell_values(self, measure: str, numeric_loss: str = "width", exact: bool = False):
        """One value per label: a float array, or a list of Fractions if `exact`.

        measure "lm"   Iyengar loss (M_ij − 1)/(M_j − 1), numeric width/range;
                "ncp"  Xu's NCP: categorical leaves/|A| (0 for one covered value),
                       ordered rank span/(m − 1), numeric width/range;
                "util" the comparison paper's 1 − M_ij/M_j (numeric counts values).
        """
        m, count = self.m, self.count
        kind = self.attr.kind
        if measure == "util":
            if exact:
                return [Fraction(m - int(c), m) for c in count]
            return 1.0 - count / m
        if kind == "numeric" and not (measure == "lm" and numeric_loss == "values"):
            lo, hi = self.clipped
            rng = self.values[-1] - self.values[0]
            if rng == 0:
                return [Fraction(0)] * self.n_labels if exact else np.zeros(self.n_labels)
            if exact:
                den = Fraction(float(self.values[-1])) - Fraction(float(self.values[0]))
                return [(Fraction(float(b)) - Fraction(float(a))) / den for a, b in zip(lo, hi)]
            return (hi - lo) / rng
        if measure == "ncp" and kind == "categorical":
            num, den = np.where(count <= 1, 0, count), m
        elif measure == "ncp":  # ordered: rank span of the covered active values
            num, den = np.maximum(self.last - self.first, 0), m - 1
        else:  # lm on categorical / ordered, or numeric counted by values
            num, den = np.maximum(count - 1, 0), m - 1
        if den <= 0:
            return [Fraction(0)] * self.n_labels if exact else np.zeros(self.n_labels)
        if exact:
            return [Fraction(int(v), den) for v in num]
        return num / den


def _combine(codes: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """Dense ids (in order of first appearance) of the distinct rows of several code
    arrays, and their number."""
    n = len(codes[0]) if codes else 0
    key, n_key = np.zeros(n, dtype=np.int64), 1
    for c in codes:
        key, n_key = combine_codes(key, n_key, c, int(c.max()) + 1 if n else 1)
    ids, uniq = pd.factorize(key)
    return ids.astype(np.int64, copy=False), len(uniq)


def _first_rows(ids: np.ndarray) -> np.ndarray:
    """First row of each id, for ids numbered 0, 1, ... in order of first appearance."""
    if not len(ids):
        return np.zeros(0, dtype=np.int64)
    new = np.r_[True, ids[1:] > np.maximum.accumulate(ids)[:-1]]
    return np.flatnonzero(new)


@dataclass
class _Prepared:
    """A release aligned with its instance, parsed once and shared by the metrics."""

    instance: Instance
    release: Release
    pos: np.ndarray | None  # instance row of each release row (None: same order)
    qi: dict[str, _Column]

    @property
    def n(self) -> int:
        return self.instance.n_rows

    def column(self, name: str) -> _Column:
        if name in self.qi:
            return self.qi[name]
        if name not in self._extra:
            self._extra[name] = _Column(self.instance, name, self.release.table[name], self.pos)
        return self._extra[name]

    @cached_property
    def _extra(self) -> dict[str, _Column]:
        return {}

    @cached_property
    def classes(self) -> tuple[np.ndarray, int]:
        return _combine([col.codes for col in self.qi.values()])

    @property
    def class_ids(self) -> np.ndarray:
        return self.classes[0]

    @property
    def n_classes(self) -> int:
        return self.classes[1]

    @cached_property
    def class_sizes(self) -> np.ndarray:
        return np.bincount(self.class_ids, minlength=self.n_classes)

    @cached_property
    def class_first_row(self) -> np.ndarray:
        """A representative row of each class (its first row)."""
        return _first_rows(self.class_ids)

    @cached_property
    def suppressed_rows(self) -> np.ndarray:
        """Rows whose every generalizable quasi-identifier is released as ``*``."""
        names = [a for a in self.instance.schema.generalizable if a in self.qi]
        out = np.zeros(self.n, dtype=bool)
        if names:
            out[:] = True
            for name in names:
                col = self.qi[name]
                out &= col.is_star[col.codes]
        return out

    def to_instance_order(self, values: np.ndarray) -> np.ndarray:
        """Reorder per-release-row values to the instance's row order."""
        if self.pos is None:
            return values
        out = np.empty_like(values)
        out[self.pos] = values
        return out


def _prepare(instance: Instance, release: Release, caller: str) -> _Prepared:
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {caller} must be an Instance. Got {type(instance).__name__} instead."
        )
    if not isinstance(release, Release):
        raise InvalidParameterError(
            f"The 'release' parameter of {caller} must be a Release. Got {type(release).__name__} instead."
        )
    table = release.table
    ids = table.index
    if ids.equals(instance.row_ids):
        pos = None
    else:
        pos = instance.row_ids.get_indexer(ids) if ids.is_unique else None
        if len(ids) != instance.n_rows or not ids.is_unique or (pos < 0).any():
            raise SchemaError(
                f"The release does not hold the records of instance {instance.name!r} exactly once "
                f"({len(ids)} released rows for {instance.n_rows} records); {caller} aligns "
                "them by record id."
            )
    missing = [a for a in instance.schema.qi if a not in table.columns]
    if missing:
        raise SchemaError(f"The release lacks the quasi-identifier column(s) {missing}.")
    qi = {name: _Column(instance, name, table[name], pos) for name in instance.schema.qi}
    return _Prepared(instance, release, pos, qi)


def _check_k(k, caller: str) -> int | None:
    return None if k is None else check_int(k, "k", caller, low=1)


# ---------------------------------------------------------------------- classes, cells
def equivalence_classes(instance: Instance, release: Release) -> np.ndarray:
    """The released equivalence class of each row.

    Rows with identical released labels on every quasi-identifier (the protected
    attribute included) form one class; labels are compared as text.

    Parameters
    ----------
    instance : Instance
        The original data.
    release : Release
        Its release; aligned with `instance` by record id.

    Returns
    -------
    numpy.ndarray of int64
        Class ids 0..C−1, one per row of ``release.table`` (in its order), numbered in
        order of first appearance.

    Raises
    ------
    SchemaError
        If the release does not hold every record exactly once, lacks a
        quasi-identifier column, or holds a label its attribute cannot read.

    Notes
    -----
    O(n) hashing over n rows; ``release.groups`` is never read (baselines spec §0.3.5).
    """
    return _prepare(instance, release, "equivalence_classes").class_ids.copy()


def _suppressed_cells(p: _Prepared) -> int:
    return int(sum(int(col.label_rows[col.is_star].sum()) for col in p.qi.values()))


def suppressed_cells(instance: Instance, release: Release) -> int:
    """The number of quasi-identifier cells released as ``*``."""
    return _suppressed_cells(_prepare(instance, release, "suppressed_cells"))


def _generalized_cells(p: _Prepared) -> int:
    total = 0
    for col in p.qi.values():
        if col.numeric:  # a point label equal to the original value is unchanged
            c = col.covers
            point = (c.lo == c.hi) & ~c.lo_open & ~c.hi_open
            same = point[col.codes] & (c.lo[col.codes] == col.orig)
        else:
            index = {v: i for i, v in enumerate(col.attr.domain)}
            leaf = np.array([index.get(lab, -1) for lab in col.labels], dtype=np.int64)
            same = leaf[col.codes] == col.orig
        total += int(len(same) - same.sum())
    return total


def generalized_cells(instance: Instance, release: Release) -> int:
    """The number of quasi-identifier cells whose label differs from the original value.

    Suppressed cells (``*``) are included. A categorical or ordered cell is unchanged
    when its label is the original value itself; a numeric cell when its label is the
    point equal to the original number (``37`` and ``37.0`` both count as 37).

    Notes
    -----
    Ruggieri's dMondrian output for his Example 19 has 17 generalized cells, dSabre's 11
    (tcloseness spec §2.2, §2.5).
    """
    return _generalized_cells(_prepare(instance, release, "generalized_cells"))


# ---------------------------------------------------------------------- DM and C_avg
def _discernibility(p: _Prepared, k: int | None) -> int:
    sizes = p.class_sizes.astype(np.int64)
    if k is None:
        return int((sizes * sizes).sum())
    # Whole classes are suppressed: labels, hence all-'*' rows, are constant in a class.
    suppressed = (sizes < k) | p.suppressed_rows[p.class_first_row]
    return int(np.where(suppressed, p.n * sizes, sizes * sizes).sum())


def discernibility(instance: Instance, release: Release, k: int | None = None) -> int:
    """The discernibility metric C_DM [1]_ of the released equivalence classes.

    Parameters
    ----------
    instance, release
        As in :func:`equivalence_classes`.
    k : int, optional
        Without `k`, C_DM = Σ_E |E|² (Bayardo–Agrawal, as Mondrian [2]_ reports it).
        With `k`, each row of a class smaller than k, and each row whose every
        generalizable quasi-identifier is ``*``, counts as suppressed and costs n, i.e.
        C_DM = Σ_{E: |E| ≥ k} |E|² + n · #suppressed rows (ARX's
        ``MetricSDNMDiscernability``; baselines spec §1.4).

    Returns
    -------
    int

    References
    ----------
    .. [1] R. J. Bayardo, R. Agrawal. Data privacy through optimal k-anonymization.
       ICDE 2005.
    .. [2] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
       k-anonymity. ICDE 2006.

    Examples
    --------
    The 9-row table of baselines spec §2.6 with Mondrian's classes {1,2,3,4} (sizes 2, 2,
    2, 3) has C_DM = 4 + 4 + 4 + 9 = 21; see the module docstring for a full example.
    """
    k = _check_k(k, "discernibility")
    return _discernibility(_prepare(instance, release, "discernibility"), k)


def _average_class_size(p: _Prepared, k: int | None) -> Fraction:
    value = Fraction(p.n, p.n_classes)
    return value if k is None else value / k


def average_class_size(instance: Instance, release: Release, k: int | None = None) -> Fraction:
    """The normalized average equivalence class size C_AVG [1]_.

    Parameters
    ----------
    instance, release
        As in :func:`equivalence_classes`.
    k : int, optional
        C_AVG = (n / #classes) / k, whose optimum is 1; without `k`, n / #classes (ARX's
        "AECS"; the all-``*`` rows form one class of the released table, as in ARX).

    Returns
    -------
    Fraction
        Exact.

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
       k-anonymity. ICDE 2006.
    """
    k = _check_k(k, "average_class_size")
    return _average_class_size(_prepare(instance, release, "average_class_size"), k)


# ---------------------------------------------------------------------- LM and NCP
def _per_attribute(p: _Prepared, measure: str, numeric_loss: str, exact: bool) -> dict:
    """Σ over rows of the per-cell value, per quasi-identifier (Fraction or float)."""
    out = {}
    for name, col in p.qi.items():
        values = col.cell_values(measure, numeric_loss, exact)
        rows = col.label_rows
        if exact:
            out[name] = sum((int(r) * v for r, v in zip(rows, values) if r), Fraction(0))
        else:
            out[name] = float(np.dot(rows, values))
    return out


def loss_metric(
    instance: Instance, release: Release, *, numeric_loss: str = "width", exact: bool = False
) -> dict:
    """Iyengar's loss metric LM [1]_, as used by Sabre and Ruggieri [2]_.

    Per cell of row i and quasi-identifier j:

    - categorical / ordered: (M_ij − 1)/(M_j − 1), with M_j the number of distinct
      values of j in the original data and M_ij those covered by the released label;
    - numeric: (hi − lo)/(max − min), the label's range clipped to the data's
      [min, max] (``*`` gives 1); with ``numeric_loss="values"`` the categorical form
      counting the distinct data values covered (Ruggieri's integer ranks);
    - 0 when the attribute has a single value in the data.

    Parameters
    ----------
    instance, release
        As in :func:`equivalence_classes`.
    numeric_loss : {"width", "values"}, default="width"
    exact : bool, default=False
        Return :class:`~fractions.Fraction` values instead of floats.

    Returns
    -------
    dict
        ``LM_sum`` = (1/n) Σ_i Σ_j loss_ij (Ruggieri's LM = Σ_Q supp(Q)·L(Q), which can
        exceed 1); ``LM_avg`` = LM_sum / #quasi-identifiers, the average cell loss in
        [0, 1] (ARX's normalized "Loss"; tcloseness spec §3.3, P13); ``per_attribute``
        maps each quasi-identifier to its average cell loss.

    Notes
    -----
    O(n + Σ_j L_j·|A_j|) for L_j distinct labels. The protected attribute counts as a
    quasi-identifier and, released unchanged, contributes 0.

    References
    ----------
    .. [1] V. S. Iyengar. Transforming data to satisfy privacy constraints. KDD 2002.
    .. [2] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014, §6.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairanon.instances import Attribute, Instance, Schema
    >>> from fairanon.release import Release, generalize_partition
    >>> inst = Instance(pd.DataFrame({"age": [20, 30, 40]}),
    ...                 Schema([Attribute("age", kind="numeric")]))
    >>> rel = Release(generalize_partition(inst, [0, 0, 1]), groups=[0, 0, 1])
    >>> loss_metric(inst, rel, exact=True)["LM_sum"]  # (10/20 + 10/20 + 0) / 3
    Fraction(1, 3)
    """
    check_option(numeric_loss, "numeric_loss", "loss_metric", NUMERIC_LOSSES)
    p = _prepare(instance, release, "loss_metric")
    return _loss_metric(p, numeric_loss, exact)


def _loss_metric(p: _Prepared, numeric_loss: str = "width", exact: bool = False) -> dict:
    totals = _per_attribute(p, "lm", numeric_loss, exact)
    d = len(totals)
    n = Fraction(p.n) if exact else float(p.n)
    lm_sum = sum(totals.values()) / n
    return {
        "LM_sum": lm_sum,
        "LM_avg": lm_sum / d,
        "per_attribute": {name: t / n for name, t in totals.items()},
    }


def ncp(instance: Instance, release: Release, *, exact: bool = False) -> dict:
    """Normalized certainty penalty NCP [1]_ and global certainty penalty GCP [2]_.

    Per cell (baselines spec §1.2): categorical, leaves(u)/|A| for the released node u,
    counted over the active domain, and 0 when u covers a single value; ordered,
    (max rank − min rank)/(m − 1) of the covered values; numeric, the clipped range
    width over the data range; ``*`` gives 1 and an attribute with one value 0.

    Parameters
    ----------
    instance, release
        As in :func:`equivalence_classes`.
    exact : bool, default=False
        Return :class:`~fractions.Fraction` values instead of floats.

    Returns
    -------
    dict
        ``GCP`` = Σ_E |E|·NCP(E) / (d·n) in [0, 1]; ``NCP`` = Σ_E |E|·NCP(E), Xu's total
        (= GCP·d·n); ``per_attribute`` maps each quasi-identifier to its average cell
        NCP (so ``GCP`` is their mean). Weights are 1.

    Notes
    -----
    Uses Xu's categorical term; Gong's implementations (leaf count 1 for a single-leaf
    inner node) differ only on unary hierarchy chains. Numeric widths are those of the
    released labels, which for tight ``[min-max]`` labels are Gong's tight boxes.

    References
    ----------
    .. [1] J. Xu, W. Wang, J. Pei, X. Wang, B. Shi, A. W.-C. Fu. Utility-based
       anonymization using local recoding. KDD 2006.
    .. [2] G. Ghinita, P. Karras, P. Kalnis, N. Mamoulis. Fast data anonymization with
       low information loss. VLDB 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairanon.instances import Attribute, Instance, Schema
    >>> from fairanon.release import Release, generalize_partition
    >>> inst = Instance(pd.DataFrame({"sex": ["f", "m", "m"]}), Schema([Attribute("sex")]))
    >>> rel = Release(generalize_partition(inst, [0, 0, 1]), groups=[0, 0, 1])
    >>> ncp(inst, rel, exact=True)["GCP"]  # two '*' cells (NCP 1), one leaf (NCP 0)
    Fraction(2, 3)
    """
    return _ncp(_prepare(instance, release, "ncp"), exact)


def _ncp(p: _Prepared, exact: bool = False) -> dict:
    totals = _per_attribute(p, "ncp", "width", exact)
    d = len(totals)
    n = Fraction(p.n) if exact else float(p.n)
    total = sum(totals.values())
    return {
        "GCP": total / (d * n),
        "NCP": total,
        "per_attribute": {name: t / n for name, t in totals.items()},
    }


# ---------------------------------------------------------------------- MRE
@dataclass(frozen=True)
class CountQueries:
    """A seeded set of range count queries and their answers on the original data.

    Attributes
    ----------
    attributes : tuple of str
        The predicate attributes: the quasi-identifiers, then the target (decision or
        sensitive attribute) if any.
    target : str or None
        The attribute every query constrains (the decision attribute, else the first
        sensitive attribute, else None).
    chosen : numpy.ndarray of bool, shape (q, len(attributes))
        Which attributes each query constrains.
    lo, hi : numpy.ndarray of int, shape (q, len(attributes))
        The closed range of active-domain ranks of each predicate (the whole active
        domain for unconstrained attributes).
    prec : numpy.ndarray of int, shape (q,)
        The exact counts on the original table (all > 0).
    seed : int or None
    """

    attributes: tuple[str, ...]
    target: str | None
    chosen: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    prec: np.ndarray
    seed: object = None

    def __len__(self) -> int:
        return len(self.prec)


def _query_target(instance: Instance) -> str | None:
    schema = instance.schema
    if schema.decision is not None:
        return schema.decision
    return schema.sensitive[0] if schema.sensitive else None


class _Units:
    """Rows collapsed to their distinct combinations of per-attribute codes, with weights
    (rows per combination); projections onto attribute subsets are cached."""

    def __init__(self, codes: list[np.ndarray]):
        ids, n_units = _combine(codes)
        first = _first_rows(ids)
        self.codes = [c[first] for c in codes]
        self.weights = np.bincount(ids, minlength=n_units).astype(float)
        self._cache: dict[tuple[int, ...], tuple[list[np.ndarray], np.ndarray]] = {}

    def project(self, attrs: tuple[int, ...]) -> tuple[list[np.ndarray], np.ndarray]:
        if attrs not in self._cache:
            sub = [self.codes[j] for j in attrs]
            ids, n_units = _combine(sub)
            first = _first_rows(ids)
            weights = np.bincount(ids, weights=self.weights, minlength=n_units)
            self._cache[attrs] = ([c[first] for c in sub], weights)
        return self._cache[attrs]


def _evaluate(
    factor_fns, units: _Units, chosen: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Σ_units weight · Π_{chosen attributes} factor, for every query.

    Queries are grouped by the attributes they constrain and evaluated in batches over
    the units projected onto those attributes.
    """
    out = np.empty(len(chosen), dtype=float)
    if not len(chosen):
        return out
    patterns, first = np.unique(np.packbits(chosen, axis=1), axis=0, return_inverse=True)
    first = first.reshape(-1)
    for pattern in range(len(patterns)):
        queries = np.flatnonzero(first == pattern)
        attrs = tuple(int(j) for j in np.flatnonzero(chosen[queries[0]]))
        codes, weights = units.project(attrs)
        batch = int(max(1, min(1024, 4_000_000 // max(len(weights), 1))))
        for start in range(0, len(queries), batch):
            qs = queries[start : start + batch]
            prod = None
            for j, c in zip(attrs, codes):
                f = factor_fns[j](lo[qs, j], hi[qs, j], c)  # (units × queries)
                if prod is None:
                    prod = f
                else:
                    prod *= f  # for boolean factors (the original table), an AND
            if prod is None:
                out[qs] = weights.sum()
            else:
                out[qs] = weights @ (prod if prod.dtype != bool else prod.astype(float))
    return out


def _released_factor(col: _Column):
    """|label ∩ [a, b]| / |label| over the active domain, per unit (rows) and query."""
    size = col.count.astype(float)
    inv = np.divide(1.0, size, out=np.zeros_like(size), where=size > 0)
    if col.contiguous:
        first, last = col.first, col.last

        def per_label(a, b):
            overlap = (
                np.minimum(last[:, None], b[None, :]) - np.maximum(first[:, None], a[None, :]) + 1
            )
            return np.maximum(overlap, 0) * inv[:, None]

    else:
        prefix = col.prefix

        def per_label(a, b):
            return (prefix[:, b + 1] - prefix[:, a]) * inv[:, None]

    def fn(a, b, codes):
        f = per_label(a, b)  # (labels × queries), gathered by row below
        return np.take(f, codes, axis=0) if len(a) <= 64 else f[codes]

    return fn


def _original_factor(a: np.ndarray, b: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Whether each unit's rank lies in each query's range [a, b] (units × queries).

    Built as a (ranks × queries) table then gathered by row: m ≤ #units, so the table
    is never larger than the result."""
    m = int(ranks.max()) + 1 if len(ranks) else 0
    r = np.arange(m)[:, None]
    table = (r >= a[None, :]) & (r <= b[None, :])
    return np.take(table, ranks, axis=0) if len(a) <= 64 else table[ranks]


def _active_ranks(instance: Instance, name: str) -> tuple[np.ndarray, int]:
    """Per instance row: the rank of its value in the attribute's active domain; and m."""
    codes = instance.codes(name)
    if instance.schema[name].kind == "numeric":
        values = _active_values(instance, name)
        return np.searchsorted(values, codes).astype(np.int64), len(values)
    active = _active_mask(instance, name)
    return (np.cumsum(active) - 1)[codes].astype(np.int64), int(active.sum())


def count_queries(
    instance: Instance, *, n_queries: int = 10_000, seed=0, max_attributes: int = 5
) -> CountQueries:
    """Draw the random range count queries of Ruggieri's MRE [1]_ and answer them.

    Each query constrains n ~ Uniform{1..min(max_attributes, d)} distinct
    quasi-identifiers (PND or PD attributes) and, always, the decision attribute (else
    the first sensitive attribute, if any). Each range is given by two ranks drawn
    uniformly and independently over the attribute's active domain, sorted. A query
    with count 0 on the original table is redrawn (tcloseness spec §3.3, P14).

    Parameters
    ----------
    instance : Instance
    n_queries : int, default=10000
        Accepted queries to return.
    seed : None, int or numpy.random.Generator, default=0
    max_attributes : int, default=5

    Returns
    -------
    CountQueries
        Depends only on the instance and the seed, so one set serves every release.

    Raises
    ------
    FairanonError
        If almost every drawn query has count 0 (cannot happen on real data).

    References
    ----------
    .. [1] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014, §6 (following Sabre).
    """
    n_queries = check_int(n_queries, "n_queries", "count_queries", low=1)
    max_attributes = check_int(max_attributes, "max_attributes", "count_queries", low=1)
    rng = check_random_state(seed)
    target = _query_target(instance)
    names = list(instance.schema.qi) + ([target] if target else [])
    ranks_m = [_active_ranks(instance, name) for name in names]
    d = len(instance.schema.qi)
    n_attr = len(names)
    m = np.array([mj for _, mj in ranks_m], dtype=np.int64)
    units = _Units([r for r, _ in ranks_m])
    fns = [_original_factor] * n_attr
    a_max = min(max_attributes, d)

    # Queries are drawn in chunks of 1024, so a smaller set is a prefix of a larger one
    # with the same seed; several chunks are answered at once.
    chunk = 1024
    kept_chosen, kept_lo, kept_hi, kept_prec = [], [], [], []
    accepted = drawn = 0
    while accepted < n_queries:
        if drawn > 1000 * n_queries + 1_000_000:
            raise FairanonError(
                f"count_queries drew {drawn} queries on instance {instance.name!r} and only "
                f"{accepted} had a non-zero count."
            )
        n_chunks = max(1, -(-(n_queries - accepted) * 11 // 10 // chunk))
        parts = []
        for _ in range(n_chunks):
            n_pred = rng.integers(1, a_max + 1, size=chunk)
            order = rng.random((chunk, d)).argsort(axis=1).argsort(axis=1)
            chosen = np.ones((chunk, n_attr), dtype=bool)
            chosen[:, :d] = order < n_pred[:, None]
            ranks = rng.integers(0, m[None, None, :], size=(2, chunk, n_attr))
            lo = np.where(chosen, ranks.min(axis=0), 0)
            hi = np.where(chosen, ranks.max(axis=0), m[None, :] - 1)
            parts.append((chosen, lo, hi))
        chosen, lo, hi = (np.concatenate(x) for x in zip(*parts))
        prec = np.rint(_evaluate(fns, units, chosen, lo, hi)).astype(np.int64)
        ok = prec > 0
        kept_chosen.append(chosen[ok])
        kept_lo.append(lo[ok])
        kept_hi.append(hi[ok])
        kept_prec.append(prec[ok])
        accepted += int(ok.sum())
        drawn += len(ok)
    seed_repr = seed if seed is None or isinstance(seed, int) else repr(seed)
    return CountQueries(
        attributes=tuple(names),
        target=target,
        chosen=np.concatenate(kept_chosen)[:n_queries],
        lo=np.concatenate(kept_lo)[:n_queries],
        hi=np.concatenate(kept_hi)[:n_queries],
        prec=np.concatenate(kept_prec)[:n_queries],
        seed=seed_repr,
    )


def _estimates(p: _Prepared, queries: CountQueries) -> np.ndarray:
    instance = p.instance
    target = _query_target(instance)
    expected = tuple(instance.schema.qi) + ((target,) if target else ())
    if queries.attributes != expected:
        raise InvalidParameterError(
            f"The 'queries' parameter of median_relative_error was drawn for the attributes "
            f"{list(queries.attributes)}, but instance {instance.name!r} has {list(expected)}."
        )
    cols = []
    for name in queries.attributes:
        if name in p.qi or name in p.release.table.columns:
            cols.append(p.column(name))
        else:  # a target left out of the release: read its original values
            series = p.instance.table[name]
            cols.append(
                _Column(p.instance, name, series if p.pos is None else series.iloc[p.pos], p.pos)
            )
    fns = [_released_factor(c) for c in cols]
    return _evaluate(fns, _Units([c.codes for c in cols]), queries.chosen, queries.lo, queries.hi)


def median_relative_error(
    instance: Instance,
    release: Release,
    *,
    n_queries: int = 10_000,
    seed=0,
    max_attributes: int = 5,
    queries: CountQueries | None = None,
) -> float:
    """Median relative error of random range count queries (Ruggieri [1]_, after Sabre [2]_).

    For each query of :func:`count_queries`, prec is the count on the original table
    and est = Σ_{released rows} Π_{predicates} |g ∩ q| / |g|, where g is the row's
    released label and q the query range, both as sets of active-domain values
    (uniformity within a generalized label; a numeric label counts the distinct data
    values it covers). MRE = median of |est − prec| / prec.

    Parameters
    ----------
    instance, release
        As in :func:`equivalence_classes`.
    n_queries, seed, max_attributes
        As in :func:`count_queries`; ignored when `queries` is given.
    queries : CountQueries, optional
        A query set drawn once and reused for every release (the paper's protocol).

    Returns
    -------
    float

    Notes
    -----
    Vectorized over batches of queries: O(q · (U·a + Σ_j L_j)) for q queries, U
    distinct (class, target label) combinations, a predicates per query and L_j
    labels of attribute j. The target's released column is read when present (it is
    released unchanged), else its original values.

    References
    ----------
    .. [1] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014, §6.
    .. [2] J. Cao, P. Karras, P. Kalnis, K.-L. Tan. SABRE: a Sensitive Attribute
       Bucketization and REdistribution framework for t-closeness. VLDB J. 20(1), 2011.
    """
    p = _prepare(instance, release, "median_relative_error")
    if queries is None:
        queries = count_queries(
            instance, n_queries=n_queries, seed=seed, max_attributes=max_attributes
        )
    elif not isinstance(queries, CountQueries):
        raise InvalidParameterError(
            "The 'queries' parameter of median_relative_error must be a CountQueries or None. "
            f"Got {type(queries).__name__} instead."
        )
    est = _estimates(p, queries)
    prec = queries.prec.astype(float)
    return float(np.median(np.abs(est - prec) / prec))


# ---------------------------------------------------------------------- property vectors
def property_vectors(
    instance: Instance,
    release: Release,
    *,
    sensitive: str | None = None,
    numeric_loss: str = "width",
    exact: bool = False,
) -> pd.DataFrame:
    """Per-tuple property vectors of Dewri et al. [1]_ (comparison spec §1.2).

    Parameters
    ----------
    instance, release
        As in :func:`equivalence_classes`.
    sensitive : str, optional
        The attribute of the sensitive-based columns; default: the first sensitive
        attribute, else the decision attribute. Its original values are used. Without
        one, those columns are left out.
    numeric_loss : {"width", "values"}, default="width"
        Numeric cells of ``loss``: Iyengar's clipped width, or the categorical form
        counting the distinct data values covered (the spec's PV-loss).
    exact : bool, default=False
        Fractions (object columns) instead of floats for risk, adisc, loss,
        util_paper and tclose.

    Returns
    -------
    pandas.DataFrame
        Indexed by record id in the instance's row order, with columns

        - ``size``: |E(i)|, the class size (PV-size, higher is better);
        - ``risk``: 1/|E(i)|, prosecutor-model re-identification risk (PV-reid);
        - ``sfreq``: rows of E(i) sharing i's sensitive value (PV-sfreq);
        - ``ldist``: distinct sensitive values in E(i) (PV-ldist);
        - ``adisc``: sfreq/size, attribute-disclosure probability (PV-adisc);
        - ``loss``: Σ_j of the per-cell Iyengar loss of :func:`loss_metric` (PV-loss);
        - ``util_paper``: Σ_j (1 − M_ij/M_j), the paper's reconstructed utility
          (PV-util; numeric M_ij counts the data values covered);
        - ``tclose``: ½ Σ_v |P_E(v) − Q(v)|, the equal-distance EMD between the class's
          and the table's sensitive distributions (PV-tclose).

    Notes
    -----
    O(n) plus O(#classes · d) Fraction operations when `exact`. Suppressed rows form
    one class of the released table (policy "as_class", comparison spec P-14).

    References
    ----------
    .. [1] R. Dewri, I. Ray, I. Ray, D. Whitley. On the comparison of microdata
       disclosure control algorithms. EDBT 2009.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairanon.instances import Attribute, Instance, Schema
    >>> from fairanon.release import Release, generalize_partition
    >>> df = pd.DataFrame({"age": [20, 30, 40], "d": ["a", "b", "a"]})
    >>> inst = Instance(df, Schema([Attribute("age", kind="numeric"),
    ...                             Attribute("d", role="sensitive")]))
    >>> rel = Release(generalize_partition(inst, [0, 0, 1]), groups=[0, 0, 1])
    >>> pv = property_vectors(inst, rel, exact=True)
    >>> pv["size"].tolist(), pv["sfreq"].tolist(), pv["ldist"].tolist()
    ([2, 2, 1], [1, 1, 1], [2, 2, 1])
    >>> [str(v) for v in pv["tclose"]]
    ['1/6', '1/6', '1/3']
    """
    check_option(numeric_loss, "numeric_loss", "property_vectors", NUMERIC_LOSSES)
    p = _prepare(instance, release, "property_vectors")
    if sensitive is None:
        targets = instance.schema.default_targets()
        sensitive = targets[0] if targets else None
    else:
        check_option(sensitive, "sensitive", "property_vectors", set(instance.table.columns))
    return _property_vectors(p, sensitive, numeric_loss, exact)


def _class_sum(p: _Prepared, measure: str, numeric_loss: str, exact: bool):
    """Per class: Σ_j of the per-cell value (labels are constant within a class)."""
    rep = p.class_first_row
    if exact:
        total = [Fraction(0)] * p.n_classes
        for col in p.qi.values():
            values = col.cell_values(measure, numeric_loss, True)
            labels = col.codes[rep]
            total = [t + values[l] for t, l in zip(total, labels)]
        return np.array(total, dtype=object)
    total = np.zeros(p.n_classes)
    for col in p.qi.values():
        total += col.cell_values(measure, numeric_loss, False)[col.codes[rep]]
    return total


def _property_vectors(
    p: _Prepared, sensitive: str | None, numeric_loss: str, exact: bool
) -> pd.DataFrame:
    n = p.n
    ids = p.class_ids
    sizes = p.class_sizes.astype(np.int64)
    size = sizes[ids]
    out: dict[str, np.ndarray] = {"size": size}
    if exact:
        risk_c = np.array([Fraction(1, int(s)) for s in sizes], dtype=object)
        out["risk"] = risk_c[ids]
    else:
        out["risk"] = 1.0 / size
    if sensitive is not None:
        raw = p.instance.codes(sensitive)
        s_codes, s_uniq = pd.factorize(raw if p.pos is None else raw[p.pos])
        m_s = max(len(s_uniq), 1)
        s_codes = s_codes.astype(np.int64, copy=False)
        pair, pair_uniq = pd.factorize(ids * m_s + s_codes)
        pair_count = np.bincount(pair).astype(np.int64)
        pair_class = (pair_uniq // m_s).astype(np.int64)
        pair_value = (pair_uniq % m_s).astype(np.int64)
        out["sfreq"] = pair_count[pair]
        out["ldist"] = np.bincount(pair_class, minlength=p.n_classes)[ids]
        q = np.bincount(s_codes, minlength=m_s).astype(np.int64)
        # |E|·n·D = ½ (|E|·n + Σ_{v ∈ E} (|c_v·n − n_v·|E|| − n_v·|E|))
        e = sizes[pair_class]
        term = np.abs(pair_count * n - q[pair_value] * e) - q[pair_value] * e
        if exact:
            adisc_p = np.array(
                [Fraction(int(c), int(s)) for c, s in zip(pair_count, e)], dtype=object
            )
            out["adisc"] = adisc_p[pair]
            num = np.zeros(p.n_classes, dtype=np.int64)
            np.add.at(num, pair_class, term)
            num += sizes * n
            tclose_c = np.array(
                [Fraction(int(a), 2 * int(s) * n) for a, s in zip(num, sizes)], dtype=object
            )
        else:
            out["adisc"] = out["sfreq"] / size
            num = np.bincount(pair_class, weights=term.astype(float), minlength=p.n_classes)
            tclose_c = (num + sizes * float(n)) / (2.0 * sizes * n)
    out["loss"] = _class_sum(p, "lm", numeric_loss, exact)[ids]
    out["util_paper"] = _class_sum(p, "util", numeric_loss, exact)[ids]
    if sensitive is not None:
        out["tclose"] = tclose_c[ids]
    return pd.DataFrame(
        {name: p.to_instance_order(values) for name, values in out.items()},
        index=p.instance.row_ids,
        copy=False,
    )


# ---------------------------------------------------------------------- summary
def summary(
    instance: Instance, release: Release, *, k: int | None = None, mre: bool = False
) -> dict:
    """The scalar metrics of a release in one pass (a JSON-ready report).

    Parameters
    ----------
    instance, release
        As in :func:`equivalence_classes`.
    k : int, optional
        Passed to :func:`discernibility` and :func:`average_class_size`.
    mre : bool, default=False
        Also compute :func:`median_relative_error` with its defaults (slower).

    Returns
    -------
    dict
        ``n_rows``, ``n_classes``, ``min_class_size``, ``avg_class_size`` (n/#classes),
        ``suppressed_cells``, ``generalized_cells``, ``discernibility``, ``C_avg``,
        ``LM_sum``, ``LM_avg``, ``GCP`` and, if asked, ``MRE``. Counts are ints, the rest
        floats.
    """
    k = _check_k(k, "summary")
    p = _prepare(instance, release, "summary")
    lm = _loss_metric(p)
    out = {
        "n_rows": p.n,
        "n_classes": p.n_classes,
        "min_class_size": int(p.class_sizes.min()),
        "avg_class_size": p.n / p.n_classes,
        "suppressed_cells": _suppressed_cells(p),
        "generalized_cells": _generalized_cells(p),
        "discernibility": _discernibility(p, k),
        "C_avg": float(_average_class_size(p, k)),
        "LM_sum": lm["LM_sum"],
        "LM_avg": lm["LM_avg"],
        "GCP": _ncp(p)["GCP"],
    }
    if mre:
        queries = count_queries(instance)
        out["MRE"] = float(np.median(np.abs(_estimates(p, queries) - queries.prec) / queries.prec))
    return out
