"""Data sets: the bundled UCI tables, the papers' worked examples and a Census-Income reader.

Every loader returns an :class:`~fairanon.instances.Instance` with a documented default
schema, and :func:`load` finds a loader by name in :data:`DATASETS` (as networkx keeps
strategies in a name table). Options change the roles (``qi=``, ``roles=``) without
touching the data.

Bundled data
------------
``fairanon/instances/data/`` holds gzip copies of three unchanged files of the UCI
Machine Learning Repository (licence: CC BY 4.0; cite the repository and the donors):

- ``adult.data.gz``, ``adult.test.gz``: Adult (Census Income), donated by Barry Becker
  and Ronny Kohavi. B. Becker, R. Kohavi. Adult. UCI Machine Learning Repository, 1996.
  https://doi.org/10.24432/C5XW20
- ``german.data.gz``: Statlog (German Credit Data), donated by Hans Hofmann (University
  of Hamburg). H. Hofmann. Statlog (German Credit Data). UCI Machine Learning
  Repository, 1994. https://doi.org/10.24432/C5NC77

Census-Income (KDD) (T. Lane, R. Kohavi. UCI Machine Learning Repository, 2000.
https://doi.org/10.24432/C5N30T) is too large to bundle; :func:`load_census` reads a copy
the user provides.

The generalization hierarchies below (:data:`ADULT_HIERARCHIES`, :data:`GERMAN_HIERARCHIES`)
are fairanon's own, written for these data sets; each is documented where it is defined.
The paper examples are typed in from the papers cited by their loaders.

Examples
--------
>>> inst = load("diva_table1")
>>> inst.n_rows, inst.schema.qi
(10, ('GEN', 'ETH', 'AGE', 'PRV', 'CTY'))
>>> sorted(DATASETS)[:3]
['adult', 'adult_full', 'census']
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from importlib import resources

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ...exceptions import InvalidParameterError, SchemaError
from ..hierarchy import Hierarchy, IntervalHierarchy
from ..instance import Instance
from ..schema import ROLES, Attribute, Schema

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_EDUCATION_ORDER",
    "ADULT_HIERARCHIES",
    "CENSUS_COLUMNS",
    "DATASETS",
    "GERMAN_CODEBOOK",
    "GERMAN_COLUMNS",
    "GERMAN_HIERARCHIES",
    "GERMAN_QI",
    "adult_table",
    "census_table",
    "dewri_releases",
    "digit_hierarchy",
    "diva_sigma",
    "diva_table2",
    "diva_table3",
    "german_table",
    "load",
    "load_adult",
    "load_adult_full",
    "load_census",
    "load_dewri_t1",
    "load_diva_table1",
    "load_german",
    "load_ruggieri_loan",
    "ruggieri_fig3_release_table",
]

#: Name of the index (record ids) of every table built here.
RECORD_ID = "record_id"


@contextmanager
def _data_file(filename: str):
    """A filesystem path of a bundled data file (extracted if the package is zipped)."""
    # data/ belongs to fairanon.instances, the parent of this package
    ref = resources.files(__package__.rpartition(".")[0]).joinpath("data", filename)
    with resources.as_file(ref) as path:
        yield path


# ============================================================================ shared helpers


def _build_schema(
    catalog: Sequence[Attribute],
    qi: Sequence[str] | None,
    roles: Mapping[str, str] | None,
    caller: str,
) -> Schema:
    """The default schema `catalog`, with the QI set and single roles overridden.

    `qi` lists the generalizable quasi-identifiers (role "qi"): default ones it leaves out
    are ignored, any other column it names becomes "qi" (the protected attribute stays
    protected). `roles` maps column -> role and is applied last.
    """
    attrs = {a.name: a for a in catalog}
    names = list(attrs)
    if qi is not None:
        if isinstance(qi, str) or not all(isinstance(c, str) for c in qi):
            raise InvalidParameterError(
                f"The 'qi' parameter of {caller} must be a list of column names. "
                f"Got {qi!r} instead."
            )
        unknown = [c for c in qi if c not in attrs]
        if unknown:
            raise InvalidParameterError(
                f"The 'qi' parameter of {caller} names unknown column(s) {unknown}; "
                f"the columns are {names}."
            )
        for name, attr in attrs.items():
            if name in qi and attr.role != "protected":
                attrs[name] = attr.with_(role="qi")
            elif name not in qi and attr.role == "qi":
                attrs[name] = attr.with_(role="ignore")
    if roles is not None:
        if not isinstance(roles, Mapping):
            raise InvalidParameterError(
                f"The 'roles' parameter of {caller} must map column names to roles. "
                f"Got {roles!r} instead."
            )
        for name, role in roles.items():
            if name not in attrs:
                raise InvalidParameterError(
                    f"The 'roles' parameter of {caller} names an unknown column {name!r}; "
                    f"the columns are {names}."
                )
            if role not in ROLES:
                raise InvalidParameterError(
                    f"The 'roles' parameter of {caller} must give each column one of "
                    f"{', '.join(ROLES)}. Got {role!r} for {name!r} instead."
                )
            attrs[name] = attrs[name].with_(role=role)
    return Schema(attrs.values())


def digit_hierarchy(values: Sequence, *, n_masked: int | None = None) -> Hierarchy:
    """A right-to-left digit-masking hierarchy for codes of equal length (zip codes).

    Level i masks the last i characters with ``*``, up to `n_masked` characters (default:
    all but the first two), and the root ``*`` masks everything.

    >>> h = digit_hierarchy(["13053", "13268"])
    >>> h.ancestors("13053")
    ['13053', '1305*', '130**', '13***', '*']
    >>> h.lca(["13053", "13268"])
    '13***'
    """
    codes = [str(v) for v in values]
    if not codes:
        raise InvalidParameterError("The 'values' parameter of digit_hierarchy must not be empty.")
    width = len(codes[0])
    if any(len(c) != width for c in codes):
        raise InvalidParameterError(
            "The 'values' parameter of digit_hierarchy must hold codes of one length. "
            f"Got {codes[:5]!r}."
        )
    if n_masked is None:
        n_masked = max(width - 2, 0)
    if not 0 <= n_masked < width:
        raise InvalidParameterError(
            f"The 'n_masked' parameter of digit_hierarchy must be in [0, {width - 1}]. "
            f"Got {n_masked!r} instead."
        )
    rows = [[c] + [c[: width - i] + "*" * i for i in range(1, n_masked + 1)] + ["*"] for c in codes]
    return Hierarchy.from_levels(rows)


def _categorical_frame(rows: Sequence[Sequence], columns: Sequence[str]) -> pd.DataFrame:
    """A small table typed in from a paper; the first field of each row is its record id."""
    df = pd.DataFrame([list(r[1:]) for r in rows], columns=list(columns))
    df.index = pd.Index([int(r[0]) for r in rows], name=RECORD_ID)
    return df


# ============================================================================ UCI Adult

#: The 15 columns of UCI Adult, in file order.
ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
_ADULT_NUMERIC = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)
_ADULT_DTYPES = {c: (np.int64 if c in _ADULT_NUMERIC else "category") for c in ADULT_COLUMNS}

#: Adult's education values in education-num order (1 = Preschool ... 16 = Doctorate).
ADULT_EDUCATION_ORDER = (
    "Preschool",
    "1st-4th",
    "5th-6th",
    "7th-8th",
    "9th",
    "10th",
    "11th",
    "12th",
    "HS-grad",
    "Some-college",
    "Assoc-voc",
    "Assoc-acdm",
    "Bachelors",
    "Masters",
    "Prof-school",
    "Doctorate",
)
_ADULT_RACES = ("White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other")

#: fairanon's hierarchies for Adult's categorical quasi-identifiers (complete rows; the
#: "full" variant adds ``?`` under an ``Unknown`` node at the same depth as the values).
#: Every leaf of one tree has the same depth, so full-domain levels are well defined.
#:
#: - workclass: by employer: Private-sector (Private), Self-employed (incorporated or
#:   not), Government (federal, state, local), Unpaid (without pay, never worked).
#: - education: four levels in education-num order (Primary: Preschool..7th-8th;
#:   Secondary: 9th..HS-grad; Post-secondary: Some-college, Assoc-voc, Assoc-acdm;
#:   Degree: Bachelors..Doctorate), then School / Higher; every node is a contiguous
#:   range of the order, so hierarchy nodes and order ranges agree.
#: - marital-status: Married (civilian, armed forces, spouse absent), Single
#:   (never married), Previously-married (divorced, separated, widowed).
#: - occupation: White-collar (managers, professionals, technicians, clerical, sales),
#:   Blue-collar (craft, machine operators, transport, handlers, farming), Service
#:   (other, protective, private household), Military (armed forces).
#: - native-country: region, then continent. "South" is read as South Korea and "Hong"
#:   as Hong Kong; Outlying-US (Guam, USVI) is kept with the United States.
ADULT_HIERARCHIES = {
    "workclass": {
        "*": {
            "Private-sector": ["Private"],
            "Self-employed": ["Self-emp-not-inc", "Self-emp-inc"],
            "Government": ["Federal-gov", "State-gov", "Local-gov"],
            "Unpaid": ["Without-pay", "Never-worked"],
        }
    },
    "education": {
        "*": {
            "School": {
                "Primary": ["Preschool", "1st-4th", "5th-6th", "7th-8th"],
                "Secondary": ["9th", "10th", "11th", "12th", "HS-grad"],
            },
            "Higher": {
                "Post-secondary": ["Some-college", "Assoc-voc", "Assoc-acdm"],
                "Degree": ["Bachelors", "Masters", "Prof-school", "Doctorate"],
            },
        }
    },
    "marital-status": {
        "*": {
            "Married": ["Married-civ-spouse", "Married-AF-spouse", "Married-spouse-absent"],
            "Single": ["Never-married"],
            "Previously-married": ["Divorced", "Separated", "Widowed"],
        }
    },
    "occupation": {
        "*": {
            "White-collar": [
                "Exec-managerial",
                "Prof-specialty",
                "Tech-support",
                "Adm-clerical",
                "Sales",
            ],
            "Blue-collar": [
                "Craft-repair",
                "Machine-op-inspct",
                "Transport-moving",
                "Handlers-cleaners",
                "Farming-fishing",
            ],
            "Service": ["Other-service", "Protective-serv", "Priv-house-serv"],
            "Military": ["Armed-Forces"],
        }
    },
    "native-country": {
        "*": {
            "Americas": {
                "North-America": ["United-States", "Canada", "Outlying-US(Guam-USVI-etc)"],
                "Central-America": ["Mexico", "Guatemala", "Honduras", "El-Salvador", "Nicaragua"],
                "Caribbean": [
                    "Puerto-Rico",
                    "Cuba",
                    "Dominican-Republic",
                    "Haiti",
                    "Jamaica",
                    "Trinadad&Tobago",
                ],
                "South-America": ["Columbia", "Ecuador", "Peru"],
            },
            "Europe": {
                "Western-Europe": [
                    "England",
                    "Scotland",
                    "Ireland",
                    "France",
                    "Germany",
                    "Holand-Netherlands",
                ],
                "Southern-Europe": ["Italy", "Portugal", "Greece", "Yugoslavia"],
                "Eastern-Europe": ["Poland", "Hungary"],
            },
            "Asia": {
                "East-Asia": ["China", "Hong", "Taiwan", "Japan", "South"],
                "Southeast-Asia": ["Philippines", "Vietnam", "Cambodia", "Laos", "Thailand"],
                "South-and-West-Asia": ["India", "Iran"],
            },
        }
    },
}
# Where the "full" variant's '?' goes: a branch as deep as the other leaves.
_ADULT_UNKNOWN = {
    "workclass": {"Unknown": ["?"]},
    "occupation": {"Unknown": ["?"]},
    "native-country": {"Unknown": {"Unknown-region": ["?"]}},
}

_ADULT_VARIANTS = ("complete", "full")


def _read_adult_part(filename: str, *, skiprows: int = 0) -> pd.DataFrame:
    with _data_file(filename) as path:
        return pd.read_csv(
            path,
            header=None,
            names=list(ADULT_COLUMNS),
            sep=",",
            skipinitialspace=True,
            skiprows=skiprows,
            dtype=_ADULT_DTYPES,
            keep_default_na=False,
            na_values=[],
            compression="gzip",
        )


def adult_table(variant: str = "complete") -> pd.DataFrame:
    """The UCI Adult table (all 15 columns; categorical columns as pandas categoricals).

    Parameters
    ----------
    variant : {"complete", "full"}, default="complete"
        "complete": the 30,162 rows of the training file without a ``?``, indexed by
        their position in that file (0-based). "full": all 48,842 rows of the training
        then the test file (record ids 0..48841), ``?`` kept as an ordinary value and the
        test labels' trailing ``.`` removed.

    >>> adult_table().shape
    (30162, 15)
    """
    if variant not in _ADULT_VARIANTS:
        raise InvalidParameterError(
            "The 'variant' parameter of adult_table must be one of 'complete', 'full'. "
            f"Got {variant!r} instead."
        )
    train = _read_adult_part("adult.data.gz")
    if variant == "complete":
        categorical = [c for c in ADULT_COLUMNS if c not in _ADULT_NUMERIC]
        unknown = np.zeros(len(train), dtype=bool)
        for c in categorical:
            unknown |= (train[c] == "?").to_numpy()
        table = train[~unknown].copy()
        for c in categorical:
            table[c] = table[c].cat.remove_unused_categories()
        table.index.name = RECORD_ID
        return table
    test = _read_adult_part("adult.test.gz", skiprows=1)  # first line: "|1x3 Cross validator"
    test["income"] = test["income"].cat.rename_categories(lambda label: label.rstrip("."))
    columns = {}
    for c in ADULT_COLUMNS:
        if c in _ADULT_NUMERIC:
            columns[c] = np.concatenate([train[c].to_numpy(), test[c].to_numpy()])
        else:
            columns[c] = union_categoricals([train[c], test[c]])
    return pd.DataFrame(columns, index=pd.RangeIndex(len(train) + len(test), name=RECORD_ID))


def _adult_catalog(variant: str) -> list[Attribute]:
    def tree(column):
        mapping = ADULT_HIERARCHIES[column]
        if variant == "full" and column in _ADULT_UNKNOWN:
            mapping = {"*": {**mapping["*"], **_ADULT_UNKNOWN[column]}}
        return Hierarchy.from_mapping(mapping)

    return [
        Attribute("age", "qi", "numeric", intervals=IntervalHierarchy((5, 10, 20))),
        Attribute("workclass", "qi", hierarchy=tree("workclass")),
        Attribute("fnlwgt", "ignore", "numeric"),
        Attribute(
            "education", "qi", "ordered", hierarchy=tree("education"), order=ADULT_EDUCATION_ORDER
        ),
        Attribute("education-num", "ignore", "numeric"),
        Attribute("marital-status", "qi", hierarchy=tree("marital-status")),
        Attribute("occupation", "qi", hierarchy=tree("occupation")),
        Attribute("relationship", "ignore"),
        Attribute(
            "race", "protected", hierarchy=Hierarchy.flat(_ADULT_RACES), protected=_ADULT_RACES[1:]
        ),
        Attribute("sex", "qi", hierarchy=Hierarchy.flat(["Female", "Male"])),
        Attribute("capital-gain", "ignore", "numeric"),
        Attribute("capital-loss", "ignore", "numeric"),
        Attribute("hours-per-week", "ignore", "numeric", intervals=IntervalHierarchy((5, 10, 20))),
        Attribute("native-country", "qi", hierarchy=tree("native-country")),
        Attribute("income", "decision", "ordered", order=("<=50K", ">50K"), negative="<=50K"),
    ]


def load_adult(
    *,
    variant: str = "complete",
    qi: Sequence[str] | None = None,
    roles: Mapping[str, str] | None = None,
    name: str | None = None,
) -> Instance:
    """UCI Adult [1]_ with a default schema for privacy and discrimination studies.

    Parameters
    ----------
    variant : {"complete", "full"}, default="complete"
        "complete": the 30,162 training rows without missing values, the usual
        k-anonymity benchmark. "full": all 48,842 rows of train + test with ``?`` kept
        as a value (a leaf of every hierarchy of a column that has it), the table of
        Ruggieri's experiments [2]_. See :func:`adult_table`.
    qi : list of str, optional
        The generalizable quasi-identifiers, replacing the default ones.
    roles : mapping of str to str, optional
        Role overrides, e.g. ``{"race": "qi"}``, applied last.
    name : str, optional
        The instance's name (default "adult" or "adult_full").

    Returns
    -------
    Instance
        Default schema, 8 quasi-identifiers: age (numeric, intervals of width 5, 10,
        20), workclass, education (ordered by education-num, with a hierarchy),
        marital-status, occupation, sex, native-country (hierarchies in
        :data:`ADULT_HIERARCHIES`) and race (role "protected"; every non-White value
        is protected). income is the decision (``<=50K`` negative, ordered
        ``<=50K`` < ``>50K``). relationship, fnlwgt, education-num, capital-gain,
        capital-loss and hours-per-week are ignored (kept in ``instance.extra``).

    Notes
    -----
    Reads the bundled gzip copies of ``adult.data`` and ``adult.test`` (about 0.1 s).

    References
    ----------
    .. [1] B. Becker, R. Kohavi. Adult. UCI Machine Learning Repository, 1996.
       https://doi.org/10.24432/C5XW20 (CC BY 4.0).
    .. [2] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014.

    Examples
    --------
    >>> inst = load_adult()
    >>> inst.n_rows, len(inst.schema.qi), inst.schema.protected, inst.schema.decision
    (30162, 8, 'race', 'income')
    """
    table = adult_table(variant)
    schema = _build_schema(_adult_catalog(variant), qi, roles, "load_adult")
    default = "adult" if variant == "complete" else "adult_full"
    return Instance(table, schema, name or default)


def load_adult_full(
    *,
    qi: Sequence[str] | None = None,
    roles: Mapping[str, str] | None = None,
    name: str | None = None,
) -> Instance:
    """:func:`load_adult` with ``variant="full"`` (all 48,842 rows, ``?`` kept).

    >>> load_adult_full().n_rows
    48842
    """
    return load_adult(variant="full", qi=qi, roles=roles, name=name)


# ============================================================================ German credit

#: The 21 columns of UCI German credit (``german.data``), in file order.
GERMAN_COLUMNS = (
    "checking_status",
    "duration",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment",
    "installment_rate",
    "personal_status",
    "other_parties",
    "residence_since",
    "property",
    "age",
    "other_payment_plans",
    "housing",
    "existing_credits",
    "job",
    "num_dependents",
    "telephone",
    "foreign_worker",
    "credit",
)
_GERMAN_NUMERIC = (
    "duration",
    "credit_amount",
    "installment_rate",
    "residence_since",
    "age",
    "existing_credits",
    "num_dependents",
)

#: UCI's codebook (``german.doc``): column -> {code: readable value}, codes in UCI order.
GERMAN_CODEBOOK = {
    "checking_status": {
        "A11": "< 0 DM",
        "A12": "0 <= ... < 200 DM",
        "A13": ">= 200 DM / salary assignment",
        "A14": "no checking account",
    },
    "credit_history": {
        "A30": "no credits / all paid duly",
        "A31": "all paid duly at this bank",
        "A32": "existing paid duly till now",
        "A33": "delay in the past",
        "A34": "critical / credits elsewhere",
    },
    "purpose": {
        "A40": "car (new)",
        "A41": "car (used)",
        "A42": "furniture/equipment",
        "A43": "radio/television",
        "A44": "domestic appliances",
        "A45": "repairs",
        "A46": "education",
        "A47": "vacation",
        "A48": "retraining",
        "A49": "business",
        "A410": "others",
    },
    "savings": {
        "A61": "< 100 DM",
        "A62": "100 <= ... < 500 DM",
        "A63": "500 <= ... < 1000 DM",
        "A64": ">= 1000 DM",
        "A65": "unknown / no savings account",
    },
    "employment": {
        "A71": "unemployed",
        "A72": "< 1 year",
        "A73": "1 <= ... < 4 years",
        "A74": "4 <= ... < 7 years",
        "A75": ">= 7 years",
    },
    "personal_status": {
        "A91": "male div/sep",
        "A92": "female div/sep/married",
        "A93": "male single",
        "A94": "male married/widowed",
        "A95": "female single",
    },
    "other_parties": {"A101": "none", "A102": "co-applicant", "A103": "guarantor"},
    "property": {
        "A121": "real estate",
        "A122": "building society savings / life insurance",
        "A123": "car or other",
        "A124": "unknown / no property",
    },
    "other_payment_plans": {"A141": "bank", "A142": "stores", "A143": "none"},
    "housing": {"A151": "rent", "A152": "own", "A153": "for free"},
    "job": {
        "A171": "unemployed / unskilled non-resident",
        "A172": "unskilled resident",
        "A173": "skilled",
        "A174": "highly qualified / management / self-employed",
    },
    "telephone": {"A191": "none", "A192": "yes"},
    "foreign_worker": {"A201": "yes", "A202": "no"},
    "credit": {"1": "good", "2": "bad"},
}

#: fairanon's hierarchies for German credit's grouped attributes (others are flat):
#:
#: - credit_history: no problems (none taken or paid back duly) / problems (delays,
#:   critical account);
#: - purpose: car (new, used), home (furniture, radio/TV, appliances, repairs),
#:   learning (education, retraining), other purposes (vacation, business, others);
#: - savings: low (< 500 DM), high (>= 500 DM), unknown;
#: - employment: short (unemployed or < 4 years), long (>= 4 years);
#: - job: unskilled (both unskilled codes), skilled or above.
GERMAN_HIERARCHIES = {
    "credit_history": {
        "*": {
            "no problems": [
                "no credits / all paid duly",
                "all paid duly at this bank",
                "existing paid duly till now",
            ],
            "problems": ["delay in the past", "critical / credits elsewhere"],
        }
    },
    "purpose": {
        "*": {
            "car": ["car (new)", "car (used)"],
            "home": ["furniture/equipment", "radio/television", "domestic appliances", "repairs"],
            "learning": ["education", "retraining"],
            "other purposes": ["vacation", "business", "others"],
        }
    },
    "savings": {
        "*": {
            "low savings": ["< 100 DM", "100 <= ... < 500 DM"],
            "high savings": ["500 <= ... < 1000 DM", ">= 1000 DM"],
            "unknown savings": ["unknown / no savings account"],
        }
    },
    "employment": {
        "*": {
            "short employment": ["unemployed", "< 1 year", "1 <= ... < 4 years"],
            "long employment": ["4 <= ... < 7 years", ">= 7 years"],
        }
    },
    "job": {
        "*": {
            "unskilled": ["unemployed / unskilled non-resident", "unskilled resident"],
            "skilled or above": ["skilled", "highly qualified / management / self-employed"],
        }
    },
}

#: Named sets of generalizable quasi-identifiers for :func:`load_german` (the protected
#: personal_status is a quasi-identifier in both).
GERMAN_QI = {
    "default": ("age", "job", "savings", "employment", "housing", "credit_history", "purpose"),
    # The 7 PND attributes of Ruggieri's experiments (Ruggieri 2014, Table 1 and §6).
    "ruggieri": (
        "credit_history",
        "purpose",
        "credit_amount",
        "employment",
        "other_payment_plans",
        "housing",
        "existing_credits",
    ),
}
_GERMAN_ORDERED = ("employment", "job")


def german_table(*, decode: bool = True) -> pd.DataFrame:
    """The UCI German credit table: 1,000 rows (record ids 0..999), all 21 columns.

    Parameters
    ----------
    decode : bool, default=True
        Replace UCI's codes (``A92``, class ``2``, ...) by the readable values of
        :data:`GERMAN_CODEBOOK` (``female div/sep/married``, ``bad``, ...).

    >>> t = german_table()
    >>> t.shape, t.loc[0, "personal_status"], t.loc[0, "credit"]
    ((1000, 21), 'male single', 'good')
    >>> german_table(decode=False).loc[1, "personal_status"]
    'A92'
    """
    dtypes = {c: (np.int64 if c in _GERMAN_NUMERIC else str) for c in GERMAN_COLUMNS}
    with _data_file("german.data.gz") as path:
        raw = pd.read_csv(
            path,
            header=None,
            names=list(GERMAN_COLUMNS),
            sep=" ",
            dtype=dtypes,
            keep_default_na=False,
            na_values=[],
            compression="gzip",
        )
    raw.index.name = RECORD_ID
    for c in GERMAN_COLUMNS:
        if c in _GERMAN_NUMERIC:
            continue
        codes = pd.Categorical(raw[c], categories=list(GERMAN_CODEBOOK[c]))
        if codes.isna().any():  # a code outside UCI's codebook: the file is not german.data
            raise SchemaError(f"Column {c!r} of german.data holds codes outside UCI's codebook.")
        if decode:
            codes = codes.rename_categories(list(GERMAN_CODEBOOK[c].values()))
        raw[c] = codes
    return raw


def _german_catalog() -> list[Attribute]:
    out = []
    for c in GERMAN_COLUMNS:
        if c in _GERMAN_NUMERIC:
            intervals = {
                "age": IntervalHierarchy((5, 10, 20)),
                "credit_amount": IntervalHierarchy((1000, 5000, 10000)),
                "duration": IntervalHierarchy((6, 12, 24)),
            }.get(c)
            out.append(Attribute(c, "ignore", "numeric", intervals=intervals))
            continue
        values = list(GERMAN_CODEBOOK[c].values())
        tree = (
            Hierarchy.from_mapping(GERMAN_HIERARCHIES[c])
            if c in GERMAN_HIERARCHIES
            else Hierarchy.flat(values)
        )
        if c == "personal_status":
            out.append(
                Attribute(c, "protected", hierarchy=tree, protected=["female div/sep/married"])
            )
        elif c == "credit":
            out.append(Attribute(c, "decision", "ordered", order=["bad", "good"], negative="bad"))
        elif c in _GERMAN_ORDERED:
            out.append(Attribute(c, "ignore", "ordered", hierarchy=tree, order=values))
        else:
            out.append(Attribute(c, "ignore", hierarchy=tree))
    return out


def load_german(
    *,
    qi: str | Sequence[str] = "default",
    roles: Mapping[str, str] | None = None,
    name: str = "german",
) -> Instance:
    """UCI German credit [1]_, decoded, with a default schema for discrimination studies.

    Parameters
    ----------
    qi : {"default", "ruggieri"} or list of str, default="default"
        The generalizable quasi-identifiers. "default" (7): age (numeric), job
        (ordered), savings, employment (ordered), housing, credit_history, purpose.
        "ruggieri" (7): the PND attributes of [2]_: credit_history, purpose,
        credit_amount (numeric), employment, other_payment_plans, housing,
        existing_credits (numeric). Or any list of columns of :func:`german_table`.
    roles : mapping of str to str, optional
        Role overrides, applied last.
    name : str, default="german"

    Returns
    -------
    Instance
        personal_status is the protected attribute (the PD attribute of [2]_), with
        protected value ``female div/sep/married`` (UCI ``A92``, "female non-single",
        310 rows), so 8 quasi-identifiers in all. credit is the decision (``bad``
        negative, 300 rows). Other columns are ignored (kept in ``instance.extra``);
        :func:`german_table` gives all 21 decoded columns.

    References
    ----------
    .. [1] H. Hofmann. Statlog (German Credit Data). UCI Machine Learning Repository,
       1994. https://doi.org/10.24432/C5NC77 (CC BY 4.0).
    .. [2] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014.

    Examples
    --------
    >>> inst = load_german()
    >>> inst.n_rows, int(inst.protected_mask().sum()), int(inst.negative_mask().sum())
    (1000, 310, 300)
    """
    if isinstance(qi, str):
        if qi not in GERMAN_QI:
            raise InvalidParameterError(
                f"The 'qi' parameter of load_german must be 'default', 'ruggieri' or a list of "
                f"column names. Got {qi!r} instead."
            )
        qi = GERMAN_QI[qi]
    schema = _build_schema(_german_catalog(), qi, roles, "load_german")
    return Instance(german_table(), schema, name)


# ============================================================================ Census-Income (KDD)

#: The 42 columns of UCI Census-Income (KDD), in file order.
CENSUS_COLUMNS = (
    "age",
    "class of worker",
    "detailed industry recode",
    "detailed occupation recode",
    "education",
    "wage per hour",
    "enroll in edu inst last wk",
    "marital stat",
    "major industry code",
    "major occupation code",
    "race",
    "hispanic origin",
    "sex",
    "member of a labor union",
    "reason for unemployment",
    "full or part time employment stat",
    "capital gains",
    "capital losses",
    "dividends from stocks",
    "tax filer stat",
    "region of previous residence",
    "state of previous residence",
    "detailed household and family stat",
    "detailed household summary in household",
    "instance weight",
    "migration code-change in msa",
    "migration code-change in reg",
    "migration code-move within reg",
    "live in this house 1 year ago",
    "migration prev res in sunbelt",
    "num persons worked for employer",
    "family members under 18",
    "country of birth father",
    "country of birth mother",
    "country of birth self",
    "citizenship",
    "own business or self employed",
    "fill inc questionnaire for veteran's admin",
    "veterans benefits",
    "weeks worked in year",
    "year",
    "income class",
)
_CENSUS_NUMERIC = (
    "age",
    "wage per hour",
    "capital gains",
    "capital losses",
    "dividends from stocks",
    "instance weight",
    "num persons worked for employer",
    "weeks worked in year",
)
_CENSUS_EDUCATION_ORDER = (
    "Children",
    "Less than 1st grade",
    "1st 2nd 3rd or 4th grade",
    "5th or 6th grade",
    "7th and 8th grade",
    "9th grade",
    "10th grade",
    "11th grade",
    "12th grade no diploma",
    "High school graduate",
    "Some college but no degree",
    "Associates degree-occup /vocational",
    "Associates degree-academic program",
    "Bachelors degree(BA AB BS)",
    "Masters degree(MA MS MEng MEd MSW MBA)",
    "Prof school degree (MD DDS DVM LLB JD)",
    "Doctorate degree(PhD EdD)",
)
_CENSUS_MARITAL = {
    "*": {
        "Married": [
            "Married-civilian spouse present",
            "Married-A F spouse present",
            "Married-spouse absent",
        ],
        "Single": ["Never married"],
        "Previously-married": ["Divorced", "Separated", "Widowed"],
    }
}
_CENSUS_RACES = (
    "White",
    "Black",
    "Asian or Pacific Islander",
    "Amer Indian Aleut or Eskimo",
    "Other",
)
_CENSUS_QI = (
    "age",
    "class of worker",
    "education",
    "wage per hour",
    "marital stat",
    "major industry code",
    "major occupation code",
    "sex",
    "member of a labor union",
    "region of previous residence",
    "detailed household summary in household",
    "weeks worked in year",
)


def census_table(
    path_train: str | os.PathLike, path_test: str | os.PathLike | None = None
) -> pd.DataFrame:
    """Read UCI Census-Income (KDD) files: headerless CSV (gzip or plain), separator ``", "``.

    Rows of `path_test` follow those of `path_train` (record ids 0, 1, ...). Values keep
    their text except for surrounding blanks (a few UCI values end in a space); ``?`` and
    ``NA`` stay ordinary values.
    """
    dtypes = {
        c: (np.float64 if c == "instance weight" else np.int64)
        if c in _CENSUS_NUMERIC
        else "category"
        for c in CENSUS_COLUMNS
    }
    parts = []
    for path in [path_train] + ([path_test] if path_test is not None else []):
        if not os.path.exists(path):
            raise InvalidParameterError(f"Census-Income file {os.fspath(path)!r} does not exist.")
        part = pd.read_csv(
            path,
            header=None,
            names=list(CENSUS_COLUMNS),
            sep=",",
            skipinitialspace=True,
            dtype=dtypes,
            keep_default_na=False,
            na_values=[],
        )
        if part.shape[1] != len(CENSUS_COLUMNS):
            raise InvalidParameterError(
                f"{os.fspath(path)!r} does not have the 42 Census-Income columns."
            )
        parts.append(part)
    columns = {}
    for c in CENSUS_COLUMNS:
        if c in _CENSUS_NUMERIC:
            columns[c] = np.concatenate([p[c].to_numpy() for p in parts])
        else:
            cat = union_categoricals([p[c] for p in parts]) if len(parts) > 1 else parts[0][c].array
            stripped = [str(v).strip() for v in cat.categories]
            if len(set(stripped)) == len(stripped):
                cat = cat.rename_categories(stripped)
            columns[c] = cat
    n_rows = sum(len(p) for p in parts)
    return pd.DataFrame(columns, index=pd.RangeIndex(n_rows, name=RECORD_ID))


def _census_catalog() -> list[Attribute]:
    out = []
    for c in CENSUS_COLUMNS:
        role = "qi" if c in _CENSUS_QI else "ignore"
        if c == "race":
            out.append(
                Attribute(
                    c,
                    "protected",
                    hierarchy=Hierarchy.flat(_CENSUS_RACES),
                    protected=_CENSUS_RACES[1:],
                )
            )
        elif c == "income class":
            out.append(
                Attribute(
                    c, "decision", "ordered", order=("- 50000.", "50000+."), negative="- 50000."
                )
            )
        elif c == "education":
            out.append(Attribute(c, role, "ordered", order=_CENSUS_EDUCATION_ORDER))
        elif c == "marital stat":
            out.append(Attribute(c, role, hierarchy=Hierarchy.from_mapping(_CENSUS_MARITAL)))
        elif c in _CENSUS_NUMERIC:
            intervals = IntervalHierarchy((5, 10, 20)) if c == "age" else None
            out.append(Attribute(c, role, "numeric", intervals=intervals))
        else:
            out.append(Attribute(c, role))
    return out


def load_census(
    path_train: str | os.PathLike,
    path_test: str | os.PathLike | None = None,
    *,
    qi: Sequence[str] | None = None,
    roles: Mapping[str, str] | None = None,
    name: str = "census",
) -> Instance:
    """UCI Census-Income (KDD) [1]_ from files the user provides (not bundled).

    Parameters
    ----------
    path_train : path
        ``census-income.data`` (gzip or plain): headerless, 42 columns (named as in
        :data:`CENSUS_COLUMNS`), separator ``", "``.
    path_test : path, optional
        ``census-income.test``, appended after the training rows.
    qi, roles, name
        As in :func:`load_adult`.

    Returns
    -------
    Instance
        Default schema after Ruggieri's experiments [2]_ (spec tcloseness §3.1): 12
        quasi-identifiers age, class of worker, education (ordered), wage per hour,
        marital stat, major industry code, major occupation code, sex, member of a
        labor union, region of previous residence, detailed household summary in
        household, weeks worked in year (numeric: age, wage per hour, weeks worked in
        year; the paper does not say which industry/occupation columns it used, we take
        the major codes); race protected (every non-White value); income class the
        decision (``- 50000.`` negative). Other columns are ignored.

    References
    ----------
    .. [1] T. Lane, R. Kohavi. Census-Income (KDD). UCI Machine Learning Repository,
       2000. https://doi.org/10.24432/C5N30T (CC BY 4.0).
    .. [2] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014.
    """
    table = census_table(path_train, path_test)
    schema = _build_schema(_census_catalog(), qi, roles, "load_census")
    return Instance(table, schema, name)


def _load_census_by_name(
    path: str | os.PathLike | None = None,
    path_test: str | os.PathLike | None = None,
    *,
    qi: Sequence[str] | None = None,
    roles: Mapping[str, str] | None = None,
    name: str = "census",
) -> Instance:
    """``load("census", path=..., path_test=...)``: :func:`load_census` by name."""
    if path is None:
        raise InvalidParameterError(
            "The 'census' data set (UCI Census-Income (KDD), about 155 MB) is not bundled with "
            "fairanon: pass the path of your copy, e.g. "
            "load('census', path='census-income.data.gz', "
            "path_test='census-income.test.gz'), or call load_census(path_train, path_test)."
        )
    return load_census(path, path_test, qi=qi, roles=roles, name=name)


# ============================================================================ DIVA (Milani et al.)

_DIVA_COLUMNS = ("GEN", "ETH", "AGE", "PRV", "CTY", "DIAG")
# Table 1 of [DIVA]: t1..t10 as record ids 1..10.
_DIVA_TABLE1 = [
    (1, "Female", "Caucasian", 80, "AB", "Calgary", "Hypertension"),
    (2, "Female", "Caucasian", 32, "AB", "Calgary", "Tuberculosis"),
    (3, "Male", "Caucasian", 59, "AB", "Calgary", "Osteoarthritis"),
    (4, "Male", "Caucasian", 46, "MB", "Winnipeg", "Migraine"),
    (5, "Male", "African", 32, "MB", "Winnipeg", "Hypertension"),
    (6, "Male", "African", 43, "BC", "Vancouver", "Seizure"),
    (7, "Male", "Caucasian", 35, "BC", "Vancouver", "Hypertension"),
    (8, "Female", "Asian", 58, "BC", "Vancouver", "Seizure"),
    (9, "Female", "Asian", 63, "MB", "Winnipeg", "Influenza"),
    (10, "Female", "Asian", 71, "BC", "Vancouver", "Migraine"),
]
# Table 2 (k = 3) and Table 3 (k = 2, DIVA's output); the paper's ★ is written '*'.
_DIVA_TABLE2 = [
    (1, "*", "Caucasian", "*", "AB", "Calgary", "Hypertension"),
    (2, "*", "Caucasian", "*", "AB", "Calgary", "Tuberculosis"),
    (3, "*", "Caucasian", "*", "AB", "Calgary", "Osteoarthritis"),
    (4, "Male", "*", "*", "*", "*", "Migraine"),
    (5, "Male", "*", "*", "*", "*", "Hypertension"),
    (6, "Male", "*", "*", "*", "*", "Seizure"),
    (7, "Male", "*", "*", "*", "*", "Hypertension"),
    (8, "Female", "Asian", "*", "*", "*", "Seizure"),
    (9, "Female", "Asian", "*", "*", "*", "Influenza"),
    (10, "Female", "Asian", "*", "*", "*", "Migraine"),
]
_DIVA_TABLE3 = [
    (1, "Female", "Caucasian", "*", "AB", "Calgary", "Hypertension"),
    (2, "Female", "Caucasian", "*", "AB", "Calgary", "Tuberculosis"),
    (3, "Male", "Caucasian", "*", "*", "*", "Osteoarthritis"),
    (4, "Male", "Caucasian", "*", "*", "*", "Migraine"),
    (5, "Male", "African", "*", "*", "*", "Hypertension"),
    (6, "Male", "African", "*", "*", "*", "Seizure"),
    (7, "*", "*", "*", "BC", "Vancouver", "Hypertension"),
    (8, "*", "*", "*", "BC", "Vancouver", "Seizure"),
    (9, "Female", "Asian", "*", "*", "*", "Influenza"),
    (10, "Female", "Asian", "*", "*", "*", "Migraine"),
]


def load_diva_table1(*, name: str = "diva_table1") -> Instance:
    """The running example of DIVA [1]_ (Table 1): 10 patients, record ids 1..10 (t1..t10).

    Quasi-identifiers GEN, ETH, AGE (numeric), PRV, CTY (flat hierarchies: DIVA only
    suppresses); DIAG is sensitive. :func:`diva_sigma` gives Example 3.1's
    constraints, :func:`diva_table2` and :func:`diva_table3` the paper's releases.

    References
    ----------
    .. [1] M. Milani, Y. Huang, F. Chiang. Preserving diversity in anonymized data.
       EDBT 2021.

    Examples
    --------
    >>> load_diva_table1().table.loc[8, ["ETH", "CTY"]].tolist()
    ['Asian', 'Vancouver']
    """
    schema = Schema(
        [
            Attribute("GEN"),
            Attribute("ETH"),
            Attribute("AGE", kind="numeric"),
            Attribute("PRV"),
            Attribute("CTY"),
            Attribute("DIAG", role="sensitive"),
        ]
    )
    return Instance(_categorical_frame(_DIVA_TABLE1, _DIVA_COLUMNS), schema, name)


def diva_table2() -> pd.DataFrame:
    """Table 2 of DIVA: a 3-anonymous release by suppression (``*``), 31 stars, groups
    {1,2,3}, {4,5,6,7}, {8,9,10}; it satisfies no diversity on African."""
    return _categorical_frame(_DIVA_TABLE2, _DIVA_COLUMNS)


def diva_table3() -> pd.DataFrame:
    """Table 3 of DIVA: DIVA's 2-anonymous release satisfying :func:`diva_sigma`, 26
    stars, groups {1,2}, {3,4}, {5,6}, {7,8}, {9,10}.

    >>> int((diva_table3() == "*").to_numpy().sum())
    26
    """
    return _categorical_frame(_DIVA_TABLE3, _DIVA_COLUMNS)


def diva_sigma() -> list:
    """Σ of DIVA's Example 3.1: (ETH[Asian], 2, 5), (ETH[African], 1, 3), (CTY[Vancouver], 2, 4).

    >>> diva_sigma()[0]
    DiversityConstraint(ETH[Asian], 2, 5)
    """
    from ...models.requirements import DiversityConstraint

    return [
        DiversityConstraint({"ETH": "Asian"}, 2, 5),
        DiversityConstraint({"ETH": "African"}, 1, 3),
        DiversityConstraint({"CTY": "Vancouver"}, 2, 4),
    ]


# ============================================================================ Ruggieri's loan table

_LOAN_COLUMNS = ("purpose", "emp", "sex", "decision")
# Fig. 3 of [R] (left): id, purpose, emp, sex, decision.
_LOAN_ROWS = [
    (1, "housing", "no", "female", "-"),
    (2, "housing", "no", "female", "-"),
    (3, "housing", "no", "female", "+"),
    (4, "housing", "no", "male", "-"),
    (5, "housing", "no", "male", "+"),
    (6, "housing", "yes", "female", "-"),
    (7, "housing", "yes", "female", "+"),
    (8, "housing", "yes", "female", "+"),
    (9, "housing", "yes", "male", "-"),
    (10, "housing", "yes", "male", "-"),
    (11, "housing", "yes", "male", "+"),
    (12, "housing", "yes", "male", "+"),
    (13, "car", "no", "female", "+"),
    (14, "car", "no", "male", "-"),
    (15, "car", "no", "male", "+"),
    (16, "car", "yes", "female", "-"),
    (17, "car", "yes", "male", "+"),
]


def load_ruggieri_loan(*, name: str = "ruggieri_loan") -> Instance:
    """The 17 loan decisions of Ruggieri's Example 19 / Fig. 3 [1]_ (record ids 1..17).

    purpose (hierarchy ``housing-car`` over housing, car) and emp are the PND
    quasi-identifiers; sex is protected (``female``); decision is the decision
    (``-`` negative, ordered ``-`` < ``+``). p- = 8/17, τ(R) = 1/34.
    :func:`ruggieri_fig3_release_table` is dMondrian's output for t = 1/4.

    References
    ----------
    .. [1] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014.

    Examples
    --------
    >>> inst = load_ruggieri_loan()
    >>> int(inst.protected_mask().sum()), int(inst.negative_mask().sum())
    (8, 8)
    """
    schema = Schema(
        [
            Attribute(
                "purpose", hierarchy=Hierarchy.from_mapping({"housing-car": ["housing", "car"]})
            ),
            Attribute("emp", hierarchy=Hierarchy.flat(["no", "yes"])),
            Attribute(
                "sex",
                role="protected",
                hierarchy=Hierarchy.flat(["female", "male"]),
                protected=["female"],
            ),
            Attribute("decision", role="decision", kind="ordered", order=["-", "+"], negative="-"),
        ]
    )
    return Instance(_categorical_frame(_LOAN_ROWS, _LOAN_COLUMNS), schema, name)


def ruggieri_fig3_release_table() -> pd.DataFrame:
    """dMondrian's output in Fig. 3 of [R] (t = 1/4): purpose ``housing-car`` in every row,
    the other columns unchanged; classes emp = no and emp = yes (17 generalized cells)."""
    table = _categorical_frame(_LOAN_ROWS, _LOAN_COLUMNS)
    table["purpose"] = "housing-car"
    return table


# ============================================================================ Dewri et al.'s T1

_DEWRI_MARITAL = {
    "*": {
        "Married": ["CF-Spouse", "Spouse Present"],
        "Not Married": ["Separated", "Never Married", "Divorced", "Spouse Absent"],
    }
}
# Table 1 of the comparison paper: id, Zip, Age, Marital status.
_DEWRI_ROWS = [
    (1, "13053", 28, "CF-Spouse"),
    (2, "13268", 41, "Separated"),
    (3, "13268", 39, "Never Married"),
    (4, "13053", 26, "CF-Spouse"),
    (5, "13253", 50, "Divorced"),
    (6, "13253", 55, "Spouse Absent"),
    (7, "13250", 49, "Divorced"),
    (8, "13052", 31, "Spouse Present"),
    (9, "13269", 42, "Separated"),
    (10, "13250", 47, "Separated"),
]
_DEWRI_ZIPS = ("13052", "13053", "13250", "13253", "13268", "13269")


def _dewri_frame() -> pd.DataFrame:
    table = _categorical_frame(_DEWRI_ROWS, ("Zip", "Age", "Marital status"))
    table["Marital"] = table["Marital status"]
    return table


def load_dewri_t1(*, name: str = "dewri_t1") -> Instance:
    """The 10-tuple table T1 of Dewri et al.'s comparison of anonymizations [1]_.

    Quasi-identifiers: Zip (categorical, digit masking ``13053`` → ``1305*`` → ``130**``
    → ``13***`` → ``*``), Age (numeric) and Marital status (Married = {CF-Spouse, Spouse
    Present}, Not Married = the rest, then ``*``). Since the paper also uses marital
    status as the sensitive attribute of its l-diversity example and one column has one
    role, the column ``Marital`` is a copy of it with role "sensitive" (same hierarchy).
    Record ids 1..10. :func:`dewri_releases` gives the paper's releases T3a, T3b, T4.

    References
    ----------
    .. [1] R. Dewri, I. Ray, I. Ray, D. Whitley. On the comparison of microdata
       disclosure control algorithms. EDBT 2009.

    Examples
    --------
    >>> inst = load_dewri_t1()
    >>> inst.schema.qi, inst.schema.sensitive
    (('Zip', 'Age', 'Marital status'), ('Marital',))
    """
    marital = Hierarchy.from_mapping(_DEWRI_MARITAL)
    schema = Schema(
        [
            Attribute("Zip", hierarchy=digit_hierarchy(_DEWRI_ZIPS)),
            Attribute("Age", kind="numeric"),
            Attribute("Marital status", hierarchy=marital),
            Attribute("Marital", role="sensitive", hierarchy=marital),
        ]
    )
    return Instance(_dewri_frame(), schema, name)


def dewri_releases() -> dict[str, pd.DataFrame]:
    """The releases T3a, T3b (3-anonymous) and T4 (4-anonymous) of T1 (spec comparison §2.2).

    ===== ======= ================================== ==============
    name  Zip     Age                                Marital status
    ===== ======= ================================== ==============
    T3a   level 1 (25-35], (35-45], (45-55]          level 1
    T3b   level 2 (15-35], (35-55]                   level 1
    T4    level 3 (20-40], (40-60]                   ``*``
    ===== ======= ================================== ==============

    Ages are half-open ``(lo-hi]`` labels; ``Marital`` (sensitive) is unchanged.

    >>> rel = dewri_releases()
    >>> rel["T3a"].loc[1].tolist()
    ['1305*', '(25-35]', 'Married', 'CF-Spouse']
    """
    base = _dewri_frame()
    zips = digit_hierarchy(_DEWRI_ZIPS)
    marital = Hierarchy.from_mapping(_DEWRI_MARITAL)

    def age_bins(ages, width, origin):
        # (lo-hi] with hi - lo = width and lo = origin (mod width); ages are integers.
        return [
            f"({lo}-{lo + width}]"
            for lo in (origin + (int(a) - origin - 1) // width * width for a in ages)
        ]

    # name: (zip level, (age width, age origin), marital level)
    recipes = {"T3a": (1, (10, 5), 1), "T3b": (2, (20, 15), 1), "T4": (3, (20, 0), 2)}
    out = {}
    for label, (zip_level, (width, origin), marital_level) in recipes.items():
        table = base.copy()
        table["Zip"] = [zips.generalize(z, zip_level) for z in base["Zip"]]
        table["Age"] = age_bins(base["Age"], width, origin)
        table["Marital status"] = [
            marital.generalize(m, marital_level) for m in base["Marital status"]
        ]
        out[label] = table
    return out


# ============================================================================ the name table

#: Data set name -> loader. :func:`load` calls ``DATASETS[name](**options)``.
DATASETS: dict[str, Callable[..., Instance]] = {
    "adult": load_adult,
    "adult_full": load_adult_full,
    "census": _load_census_by_name,
    "dewri_t1": load_dewri_t1,
    "diva_table1": load_diva_table1,
    "german": load_german,
    "ruggieri_loan": load_ruggieri_loan,
}


def load(name: str, /, **options) -> Instance:
    """Load a data set by name.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`: "adult" (UCI Adult, 30,162 complete rows), "adult_full"
        (48,842 rows, ``?`` kept), "german" (UCI German credit, 1,000 rows), "census"
        (UCI Census-Income (KDD); needs ``path=``), "diva_table1" (DIVA's Table 1),
        "ruggieri_loan" (Ruggieri's Fig. 3), "dewri_t1" (Dewri et al.'s T1).
    **options
        Passed to the loader, e.g. ``variant="full"`` for "adult", ``qi="ruggieri"`` for
        "german", ``path=...`` for "census".

    Returns
    -------
    Instance

    Raises
    ------
    InvalidParameterError
        For an unknown name (the message lists the known ones) or an option the loader
        does not take.

    Examples
    --------
    >>> load("ruggieri_loan").n_rows
    17
    >>> load("adult", variant="full").n_rows
    48842
    """
    loader = DATASETS.get(name) if isinstance(name, str) else None
    if loader is None:
        known = ", ".join(repr(n) for n in sorted(DATASETS))
        raise InvalidParameterError(
            f"The 'name' parameter of load must be one of {known}. Got {name!r} instead."
        )
    try:
        inspect.signature(loader).bind(**options)
    except TypeError as exc:
        raise InvalidParameterError(f"load({name!r}) got a bad option: {exc}.") from None
    return loader(**options)
