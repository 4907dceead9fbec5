"""A benchmark suite and its runs (the format is described in :mod:`fairanon.bench.spec`).

:class:`Suite` validates a suite given as a mapping, or read from a file by
:func:`load_suite`, section by section, and lists every combination of its experiments
as a :class:`RunSpec`, the JSON-ready task of one fresh process.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...exceptions import InvalidParameterError
from ...models.metrics import SUPPRESSION_POLICIES
from ...models.requirements import requirement_from_spec
from ..vectors import check_fairness
from .sections import (
    _check_algorithm,
    _check_compare,
    _check_instance,
    _check_keys,
    _check_reqset,
    _check_seconds,
    _expand_instances,
    _grid,
    _is_scalar,
    _scalar_text,
    parse_memory,
)

__all__ = ["RunSpec", "Suite", "load_suite"]

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
_METRIC_KEYS = {
    "mre",
    "mre_queries",
    "vectors",
    "vector_max_rows",
    "numeric_loss",
    "suppression",
    "fairness",
    "bound",
    "utility",
    "classifier",
}
_DEFAULT_METRICS = {
    "mre": False,
    "bound": False,
    "mre_queries": 10_000,
    "vectors": "auto",
    "vector_max_rows": 1_000_000,
    "numeric_loss": "width",
}


def _requirement_specs(doc: Mapping) -> list:
    """Every requirement of every requirement set of a suite document, grids expanded
    (invalid entries are left to the section checks)."""
    out = []
    sources = [doc] + [e for e in doc.get("experiments") or [] if isinstance(e, Mapping)]
    for source in sources:
        for entry in source.get("requirements") or []:
            items = entry.get("set") if isinstance(entry, Mapping) and "set" in entry else entry
            for item in items if isinstance(items, list) else [items]:
                if not isinstance(item, Mapping) or len(item) != 1:
                    continue
                ((kind, args),) = item.items()
                if isinstance(args, list):
                    out += [{kind: a} for a in args]
                elif isinstance(args, Mapping):
                    out += [{kind: full} for full, _ in _grid(args)]
                else:
                    out.append(item)
    return out


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


def _true_false_or_auto(value) -> bool:
    """Whether a metric switch is true, false or "auto" (not 1 or 0, which equal them)."""
    return value is True or value is False or value == "auto"


@dataclass
class Suite:
    """A parsed, validated benchmark suite (:mod:`fairanon.bench.spec` gives the format).

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
            s is not None and (isinstance(s, bool) or not isinstance(s, int) or s < 0) for s in seeds
        ):
            raise InvalidParameterError(
                f"The 'seeds' of a suite must be a list of ints >= 0. Got {doc.get('seeds')!r} instead."
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
        # Identity checks: 1 and 0 equal True and False, so `in (True, False)` took them.
        if not _true_false_or_auto(metrics.get("utility", "auto")):
            raise InvalidParameterError(
                f"metrics.utility must be true, false or auto. Got {metrics['utility']!r} instead."
            )
        if metrics.get("classifier") not in (None, "logistic", "tree", "forest"):
            raise InvalidParameterError(
                "metrics.classifier must be logistic, tree, forest or null. "
                f"Got {metrics['classifier']!r} instead."
            )
        if not _true_false_or_auto(metrics["vectors"]):
            raise InvalidParameterError(
                f"metrics.vectors must be true, false or auto. Got {metrics['vectors']!r} instead."
            )
        if metrics["numeric_loss"] not in ("width", "values"):
            raise InvalidParameterError(
                f"metrics.numeric_loss must be 'width' or 'values'. Got {metrics['numeric_loss']!r} instead."
            )
        if metrics.get("suppression", "as_class") not in SUPPRESSION_POLICIES:
            raise InvalidParameterError(
                f"metrics.suppression must be one of {list(SUPPRESSION_POLICIES)}. "
                f"Got {metrics['suppression']!r} instead."
            )
        fairness = check_fairness(metrics.get("fairness"), _requirement_specs(doc))
        # Stored only when it says more than the default, so that the runs of suites
        # without fairness settings keep their keys.
        if "fairness" in metrics or fairness["diversity"]:
            metrics["fairness"] = fairness
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
    from ...jobs import read_document

    doc = read_document(path, what="Suite file")
    suite = Suite.from_dict(doc, base_dir=os.path.dirname(os.path.abspath(path)))
    if suite.name == "suite":
        suite.name = os.path.splitext(os.path.basename(path))[0]
    return suite


def _texts(reqs) -> str:
    return "; ".join(str(requirement_from_spec(r)) for r in reqs)
