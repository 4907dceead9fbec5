"""The ``fairanon`` command line, over the same functions as the Python API.

Exit codes: 0 done (and every verified guarantee holds), 1 a guarantee fails or the
requirements are infeasible, 2 bad usage or bad input (the message says what to fix).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence

from .exceptions import FairanonError, InfeasibleError, SolverError

__all__ = ["main"]


class _UsageError(Exception):
    """Raised by the argument parser instead of exiting, so main() owns the exit code."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401 - argparse API
        raise _UsageError(f"{self.prog}: {message}")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fairanon", description="Private, fair and diverse publication of microdata.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def common(p, *, job_required: bool):
        p.add_argument("job", nargs="?" if not job_required else None,
                       help="job file (YAML or JSON); default: the bundled Adult job")
        p.add_argument("--dataset", help="use a bundled data set (adult, german, ...) instead of the job's instance")

    p = sub.add_parser("anonymize", help="anonymize, verify, write the release and a JSON report")
    common(p, job_required=False)
    p.add_argument("--method", help="override the job's method (e.g. mondrian, auto)")
    p.add_argument("--seed", type=int, help="seed for every randomized step")
    p.add_argument("--time-limit", type=float, help="seconds the method may take")
    p.add_argument("--out", default="out", help="output directory (default: ./out)")

    p = sub.add_parser("verify", help="verify a released CSV against the job's requirements")
    common(p, job_required=False)
    p.add_argument("--release", required=True, help="released table (CSV with a record_id column)")
    p.add_argument("--out", help="write the JSON report here")

    p = sub.add_parser("describe", help="sizes, domains, QI combinations, p- and tau(R)")
    common(p, job_required=False)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")

    from .patterns.command import add_subcommand as _add_patterns

    _add_patterns(sub)

    p = sub.add_parser("bench", help="run a benchmark suite, compare the releases, write an HTML report")
    p.add_argument("suite", help="suite file (YAML or JSON), e.g. benchmarks/suites/quick.yaml")
    p.add_argument("--out", help="output directory (default: the suite's 'out', else benchmarks/results/NAME)")
    p.add_argument("--resume", action="store_true", help="keep earlier results and skip the runs they hold")
    p.add_argument("--overwrite", action="store_true", help="delete earlier results first")
    p.add_argument("--jobs", type=int, help="runs at a time (default: the suite's 'jobs', 1)")
    p.add_argument("--no-report", action="store_true", help="skip the comparison and the HTML report")
    return parser


@contextlib.contextmanager
def _progress(total: int, enabled: bool) -> Iterator:
    """A progress bar over the steps of a command, shown only on a terminal."""
    if not enabled:
        yield lambda description: None
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  transient=True, console=None) as progress:
        task = progress.add_task("starting", total=total)
        started = [False]

        def step(description: str) -> None:
            if started[0]:
                progress.advance(task)
            started[0] = True
            progress.update(task, description=description)

        yield step
        progress.update(task, completed=total)


def _job(args):
    from .instances.datasets import load
    from .jobs import default_job, read_job

    instance = load(args.dataset) if args.dataset else None
    return read_job(args.job or default_job(), instance=instance)


def _anonymize(args, step) -> int:
    from .api import anonymize
    from .models.verify import verify

    step("loading the instance")
    job = _job(args)
    method = args.method or job.method
    seed = args.seed if args.seed is not None else job.seed
    time_limit = args.time_limit if args.time_limit is not None else job.time_limit
    step(f"anonymizing {job.instance.name!r} with {method}")
    release = anonymize(job.instance, job.requirements, method, seed=seed, time_limit=time_limit, **job.options)
    step("verifying the release")
    report = verify(job.instance, release, job.requirements)
    step("writing the results")
    os.makedirs(args.out, exist_ok=True)
    release_path = os.path.join(args.out, "release.csv")
    report_path = os.path.join(args.out, "report.json")
    release.table.to_csv(release_path, index_label="record_id")
    with open(report_path, "w", encoding="utf-8") as fh:
        json.dump({"job": job.name, "release": release.summary(), "report": report.to_dict()}, fh, indent=2)
    print(report)
    if release.reason:
        print(f"  reason: {release.reason}")
    _print_best_effort(release)
    print(f"Wrote {release_path} and {report_path}")
    return 0 if report.passed and str(release.status) in ("OPTIMAL", "FEASIBLE") else 1


