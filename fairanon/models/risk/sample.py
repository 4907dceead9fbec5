"""Sample-based re-identification risk: prosecutor, marketer and journalist risk.

The three attacker models of El Emam and Dankar (K. El Emam, F. K. Dankar. Protecting
privacy using k-anonymity. JAMIA 15(5):627-637, 2008), as ARX reports them:

- **prosecutor**: the attacker knows the target is in the table. A record of class j
  (f_j records with its released quasi-identifier values) is picked with probability
  1/f_j; the *highest* prosecutor risk is max_j 1/f_j = 1/min_j f_j, and the records at
  it are those of the smallest classes.
- **marketer** (average risk): the expected share of records re-identified when every
  record is matched, (1/n) Σ_records 1/f_j = J/n for J classes over n records; against a
  population, (1/n) Σ_j f_j/F_j.
- **journalist**: the target is drawn from a population the table was sampled from. A
  class matching F_j population records carries risk 1/F_j; the highest is
  max_j 1/F_j. With a population table, F_j is the number of its records whose
  original values every released label of class j covers (read with
  :func:`~fairanon.instances.generalization.label_covers`, as the verifier reads
  labels). Without one, F_j is unknown and fairanon reports the highest individual
  risk (:mod:`fairanon.models.risk.individual`), the estimate of E[1/F_j | f_j].

Every ratio here is an exact :class:`~fractions.Fraction`: a record is *above* a risk
threshold t when 1/f_j > t, i.e. t·f_j < 1 — a class of 5 is not above 1/5.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

from ..._memory import check_memory
from ..._validation import check_fraction
from ...exceptions import InvalidParameterError, SchemaError
from ...instances.generalization import label_covers
from ...instances.instance import Instance, parse_numbers
from ...instances.texts import cell_texts, check_kinds
from ..released import group_ids
from .classes import RiskClasses

__all__ = [
    "HISTOGRAM_EDGES",
    "size_summary",
    "JournalistRisk",
    "PopulationCounts",
    "SampleRisk",
    "combine_population_counts",
    "merge_population_counts",
    "journalist_risk",
    "population_class_sizes",
    "population_counts",
    "records_above",
    "risk_histogram",
    "sample_risk",
]

#: Upper edges of the risk histogram's intervals ]previous, edge] (ARX's risk
#: distribution: 0.01 %, 0.1 %, 1 %, then every percent to 16 %, 20 %, 25 %, 1/3, 1/2, 1).
HISTOGRAM_EDGES = (
    (Fraction(1, 10000), Fraction(1, 1000), Fraction(1, 100))
    + tuple(Fraction(i, 100) for i in range(2, 17))
    + (Fraction(1, 5), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(1))
)

_WITNESS = 10


def _frac(x: Fraction) -> dict:
    return {"value": float(x), "exact": str(x)}


def _witness(classes: RiskClasses, g: int, **extra) -> dict:
    """Class g's released values, size and first record ids, for a report."""
    return {"class": classes.class_labels(g), "size": int(classes.sizes[g]), **extra,
            "records": classes.records(np.arange(classes.n_classes) == g, _WITNESS)}


_INT64_MAX = int(np.iinfo(np.int64).max)


