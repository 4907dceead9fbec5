"""The running example of DIVA (Milani et al., EDBT 2021): Table 1, the releases of Tables 2
and 3, and the diversity constraints of Example 3.1 as plain data.

:func:`fairanon.models.diversity.diva_sigma` builds the constraints as requirements.

M. Milani, Y. Huang, F. Chiang. Preserving diversity in anonymized data. EDBT 2021.
"""

from __future__ import annotations

import pandas as pd

from ..instance import Instance
from ..schema import Attribute, Schema
from .common import categorical_frame

__all__ = ["DIVA_SIGMA", "diva_table2", "diva_table3", "load_diva_table1"]

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

#: Σ of DIVA's Example 3.1 as (target, lower, upper): (ETH[Asian], 2, 5),
#: (ETH[African], 1, 3), (CTY[Vancouver], 2, 4).
DIVA_SIGMA = (
    ({"ETH": "Asian"}, 2, 5),
    ({"ETH": "African"}, 1, 3),
    ({"CTY": "Vancouver"}, 2, 4),
)


def load_diva_table1(*, name: str = "diva_table1") -> Instance:
    """The running example of DIVA [1]_ (Table 1): 10 patients, record ids 1..10 (t1..t10).

    Quasi-identifiers GEN, ETH, AGE (numeric), PRV, CTY (flat hierarchies: DIVA only
    suppresses); DIAG is sensitive. :data:`DIVA_SIGMA` holds Example 3.1's constraints
    (:func:`fairanon.models.diversity.diva_sigma` builds them), :func:`diva_table2` and
    :func:`diva_table3` the paper's releases.

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
    return Instance(categorical_frame(_DIVA_TABLE1, _DIVA_COLUMNS), schema, name)


def diva_table2() -> pd.DataFrame:
    """Table 2 of DIVA: a 3-anonymous release by suppression (``*``), 31 stars, groups
    {1,2,3}, {4,5,6,7}, {8,9,10}; it satisfies no diversity on African."""
    return categorical_frame(_DIVA_TABLE2, _DIVA_COLUMNS)


def diva_table3() -> pd.DataFrame:
    """Table 3 of DIVA: DIVA's 2-anonymous release satisfying Example 3.1's constraints
    (:data:`DIVA_SIGMA`), 26 stars, groups {1,2}, {3,4}, {5,6}, {7,8}, {9,10}.

    >>> int((diva_table3() == "*").to_numpy().sum())
    26
    """
    return categorical_frame(_DIVA_TABLE3, _DIVA_COLUMNS)

