"""Contexts of possible discrimination: every PND itemset of a table or a release, with
its support, its 4-fold table, Ruggieri's τ and each discrimination measure.

S. Ruggieri. Using t-closeness anonymity to control for non-discrimination. Transactions
on Data Privacy 7(2), 2014: Def. 2 (PND itemsets: at most one item per PND attribute),
Def. 3 (f of an itemset = f of its cover's 4-fold table), Def. 5 (closed itemsets),
Def. 17 (τ) and eq. (1) (the extreme values bd_f(R, s) over closed itemsets of support
at least s, Fig. 8). The items are the released values, each label an atom.

:func:`itemset_groupings` is the enumeration the verifier's α-protection check walks:
one group-by per subset of PND attributes, each refining its parent's grouping.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from ..exceptions import IncompatibleRequirementError, InvalidParameterError, SchemaError
from ..instances.instance import Instance
from ..release import Release
from . import measures as M
from .released import combine_codes, factorize, group_ids

__all__ = ["CONTEXT_MEASURES", "contexts", "extremes", "itemset_groupings"]

#: The seven measures of Ruggieri's Fig. 1 and §4.3, in the order of the columns.
CONTEXT_MEASURES = ("RD", "ED", "RR", "ER", "RC", "EC", "OR")

#: PND attributes enumerated at most (2^d itemset shapes).
_MAX_ATTRIBUTES = 16


def itemset_groupings(
    columns: Sequence[tuple[np.ndarray, np.ndarray]], sizes: np.ndarray, min_support: int = 1
) -> Iterator[tuple[tuple[int, ...], np.ndarray, int]]:
    """Every itemset shape over `columns`, depth first, with the grouping it induces.

    Parameters
    ----------
    columns : sequence of (codes, labels)
        Per PND attribute, the code of each unit (a row or a class) and the labels.
    sizes : array of int
        Records per unit.
    min_support : int, default=1
        A shape none of whose groups holds this many records is skipped with every
        refinement of it (a refinement's groups are no larger).

    Yields
    ------
    (itemset, key, n_key)
        The attribute positions of the shape (increasing; ``()`` the empty itemset), the
        group of each unit (dense ids: each group is one itemset with a non-empty
        cover) and the number of groups.

    >>> cols = [(np.array([0, 0, 1]), np.array(["a", "b"])), (np.array([0, 1, 1]), np.array(["x", "y"]))]
    >>> [(s, k.tolist()) for s, k, _ in itemset_groupings(cols, np.ones(3, dtype=int))]
    [((), [0, 0, 0]), ((0,), [0, 0, 1]), ((0, 1), [0, 1, 2]), ((1,), [0, 1, 1])]
    """
    n = len(sizes)

    def walk(itemset, key, n_key):
        yield itemset, key, n_key
        for j in range(itemset[-1] + 1 if itemset else 0, len(columns)):
            codes, labels = columns[j]
            child, n_child = combine_codes(key, n_key, codes, len(labels))
            if np.bincount(child, weights=sizes, minlength=n_child).max(initial=0) >= min_support:
                yield from walk(itemset + (j,), child, n_child)

    yield from walk((), np.zeros(n, dtype=np.int64), 1 if n else 0)


def _closed(itemset: tuple[int, ...], key: np.ndarray, n_key: int, columns) -> np.ndarray:
    """Per group: no attribute outside the itemset is constant on its cover, i.e. no
    larger itemset has the same cover (Def. 5; one closed itemset per cover)."""
    closed = np.ones(n_key, dtype=bool)
    for j, (codes, labels) in enumerate(columns):
        if j in itemset:
            continue
        child, n_child = combine_codes(key, n_key, codes, len(labels))
        parent = np.empty(n_child, dtype=np.int64)
        parent[child] = key
        closed &= np.bincount(parent, minlength=n_key) >= 2
    return closed


def _units(instance: Instance, table: pd.DataFrame, caller: str):
    """Units (distinct PND labels x protected x negative), their PND codes and (a, b, c, d)."""
    schema = instance.schema
    if schema.protected is None or schema.decision is None:
        raise IncompatibleRequirementError(
            f"{caller} needs a protected and a decision attribute; instance {instance.name!r} lacks one."
        )
    pd_attr, dec_attr = schema[schema.protected], schema[schema.decision]
    pnd = [c for c in schema.generalizable if c != pd_attr.name]
    missing = [c for c in [*pnd, pd_attr.name, dec_attr.name] if c not in table.columns]
    if missing:
        raise SchemaError(f"The table given to {caller} lacks the column(s) {missing}.")
    if len(pnd) > _MAX_ATTRIBUTES:
        raise InvalidParameterError(
            f"{caller} enumerates every subset of the {len(pnd)} PND attributes; at most {_MAX_ATTRIBUTES} are supported."
        )
    protected = table[pd_attr.name].astype(str).isin([str(v) for v in pd_attr.protected]).to_numpy()
    if dec_attr.kind == "numeric":
        negative = (pd.to_numeric(table[dec_attr.name], errors="coerce") == float(dec_attr.negative)).to_numpy()
    else:
        negative = (table[dec_attr.name].astype(str) == str(dec_attr.negative)).to_numpy()
    raw = [factorize(table[c]) for c in pnd]
    cell = 2 * protected.astype(np.int64) + negative.astype(np.int64)  # 3 = a, 2 = b, 1 = c, 0 = d
    ids, n_units = group_ids([(codes, len(labels)) for codes, labels in raw] + [(cell, 4)])
    first = np.full(n_units, -1, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids))[::-1]
    counts = np.zeros((n_units, 4), dtype=np.int64)
    np.add.at(counts, (ids, 3 - cell), 1)
    columns = [(codes[first], labels) for codes, labels in raw]
    return pnd, columns, counts, int(negative.sum()), len(table)


def contexts(
    instance: Instance,
    release: Release | None = None,
    *,
    min_support: int = 1,
    closed: bool = True,
    measures: Sequence[str] = CONTEXT_MEASURES,
    exact: bool = False,
    itemsets: bool = True,
) -> pd.DataFrame:
    """Every context of possible discrimination of a release (or of the original table)
    with its support, its 4-fold table, τ and each discrimination measure.

    Parameters
    ----------
    instance : Instance
        Needs a protected (PD) and a decision attribute; the other generalizable
        quasi-identifiers are the PND attributes.
    release : Release, optional
        Its released values are the items (each label an atom, as the verifier reads
        them). Without it, the instance's own values.
    min_support : int, default=1
        Only contexts of at least this many records (Ruggieri's figures use 20 on German
        credit, and 3).
    closed : bool, default=True
        Only closed itemsets (Def. 5): one row per distinct cover. False lists every
        itemset with a non-empty cover (contexts with the same cover repeat its numbers).
    measures : sequence of str, default=CONTEXT_MEASURES
        Columns of measures, any of RD, ED, RR, ER, RC, EC, OR.
    exact : bool, default=False
        τ and the measures as Fractions (``math.inf`` when unbounded) instead of floats.
    itemsets : bool, default=True
        One column per PND attribute with the itemset's value (None when the attribute
        is not in the itemset); False leaves them out (large tables).

    Returns
    -------
    pandas.DataFrame
        One row per context, depth first over the attribute subsets: the PND columns
        (with `itemsets`), ``length`` (items in the itemset), ``support`` (n), ``a``,
        ``b``, ``c``, ``d`` (protected/unprotected x negative/positive, Fig. 1), ``tau``
        (Def. 17, against the whole table's p-) and one column per measure, with the
        tokenism extension of §3.3 (an empty side counts with p-) and x/0 = inf,
        0/0 = 1 in ratios. The table's p- is in ``df.attrs["p_minus"]``.

    Notes
    -----
    One group-by per subset of the d PND attributes (:func:`itemset_groupings`, the
    verifier's walk of α-protection) over the distinct released rows, and for closed
    itemsets d - |itemset| more per subset: O(2^d · d · u) for u distinct rows.
    The largest value of a measure over the rows is the verifier's achieved α of
    :class:`~fairanon.AlphaProtection` with the same `min_support`.

    Examples
    --------
    Ruggieri's Fig. 2 (Simpson's paradox, Ex. 9): ED is 0.114 and 0.1 in the two
    departments, 1/6 over both.

    >>> from fairanon.instances import Attribute, Hierarchy, Schema
    >>> rows = [("A", "f", "no")] * 5 + [("A", "f", "yes")] * 2 + [("A", "m", "no")] + [("A", "m", "yes")] * 2
    >>> rows += [("B", "f", "no"), ("B", "f", "yes")] + [("B", "m", "no")] * 3 + [("B", "m", "yes")] * 5
    >>> schema = Schema([Attribute("dept"), Attribute("sex", role="protected", hierarchy=Hierarchy.flat(["f", "m"]), protected=["f"]),
    ...                  Attribute("admitted", role="decision", kind="ordered", order=["no", "yes"], negative="no")])
    >>> inst = Instance(pd.DataFrame(rows, columns=["dept", "sex", "admitted"]), schema)
    >>> df = contexts(inst, measures=["ED"], exact=True)
    >>> [(r.dept, r.support, r.ED) for r in df.itertuples()]
    [(None, 20, Fraction(1, 6)), ('A', 10, Fraction(4, 35)), ('B', 10, Fraction(1, 10))]
    """
    caller = "contexts"
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {caller} must be an Instance. Got {type(instance).__name__} instead."
        )
    if release is not None and not isinstance(release, Release):
        raise InvalidParameterError(
            f"The 'release' parameter of {caller} must be a Release or None. Got {type(release).__name__} instead."
        )
    if isinstance(min_support, bool) or not isinstance(min_support, (int, np.integer)) or min_support < 1:
        raise InvalidParameterError(
            f"The 'min_support' parameter of {caller} must be a positive int. Got {min_support!r} instead."
        )
    measures = tuple(measures)
    bad = [m for m in measures if m not in CONTEXT_MEASURES]
    if bad:
        raise InvalidParameterError(
            f"The 'measures' parameter of {caller} must hold names among {', '.join(CONTEXT_MEASURES)}. Got {bad} instead."
        )
    if release is None:
        table = pd.concat([instance.table, instance.extra], axis=1)
    else:
        table = release.table
    pnd, columns, counts, neg, total = _units(instance, table, caller)
    sizes = counts.sum(axis=1)
    parts: list[dict] = []
    for itemset, key, n_key in itemset_groupings(columns, sizes, min_support):
        cells = np.stack([np.bincount(key, weights=counts[:, i], minlength=n_key) for i in range(4)], axis=1)
        cells = cells.astype(np.int64)
        keep = cells.sum(axis=1) >= min_support
        if closed:
            keep &= _closed(itemset, key, n_key, columns)
        idx = np.flatnonzero(keep)
        if not len(idx):
            continue
        part = {"length": np.full(len(idx), len(itemset), dtype=np.int64), "cells": cells[idx]}
        if itemsets:
            first = np.full(n_key, -1, dtype=np.int64)
            first[key[::-1]] = np.arange(len(key))[::-1]
            rows = first[idx]
            for j, name in enumerate(pnd):
                if j in itemset:
                    codes, labels = columns[j]
                    part[name] = labels[codes[rows]]
                else:
                    part[name] = np.full(len(idx), None, dtype=object)
        parts.append(part)
    names = (list(pnd) if itemsets else []) + ["length"]
    if parts:
        out = {name: np.concatenate([p[name] for p in parts]) for name in names}
        cells = np.concatenate([p["cells"] for p in parts])
    else:
        out = {name: np.array([], dtype=object if name in pnd else np.int64) for name in names}
        cells = np.zeros((0, 4), dtype=np.int64)
    a, b, c, d = cells.T
    out["support"] = cells.sum(axis=1)
    out.update(a=a, b=b, c=c, d=d)
    if exact:
        rows = [tuple(int(v) for v in row) for row in cells]
        cache: dict = {}

        def value(name, row):
            if (name, row) not in cache:
                cache[(name, row)] = (
                    M.tau_exact(*row, neg, total) if name == "tau" else M.discrimination_exact(name, *row, neg, total)
                )
            return cache[(name, row)]

        for name in ("tau", *measures):
            out[name] = np.array([value(name, row) for row in rows], dtype=object)
    else:
        props = M.Proportions(a, b, c, d, neg, total)
        out["tau"] = M.tau(props) if len(a) else np.zeros(0)
        for name in measures:
            out[name] = M.discrimination(name, props) if len(a) else np.zeros(0)
    df = pd.DataFrame({k: pd.Series(v, dtype=object) if k in pnd else v for k, v in out.items()})
    df.attrs["p_minus"] = Fraction(neg, total) if total else None
    return df


def extremes(frame: pd.DataFrame, measures: Sequence[str], supports: Sequence[int]) -> pd.DataFrame:
    """Ruggieri's eq. (1) on a :func:`contexts` frame: per minimum support s and measure,
    the largest and the smallest value over the contexts of support >= s.

    >>> df = pd.DataFrame({"support": [10, 3, 1], "RD": [0.1, 0.4, -0.9]})
    >>> extremes(df, ["RD"], [1, 5]).to_dict("records")
    [{'min_support': 1, 'contexts': 3, 'max_RD': 0.4, 'min_RD': -0.9}, {'min_support': 5, 'contexts': 1, 'max_RD': 0.1, 'min_RD': 0.1}]
    """
    rows = []
    for s in supports:
        sel = frame[frame["support"] >= s]
        row = {"min_support": int(s), "contexts": int(len(sel))}
        for name in measures:
            values = sel[name].astype(float)
            row[f"max_{name}"] = float(values.max()) if len(sel) else float("nan")
            row[f"min_{name}"] = float(values.min()) if len(sel) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
