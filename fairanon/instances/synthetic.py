"""Synthetic population tables of any size, for tests and benchmarks.

:func:`population` draws a census-like table (age, a zip code, sex, education, ...,
race as the protected attribute, a disease as the sensitive attribute and a binary
decision that depends on race) from seeded numpy generators. Every column is made of
integer codes (pandas categoricals for categories) and there is no per-row Python
code: 10 million rows take a few seconds, and the table about 170 MB.

It plays the part of the Pop-Syn data of DIVA's experiments (Zipfian, uniform or
Gaussian value distributions), whose generator is not published; the columns and
parameters here are fairanon's own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import check_fraction, check_int, check_option, check_random_state
from ..exceptions import InvalidParameterError
from .datasets import RECORD_ID, digit_hierarchy
from .hierarchy import Hierarchy, IntervalHierarchy
from .instance import Instance
from .schema import Attribute, Schema

__all__ = ["DISTRIBUTIONS", "QI_POOL", "population"]

#: Value distributions :func:`population` can draw from.
DISTRIBUTIONS = ("zipf", "uniform", "gaussian")
#: The generalizable quasi-identifiers in the order :func:`population` adds them.
QI_POOL = ("age", "zip", "sex", "education", "marital", "occupation", "hours")

_AGES = np.arange(17, 91)  # 17..90, as in UCI Adult
_HOURS = np.arange(1, 100)  # hours worked per week, 1..99
_EDUCATION = {
    "*": {
        "basic": ["none", "primary", "lower-secondary"],
        "secondary": ["upper-secondary", "vocational"],
        "tertiary": ["bachelor", "master", "doctorate"],
    }
}
_MARITAL = {
    "*": {
        "in-union": ["married", "partnered"],
        "single": ["never-married"],
        "formerly-married": ["divorced", "separated", "widowed"],
    }
}
_OCCUPATION = {
    "*": {
        "white-collar": ["manager", "professional", "technician", "clerk", "sales"],
        "blue-collar": ["craft", "operator", "driver", "labourer", "farmer"],
        "service": ["personal-service", "protective-service"],
    }
}
_DISEASE = {
    "*": {
        "respiratory": ["flu", "bronchitis", "pneumonia"],
        "digestive": ["gastritis", "ulcer", "colitis"],
        "circulatory": ["hypertension", "heart-disease"],
        "chronic": ["diabetes", "cancer"],
    }
}
_RACES = ("White", "Black", "Asian", "Native", "Other")
_NONWHITE_SPLIT = np.array([0.45, 0.2, 0.1, 0.25])  # shares of the non-White values
_DECISIONS = ("denied", "granted")
_ZIP_BASE = 10000
# Each column draws from its own stream, so a column does not change when n_qi does.
_STREAMS = ("zip_ranks",) + QI_POOL + ("race", "disease", "decision")


def _probabilities(m: int, distribution: str, exponent: float) -> np.ndarray:
    """Probabilities of the m domain positions: Zipf by position, flat, or a discretized
    normal centred on the middle position with standard deviation m/6."""
    pos = np.arange(m, dtype=float)
    if distribution == "uniform":
        w = np.ones(m)
    elif distribution == "zipf":
        w = (pos + 1.0) ** -exponent
    else:
        sd = max(m / 6.0, 0.5)
        w = np.exp(-0.5 * ((pos - (m - 1) / 2.0) / sd) ** 2)
    return w / w.sum()


def _code_dtype(m: int):
    return np.int8 if m < 2**7 else np.int16 if m < 2**15 else np.int32


def _draw(rng: np.random.Generator, n: int, p: np.ndarray) -> np.ndarray:
    """n codes in range(len(p)) with probabilities p (inverse-cdf sampling)."""
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    codes = np.searchsorted(cdf, rng.random(n), side="right")
    np.minimum(codes, len(p) - 1, out=codes)  # guards against cdf[-1] rounding
    return codes.astype(_code_dtype(len(p)), copy=False)


def _categorical(codes: np.ndarray, categories: Sequence[str]) -> pd.Categorical:
    return pd.Categorical.from_codes(codes, categories=list(categories))


def population(
    n_rows: int,
    *,
    n_qi: int = 5,
    distribution: str = "zipf",
    seed=None,
    zipf_exponent: float = 1.0,
    n_zip: int = 1000,
    protected_share=0.3,
    negative_rate=0.3,
    bias=0.1,
    name: str | None = None,
) -> Instance:
    """A synthetic population table, generated column by column with numpy.

    Parameters
    ----------
    n_rows : int
        Number of records (record ids 0 .. n_rows - 1); 10 to 10 million are typical.
    n_qi : int, default=5
        How many generalizable quasi-identifiers to generate, taken in the order of
        :data:`QI_POOL`: age (numeric 17..90, intervals of width 5, 10, 20), zip
        (``n_zip`` 5-digit codes with a digit-masking hierarchy ``10123`` → ``1012*`` →
        ``101**`` → ``10***`` → ``*``), sex, education (ordered, 8 levels, with a
        hierarchy), marital (hierarchy), occupation (hierarchy), hours (numeric 1..99).
        Between 1 and 7. race (protected) comes on top, so the table has
        ``n_qi + 1`` quasi-identifiers.
    distribution : {"zipf", "uniform", "gaussian"}, default="zipf"
        How the values of age, zip, education, marital, occupation, hours and disease
        are spread over their domains: "zipf", probability ∝ 1 / rank**zipf_exponent,
        rank = position in the domain (for zip a seeded random permutation, so the
        popular codes are spread over the prefixes); "uniform"; "gaussian", a
        discretized normal centred on the middle of the domain with standard deviation
        1/6 of its size. sex is always half and half.
    seed : None, int or numpy.random.Generator
        Same seed, same table. With a fixed seed a column does not depend on
        `n_qi`, and a table is the prefix of any longer one.
    zipf_exponent : float, default=1.0
        The Zipf exponent (> 0).
    n_zip : int, default=1000
        Number of distinct zip codes in the domain (1 .. 90000): ``10000``,
        ``10001``, ...
    protected_share : rational in [0, 1], default=0.3
        Expected share of protected (non-White) records; Black, Asian, Native and Other
        split it 45/20/10/25.
    negative_rate : rational in [0, 1], default=0.3
        Base probability of the negative decision ``denied``.
    bias : rational in [-1, 1], default=0.1
        How much more often protected records are denied: the probability is
        ``negative_rate + bias * (protected - protected_share)``, plus
        ``0.2 * (0.5 - e)`` for the education level ``e`` scaled to [0, 1] when
        education is generated, clipped to [0, 1]. So the two groups' denial rates
        differ by about `bias`, and the overall rate is about `negative_rate` for
        symmetric education distributions.
    name : str, optional
        The instance's name (default describes the parameters).

    Returns
    -------
    Instance
        Columns: the QIs, race (protected), disease (sensitive, 10 values with a
        hierarchy), decision (``denied`` negative, ordered ``denied`` < ``granted``).

    Notes
    -----
    O(n_rows · n_qi) time and memory: every column is drawn by inverse-cdf sampling
    of uniform variates, and categories are stored as 1- or 2-byte codes.

    Examples
    --------
    >>> inst = population(1000, n_qi=3, seed=0)
    >>> inst.n_rows, inst.schema.qi
    (1000, ('age', 'zip', 'sex', 'race'))
    >>> population(1000, n_qi=3, seed=0).table.equals(inst.table)
    True
    """
    caller = "population"
    n_rows = check_int(n_rows, "n_rows", caller, low=1)
    n_qi = check_int(n_qi, "n_qi", caller, low=1)
    if n_qi > len(QI_POOL):
        raise InvalidParameterError(
            f"The 'n_qi' parameter of {caller} must be an int in [1, {len(QI_POOL)}]. "
            f"Got {n_qi!r} instead."
        )
    check_option(distribution, "distribution", caller, DISTRIBUTIONS)
    exponent = float(check_fraction(zipf_exponent, "zipf_exponent", caller, low=0, low_open=True))
    n_zip = check_int(n_zip, "n_zip", caller, low=1)
    if n_zip > 100000 - _ZIP_BASE:
        raise InvalidParameterError(
            f"The 'n_zip' parameter of {caller} must be an int in [1, {100000 - _ZIP_BASE}]. "
            f"Got {n_zip!r} instead."
        )
    share = float(check_fraction(protected_share, "protected_share", caller, low=0, high=1))
    base_rate = float(check_fraction(negative_rate, "negative_rate", caller, low=0, high=1))
    gap = float(check_fraction(bias, "bias", caller, low=-1, high=1))
    rng = check_random_state(seed)
    seeds = rng.integers(0, 2**63 - 1, size=len(_STREAMS))
    stream = {key: np.random.default_rng(int(s)) for key, s in zip(_STREAMS, seeds)}

    def draw(key: str, m: int) -> np.ndarray:
        return _draw(stream[key], n_rows, _probabilities(m, distribution, exponent))

    columns: dict[str, object] = {}
    attributes: list[Attribute] = []
    education_level = None
    for key in QI_POOL[:n_qi]:
        if key in ("age", "hours"):
            domain = _AGES if key == "age" else _HOURS
            columns[key] = domain[draw(key, len(domain))].astype(np.int32)
            attributes.append(
                Attribute(key, kind="numeric", intervals=IntervalHierarchy((5, 10, 20)))
            )
        elif key == "zip":
            zips = [str(_ZIP_BASE + i) for i in range(n_zip)]
            # rank r -> domain position
            ranks = stream["zip_ranks"].permutation(n_zip).astype(_code_dtype(n_zip))
            columns[key] = _categorical(ranks[draw(key, n_zip)], zips)
            attributes.append(Attribute(key, hierarchy=digit_hierarchy(zips)))
        elif key == "sex":
            columns[key] = _categorical(
                _draw(stream[key], n_rows, np.array([0.5, 0.5])), ["female", "male"]
            )
            attributes.append(Attribute(key, hierarchy=Hierarchy.flat(["female", "male"])))
        else:
            tree = Hierarchy.from_mapping(
                {"education": _EDUCATION, "marital": _MARITAL, "occupation": _OCCUPATION}[key]
            )
            codes = draw(key, len(tree.leaves))
            columns[key] = _categorical(codes, tree.leaves)
            if key == "education":
                education_level = codes.astype(np.float32) / (len(tree.leaves) - 1)
                attributes.append(Attribute(key, kind="ordered", hierarchy=tree, order=tree.leaves))
            else:
                attributes.append(Attribute(key, hierarchy=tree))

    race_p = np.concatenate([[1.0 - share], share * _NONWHITE_SPLIT])
    race = _draw(stream["race"], n_rows, race_p)
    columns["race"] = _categorical(race, _RACES)
    attributes.append(
        Attribute("race", role="protected", hierarchy=Hierarchy.flat(_RACES), protected=_RACES[1:])
    )

    disease_tree = Hierarchy.from_mapping(_DISEASE)
    columns["disease"] = _categorical(
        draw("disease", len(disease_tree.leaves)), disease_tree.leaves
    )
    attributes.append(Attribute("disease", role="sensitive", hierarchy=disease_tree))

    p_negative = base_rate + gap * ((race > 0).astype(np.float32) - share)
    if education_level is not None:
        p_negative = p_negative + 0.2 * (0.5 - education_level)
    denied = stream["decision"].random(n_rows, dtype=np.float32) < np.clip(p_negative, 0.0, 1.0)
    columns["decision"] = _categorical(np.where(denied, 0, 1).astype(np.int8), _DECISIONS)
    attributes.append(
        Attribute("decision", role="decision", kind="ordered", order=_DECISIONS, negative="denied")
    )

    table = pd.DataFrame(columns, index=pd.RangeIndex(n_rows, name=RECORD_ID))
    if name is None:
        shown = seed if seed is None or isinstance(seed, (int, np.integer)) else type(seed).__name__
        name = (
            f"population(n_rows={n_rows}, n_qi={n_qi}, distribution={distribution!r}, seed={shown})"
        )
    return Instance(table, Schema(attributes), name)
