"""Large data: Mondrian and the verifier on one machine from 0.1 M to 10 M rows, and the
Dask engine on 50 M rows read from Parquet by a LocalCluster whose workers each have
less memory than the data.

Run ``python benchmarks/scale.py``; ``--sizes 1e5,1e6,1e7`` picks the single-machine
sizes, ``--dask-rows 5e7`` the distributed one (0 skips it), ``--workdir DIR`` where the
Parquet data and release go (deleted at the end unless ``--keep``). Prints one table
per part and writes ``benchmarks/results/scale.json``.

Single machine (synthetic population, 7 generalizable quasi-identifiers plus the
protected race, k = 10): wall and CPU time of ``mondrian`` and of ``fa.verify`` (with
its metrics) in µs per row (the median of five runs up to 0.2 M rows; the garbage
collector runs before each timed call, as in timeit), and the peak memory each call allocates (tracemalloc, a
separate run) against the in-memory size of the instance's table. Targets: Mondrian at
most 1.2 µs/row at 10 M rows, the verifier no slower than Mondrian, peak memory within
3x the input.

Dask (the same population written as Parquet files of 1 M rows, ids in a column;
LocalCluster of 2 single-threaded worker processes with ``--worker-memory`` each,
below the data's in-memory size): time per phase of reading the schema's statistics,
each level of the distributed top of the tree, finishing the parts and writing the
release as Parquet, and the verifier's passes (integrity join, classes, checks), with
the task count of each phase, its CPU time (this process and the workers') and the
volume each shuffle moves; then the verifier again with the risk and utility figures of
``report.json`` (``fairanon anonymize --engine dask``), whose extra CPU time is printed.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import shutil
import tempfile
import time
import tracemalloc
import warnings


import fairanon as fa
from fairanon.heuristics.mondrian import mondrian
from fairanon.instances.synthetic import population

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "scale.json")


def _timed(call):
    gc.collect()  # as timeit: no collection left over from earlier work lands in this call
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def _median_timed(call, repeats: int):
    """`call`'s output and its median wall and CPU time over `repeats` runs."""
    runs = [_timed(call) for _ in range(repeats)]
    walls, cpus = sorted(r[1] for r in runs), sorted(r[2] for r in runs)
    return runs[-1][0], walls[repeats // 2], cpus[repeats // 2]


def _peak(call) -> float:
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def _rss_peak(call) -> float | None:
    """The process's peak resident memory (MB) during `call` (Linux: the high-water
    mark reset first), or None where it cannot be read."""
    _reset_peak()
    call()
    return _peak_mb()


def _reset_peak() -> None:
    """Reset this process's peak resident memory (Linux; elsewhere nothing)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def _peak_mb() -> float | None:
    """This process's peak resident memory (MB) since the last :func:`_reset_peak`."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            return next(int(line.split()[1]) / 1024 for line in fh if line.startswith("VmHWM:"))
    except OSError:
        return None


def _rss() -> float:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def bench_single(sizes: list[int]) -> list[dict]:
    rows = []
    for n in sizes:
        inst = population(n, n_qi=7, seed=0)
        input_mb = inst.table.memory_usage(deep=True).sum() / 2**20
        reqs = [fa.KAnonymity(10)]
        # Runs of a tenth of a second are timed five times (the median), longer ones once.
        repeats = 5 if n <= 200_000 else 1
        rel, m_wall, m_cpu = _median_timed(lambda: mondrian(inst, reqs), repeats)
        rep, v_wall, v_cpu = _median_timed(lambda: fa.verify(inst, rel, reqs), repeats)
        assert rep.passed
        row = {
            "rows": n, "input_mb": input_mb, "classes": rel.n_groups, "repeats": repeats,
            "mondrian_wall_s": m_wall, "mondrian_cpu_s": m_cpu,
            "mondrian_us_per_row": 1e6 * m_cpu / n, "mondrian_wall_us_per_row": 1e6 * m_wall / n,
            "verify_wall_s": v_wall, "verify_cpu_s": v_cpu, "verify_us_per_row": 1e6 * v_cpu / n,
        }
        rel = rep = None
        gc.collect()
        row["rss_before_mb"] = _rss() if os.path.exists("/proc/self/statm") else None
        row["mondrian_peak_rss_mb"] = _rss_peak(lambda: mondrian(inst, reqs))
        rel = mondrian(inst, reqs)
        row["verify_peak_rss_mb"] = _rss_peak(lambda: fa.verify(inst, rel, reqs))
        row["mondrian_peak_mb"] = _peak(lambda: mondrian(inst, reqs))
        row["verify_peak_mb"] = _peak(lambda: fa.verify(inst, rel, reqs))
        row["mondrian_peak_x_input"] = row["mondrian_peak_mb"] / input_mb
        row["verify_peak_x_input"] = row["verify_peak_mb"] / input_mb
        rows.append(row)
        print(_line(row, SINGLE_COLUMNS), flush=True)
        inst = rel = rep = None  # free the table before the next size
    return rows


# ------------------------------------------------------------------ Dask
def write_parquet(n: int, path: str, chunk: int = 1_000_000) -> dict:
    """The population of n rows as Parquet files of `chunk` rows, ids in a column."""
    marker = os.path.join(path, f"_rows_{n}")
    if os.path.exists(marker):  # written by an earlier run (--keep)
        with open(marker, encoding="utf-8") as fh:
            return json.load(fh)
    os.makedirs(path, exist_ok=True)
    memory = 0
    for i, start in enumerate(range(0, n, chunk)):
        size = min(chunk, n - start)
        table = population(size, n_qi=7, seed=1000 + i).table.reset_index()
        table["record_id"] += start
        memory += table.memory_usage(deep=True).sum()
        table.to_parquet(os.path.join(path, f"part-{i:05d}.parquet"), index=False)
    disk = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    out = {"rows": n, "in_memory_mb": memory / 2**20, "parquet_mb": disk / 2**20}
    with open(marker, "w", encoding="utf-8") as fh:
        json.dump(out, fh)
    return out


def bench_dask(n: int, workdir: str, worker_memory: str, max_rows: int, keep: bool = False) -> dict:
    from fairanon.distributed import dask_instance, local_client, mondrian_dask, trim_workers, verify_dask

    logging.getLogger("distributed").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)
    data = os.path.join(workdir, "data")
    out = os.path.join(workdir, "release.parquet")
    clock = time.perf_counter()
    sizes = write_parquet(n, data)
    sizes["write_input_s"] = time.perf_counter() - clock
    print(f"  wrote {n:,} rows: {sizes['parquet_mb']:.0f} MB of Parquet, {sizes['in_memory_mb']:.0f} MB in memory",
          flush=True)
    schema = population(1000, n_qi=7, seed=0).schema
    phases = []
    # Each worker's peak over the phases: its own high-water mark, reset before each
    # phase. (Not ru_maxrss: a worker process inherits this process's peak in it.)
    worker_peaks: dict = {}
    # The CLI's LocalCluster, with the given memory per worker.
    with local_client(2, worker_memory) as client:
        client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.add_plugin(_TaskCounter()))

        def phase(name, call):
            tasks, lost = _counts(client)
            start = sorted(trim_workers(client).values())  # as the CLI does between passes
            client.run(_reset_peak)
            workers_cpu = sum(client.run(time.process_time).values())
            result, wall, cpu = _timed(call)
            cpu += sum(client.run(time.process_time).values()) - workers_cpu
            after = _counts(client)
            by_worker = {w: v for w, v in client.run(_peak_mb).items() if v is not None}
            for w, v in by_worker.items():
                worker_peaks[w] = max(worker_peaks.get(w, 0.0), v)
            peaks = sorted(by_worker.values())
            phases.append({"phase": name, "wall_s": wall, "cpu_s": cpu, "tasks": after[0] - tasks,
                           "workers_lost": after[1] - lost, "worker_start_mb": start, "worker_peak_mb": peaks})
            print(f"  {name}: {wall:.1f} s ({cpu:.1f} s CPU), {phases[-1]['tasks']} tasks, {phases[-1]['workers_lost']} workers lost, "
                  f"workers {', '.join(f'{v:.0f}' for v in start)} MB at the start, peaks "
                  f"{', '.join(f'{v:.0f}' for v in peaks)} MB", flush=True)
            return result

        dinst = phase("statistics (schema, value counts)",
                      lambda: dask_instance(data, schema, name="population", id_column="record_id"))
        reqs = [fa.KAnonymity(10)]
        rel = phase("anonymize: distributed top (graph and counts)",
                    lambda: mondrian_dask(dinst, reqs, max_rows=max_rows))
        for level, seconds in rel.provenance["phase_seconds"].items():
            phases.append({"phase": f"  of which {level}", "wall_s": seconds})
        phase("anonymize: shuffle, finish the parts, write Parquet",
              lambda: rel.to_parquet(out))
        report = phase("verify (from the Parquet release)", lambda: verify_dask(dinst, out, reqs))
        for name, seconds in report.phase_seconds.items():
            phases.append({"phase": f"  of which {name}", "wall_s": seconds})
        plain = phases[-1 - len(report.phase_seconds)]
        # What report.json adds: the same verifier with the risk and utility figures.
        figures = phase("verify with risk and utility (report.json)",
                        lambda: verify_dask(dinst, out, reqs, risk=True, utility=True))
        for name, seconds in figures.phase_seconds.items():
            phases.append({"phase": f"  of which {name}", "wall_s": seconds})
        extra = phases[-1 - len(figures.phase_seconds)]["cpu_s"] - plain["cpu_s"]
        print(f"  risk and utility figures: {extra:+.1f} s CPU over the verifier's {plain['cpu_s']:.1f} s "
              f"({100 * extra / plain['cpu_s']:+.0f} %)", flush=True)
        if not keep:
            shutil.rmtree(out, ignore_errors=True)
    assert report.passed, str(report)
    routed_bytes = sizes["in_memory_mb"] + 8 * n / 2**20  # two int32 columns added
    return {
        **sizes,
        "workers": 2, "worker_memory_limit": worker_memory, "max_rows": max_rows,
        "distributed_levels": rel.provenance["distributed_levels"],
        "distributed_parts": rel.provenance["distributed_parts"],
        "classes": report.n_classes, "passed": report.passed,
        "risk_utility_extra_cpu_s": extra, "verify_cpu_s": plain["cpu_s"],
        "risk_error": figures.risk_report.get("error"), "utility_error": figures.utility.get("error"),
        "phases": phases,
        "total_s": sum(p["wall_s"] for p in phases if not p["phase"].startswith("  ")
                       and not p["phase"].startswith("verify with")),
        "workers_lost": sum(p.get("workers_lost") or 0 for p in phases),
        "shuffle_mb": {"finish (every record to its part's task, with its part and bin)": routed_bytes,
                       "verify join (release and original by record id, as narrow codes)":
                           report.join_bytes / 2**20},
        # per worker, the largest of its phase peaks (a worker restarted by its nanny
        # counts as a new one)
        "worker_peak_rss_mb": sorted(float(v) for v in worker_peaks.values()),
    }


