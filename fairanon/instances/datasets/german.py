"""UCI German credit: the bundled table, UCI's codebook, a default schema and fairanon's
hierarchies for it.

The gzip copy of ``german.data`` in ``fairanon/instances/data/`` is an unchanged file of
the UCI Machine Learning Repository (licence: CC BY 4.0), donated by Hans Hofmann
(University of Hamburg): H. Hofmann. Statlog (German Credit Data). UCI Machine Learning
Repository, 1994. https://doi.org/10.24432/C5NC77

The "ruggieri" quasi-identifiers are those of S. Ruggieri. Using t-closeness anonymity to
control for non-discrimination. Transactions on Data Privacy 7(2), 2014.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...exceptions import InvalidParameterError, SchemaError
from ..hierarchy import Hierarchy, IntervalHierarchy
from ..instance import Instance
from ..schema import Attribute
from .common import RECORD_ID, build_schema, data_file

__all__ = [
    "GERMAN_CODEBOOK",
    "GERMAN_COLUMNS",
    "GERMAN_HIERARCHIES",
    "GERMAN_QI",
    "german_table",
    "load_german",
]

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
    with data_file("german.data.gz") as path:
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
    out.append(Attribute("sex", "ignore"))
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
        :func:`german_table` gives all 21 decoded columns. One more column, ``sex``
        (``male`` or ``female``, read from personal status; ignored by default), is the
        Sex attribute of the DIVA repository's Credit data: ``roles={"sex": "qi",
        "personal_status": "ignore"}`` gives that data.

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
    schema = build_schema(_german_catalog(), qi, roles, "load_german")
    table = german_table()
    table["sex"] = np.where(table["personal_status"].astype(str).str.startswith("female"), "female", "male")
    return Instance(table, schema, name)
