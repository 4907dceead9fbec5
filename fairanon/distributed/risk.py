"""The risk figures of a release on Dask: :func:`fairanon.risk` from the verifier's
class counts.

Every risk model of :mod:`fairanon.models.risk` reads a table regrouped into classes
(:class:`~fairanon.models.risk.classes.RiskClasses`). The distributed verifier already
has the classes — their released values, sizes and first positions, numbered as the
single-machine regrouping numbers them — and, per sensitive attribute, the records of
each class per value. :class:`DaskRiskClasses` holds them per class: the sample,
uniqueness, individual and disclosure figures are sums over classes weighted by their
sizes, so no array of one entry per record is made on the client, which may hold fewer
bytes than the table has records. It answers the per-class counts of a sensitive
attribute from the verifier's counts and reads the record ids of a witness class from
the release in one more pass. The figures are then measured by the single-machine code
(:func:`~fairanon.models.risk.report.risk` given the classes), with the single-machine
rules (:func:`~fairanon.models.risk.report.risk_dict`: SUDA to size 3 up to a million
records). Only SUDA reads the records one by one: it stands a row for each record of
each class, after checking its memory (:func:`~fairanon.models.risk.suda.suda_memory`)
against the memory limit in force (:mod:`fairanon._memory`); above it the risk entry is
``{"error": ...}`` naming the limit.

The journalist risk against a population table (El Emam and Dankar, JAMIA 15(5), 2008:
F_j, the population records every label of class j covers) reads the population as its
distinct combinations of quasi-identifier values and their records
(:class:`~fairanon.models.risk.sample.PopulationCounts`): a group-by of each partition
of a population on Dask (a Dask DataFrame or a Parquet path), merged two by two, or of
a table on this machine. The combinations are then joined with the classes on the client
by :func:`~fairanon.models.risk.sample.population_class_sizes`, the single-machine code,
so the figures are exact Fractions as there.

``fa.risk(..., engine="dask")`` (:func:`~fairanon.distributed.verify.risk_dask`) returns
the :class:`~fairanon.models.risk.report.RiskReport` itself, by :func:`measure_risk`,
which raises where the report's dict holds an error: SUDA above the memory limit
(:class:`~fairanon.exceptions.MemoryLimitError`), and a weight column, which the Dask
engine does not read (:class:`~fairanon.exceptions.InvalidParameterError`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from functools import cached_property

import numpy as np
import pandas as pd

from .._memory import check_memory, current_limit
from ..exceptions import FairanonError, InvalidParameterError, SchemaError
from ..instances.instance import Instance
from ..models.released import id_type, narrow
from ..models.risk.classes import RiskClasses, _suppressed
from ..models.risk.report import RiskReport, risk, risk_dict, risk_options
from ..models.risk.sample import PopulationCounts, merge_population_counts, population_counts
from ..models.risk.suda import suda_memory
from .instance import compute, read_table, reading_failed, tree

__all__ = ["DaskRiskClasses", "check_dask_options", "count_population", "measure_risk", "release_risk_dask"]


class _RepeatedCodes(Mapping):
    """Per quasi-identifier, (the label code of every row, the labels), the rows laid
    out class by class; each column is made on first use, since only SUDA reads the
    codes row by row (and only up to a million records)."""

    def __init__(self, digits: dict, labels: dict, sizes: np.ndarray):
        self._digits, self._labels, self._sizes = digits, labels, sizes
        self._made: dict = {}

    def itemsize(self, name: str) -> int:
        """Bytes a row of the column takes once made (the codes' narrow type)."""
        n_labels = len(self._labels[name])
        return np.dtype(narrow(np.zeros(0, dtype=np.int64), n_labels).dtype).itemsize

    def __getitem__(self, name: str):
        if name not in self._digits:
            raise KeyError(name)
        if name not in self._made:
            labels = self._labels[name]
            self._made[name] = (narrow(np.repeat(self._digits[name], self._sizes), len(labels)), labels)
        return self._made[name]

    def __contains__(self, name) -> bool:
        return name in self._digits

    def __iter__(self) -> Iterator[str]:
        return iter(self._digits)

    def __len__(self) -> int:
        return len(self._digits)


class DaskRiskClasses(RiskClasses):
    """The classes of a release on Dask, for the risk models.

    Parameters
    ----------
    instance : DaskInstance
    qi : sequence of str
        The quasi-identifiers.
    labels : dict
        Per quasi-identifier and counted sensitive attribute, its distinct released
        labels (as text) in order of first appearance in record-id order.
    digits : dict
        Per quasi-identifier, the label code of every class.
    sizes : numpy.ndarray of int64
        The class sizes.
    target_counts : dict
        Per counted sensitive attribute, (class, label code, records) triples.
    fetch : callable
        ``fetch(classes_mask, limit)``: the ids of the records of the marked classes,
        in record-id order, at most `limit` of them.
    released : bool, default=True
        False for the classes of the instance itself (no suppressed block, as on one
        machine).
    """

    def __init__(self, instance, qi, labels: dict, digits: dict, sizes: np.ndarray, target_counts: dict,
                 fetch: Callable[[np.ndarray, int | None], list], *, released: bool = True):
        sizes = np.asarray(sizes, dtype=np.int64)
        digits = {name: digits[name] for name in qi}
        # The fields of RiskClasses but `ids`, which is made on demand (a RangeIndex holds
        # no array); the rows are laid out class by class.
        self.instance, self.released, self.qi, self.sizes = instance, released, tuple(qi), sizes
        self.table = pd.DataFrame(index=pd.RangeIndex(int(sizes.sum())))
        self.codes = _RepeatedCodes(digits, labels, sizes)
        self._labels, self._digits = labels, digits
        self._target_counts = target_counts
        self._fetch = fetch

    @cached_property
    def ids(self) -> np.ndarray:
        """The class of every record (one entry per record: only the per-record views
        read it, such as ``individual.risk``), after a check of its memory."""
        dtype = id_type(max(self.n_classes, 1))
        check_memory(self.n_records * np.dtype(dtype).itemsize,
                     f"the class of each of the {self.n_records} records, on the client", "",
                     caller="risk")
        return np.repeat(np.arange(self.n_classes, dtype=dtype), self.sizes)

    @cached_property
    def first_row(self) -> np.ndarray:
        return np.cumsum(self.sizes) - self.sizes

    @cached_property
    def suppressed_classes(self) -> np.ndarray:
        # As RiskClasses reads it, from the classes' labels rather than the rows'.
        return _suppressed(self, lambda name: (self._digits[name], self._labels[name]))

    def class_codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        # From the classes' own codes: the repeated codes hold one entry per record.
        return self._digits[name], self._labels[name]

    def class_labels(self, g: int) -> dict:
        return {name: str(self._labels[name][self._digits[name][g]]) for name in self.qi}

    def records(self, mask_classes: np.ndarray, limit: int | None = None) -> list:
        return self._fetch(mask_classes, limit)

    def value_counts(self, attribute: str) -> tuple[np.ndarray, np.ndarray]:
        if attribute not in self._target_counts:
            raise SchemaError(f"The table lacks the column {attribute!r} whose disclosure is measured.")
        g, t, count = self._target_counts[attribute]
        values = self._labels[attribute]
        flat = np.bincount(g * len(values) + t, weights=count, minlength=self.n_classes * len(values))
        return flat.astype(np.int64).reshape(self.n_classes, len(values)), values


def measure_risk(classes: DaskRiskClasses, seconds: dict, *, population_file: str = "", **options) -> RiskReport:
    """:func:`fairanon.models.risk.report.risk` of the classes of a table on Dask
    (`options` as there), after the checks the Dask engine needs first.
    `population_file` names the population table in errors when `options` holds it
    read from a file already (its path, quoted).

    Raises
    ------
    SchemaError
        If the table holds no rows (as on one machine).
    InvalidParameterError
        If the figures need what the Dask engine does not read: a weight column for the
        individual risk (pass ``weights=False``: F = f; measured by ``engine="local"``).
    MemoryLimitError
        If SUDA's rows (one per record, on the client) exceed the memory limit in force
        (pass ``suda_max_size=None``).
    """
    if not classes.n_records:
        raise SchemaError("The release holds no rows; risk has nothing to measure.")
    checked = check_dask_options(classes.instance.schema, options)
    if checked["population"] is not None:
        started = time.perf_counter()
        what = population_file or checked["population_file"]
        options = {**options, "population": count_population(checked["population"], classes, what)}
        seconds = {**seconds, "population": time.perf_counter() - started}
    max_size = options.get("suda_max_size", 3)
    if max_size is not None:
        code_bytes = [classes.codes.itemsize(name) for name in classes.qi]
        check_memory(suda_memory(classes.n_records, code_bytes, max_size),
                     f"SUDA to size {max_size} on the client over {classes.n_records} records",
                     "pass suda_max_size=None", caller="risk")
    return risk(classes.instance, classes=classes, classes_seconds=seconds, **options)


def check_dask_options(schema, options: dict) -> dict:
    """:func:`~fairanon.models.risk.report.risk_options` of `options` (its checked
    values; ``population``: the population table as the Dask engine reads it, or None;
    ``population_file``: its path quoted, when one was given, else ""), and the refusal of what the Dask engine does not read: a weight column.
    Before any pass over the table.

    Raises
    ------
    InvalidParameterError
        A bad option, a weight column (pass ``weights=False``: F = f; measured by
        ``engine="local"``), a population that is not a table.
    SchemaError
        An unknown `sensitive` attribute, a population without a quasi-identifier column.
    """
    checked = risk_options(schema, **{k: v for k, v in options.items() if k != "population"})
    weight = checked["weights"]
    if weight is not None:
        raise InvalidParameterError(
            f"The individual risk from the weight column {weight!r} is measured on one machine only "
            "(engine='local', fairanon risk); the Dask engine does not read weights. Pass weights=False "
            "to measure the other figures on Dask (individual risk with F = f)."
        )
    population = options.get("population")
    path = repr(os.fspath(population)) if isinstance(population, (str, os.PathLike)) else ""
    return {**checked, "population": _population_table(population, schema), "population_file": path}


def _population_table(population, schema):
    """The population table of the journalist risk: an Instance or a pandas DataFrame as
    it is (counted on this machine), a Dask DataFrame, a CSV path read by
    :func:`~fairanon.distributed.instance.read_table` (every column as text, its
    quasi-identifiers converted when counted), or a Parquet path read without its index; its
    quasi-identifier columns checked from its columns, before any pass."""
    import dask.dataframe as dd

    if population is None or isinstance(population, (Instance, pd.DataFrame)):
        return population
    if isinstance(population, (str, os.PathLike)):
        path = os.fspath(population)
        try:
            if path.endswith((".csv", ".csv.gz")):
                # Every column as text, the quasi-identifiers converted as one machine
                # converts them (population_counts): Dask infers a numeric column's type from
                # the file's first bytes only, so a later 33.5 or blank cell would fail the
                # parser, in any column.
                population = read_table(path, numbered=False, all_text=True)
            else:
                # Without its index: Dask cannot select the columns of a file written with
                # a named pandas index (KeyError), and the records need no ids.
                population = dd.read_parquet(path, index=False)
        except FairanonError:
            raise
        except Exception as exc:  # pyarrow's, the CSV parser's, a damaged gzip file's: reading_failed's
            if not reading_failed(exc):
                raise
            raise _unreadable(repr(path), exc) from None
    if not isinstance(population, dd.DataFrame):
        raise InvalidParameterError(
            "The 'population' parameter of risk must be an Instance, a pandas or Dask DataFrame, or a Parquet "
            f"path. Got {type(population).__name__} instead."
        )
    for name in schema.qi:
        if name not in population.columns:
            raise SchemaError(f"The population table lacks the quasi-identifier column {name!r}.")
    return population


def _unreadable(what: str, exc: Exception) -> SchemaError:
    """The error of a population table the readers fail on (`what`: its path, or
    nothing), in one line."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return SchemaError(f"Cannot read the population table {what}: {reason}".replace(" :", ":"))


def count_population(population, classes: RiskClasses, what: str = "") -> PopulationCounts:
    """The distinct combinations of the quasi-identifiers of `classes` in a population
    table (:func:`_population_table`) and their records: on Dask, a group-by per
    partition (:func:`~fairanon.models.risk.sample.population_counts`), merged two by two;
    a table on this machine, counted here. `what` names the table in the error of a file
    the reader fails on (its path, quoted)."""
    import dask

    schema, qi = classes.instance.schema, classes.qi
    if isinstance(population, (Instance, pd.DataFrame)):
        return population_counts(population, schema, qi)
    # The client's limit, resolved here and checked by every task: the tasks run where
    # the client's limit is not in force, and the last merge's counts come to the client.
    limit = current_limit(None, "risk")
    parts = [dask.delayed(_counted)(part, schema, qi, limit) for part in population[list(qi)].to_delayed()]
    try:
        counts = compute(tree(parts, lambda a, b: _merged(a, b, limit)))
    except FairanonError:
        raise
    except Exception as exc:  # a CSV's later blocks are parsed only now: reading_failed's
        if not reading_failed(exc):
            raise
        raise _unreadable(what, exc) from None
    if isinstance(counts, FairanonError):
        raise counts
    return counts


# The counting tasks return fairanon's errors (a bad value, the memory limit) rather than
# raise them: raised, a worker of a cluster logs the task as failed, with its traceback,
# on the user's terminal before the client raises the one-line error.
def _counted(part: pd.DataFrame, schema, qi, limit) -> PopulationCounts | FairanonError:
    """:func:`~fairanon.models.risk.sample.population_counts` of a partition, or its error."""
    try:
        return population_counts(part, schema, qi, limit)
    except FairanonError as exc:
        return exc


def _merged(a, b, limit) -> PopulationCounts | FairanonError:
    """The counts of two partitions merged, or the first error of either or of the merge."""
    for side in (a, b):
        if isinstance(side, FairanonError):
            return side
    try:
        return merge_population_counts(a, b, limit)
    except FairanonError as exc:
        return exc


def release_risk_dask(classes: DaskRiskClasses, seconds: dict, **options) -> dict | None:
    """:func:`fairanon.models.risk.report.release_risk`'s dict for a release on Dask
    (None for a release without rows, as on one machine), by :func:`measure_risk`.

    Above the memory limit in force, SUDA's memory makes the dict ``{"error": ...}``.
    With a weight attribute, which the Dask engine does not read, every figure but the
    individual risk (and the journalist risk read from it) is measured; those two
    entries are ``{"error": ...}``.
    """
    if not classes.n_records:
        return None
    weight = classes.instance.schema.weight
    if weight is not None:
        options = {"weights": False, **options}
    out = risk_dict(lambda **o: measure_risk(classes, seconds, **o), classes.n_records, options)
    if weight is not None and "error" not in out:
        error = (f"The individual risk from the weight column {weight!r} is measured on one machine only "
                 "(fairanon risk); the Dask engine does not read weights.")
        out["individual"] = {"error": error}
        if out["journalist"]["source"].startswith("individual risk"):
            out["journalist"] = {"source": out["journalist"]["source"], "error": error}
    return out
