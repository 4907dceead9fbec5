"""UCI Census-Income (KDD): a reader for a copy the user provides (too large to bundle) and
a default schema after Ruggieri's experiments.

T. Lane, R. Kohavi. Census-Income (KDD). UCI Machine Learning Repository, 2000.
https://doi.org/10.24432/C5N30T (CC BY 4.0). S. Ruggieri. Using t-closeness anonymity to
control for non-discrimination. Transactions on Data Privacy 7(2), 2014.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ...exceptions import InvalidParameterError
from ..hierarchy import Hierarchy, IntervalHierarchy
from ..instance import Instance
from ..schema import Attribute
from .common import RECORD_ID, build_schema

__all__ = ["CENSUS_COLUMNS", "census_table", "load_census"]

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
        Default schema after Ruggieri's experiments [2]_ (docs/papers.md, R-1): 12
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
    schema = build_schema(_census_catalog(), qi, roles, "load_census")
    return Instance(table, schema, name)
