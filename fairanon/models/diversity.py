"""Diversity constraints on an instance: what they select, how they conflict, how to
write and generate them.

A diversity constraint sigma = (X[t], lower, upper) [1]_ (Def. 2.3) counts the released
records whose cells on X show exactly the values t. On an instance it selects

- its *target records* I_sigma: the records whose original values on X are t;
- its *generalizable attributes* X_g: the attributes of X with role "qi" (DIVA
  suppresses only those); the other attributes of X (protected, sensitive, decision,
  insensitive) are released unchanged, so they only filter I_sigma;
- its *matching records* G_sigma: the records whose values on X_g are t. A released
  equivalence class makes its target records count iff every record of the class is in
  G_sigma (the class is homogeneous on X_g with the values t) and no cell of X_g is
  suppressed.

This module holds that reading (:func:`encode_constraints`, :func:`visible_rows`), the
conflict rates of DIVA's experiments (:func:`pair_conflict_rate`,
:func:`conflict_rate`), a reader for the ``attr(value) [lower, upper]`` lists the DIVA
authors publish (:func:`parse_constraints`), the three constraint families of their
experiments (:func:`minimum_frequency`, :func:`average`, :func:`proportional`) and the
constraints of their running example (:func:`diva_sigma`).

References
----------
.. [1] M. Milani, Y. Huang, F. Chiang. Preserving diversity in anonymized data.
   EDBT 2021.
.. [2] J. Stoyanovich, K. Yang, H. V. Jagadish. Online set selection with fairness and
   diversity constraints. EDBT 2018.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from .._validation import check_fraction, check_int, check_option
from ..exceptions import IncompatibleRequirementError, InvalidParameterError, SchemaError
from ..instances.datasets import DIVA_SIGMA
from ..instances.generalization import format_number
from ..instances.instance import Instance
from .requirements import DiversityConstraint

__all__ = [
    "EncodedConstraint",
    "average",
    "conflict_rate",
    "diva_sigma",
    "encode_constraints",
    "minimum_frequency",
    "pair_conflict_rate",
    "parse_constraints",
    "proportional",
    "target_mask",
    "visible_rows",
]


# ------------------------------------------------------------------ reading
@dataclass(frozen=True, eq=False)
class EncodedConstraint:
    """A diversity constraint read on one instance (see the module docstring).

    Attributes
    ----------
    requirement : DiversityConstraint
    attributes : tuple of str
        X_g, the generalizable ("qi") attributes of the target, in target order.
    target : numpy.ndarray of bool
        I_sigma, per row of ``instance.table``.
    match : numpy.ndarray of bool
        G_sigma, per row: the values on X_g are the target values.
    """

    requirement: DiversityConstraint
    attributes: tuple[str, ...]
    target: np.ndarray
    match: np.ndarray

    @property
    def lower(self) -> int:
        """The lower bound, at most one more than the rows (the same constraint: a
        count is at most the rows), so that it fits an int64."""
        return min(self.requirement.lower, len(self.target) + 1)

    @property
    def upper(self) -> int:
        """The upper bound, at most the rows (the same constraint)."""
        return min(self.requirement.upper, len(self.target))

    @property
    def fixed(self) -> bool:
        """Whether no target attribute can be suppressed: the count is |I_sigma| in every release."""
        return not self.attributes

    @property
    def n_targets(self) -> int:
        return int(self.target.sum())

    def __repr__(self) -> str:
        return f"EncodedConstraint({self.requirement!r}, n_targets={self.n_targets})"


def _value_mask(instance: Instance, name: str, value: str) -> np.ndarray:
    attr = instance.schema[name]
    codes = instance.codes(name)
    if attr.kind == "numeric":
        try:
            number = float(value)
        except ValueError:
            raise SchemaError(
                f"Diversity constraint value {value!r} of numeric attribute {name!r} is not a number."
            ) from None
        return codes == number
    domain = attr.domain
    if value not in domain:
        raise SchemaError(f"{value!r} is not a value of {name!r}.")
    return codes == domain.index(value)


def encode_constraints(instance: Instance, requirements: Iterable) -> list[EncodedConstraint]:
    """Read every :class:`DiversityConstraint` of `requirements` on `instance` (others are skipped).

    Raises
    ------
    IncompatibleRequirementError
        A target attribute is not released (identifier or ignored).
    SchemaError
        A target value is not a value of its attribute.

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> [inst.row_ids[e.target].tolist() for e in encode_constraints(inst, diva_sigma())]
    [[8, 9, 10], [5, 6], [6, 7, 8, 10]]
    """
    out = []
    schema = instance.schema
    for req in requirements:
        if not isinstance(req, DiversityConstraint):
            continue
        target = np.ones(instance.n_rows, dtype=bool)
        match = np.ones(instance.n_rows, dtype=bool)
        attrs = []
        for name, value in req.target:
            if name not in schema or not schema[name].released:
                raise IncompatibleRequirementError(
                    f"{req!r} targets {name!r}, which is not a released attribute of instance {instance.name!r}."
                )
            mask = _value_mask(instance, name, value)
            target &= mask
            if schema[name].role == "qi":
                match &= mask
                attrs.append(name)
        for a in (target, match):
            a.setflags(write=False)
        out.append(EncodedConstraint(req, tuple(attrs), target, match))
    return out


def target_mask(instance: Instance, constraint: DiversityConstraint) -> np.ndarray:
    """I_sigma: per row of ``instance.table``, whether its original values are the target.

    >>> inst = fa.load("diva_table1")
    >>> int(target_mask(inst, fa.DiversityConstraint({"CTY": "Vancouver"}, 2, 4)).sum())
    4
    """
    return encode_constraints(instance, [constraint])[0].target


def visible_rows(
    instance: Instance,
    constraint: EncodedConstraint,
    groups: np.ndarray,
    starred: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Per row, whether it counts for `constraint` when the partition `groups` is released
    by suppression (DIVA's Suppress: a group keeps the values its records share).

    Parameters
    ----------
    instance : Instance
    constraint : EncodedConstraint
    groups : array of int
        The group of every row of ``instance.table``.
    starred : mapping of str to array of bool, optional
        Cells suppressed in addition (per attribute, per row).

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> asian = encode_constraints(inst, diva_sigma())[0]
    >>> int(visible_rows(inst, asian, np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])).sum())
    2
    """
    if constraint.fixed:
        return constraint.target.copy()
    groups = np.asarray(groups)
    dense = np.unique(groups, return_inverse=True)[1].reshape(-1)
    outside = np.bincount(dense, weights=~constraint.match, minlength=int(dense.max()) + 1 if len(dense) else 0)
    visible = constraint.target & (outside[dense] == 0)
    for name in constraint.attributes:
        if starred is not None and name in starred:
            visible &= ~np.asarray(starred[name], dtype=bool)
    return visible


