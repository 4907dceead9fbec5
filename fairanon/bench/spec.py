"""Benchmark suites: what to run, written once in YAML (or as a Python mapping).

.. code-block:: yaml

    name: quick
    seeds: [0]                  # one release per seed (randomized methods differ)
    repetitions: 1              # timing repeats of each (configuration, seed)
    time_limit: 60              # seconds per run, passed to the method; default 600
    grace: 5                    # extra seconds before a run still going is killed
    setup_limit: 1800           # seconds to load the instance, and again to verify
    memory_limit: 4GB           # address-space limit of each run's process
    jobs: 1                     # runs at a time
    out: results/quick          # output directory, relative to the working directory
    instances:
      - dataset: adult          # fa.load(...); options: {variant: full}
      - csv: data/patients.csv  # as in a job file: id_column, schema, ...
        name: patients
      - synthetic: {n_rows: [1000, 100000], n_qi: 5, seed: 0}   # lists are grids
    requirements:               # requirement sets; list values are grids
      - name: k
        set:
          - k_anonymity: {k: [5, 10, 50]}
      - set: [{k_anonymity: 5}, {l_diversity: 2}]
    algorithms:
      - method: mondrian        # any name in fairanon.METHODS, or "module:function"
        params: {cut_rule: [median, balanced]}   # grid
        fixed: {}               # options passed as they are
        skip_missing: false     # true: leave out silently when the method does not exist
    metrics:
      mre: false                # median relative error of count queries (slower)
      vectors: auto             # per-tuple property vectors: true, false, or auto (≤ 1 M rows)
      numeric_loss: width
    compare:                    # see fairanon.bench.compare.CompareConfig
      properties: [size, risk, ldist, loss, util_paper]
      multi:
        - {procedure: wtd, properties: [size, util_paper], weights: [0.5, 0.5]}

Every combination instance × requirement set × algorithm × parameters × seed ×
repetition is one **run**, executed by :mod:`fairanon.bench.runner` in a fresh process.
When only some combinations make sense, list ``experiments``, each with its own
``instances``, ``requirements`` and ``algorithms`` (a missing one is taken from the top
level); the other settings are shared:

.. code-block:: yaml

    experiments:
      - name: k sweep
        instances: [{dataset: adult}]
        requirements: [{k_anonymity: {k: [5, 10]}}]
        algorithms: [mondrian]
      - name: t sweep
        instances: [{dataset: german}]
        requirements: [{t_closeness: {t: [0.1, 0.2]}}]
        algorithms: [dmondrian]

Relative paths are read from the suite file's directory.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import InvalidParameterError
from ..models.requirements import requirement_from_spec
from .quality import BINARY_INDICES, NORMALIZATIONS, PROPERTIES, UNARY_INDICES

__all__ = ["RunSpec", "Suite", "load_suite", "parse_memory", "resolve_method"]

_SUITE_KEYS = {
    "name",
    "description",
    "instances",
    "requirements",
    "algorithms",
    "experiments",
    "seeds",
    "repetitions",
    "time_limit",
    "grace",
    "setup_limit",
    "memory_limit",
    "metrics",
    "compare",
    "jobs",
    "out",
}
_EXPERIMENT_KEYS = {"name", "instances", "requirements", "algorithms"}
_METRIC_KEYS = {"mre", "mre_queries", "vectors", "vector_max_rows", "numeric_loss"}
_COMPARE_KEYS = {"properties", "comparators", "rank_norm", "rank_eps", "hv_reference", "multi"}
_MULTI_KEYS = {
    "procedure",
    "name",
    "properties",
    "index",
    "weights",
    "eps",
    "goals",
    "normalization",
    "one_sided",
}
_ALGORITHM_KEYS = {
    "method",
    "name",
    "params",
    "fixed",
    "time_limit",
    "memory_limit",
    "skip_missing",
}
_INSTANCE_KEYS = {
    "dataset",
    "csv",
    "synthetic",
    "name",
    "options",
    "sep",
    "id_column",
    "missing",
    "schema",
}
_DEFAULT_METRICS = {
    "mre": False,
    "mre_queries": 10_000,
    "vectors": "auto",
    "vector_max_rows": 1_000_000,
    "numeric_loss": "width",
}


def parse_memory(value, where: str = "memory_limit") -> int | None:
    """Bytes from ``None``, a number of megabytes or a string such as ``"4GB"``.

    >>> parse_memory("512MB"), parse_memory(2048) // 2**20, parse_memory("4 GiB") // 2**30
    (536870912, 2048, 4)
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return int(value * 2**20)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT])?(i?[bB])?\s*", value)
        if m:
            scale = {None: 2**20, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[
                (m.group(2) or "").lower() or None
            ]
            amount = float(m.group(1)) * scale
            if amount > 0:
                return int(amount)
    raise InvalidParameterError(
        f"The {where!r} of a suite must be a number of megabytes or a size such as '4GB'. Got {value!r} instead."
    )


def resolve_method(method: str):
    """The function behind a method name of :data:`fairanon.METHODS` or a
    ``"module:function"`` string, looked up now (methods registered later are found)."""
    from ..api import METHODS

    if not isinstance(method, str) or not method:
        raise InvalidParameterError(
            f"A suite's algorithm 'method' must be a string. Got {method!r} instead."
        )
    if method in METHODS:
        return METHODS[method]
    if ":" in method:
        module, _, attr = method.partition(":")
        try:
            func = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise InvalidParameterError(f"Cannot import method {method!r}: {exc}.") from None
        if not callable(func):
            raise InvalidParameterError(f"Method {method!r} is not callable.")
        return func
    raise InvalidParameterError(
        f"The 'method' of a suite's algorithm must be one of {sorted(METHODS)} or 'module:function'. "
        f"Got {method!r} instead."
    )


def _grid(mapping: Mapping) -> list[tuple[dict, dict]]:
    """Every combination of the list values of `mapping`: (full mapping, varied part)."""
    keys = list(mapping)
    choices = [mapping[k] if isinstance(mapping[k], list) else [mapping[k]] for k in keys]
    for k, c in zip(keys, choices):
        if not c:
            raise InvalidParameterError(f"The grid of {k!r} in a suite is an empty list.")
    varied = [k for k in keys if isinstance(mapping[k], list)]
    out = []
    for combo in itertools.product(*choices):
        full = dict(zip(keys, combo))
        out.append((full, {k: full[k] for k in varied}))
    return out


def _scalar_text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class RunSpec:
    """One run: everything the fresh process needs, as plain JSON-ready data.

    ``key`` is a hash of what defines the run (instance, requirements, method,
    parameters, seed, repetition, metrics), so a resumed suite recognizes finished runs
    even after runs were added to it.
    """

    key: str
    label: str
    release: str
    instance_label: str
    instance: dict
    base_dir: str
    reqset: str
    requirements: tuple
    requirements_text: str
    algorithm: str
    method: str
    params: dict
    seed: Any
    repetition: int
    time_limit: float | None
    grace: float
    setup_limit: float
    memory_limit: int | None
    metrics: dict
    columns: dict = field(default_factory=dict)
    index: int = 0

    def to_task(self) -> dict:
        """The JSON document the run's process reads."""
        return {
            "key": self.key,
            "instance": self.instance,
            "base_dir": self.base_dir,
            "requirements": list(self.requirements),
            "method": self.method,
            "params": self.params,
            "seed": self.seed,
            "time_limit": self.time_limit,
            "memory_limit": self.memory_limit,
            "metrics": self.metrics,
        }

    def row(self) -> dict:
        """The descriptive columns of this run's results row."""
        return {
            "run_id": self.key,
            "run_index": self.index,
            "label": self.label,
            "release": self.release,
            "instance": self.instance_label,
            "reqset": self.reqset,
            "requirements": self.requirements_text,
            "algorithm": self.algorithm,
            "method": self.method,
            "params": json.dumps(self.params, sort_keys=True, default=str),
            "seed": self.seed,
            "repetition": self.repetition,
            "time_limit": self.time_limit,
            "memory_limit_mb": None if self.memory_limit is None else self.memory_limit / 2**20,
            **self.columns,
        }


@dataclass
class Experiment:
    """Instances × requirement sets × algorithms, validated and with grids expanded."""

    name: str
    instances: list
    requirements: list
    algorithms: list


@dataclass
class Suite:
    """A parsed, validated benchmark suite (see the module docstring for the format).

    Build it with :meth:`from_dict` (a Python mapping) or :func:`load_suite` (a file);
    :meth:`runs` lists the runs.
    """

    name: str
    experiments: list
    seeds: list = field(default_factory=lambda: [0])
    repetitions: int = 1
    time_limit: float | None = 600.0
    grace: float = 5.0
    setup_limit: float = 1800.0
    memory_limit: int | None = None
    metrics: dict = field(default_factory=lambda: dict(_DEFAULT_METRICS))
    compare: dict = field(default_factory=dict)
    jobs: int = 1
    out: str | None = None
    description: str = ""
    base_dir: str = "."
    skipped: list = field(default_factory=list)

    @classmethod
    def from_dict(cls, doc: Mapping, base_dir: str = ".") -> Suite:
        """Validate a suite given as a mapping; relative paths are read from `base_dir`.

        Raises
        ------
        InvalidParameterError
            With a message naming the bad key and what is allowed.

        Examples
        --------
        >>> s = Suite.from_dict({"instances": [{"dataset": "dewri_t1"}],
        ...                      "requirements": [{"k_anonymity": {"k": [2, 3]}}],
        ...                      "algorithms": [{"method": "mondrian"}]})
        >>> [r.release for r in s.runs()]
        ['mondrian 2-anonymity', 'mondrian 3-anonymity']
        """
        if not isinstance(doc, Mapping):
            raise InvalidParameterError(
                f"A suite must be a mapping. Got {type(doc).__name__} instead."
            )
        unknown = set(doc) - _SUITE_KEYS
        if unknown:
            raise InvalidParameterError(
                f"Unknown keys {sorted(unknown)} in the suite; allowed: {sorted(_SUITE_KEYS)}."
            )
        seeds = doc.get("seeds", [0])
        seeds = seeds if isinstance(seeds, list) else [seeds]
        if not seeds or any(
            s is not None and (isinstance(s, bool) or not isinstance(s, int)) for s in seeds
        ):
            raise InvalidParameterError(
                f"The 'seeds' of a suite must be a list of ints. Got {doc.get('seeds')!r} instead."
            )
        repetitions = doc.get("repetitions", 1)
        if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
            raise InvalidParameterError(
                f"The 'repetitions' of a suite must be an int ≥ 1. Got {repetitions!r} instead."
            )
        jobs = doc.get("jobs", 1)
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise InvalidParameterError(
                f"The 'jobs' of a suite must be an int ≥ 1. Got {jobs!r} instead."
            )
        metrics = dict(_DEFAULT_METRICS)
        metrics.update(_check_keys(doc.get("metrics") or {}, _METRIC_KEYS, "metrics"))
        if metrics["vectors"] not in (True, False, "auto"):
            raise InvalidParameterError(
                f"metrics.vectors must be true, false or auto. Got {metrics['vectors']!r} instead."
            )
        if metrics["numeric_loss"] not in ("width", "values"):
            raise InvalidParameterError(
                f"metrics.numeric_loss must be 'width' or 'values'. Got {metrics['numeric_loss']!r} instead."
            )
        suite = cls(
            name=str(doc.get("name", "suite")),
            description=str(doc.get("description", "")),
            experiments=[],
            seeds=list(seeds),
            repetitions=repetitions,
            time_limit=_check_seconds(doc.get("time_limit", 600.0), "time_limit", allow_none=True),
            grace=_check_seconds(doc.get("grace", 5.0), "grace", allow_zero=True),
            setup_limit=_check_seconds(doc.get("setup_limit", 1800.0), "setup_limit"),
            memory_limit=parse_memory(doc.get("memory_limit")),
            metrics=metrics,
            compare=_check_compare(doc.get("compare") or {}),
            jobs=jobs,
            out=doc.get("out"),
            base_dir=os.path.abspath(base_dir),
        )
        experiments = doc.get("experiments")
        if experiments is None:
            experiments = [{}]
        elif not isinstance(experiments, list) or not experiments:
            raise InvalidParameterError(
                "The 'experiments' of a suite must be a non-empty list of mappings."
            )
        for position, entry in enumerate(experiments):
            entry = _check_keys(entry, _EXPERIMENT_KEYS, "experiments")
            merged = {
                key: entry.get(key, doc.get(key))
                for key in ("instances", "requirements", "algorithms")
            }
            where = (
                f"experiment {entry.get('name', position + 1)!r}"
                if "experiments" in doc
                else "suite"
            )
            for key, value in merged.items():
                if not isinstance(value, list) or not value:
                    raise InvalidParameterError(f"The {where} needs a non-empty {key!r} list.")
            experiment = Experiment(
                name=str(entry.get("name", position + 1)),
                instances=_expand_instances(
                    [_check_instance(i, base_dir) for i in merged["instances"]]
                ),
                requirements=[_check_reqset(r, n) for n, r in enumerate(merged["requirements"])],
                algorithms=[],
            )
            for alg in merged["algorithms"]:
                checked = _check_algorithm(alg)
                if checked is None:
                    if alg.get("method") not in suite.skipped:
                        suite.skipped.append(alg.get("method"))
                else:
                    experiment.algorithms.append(checked)
            labels = [a["name"] for a in experiment.algorithms]
            if len(set(labels)) != len(labels):
                raise InvalidParameterError(
                    f"Algorithms of the {where} need distinct names (add 'name:'); got {labels}."
                )
            names = [i["name"] for i in experiment.instances]
            if len(set(names)) != len(names):
                raise InvalidParameterError(
                    f"Instances of the {where} need distinct names (add 'name:'); got {names}."
                )
            if experiment.algorithms:
                suite.experiments.append(experiment)
        if not suite.experiments:
            raise InvalidParameterError(
                f"No algorithm of suite {suite.name!r} is available; skipped {suite.skipped}."
            )
        known: dict = {}
        for inst in (i for exp in suite.experiments for i in exp.instances):
            if known.setdefault(inst["name"], inst["spec"]) != inst["spec"]:
                raise InvalidParameterError(
                    f"Instance name {inst['name']!r} stands for two different instances; rename one."
                )
        suite.runs()  # two runs with one label are an error now, not in the report
        return suite

    @property
    def instances(self) -> list:
        """The instances of every experiment (each name once)."""
        out, seen = [], set()
        for exp in self.experiments:
            for inst in exp.instances:
                if inst["name"] not in seen:
                    seen.add(inst["name"])
                    out.append(inst)
        return out

    @property
    def algorithms(self) -> list:
        """The available algorithms of every experiment."""
        return [alg for exp in self.experiments for alg in exp.algorithms]

    def runs(self) -> list[RunSpec]:
        """Every run, by experiment, then instance, requirement set, algorithm, parameters,
        seed and repetition. A run two experiments share is listed once.

        Raises
        ------
        InvalidParameterError
            If two different runs of one instance get the same label.
        """
        out = []
        keys: set = set()
        labels: dict = {}
        for exp in self.experiments:
            out += self._runs(exp, keys, labels)
        return out

    def _runs(self, exp: Experiment, keys: set, labels: dict) -> list[RunSpec]:
        out = []
        for inst, reqset, alg in itertools.product(exp.instances, exp.requirements, exp.algorithms):
            for reqs, req_label, req_columns in reqset["sets"]:
                for params, varied in _grid(alg["params"]):
                    for seed in self.seeds:
                        release = alg["name"]
                        if varied:
                            release += (
                                "("
                                + ",".join(f"{k}={_scalar_text(v)}" for k, v in varied.items())
                                + ")"
                            )
                        release += f" {req_label}"
                        if len(self.seeds) > 1:
                            release += f" seed={seed}"
                        for rep in range(self.repetitions):
                            identity = {
                                "instance": inst["spec"],
                                "requirements": reqs,
                                "method": alg["method"],
                                "params": {**params, **alg["fixed"]},
                                "seed": seed,
                                "repetition": rep,
                                "metrics": self.metrics,
                            }
                            digest = hashlib.sha1(
                                json.dumps(identity, sort_keys=True, default=str).encode()
                            ).hexdigest()
                            if digest[:16] in keys:
                                continue
                            keys.add(digest[:16])
                            label_key = (inst["name"], release, rep)
                            if labels.setdefault(label_key, digest) != digest:
                                raise InvalidParameterError(
                                    f"Two different runs on {inst['name']!r} are both labelled {release!r}; "
                                    "give their algorithms or requirement sets distinct names."
                                )
                            columns = {**inst["columns"], **req_columns}
                            columns.update(
                                {f"p.{k}": v for k, v in params.items() if _is_scalar(v)}
                            )
                            time_limit = alg.get("time_limit", self.time_limit)
                            memory = alg.get("memory_limit", self.memory_limit)
                            out.append(
                                RunSpec(
                                    key=digest[:16],
                                    label=f"{release} | {inst['name']} | rep {rep}",
                                    release=release,
                                    instance_label=inst["name"],
                                    instance=inst["spec"],
                                    base_dir=self.base_dir,
                                    reqset=reqset["name"],
                                    requirements=tuple(reqs),
                                    requirements_text=req_label
                                    if reqset["named"] is False
                                    else _texts(reqs),
                                    algorithm=alg["name"],
                                    method=alg["method"],
                                    params={**params, **alg["fixed"]},
                                    seed=seed,
                                    repetition=rep,
                                    time_limit=time_limit,
                                    grace=self.grace,
                                    setup_limit=self.setup_limit,
                                    memory_limit=memory,
                                    metrics=self.metrics,
                                    columns=columns,
                                    index=len(keys) - 1,
                                )
                            )
        return out

    def to_dict(self) -> dict:
        """A JSON-ready summary, written next to the results."""
        return {
            "name": self.name,
            "description": self.description,
            "experiments": [
                {
                    "name": exp.name,
                    "instances": [i["spec"] for i in exp.instances],
                    "requirements": [
                        {"name": r["name"], "sets": [s[0] for s in r["sets"]]}
                        for r in exp.requirements
                    ],
                    "algorithms": exp.algorithms,
                }
                for exp in self.experiments
            ],
            "seeds": self.seeds,
            "repetitions": self.repetitions,
            "time_limit": self.time_limit,
            "grace": self.grace,
            "memory_limit": self.memory_limit,
            "metrics": self.metrics,
            "compare": self.compare,
            "skipped_algorithms": self.skipped,
        }


def load_suite(path: str) -> Suite:
    """Read a suite from a YAML or JSON file.

    Raises
    ------
    InvalidParameterError
        If the file is missing, malformed or invalid.
    """
    import yaml

    if not os.path.exists(path):
        raise InvalidParameterError(f"Suite file {path!r} does not exist.")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        doc = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise InvalidParameterError(f"Suite file {path!r} is malformed: {exc}") from None
    suite = Suite.from_dict(doc, base_dir=os.path.dirname(os.path.abspath(path)))
    if suite.name == "suite":
        suite.name = os.path.splitext(os.path.basename(path))[0]
    return suite


# ---------------------------------------------------------------------- checks
def _is_scalar(value) -> bool:
    return isinstance(value, (int, float, str, bool)) or value is None


def _texts(reqs) -> str:
    return "; ".join(str(requirement_from_spec(r)) for r in reqs)


def _check_keys(section, allowed: set, where: str) -> dict:
    if not isinstance(section, Mapping):
        raise InvalidParameterError(f"The {where!r} section of a suite must be a mapping.")
    unknown = set(section) - allowed
    if unknown:
        raise InvalidParameterError(
            f"Unknown keys {sorted(unknown)} in {where!r}; allowed: {sorted(allowed)}."
        )
    return dict(section)


def _check_seconds(value, name: str, *, allow_none: bool = False, allow_zero: bool = False):
    if value is None and allow_none:
        return None
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and (value > 0 or (allow_zero and value == 0))
    )
    if not ok:
        raise InvalidParameterError(
            f"The {name!r} of a suite must be a {'non-negative' if allow_zero else 'positive'} number of seconds"
            f"{' or null' if allow_none else ''}. Got {value!r} instead."
        )
    return float(value)


