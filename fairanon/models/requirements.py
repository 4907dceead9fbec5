"""Requirements as plain declarative objects.

Each requirement checks only its own arguments when built (thresholds become exact
rationals); checks that need the data run in :func:`fairanon.anonymize` and in the
verifier. Each states what algorithms may rely on: ``union_monotone`` (if two sets of
records satisfy it, so does their union, so top-down splitting is sound) and
``needs_sensitive`` (it reads a sensitive or decision attribute).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from .._validation import check_fraction, check_int, check_option
from ..exceptions import InvalidParameterError
from ..instances.hierarchy import SUPPRESSED
from ..instances.texts import same_number_hint, value_text

__all__ = [
    "Requirement",
    "KAnonymity",
    "LDiversity",
    "TCloseness",
    "DiversityConstraint",
    "AlphaProtection",
    "MultiplicativeTCloseness",
    "StochasticTCloseness",
    "AverageRisk",
    "SampleUniqueness",
    "PopulationUniqueness",
    "RISK_REQUIREMENTS",
    "MEASURES",
    "MEASURE_ALIASES",
    "requirement_from_spec",
]


class Requirement:
    """Base class; subclasses are frozen dataclasses."""

    union_monotone: ClassVar[bool] = True
    needs_sensitive: ClassVar[bool] = False
    kind: ClassVar[str] = ""

    def to_spec(self) -> dict:
        """The job-file form of this requirement (inverse of :func:`requirement_from_spec`)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, Fraction):
                value = str(value)
            elif isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[f.name] = value
        return {self.kind: out}


@dataclass(frozen=True)
class KAnonymity(Requirement):
    """k-anonymity: every released equivalence class has at least k records [1]_.

    >>> str(KAnonymity(5))
    '5-anonymity'

    References
    ----------
    .. [1] L. Sweeney. k-anonymity: a model for protecting privacy. IJUFKS 10(5), 2002.
    """

    k: int
    kind: ClassVar[str] = "k_anonymity"

    def __post_init__(self):
        object.__setattr__(self, "k", check_int(self.k, "k", "KAnonymity", low=1))

    def __str__(self) -> str:
        return f"{self.k}-anonymity"


L_VARIANTS = ("distinct", "entropy", "recursive")


@dataclass(frozen=True)
class LDiversity(Requirement):
    """l-diversity of the sensitive attribute in every equivalence class [1]_.

    Parameters
    ----------
    l : int or rational
        At least 1. Entropy l-diversity accepts a rational l; the others an int.
    variant : {"distinct", "entropy", "recursive"}, default="distinct"
        distinct: at least l distinct values; entropy: the entropy of the class's value
        distribution is at least log(l); recursive (c, l): r_1 < c (r_l + ... + r_m) for
        the value counts r_1 >= r_2 >= ... >= r_m.
    c : rational, optional
        The constant of recursive (c, l)-diversity (required for that variant).
    attribute : str, optional
        The protected attribute (default: every sensitive attribute, else the decision).

    >>> str(LDiversity(3, variant="recursive", c=2))
    'recursive (2,3)-diversity'

    References
    ----------
    .. [1] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam. l-Diversity:
       privacy beyond k-anonymity. ACM TKDD 1(1), 2007.
    """

    l: Any
    variant: str = "distinct"
    c: Any = None
    attribute: str | None = None
    needs_sensitive: ClassVar[bool] = True
    kind: ClassVar[str] = "l_diversity"

    def __post_init__(self):
        check_option(self.variant, "variant", "LDiversity", L_VARIANTS)
        if self.variant == "entropy":
            l_value = check_fraction(self.l, "l", "LDiversity", low=1)
            if l_value.denominator == 1:
                l_value = int(l_value)
        else:
            l_value = check_int(self.l, "l", "LDiversity", low=1)
        object.__setattr__(self, "l", l_value)
        if self.variant == "recursive":
            if self.c is None:
                raise InvalidParameterError("The 'c' parameter of LDiversity is required for variant='recursive'.")
            object.__setattr__(self, "c", check_fraction(self.c, "c", "LDiversity", low=0, low_open=True))
        elif self.c is not None:
            raise InvalidParameterError(
                f"The 'c' parameter of LDiversity applies only to variant='recursive'; got variant={self.variant!r}."
            )

    def __str__(self) -> str:
        on = f" of {self.attribute}" if self.attribute else ""
        if self.variant == "recursive":
            return f"recursive ({self.c},{self.l})-diversity{on}"
        prefix = "" if self.variant == "distinct" else "entropy "
        return f"{prefix}{self.l}-diversity{on}"