# ------------------------------------------------------------------ conflicts
def pair_conflict_rate(instance: Instance, first: DiversityConstraint, second: DiversityConstraint) -> Fraction:
    """Conflict rate of two constraints: the Jaccard index |I_1 ∩ I_2| / |I_1 ∪ I_2| of
    their target records (docs/papers.md, DV-7; 0 when neither has a target).

    DIVA [1]_ defines the conflict rate of a pair as "the number of overlapping relevant
    tuples", normalized to [0, 1]; its exact form is in an extended version we could not
    read, so this is a reconstruction (docs/papers.md, DV-7).

    >>> inst = fa.load("diva_table1")
    >>> asian = fa.DiversityConstraint({"ETH": "Asian"}, 2, 5)
    >>> pair_conflict_rate(inst, asian, fa.DiversityConstraint({"CTY": "Vancouver"}, 2, 4))
    Fraction(2, 5)
    """
    a, b = (target_mask(instance, s) for s in (first, second))
    union = int((a | b).sum())
    return Fraction(int((a & b).sum()), union) if union else Fraction(0)


def conflict_rate(instance: Instance, constraints: Sequence[DiversityConstraint]) -> Fraction:
    """Conflict rate of a set: the share of the records targeted by some constraint that
    are targeted by at least two, |{t : t in I_sigma for >= 2 sigma}| / |∪ I_sigma|
    (docs/papers.md, DV-7; 0 for an empty union). 0 means no overlap, 1 that every
    targeted record is shared.

    >>> conflict_rate(fa.load("diva_table1"), diva_sigma())  # t6, t8, t10 of t5..t10
    Fraction(1, 2)
    """
    encoded = encode_constraints(instance, constraints)
    if not encoded:
        return Fraction(0)
    hits = np.sum([e.target for e in encoded], axis=0)
    union = int((hits > 0).sum())
    return Fraction(int((hits > 1).sum()), union) if union else Fraction(0)


# ------------------------------------------------------------------ the published format
_BOUNDS = re.compile(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]\s*$")


def _pairs(text: str) -> list[tuple[str, str]] | None:
    """``a(x)b(y)`` -> [(a, x), (b, y)]; values may hold balanced parentheses."""
    pairs, pos, n = [], 0, len(text)
    while True:
        while pos < n and (text[pos].isspace() or text[pos] in ",&"):
            pos += 1
        if pos == n:
            return pairs or None
        open_at = text.find("(", pos)
        if open_at < 0:
            return None
        name = text[pos:open_at].strip()
        if not name or any(c in name for c in "()[]"):
            return None
        depth, end = 1, open_at + 1
        while end < n and depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        if depth:
            return None
        pairs.append((name, text[open_at + 1 : end - 1].strip()))
        pos = end


