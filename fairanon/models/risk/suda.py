"""Minimal sample uniques (the output of SUDA2) up to a maximum size, with SUDA scores.

A *sample unique* on a set S of quasi-identifiers is a record whose values on S no
other record shares; it is a *minimal* sample unique (MSU) on S when it is unique on S
and on no proper subset of S (M. J. Elliot, A. M. Manning, R. W. Ford. A computational
algorithm for handling the special uniques problem. International Journal of
Uncertainty, Fuzziness and Knowledge-Based Systems 10(5):493-509, 2002). SUDA2 (A. M.
Manning, D. J. Haglin, J. A. Keane. A recursive search algorithm for statistical
disclosure assessment. Data Mining and Knowledge Discovery 16:165-196, 2008) finds all
MSUs of size at most m.

fairanon computes the same set by a level-wise search over attribute subsets rather
than SUDA2's recursion over item lists: for each subset S of size k ≤ m, one group-by
(refining the groups of S minus its last attribute by that attribute) marks the records
unique on S, and a record is an MSU on S when it is unique on S and on none of the k
subsets of size k−1 (uniqueness is inherited by supersets, so those k subsets cover
every proper subset). That is Σ_{k≤m} C(M, k) group-bys of n rows, each O(n), vectorized.

Scores (Elliot et al., SUDA; sdcMicro's ``suda2`` with ``original_scores=TRUE``): an
MSU of size k among M attributes, searched to size m, scores

    s(k) = Π_{i=k}^{min(m, M−1)} (M − i),

so (M − k)! when every size is searched; a record's SUDA score is the sum over its MSUs,
and an attribute's contribution is the share of the total score carried by the MSUs
that contain it (sdcMicro's ``attribute_contributions``; the shares sum to more than
100 % since an MSU of size k counts for each of its k attributes).

DIS-SUDA (:func:`dis_suda`) turns the scores into the probability that a match on a
record is correct, given the sampling fraction π of the table. The data intrusion
simulation (DIS) of Skinner and Elliot (C. J. Skinner, M. J. Elliot. A measure of
disclosure risk for microdata. J. R. Statist. Soc. B 64(4):855-867, 2002) estimates the
probability that a sample unique matched to a population record is a correct match,

    θ = U π / (U π + P (1 − π)),

U the records unique on the key variables and P the records in classes of exactly two.
DIS-SUDA (M. J. Elliot, A. Manning, K. Mayes, J. Gurd, M. Bane. SUDA: a program for
detecting special uniques. Joint UNECE/Eurostat work session on statistical data
confidentiality, Geneva, 2005) spreads the expected false matches of the uniques,
U/θ − U = P (1 − π)/π, over the records with an MSU in inverse proportion to s^Q,
s the record's SUDA score and Q = 1 + (8 − M)/20, and reads a record's risk as one
correct match among it and its false ones:

    dis_i = 1 / (1 + (U/θ − U) / (s_i^Q · Σ_j s_j^(−Q)))    (0 without an MSU),

as sdcMicro's ``suda2`` computes its ``disScore`` (in double precision here; sdcMicro
takes θ in single precision).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations
from math import comb, fsum

import numpy as np
import pandas as pd

from ..._validation import check_fraction, check_int
from ...exceptions import InvalidParameterError
from ..released import group_ids, id_type
from .classes import RiskClasses

__all__ = ["DisSuda", "Suda", "dis_suda", "minimal_sample_uniques", "suda", "suda_memory", "suda_weight"]


def suda_weight(k: int, n_attributes: int, max_size: int) -> int:
    """s(k) = Π_{i=k}^{min(m, M−1)} (M − i), the score of an MSU of size k.

    >>> [suda_weight(k, 3, 3) for k in (1, 2, 3)]
    [2, 1, 1]
    """
    top = min(max_size, n_attributes - 1)
    out = 1
    for i in range(k, top + 1):
        out *= n_attributes - i
    return out


def minimal_sample_uniques(codes: list[tuple[np.ndarray, int]], max_size: int):
    """Every MSU of size ≤ `max_size` of the table whose columns are `codes`
    ((codes per row, number of codes) per attribute).

    Yields
    ------
    (subset, rows) : (tuple of int, numpy.ndarray)
        The attribute positions of S (ascending) and the rows that are MSUs on S.
    """
    M = len(codes)
    previous: dict[tuple, tuple[np.ndarray, int, np.ndarray]] = {}
    for k in range(1, min(max_size, M) + 1):
        current = {}
        for subset in combinations(range(M), k):
            if k == 1:
                ids, n_ids = codes[subset[0]]
            else:
                parent_ids, parent_n, _ = previous[subset[:-1]]
                ids, n_ids = group_ids([(parent_ids, parent_n), codes[subset[-1]]])
            counts = np.bincount(ids, minlength=n_ids)
            unique = counts[ids] == 1
            minimal = unique.copy()
            if k > 1:
                for drop in range(k):
                    minimal &= ~previous[subset[:drop] + subset[drop + 1:]][2]
            # Subsets of size k feed size k + 1 only while that level is searched.
            if k < min(max_size, M):
                current[subset] = (ids, n_ids, unique)
            rows = np.flatnonzero(minimal)
            if len(rows):
                yield subset, rows
        previous = current


def suda_memory(n_records: int, code_bytes, max_size: int) -> int:
    """Bytes :func:`suda` holds at its peak for `n_records` records whose key variables
    take `code_bytes` bytes a record each (1, 2 or 4: the codes' integer types), searched
    to `max_size`: the codes, the scores (8 bytes a record) and the MSU marks (1); the
    group ids and uniqueness marks (id bytes + 1) of the subsets kept for the next level
    — level k-1 while level k < m is built beside it —, and the working arrays of the
    subset being grouped: its int64 key (8 bytes a record) and the dense renumbering of
    :func:`~fairanon.models.released.group_ids` (5 bytes for each of up to 4 n + 10⁶ keys),
    about 32 bytes a record plus 5 MB.

    >>> suda_memory(1000, [1, 1, 1], 3)  # (3 + 9 + 5 (3 + 3) + 32) bytes a record + 5 MB
    5074000
    """
    m = min(int(max_size), len(code_bytes))
    ids = np.dtype(id_type(n_records)).itemsize + 1
    kept = max((comb(len(code_bytes), k - 1) if k > 1 else 0) + (comb(len(code_bytes), k) if k < m else 0)
               for k in range(1, m + 1)) if m else 0
    return int(n_records) * (int(sum(code_bytes)) + 9 + ids * kept + 32) + 5_000_000


@dataclass(frozen=True)
class DisSuda:
    """DIS-SUDA scores (see the module docstring).

    Attributes
    ----------
    sampling_fraction : Fraction
        π.
    uniques, pair_records : int
        U and P: records unique on the key variables, records in classes of two.
    probability : float or None
        θ, the DIS probability that a matched unique is a correct match (None without a
        unique).
    scores : pandas.Series
        dis_i of every record, indexed by record id.
    """

    sampling_fraction: Fraction
    uniques: int
    pair_records: int
    probability: float | None
    scores: pd.Series

    def to_dict(self) -> dict:
        scores = self.scores.to_numpy()
        return {
            "sampling_fraction": float(self.sampling_fraction),
            "uniques": self.uniques,
            "pair_records": self.pair_records,
            "probability": self.probability,
            "highest": float(scores.max()) if len(scores) else 0.0,
            "expected_correct_matches": fsum(scores),
        }


def dis_suda(scores, sizes: np.ndarray, n_attributes: int, sampling_fraction, *, index=None) -> DisSuda:
    """DIS-SUDA from SUDA scores, the size of each record's class on the key variables
    and the sampling fraction π (see the module docstring): U, P, θ and each record's
    score, indexed by `index` (default: the index of `scores` when it is a Series, else
    0..n-1).

    >>> d = dis_suda(np.array([1.0, 1.0, 0, 0]), np.array([1, 1, 2, 2]), 8, "1/2")
    >>> d.probability, d.scores.tolist()  # U = 2, P = 2: θ = 1/2; U/θ - U = 2 false matches, 1 each
    (0.5, [0.5, 0.5, 0.0, 0.0])
    """
    pi = check_fraction(sampling_fraction, "sampling_fraction", "dis_suda", low=0, high=1, low_open=True)
    if index is None and isinstance(scores, pd.Series):
        index = scores.index
    return _dis_suda(np.asarray(scores, dtype=np.float64), np.asarray(sizes), n_attributes, pi, index)


def _dis_suda(scores: np.ndarray, sizes: np.ndarray, n_attributes: int, pi: Fraction, index) -> DisSuda:
    """:func:`dis_suda` for a checked π."""
    u = int((sizes == 1).sum())
    p = int((sizes == 2).sum())
    out = np.zeros(len(scores), dtype=np.float64)
    theta = None
    if u:
        theta = float(Fraction(u) * pi / (Fraction(u) * pi + p * (1 - pi)))
        # U/θ − U = P (1 − π) / π, exactly
        false = float(p * (1 - pi) / pi)
        q = 1 + (8 - n_attributes) / 20
        scored = scores > 0
        powered = scores[scored] ** q
        # Summed exactly rounded (fsum): the scores do not depend on the rows' order.
        out[scored] = 1.0 / (1.0 + false / (powered * fsum(1.0 / powered)))
    return DisSuda(sampling_fraction=pi, uniques=u, pair_records=p, probability=theta,
                   scores=pd.Series(out, index=index, name="dis_suda_score"))


@dataclass(frozen=True)
class Suda:
    """MSUs up to a maximum size, SUDA scores and each attribute's contribution.

    Attributes
    ----------
    attributes : tuple of str
    max_size : int
        m, the largest MSU size searched.
    n_msus : int
        MSUs found (record, attribute set) pairs.
    by_size : dict
        MSUs per size k.
    records_with_msu : int
        Records with at least one MSU (the special-uniques candidates).
    scores : pandas.Series
        The SUDA score of every record (0 without an MSU), indexed by record id.
    contributions : dict
        Per attribute: the share (percent) of the total score carried by MSUs holding it.
    msu_counts : dict
        Per attribute: the MSUs holding it.
    """

    attributes: tuple
    max_size: int
    n_msus: int
    by_size: dict
    records_with_msu: int
    scores: pd.Series
    contributions: dict
    msu_counts: dict
    msus: list | None = field(default=None, repr=False)
    dis: DisSuda | None = None

    def to_dict(self) -> dict:
        scores = self.scores.to_numpy()
        return {
            "attributes": list(self.attributes),
            "max_size": self.max_size,
            "n_msus": self.n_msus,
            "msus_by_size": {str(k): v for k, v in self.by_size.items()},
            "records_with_msu": self.records_with_msu,
            "highest_score": float(scores.max()) if len(scores) else 0.0,
            "average_score": float(scores.mean()) if len(scores) else 0.0,
            "contributions_percent": self.contributions,
            "msus_per_attribute": self.msu_counts,
            "dis": None if self.dis is None else self.dis.to_dict(),
        }


def suda(
    classes: RiskClasses,
    *,
    max_size: int = 3,
    attributes=None,
    keep_msus: bool = False,
    sampling_fraction=None,
) -> Suda:
    """Minimal sample uniques of a regrouped table up to `max_size` attributes.

    Parameters
    ----------
    classes : RiskClasses
        The table (its released quasi-identifier values are the key variables).
    max_size : int, default=3
        m ≥ 1: the largest attribute set searched (at most the number of attributes).
    attributes : sequence of str, optional
        The key variables (default: every quasi-identifier).
    keep_msus : bool, default=False
        Also keep the list of MSUs as (record id, attribute names) pairs.
    sampling_fraction : rational in (0, 1], optional
        π: also compute the DIS-SUDA scores (:func:`dis_suda`).

    Examples
    --------
    sdcMicro's example: a = (2, 1, 1), b = (0, 3, 0), c = (0, 6, 0) has MSUs {a} (record
    1), {b} and {c} (record 2), {a, b} and {a, c} (record 3); contributions 50, 37.5, 37.5.
    """
    max_size = check_int(max_size, "max_size", "suda", low=1)
    pi = None if sampling_fraction is None else check_fraction(
        sampling_fraction, "sampling_fraction", "suda", low=0, high=1, low_open=True)
    names = tuple(classes.qi if attributes is None else attributes)
    unknown = [a for a in names if a not in classes.codes]
    if unknown or not names:
        raise InvalidParameterError(
            f"The 'attributes' parameter of suda must name quasi-identifiers of {list(classes.qi)}. "
            f"Got {list(names)!r} instead."
        )
    codes = [(classes.codes[a][0], len(classes.codes[a][1])) for a in names]
    M = len(names)
    m = min(max_size, M)
    n = classes.n_records
    scores = np.zeros(n, dtype=np.float64)
    has = np.zeros(n, dtype=bool)
    total_by_attr = np.zeros(M, dtype=np.float64)
    count_by_attr = np.zeros(M, dtype=np.int64)
    by_size = {k: 0 for k in range(1, m + 1)}
    kept = [] if keep_msus else None
    index = classes.table.index
    for subset, rows in minimal_sample_uniques(codes, m):
        k = len(subset)
        w = suda_weight(k, M, m)
        scores[rows] += w
        has[rows] = True
        by_size[k] += len(rows)
        for a in subset:
            total_by_attr[a] += w * len(rows)
            count_by_attr[a] += len(rows)
        if kept is not None:
            kept.extend((index[r], tuple(names[a] for a in subset)) for r in rows)
    dis = None
    if pi is not None:
        ids, n_ids = group_ids(codes)
        dis = _dis_suda(scores, np.bincount(ids, minlength=n_ids)[ids], M, pi, index)
    total = fsum(scores)
    contributions = {a: (float(100 * total_by_attr[i] / total) if total else 0.0) for i, a in enumerate(names)}
    return Suda(
        attributes=names,
        max_size=m,
        n_msus=int(sum(by_size.values())),
        by_size=by_size,
        records_with_msu=int(has.sum()),
        scores=pd.Series(scores, index=index, name="suda_score"),
        contributions=contributions,
        msu_counts={a: int(count_by_attr[i]) for i, a in enumerate(names)},
        msus=kept,
        dis=dis,
    )
