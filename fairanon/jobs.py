"""Job files: one YAML (or JSON) document naming the data, its schema, the
requirements and the method.

.. code-block:: yaml

    instance:
      dataset: adult              # a bundled data set (fa.load), its options under 'options', or:
      csv: data/patients.csv      # a CSV file or a directory of them (paths relative to the job file)
      # parquet: data/patients/   # or a Parquet file or directory (column types from its schema)
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
    memory_limit: 8GB             # or a share of the available memory (0.5), or none
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from ._memory import resolve_memory_limit
from ._validation import check_time_limit
from .exceptions import InvalidParameterError, SchemaError
from .instances.files import as_record_ids, note_input, read_csv_table
from .instances.instance import Instance
from .instances.schema import Schema
from .models.requirements import Requirement, requirement_from_spec

__all__ = [
    "Job", "read_job", "read_document", "default_job", "load_instance_spec", "read_release", "read_table",
    "table_source",
]

_JOB_KEYS = {"instance", "requirements", "method", "options", "seed", "time_limit", "memory_limit", "name"}
#: Names a job's 'options' may not hold: anonymize's own arguments (a method's options
#: are passed beside them, so one given twice failed with a TypeError).
_NOT_OPTIONS = {"instance", "requirements", "method", "seed", "time_limit", "memory_limit",
                "engine", "schema"}
#: Values a job document that uses YAML aliases may expand to, the aliases followed: a
#: few hundred bytes of nested aliases expand to billions (PyYAML shares them, but
#: reading them does not). A document without aliases is as large as its text.
MAX_DOCUMENT_VALUES = 1_000_000


@dataclass
class Job:
    """A parsed job: the instance, the requirements and how to anonymize."""

    instance: Instance
    requirements: list[Requirement]
    method: str = "auto"
    options: dict = field(default_factory=dict)
    seed: Any = None
    time_limit: float | None = None
    #: As given in the file (bytes, a share, "none"), checked when read; None: the default.
    memory_limit: Any = None
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
        aliased = False  # whether the document uses an alias (*name)

        def compose_node(self, parent, index):
            if self.check_event(yaml.events.AliasEvent):
                self.aliased = True
            return super().compose_node(parent, index)

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

    note_input(path)
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
            loader = _strict_yaml_loader()(text)
            try:
                doc = loader.get_single_data()
            finally:
                loader.dispose()
            if loader.aliased:
                _check_expansion(doc, f"{what} {path!r}")
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


def _check_expansion(doc, what: str) -> None:
    """Refuse a document that expands to more than :data:`MAX_DOCUMENT_VALUES` values
    with its aliases followed, counted until the count passes it."""
    count, stack = 0, [doc]
    while stack:
        value = stack.pop()
        count += 1
        if count > MAX_DOCUMENT_VALUES:
            raise InvalidParameterError(
                f"{what} expands to more than {MAX_DOCUMENT_VALUES:,} values with its YAML aliases "
                "followed; write the values out, or use fewer nested aliases.")
        if isinstance(value, Mapping):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def load_instance_spec(spec: Mapping, base_dir: str = ".", *, table: pd.DataFrame | None = None) -> Instance:
    """Build the instance a job's ``instance:`` section describes.

    `table`: the section's CSV or Parquet data as :func:`read_table` reads it, with or
    without the schema's text columns, from a caller that has read the file already (the
    app, which guesses the schema from it), so that it is not parsed twice; None: read
    here. The file is read again when a text column or the ``id_column`` of a CSV file
    holds anything but text. A column read without being asked as text holds the text the
    file writes when
    not all of it parses as numbers, except when pandas parsed it in chunks and some
    chunk did: such a column holds numbers among its text, which no longer say how the
    file writes them, and the file is then read again."""
    from .instances.datasets import load
    from .instances.datasets.registry import file_options

    if not isinstance(spec, Mapping):
        raise InvalidParameterError("The 'instance' section of a job must be a mapping.")
    known = {"dataset", "csv", "parquet", "sep", "id_column", "missing", "schema", "name", "options"}
    unknown = set(spec) - known
    if unknown:
        raise InvalidParameterError(f"Unknown keys {sorted(unknown)} in the 'instance' section; allowed: {sorted(known)}.")
    if sum(key in spec for key in ("dataset", "csv", "parquet")) != 1:
        raise InvalidParameterError("The 'instance' section needs exactly one of 'dataset', 'csv' or 'parquet'.")
    missing = spec.get("missing", "error")
    if "dataset" in spec:
        options = spec.get("options") or {}
        if not isinstance(options, Mapping):
            raise InvalidParameterError(f"The 'options' of the 'instance' section must be a mapping; got {options!r}.")
        options = dict(options)
        for key in file_options(str(spec["dataset"]), options):  # read relative to the job file, as 'csv' is
            value = options[key]
            if value is not None and not isinstance(value, str):
                raise InvalidParameterError(
                    f"The option {key!r} of data set {spec['dataset']!r} names a file: it must be a path as text; "
                    f"got {value!r}.")
            if value is not None and not os.path.isabs(value):
                options[key] = os.path.join(base_dir, value)
            if value is not None:
                note_input(options[key])
        instance = load(str(spec["dataset"]), **options)
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
    kind, path = table_source(spec, base_dir)
    if "schema" not in spec:
        raise SchemaError(f"A {kind.upper()} instance needs a 'schema' section giving each column's role and type.")
    sep = spec.get("sep", ",")
    if not isinstance(sep, str) or not sep:
        raise InvalidParameterError(f"The 'sep' of the 'instance' section must be a string; got {sep!r}.")
    schema_spec = spec["schema"]
    id_column = spec.get("id_column")
    if id_column is not None and not isinstance(id_column, str):
        raise InvalidParameterError(f"The 'id_column' of the 'instance' section must be a column name; got {id_column!r}.")
    text_columns = _text_columns(schema_spec)
    # The id column too: read as numbers, "007" would become the id 7.
    as_text = [*text_columns, *([id_column] if id_column is not None else [])]
    if table is None or (kind == "csv" and not _holds_text(table, as_text)):
        table = read_table(path, kind, sep=sep, text_columns=text_columns, id_column=id_column,
                           parsed=_parsed_columns(schema_spec))
    if id_column is not None:
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
    schema = Schema.from_spec(schema_spec, base_dir)
    check_no_record_id(schema, path)
    name = spec.get("name", os.path.splitext(os.path.basename(path.rstrip(os.sep)))[0])
    return Instance(table, schema, name=name, missing=missing)


def check_no_record_id(schema: Schema, path: str) -> None:
    """Refuse an attribute named ``record_id``: release files hold the record ids in a
    column of that name (a second one made a release that verify refused as naming a
    column twice), on both engines."""
    if "record_id" in schema:
        raise SchemaError(
            f"The column 'record_id' of {path!r} has the name release files give the record "
            "ids; rename it in the file and the job's schema.")


def _check_seed(seed, path: str):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidParameterError(f"The 'seed' of job file {path!r} must be a non-negative int; got {seed!r}.")
    return seed


def _check_time_limit(value, path: str) -> float | None:
    """A positive number of seconds, or None; a number YAML reads as text (``1e3``, which
    YAML 1.1 takes for a string) is read as the number it spells."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass  # refused below, by name
    return check_time_limit(value, f"job file {path!r}")


