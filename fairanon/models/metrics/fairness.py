"""Fairness as per-tuple and per-group property vectors (docs/papers.md, DW-10).

Dewri et al. compare releases through one value per record; docs/papers.md, DW-10,
bridges the two fairness requirements of the library to that view:

- **alpha-protection** (Ruggieri, TDP 2014, Defs. 2-5): a discrimination rule
  A, B → C has the protected group A, a context B (an itemset of released values of
  the non-protected quasi-identifiers) and the negative decision C; its measure f
  (elift = ER by default, or any of RD, RR, OR, ED, EC, RC) is that of the context's
  4-fold table. A record's value is the worst f over the rules whose context its
  released class matches, i.e. over every itemset of its own released values, the
  empty context (the whole table) included: :func:`alpha_vector`. The worst value
  over all records is therefore the verifier's achieved alpha (same contexts, same
  tokenism extension, same minimum support).
- **diversity constraints** (Milani et al., EDBT 2021, Def. 2.3): per constraint,
  the share of its target records whose released cells still show the target values:
  :func:`diversity_vector`. A constraint is a group, so the vector is indexed by group
  (``unit="group"``: comparators then run over N = the number of groups) or broadcast
  to the records the group targets (``unit="tuple"``: each group weighs by its size;
  a record targeted by several constraints gets the smallest share, a record targeted
  by none is undefined, NaN).

Infinite values of the ratio measures (Ruggieri's x/0 = inf: e.g. ER of a context
with no protected record and no negative decision) are recorded as
:func:`infinite_cap`, N + 1 (N² + 1 for OR), which exceeds every finite value a table
of N records can give, so that order-based comparators (dominance, ▶cov, min, max)
read them exactly and the vectors stay finite.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from ..._validation import check_option
from ...exceptions import IncompatibleRequirementError, InvalidParameterError
from ...instances.instance import Instance
from ...release import Release
from .. import measures as M
from ..diversity import encode_constraints
from ..released import combine_codes, factorize, texts
from ..requirements import MEASURE_ALIASES, MEASURES, DiversityConstraint
from .classes import _prepare

__all__ = [
    "UNITS",
    "alpha_vector",
    "diversity_vector",
    "fairness_vectors",
    "infinite_cap",
    "measure_name",
]

#: What a group-level vector is indexed by (docs/papers.md, DW-10).
UNITS = ("tuple", "group")

#: Subsets of the non-protected quasi-identifiers enumerated per release at most
#: (2^d contexts shapes per record; the verifier walks the same itemsets).
_MAX_ATTRIBUTES = 16


def measure_name(measure: str) -> str:
    """The canonical name (RD, RR, OR, ED, ER, EC, RC) of a measure or its alias.

    >>> measure_name("elift"), measure_name("slift_d")
    ('ER', 'RD')
    """
    text = str(measure)
    name = MEASURE_ALIASES.get(text, MEASURE_ALIASES.get(text.lower(), text.upper()))
    check_option(name, "measure", "alpha_vector", tuple(MEASURES))
    return name


def infinite_cap(measure: str, n_rows: int) -> int | None:
    """The value recording an infinite measure on a table of `n_rows` records.

    Rates are counts over at most N records, so a positive rate is at least 1/N and
    the finite ratios RR, ER, RC, EC are at most N, OR at most N²; the cap is one
    above. RD and ED are within [-1, 1] and need none (None).

    >>> infinite_cap("ER", 10), infinite_cap("OR", 10), infinite_cap("RD", 10)
    (11, 101, None)
    """
    name = measure_name(measure)
    if name in ("RD", "ED"):
        return None
    return n_rows * n_rows + 1 if name == "OR" else n_rows + 1


def alpha_vector(
    instance: Instance,
    release: Release,
    measure: str = "ER",
    *,
    min_support: int | None = None,
    exact: bool = False,
) -> pd.Series:
    """Per record, the worst discrimination measure of the contexts its class matches.

    Parameters
    ----------
    instance, release
        The original data (with a protected and a decision attribute) and its release,
        aligned by record id.
    measure : str, default="ER"
        RD, RR, OR, ED, ER, EC or RC, or an alias (``elift`` = ER, ``slift`` = RR, ...).
    min_support : int, optional
        Only contexts of at least this many records count (as
        :class:`~fairanon.AlphaProtection` with the same `min_support`); at most N, so
        that the empty context (the whole table) does.
    exact : bool, default=False
        Fractions (an object Series) instead of floats.

    Returns
    -------
    pandas.Series
        Named ``alpha_<measure>``, indexed by record id in the instance's row order:
        the largest f over the contexts of the record's released class (the smallest
        for RC and EC, where larger is fairer). Infinite values are
        :func:`infinite_cap`.

    Raises
    ------
    IncompatibleRequirementError
        If the instance has no protected or no decision attribute.

    Notes
    -----
    One group-by per subset of the d non-protected quasi-identifiers, each refining
    its parent: O(2^d · n), d ≤ 16. Proportions use Ruggieri's tokenism extension
    (an empty protected or unprotected side counts with the table's negative rate),
    as the verifier does; float mode computes f in floats, exact mode per distinct
    4-fold table in Fractions.

    Examples
    --------
    >>> inst = fa.load("ruggieri_loan")
    >>> rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    >>> v = alpha_vector(inst, rel, "elift", exact=True)
    >>> v.name, max(v) == fa.verify(inst, rel, [fa.AlphaProtection("elift", 100)]).checks[-1].achieved
    ('alpha_ER', True)
    """
    name = measure_name(measure)
    if min_support is not None and (
        isinstance(min_support, bool)
        or not isinstance(min_support, int)
        or not 1 <= min_support <= instance.n_rows
    ):
        raise InvalidParameterError(
            "The 'min_support' parameter of alpha_vector must be an int in [1, N] or None. "
            f"Got {min_support!r} instead."
        )
    p = _prepare(instance, release, "alpha_vector")
    schema = instance.schema
    if schema.protected is None or schema.decision is None:
        raise IncompatibleRequirementError(
            f"alpha_vector needs a protected and a decision attribute; instance {instance.name!r} "
            "lacks one."
        )
    table = release.table
    pd_attr, dec_attr = schema[schema.protected], schema[schema.decision]
    protected = np.isin(texts(table[pd_attr.name]), list(pd_attr.protected))
    negative = texts(table[dec_attr.name]) == dec_attr.negative
    pnd = [c for c in schema.generalizable if c in table.columns]
    if len(pnd) > _MAX_ATTRIBUTES:
        raise InvalidParameterError(
            f"alpha_vector enumerates every subset of the {len(pnd)} non-protected "
            f"quasi-identifiers; at most {_MAX_ATTRIBUTES} are supported."
        )
    n = len(table)
    cap = infinite_cap(name, instance.n_rows)
    worse = name in MEASURES and MEASURES[name] == "upper"  # larger f is worse
    worst = _alpha_worst(
        [factorize(table[c]) for c in pnd],
        [
            protected & negative,
            protected & ~negative,
            ~protected & negative,
            ~protected & ~negative,
        ],
        int(negative.sum()),
        n,
        name,
        min_support or 1,
        worse,
        cap,
        exact,
    )
    values = p.to_instance_order(worst)
    return pd.Series(values, index=instance.row_ids, name=f"alpha_{name}")


def _alpha_worst(columns, weights, neg, n, name, min_support, worse, cap, exact) -> np.ndarray:
    """Per row, the worst f over the contexts (itemsets of its own released values)."""
    sign = 1.0 if worse else -1.0
    worst = np.full(n, -np.inf)
    exact_cache: dict = {}
    exact_worst = np.empty(n, dtype=object) if exact else None

    def finite(value):
        return Fraction(cap) if value == math.inf and cap is not None else value

    def visit(key: np.ndarray, n_key: int) -> None:
        a, b, c, d = (
            np.bincount(key, weights=w, minlength=n_key).astype(np.int64) for w in weights
        )
        keep = (a + b + c + d) >= min_support
        if not keep.any():
            return
        if exact:
            vals = np.empty(n_key, dtype=object)
            for g in np.flatnonzero(keep):
                cell = (int(a[g]), int(b[g]), int(c[g]), int(d[g]))
                if cell not in exact_cache:
                    exact_cache[cell] = finite(M.discrimination_exact(name, *cell, neg, n))
                vals[g] = exact_cache[cell]
            rows = np.flatnonzero(keep[key])
            for r in rows:
                v = vals[key[r]]
                cur = exact_worst[r]
                if cur is None or (v > cur if worse else v < cur):
                    exact_worst[r] = v
            return
        props = M.Proportions(a, b, c, d, neg, n)
        f = M.discrimination(name, props)
        if cap is not None:
            f = np.where(np.isinf(f), float(cap), f)
        signed = np.where(keep, sign * f, -np.inf)
        np.maximum(worst, signed[key], out=worst)

    def walk(start: int, key: np.ndarray, n_key: int) -> None:
        visit(key, n_key)
        for j in range(start, len(columns)):
            codes, uniques = columns[j]
            child, n_child = combine_codes(key, n_key, codes, len(uniques))
            # A context below the minimum support has no supported refinement either.
            if np.bincount(child, minlength=n_child).max(initial=0) >= min_support:
                walk(j + 1, child, n_child)

    walk(0, np.zeros(n, dtype=np.int64), 1 if n else 0)
    if exact:
        return exact_worst
    return sign * worst


def diversity_vector(
    instance: Instance,
    release: Release,
    constraints: Iterable[DiversityConstraint],
    *,
    unit: str = "tuple",
    exact: bool = False,
) -> pd.Series:
    """The share of each diversity constraint's target records that stays visible.

    A target record is visible when its released cells show exactly the target values
    (not generalized, not suppressed), as :func:`fairanon.verify` counts them.

    Parameters
    ----------
    instance, release
        Aligned by record id.
    constraints : iterable of DiversityConstraint
        Constraints targeting no record of the instance are left out.
    unit : {"tuple", "group"}, default="tuple"
        "group": one value per constraint, indexed by its label (``attr[value]``);
        "tuple": per record of the instance, the smallest share of the constraints
        targeting it (NaN, or None when `exact`, for records no constraint targets).
    exact : bool, default=False
        Fractions instead of floats.

    Returns
    -------
    pandas.Series
        Named ``div_share``; higher is better (1: every target record visible).

    Raises
    ------
    IncompatibleRequirementError, SchemaError
        A constraint targets an attribute or value the instance does not have.

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> sigma = diva_sigma()
    >>> rel = fa.anonymize(inst, [fa.KAnonymity(2), *sigma], method="diva", seed=0)
    >>> diversity_vector(inst, rel, sigma, unit="group", exact=True).map(str).to_dict()
    {'ETH[Asian]': '2/3', 'ETH[African]': '1', 'CTY[Vancouver]': '1/2'}
    """
    check_option(unit, "unit", "diversity_vector", UNITS)
    constraints = list(constraints)
    p = _prepare(instance, release, "diversity_vector")
    encoded = [e for e in encode_constraints(instance, constraints) if e.n_targets]
    table = release.table
    if p.pos is not None:  # release rows in the instance's order
        table = table.reindex(instance.row_ids)
    shares = {}
    visible_of = {}
    for e in encoded:
        visible = e.target.copy()
        for name, value in e.requirement.target:
            visible &= _shows(table[name], instance.schema[name].kind, value)
        count = int(visible.sum())
        share = Fraction(count, e.n_targets) if exact else count / e.n_targets
        shares[e.requirement._label()] = share
        visible_of[e.requirement._label()] = (e.target, share)
    if unit == "group":
        return pd.Series(
            list(shares.values()),
            index=pd.Index(list(shares), name="group"),
            name="div_share",
            dtype=object if exact else float,
        )
    values = np.full(instance.n_rows, None if exact else np.nan, dtype=object if exact else float)
    for target, share in visible_of.values():
        rows = np.flatnonzero(target)
        for r in rows:
            cur = values[r]
            if cur is None or (not exact and np.isnan(cur)) or share < cur:
                values[r] = share
    return pd.Series(values, index=instance.row_ids, name="div_share")


def _shows(column: pd.Series, kind: str, value: str) -> np.ndarray:
    """Released cells equal to the target value (numbers compared as numbers)."""
    if kind == "numeric":
        numbers = pd.to_numeric(column.astype(str), errors="coerce").to_numpy(dtype=float)
        return numbers == float(value)
    return texts(column) == value


def fairness_vectors(
    instance: Instance,
    release: Release,
    *,
    measure: str | None = "ER",
    min_support: int | None = None,
    constraints: Sequence[DiversityConstraint] = (),
    unit: str = "tuple",
    exact: bool = False,
) -> pd.DataFrame:
    """The fairness property vectors of a release that apply to its instance.

    Parameters
    ----------
    instance, release
        Aligned by record id.
    measure : str or None, default="ER"
        The alpha-protection measure (:func:`alpha_vector`); None, an instance without
        a protected and a decision attribute, or one with more than 16 non-protected
        quasi-identifiers (2^d contexts per record) leaves the column out.
    min_support : int, optional
        As in :func:`alpha_vector`; above N no context is checked and the column is
        left out.
    constraints : sequence of DiversityConstraint
        Those whose attributes the instance has are used (:func:`diversity_vector`);
        the others are skipped, so one list can serve several instances.
    unit : {"tuple", "group"}, default="tuple"
        "tuple": a frame indexed by record id (``alpha_<measure>``, ``div_share``);
        "group": a frame indexed by constraint (``div_share`` only).
    exact : bool, default=False

    Returns
    -------
    pandas.DataFrame
        Possibly without columns (nothing applies).
    """
    check_option(unit, "unit", "fairness_vectors", UNITS)
    schema = instance.schema
    usable = [
        c
        for c in constraints
        if all(a in schema and schema[a].released for a, _ in c.target)
        and all(_has_value(instance, a, v) for a, v in c.target)
    ]
    if unit == "group":
        if not usable:
            return pd.DataFrame(index=pd.Index([], name="group"))
        return diversity_vector(instance, release, usable, unit="group", exact=exact).to_frame()
    columns = {}
    supported = min_support is None or min_support <= instance.n_rows
    if (
        measure is not None
        and supported
        and len(schema.generalizable) <= _MAX_ATTRIBUTES
        and schema.protected is not None
        and schema.decision is not None
    ):
        vec = alpha_vector(instance, release, measure, min_support=min_support, exact=exact)
        columns[vec.name] = vec
    if usable:
        columns["div_share"] = diversity_vector(instance, release, usable, exact=exact)
    return pd.DataFrame(columns, index=instance.row_ids)


def _has_value(instance: Instance, name: str, value: str) -> bool:
    attr = instance.schema[name]
    if attr.kind == "numeric":
        try:
            return bool((instance.codes(name) == float(value)).any())
        except ValueError:
            return False
    return value in attr.domain
