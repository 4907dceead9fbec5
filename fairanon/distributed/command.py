"""``fairanon anonymize|verify --engine dask``: the command line on a Dask cluster.

Without ``--scheduler`` a :class:`distributed.LocalCluster` is started on this machine
for the run. The release is written as a Parquet directory and verified from what was
written. Dask's progress bar is shown for every pass on a terminal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Iterator

from .._limits import method_seconds
from .._validation import check_time_limit
from ..exceptions import InvalidParameterError

__all__ = ["anonymize", "peak_memory", "risk", "verify"]


@contextlib.contextmanager
def client(scheduler: str | None, workers: int | None = None) -> Iterator:
    """A distributed client: on `scheduler` (an address), else on a LocalCluster
    (:func:`~fairanon.distributed.cluster.local_client`)."""
    from .cluster import local_client

    if scheduler:
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover - the extra is installed in the test environment
            raise InvalidParameterError(
                "--engine dask needs Dask: pip install 'fairanon[dask]' (dask[dataframe] and distributed)."
            ) from None
        with Client(scheduler) as c:
            yield c
        return
    with local_client(workers) as c:
        yield c


def peak_memory(c=None) -> dict:
    """Peak resident memory (MB) of this process and, on a cluster, of every worker
    (each process's own high-water mark: :func:`~fairanon.distributed.cluster.peak_rss_mb`)."""
    from .cluster import peak_rss_mb

    out = {"process_peak_rss_mb": peak_rss_mb()}
    if c is not None:
        peaks = c.run(peak_rss_mb)
        out["worker_peak_rss_mb"] = sorted(float(v) for v in peaks.values() if v is not None)
    return out


def _instance(job_path: str | None, dataset: str | None):
    """The job's instance as a DaskInstance (a data file or directory is read by Dask,
    a bundled data set is split into partitions), and the job."""
    from ..instances.datasets import load
    from ..instances.schema import Schema
    from ..jobs import check_no_record_id, default_job, read_document, read_job, table_source
    from .instance import as_dask_instance, dask_instance

    path = job_path or default_job()
    if dataset:
        dinst = as_dask_instance(load(dataset))
    else:
        doc = read_document(path)
        spec = doc.get("instance") or {}
        if isinstance(spec, dict) and ("csv" in spec or "parquet" in spec):
            base_dir = os.path.dirname(os.path.abspath(path))
            _, data = table_source(spec, base_dir)
            if "schema" not in spec:
                raise InvalidParameterError("A data file instance needs a 'schema' section.")
            schema = Schema.from_spec(spec["schema"], base_dir)
            check_no_record_id(schema, data)
            name = spec.get("name", os.path.splitext(os.path.basename(data.rstrip(os.sep)))[0])
            dinst = dask_instance(data, schema, name=name, id_column=spec.get("id_column"),
                                  missing=spec.get("missing", "error"))
        else:
            dinst = as_dask_instance(read_job(path).instance)
    return dinst, read_job(path, instance=dinst)


def anonymize(args) -> int:
    """Anonymize on Dask and verify the Parquet release from what was written; the
    release directory is named by its verdict (:func:`release_file_name`) only once it
    is whole and checked, and ``report.json`` is written atomically."""
    from .._memory import memory_limit_context
    from ..api import anonymize as run
    from ..instances.files import RELEASE_FILES, check_output_dir, commit, release_file_name, remove_output
    from .cluster import trim_workers
    from .verify import verify_dask

    check_output_dir(args.out, [*RELEASE_FILES, "report.json"])
    if getattr(args, "candidates", None) is not None:
        raise InvalidParameterError("--candidates lists the nodes of fulldomain's lattice on one machine "
                                    "(--engine local); the dask engine does not run fulldomain.")
    tty = sys.stderr.isatty()
    staging = os.path.join(args.out, f".release.parquet.{os.getpid()}.part")
    made = not os.path.exists(args.out)
    try:
        with client(args.scheduler, getattr(args, "workers", None)) as c:
            dinst, job = _instance(args.job, args.dataset)
            check_output_dir(args.out, [*RELEASE_FILES, "report.json"])  # the job's files now known
            method = args.method or job.method
            seed = args.seed if args.seed is not None else job.seed
            options = dict(job.options)
            if getattr(args, "max_rows", None):
                options["max_rows"] = args.max_rows
            time_limit = job.time_limit
            if getattr(args, "time_limit", None) is not None:
                time_limit = check_time_limit(args.time_limit, "fairanon anonymize --time-limit")
            if getattr(args, "started", None) is not None:
                # As on one machine the limit counts from the command's start: the method
                # (the distributed top and the tasks that finish it, computed as the
                # release is written) gets what start-up, the cluster and loading left.
                # The written release is then verified in full, outside the limit.
                time_limit = method_seconds(time_limit, args.started)
            # As on one machine: --memory-limit, else the job's.
            memory_limit = args.memory_limit if getattr(args, "memory_limit", None) is not None else job.memory_limit
            release = run(dinst, job.requirements, method, engine="dask", seed=seed, time_limit=time_limit,
                          memory_limit=memory_limit, progress=tty, **options)
            os.makedirs(args.out, exist_ok=True)
            write = release.to_parquet(staging, compute=False, check=False)
            _, timed_out = _show([write, release.timed_out()], c, tty)
            release = release.finished(timed_out)
            trim_workers(c)
            # The limit applies to the client's own work too: the risk figures check it.
            with memory_limit_context(memory_limit, "anonymize"):
                report = verify_dask(dinst, staging, job.requirements, progress=tty, utility=True, risk=True)
            utility, risk = _named(report.utility, release), report.risk_report
            # As on one machine, the report gives the method's reason for its status.
            report = dataclasses.replace(report, method=release.method, status=str(release.status),
                                         reason=release.reason)
            memory = peak_memory(c)
        status = str(release.status)
        passed = report.passed and status in ("OPTIMAL", "FEASIBLE")
        name = release_file_name(passed, status, "parquet")
        release_path = os.path.join(args.out, name)
        report_path = os.path.join(args.out, "report.json")
        document = {"job": job.name, "release_file": name, "release": release.summary(),
                    "report": report.to_dict(), "resources": memory, "risk": risk,
                    "utility": utility}

        # The report is the manifest, renamed last: it names the release's files by checksum.
        commit({}, staged={release_path: staging}, manifest=(report_path, document),
               remove=[os.path.join(args.out, n) for n in RELEASE_FILES])
    finally:
        remove_output(staging)
        if made:  # an interrupted or failed run leaves no folder it made empty
            with contextlib.suppress(OSError):
                os.rmdir(args.out)
    print(report)  # with the method's reason, when it gives one
    print(_memory_text(memory))
    print(f"Wrote {release_path} and {report_path}")
    return 0 if passed else 1


def verify(args) -> int:
    """Verify a released table (Parquet or CSV, file or directory) on Dask."""
    from ..instances.files import check_output_file, commit, verified_reading
    from .verify import verify_dask

    if args.out is not None:
        check_output_file(args.out)
    if not os.path.exists(args.release):
        raise InvalidParameterError(f"release file {args.release!r} does not exist")
    if getattr(args, "bound", False):
        raise InvalidParameterError("--bound needs --engine local: the per-record lower bounds are not computed on Dask")
    tty = sys.stderr.isatty()
    with client(args.scheduler, getattr(args, "workers", None)) as c:
        dinst, job = _instance(args.job, args.dataset)
        if args.out is not None:
            check_output_file(args.out)  # the job's files now known
        from .instance import read_table, release_readings

        readings = release_readings(args.release, dinst, getattr(args, "neutralized", None))
        report, notes = verified_reading([lambda options=o: read_table(args.release, **options) for o in readings],
                                         lambda table: verify_dask(dinst, table, job.requirements, progress=tty))
        memory = peak_memory(c)
    print(report)
    for note in notes:
        print(f"  note: {note}")
    print(_memory_text(memory))
    if args.out is not None:
        commit({args.out: lambda path: _dump_json({**report.to_dict(), "resources": memory}, path)})
    return 0 if report.passed else 1


def risk(args, options: dict) -> int:
    """The risk figures of the job's instance, or of a release file, on Dask
    (:func:`fairanon.risk` with ``engine="dask"``; `options` as it takes them)."""
    from .._memory import memory_limit_context
    from ..api import risk as measure
    from ..instances.files import check_output_file, commit
    from .instance import read_table, release_ids

    if args.out is not None:
        check_output_file(args.out)
    if args.release and not os.path.exists(args.release):
        raise InvalidParameterError(f"release file {args.release!r} does not exist")
    tty = sys.stderr.isatty()
    with client(args.scheduler, getattr(args, "workers", None)) as c:
        dinst, job = _instance(args.job, args.dataset)
        if args.out is not None:
            check_output_file(args.out)  # the job's files now known
        release = None
        if args.release:
            release = read_table(args.release, **release_ids(args.release, dinst, getattr(args, "neutralized", None)))
        # As on one machine: --memory-limit, else the job's.
        limit = args.memory_limit if args.memory_limit is not None else job.memory_limit
        with memory_limit_context(limit, "risk"):
            report = measure(dinst, release, engine="dask", progress=tty, **options)
        memory = peak_memory(c)
    document = report.to_dict()
    print(json.dumps(document, indent=2) if args.json else report)
    if not args.json:
        print(_memory_text(memory))
    if args.out is not None:
        commit({args.out: lambda path: _dump_json({**document, "resources": memory}, path)})
    return 0


def _named(figures: dict | None, release) -> dict | None:
    """Figures measured on the written release, named by the release that was made."""
    if figures is None or "error" in figures:
        return figures
    return {**figures, "method": release.method, "status": str(release.status)}


def _dump_json(document: dict, path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(document, fh, indent=2)


def _show(collections: list, c, tty: bool) -> list:
    """Compute the collections in one pass (Dask's progress bar on a terminal)."""
    if tty:
        from distributed import progress

        futures = c.compute(collections)
        progress(futures)
        return [f.result() for f in futures]
    import dask

    return list(dask.compute(*collections))


def _memory_text(memory: dict) -> str:
    text = f"  peak memory: {memory['process_peak_rss_mb']:.0f} MB in this process"
    if "worker_peak_rss_mb" in memory:
        text += ", workers " + ", ".join(f"{v:.0f}" for v in memory["worker_peak_rss_mb"]) + " MB"
    return text