DISTANCES = ("equal", "ordered", "hierarchical")
#: Where the ordered ground distance places the values (see :class:`TCloseness`).
ORDERED_DOMAINS = ("present", "declared")


@dataclass(frozen=True)
class TCloseness(Requirement):
    """t-closeness: in every class the Earth Mover's Distance between the class's
    distribution of the sensitive attribute and the whole table's is at most t [1]_.

    Parameters
    ----------
    t : rational in [0, 1]
    distance : {"equal", "ordered", "hierarchical"}, default="equal"
        Ground distance of the EMD: equal (categorical; the variational distance),
        ordered (numeric or ordered attributes; |i - j| / (m - 1) between the i-th
        and j-th of m ordered values, see `ordered_domain`) or hierarchical (height of
        the lowest common ancestor in the attribute's hierarchy). For a binary
        attribute all three equal Ruggieri's |p - p*|.
    attribute : str, optional
        As in :class:`LDiversity`.
    ordered_domain : {"present", "declared"}, default="present"
        Which values the ordered distance runs over: the values present in the table
        (m of them, evenly spaced), or the attribute's declared ``order`` (every value
        of the domain, absent ones leaving gaps), which is Li et al.'s definition. The
        two agree when every declared value occurs; the default keeps the reading a
        numeric attribute (which declares no domain) can have. Only ``distance="ordered"``
        depends on it. See docs/papers.md, "Ordered EMD: the values present or the
        domain".

    >>> TCloseness(0.2, distance="ordered").t
    Fraction(1, 5)
    >>> str(TCloseness("0.15"))
    '0.15-closeness (equal EMD)'
    >>> str(TCloseness("0.3", distance="ordered", ordered_domain="declared"))
    '0.3-closeness (ordered EMD over the declared domain)'

    References
    ----------
    .. [1] N. Li, T. Li, S. Venkatasubramanian. t-Closeness: privacy beyond k-anonymity
       and l-diversity. ICDE 2007.
    """

    t: Any
    distance: str = "equal"
    attribute: str | None = None
    ordered_domain: str = "present"
    needs_sensitive: ClassVar[bool] = True
    kind: ClassVar[str] = "t_closeness"

    def __post_init__(self):
        object.__setattr__(self, "t", check_fraction(self.t, "t", "TCloseness", low=0, high=1))
        check_option(self.distance, "distance", "TCloseness", DISTANCES)
        check_option(self.ordered_domain, "ordered_domain", "TCloseness", ORDERED_DOMAINS)
        if self.ordered_domain != "present" and self.distance != "ordered":
            raise InvalidParameterError(
                f"The 'ordered_domain' parameter of TCloseness applies only to distance='ordered'; "
                f"got distance={self.distance!r}."
            )

    def __str__(self) -> str:
        on = f" of {self.attribute}" if self.attribute else ""
        over = " over the declared domain" if self.ordered_domain == "declared" else ""
        return f"{_show(self.t)}-closeness ({self.distance} EMD{over}){on}"


def _show(x: Fraction) -> str:
    """A rational as a short decimal when exact, else p/q."""
    f = float(x)
    if Fraction(repr(f)) == x:
        return repr(f).removesuffix(".0") if f.is_integer() else repr(f)
    return str(x)


_CONSTRAINT_RE = re.compile(r"^\s*([^()\[\]]+?)\s*\(\s*(.+?)\s*\)\s*\[\s*(\d+)\s*,\s*(\d+)\s*\]\s*$")


