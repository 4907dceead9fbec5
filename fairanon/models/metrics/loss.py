"""Information loss of a release, and the scalar metrics in one pass (:func:`summary`).

Suppressed and generalized cells, the discernibility metric C_DM (Bayardo and Agrawal),
the normalized average class size C_AVG (LeFevre et al.), Iyengar's loss metric LM,
Xu's NCP and Ghinita's GCP.

Counts (cells, class sizes, discernibility) are ints and C_AVG a
:class:`fractions.Fraction`; LM and NCP/GCP are floats unless ``exact=True``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..._validation import check_int, check_option
from ...instances.instance import Instance
from ...release import Release
from .classes import NUMERIC_LOSSES, _prepare, _Prepared
from .queries import _estimates, count_queries

__all__ = [
    "average_class_size",
    "discernibility",
    "generalized_cells",
    "loss_metric",
    "ncp",
    "suppressed_cells",
    "summary",
]


def _check_k(k, caller: str) -> int | None:
    return None if k is None else check_int(k, "k", caller, low=1)


# ---------------------------------------------------------------------- cells
def _suppressed_cells(p: _Prepared) -> int:
    return int(sum(int(col.label_rows[col.tells_nothing].sum()) for col in p.qi.values()))


def suppressed_cells(instance: Instance, release: Release) -> int:
    """The number of quasi-identifier cells released as ``*``, or as a generalized label
    that covers every value present in the table (a hierarchy's root, the range from
    the least value to the greatest): the same information as ``*``, so writing one
    instead of ``*`` cannot lower the count (the ``stars`` objective's one rule)."""
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
    ("six less generalizations", Ex. 22).
    """
    return _generalized_cells(_prepare(instance, release, "generalized_cells"))


# ---------------------------------------------------------------------- DM and C_avg
def _discernibility(p: _Prepared, k: int | None) -> int:
    sizes = p.class_sizes.astype(np.int64)
    # Whole classes are suppressed: labels, hence all-'*' rows, are constant in a class.
    suppressed = p.suppressed_rows[p.class_first_row]
    if k is not None:
        suppressed = suppressed | (sizes < k)
    return int(np.where(suppressed, p.n * sizes, sizes * sizes).sum())


def discernibility(instance: Instance, release: Release, k: int | None = None) -> int:
    """The discernibility metric C_DM [1]_ of the released equivalence classes.

    Parameters
    ----------
    instance, release
        As in :func:`~fairanon.models.metrics.equivalence_classes`.
    k : int, optional
        Each row whose every generalizable quasi-identifier is ``*``, or another label
        that tells nothing (docs/metrics.md), counts as suppressed and costs n, the
        table's rows (a suppressed record is indistinguishable from every record [1]_);
        each other row costs the size of its class:
        C_DM = Σ_{E not suppressed} |E|² + n · #suppressed rows. With `k`, the
        rows of a class smaller than k count as suppressed too (ARX's
        ``MetricSDNMDiscernability``; docs/papers.md, B-6). Without suppressed rows,
        C_DM = Σ_E |E|², as Mondrian [2]_ reports it. Every method's "discernibility"
        objective is this value (docs/metrics.md).

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
    The 9-row table of docs/papers.md, B-2, with Mondrian's classes {1,2,3,4} (sizes 2, 2,
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
        As in :func:`~fairanon.models.metrics.equivalence_classes`.
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
            # An exactly rounded sum: the same whatever the order of the labels.
            out[name] = math.fsum(np.asarray(rows, dtype=float) * values)
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
        As in :func:`~fairanon.models.metrics.equivalence_classes`.
    numeric_loss : {"width", "values"}, default="width"
    exact : bool, default=False
        Return :class:`~fractions.Fraction` values instead of floats.

    Returns
    -------
    dict
        ``LM_sum`` = (1/n) Σ_i Σ_j loss_ij (Ruggieri's LM = Σ_Q supp(Q)·L(Q), which can
        exceed 1); ``LM_avg`` = LM_sum / #quasi-identifiers, the average cell loss in
        [0, 1] (ARX's normalized "Loss"; docs/papers.md, B-6); ``per_attribute``
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

    Per cell (docs/papers.md, B-6): categorical, leaves(u)/|A| for the released node u,
    counted over the active domain, and 0 when u covers a single value; ordered,
    (max rank − min rank)/(m − 1) of the covered values; numeric, the clipped range
    width over the data range; ``*`` gives 1 and an attribute with one value 0.

    Parameters
    ----------
    instance, release
        As in :func:`~fairanon.models.metrics.equivalence_classes`.
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


# ---------------------------------------------------------------------- summary
def summary(
    instance: Instance,
    release: Release,
    *,
    k: int | None = None,
    mre: bool = False,
    classes: np.ndarray | None = None,
) -> dict:
    """The scalar metrics of a release in one pass (a JSON-ready report).

    Parameters
    ----------
    instance, release
        As in :func:`~fairanon.models.metrics.equivalence_classes`.
    k : int, optional
        Passed to :func:`discernibility` and :func:`average_class_size`.
    mre : bool, default=False
        Also compute :func:`~fairanon.models.metrics.median_relative_error` with its
        defaults (slower).
    classes : numpy.ndarray, optional
        The release's equivalence classes exactly as :func:`equivalence_classes`
        returns them, when the caller has them already (they are not grouped again).

    Returns
    -------
    dict
        ``n_rows``, ``n_classes``, ``min_class_size``, ``avg_class_size`` (n/#classes),
        ``suppressed_cells``, ``generalized_cells``, ``discernibility``, ``C_avg``,
        ``LM_sum``, ``LM_avg``, ``GCP`` and, if asked, ``MRE``. Counts are ints, the rest
        floats.
    """
    k = _check_k(k, "summary")
    p = _prepare(instance, release, "summary", classes=classes)
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