try:
    from distributed.diagnostics.plugin import SchedulerPlugin
except ImportError:  # pragma: no cover - the Dask part is skipped without the extra
    SchedulerPlugin = object


class _TaskCounter(SchedulerPlugin):
    """A scheduler plugin counting the tasks that finish and the workers that leave
    (a worker restarted by its nanny for exceeding its memory limit leaves)."""

    name = "fairanon-task-counter"

    def __init__(self):
        self.done = 0
        self.lost = 0

    def transition(self, key, start, finish, *args, **kwargs):
        if start == "processing" and finish == "memory":
            self.done += 1

    def remove_worker(self, scheduler, worker, **kwargs):
        self.lost += 1


def _counts(client) -> tuple[int, int]:
    """Tasks the scheduler has finished and workers it has lost so far."""
    return tuple(client.run_on_scheduler(
        lambda dask_scheduler: (dask_scheduler.plugins[_TaskCounter.name].done,
                                dask_scheduler.plugins[_TaskCounter.name].lost)))


# ------------------------------------------------------------------ output
SINGLE_COLUMNS = ["rows", "input_mb", "mondrian_cpu_s", "mondrian_us_per_row", "verify_cpu_s", "verify_us_per_row",
                  "mondrian_peak_mb", "mondrian_peak_x_input", "verify_peak_mb", "verify_peak_x_input"]


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e5 else f"{v:.4e}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _line(row: dict, columns: list[str]) -> str:
    return "  ".join(f"{_fmt(row.get(c)):>12}" for c in columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6,1e7")
    parser.add_argument("--dask-rows", default="5e7")
    parser.add_argument("--worker-memory", default="1GB", help="memory limit of each Dask worker")
    parser.add_argument("--max-rows", type=int, default=250_000, help="records a task finishes on its own")
    parser.add_argument("--workdir", default=None, help="where the Parquet data go (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the Parquet data and release")
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args()
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    print(f"fairanon {fa.__version__} large-data benchmark — {machine['cpus']} cores (timings: CPU time; "
          "the machine may be shared)")
    sizes = [int(float(s)) for s in args.sizes.split(",") if s]
    print("\nSingle machine: Mondrian k = 10 and fa.verify, synthetic population, 8 QIs")
    print("  ".join(f"{c:>12}" for c in SINGLE_COLUMNS))
    single = bench_single(sizes)
    result = {"machine": machine, "single": single}
    n = int(float(args.dask_rows))
    if n:
        workdir = args.workdir or tempfile.mkdtemp(prefix="fairanon-scale-")
        print(f"\nDask LocalCluster, 2 workers x {args.worker_memory}, {n:,} rows from Parquet in {workdir}")
        try:
            result["dask"] = bench_dask(n, workdir, args.worker_memory, args.max_rows, args.keep)
        finally:
            if not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
        d = result["dask"]
        print(f"  in memory {d['in_memory_mb']:.0f} MB, Parquet {d['parquet_mb']:.0f} MB, "
              f"worker limit {d['worker_memory_limit']}, worker peaks "
              f"{', '.join(f'{v:.0f}' for v in d['worker_peak_rss_mb'])} MB (the largest of each worker's phase peaks)")
        print(f"  {d['distributed_levels']} distributed levels, {d['distributed_parts']} parts finished on one "
              f"task each, {d['classes']:,} classes, verified: {d['passed']}; end to end {d['total_s']:.0f} s, "
              f"{d['workers_lost']} workers lost")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2, default=str)
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    main()