@dataclass(frozen=True)
class DiversityConstraint(Requirement):
    """A diversity constraint (X[t], lower, upper) [1]_ (Def. 2.3): the number of released
    records whose X cells show exactly the target values t (not generalized, not
    suppressed) lies in [lower, upper].

    Parameters
    ----------
    target : mapping of attribute -> value, or sequence of (attribute, value) pairs
    lower, upper : int
        0 <= lower <= upper.

    Not union-monotone: a top-down algorithm cannot enforce it by checking splits.

    >>> sigma = DiversityConstraint.parse("ETH(Asian) [2, 5]")
    >>> sigma, sigma.target
    (DiversityConstraint(ETH[Asian], 2, 5), (('ETH', 'Asian'),))

    References
    ----------
    .. [1] M. Milani, Y. Huang, F. Chiang. Preserving diversity in anonymized data. EDBT 2021.
    """

    target: Any
    lower: int
    upper: int
    union_monotone: ClassVar[bool] = False
    kind: ClassVar[str] = "diversity"

    def __post_init__(self):
        target = self.target
        if isinstance(target, Mapping):
            target = tuple(target.items())
        try:
            target = tuple((str(a), value_text(v)) for a, v in target)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                "The 'target' parameter of DiversityConstraint must map attributes to values, "
                f"e.g. {{'ETH': 'Asian'}}. Got {self.target!r} instead."
            ) from None
        if not target or len({a for a, _ in target}) != len(target):
            raise InvalidParameterError(
                f"The 'target' parameter of DiversityConstraint must name each attribute once. Got {self.target!r} instead."
            )
        object.__setattr__(self, "target", target)
        lower = check_int(self.lower, "lower", "DiversityConstraint", low=0)
        upper = check_int(self.upper, "upper", "DiversityConstraint", low=0)
        if lower > upper:
            raise InvalidParameterError(
                f"DiversityConstraint {self._label()} has lower={lower} > upper={upper}: no count can satisfy it."
            )
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    def _label(self) -> str:
        attrs = ",".join(a for a, _ in self.target)
        values = ",".join(v for _, v in self.target)
        return f"{attrs}[{values}]"

    @classmethod
    def parse(cls, text: str) -> "DiversityConstraint":
        """Read ``attr(value) [lower, upper]`` (the DIVA repository's format; whitespace free)."""
        match = _CONSTRAINT_RE.match(str(text))
        if not match:
            raise InvalidParameterError(
                f"Cannot read diversity constraint {text!r}; expected 'attribute(value) [lower, upper]'."
            )
        attr, value, lower, upper = match.groups()
        return cls({attr.strip(): value}, int(lower), int(upper))

    def __str__(self) -> str:
        return f"diversity {self._label()} in [{self.lower}, {self.upper}]"

    def __repr__(self) -> str:
        return f"DiversityConstraint({self._label()}, {self.lower}, {self.upper})"

    def to_spec(self) -> dict:
        return {self.kind: {"target": dict(self.target), "lower": self.lower, "upper": self.upper}}


#: Discrimination measures of Ruggieri (Fig. 1, §4.3) and whether larger means more
#: discrimination ("upper": protective iff f <= alpha) or smaller ("lower": f >= alpha).
MEASURES = {"RD": "upper", "RR": "upper", "OR": "upper", "ED": "upper", "ER": "upper", "RC": "lower", "EC": "lower"}
#: Names used by Pedreschi, Ruggieri, Turini and by Hajian et al. for the same measures.
MEASURE_ALIASES = {
    "slift": "RR",
    "elift": "ER",
    "slift_d": "RD",
    "elift_d": "ED",
    "slift_c": "RC",
    "elift_c": "EC",
    "olift": "OR",
    "risk_difference": "RD",
    "risk_ratio": "RR",
    "odds_ratio": "OR",
}