def _check_instance(spec, base_dir: str) -> dict:
    from ..instances.datasets import DATASETS

    spec = _check_keys(spec, _INSTANCE_KEYS, "instances")
    sources = [k for k in ("dataset", "csv", "synthetic") if k in spec]
    if len(sources) != 1:
        raise InvalidParameterError(
            f"Each suite instance needs exactly one of 'dataset', 'csv' or 'synthetic'. Got {sorted(spec)} instead."
        )
    source = sources[0]
    if source == "dataset":
        if spec["dataset"] not in DATASETS:
            raise InvalidParameterError(
                f"Unknown dataset {spec['dataset']!r} in a suite; known: {sorted(DATASETS)}."
            )
        name = spec.get("name", spec["dataset"])
        return {"name": str(name), "spec": spec, "columns": {}}
    if source == "csv":
        path = spec["csv"] if os.path.isabs(spec["csv"]) else os.path.join(base_dir, spec["csv"])
        if not os.path.exists(path):
            raise InvalidParameterError(f"Data file {path!r} of a suite instance does not exist.")
        name = spec.get("name", os.path.splitext(os.path.basename(path))[0])
        return {"name": str(name), "spec": spec, "columns": {}}
    args = spec["synthetic"]
    if not isinstance(args, Mapping) or "n_rows" not in args:
        raise InvalidParameterError(
            "A 'synthetic' suite instance needs a mapping with at least 'n_rows'."
        )
    return {"name": str(spec.get("name", "synthetic")), "spec": spec, "columns": {}, "grid": True}


