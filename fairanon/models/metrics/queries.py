"""The median relative error (MRE) of random range count queries.

The utility measure of Ruggieri (Transactions on Data Privacy 7(2), 2014, §6), after
Sabre (Cao, Karras, Kalnis, Tan, VLDB J. 20(1), 2011).

A seeded query set is drawn and answered on the original table once
(:func:`count_queries`), then estimated from each release assuming uniformity within
its generalized labels (:func:`median_relative_error`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import check_int, check_random_state
from ...exceptions import FairanonError, InvalidParameterError
from ...instances.instance import Instance
from ...release import Release
from .classes import (
    _active_mask,
    _active_values,
    _Column,
    _combine,
    _first_rows,
    _prepare,
    _Prepared,
)

__all__ = ["CountQueries", "count_queries", "median_relative_error"]


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
    with count 0 on the original table is redrawn (docs/papers.md, B-7).

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
        As in :func:`~fairanon.models.metrics.equivalence_classes`.
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
