"""UCI Adult: the bundled table, its default schema and fairanon's hierarchies for it.

The gzip copies of ``adult.data`` and ``adult.test`` in ``fairanon/instances/data/`` are
unchanged files of the UCI Machine Learning Repository (licence: CC BY 4.0), donated by
Barry Becker and Ronny Kohavi: B. Becker, R. Kohavi. Adult. UCI Machine Learning
Repository, 1996. https://doi.org/10.24432/C5XW20

The "full" variant is the table of Ruggieri's experiments (S. Ruggieri. Using
t-closeness anonymity to control for non-discrimination. Transactions on Data Privacy
7(2), 2014).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ...exceptions import InvalidParameterError
from ..hierarchy import Hierarchy, IntervalHierarchy
from ..instance import Instance
from ..schema import Attribute
from .common import RECORD_ID, build_schema, data_file

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_EDUCATION_ORDER",
    "ADULT_HIERARCHIES",
    "adult_table",
    "load_adult",
    "load_adult_full",
]

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
    with data_file(filename) as path:
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
    schema = build_schema(_adult_catalog(variant), qi, roles, "load_adult")
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