@dataclass(frozen=True)
class AlphaProtection(Requirement):
    """alpha-protection: every context of possible discrimination (itemset over the
    released values of the non-protected quasi-identifiers) has f <= alpha, or f >= alpha
    for the "chance" measures RC and EC [1]_ (Defs. 4-5).

    Parameters
    ----------
    measure : {"RD", "RR", "RC", "OR", "ED", "ER", "EC"} or an alias
        ``slift`` = RR, ``elift`` = ER, ``slift_d`` = RD, ``elift_d`` = ED, ``slift_c`` = RC,
        ``elift_c`` = EC, ``olift`` = OR.
    alpha : rational
    min_support : int, optional
        Only contexts with at least this many records are checked (the relaxed variant of
        Ruggieri §3.2; monotone guarantees hold only without it).
    strict : bool, default=False
        Hajian et al.'s reading: protective iff f < alpha (f > alpha for RC/EC).

    Notes
    -----
    Proportions use Ruggieri's tokenism extension (an empty protected or unprotected
    side counts with the global negative rate p-), and x/0 = inf, 0/0 = 1 in ratios.

    >>> str(AlphaProtection("slift", 1.25)), str(AlphaProtection("RD", "1/10", strict=True))
    ('1.25-protection (RR)', '0.1-protection (RD, strict)')

    References
    ----------
    .. [1] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014.
    """

    measure: str
    alpha: Any
    min_support: int | None = None
    strict: bool = False
    needs_sensitive: ClassVar[bool] = True
    union_monotone: ClassVar[bool] = False
    kind: ClassVar[str] = "alpha_protection"

    def __post_init__(self):
        if not isinstance(self.measure, str):
            raise InvalidParameterError(
                "The 'measure' parameter of AlphaProtection must be a name from "
                f"{sorted(MEASURES)} or an alias. Got {self.measure!r} instead."
            )
        name = MEASURE_ALIASES.get(str(self.measure), MEASURE_ALIASES.get(str(self.measure).lower(), self.measure))
        name = str(name).upper() if str(name).upper() in MEASURES else name
        check_option(name, "measure", "AlphaProtection", set(MEASURES) | set(MEASURE_ALIASES))
        object.__setattr__(self, "measure", MEASURE_ALIASES.get(name, name))
        object.__setattr__(self, "alpha", check_fraction(self.alpha, "alpha", "AlphaProtection"))
        if self.min_support is not None:
            object.__setattr__(self, "min_support", check_int(self.min_support, "min_support", "AlphaProtection", low=1))
        if not isinstance(self.strict, bool):
            raise InvalidParameterError(f"The 'strict' parameter of AlphaProtection must be a bool. Got {self.strict!r} instead.")

    @property
    def larger_is_worse(self) -> bool:
        return MEASURES[self.measure] == "upper"

    def __str__(self) -> str:
        # A strict and a non-strict requirement of the same alpha are two checks of a
        # report, each found by its name.
        support = f", support >= {self.min_support}" if self.min_support else ""
        strict = ", strict" if self.strict else ""
        return f"{_show(self.alpha)}-protection ({self.measure}{support}{strict})"


@dataclass(frozen=True)
class MultiplicativeTCloseness(Requirement):
    """t-closeness with the multiplicative distance of Domingo-Ferrer and Soria-Comas
    [1]_ (Def. 4): in every class, each released value's share is within a factor t of
    its share in the whole table (Prop. 2), so a value the class lacks gives infinity.

    The target attribute may be released coarsened into disjoint buckets (DS §6,
    e.g. salary ranges ``[1000-2000]``): the verifier then checks that its released
    labels are truthful and pairwise disjoint, and measures the distance over them.

    Parameters
    ----------
    t : rational, at least 1
    attribute : str, optional
        As in :class:`LDiversity`.

    >>> str(MultiplicativeTCloseness("3/2"))
    '1.5-closeness (multiplicative)'

    References
    ----------
    .. [1] J. Domingo-Ferrer, J. Soria-Comas. From t-closeness to differential privacy
       and vice versa in data anonymization. Knowledge-Based Systems 74, 2015.
    """

    t: Any
    attribute: str | None = None
    needs_sensitive: ClassVar[bool] = True
    masks_target: ClassVar[bool] = True
    kind: ClassVar[str] = "multiplicative_t_closeness"

    def __post_init__(self):
        object.__setattr__(self, "t", check_fraction(self.t, "t", "MultiplicativeTCloseness", low=1))

    def __str__(self) -> str:
        on = f" of {self.attribute}" if self.attribute else ""
        return f"{_show(self.t)}-closeness (multiplicative){on}"