def parse_constraints(text: str | Iterable[str]) -> list[DiversityConstraint]:
    """Read a list of diversity constraints in the DIVA authors' format.

    One constraint per line, ``attr(value) [lower, upper]`` (whitespace anywhere is
    optional: ``race(White)[1, 286882]`` and ``industry (Government) [1000, 2500]`` are
    read too); multi-attribute targets chain pairs, ``sex(Male)race(White)[186331, 286882]``.
    Blank lines, ``#`` comments, code fences and headings (lines with neither ``(`` nor
    ``[``, such as ``Proportion``) are skipped, so the lists of the DIVA repository's
    README can be pasted as they are.

    Parameters
    ----------
    text : str or iterable of str
        The whole list, or its lines.

    Returns
    -------
    list of DiversityConstraint

    Raises
    ------
    InvalidParameterError
        For a line that looks like a constraint but is malformed (the message gives the
        line number and the expected form).

    Examples
    --------
    >>> parse_constraints('''
    ... Proportion
    ... Sex(Female) [298, 298]
    ... sex(Male)race(White)[186331, 286882]
    ... ''')
    [DiversityConstraint(Sex[Female], 298, 298), DiversityConstraint(sex,race[Male,White], 186331, 286882)]
    """
    lines = text.splitlines() if isinstance(text, str) else list(text)
    out = []
    for number, raw in enumerate(lines, start=1):
        line = str(raw).split("#", 1)[0].strip()
        if not line or line.startswith("```") or ("(" not in line and "[" not in line):
            continue
        bounds = _BOUNDS.search(line)
        pairs = _pairs(line[: bounds.start()]) if bounds else None
        if pairs is None:
            raise InvalidParameterError(
                f"Cannot read diversity constraint {raw!r} (line {number}); expected "
                "'attribute(value) [lower, upper]', e.g. 'sex(Female) [298, 310]'."
            )
        if len(pairs) == 1:
            out.append(DiversityConstraint.parse(line))
        else:
            out.append(DiversityConstraint(pairs, int(bounds.group(1)), int(bounds.group(2))))
    return out


# ------------------------------------------------------------------ generators
def _value_counts(instance: Instance, attribute, values, caller: str) -> tuple[tuple[str, ...], list[tuple[tuple, int]]]:
    """The target attributes and (value tuple, count) of each requested combination,
    in domain order, present values only unless `values` names them."""
    attrs = (attribute,) if isinstance(attribute, str) else tuple(attribute)
    if not attrs or not all(isinstance(a, str) for a in attrs):
        raise InvalidParameterError(
            f"The 'attribute' parameter of {caller} must be a column name or a list of them. "
            f"Got {attribute!r} instead."
        )
    for name in attrs:
        if name not in instance.schema or not instance.schema[name].released:
            raise InvalidParameterError(
                f"The 'attribute' parameter of {caller} names {name!r}, which is not a released "
                f"attribute of instance {instance.name!r}; released: {list(instance.schema.released)}."
            )
    columns = []
    for name in attrs:
        col = instance.table[name]
        if instance.schema[name].kind == "numeric":
            columns.append(pd.Series([format_number(v) for v in col.to_numpy()], index=col.index))
        else:
            columns.append(col.astype(str))
    counts = pd.DataFrame(dict(zip(attrs, columns))).value_counts(sort=False)
    present = {tuple(str(v) for v in (key if isinstance(key, tuple) else (key,))): int(c) for key, c in counts.items()}

    def order_key(combo):
        key = []
        for name, v in zip(attrs, combo):
            dom = instance.schema[name].domain
            key.append((dom.index(v), "") if dom is not None and v in dom else (math.inf, v))
        return key

    if values is None:
        chosen = sorted(present, key=order_key)
    else:
        chosen = [tuple(str(x) for x in (v if isinstance(v, (tuple, list)) else (v,))) for v in values]
        bad = [v for v in chosen if len(v) != len(attrs)]
        if bad:
            raise InvalidParameterError(
                f"The 'values' parameter of {caller} must give one value per attribute of {attrs}. Got {bad[0]!r}."
            )
    return attrs, [(combo, present.get(combo, 0)) for combo in chosen]


def _build(attrs, combo, lower, upper) -> DiversityConstraint:
    return DiversityConstraint(list(zip(attrs, combo)), int(lower), int(upper))


