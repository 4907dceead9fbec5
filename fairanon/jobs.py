"""Job files: one YAML (or JSON) document naming the data, its schema, the
requirements and the method.

.. code-block:: yaml

    instance:
      dataset: adult              # a bundled data set (fa.load), or:
      csv: data/patients.csv      # a CSV file (paths relative to the job file)
      sep: ","
      id_column: id               # optional; default: row numbers
      missing: error              # or drop
      schema:                     # required with csv; with dataset it overrides roles
        age: {role: qi, type: numeric}
        zip: {role: qi, type: categorical, hierarchy: hierarchies/zip.csv}  # ARX, ';'-separated
        city: {role: qi, hierarchy: cities.csv, hierarchy_sep: ","}
        disease: {role: sensitive}
    requirements:
      - k_anonymity: {k: 5}
      - l_diversity: {l: 2, variant: distinct}
      - t_closeness: {t: 0.2, distance: ordered}
      - diversity: "sex(female) [100, 500]"
      - alpha_protection: {measure: RD, alpha: 0.1, min_support: 20}
    method: mondrian
    options: {cut_rule: median}
    seed: 0
    time_limit: 60
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import pandas as pd

from .exceptions import InvalidParameterError, SchemaError
from .instances.files import read_csv_table
from .instances.instance import Instance
from .instances.schema import Schema
from .models.requirements import Requirement, requirement_from_spec

__all__ = ["Job", "read_job", "read_document", "default_job", "load_instance_spec"]

_JOB_KEYS = {"instance", "requirements", "method", "options", "seed", "time_limit", "name"}


@dataclass
class Job:
    """A parsed job: the instance, the requirements and how to anonymize."""

    instance: Instance
    requirements: list[Requirement]
    method: str = "auto"
    options: dict = field(default_factory=dict)
    seed: Any = None
    time_limit: float | None = None
    name: str = "job"


def _unique_keys(pairs: list) -> dict:
    """A JSON object, refusing a key given twice."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} is given twice")
        out[key] = value
    return out