@dataclass(frozen=True)
class StochasticTCloseness(Requirement):
    """Stochastic t-closeness through an epsilon-DP mask of the target attribute
    (Domingo-Ferrer and Soria-Comas [1]_, Def. 3, Prop. 1).

    Every record's value is masked independently by a mechanism whose output
    probabilities for any two input values differ by a factor e^epsilon at most:
    Laplace noise of scale (U - L)/epsilon for a numeric attribute with public bounds
    [L, U], m-ary randomized response for the others. Then every class E is
    stochastically t_E-close with t_E = (|E| + (N - |E|) e^epsilon) / N (Prop. 1 with
    the correction of docs/papers.md, DS-1), and the requirement holds when every
    t_E <= t. The masked attribute is released perturbed.

    Parameters
    ----------
    t : rational, at least 1
    epsilon : rational, > 0
    bounds : (L, U) or mapping of attribute -> (L, U), optional
        Public bounds of numeric attributes (never taken from the data; P23).
    attribute : str, optional
        As in :class:`LDiversity`.
    joint : bool, default=False
        Several attributes masked jointly (one epsilon for all: Laplace scale
        Σ_j (U_j - L_j) / epsilon, DS §4 approach i) or each with its own epsilon
        (approach ii).

    >>> str(StochasticTCloseness(3, 1, bounds=(0, 100)))
    'stochastic 3-closeness (epsilon=1)'

    References
    ----------
    .. [1] J. Domingo-Ferrer, J. Soria-Comas. From t-closeness to differential privacy
       and vice versa in data anonymization. Knowledge-Based Systems 74, 2015.
    """

    t: Any
    epsilon: Any
    bounds: Any = None
    attribute: str | None = None
    joint: bool = False
    needs_sensitive: ClassVar[bool] = True
    masks_target: ClassVar[bool] = True
    kind: ClassVar[str] = "stochastic_t_closeness"

    def __post_init__(self):
        caller = "StochasticTCloseness"
        object.__setattr__(self, "t", check_fraction(self.t, "t", caller, low=1))
        object.__setattr__(self, "epsilon", check_fraction(self.epsilon, "epsilon", caller, low=0, low_open=True))
        if not isinstance(self.joint, bool):
            raise InvalidParameterError(f"The 'joint' parameter of {caller} must be a bool. Got {self.joint!r} instead.")
        bounds = self.bounds
        if bounds is None:
            return
        pairs = dict(bounds) if isinstance(bounds, Mapping) else {None: bounds}
        checked = []
        for name, pair in pairs.items():
            try:
                low, high = pair
            except (TypeError, ValueError):
                raise InvalidParameterError(
                    f"The 'bounds' parameter of {caller} must be a pair (L, U) or map attributes to "
                    f"pairs. Got {bounds!r} instead."
                ) from None
            low = check_fraction(low, "bounds", caller)
            high = check_fraction(high, "bounds", caller)
            if not low < high:
                raise InvalidParameterError(
                    f"The 'bounds' parameter of {caller} needs L < U. Got {pair!r} instead."
                )
            checked.append((None if name is None else str(name), (low, high)))
        value = checked[0][1] if checked[0][0] is None else tuple(checked)
        object.__setattr__(self, "bounds", value)

    def bounds_of(self, name: str) -> tuple[Fraction, Fraction] | None:
        """The public bounds of attribute `name`, if given."""
        if self.bounds is None:
            return None
        if isinstance(self.bounds[0], Fraction):
            return self.bounds
        return dict(self.bounds).get(name)

    def to_spec(self) -> dict:
        out = {"t": str(self.t), "epsilon": str(self.epsilon)}
        if self.bounds is not None:
            if isinstance(self.bounds[0], Fraction):
                out["bounds"] = [str(v) for v in self.bounds]
            else:
                out["bounds"] = {name: [str(v) for v in pair] for name, pair in self.bounds}
        if self.attribute is not None:
            out["attribute"] = self.attribute
        if self.joint:
            out["joint"] = True
        return {self.kind: out}

    def __str__(self) -> str:
        on = f" of {self.attribute}" if self.attribute else ""
        return f"stochastic {_show(self.t)}-closeness (epsilon={_show(self.epsilon)}){on}"


