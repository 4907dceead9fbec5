"""The data sets by name: :data:`DATASETS` maps a name to its loader (as networkx keeps
strategies in a name table) and :func:`load` calls it with the options given."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ...exceptions import InvalidParameterError
from ..instance import Instance
from .adult import load_adult, load_adult_full
from .census import load_census
from .dewri_example import load_dewri_t1
from .diva_example import load_diva_table1
from .german import load_german
from .ruggieri_example import load_ruggieri_loan
from .ruggieri_setting import load_ruggieri

__all__ = ["DATA_ENV", "DATASETS", "file_options", "load", "reads_data_folder"]

#: The environment variable naming the folder of the optional data (UCI Census-Income).
DATA_ENV = "FAIRANON_DATA"


def _load_census_by_name(
    path: str | os.PathLike | None = None,
    path_test: str | os.PathLike | None = None,
    *,
    qi: Sequence[str] | None = None,
    roles: Mapping[str, str] | None = None,
    name: str = "census",
    rows: int | None = None,
    seed: int = 0,
) -> Instance:
    """``load("census", path=..., path_test=...)``: :func:`load_census` by name.

    Without `path`, the folder named by the environment variable ``FAIRANON_DATA`` is
    read (``census_income_train.csv.gz`` and ``census_income_test.csv.gz``). With `rows`,
    a seeded random sample of that many records (the first `rows` of a permutation drawn
    with ``numpy.random.default_rng(seed)``, in table order), named ``census[rows]``.
    """
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 1):
        raise InvalidParameterError(
            f"The 'rows' option of load('census') must be a positive int. Got {rows!r} instead."
        )
    if path is None:
        folder = os.environ.get(DATA_ENV)
        train = os.path.join(folder, "census_income_train.csv.gz") if folder else None
        if train is None or not os.path.exists(train):
            raise InvalidParameterError(
                "The 'census' data set (UCI Census-Income (KDD), about 155 MB) is not bundled with "
                "fairanon: pass the path of your copy, e.g. "
                "load('census', path='census-income.data.gz', "
                "path_test='census-income.test.gz'), call load_census(path_train, path_test), "
                f"or set {DATA_ENV} to a folder holding census_income_train.csv.gz and "
                "census_income_test.csv.gz."
            )
        path = train
        test = os.path.join(folder, "census_income_test.csv.gz")
        path_test = test if os.path.exists(test) else None
    instance = load_census(path, path_test, qi=qi, roles=roles, name=name)
    if rows is None or rows >= instance.n_rows:
        return instance
    keep = np.sort(np.random.default_rng(seed).permutation(instance.n_rows)[:rows])
    return instance.subset(instance.row_ids[keep], name=f"{name}[{rows}]")


#: Data set name -> loader. :func:`load` calls ``DATASETS[name](**options)``.
DATASETS: dict[str, Callable[..., Instance]] = {
    "adult": load_adult,
    "adult_full": load_adult_full,
    "census": _load_census_by_name,
    "dewri_t1": load_dewri_t1,
    "diva_table1": load_diva_table1,
    "german": load_german,
    "ruggieri": load_ruggieri,
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
        "ruggieri" (German credit, Adult or Census-Income in the setting of Ruggieri's
        experiments: ``data="german"``), "ruggieri_loan" (Ruggieri's Fig. 3), "dewri_t1"
        (Dewri et al.'s T1).
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


def file_options(name: str, options: Mapping) -> list[str]:
    """The options among `options` that name files for data set `name`'s loader (the
    parameters it annotates ``os.PathLike``, e.g. Census-Income's ``path`` and
    ``path_test``), whatever their values (a caller refuses one that is not text),
    sorted; [] for an unknown name (:func:`load` gives that message). A job file's paths
    are read relative to the job file, and the app copies each file a job names into its
    run, these included.

    >>> file_options("census", {"path": "census.csv", "rows": 100})
    ['path']
    >>> file_options("adult", {"variant": "full"})
    []
    """
    loader = DATASETS.get(name) if isinstance(name, str) else None
    if loader is None:
        return []
    parameters = inspect.signature(loader).parameters
    return sorted(str(k) for k in options
                  if k in parameters and "PathLike" in str(parameters[k].annotation))


def reads_data_folder(name: str, options: Mapping) -> bool:
    """Whether ``load(name, **options)`` reads the folder :data:`DATA_ENV` names rather
    than a file its options name: Census-Income, by itself or in Ruggieri's setting,
    without ``path``. The app refuses such a picked job, which reads only picked files.

    >>> reads_data_folder("census", {"rows": 100}), reads_data_folder("census", {"path": "c.csv"})
    (True, False)
    >>> reads_data_folder("ruggieri", {"data": "census"}), reads_data_folder("ruggieri", {})
    (True, False)
    """
    census = name == "census" or (name == "ruggieri" and options.get("data") == "census")
    return census and options.get("path") is None