def _strict_yaml_loader():
    """A safe YAML loader that refuses a key given twice in one mapping (PyYAML keeps
    the last silently)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    def mapping(loader, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<: *base" then overriding a key is not a duplicate
            key = loader.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:
                continue  # an unhashable key: the constructor below reports it
            if first != key_node.start_mark.line + 1:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice (first on line {first})", key_node.start_mark
                )
        return loader.construct_mapping(node, deep=deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return StrictLoader


def read_document(path: str, what: str = "Job file") -> Mapping:
    """The mapping a YAML (or ``.json``) file holds; a missing, unreadable or malformed
    file, a key given twice or a document that is not a mapping raise
    :class:`InvalidParameterError` naming `what` and the problem."""
    import yaml

    if not os.path.isfile(path):
        raise InvalidParameterError(f"{what} {path!r} does not exist.")
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"{what} {path!r} is not UTF-8 text ({exc.reason}).") from None
    try:
        if path.endswith(".json"):
            doc = json.loads(text, object_pairs_hook=_unique_keys)
        else:
            doc = yaml.load(text, Loader=_strict_yaml_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        detail = "; ".join(str(x) for x in (exc.context, exc.problem) if x)
        raise InvalidParameterError(f"{what} {path!r} is malformed{where}: {detail}.") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise InvalidParameterError(f"{what} {path!r} is malformed: {exc}") from None
    if not isinstance(doc, Mapping):
        raise InvalidParameterError(f"{what} {path!r} must hold a mapping; got {type(doc).__name__}.")
    return doc


def load_instance_spec(spec: Mapping, base_dir: str = ".") -> Instance:
    """Build the instance a job's ``instance:`` section describes."""
    from .instances.datasets import load

    if not isinstance(spec, Mapping):
        raise InvalidParameterError("The 'instance' section of a job must be a mapping.")
    known = {"dataset", "csv", "sep", "id_column", "missing", "schema", "name", "options"}
    unknown = set(spec) - known
    if unknown:
        raise InvalidParameterError(f"Unknown keys {sorted(unknown)} in the 'instance' section; allowed: {sorted(known)}.")
    if ("dataset" in spec) == ("csv" in spec):
        raise InvalidParameterError("The 'instance' section needs exactly one of 'dataset' or 'csv'.")
    missing = spec.get("missing", "error")
    if "dataset" in spec:
        options = spec.get("options") or {}
        if not isinstance(options, Mapping):
            raise InvalidParameterError(f"The 'options' of the 'instance' section must be a mapping; got {options!r}.")
        instance = load(str(spec["dataset"]), **dict(options))
        if "schema" in spec:
            schema = instance.schema
            for attr in Schema.from_spec(spec["schema"], base_dir):
                schema = schema.replace(attr) if attr.name in schema else Schema([*schema, attr])
            table = instance.table.copy()
            for col in table.columns:
                if isinstance(table[col].dtype, pd.CategoricalDtype):
                    table[col] = table[col].astype(str)
            table = table.join(instance.extra) if len(instance.extra.columns) else table
            instance = Instance(table, schema, name=instance.name, missing=missing)
        return instance
    path = str(spec["csv"])
    path = path if os.path.isabs(path) else os.path.join(base_dir, path)
    if not os.path.exists(path):
        raise InvalidParameterError(f"Data file {path!r} does not exist.")
    if "schema" not in spec:
        raise SchemaError("A CSV instance needs a 'schema' section giving each column's role and type.")
    sep = spec.get("sep", ",")
    if not isinstance(sep, str) or not sep:
        raise InvalidParameterError(f"The 'sep' of the 'instance' section must be a string; got {sep!r}.")
    table = read_csv_table(path, what="Data file", sep=sep, skipinitialspace=True)
    id_column = spec.get("id_column")
    if id_column is not None:
        if not isinstance(id_column, str):
            raise InvalidParameterError(f"The 'id_column' of the 'instance' section must be a column name; got {id_column!r}.")
        if id_column not in table.columns:
            raise SchemaError(f"id_column {id_column!r} is not a column of {path!r}; columns: {list(table.columns)}.")
        empty = table[id_column].isna().to_numpy()
        if empty.any():
            lines = [int(i) + 2 for i in empty.nonzero()[0][:5]]  # the header is line 1
            raise SchemaError(
                f"id_column {id_column!r} of {path!r} has {int(empty.sum())} empty cell(s) (line(s) {lines}); "
                "every record needs an id."
            )
        table = table.set_index(id_column)
    schema = Schema.from_spec(spec["schema"], base_dir)
    name = spec.get("name", os.path.splitext(os.path.basename(path))[0])
    return Instance(table, schema, name=name, missing=missing)


def _check_seed(seed, path: str):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidParameterError(f"The 'seed' of job file {path!r} must be a non-negative int; got {seed!r}.")
    return seed


def read_job(path: str, *, instance: Instance | None = None) -> Job:
    """Parse a job file (YAML or JSON); `instance` replaces its ``instance`` section."""
    doc = read_document(path)
    unknown = set(doc) - _JOB_KEYS
    if unknown:
        raise InvalidParameterError(f"Unknown keys {sorted(unknown)} in job file {path!r}; allowed: {sorted(_JOB_KEYS)}.")
    base_dir = os.path.dirname(os.path.abspath(path))
    if instance is None:
        if "instance" not in doc:
            raise InvalidParameterError(f"Job file {path!r} has no 'instance' section.")
        instance = load_instance_spec(doc["instance"], base_dir)
    reqs = doc.get("requirements")
    if not isinstance(reqs, list) or not reqs:
        raise InvalidParameterError(f"Job file {path!r} needs a non-empty 'requirements' list.")
    options = doc.get("options") or {}
    if not isinstance(options, Mapping):
        raise InvalidParameterError("The 'options' of a job must be a mapping.")
    return Job(
        instance=instance,
        requirements=[requirement_from_spec(r) for r in reqs],
        method=str(doc.get("method", "auto")),
        options=dict(options),
        seed=_check_seed(doc.get("seed"), path),
        time_limit=doc.get("time_limit"),
        name=str(doc.get("name", os.path.splitext(os.path.basename(path))[0])),
    )


def default_job() -> str:
    """Path of the bundled default job (Adult, 5-anonymity, 2-diversity, 0.2-closeness)."""
    return str(resources.files("fairanon.instances") / "data" / "adult_job.yaml")