@dataclass(frozen=True)
class AverageRisk(Requirement):
    """The average re-identification risk is at most r: J/n <= r for the J released
    classes of the n records, the average prosecutor (and marketer) risk [1]_.

    Checked from class sizes alone (the suppressed block is one class, docs/risk.md); a
    release with classes of at least ceil(1/r) records meets it, and so may releases
    with some smaller classes.

    >>> str(AverageRisk("1/10"))
    'average risk <= 0.1'

    References
    ----------
    .. [1] K. El Emam, F. K. Dankar. Protecting privacy using k-anonymity. JAMIA 15(5),
       2008.
    """

    r: Any
    union_monotone: ClassVar[bool] = False
    kind: ClassVar[str] = "average_risk"

    def __post_init__(self):
        object.__setattr__(self, "r", check_fraction(self.r, "r", "AverageRisk", low=0, high=1, low_open=True))

    def __str__(self) -> str:
        return f"average risk <= {_show(self.r)}"


@dataclass(frozen=True)
class SampleUniqueness(Requirement):
    """At most a share u of the records are sample uniques (alone in their class).

    >>> str(SampleUniqueness(0))
    'sample uniques <= 0 of the records'
    """

    u: Any
    union_monotone: ClassVar[bool] = False
    kind: ClassVar[str] = "sample_uniqueness"

    def __post_init__(self):
        object.__setattr__(self, "u", check_fraction(self.u, "u", "SampleUniqueness", low=0, high=1))

    def __str__(self) -> str:
        return f"sample uniques <= {_show(self.u)} of the records"


#: The population-uniqueness models a PopulationUniqueness requirement may name.
POPULATION_MODELS = ("dankar", "pitman", "zayatz", "snb")


@dataclass(frozen=True)
class PopulationUniqueness(Requirement):
    """At most a share u of the population are population uniques, as estimated from the
    released classes by a named model (Pitman, Zayatz, SNB or Dankar et al.'s rule; see
    :mod:`fairanon.models.risk.uniqueness`) for a population given by a sampling fraction
    or a size. A model that cannot be fitted to a release fails the requirement.

    >>> str(PopulationUniqueness("1/100", sampling_fraction="1/10"))
    'population uniques <= 0.01 (dankar, sampling fraction 0.1)'
    """

    u: Any
    model: str = "dankar"
    sampling_fraction: Any = None
    population_size: Any = None
    union_monotone: ClassVar[bool] = False
    kind: ClassVar[str] = "population_uniqueness"

    def __post_init__(self):
        caller = "PopulationUniqueness"
        object.__setattr__(self, "u", check_fraction(self.u, "u", caller, low=0, high=1))
        check_option(self.model, "model", caller, POPULATION_MODELS)
        if (self.sampling_fraction is None) == (self.population_size is None):
            raise InvalidParameterError(
                f"{caller} needs exactly one of 'sampling_fraction' and 'population_size'; got "
                f"{self.sampling_fraction!r} and {self.population_size!r}."
            )
        if self.sampling_fraction is not None:
            object.__setattr__(self, "sampling_fraction", check_fraction(
                self.sampling_fraction, "sampling_fraction", caller, low=0, high=1, low_open=True))
        else:
            object.__setattr__(self, "population_size", check_int(self.population_size, "population_size",
                                                                  caller, low=1))

    def __str__(self) -> str:
        where = (f"sampling fraction {_show(self.sampling_fraction)}" if self.sampling_fraction is not None
                 else f"population {self.population_size}")
        return f"population uniques <= {_show(self.u)} ({self.model}, {where})"


