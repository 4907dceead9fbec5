"""The worked example of Dewri et al.'s comparison of anonymizations: the 10-tuple table T1
and its releases T3a, T3b and T4.

R. Dewri, I. Ray, I. Ray, D. Whitley. On the comparison of microdata disclosure control
algorithms. EDBT 2009.
"""

from __future__ import annotations

import pandas as pd

from ..hierarchy import Hierarchy
from ..instance import Instance
from ..schema import Attribute, Schema
from .common import categorical_frame, digit_hierarchy

__all__ = ["dewri_releases", "load_dewri_t1"]

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
    table = categorical_frame(_DEWRI_ROWS, ("Zip", "Age", "Marital status"))
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
    """The releases T3a, T3b (3-anonymous) and T4 (4-anonymous) of T1 (docs/papers.md,
    Dewri et al.; DW-9).

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