def minimum_frequency(instance: Instance, attribute, *, f: int = 1, values=None) -> list[DiversityConstraint]:
    """Minimum-frequency (coverage) constraints [2]_: each value keeps at least `f`
    visible records, [f, count(a)] (fairanon's default family; DIVA's Credit set).

    Parameters
    ----------
    instance : Instance
    attribute : str or sequence of str
        A released attribute, or several for combined targets (one constraint per
        combination present).
    f : int, default=1
    values : sequence, optional
        The values (tuples for several attributes) to constrain; default every value
        present, in domain order.

    Examples
    --------
    >>> minimum_frequency(fa.load("diva_table1"), "ETH")
    [DiversityConstraint(ETH[African], 1, 2), DiversityConstraint(ETH[Asian], 1, 3), DiversityConstraint(ETH[Caucasian], 1, 5)]
    """
    f = check_int(f, "f", "minimum_frequency", low=0)
    attrs, counts = _value_counts(instance, attribute, values, "minimum_frequency")
    return [_build(attrs, combo, f, max(c, f)) for combo, c in counts]


def average(instance: Instance, attribute, *, values=None) -> list[DiversityConstraint]:
    """Equal-representation ("average") constraints [2]_: with N records and d values,
    each value keeps min(floor(N / d), count(a)) visible records and at most count(a).

    The rule reproduces the lower bounds of DIVA's Credit "average" set (Male 500,
    Female 310, skilled 250, unskilled resident 200, highly qualified 148, non-resident
    22, docs/papers.md, DV-9); the published upper bounds follow no single rule, so this
    family caps each value at its count.

    Examples
    --------
    >>> average(fa.load("diva_table1"), "ETH")  # N = 10, d = 3: floor(10 / 3) = 3
    [DiversityConstraint(ETH[African], 2, 2), DiversityConstraint(ETH[Asian], 3, 3), DiversityConstraint(ETH[Caucasian], 3, 5)]
    """
    attrs, counts = _value_counts(instance, attribute, values, "average")
    share = instance.n_rows // max(1, len(counts))
    return [_build(attrs, combo, min(share, c), c) for combo, c in counts]


UPPER_RULES = ("count", "lower", "majority")
ROUNDINGS = ("floor", "round")


def proportional(
    instance: Instance,
    attribute,
    rho=Fraction(24, 25),
    *,
    values=None,
    rounding: str = "floor",
    upper: str = "count",
) -> list[DiversityConstraint]:
    """Proportional-representation constraints [2]_: each value keeps a share rho of its
    records visible, lower = rho · count(a).

    Parameters
    ----------
    instance : Instance
    attribute : str or sequence of str
        As in :func:`minimum_frequency`.
    rho : rational in (0, 1], default=0.96
        The share (exact: 0.96 is 24/25). DIVA's Credit set uses 0.96 (docs/papers.md, DV-9).
    values : sequence, optional
        As in :func:`minimum_frequency`.
    rounding : {"floor", "round"}, default="floor"
        lower = floor(rho · count) (fairanon's default) or the nearest integer, halves
        up ("round", what reproduces the published sets: 0.96 · 630 = 604.8 -> 605).
    upper : {"count", "lower", "majority"}, default="count"
        "count": upper = count(a) (fairanon's default: only the lower bound binds);
        "lower": upper = lower (the published sets' [x, x] form); "majority": the most
        frequent value keeps count(a), the others [x, x] (the published Census sets).

    Returns
    -------
    list of DiversityConstraint

    Examples
    --------
    DIVA's published Credit set for Job (rho = 0.96, rounded, [x, x]):

    >>> german = fa.load("german")
    >>> [(s.target[0][1], s.lower, s.upper) for s in proportional(german, "job", 0.96, rounding="round", upper="lower")]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('unemployed / unskilled non-resident', 21, 21), ('unskilled resident', 192, 192),
     ('skilled', 605, 605), ('highly qualified / management / self-employed', 142, 142)]
    """
    rho = check_fraction(rho, "rho", "proportional", low=0, high=1, low_open=True)
    check_option(rounding, "rounding", "proportional", ROUNDINGS)
    check_option(upper, "upper", "proportional", UPPER_RULES)
    attrs, counts = _value_counts(instance, attribute, values, "proportional")
    top = max((c for _, c in counts), default=0)
    out = []
    for combo, c in counts:
        share = rho * c
        lower = math.floor(share) if rounding == "floor" else math.floor(share + Fraction(1, 2))
        if upper == "count" or (upper == "majority" and c == top):
            high = c
        else:
            high = lower
        out.append(_build(attrs, combo, lower, high))
    return out


# ------------------------------------------------------------------ DIVA's running example
def diva_sigma() -> list[DiversityConstraint]:
    """Σ of DIVA's Example 3.1 on its Table 1 (``fa.load("diva_table1")``):
    (ETH[Asian], 2, 5), (ETH[African], 1, 3), (CTY[Vancouver], 2, 4), built from
    :data:`fairanon.instances.datasets.DIVA_SIGMA`.

    >>> diva_sigma()[0]
    DiversityConstraint(ETH[Asian], 2, 5)
    """
    return [DiversityConstraint(target, lower, upper) for target, lower, upper in DIVA_SIGMA]
