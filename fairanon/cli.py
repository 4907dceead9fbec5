"""The ``fairanon`` command line, over the same functions as the Python API.

Exit codes: 0 done (and every verified guarantee holds), 1 a guarantee fails or the
requirements are infeasible, 2 bad usage or bad input (the message says what to fix).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from time import perf_counter

from ._limits import method_seconds
from ._memory import memory_limit_type
from ._validation import check_time_limit
from .exceptions import FairanonError, InfeasibleError, InvalidParameterError, SolverError

__all__ = ["main"]

#: The share of `anonymize`'s time limit kept for verifying the release, measuring its
#: risk and utility and writing the outputs (on Adult about a second of a minute).
FINISH_SHARE = 0.1


class _UsageError(Exception):
    """Raised by the argument parser instead of exiting, so main() owns the exit code."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401 - argparse API
        raise _UsageError(f"{self.prog}: {message}")


def _positive_int(text: str) -> int:
    """An argument that counts something: a whole number of at least 1 (a LocalCluster
    of -1 workers waited for ever)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {value}")
    return value


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fairanon", description="Private, fair and diverse publication of microdata.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def common(p, *, job_required: bool):
        p.add_argument("job", nargs="?" if not job_required else None,
                       help="job file (YAML or JSON); default: the bundled Adult job")
        p.add_argument("--dataset", help="use a bundled data set (adult, german, ...) instead of the job's instance")

    def engine(p, max_rows=True):
        p.add_argument("--engine", choices=("local", "dask"), default="local",
                       help="local (this process) or dask (a Dask cluster; Mondrian, the verifier and the risk)")
        p.add_argument("--scheduler", help="with --engine dask: the scheduler's address (default: a LocalCluster)")
        p.add_argument("--workers", type=_positive_int,
                       help="with --engine dask and no --scheduler: LocalCluster workers")
        if max_rows:
            p.add_argument("--max-rows", type=_positive_int,
                           help="with --engine dask: records a task finishes on its own")

    p = sub.add_parser("anonymize", help="anonymize, verify, write the release and a JSON report")
    common(p, job_required=False)
    p.add_argument("--method", help="override the job's method (e.g. mondrian, auto)")
    p.add_argument("--seed", type=seed_type, help="seed for every randomized step (an int >= 0)")
    p.add_argument("--time-limit", type=float,
                   help="seconds the command may take: start-up and loading count, and a tenth is kept for "
                        "verifying and writing (the method gets the rest)")
    p.add_argument("--memory-limit", type=memory_limit_type,
                   help="memory the method may take: bytes (e.g. 8GB) or a share of the available memory "
                        "(e.g. 0.8); a method whose estimate is larger refuses before the work (default: half "
                        "the available memory; 'none': no limit)")
    p.add_argument("--out", default="out", help="output directory (default: ./out)")
    p.add_argument("--neutralize-formulas", action=argparse.BooleanOptionalAction, default=True,
                   help="write cells a spreadsheet would run as formulas (starting with =, +, -, @ and not "
                        "a number) with a leading ' (default: on; fairanon verify reads both forms)")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv",
                   help="release file format (default: csv; the dask engine writes parquet)")
    p.add_argument("--candidates", metavar="FILE",
                   help="with method fulldomain: also list the lattice's nodes that meet the requirements (their "
                        "loss and risk, Pareto ones first) into FILE as JSON, under the same time and memory limits")
    engine(p)

    p = sub.add_parser("verify", help="verify a released table against the job's requirements")
    common(p, job_required=False)
    p.add_argument("--release", required=True,
                   help="released table: CSV with a record_id column, or Parquet (file or directory)")
    p.add_argument("--out", help="write the JSON report here")
    p.add_argument("--bound", action="store_true",
                   help="also compute lower bounds on the NCP and LM losses and the gaps to them")
    engine(p)

    p = sub.add_parser("describe", help="sizes, domains, QI combinations, p- and tau(R)")
    common(p, job_required=False)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = sub.add_parser("utility", help="distributions before and after, and whether a model trained on the "
                                       "release is still accurate and fair")
    common(p, job_required=False)
    p.add_argument("--release", help="released table (as for verify); default: run the job's method first")
    p.add_argument("--seed", type=seed_type, help="seed of the held-out split and the classifier (default: the job's)")
    p.add_argument("--classifier", choices=("logistic", "tree", "forest", "none"), default="logistic",
                   help="the model trained on the original and on the release (none: distributions only; "
                        "the others need scikit-learn, pip install 'fairanon[ml]')")
    p.add_argument("--test-size", type=float, default=0.3, help="held-out share of the records (default: 0.3)")
    p.add_argument("--bins", type=int, default=10, help="bins of the numeric histograms (default: 10)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--out", help="write the JSON report here")

    p = sub.add_parser("risk", help="re-identification and disclosure risk of the instance, or of a release")
    common(p, job_required=False)
    p.add_argument("--release", help="released table (as for verify); default: the instance itself")
    p.add_argument("--sampling-fraction", help="the table is a sample of a population at this fraction "
                                                "(e.g. 0.01 or 1/100): population uniques are estimated")
    p.add_argument("--population-size", type=int, help="the population's size, instead of --sampling-fraction")
    p.add_argument("--population", metavar="FILE",
                   help="a population table (CSV or Parquet) holding the quasi-identifiers' original values, "
                        "read with the instance's schema: journalist and marketer risk against it")
    p.add_argument("--weights", help="a numeric column of the instance with sampling weights (individual risk; "
                   "default: the attribute of role weight)")
    p.add_argument("--threshold", default="1/5", help="count the records whose risk is above it (default: 1/5)")
    p.add_argument("--suda-max-size", type=int, default=3,
                   help="largest attribute set searched for minimal sample uniques (default: 3; 0 skips SUDA)")
    p.add_argument("--memory-limit", type=memory_limit_type,
                   help="memory the figures may take (SUDA, a population table's combinations), as for "
                        "anonymize (default: the job's memory_limit, else half the available memory)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--out", help="write the JSON report here")
    engine(p, max_rows=False)

    p = sub.add_parser("app", help="a local web app over the same API (pip install 'fairanon[app]')")
    p.add_argument("job", nargs="?", help="job file (YAML or JSON) to open; default: choose the data in the app")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default: 8765; 0: any free port)")
    p.add_argument("--no-browser", action="store_true", help="print the address without opening a browser")

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


def seed_type(text: str) -> int:
    """argparse type of a seed: an int >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def _job(args):
    from .instances.datasets import load
    from .jobs import default_job, read_job

    instance = load(args.dataset) if args.dataset else None
    return read_job(args.job or default_job(), instance=instance)