def _expand_instances(instances: list) -> list:
    out = []
    for inst in instances:
        if not inst.get("grid"):
            out.append(inst)
            continue
        spec = inst["spec"]
        combos = _grid(spec["synthetic"])
        for args, varied in combos:
            name = inst["name"]
            if varied:
                name += " " + ",".join(
                    f"{'n' if k == 'n_rows' else k}={_scalar_text(v)}" for k, v in varied.items()
                )
            columns = {f"i.{k}": v for k, v in args.items() if _is_scalar(v)}
            out.append({"name": name, "spec": {**spec, "synthetic": args}, "columns": columns})
    return out


def _check_reqset(entry, position: int) -> dict:
    if isinstance(entry, Mapping) and "set" in entry:
        extra = set(entry) - {"set", "name"}
        if extra:
            raise InvalidParameterError(
                f"Unknown keys {sorted(extra)} in requirement set {position + 1}; allowed: name, set."
            )
        items, name = entry["set"], entry.get("name")
    elif isinstance(entry, list):
        items, name = entry, None
    else:
        items, name = [entry], None
    if not isinstance(items, list) or not items:
        raise InvalidParameterError(
            f"Requirement set {position + 1} of the suite must be a non-empty list."
        )
    per_item = []
    for item in items:
        if not isinstance(item, Mapping) or len(item) != 1:
            raise InvalidParameterError(
                f"A requirement must be a one-key mapping such as {{'k_anonymity': {{'k': 5}}}}; got {item!r}."
            )
        ((kind, args),) = item.items()
        if isinstance(args, list):
            per_item.append([({kind: a}, {kind: a}) for a in args])
        elif isinstance(args, Mapping):
            per_item.append([({kind: full}, varied) for full, varied in _grid(args)])
        else:
            per_item.append([(item, {})])
    sets = []
    for combo in itertools.product(*per_item):
        reqs = [spec for spec, _ in combo]
        built = [requirement_from_spec(r) for r in reqs]  # validates every combination now
        varied = {}
        for _, v in combo:
            for kind, value in v.items():
                if isinstance(value, Mapping):
                    varied.update(value)
                else:
                    varied[kind] = value
        if name is None:
            label = "; ".join(str(b) for b in built)
        else:
            label = name + (
                "(" + ",".join(f"{k}={_scalar_text(v)}" for k, v in varied.items()) + ")"
                if varied
                else ""
            )
        sets.append((reqs, label, _requirement_columns(built)))
    family = name or "+".join(requirement_from_spec(r).kind for r in sets[0][0])
    return {"name": family, "sets": sets, "named": name is not None}


