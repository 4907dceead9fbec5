"""What the data set loaders share: the bundled files, the record-id index, default
schemas with overridden roles, digit-masking hierarchies and small tables typed in from papers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import pandas as pd

from ...exceptions import InvalidParameterError
from ..hierarchy import Hierarchy
from ..schema import ROLES, Attribute, Schema

__all__ = ["RECORD_ID", "build_schema", "categorical_frame", "data_file", "digit_hierarchy"]

#: Name of the index (record ids) of every table built here.
RECORD_ID = "record_id"


@contextmanager
def data_file(filename: str) -> Iterator[Path]:
    """A filesystem path of a bundled data file (extracted if the package is zipped)."""
    # data/ belongs to fairanon.instances, the parent of this package
    ref = resources.files(__package__.rpartition(".")[0]).joinpath("data", filename)
    with resources.as_file(ref) as path:
        yield path


def build_schema(
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


def categorical_frame(rows: Sequence[Sequence], columns: Sequence[str]) -> pd.DataFrame:
    """A small table typed in from a paper; the first field of each row is its record id."""
    df = pd.DataFrame([list(r[1:]) for r in rows], columns=list(columns))
    df.index = pd.Index([int(r[0]) for r in rows], name=RECORD_ID)
    return df