#: The report ``anonymize`` writes next to the release (named by :func:`release_file_name`).
REPORT_FILE = "report.json"


def _write_json(document) -> Callable[[str], None]:
    def write(path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(document, fh, indent=2)

    return write


def _anonymize(args, step) -> int:
    from .api import anonymize
    from .instances.files import (
        RELEASE_FILES,
        commit,
        neutralize_formulas,
        release_file_name,
        write_csv,
    )
    from .models.risk.report import release_risk
    from .models.utility import release_utility
    from .models.verify import verify

    # The job's time limit is the command's, from its start: the method gets what start-up
    # and loading left less FINISH_SHARE, and the candidates what the release left.
    started = args.started
    _check_outputs(args)
    step("loading the instance")
    job = _job(args)
    _check_outputs(args)  # again: the job named its data and hierarchy files
    method = args.method or job.method
    if args.candidates is not None and method != "fulldomain":
        raise _UsageError(f"fairanon anonymize: --candidates lists the nodes of fulldomain's lattice; the method is "
                          f"{method!r}")
    seed = args.seed if args.seed is not None else job.seed
    time_limit = job.time_limit
    if args.time_limit is not None:
        time_limit = check_time_limit(args.time_limit, "fairanon anonymize --time-limit")
    step(f"anonymizing {job.instance.name!r} with {method}")
    memory_limit = args.memory_limit if args.memory_limit is not None else job.memory_limit
    method_limit = method_seconds(time_limit, started, keep=FINISH_SHARE)
    release = anonymize(job.instance, job.requirements, method, seed=seed, time_limit=method_limit,
                        memory_limit=memory_limit, **job.options)
    step("verifying the release")
    report = verify(job.instance, release, job.requirements)
    step("writing the results")
    status = str(release.status)
    passed = report.passed and status in ("OPTIMAL", "FEASIBLE")
    table = release.table
    name = release_file_name(passed, status, args.format) if len(table) and len(table.columns) else None
    release_path = os.path.join(args.out, name) if name else None
    report_path = os.path.join(args.out, REPORT_FILE)
    memory = _peak_memory()
    document = {"job": job.name, "release_file": name, "release": release.summary(), "report": report.to_dict(),
                "resources": memory, "risk": release_risk(job.instance, release),
                "utility": release_utility(job.instance, release)}
    outputs = {}
    if release_path and args.format == "parquet":
        outputs[release_path] = lambda path: table.rename_axis("record_id").to_parquet(path, index=True)
    elif release_path:
        document["neutralized_formulas"] = bool(args.neutralize_formulas)
        written = neutralize_formulas(table) if args.neutralize_formulas else table
        outputs[release_path] = lambda path: write_csv(written, path, index_label="record_id")
    listed = None
    if args.candidates is not None:
        # Listed before anything is written, and written with the release and the
        # report: a Ctrl-C while listing leaves the outputs as they were.
        step("listing the candidate transformations")
        left = None if time_limit is None else time_limit - (perf_counter() - started)
        listed = _candidates(job, time_limit, left, memory_limit)
        outputs[args.candidates] = _write_json(listed[0])
    # The report is the manifest, renamed last: it names the release by its checksum.
    commit(outputs, remove=[os.path.join(args.out, n) for n in RELEASE_FILES],
           manifest=(report_path, document),
           unlisted=[] if args.candidates is None else [args.candidates])
    print(report)  # with the method's reason, when it gives one
    _print_best_effort(release)
    print(f"  peak memory: {memory['process_peak_rss_mb']:.0f} MB")
    if release_path is None:
        print(f"Wrote {report_path}; the {status} release holds no table to write")
    elif passed:
        print(f"Wrote {release_path} and {report_path}")
    else:
        print(f"Wrote {report_path}; the release is not publishable ({status}, "
              f"{'verified' if report.passed else 'fails verification'}): its table is in {release_path}")
    if listed is not None:
        print(f"Wrote {args.candidates}: {listed[1]}")
    return 0 if passed else 1


def _check_outputs(args) -> None:
    """Refuse, before any work, outputs that cannot be written or would replace an input
    of the command known so far (the job file, its data and hierarchy files once it is
    read, a release it reads) or, for ``--candidates``, one of the run's own outputs."""
    from .instances.files import RELEASE_FILES, check_output_dir, check_output_file

    if args.command == "anonymize":
        names = [*RELEASE_FILES, REPORT_FILE]
        check_output_dir(args.out, names)
        if args.candidates is not None:
            check_output_file(args.candidates, option="--candidates")
            own = {os.path.realpath(os.path.join(args.out, name)) for name in names}
            if os.path.realpath(args.candidates) in own:
                raise InvalidParameterError(
                    f"--candidates {args.candidates!r} is one of the run's own outputs in "
                    f"{args.out!r}; give another name.")
    elif getattr(args, "out", None) is not None:
        check_output_file(args.out)


def _candidates(job, time_limit, left, memory_limit) -> tuple[dict, str]:
    """The candidate transformations of `job`'s fulldomain lattice
    (:func:`fairanon.solver.fulldomain.candidates`, with the job's objective and
    suppression limit, in the `left` seconds of the command's `time_limit`; None: no
    limit) as a document, or ``{"error": message}`` when they cannot be listed (no time
    left, a lattice or a memory need above the limits): the release is written either
    way; and what to say of them."""
    from ._memory import memory_limit_context
    from .solver.fulldomain import candidates

    options = {k: v for k, v in job.options.items() if k in ("objective", "max_suppressed")}
    if left is not None and left <= 0:
        why = f"no time left: the time limit ({time_limit:g} s) was spent on the release"
        document = {"error": why}
    else:
        try:
            with memory_limit_context(memory_limit, "anonymize"):
                listed = candidates(job.instance, job.requirements, time_limit=left, **options)
            document, why = listed.to_dict(), listed.reason
        except FairanonError as exc:
            document, why = {"error": str(exc)}, str(exc)
    return document, (f"no candidates listed ({why})" if why else listed.summary())


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
    from .instances.files import commit

    _check_outputs(args)
    step("loading the instance")
    job = _job(args)
    _check_outputs(args)
    report, notes = _verify_file(args.release, job.instance, job.requirements, bound=args.bound, step=step)
    print(report)
    for note in notes:
        print(f"  note: {note}")
    if args.out is not None:
        commit({args.out: _write_json(report.to_dict())})
    return 0 if report.passed else 1


def _verify_file(path: str, instance, requirements, *, bound: bool = False, step=lambda description: None):
    """Verify the release in the file at `path` (CSV with a record_id column, or
    Parquet); returns the report and notes for the user.

    A CSV file is read as the report written with it says (neutralized formulas or
    not); without one, restored first and, if that fails while the cells as they are
    pass, as they are (:func:`~fairanon.instances.files.formula_readings`)."""
    from .instances.files import verified_reading
    from .jobs import release_readings
    from .models.verify import verify

    step("reading the release")
    manifest, notes = _manifest_of(path)
    neutralized = manifest.get("neutralized_formulas") if manifest else None
    tables = _as_usage(lambda: release_readings(path, neutralized))
    step("verifying")
    report, read_notes = verified_reading([lambda t=t: _external_release(t, instance) for t in tables],
                                          lambda release: verify(instance, release, requirements, bound=bound))
    return report, notes + read_notes


def _external_release(table, instance):
    """A Release of a table read from a file, indexed by its record_id column."""
    from .jobs import external_release

    return _as_usage(lambda: external_release(table, instance))


def _as_usage(read):
    """`read()`, its InvalidParameterError a usage error of fairanon verify (exit 2)."""
    from .exceptions import InvalidParameterError

    try:
        return read()
    except InvalidParameterError as exc:
        raise _UsageError(f"fairanon verify: {exc}") from None


def _manifest_of(release_path: str) -> tuple[dict | None, list[str]]:
    """The report written with a release (``report.json`` beside it) when it names this
    very file by its checksum, and notes for the user when one names it but another
    version of it."""
    from .instances.files import sha256_of

    report = os.path.join(os.path.dirname(os.path.abspath(release_path)), REPORT_FILE)
    name = os.path.basename(os.path.normpath(release_path))
    try:
        with open(report, encoding="utf-8") as fh:
            document = json.load(fh)
        entry = document["files"][name]
        digest = sha256_of(release_path) if os.path.isfile(release_path) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None, []
    if not isinstance(entry, dict) or "sha256" not in entry:
        return None, []
    if entry["sha256"] != digest:
        return None, [f"{report} does not describe this {name}: its checksum differs "
                      "(another run wrote one of them)"]
    return document, []


def _read_release(path: str, instance, command: str):
    """The release in a CSV (with a record_id column) or Parquet file, indexed like `instance`."""
    from .exceptions import InvalidParameterError
    from .jobs import read_release

    try:
        return read_release(path, instance, neutralized=_neutralized(path))
    except InvalidParameterError as exc:
        raise _UsageError(f"fairanon {command}: {exc}") from None


def _neutralized(path: str) -> bool | None:
    """Whether the CSV release at `path` was written with formulas neutralized, as the
    report written with it says; None when no report describes it (or a Parquet file)."""
    parquet = path.endswith((".parquet", ".pq")) or os.path.isdir(path)
    manifest = None if parquet else _manifest_of(path)[0]
    return manifest.get("neutralized_formulas") if manifest else None


def _utility(args, step) -> int:
    from .instances.files import commit
    from .models.utility import utility

    _check_outputs(args)
    step("loading the instance")
    job = _job(args)
    _check_outputs(args)
    if args.release:
        step("reading the release")
        release = _read_release(args.release, job.instance, "utility")
    else:
        from .api import anonymize

        step(f"anonymizing {job.instance.name!r} with {job.method}")
        release = anonymize(job.instance, job.requirements, job.method, seed=job.seed, time_limit=job.time_limit,
                            memory_limit=job.memory_limit, **job.options)
    step("measuring the utility")
    seed = args.seed if args.seed is not None else (job.seed if job.seed is not None else 0)
    report = utility(job.instance, release, seed=seed, bins=args.bins, test_size=args.test_size,
                     classifier=None if args.classifier == "none" else args.classifier)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report)
    if args.out is not None:
        commit({args.out: _write_json(report.to_dict())})
    return 0