def _requirement_columns(built) -> dict:
    """``p.<field>`` for every scalar field of the requirements; fields two requirements
    of the set both have are left out (they would be ambiguous)."""
    import dataclasses
    from fractions import Fraction

    seen: dict = {}
    clash = set()
    for req in built:
        for f in dataclasses.fields(req):
            value = getattr(req, f.name)
            if isinstance(value, Fraction):
                value = float(value)
            if value is None or not _is_scalar(value):
                continue
            key = f"p.{f.name}"
            if key in seen and seen[key] != value:
                clash.add(key)
            seen[key] = value
    return {k: v for k, v in seen.items() if k not in clash}


def _check_algorithm(entry) -> dict | None:
    if isinstance(entry, str):
        entry = {"method": entry}
    entry = _check_keys(entry, _ALGORITHM_KEYS, "algorithms")
    if "method" not in entry:
        raise InvalidParameterError("Each suite algorithm needs a 'method'.")
    try:
        resolve_method(entry["method"])
    except InvalidParameterError:
        if entry.get("skip_missing"):
            return None
        raise
    params = entry.get("params") or {}
    fixed = entry.get("fixed") or {}
    for what, value in (("params", params), ("fixed", fixed)):
        if not isinstance(value, Mapping):
            raise InvalidParameterError(
                f"The {what!r} of algorithm {entry['method']!r} must be a mapping."
            )
    out = {
        "method": entry["method"],
        "name": str(entry.get("name", entry["method"])),
        "params": dict(params),
        "fixed": dict(fixed),
    }
    if "time_limit" in entry:
        out["time_limit"] = _check_seconds(entry["time_limit"], "time_limit", allow_none=True)
    if "memory_limit" in entry:
        out["memory_limit"] = parse_memory(entry["memory_limit"])
    return out