#: The requirements on re-identification risk (checked from the released class sizes).
RISK_REQUIREMENTS = (AverageRisk, SampleUniqueness, PopulationUniqueness)


_KINDS = {cls.kind: cls for cls in (KAnonymity, LDiversity, TCloseness, DiversityConstraint, AlphaProtection)}
_KIND_ALIASES = {
    "k": "k_anonymity",
    "kanonymity": "k_anonymity",
    "l": "l_diversity",
    "ldiversity": "l_diversity",
    "t": "t_closeness",
    "tcloseness": "t_closeness",
    "diversity_constraint": "diversity",
    "alpha": "alpha_protection",
    "alphaprotection": "alpha_protection",
}
_KINDS.update({cls.kind: cls for cls in (MultiplicativeTCloseness, StochasticTCloseness)})
_KINDS.update({cls.kind: cls for cls in RISK_REQUIREMENTS})


def requirement_from_spec(spec: Mapping | str) -> Requirement:
    """Build a requirement from its job-file form.

    >>> requirement_from_spec({"k_anonymity": {"k": 5}})
    KAnonymity(k=5)
    >>> requirement_from_spec({"diversity": "ETH(Asian) [2, 5]"})
    DiversityConstraint(ETH[Asian], 2, 5)
    """
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise InvalidParameterError(
            f"A requirement must be a one-key mapping such as {{'k_anonymity': {{'k': 5}}}}; got {spec!r}."
        )
    (key, args), = spec.items()
    kind = _KIND_ALIASES.get(str(key).lower(), str(key).lower())
    if kind not in _KINDS:
        raise InvalidParameterError(
            f"Unknown requirement {key!r}; known: {', '.join(sorted(_KINDS))}."
        )
    cls = _KINDS[kind]
    if cls is DiversityConstraint and isinstance(args, str):
        return DiversityConstraint.parse(args)
    if isinstance(args, Mapping):
        try:
            return cls(**args)
        except InvalidParameterError:  # the class's own message (it is a TypeError as well)
            raise
        except TypeError as exc:
            raise InvalidParameterError(f"Bad arguments for {key!r}: {exc}.") from None
    if isinstance(args, (int, float, str)) and cls in (KAnonymity, LDiversity, TCloseness):
        return cls(args)
    raise InvalidParameterError(f"Bad arguments for requirement {key!r}: {args!r}.")



def requirement_targets(schema, requirement: Requirement) -> tuple[str, ...]:
    """The attributes an l-diversity or t-closeness requirement protects in `schema`."""
    from ..exceptions import IncompatibleRequirementError

    if requirement.attribute is not None:
        if requirement.attribute not in schema:
            raise IncompatibleRequirementError(
                f"{requirement} names attribute {requirement.attribute!r}, which the instance does not have."
            )
        if schema[requirement.attribute].role not in ("sensitive", "decision"):
            raise IncompatibleRequirementError(
                f"{requirement} names {requirement.attribute!r}, whose role is "
                f"{schema[requirement.attribute].role!r}; it must be 'sensitive' or 'decision'."
            )
        return (requirement.attribute,)
    targets = schema.default_targets()
    if not targets:
        raise IncompatibleRequirementError(
            f"{requirement} needs a sensitive (or decision) attribute, and the instance has none."
        )
    return targets


