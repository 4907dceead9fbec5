"""The worked example of Ruggieri's dMondrian: the 17 loan decisions of Example 19 / Fig. 3
and dMondrian's release of them.

S. Ruggieri. Using t-closeness anonymity to control for non-discrimination. Transactions
on Data Privacy 7(2), 2014.
"""

from __future__ import annotations

import pandas as pd

from ..hierarchy import Hierarchy
from ..instance import Instance
from ..schema import Attribute, Schema
from .common import categorical_frame

__all__ = ["load_ruggieri_loan", "ruggieri_fig3_release_table"]

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
    return Instance(categorical_frame(_LOAN_ROWS, _LOAN_COLUMNS), schema, name)


def ruggieri_fig3_release_table() -> pd.DataFrame:
    """dMondrian's output in Fig. 3 of [R] (t = 1/4): purpose ``housing-car`` in every row,
    the other columns unchanged; classes emp = no and emp = yes (17 generalized cells)."""
    table = categorical_frame(_LOAN_ROWS, _LOAN_COLUMNS)
    table["purpose"] = "housing-car"
    return table