def _above(sizes: np.ndarray, t: Fraction) -> np.ndarray:
    """Which classes (of these sizes) have prosecutor risk 1/f strictly above t = a/b.

    1/f > t ⟺ f·a < b ⟺ f <= (b - 1) // a (every class when a = 0). The bound is
    computed in Python integers because the product f·a wraps in int64: a float
    threshold has a huge numerator (0.1 + 0.2 reads as 7500000000000001/25000000000000000).
    """
    sizes = np.asarray(sizes)
    if t.numerator == 0:
        return np.ones(sizes.shape, dtype=bool)
    return sizes <= min((t.denominator - 1) // t.numerator, _INT64_MAX)


def records_above(classes: RiskClasses, threshold) -> tuple[int, int]:
    """(records, classes) whose prosecutor risk 1/f_j is strictly above `threshold`.

    Exact: 1/f > t ⟺ t·f < 1, so a class of 5 records is not above 1/5.

    >>> import fairanon as fa
    >>> from fairanon.models.risk.classes import risk_classes
    >>> records_above(risk_classes(fa.load("diva_table1")), "1/2")
    (10, 10)
    """
    t = check_fraction(threshold, "threshold", "records_above", low=0, high=1)
    above = _above(classes.sizes, t)
    return int(classes.sizes[above].sum()), int(above.sum())


def risk_histogram(classes: RiskClasses, edges=HISTOGRAM_EDGES) -> list[dict]:
    """The records and classes per interval of prosecutor risk ]lo, hi].

    Intervals run from 0 over `edges` (ascending Fractions ending at 1); a class of f
    records falls in the interval holding 1/f exactly. Empty intervals are listed too.
    """
    sizes, counts = classes.frequencies
    out = []
    lo = Fraction(0)
    n = classes.n_records
    for hi in edges:
        # lo < 1/f <= hi: above lo and not above hi
        inside = _above(sizes, lo) & ~_above(sizes, hi)
        records = int((sizes[inside] * counts[inside]).sum())
        out.append({"lo": str(lo), "hi": str(hi), "classes": int(counts[inside].sum()), "records": records,
                    "share": float(Fraction(records, n)) if n else 0.0})
        lo = hi
    return out


def size_summary(sizes: np.ndarray, threshold=Fraction(1, 5)) -> dict:
    """The prosecutor-risk figures that class sizes alone give, exact, JSON-ready: the
    highest risk and the records at it, the average (marketer) risk, the sample uniques
    and the records strictly above `threshold` (what the verifier's report shows).

    >>> size_summary(np.array([3, 1, 1, 5]))["records_above_threshold"]
    5
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if not sizes.sum():
        return {}
    t = check_fraction(threshold, "threshold", "size_summary", low=0, high=1)
    f = _figures(sizes, t)
    return {
        "prosecutor_highest": _frac(f["highest"]),
        "records_at_highest": f["records_at_highest"],
        "prosecutor_average": _frac(f["average"]),
        "sample_uniques": int((sizes == 1).sum()),
        "threshold": _frac(t),
        "records_above_threshold": f["records_above"],
    }


def _figures(sizes: np.ndarray, t: Fraction | None) -> dict:
    """Prosecutor-risk figures of classes of these sizes (the fields of
    :class:`SampleRisk` that sizes alone give)."""
    smallest = int(sizes.min())
    at = sizes == smallest
    out = {
        "n_records": int(sizes.sum()),
        "n_classes": len(sizes),
        "highest": Fraction(1, smallest),
        "records_at_highest": int(sizes[at].sum()),
        "classes_at_highest": int(at.sum()),
        "average": Fraction(len(sizes), int(sizes.sum())),
        "threshold": t,
        "records_above": None,
        "classes_above": None,
    }
    if t is not None:
        above = _above(sizes, t)
        out.update(records_above=int(sizes[above].sum()), classes_above=int(above.sum()))
    return out


@dataclass(frozen=True)
class SampleRisk:
    """Prosecutor and marketer risk of a table, exact.

    Attributes
    ----------
    n_records, n_classes : int
    n_suppressed : int
        Records of the suppressed blocks (each counted as one class: one per
        protected value, the protected attribute being released unchanged; see
        :mod:`fairanon.models.risk.classes`).
    highest : Fraction
        The highest prosecutor risk 1/min_j f_j.
    records_at_highest, classes_at_highest : int
        Records and classes at it.
    witness : dict
        The released values of one class at the highest risk and some of its record ids.
    average : Fraction
        The average prosecutor risk J/n, also the marketer risk when the table is the
        population.
    threshold : Fraction or None
    records_above, classes_above : int or None
        Records and classes strictly above `threshold`.
    histogram : list of dict
    """

    n_records: int
    n_classes: int
    n_suppressed: int
    highest: Fraction
    records_at_highest: int
    classes_at_highest: int
    witness: dict
    average: Fraction
    threshold: Fraction | None = None
    records_above: int | None = None
    classes_above: int | None = None
    histogram: list = field(default_factory=list)

    @property
    def marketer(self) -> Fraction:
        return self.average

    def to_dict(self) -> dict:
        return {
            "n_records": self.n_records,
            "n_classes": self.n_classes,
            "n_suppressed": self.n_suppressed,
            "prosecutor_highest": _frac(self.highest),
            "records_at_highest": self.records_at_highest,
            "classes_at_highest": self.classes_at_highest,
            "witness": self.witness,
            "prosecutor_average": _frac(self.average),
            "marketer": _frac(self.average),
            "threshold": None if self.threshold is None else _frac(self.threshold),
            "records_above_threshold": self.records_above,
            "classes_above_threshold": self.classes_above,
            "histogram": self.histogram,
        }


def sample_risk(classes: RiskClasses, *, threshold=Fraction(1, 5), histogram: bool = True) -> SampleRisk:
    """Prosecutor risk (highest, the records at it, the average), marketer risk, the
    records strictly above `threshold` and the risk histogram of a regrouped table.

    Parameters
    ----------
    classes : RiskClasses
        From :func:`~fairanon.models.risk.classes.risk_classes`.
    threshold : rational in [0, 1] or None, default=1/5
        Count the records whose risk 1/f_j is strictly above it.
    histogram : bool, default=True

    Returns
    -------
    SampleRisk
    """
    t = None if threshold is None else check_fraction(threshold, "threshold", "sample_risk", low=0, high=1)
    figures = _figures(classes.sizes, t)
    return SampleRisk(
        n_suppressed=classes.n_suppressed,
        witness=_witness(classes, int(np.argmax(classes.sizes == classes.sizes.min()))),
        histogram=risk_histogram(classes) if histogram else [],
        **figures,
    )


# ------------------------------------------------------------------ journalist
def _population_values(population, name: str, attr):
    """The population's values of one quasi-identifier: floats (numeric), or the
    position in the attribute's domain (len(domain) for a value outside it)."""
    if isinstance(population, Instance):
        column = population.table[name] if name in population.table.columns else None
    else:
        column = population[name] if name in population.columns else None
    if column is None:
        raise SchemaError(f"The population table lacks the quasi-identifier column {name!r}.")
    if column.isna().any():
        raise SchemaError(f"The population column {name!r} has missing values.")
    if attr.kind == "numeric":
        values = parse_numbers(column)  # as the instance's column is read, on either engine
        if values.isna().any():
            raise SchemaError(f"The population column {name!r} is not numeric, as {name!r} is declared.")
        values = values.to_numpy(dtype=float)
        if not np.isfinite(values).all():  # "inf", "1e400": no record of the table holds one
            raise SchemaError(f"The population column {name!r} holds a non-finite number "
                              f"({float(values[~np.isfinite(values)][0])!r}); give finite numbers.")
        return values
    position = {v: i for i, v in enumerate(attr.domain)}
    if isinstance(column.dtype, pd.CategoricalDtype):
        labels, kinds = cell_texts(pd.Series(column.cat.categories))
        check_kinds(name, kinds)
        lookup = np.array([position.get(t, len(position)) for t in labels] + [len(position)])
        return lookup[column.cat.codes.to_numpy()]
    # Read as the instance's column is (value_text; 1 beside "1" refused).
    values, kinds = cell_texts(column)
    check_kinds(name, kinds)
    codes, uniques = pd.factorize(values)
    lookup = np.array([position.get(u, len(position)) for u in uniques], dtype=np.int64)
    return lookup[codes]


@dataclass(frozen=True)
class PopulationCounts:
    """A population table as the journalist risk reads it: its distinct combinations of
    quasi-identifier values and the records of each (a group-by of the table on the
    quasi-identifiers), so that a table counted elsewhere, partition by partition on
    Dask, is read as one counted here.

    Attributes
    ----------
    qi : tuple of str
        The quasi-identifiers, in schema order.
    values : tuple of numpy.ndarray
        Per quasi-identifier, its value in every combination, coded as the population's
        values are read: floats (numeric), or the position in the attribute's domain
        (len(domain) for a value outside it, which only ``*`` covers).
    weights : numpy.ndarray of int64
        The records of every combination.
    """

    qi: tuple
    values: tuple
    weights: np.ndarray

    @property
    def size(self) -> int:
        """N, the records of the population."""
        return int(self.weights.sum())


def _check_counting(n_rows: int, n_qi: int, limit, *, read: bool) -> None:
    """Refuse, above the memory limit, to count the distinct combinations of `n_rows`
    rows over `n_qi` quasi-identifiers: per row, the values (8 bytes each, when `read`
    from a table), their factorized codes (8 each), the combination's id, weight and
    first row (8 each). The combinations themselves are at most as many as the rows."""
    need = n_rows * 8 * ((2 + read) * n_qi + 3)
    check_memory(need, f"counting the distinct quasi-identifier combinations of a population table ({n_rows} rows)",
                 "pass a smaller population table, or fewer quasi-identifiers", limit, caller="risk")


def population_counts(population, schema, qi, limit=None) -> PopulationCounts:
    """The :class:`PopulationCounts` of a population table (an Instance or a pandas
    DataFrame, or one partition of a larger table) over the quasi-identifiers `qi`,
    within the memory limit `limit` (default: the one in force, :mod:`fairanon._memory`).

    Raises
    ------
    SchemaError
        A missing quasi-identifier column, a missing value, a non-number in a numeric
        column.
    MemoryLimitError
        If counting would exceed the memory limit.
    """
    _check_counting(len(population.table if isinstance(population, Instance) else population), len(qi), limit,
                    read=True)
    values = [_population_values(population, name, schema[name]) for name in qi]
    return combine_population_counts(qi, values, np.ones(len(values[0]) if values else 0, dtype=np.int64), limit)


def combine_population_counts(qi, values: list, weights: np.ndarray, limit=None) -> PopulationCounts:
    """The :class:`PopulationCounts` of combinations that may repeat (the concatenated
    counts of several partitions, or one per record), with their records: the records of
    equal combinations summed, in exact int64; within the memory limit `limit` (default:
    the one in force), else :class:`~fairanon.exceptions.MemoryLimitError`."""
    _check_counting(len(weights), len(qi), limit, read=False)
    return _grouped(qi, values, weights)


def merge_population_counts(a: PopulationCounts, b: PopulationCounts, limit=None) -> PopulationCounts:
    """The :class:`PopulationCounts` of two tables counted apart (two partitions of one),
    as :func:`combine_population_counts` of their concatenated combinations; the memory
    limit `limit` (default: the one in force) is checked before they are concatenated."""
    _check_counting(len(a.weights) + len(b.weights), len(a.qi), limit, read=False)
    return _grouped(a.qi, [np.concatenate(pair) for pair in zip(a.values, b.values)],
                    np.concatenate([a.weights, b.weights]))


def _grouped(qi, values: list, weights: np.ndarray) -> PopulationCounts:
    """:func:`combine_population_counts` once its memory is checked."""
    n = len(weights)
    coded = [pd.factorize(v) for v in values]
    combo, n_combo = group_ids([(c, len(u)) for c, u in coded])
    total = np.zeros(n_combo, dtype=np.int64)
    np.add.at(total, combo, weights)
    first = np.full(n_combo, -1, dtype=np.int64)
    first[combo[::-1]] = np.arange(n, dtype=np.int64)[::-1]
    return PopulationCounts(tuple(qi), tuple(np.asarray(v)[first] for v in values), total)


def population_class_sizes(classes: RiskClasses, population) -> np.ndarray:
    """F_j: the records of `population` whose original values every released label of
    class j covers, for every class j.

    Parameters
    ----------
    classes : RiskClasses
    population : Instance, pandas.DataFrame or PopulationCounts
        The population, with the quasi-identifier columns of the instance holding
        original values (or their counts, :func:`population_counts`). A value outside an
        attribute's domain is covered by ``*`` only.

    Notes
    -----
    The population is read as its distinct combinations of values and their records.
    When every label is a single value the counts come from one join of the classes'
    values with the combinations (O(J + C)). With generalized labels, each class counts
    the records of the combinations every label covers (bit sets over the combinations,
    ANDed per class, their weights summed by byte lookups).
    """
    schema = classes.instance.schema
    counts = population if isinstance(population, PopulationCounts) else \
        population_counts(population, schema, classes.qi)
    pop_values, weight = counts.values, counts.weights
    if not len(weight):  # an empty population covers no class (and makes no bit sets)
        return np.zeros(classes.n_classes, dtype=np.int64)
    label_of_class, exact_codes, masks = {}, [], []
    exact = True
    for name in classes.qi:
        attr = schema[name]
        label_of_class[name], labels = classes.class_codes(name)
        covers = label_covers(attr, labels)
        if attr.kind == "numeric":
            point = (covers.lo == covers.hi) & ~covers.lo_open & ~covers.hi_open
            exact &= bool(point.all())
            exact_codes.append(covers.lo)
        else:
            single = covers.single_values()
            exact &= bool((single >= 0).all())
            exact_codes.append(single)
        masks.append(covers)
    if exact:
        # The classes' values and the combinations', coded together, then one group-by.
        keyed = []
        for name, label_values, values in zip(classes.qi, exact_codes, pop_values):
            joint, uniques = pd.factorize(np.concatenate([label_values[label_of_class[name]], values]))
            keyed.append((joint, len(uniques)))
        ids, n_ids = group_ids(keyed)
        matched = np.zeros(n_ids, dtype=np.int64)
        np.add.at(matched, ids[classes.n_classes:], weight)
        return matched[ids[: classes.n_classes]]
    n_combo = len(weight)
    _check_bit_sets(schema, classes.qi, masks, pop_values, n_combo)
    # Bit sets over the combinations. Per quasi-identifier, factors whose AND is the set a
    # label covers: categorical and ordered labels one bit set each; a numeric label
    # [lo, hi] the set "value ≥ lo" AND the set "value ≤ hi", one bit set per distinct
    # population value, so that there are few sets to build however many ranges there are.
    factors = []  # (packed bit sets, row of each label)
    for name, covers, values in zip(classes.qi, masks, pop_values):
        attr = schema[name]
        value_of_combo, uniques = pd.factorize(values)
        if attr.kind == "numeric":
            distinct = np.asarray(uniques, dtype=float)
            order = np.argsort(distinct)
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            u = distinct[order]
            combo_rank = rank[value_of_combo]
            cut = np.arange(len(u) + 1)[:, None]
            at_least = np.packbits(combo_rank[None, :] >= cut, axis=1)  # row i: rank >= i
            below = np.packbits(combo_rank[None, :] < cut, axis=1)  # row j: rank < j
            lo_row = np.where(covers.lo_open, np.searchsorted(u, covers.lo, "right"),
                              np.searchsorted(u, covers.lo, "left"))
            hi_row = np.where(covers.hi_open, np.searchsorted(u, covers.hi, "left"),
                              np.searchsorted(u, covers.hi, "right"))
            factors.append((at_least, lo_row))
            factors.append((below, hi_row))
        else:
            everything = covers.mask.all(axis=1, keepdims=True)
            extended = np.hstack([covers.mask, everything])
            by_value = extended[:, np.asarray(uniques).astype(np.int64)]
            factors.append((np.packbits(by_value[:, value_of_combo], axis=1), np.arange(len(covers.labels))))
    rows_of_class = []
    for name in classes.qi:
        n_factors = 2 if schema[name].kind == "numeric" else 1
        rows_of_class.extend([label_of_class[name].astype(np.int64)] * n_factors)
    # A class's count is Σ_b 2^b · popcount(AND of its factors & plane b), plane b the
    # combinations whose multiplicity has bit b set; bit sets are read as 64-bit words.
    n_words = (n_combo + 63) // 64
    factors = [(_words(bits, n_words), rows) for bits, rows in factors]
    planes = [(b, _words(np.packbits(((weight >> b) & 1).astype(bool))[None, :], n_words)[0])
              for b in range(int(weight.max()).bit_length() if n_combo else 0)]
    out = np.zeros(classes.n_classes, dtype=np.int64)
    step = max(1, (1 << 18) // n_words)
    for start in range(0, classes.n_classes, step):
        stop = min(start + step, classes.n_classes)
        acc = None
        for (words, row_of_label), labels in zip(factors, rows_of_class):
            part = words[row_of_label[labels[start:stop]]]
            acc = part if acc is None else np.bitwise_and(acc, part, out=acc)
        for b, plane in planes:
            out[start:stop] += _popcount(acc & plane[None, :]).sum(axis=1, dtype=np.int64) << b
    return out


def _check_bit_sets(schema, qi, masks: list, pop_values: tuple, n_combo: int) -> None:
    """Refuse, above the memory limit in force, the bit sets over the population's
    combinations that :func:`population_class_sizes` builds for generalized labels: per
    row (a categorical or ordered label; two per distinct population value of a numeric
    attribute, plus two), a byte per combination before packing and the packed bits twice
    (as bytes, then as padded 64-bit words)."""
    rows = 0
    for name, covers, values in zip(qi, masks, pop_values):
        rows += 2 * (len(pd.unique(values)) + 1) if schema[name].kind == "numeric" else len(covers.labels)
    need = rows * (n_combo + 2 * 8 * ((n_combo + 63) // 64))
    check_memory(need, f"the bit sets of {rows} labels and population values over the population table's "
                 f"{n_combo} distinct quasi-identifier combinations", "pass a smaller population table",
                 caller="risk")


def _words(packed: np.ndarray, n_words: int) -> np.ndarray:
    """Rows of packed bits (uint8) as rows of n_words 64-bit words, zero-padded."""
    out = np.zeros((packed.shape[0], n_words * 8), dtype=np.uint8)
    out[:, : packed.shape[1]] = packed
    return out.view(np.uint64)


_BYTE_COUNTS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits of each 64-bit word."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(words)
    return _BYTE_COUNTS[words.view(np.uint8)].reshape(*words.shape, 8).sum(axis=-1)


@dataclass(frozen=True)
class JournalistRisk:
    """Journalist risk against a population table, exact.

    Attributes
    ----------
    population_size : int
        N, the records of the population table.
    highest : Fraction
        max_j 1/F_j.
    records_at_highest, classes_at_highest : int
    witness : dict
        One class at the highest risk: its released values, f_j and F_j.
    marketer : Fraction
        (1/n) Σ_j f_j / F_j, the expected share of the table's records re-identified.
    records_above : int or None
        Records whose class has 1/F_j strictly above the threshold.
    """

    population_size: int
    highest: Fraction
    records_at_highest: int
    classes_at_highest: int
    witness: dict
    marketer: Fraction
    threshold: Fraction | None = None
    records_above: int | None = None

    def to_dict(self) -> dict:
        return {
            "source": "population table",
            "population_size": self.population_size,
            "highest": _frac(self.highest),
            "records_at_highest": self.records_at_highest,
            "classes_at_highest": self.classes_at_highest,
            "witness": self.witness,
            "marketer": _frac(self.marketer),
            "threshold": None if self.threshold is None else _frac(self.threshold),
            "records_above_threshold": self.records_above,
        }


def journalist_risk(classes: RiskClasses, population, *, threshold=Fraction(1, 5)) -> JournalistRisk:
    """Journalist and marketer risk of a regrouped table against a population table.

    Raises
    ------
    InvalidParameterError
        If `population` is neither an Instance nor a DataFrame, or if it holds fewer
        records matching a class than the table itself (the table must be a sample of
        it).
    """
    if not isinstance(population, (Instance, pd.DataFrame, PopulationCounts)):
        raise InvalidParameterError(
            f"The 'population' parameter of journalist_risk must be an Instance or a DataFrame. "
            f"Got {type(population).__name__} instead."
        )
    if not isinstance(population, PopulationCounts):
        population = population_counts(population, classes.instance.schema, classes.qi)
    big = population_class_sizes(classes, population)
    sizes = classes.sizes
    short = np.flatnonzero(big < sizes)
    if len(short):
        g = int(short[0])
        raise InvalidParameterError(
            f"The population holds {int(big[g])} record(s) matching class {classes.class_labels(g)} but the table "
            f"holds {int(sizes[g])}: the population must contain the table's records."
        )
    smallest = int(big.min())
    at = big == smallest
    witness = _witness(classes, int(np.argmax(at)), population_size=smallest)
    pairs, counts = np.unique(np.stack([sizes, big]), axis=1, return_counts=True)
    marketer = sum((Fraction(int(f) * int(c), int(F)) for (f, F), c in zip(pairs.T, counts)), Fraction(0))
    t = above = None
    if threshold is not None:
        t = check_fraction(threshold, "threshold", "journalist_risk", low=0, high=1)
        above = int(sizes[_above(big, t)].sum())
    return JournalistRisk(
        population_size=population.size,
        highest=Fraction(1, smallest),
        records_at_highest=int(sizes[at].sum()),
        classes_at_highest=int(at.sum()),
        witness=witness,
        marketer=marketer / classes.n_records,
        threshold=t,
        records_above=above,
    )