def _check_memory_limit(value, path: str):
    """`value` as given, once :func:`fairanon._memory.resolve_memory_limit` accepts it
    (a share is resolved again when the method checks, against the memory then available)."""
    if value is not None:
        resolve_memory_limit(value, f"job file {path!r}")
    return value


def table_source(spec: Mapping, base_dir: str = ".") -> tuple[str, str]:
    """The format ("csv" or "parquet") and path of a job's data file or directory."""
    kind = "parquet" if "parquet" in spec else "csv"
    path = str(spec[kind])
    path = path if os.path.isabs(path) else os.path.join(base_dir, path)
    if not os.path.exists(path):
        raise InvalidParameterError(f"Data file {path!r} does not exist.")
    note_input(path)
    return kind, path


def _holds_text(table: pd.DataFrame, columns) -> bool:
    """Whether every one of `columns` present in `table` holds text only (missing cells aside)."""
    return all(pd.api.types.infer_dtype(table[c], skipna=True) in ("string", "empty")
               for c in columns if c in table.columns)


def _parsed_columns(schema_spec) -> list[str]:
    """Columns the schema declares numeric and reads (not identifiers or ignored): the
    only ones of a CSV file parsed as numbers. The others are read as text, as the Dask engine reads
    them: pandas would guess the type of an ignored column or one outside the schema,
    which nothing reads, and warn when its guesses differ from block to block."""
    if not isinstance(schema_spec, Mapping):
        return []
    return [str(name) for name, attr in schema_spec.items()
            if isinstance(attr, Mapping) and attr.get("type", attr.get("kind")) == "numeric"
            and attr.get("role") not in ("ignore", "identifier")]


