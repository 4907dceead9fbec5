"""The setting of Ruggieri's experiments: German credit, Adult and Census-Income with the
paper's PND attributes as the generalizable quasi-identifiers, a binary PD attribute
(protected vs the rest) and the binary decision.

S. Ruggieri. Using t-closeness anonymity to control for non-discrimination. Transactions on
Data Privacy 7(2), 2014, §6 and Table 1. fairanon's account of the experiments:
``docs/papers.md``, section "Ruggieri (2014)".

With this setting, t-closeness of the decision in every released class is Ruggieri's
τ <= t (Def. 17, one group per PD value = protected and unprotected), and
:func:`~fairanon.models.measures.bound` gives the α of the α-protection it implies
(Thm 10 and 15): the experiments run dMondrian and dSabre with
``AlphaProtection("RD", bound("RD", t, p-))``, whose inverse bound is t again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...exceptions import InvalidParameterError
from ..hierarchy import Hierarchy
from ..instance import Instance
from .adult import load_adult
from .census import _CENSUS_QI, load_census
from .german import GERMAN_QI, load_german

__all__ = ["RUGGIERI_DATA", "RUGGIERI_PD", "RUGGIERI_PND", "RUGGIERI_TABLE1", "load_ruggieri"]

#: The data sets of the paper's §6.
RUGGIERI_DATA = ("german", "adult", "census")

#: The PND attributes named in §6: 7 for German credit, 6 for Adult (Table 1 counts 7:
#: the seventh is not named), 12 for Census-Income (the major industry and occupation
#: codes: the paper does not say which of UCI's two codings it used).
RUGGIERI_PND = {
    "german": GERMAN_QI["ruggieri"],
    "adult": ("age", "workclass", "education", "marital-status", "occupation", "relationship"),
    "census": _CENSUS_QI,  # the 12 attributes of the census loader, Ruggieri's PND set
}

#: The PD attribute and the labels of its two released values (protected first): German
#: credit's "not-single women" (UCI A92) against everyone else, non-whites against whites.
RUGGIERI_PD = {
    "german": ("personal_status", "female non-single", "other"),
    "adult": ("race", "non-white", "white"),
    "census": ("race", "non-white", "white"),
}

#: Table 1 as printed: tuples, discrete and continuous PND attributes, p-, and the t range
#: τ(R) .. max(p-, 1 - p-).
RUGGIERI_TABLE1 = {
    "german": {"tuples": 1000, "discrete": 6, "continuous": 1, "p_minus": 0.3, "tau": 0.052, "t_max": 0.7},
    "adult": {"tuples": 48842, "discrete": 6, "continuous": 1, "p_minus": 0.761, "tau": 0.087, "t_max": 0.761},
    "census": {"tuples": 299285, "discrete": 9, "continuous": 3, "p_minus": 0.938, "tau": 0.028, "t_max": 0.938},
}


def load_ruggieri(
    data: str = "german",
    *,
    path: str | os.PathLike | None = None,
    path_test: str | os.PathLike | None = None,
    drop: Sequence[str] = (),
    name: str | None = None,
) -> Instance:
    """One data set of Ruggieri's experiments, in the paper's setting.

    Parameters
    ----------
    data : {"german", "adult", "census"}, default="german"
        German credit (1,000 rows), Adult (all 48,842 rows, ``?`` kept: the rows that
        reproduce Table 1's p- and τ(R)) or Census-Income (KDD) (299,285 rows; read from
        `path` and `path_test`, else from ``$FAIRANON_DATA`` as ``load("census")``).
    path, path_test : path, optional
        Census-Income's files (only for ``data="census"``).
    drop : sequence of str, default=()
        PND attributes left out (ignored), e.g. ``("wage per hour", "age")`` for the
        bottom right plot of the paper's Fig. 10.
    name : str, optional
        Default ``ruggieri_<data>``.

    Returns
    -------
    Instance
        The PND attributes of :data:`RUGGIERI_PND` (less `drop`) are the quasi-identifiers;
        the PD attribute of :data:`RUGGIERI_PD` is binarized to its two labels
        (protected first, a flat hierarchy) and is protected; the decision is the data
        set's (German credit ``bad``, Adult ``<=50K``, Census ``- 50000.`` negative).

    Examples
    --------
    >>> inst = load_ruggieri("german")
    >>> inst.schema.qi[:3], inst.schema.protected, int(inst.protected_mask().sum())
    (('credit_history', 'purpose', 'credit_amount'), 'personal_status', 310)
    """
    if data not in RUGGIERI_DATA:
        raise InvalidParameterError(
            f"The 'data' parameter of load_ruggieri must be one of {', '.join(map(repr, RUGGIERI_DATA))}. "
            f"Got {data!r} instead."
        )
    if data != "census" and (path is not None or path_test is not None):
        raise InvalidParameterError(f"load_ruggieri({data!r}) takes no path: the data set is bundled.")
    drop = tuple(drop)
    unknown = [c for c in drop if c not in RUGGIERI_PND[data]]
    if unknown:
        raise InvalidParameterError(
            f"The 'drop' parameter of load_ruggieri names {unknown}, which are not PND attributes of "
            f"{data!r}: {list(RUGGIERI_PND[data])}."
        )
    qi = [c for c in RUGGIERI_PND[data] if c not in drop]
    if data == "german":
        base = load_german(qi=qi)
    elif data == "adult":
        base = load_adult(variant="full", qi=qi)
    else:
        if path is None:
            folder = os.environ.get("FAIRANON_DATA")
            path = os.path.join(folder, "census_income_train.csv.gz") if folder else None
            if path is None or not os.path.exists(path):
                raise InvalidParameterError(
                    "load_ruggieri('census') reads UCI Census-Income (KDD), which is not bundled: pass "
                    "path= and path_test=, or set FAIRANON_DATA to a folder holding "
                    "census_income_train.csv.gz and census_income_test.csv.gz."
                )
            test = os.path.join(folder, "census_income_test.csv.gz")
            path_test = test if os.path.exists(test) else None
        base = load_census(path, path_test, qi=qi)
    pd_name, protected_label, other_label = RUGGIERI_PD[data]
    attr = base.schema[pd_name]
    table = pd.concat([base.table, base.extra], axis=1)
    column = table[pd_name].astype(str)
    table[pd_name] = pd.Categorical(
        np.where(column.isin(attr.protected), protected_label, other_label),
        categories=[protected_label, other_label],
    )
    binary = attr.with_(hierarchy=Hierarchy.flat([protected_label, other_label]), protected=(protected_label,))
    return Instance(table, base.schema.replace(binary), name or f"ruggieri_{data}")