def _print_best_effort(release) -> None:
    """For an UNKNOWN release that carries it: per constraint, the count it reached and
    the bounds (a best release found, never one that passes)."""
    rows = release.provenance.get("diversity_counts")
    if str(release.status) != "UNKNOWN" or not rows:
        return
    print("  best release found, not a solution; visible records per constraint:")
    width = max(len(str(row["constraint"])) for row in rows)
    for row in rows:
        mark = "holds" if row["holds"] else "MISS "
        print(f"  {mark}  {row['constraint']:<{width}}  {row['count']:>9}  in [{row['lower']}, {row['upper']}]")


def _verify(args, step) -> int:
    import pandas as pd

    from .models.verify import verify
    from .release import Release

    step("loading the instance")
    job = _job(args)
    step("reading the release")
    if not os.path.exists(args.release):
        raise _UsageError(f"fairanon verify: release file {args.release!r} does not exist")
    table = pd.read_csv(args.release, dtype=str, keep_default_na=False)
    if "record_id" not in table.columns:
        raise _UsageError("fairanon verify: the release CSV needs a 'record_id' column")
    ids = table.pop("record_id")
    index_dtype = job.instance.row_ids.dtype
    try:
        table.index = pd.Index(ids.astype(index_dtype) if index_dtype.kind in "iuf" else ids)
    except (ValueError, TypeError):
        raise _UsageError("fairanon verify: record_id values do not match the instance's record ids") from None
    release = Release(table=table, groups=[0] * len(table), provenance={"method": "external"})
    step("verifying")
    report = verify(job.instance, release, job.requirements)
    print(report)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(report.to_dict(), fh, indent=2)
    return 0 if report.passed else 1


def _describe(args, step) -> int:
    from .instances.datasets import load
    from .jobs import default_job, read_job
    from .models.describe import describe, format_description

    step("describing")
    if args.dataset:
        instance = load(args.dataset)
    else:
        instance = read_job(args.job or default_job()).instance
    desc = describe(instance)
    print(json.dumps(desc, indent=2) if args.json else format_description(desc))
    return 0


def _bench(args) -> int:
    from .bench import compare_results, load_suite, print_summary, run_suite, write_report
    from .bench.runner import failures, terminal_progress

    suite = load_suite(args.suite)
    with terminal_progress(enabled=sys.stderr.isatty()) as progress:
        result = run_suite(suite, args.out, resume=args.resume, overwrite=args.overwrite, jobs=args.jobs,
                           progress=progress)
    comparisons = {} if args.no_report else compare_results(result.out)
    print_summary(result.results, comparisons)
    if not args.no_report:
        path = write_report(result.out, comparisons, title=f"fairanon benchmark: {suite.name}")
        print(f"Wrote {path}")
    print(f"{result.ran} run(s) now, {result.skipped} finished earlier; results in {result.out}")
    return 1 if len(failures(result.results)) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if args.version:
            from . import __version__

            print(f"fairanon {__version__}")
            return 0
        if args.command is None:
            parser.print_help()
            return 2
        if args.command == "patterns":
            from .patterns.command import run as _run_patterns

            return _run_patterns(args)
        if args.command == "bench":
            return _bench(args)
        commands = {"anonymize": (_anonymize, 4), "verify": (_verify, 3), "describe": (_describe, 1)}
        func, steps = commands[args.command]
        with _progress(steps, enabled=sys.stderr.isatty()) as step:
            return func(args, step)
    except _UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (InfeasibleError, SolverError) as exc:
        print(f"fairanon: {exc}", file=sys.stderr)
        return 1
    except FairanonError as exc:
        print(f"fairanon: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"fairanon: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