def _text_columns(schema_spec) -> list[str]:
    """Columns the schema does not declare numeric: read as text, not guessed."""
    if not isinstance(schema_spec, Mapping):
        return []
    return [str(name) for name, attr in schema_spec.items()
            if not (isinstance(attr, Mapping) and attr.get("type", attr.get("kind")) == "numeric")]


def read_table(path: str, kind: str | None = None, *, sep: str = ",", text_columns=(),
               id_column: str | None = None, what: str = "Data file", columns=None, parsed=None) -> pd.DataFrame:
    """A CSV or Parquet file, or a directory of them (read in name order), as one
    DataFrame. Parquet column types come from its schema; CSV columns in
    `text_columns` are read as text, the others parsed, and spaces after a separator
    are skipped. The CSV column `id_column` is read as text exactly as written (leading
    spaces and zeros kept, a number not parsed), so that the release's record ids are
    the file's ids; a blank id reads as missing. `what` names the file in errors. With
    `columns`, only those of them the file holds are kept: a Parquet file's others are
    not loaded, a CSV file's are parsed (every row checked) and dropped chunk by chunk
    (:func:`~fairanon.instances.files.read_csv_table`), so that they are never all in
    memory either. With `parsed`, every CSV column but those is read as text."""
    kind = kind or ("parquet" if path.endswith((".parquet", ".pq")) or os.path.isdir(path) and any(
        f.endswith((".parquet", ".pq")) for f in os.listdir(path)) else "csv")
    try:
        if kind == "parquet":
            if columns is not None:
                import pyarrow.dataset

                held = set(pyarrow.dataset.dataset(path, format="parquet").schema.names)
                columns = [c for c in columns if c in held]
            return pd.read_parquet(path, columns=columns)
        files = [path]
        if os.path.isdir(path):
            files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith((".csv", ".csv.gz")))
            if not files:
                raise SchemaError(f"Directory {path!r} holds no .csv file.")
        dtype = {c: str for c in text_columns}
        if id_column is not None:
            dtype[id_column] = str
        frames = [_exact_ids(read_csv_table(f, what=what, sep=sep, skipinitialspace=True, dtype=dtype,
                                            columns=columns, parsed=parsed), f, sep, id_column) for f in files]
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as exc:
        if isinstance(exc, SchemaError):
            raise
        raise SchemaError(f"Cannot read {what.lower()} {path!r} as {kind.upper()}: {exc}") from None


def read_release(path: str, instance: Instance, *, neutralized=None):
    """The release in a CSV (with a ``record_id`` column) or Parquet file written by
    ``fairanon anonymize``, indexed like `instance`; every CSV cell is read as the text
    written, formulas the writer neutralized (`neutralized`: the ``neutralized_formulas``
    of its ``report.json``) read back. Its classes are left to the reader: the verifier and
    the metrics regroup by released values.

    Raises
    ------
    InvalidParameterError
        If the file does not exist or cannot be read, has no ``record_id`` column, or
        its ids are not of the instance's type.
    """
    return external_release(release_readings(path, neutralized)[0], instance)


def release_readings(path: str, neutralized=None) -> list[pd.DataFrame]:
    """The table of the release file at `path`, record_id a column: one reading of a
    Parquet file; of a CSV file, every cell as the text written, with the formulas the
    writer neutralized read back first and, when `neutralized` is None (unknown), the
    cells as they are second (:func:`~fairanon.instances.files.formula_readings`).

    Raises
    ------
    InvalidParameterError
        If the file does not exist or cannot be read.
    """
    from .instances.files import formula_readings

    if path.endswith((".parquet", ".pq")) or os.path.isdir(path):
        if not os.path.exists(path):
            raise InvalidParameterError(f"release file {path!r} does not exist")
        try:
            table = pd.read_parquet(path)
        except (OSError, ValueError) as exc:
            raise InvalidParameterError(f"cannot read the Parquet release {path!r}: {exc}") from None
        if "record_id" not in table.columns and table.index.name == "record_id":
            table = table.reset_index()
        return [table]
    table = read_csv_table(path, what="Release file", dtype=str, keep_default_na=False)
    return formula_readings(table, neutralized)