def _check_compare(section) -> dict:
    from .quality import COMPARATORS

    section = _check_keys(section, _COMPARE_KEYS, "compare")
    props = section.get("properties")
    if props is not None:
        bad = [p for p in props if p not in PROPERTIES]
        if bad or not isinstance(props, list):
            raise InvalidParameterError(
                f"compare.properties must be a list of {sorted(PROPERTIES)}. Got {props!r} instead."
            )
    comps = section.get("comparators")
    if comps is not None and (
        not isinstance(comps, list) or any(c not in COMPARATORS for c in comps)
    ):
        raise InvalidParameterError(
            f"compare.comparators must be a list of {list(COMPARATORS)}. Got {comps!r} instead."
        )
    multi = section.get("multi") or []
    if not isinstance(multi, list):
        raise InvalidParameterError("compare.multi must be a list of procedures.")
    checked = []
    for m in multi:
        m = _check_keys(m, _MULTI_KEYS, "compare.multi")
        if m.get("procedure") not in ("wtd", "lex", "goal", "goal_unary"):
            raise InvalidParameterError(
                f"compare.multi procedure must be one of 'wtd', 'lex', 'goal', 'goal_unary'. Got {m.get('procedure')!r} instead."
            )
        props = m.get("properties")
        if not isinstance(props, list) or not props or any(p not in PROPERTIES for p in props):
            raise InvalidParameterError(
                f"compare.multi needs 'properties', a list of {sorted(PROPERTIES)}. Got {props!r} instead."
            )
        index = m.get("index", "mean" if m["procedure"] == "goal_unary" else "cov")
        indices = index if isinstance(index, list) else [index]
        allowed = (
            UNARY_INDICES
            if m["procedure"] == "goal_unary"
            else (UNARY_INDICES + BINARY_INDICES if m["procedure"] == "lex" else BINARY_INDICES)
        )
        if any(i not in allowed for i in indices):
            raise InvalidParameterError(
                f"compare.multi {m['procedure']} index must be in {list(allowed)}. Got {index!r} instead."
            )
        if m.get("normalization", "default") not in NORMALIZATIONS:
            raise InvalidParameterError(
                f"compare.multi normalization must be one of {list(NORMALIZATIONS)}."
            )
        need = {"wtd": "weights", "goal": "goals", "goal_unary": "goals"}.get(m["procedure"])
        if need and need not in m:
            raise InvalidParameterError(f"compare.multi {m['procedure']} needs {need!r}.")
        m.setdefault("name", f"{m['procedure']}:{'>'.join(props)}")
        checked.append(m)
    section["multi"] = checked
    return section
