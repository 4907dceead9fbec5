"""What one benchmark run executes, in a process of its own.

:mod:`fairanon.bench.forkserver` forks a new process per run and calls
:func:`run_child` in it with the run's task (JSON-ready, from
:meth:`fairanon.bench.spec.RunSpec.to_task`). The process starts a session of its own
(so that killing it kills whatever it started), sends its standard output and error to
the run's log file, sets the address-space limit (``RLIMIT_AS``, so a method that
allocates too much fails with a MemoryError here instead of taking the benchmark down)
and writes one JSON message per line to the run's message file:

- ``ready`` with the instance's size: the instance is loaded, the method's clock starts;
- ``solved``: the method returned (its time limit no longer applies);
- ``done`` with the results row, or ``error`` / ``memout`` with the message.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable

__all__ = ["run_child", "run_task"]


def _rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux (bytes on macOS).
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _build_instance(spec: dict, base_dir: str):
    from ..jobs import load_instance_spec

    if "synthetic" in spec:
        from ..instances.synthetic import population

        args = dict(spec["synthetic"])
        args["n_rows"] = int(args["n_rows"])
        return population(**args)
    spec = {k: v for k, v in spec.items() if k != "name"}
    return load_instance_spec(spec, base_dir)


def _number(value):
    from fractions import Fraction

    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return str(value)


def _gap(release) -> float | None:
    prov = release.provenance
    for source in (prov, prov.get("solver") if isinstance(prov.get("solver"), dict) else {}):
        if source and source.get("gap") is not None:
            return float(source["gap"])
    obj, bound = release.objective, release.bound
    if obj is None or bound is None:
        return None
    try:
        obj, bound = float(obj), float(bound)
    except (TypeError, ValueError):
        return None
    return abs(obj - bound) / max(abs(obj), 1e-9)


def _solver_status(release):
    prov = release.provenance
    solver = prov.get("solver") if isinstance(prov.get("solver"), dict) else {}
    return prov.get("solver_status") or solver.get("solver_status") or solver.get("status")


def run_task(task: dict, send: Callable[..., None]) -> dict:
    """Run one benchmark task and return its results row (without the descriptive
    columns the runner adds)."""
    started = time.perf_counter()
    from ..api import anonymize
    from ..models.metrics import median_relative_error
    from ..models.requirements import requirement_from_spec
    from ..models.verify import verify
    from ..release import Status
    from .spec import resolve_method
    from .vectors import property_context, run_vectors, write_frame

    instance = _build_instance(task["instance"], task["base_dir"])
    requirements = [requirement_from_spec(r) for r in task["requirements"]]
    method = task["method"]
    func = method if method in _methods() else resolve_method(method)
    context = property_context(instance)
    row = {
        "instance_name": instance.name,
        "n_rows": context.n_rows,
        "n_qi": context.n_qi,
        "n_sensitive": context.n_sensitive,
        "setup_s": time.perf_counter() - started,
        "setup_rss_mb": _rss_mb(),
    }
    send("ready", info=row)

    clock, cpu = time.perf_counter(), time.process_time()
    release = anonymize(
        instance,
        requirements,
        func,
        seed=task["seed"],
        time_limit=task["time_limit"],
        **task["params"],
    )
    row["time_s"] = time.perf_counter() - clock
    row["cpu_s"] = time.process_time() - cpu
    send("solved", time_s=row["time_s"])

    prov = release.provenance
    row.update(
        status=str(release.status),
        reason=release.reason,
        n_groups=release.n_groups,
        n_suppressed=len(release.suppressed),
        objective=_number(release.objective),
        bound=_number(release.bound),
        gap=_gap(release),
        solver_status=_solver_status(release),
        time_limit_reached=prov.get("time_limit_reached"),
        auto_choice=prov.get("auto_choice"),
        repaired=prov.get("repaired"),
    )

    clock = time.perf_counter()
    try:
        report = verify(instance, release, requirements, bound=bool(task["metrics"].get("bound")))
    except Exception as exc:  # an UNKNOWN release may hold no table to read
        if release.status in (Status.INFEASIBLE, Status.UNKNOWN):
            row.update(verified=False, integrity=False, verify_error=f"{type(exc).__name__}: {exc}")
            return row
        raise
    row["verify_s"] = time.perf_counter() - clock
    row["verified"] = report.passed
    integrity = [c for c in report.checks if c.integrity]
    row["integrity"] = all(c.passed for c in integrity)
    row.update(_verdict_columns(report, requirements))
    for key, value in report.metrics.items():
        if not isinstance(value, dict):
            row[key] = _number(value)
    for objective, found in report.bounds.items():
        row[f"bound.{objective}"] = found["bound"]
        row[f"gap.{objective}"] = found["gap"]
    row.update(_risk_columns(report.risk))

    usable = row["integrity"] and release.status in (Status.OPTIMAL, Status.FEASIBLE)
    metrics = task["metrics"]
    if usable and _wanted(metrics, "utility", instance.n_rows):
        from ..models.utility import release_utility

        clock = time.perf_counter()
        found = release_utility(instance, release, classifier=metrics.get("classifier"))
        row.update({f"utility.{key}": _number(value) for key, value in (found or {}).get("summary", {}).items()})
        if found and "error" in found:  # the figures could not be computed: say why
            row["utility.error"] = found["error"]
        row["utility_s"] = time.perf_counter() - clock
    if usable and metrics.get("mre"):
        clock = time.perf_counter()
        row["MRE"] = median_relative_error(
            instance, release, n_queries=int(metrics.get("mre_queries", 10_000)), seed=0
        )
        row["mre_s"] = time.perf_counter() - clock
    if usable and _wanted(metrics, "vectors", instance.n_rows) and task.get("vectors_path"):
        clock = time.perf_counter()
        frame, groups, columns = run_vectors(instance, release, requirements, metrics)
        row.update(columns)
        path = task["vectors_path"]
        base = task.get("out_dir", os.path.dirname(path))
        write_frame(frame, path)
        row["vectors"] = os.path.relpath(path, base)
        if groups is not None:
            write_frame(groups, path.removesuffix(".parquet") + ".groups.parquet")
            row["group_vectors"] = os.path.relpath(
                path.removesuffix(".parquet") + ".groups.parquet", base
            )
        row["vectors_s"] = time.perf_counter() - clock
    return row


def _wanted(metrics: dict, name: str, n_rows: int) -> bool:
    """Whether the optional figures `name` ("vectors", "utility") are measured: true,
    false, or "auto" (the default: instances of at most ``vector_max_rows`` rows)."""
    setting = metrics.get(name, "auto")
    if setting == "auto":
        return n_rows <= int(metrics.get("vector_max_rows", 1_000_000))
    return bool(setting)


def _risk_columns(risk: dict) -> dict:
    """The verifier's risk figures of the release (its classes, the suppressed block one
    of them: docs/risk.md) as ``risk.*`` columns: the highest and the average prosecutor
    risk, the sample uniques and the records whose risk is above the threshold (1/5)."""
    if not risk:
        return {}
    return {
        "risk.prosecutor_highest": risk["prosecutor_highest"]["value"],
        "risk.prosecutor_average": risk["prosecutor_average"]["value"],
        "risk.sample_uniques": risk["sample_uniques"],
        "risk.records_above": risk["records_above_threshold"],
    }


def _verdict_columns(report, requirements) -> dict:
    """``verify.<check>`` for the integrity checks and ``verify.<kind>`` /
    ``achieved.<kind>`` per requirement (``#2``, ... for a repeated kind, `` of <attribute>``
    per protected attribute), so that a sweep over a threshold stays in one column; the
    requirement texts are in ``verdicts``."""
    out = {}
    for check in report.checks:
        if check.integrity:
            out[f"verify.{check.name}"] = check.passed
    seen: dict = {}
    for req in requirements:
        seen[req.kind] = seen.get(req.kind, 0) + 1
        key = req.kind + (f"#{seen[req.kind]}" if seen[req.kind] > 1 else "")
        text = str(req)
        for check in report.checks:
            if check.integrity or not (check.name == text or check.name.startswith(text + " of ")):
                continue
            suffix = check.name[len(text) :]
            out[f"verify.{key}{suffix}"] = check.passed
            out[f"achieved.{key}{suffix}"] = _number(check.achieved)
    out["verdicts"] = json.dumps({c.name: c.passed for c in report.checks if not c.integrity})
    return out


def _methods():
    from ..api import METHODS

    return METHODS


def run_child(task: dict) -> int:
    """The body of a run's process; returns its exit code (never raises)."""
    os.setsid()
    log = os.open(task["log_path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(null)
    channel = open(task["messages_path"], "w", buffering=1, encoding="utf-8")  # noqa: SIM115

    def send(kind: str, **data) -> None:
        channel.write(json.dumps({"kind": kind, **data}, default=str) + "\n")
        channel.flush()

    limit = task.get("memory_limit")
    try:
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
        row = run_task(task, send)
    except MemoryError:
        traceback.print_exc()
        send("memout", error="MemoryError: the run exceeded its memory limit")
        return 1
    except BaseException as exc:  # noqa: BLE001 - every failure of the method is a result to record
        traceback.print_exc()
        text = str(exc).strip().splitlines()
        send(
            "error",
            error_type=type(exc).__name__,
            error=text[-1][:500] if text else type(exc).__name__,
        )
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    send("done", row=row)
    channel.close()
    return 0