def external_release(table: pd.DataFrame, instance: Instance):
    """A Release of a release file's table (:func:`release_readings`), indexed like
    `instance` by its record_id column; its classes are left to the reader.

    Raises
    ------
    InvalidParameterError
        If the table has no ``record_id`` column or its ids are not of the instance's type.
    """
    from .release import Release

    if "record_id" not in table.columns:
        raise InvalidParameterError("the release needs a 'record_id' column")
    table = table.copy()
    ids = table.pop("record_id")
    index_dtype = instance.row_ids.dtype
    try:
        table.index = pd.Index(as_record_ids(ids, index_dtype) if index_dtype.kind in "iuf" else ids)
    except (ValueError, TypeError, OverflowError) as exc:  # what the Dask engine's reading says too
        raise InvalidParameterError(f"record_id values do not match the instance's record ids ({index_dtype}): "
                                    f"{str(exc).splitlines()[-1]}") from None
    return Release(table=table, groups=[0] * len(table), provenance={"method": "external"})


def _exact_ids(table: pd.DataFrame, path: str, sep: str, id_column: str | None) -> pd.DataFrame:
    """`table` (read with spaces after separators skipped) with its `id_column` as the
    file writes it: the column read again, nothing skipped or parsed, and an id taken
    from there wherever it is the first reading's id with spaces in front, or text the
    first reading took for a missing value (``NA``, ``None``). A quoted
    id keeps the first reading (the text between the quotes, spaces included); so do
    all ids when the second reading has other rows (a quoted line break after a space)."""
    if id_column is None or id_column not in table.columns:
        return table
    position = table.columns.get_loc(id_column)
    if not isinstance(position, int):
        return table
    raw = pd.read_csv(path, sep=sep, encoding="utf-8", usecols=[position], dtype=str, keep_default_na=False,
                      skipinitialspace=False).iloc[:, 0]
    read = table[id_column]
    if len(raw) != len(read):
        return table
    raw, read = raw.reset_index(drop=True), read.reset_index(drop=True)
    spaced = (raw.str.lstrip(" ").eq(read) & raw.ne(read)).to_numpy()
    # Text pandas reads as missing ("NA", "None", "null") is an id like any other.
    named = (read.isna() & raw.str.strip().ne("")).to_numpy()
    taken = spaced | named
    if not taken.any():
        return table
    table = table.copy()
    table[id_column] = np.where(taken, raw.to_numpy(dtype=object), read.to_numpy(dtype=object))
    return table


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
    if not isinstance(options, Mapping) or not all(isinstance(key, str) for key in options):
        raise InvalidParameterError(
            "The 'options' of a job must be a mapping of option names to values."
        )
    own = sorted(set(options) & _NOT_OPTIONS)
    if own:
        raise InvalidParameterError(
            f"The 'options' of job file {path!r} name {own}: arguments of the job itself, not "
            "a method's options. Write method, seed, time_limit and memory_limit at the job's "
            "top level, the schema in its 'instance' section (the engine is the command "
            "line's --engine)."
        )
    name = doc.get("name", os.path.splitext(os.path.basename(path))[0])
    if not isinstance(name, str):
        raise InvalidParameterError(
            f"The 'name' of job file {path!r} must be text; got a {type(name).__name__}.")
    return Job(
        instance=instance,
        requirements=[requirement_from_spec(r) for r in reqs],
        method=str(doc.get("method", "auto")),
        options=dict(options),
        seed=_check_seed(doc.get("seed"), path),
        time_limit=_check_time_limit(doc.get("time_limit"), path),
        memory_limit=_check_memory_limit(doc.get("memory_limit"), path),
        name=name,
    )


def default_job() -> str:
    """Path of the bundled default job (Adult, 5-anonymity, 2-diversity, 0.2-closeness)."""
    return str(resources.files("fairanon.instances") / "data" / "adult_job.yaml")