def _risk(args, step) -> int:
    from ._memory import memory_limit_context
    from .api import risk
    from .instances.files import commit

    _check_outputs(args)
    step("loading the instance")
    job = _job(args)
    _check_outputs(args)
    release = None
    if args.release:
        step("reading the release")
        release = _read_release(args.release, job.instance, "risk")
    step("measuring the risk")
    with memory_limit_context(_memory_limit(args, job), "risk"):
        report = risk(job.instance, release, **_risk_options(args))
    print(json.dumps(report.to_dict(), indent=2) if args.json else report)
    if args.out is not None:
        commit({args.out: _write_json(report.to_dict())})
    return 0


def _memory_limit(args, job):
    """The memory limit of a command: --memory-limit, else the job's."""
    return args.memory_limit if args.memory_limit is not None else job.memory_limit


def _risk_options(args) -> dict:
    """The options of `fairanon risk` as :func:`fairanon.risk` takes them."""
    return {"sampling_fraction": args.sampling_fraction, "population_size": args.population_size,
            "weights": args.weights, "threshold": args.threshold, "suda_max_size": args.suda_max_size or None,
            "population": args.population}


def _peak_memory() -> dict:
    import resource

    return {"process_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


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

    if args.out is not None:  # an empty --out would fall back to the default folder
        from .instances.files import check_output_dir

        check_output_dir(args.out, ["results.csv", "results.parquet", "suite.json", "report.html"])
    suite = load_suite(args.suite)
    try:
        with terminal_progress(enabled=sys.stderr.isatty()) as progress:
            result = run_suite(suite, args.out, resume=args.resume, overwrite=args.overwrite, jobs=args.jobs,
                               progress=progress)
    except KeyboardInterrupt:
        return _interrupted("fairanon bench: interrupted; the finished runs are in results.csv: run the "
                            "same command with --resume to finish the others")
    comparisons = {} if args.no_report else compare_results(result.out)
    print_summary(result.results, comparisons)
    if not args.no_report:
        path = write_report(result.out, comparisons, title=f"fairanon benchmark: {suite.name}")
        print(f"Wrote {path}")
    print(f"{result.ran} run(s) now, {result.skipped} finished earlier; results in {result.out}")
    return 1 if len(failures(result.results)) else 0


def _app(args) -> int:
    try:
        from .app import serve
        import fastapi, jinja2, multipart, uvicorn  # noqa: F401,E401 - the app extra
    except ImportError as exc:
        print(f"fairanon app needs the app extra: pip install 'fairanon[app]' ({exc})", file=sys.stderr)
        return 2
    return serve(args.job, port=args.port, open_browser=not args.no_browser)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    In the main thread, Ctrl-C is recorded as it arrives (:func:`_on_interrupt`), so an
    interrupt that a library turns into another error still ends as one (exit 130).
    Without `argv` (the ``fairanon`` program itself) Ctrl-C is ignored once the command
    has ended: Python takes a moment to shut down after a large run, and an interrupt
    then would only turn the exit code of a finished run into death by SIGINT. A process
    started with SIGINT ignored (``nohup``, a non-interactive shell's ``&``) keeps
    ignoring it, as Python itself does.
    """
    started = perf_counter()  # a command's time limit counts from here: start-up included
    main_thread = (threading.current_thread() is threading.main_thread()
                   and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN)
    previous = signal.signal(signal.SIGINT, _on_interrupt) if main_thread else None
    _INTERRUPT.clear()
    try:
        return _run(argv, started)
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, signal.SIG_IGN if argv is None else previous)


#: Set when SIGINT arrives during :func:`main`.
_INTERRUPT = threading.Event()


def _on_interrupt(signum, frame) -> None:
    """Python's own Ctrl-C behaviour (KeyboardInterrupt), remembered: pandas' C parser,
    for one, turns a KeyboardInterrupt raised while it reads into a ParserError."""
    _INTERRUPT.set()
    raise KeyboardInterrupt


def _run(argv: Sequence[str] | None, started: float) -> int:
    try:
        return _command(argv, started)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt) or _INTERRUPT.is_set() or _caused_by_interrupt(exc):
            return _interrupted()
        if isinstance(exc, _UsageError):
            print(str(exc), file=sys.stderr)
            return 2
        if isinstance(exc, (InfeasibleError, SolverError)):
            print(f"fairanon: {exc}", file=sys.stderr)
            return 1
        if isinstance(exc, (FairanonError, OSError)):
            print(f"fairanon: error: {exc}", file=sys.stderr)
            return 2
        raise


def _command(argv: Sequence[str] | None, started: float) -> int:
    # Building the parser imports the subcommands' modules, which takes long enough for
    # a Ctrl-C to land in it: it is inside _run's handling.
    parser = _build_parser()
    args = parser.parse_args(argv)
    args.started = started
    if args.version:
        from . import __version__

        print(f"fairanon {__version__}")
        return 0
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "bench":
        return _bench(args)
    if args.command == "app":
        return _app(args)
    from .instances.files import inputs_protected, note_input

    with inputs_protected():
        # The files named on the command line; the job's own are noted as it is read.
        for given in (getattr(args, "job", None), getattr(args, "release", None),
                      getattr(args, "source", None), getattr(args, "population", None)):
            if given and os.path.exists(given):  # patterns' source may name a data set
                note_input(given)
        if getattr(args, "release", None):  # the report beside it says how it was written
            note_input(os.path.join(os.path.dirname(os.path.abspath(args.release)), REPORT_FILE))
        return _dispatch(args)


def _dispatch(args) -> int:
    if args.command == "patterns":
        from .patterns.command import run as _run_patterns

        return _run_patterns(args)
    if getattr(args, "engine", "local") == "dask":
        from .distributed import command as dask_command

        if getattr(args, "release", None):  # read as one machine reads it
            args.neutralized = _neutralized(args.release)

        if args.command == "risk":
            return dask_command.risk(args, _risk_options(args))
        return getattr(dask_command, args.command)(args)
    commands = {"anonymize": (_anonymize, 4), "verify": (_verify, 3), "describe": (_describe, 1),
                "utility": (_utility, 3), "risk": (_risk, 3)}
    func, steps = commands[args.command]
    with _progress(steps, enabled=sys.stderr.isatty()) as step:
        return func(args, step)


def _interrupted(message: str = "fairanon: interrupted (output files are written whole or not at all)") -> int:
    print(message, file=sys.stderr)
    # A KeyboardInterrupt that ended code run from a string (dataclasses and namedtuple
    # build their methods with exec) leaves CPython's "unhandled interrupt" flag set even
    # when caught, and under ``python -m`` the interpreter then ends by SIGINT instead
    # of with this exit code. Every string evaluation clears the flag first.
    exec("pass")
    return 130


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt is among the causes of `exc`."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