def _parses_as_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def validate_requirements(
    instance, requirements, *, caller: str = "anonymize", sizes: bool = True, at_least_one: bool = False
) -> tuple[Requirement, ...]:
    """Check requirements against an instance before any work starts.

    With ``sizes=False`` (the verifier's use) a k larger than the table is not an error:
    the check simply fails. With ``at_least_one=True`` (:func:`fairanon.anonymize`'s use)
    an empty list is refused: with nothing to enforce, a method would release the table
    nearly as it is.

    Raises
    ------
    InvalidParameterError
        Not a requirement, or k larger than the table.
    IncompatibleRequirementError
        A requirement refers to an attribute the instance lacks or cannot use.
    SchemaError
        A diversity constraint targets a value outside its attribute's domain.
    """
    from ..exceptions import IncompatibleRequirementError, SchemaError

    if isinstance(requirements, Requirement):
        requirements = [requirements]
    try:
        requirements = tuple(requirements)
    except TypeError:
        raise InvalidParameterError(
            f"The 'requirements' parameter of {caller} must be a list of requirements. Got {requirements!r} instead."
        ) from None
    if at_least_one and not requirements:
        raise InvalidParameterError(
            f"The 'requirements' parameter of {caller} is empty: with nothing to enforce the release "
            "would be the table nearly as it is. Pass at least one requirement, e.g. "
            "[fa.KAnonymity(5)] (also LDiversity, TCloseness, DiversityConstraint, AlphaProtection)."
        )
    schema = instance.schema
    for req in requirements:
        if not isinstance(req, Requirement):
            raise InvalidParameterError(
                f"The 'requirements' parameter of {caller} must hold requirement objects "
                f"(KAnonymity, LDiversity, ...). Got {req!r} instead."
            )
        if sizes and isinstance(req, KAnonymity) and req.k > instance.n_rows:
            raise InvalidParameterError(
                f"k={req.k} exceeds the {instance.n_rows} rows of instance {instance.name!r}."
            )
        if isinstance(req, (LDiversity, TCloseness)):
            for name in requirement_targets(schema, req):
                attr = schema[name]
                if isinstance(req, TCloseness) and req.distance == "hierarchical" and attr.hierarchy is None:
                    raise IncompatibleRequirementError(
                        f"{req} needs a hierarchy on {name!r}, which has none."
                    )
                if isinstance(req, TCloseness) and req.distance == "ordered" and attr.kind == "categorical":
                    raise IncompatibleRequirementError(
                        f"{req} needs an order on {name!r}; declare it numeric or ordered, or use distance='equal'."
                    )
                if isinstance(req, TCloseness) and req.ordered_domain == "declared" and attr.kind != "ordered":
                    raise IncompatibleRequirementError(
                        f"{req} reads the declared order of {name!r}, which is {attr.kind} and declares none; "
                        "declare it ordered with an order, or use ordered_domain='present'."
                    )
        if isinstance(req, DiversityConstraint):
            for name, value in req.target:
                if name not in schema or schema[name].role in ("identifier", "ignore", "weight"):
                    raise IncompatibleRequirementError(
                        f"{req!r} targets {name!r}, which is not a released attribute of instance {instance.name!r}."
                    )
                if value == SUPPRESSED:
                    # A released '*' is a suppressed cell, never a value shown: the count
                    # would take one for the other.
                    raise SchemaError(
                        f"{req!r}: {SUPPRESSED!r} labels a suppressed cell, never a value of "
                        f"{name!r} shown: a diversity constraint cannot count it.")
                domain = schema[name].domain
                if domain is not None and value not in domain:
                    raise SchemaError(f"{req!r}: {value!r} is not a value of {name!r}"
                                      f"{same_number_hint([value], domain, 'its domain')}.")
                if domain is None and not _parses_as_number(value):
                    raise SchemaError(
                        f"{req!r}: {value!r} is not a number, and {name!r} is numeric."
                    )
        if isinstance(req, AlphaProtection):
            missing = [r for r in ("protected", "decision") if getattr(schema, r) is None]
            if missing:
                raise IncompatibleRequirementError(
                    f"{req} needs a {' and a '.join(missing)} attribute; instance {instance.name!r} has none."
                )
    return requirements
