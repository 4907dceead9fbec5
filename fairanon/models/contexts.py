"""Contexts of possible discrimination: every PND itemset of a table or a release, with
its support, its 4-fold table, Ruggieri's τ and each discrimination measure.

S. Ruggieri. Using t-closeness anonymity to control for non-discrimination. Transactions
on Data Privacy 7(2), 2014: Def. 2 (PND itemsets: at most one item per PND attribute),
Def. 3 (f of an itemset = f of its cover's 4-fold table), Def. 5 (closed itemsets),
Def. 17 (τ) and eq. (1) (the extreme values bd_f(R, s) over closed itemsets of support
at least s, Fig. 8). The items are the released values, each label an atom.

:func:`reduction` is Appendix A's red(R) (Fig. 12, Thm 25), which turns t-closeness of a
multi-valued sensitive attribute into α-protection w.r.t. RD, with the count c corrected
(docs/papers.md, R-11); :func:`reduction_counts` gives its 4-fold table per cover.

:func:`itemset_groupings` is the enumeration the verifier's α-protection check walks:
one group-by per subset of PND attributes, each refining its parent's grouping.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from ..exceptions import IncompatibleRequirementError, InvalidParameterError, SchemaError
from ..instances.hierarchy import Hierarchy
from ..instances.instance import Instance
from ..instances.schema import Attribute, Schema
from ..release import Release
from . import measures as M
from .released import combine_codes, factorize, group_ids, texts

__all__ = ["CONTEXT_MEASURES", "contexts", "extremes", "itemset_groupings", "reduction", "reduction_counts"]

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
    protected = np.isin(texts(table[pd_attr.name]), list(pd_attr.protected))
    negative = texts(table[dec_attr.name]) == dec_attr.negative
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


#: Rows red(R) may have at most (it has 2 |R|^2).
REDUCTION_MAX_ROWS = 10_000_000


def _sensitive_attribute(instance: Instance, attribute: str | None, caller: str) -> str:
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {caller} must be an Instance. Got {type(instance).__name__} instead."
        )
    if attribute is None:
        found = instance.schema.sensitive
        if len(found) != 1:
            raise InvalidParameterError(
                f"{caller} needs the sensitive attribute: instance {instance.name!r} has "
                f"{len(found)} ({list(found)}); pass attribute=."
            )
        return found[0]
    # A weight or ignore attribute is in the schema but not in instance.table.
    if (attribute not in instance.schema.names or attribute in instance.schema.qi
            or attribute not in instance.table.columns):
        raise InvalidParameterError(
            f"The 'attribute' parameter of {caller} must name a column of instance {instance.name!r} "
            f"that is not a quasi-identifier (nor a weight or ignored column). Got {attribute!r} instead."
        )
    return attribute


def reduction_counts(instance: Instance, attribute: str | None = None) -> pd.DataFrame:
    """The contingency table of Ruggieri's Fig. 12 for every cover of a full QI itemset.

    Parameters
    ----------
    instance : Instance
        R: its quasi-identifiers are A_1 .. A_{N-1}, `attribute` is A_N.
    attribute : str, optional
        The (possibly multi-valued) sensitive attribute; by default the instance's only
        one.

    Returns
    -------
    pandas.DataFrame
        One row per distinct QI tuple Q (in order of first appearance): the QI columns,
        ``s`` = |cover(Q)|, ``a`` = rs · Σ p_i and ``c`` = rs · Σ p_{s_i}, both summed over
        the values s_i with p_i >= p_{s_i} (p_i the share of s_i in the cover, p_{s_i} in
        R, r = |R|), and ``vd`` = VD(Q) as a Fraction. Lemma 24, a/(rs) - c/(rs) = VD(Q),
        holds row by row. The paper prints c as the sum of p_{s_i} over p_i < p_{s_i},
        which is rs minus this c and breaks Lemma 24 (docs/papers.md, R-11).

    Notes
    -----
    a = r · (records of the cover with such a value) and c = s · (records of R with
    such a value): integers, compared exactly (p_i >= p_{s_i} as n_i · r >= g_i · s).

    Examples
    --------
    R-11's counterexample: R has the values x, y, z in shares (1/2, 3/10, 1/5), the
    cover of Q = {q=1} in shares (3/5, 1/5, 1/5); VD(Q) = 1/10 = (80 - 70)/100.

    >>> table = pd.DataFrame({"q": [1] * 5 + [2] * 5, "s": list("xxxyz") + list("xxyyz")})
    >>> schema = Schema([Attribute("q", kind="numeric"), Attribute("s", role="sensitive")])
    >>> reduction_counts(Instance(table, schema)).to_dict("records")
    [{'q': 1, 's': 5, 'a': 40, 'c': 35, 'vd': Fraction(1, 10)}, {'q': 2, 's': 5, 'a': 30, 'c': 25, 'vd': Fraction(1, 10)}]
    """
    caller = "reduction_counts"
    attribute = _sensitive_attribute(instance, attribute, caller)
    table = instance.table
    qi = list(instance.schema.qi)
    raw = [factorize(table[c]) for c in qi]
    ids, n_covers = group_ids([(codes, len(labels)) for codes, labels in raw])
    values, labels = factorize(table[attribute])
    n_values = len(labels)
    counts = np.zeros((n_covers, n_values), dtype=np.int64)  # n_i per cover and value
    np.add.at(counts, (ids, values), 1)
    r = len(table)
    g = counts.sum(axis=0)  # g_i = r · p_{s_i}
    s = counts.sum(axis=1)
    over = counts * r >= g[None, :] * s[:, None]  # p_i >= p_{s_i}
    a = r * (counts * over).sum(axis=1)
    c = s * (g[None, :] * over).sum(axis=1)
    first = np.full(n_covers, -1, dtype=np.int64)
    first[ids[::-1]] = np.arange(r)[::-1]
    order = np.argsort(first, kind="stable")
    out = table.iloc[first[order]][qi].reset_index(drop=True)
    out["s"], out["a"], out["c"] = s[order], a[order], c[order]
    out["vd"] = [Fraction(int(ai - ci), r * int(si)) for ai, ci, si in zip(a[order], c[order], s[order])]
    return out


def reduction(
    instance: Instance, attribute: str | None = None, *, max_rows: int = REDUCTION_MAX_ROWS
) -> Instance:
    """Ruggieri's red(R) (Appendix A): a table that is t-protective w.r.t. RD iff R is
    t-close (Thm 25), the reduction behind Thm 16's NP-hardness.

    For every distinct QI tuple Q of R with cover size s, red(R) holds 2rs records with
    Q's values: rs protected ones, a of them negative, and rs unprotected ones, c of them
    negative (:func:`reduction_counts`, Fig. 12 with c corrected as docs/papers.md R-11
    says). The quasi-identifiers become the PND attributes, ``group`` (protected /
    unprotected) the PD attribute and ``decision`` ("-" negative, "+") the decision.

    Parameters
    ----------
    instance, attribute
        As in :func:`reduction_counts`. t-closeness is read with the variational
        distance (``TCloseness(t, distance="equal")``) over the classes of equal QI values.
    max_rows : int, default=REDUCTION_MAX_ROWS
        red(R) has 2 |R|^2 records; a larger one is refused.

    Returns
    -------
    Instance
        red(R), named ``red(<name>)``, rows ordered by cover, then protected before
        unprotected, negative before positive.

    Raises
    ------
    InvalidParameterError
        Without a single sensitive attribute, or when 2 |R|^2 exceeds `max_rows`.
    SchemaError
        When a quasi-identifier is called ``group`` or ``decision``.

    Examples
    --------
    R = 4 records, x in 3/4 of them. q = 1 holds x and y: a = 8 · 1/2 (y is over its
    share), c = 8 · 1/4, VD = 1/4. q = 2 holds x twice: a = 8 · 1, c = 8 · 3/4, VD = 1/4.

    >>> table = pd.DataFrame({"q": [1, 1, 2, 2], "s": ["x", "y", "x", "x"]})
    >>> schema = Schema([Attribute("q", kind="numeric"), Attribute("s", role="sensitive")])
    >>> red = reduction(Instance(table, schema))
    >>> red.n_rows, red.table.groupby(["q", "group", "decision"], observed=False).size().tolist()
    (32, [4, 4, 2, 6, 8, 0, 6, 2])
    """
    caller = "reduction"
    attribute = _sensitive_attribute(instance, attribute, caller)
    if isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)) or max_rows < 1:
        raise InvalidParameterError(
            f"The 'max_rows' parameter of {caller} must be a positive int. Got {max_rows!r} instead."
        )
    r = instance.n_rows
    if 2 * r * r > max_rows:
        raise InvalidParameterError(
            f"red(R) of instance {instance.name!r} would have 2 x {r}^2 = {2 * r * r:,} records, more than "
            f"max_rows={max_rows:,}."
        )
    qi = list(instance.schema.qi)
    clash = sorted({"group", "decision"} & set(qi))
    if clash:
        raise SchemaError(f"red(R) adds the columns 'group' and 'decision'; rename the quasi-identifier(s) {clash}.")
    counts = reduction_counts(instance, attribute)
    rs = r * counts["s"].to_numpy(dtype=np.int64)
    a, c = counts["a"].to_numpy(dtype=np.int64), counts["c"].to_numpy(dtype=np.int64)
    cells = np.stack([a, rs - a, c, rs - c], axis=1)  # Fig. 12: protected -, +; unprotected -, +
    unit = np.repeat(np.arange(cells.size), cells.ravel())
    cover, cell = unit // 4, unit % 4
    table = counts[qi].iloc[cover].reset_index(drop=True)
    table["group"] = pd.Categorical(np.where(cell < 2, "protected", "unprotected"), categories=["protected", "unprotected"])
    table["decision"] = pd.Categorical(np.where(cell % 2 == 0, "-", "+"), categories=["-", "+"])
    attrs = [instance.schema[name].with_(role="qi", protected=()) for name in qi]
    attrs += [
        Attribute("group", role="protected", hierarchy=Hierarchy.flat(["protected", "unprotected"]),
                  protected=("protected",)),
        Attribute("decision", role="decision", kind="ordered", order=("-", "+"), negative="-"),
    ]
    return Instance(table, Schema(attrs), name=f"red({instance.name})")
