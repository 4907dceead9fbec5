"""Large-domain benchmark: attributes of 10,000 and 100,000 distinct values, each step in
a process of its own (CPU seconds and peak resident memory).

Run ``python benchmarks/large_domains.py`` (``--sizes 10000 100000``, ``--memory-limit``
for each step, default 4GB; ``--label`` names the run in its rows and file). Prints one
row per step and size and writes ``benchmarks/results/large_domains.json`` (``--out`` to
change). benchmarks/results/ is not kept in the repository: to compare with the package
as it was before these steps read large domains as ranges (commit fd4b980), run the
same command on both and label each run::

    python benchmarks/large_domains.py --label after \
        --out benchmarks/results/large_domains_after.json
    mkdir -p /tmp/old && git archive fd4b980 fairanon | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python benchmarks/large_domains.py --label before \
        --out benchmarks/results/large_domains_before.json

- utility: ``fa.utility`` (distributions only) of an ID-like quasi-identifier of n values,
  one record each, under a flat tree, released as itself but ten records suppressed.
- tcloseness: Mondrian under 5-anonymity and hierarchical 0.6-closeness of a sensitive
  attribute of n codes masked one digit per level (n = 10^d, height d), one record each,
  an age as the quasi-identifier; then ``fa.verify`` of the release.
- sabre: Sabre on the same table under 5-anonymity and hierarchical 0.4-closeness, then
  ``fa.verify``.
- labels: the exact model's encoding (``cpsat``'s label spaces and record types) of the
  n codes as a categorical quasi-identifier under the same tree, one record each, for
  5-anonymity.
- cpsat: ``cpsat`` on that table with an age of 12 values beside the codes, 5-anonymity,
  ``time_limit=60``, 2 workers, then ``fa.verify``: the status, what was returned
  (``fallback``) and the wall seconds against the limit. Not among the default steps
  (``--steps cpsat``): at 10,000 codes it runs the whole minute.

The package's methods are imported before any step's clock starts
(``fairanon.api.METHODS.load()``): the first call of a method in a process imports it
(every method: OR-Tools among them, 0.6-0.7 s CPU, 1.0-1.1 s wall after the table is built
at load 11 on 2 cores, 2.8-3.7 s wall in a bare process), which its time limit now counts,
leaving the method less of it; it was counted before in the cpsat step's wall seconds
(measured at 62-63 s of its 60 s, when the first look-up of ``fa.anonymize`` imported
them outside every limit) and in the CPU seconds of every step calling ``fa.anonymize``.

Each step's figures: the CPU seconds of the step alone (the table and its tree built
before; with those of the processes it started and waited for), the peak resident memory of its process (``peak_rss_mb``, ``ru_maxrss``: the
whole process, so it includes importing the package and building the table and its
tree) and the memory already resident when the step started (``rss_before_mb``, the
peak up to then); a step refused by the memory limit prints the refusal.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from _table import show, write_results

STEPS = ("utility", "tcloseness", "sabre", "labels", "cpsat")
DEFAULT_STEPS = ("utility", "tcloseness", "sabre", "labels")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _children_cpu() -> float:
    """CPU seconds of the processes the step started and waited for (lns's searches)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _one(step: str, n: int, memory: str) -> dict:
    """Run one step in this process: its CPU seconds and peak memory, or the refusal."""
    import numpy as np
    import pandas as pd

    import fairanon as fa
    import fairanon.api
    from fairanon._memory import memory_limit
    from fairanon.instances.builders import masking_hierarchy

    fairanon.api.METHODS.load()  # the methods, imported before any clock starts

    if step == "utility":
        ids = [f"P{i:06d}" for i in range(n)]
        inst = fa.Instance(pd.DataFrame({"pid": ids}), fa.Schema([fa.Attribute("pid", hierarchy=fa.Hierarchy.flat(ids))]))
        table = inst.table.copy()
        table["pid"] = ["*"] * 10 + ids[10:]
        release = fa.Release(table=table, groups=np.zeros(n, dtype=int), provenance={"method": "hand"})

        def run():
            return f"tv={fa.utility(inst, release, classifier=None)['pid'].tv_distance:.4g}"
    elif step == "labels":
        from fairanon.solver.local_recoding import encode

        digits = len(str(n - 1))
        codes = [f"{i:0{digits}d}" for i in range(n)]
        tree = masking_hierarchy(codes, levels=digits - 1)
        inst = fa.Instance(pd.DataFrame({"dx": codes}), fa.Schema([fa.Attribute("dx", hierarchy=tree)]))

        def run():
            enc = encode(inst, [fa.KAnonymity(5)])
            return f"{enc.spaces[0].n_labels:,} labels, {enc.n_types:,} types"
    elif step == "cpsat":
        digits = len(str(n - 1))
        codes = [f"{i:0{digits}d}" for i in range(n)]
        tree = masking_hierarchy(codes, levels=digits - 1)
        table = pd.DataFrame({"dx": codes, "age": np.random.default_rng(0).integers(18, 30, n)})
        inst = fa.Instance(table, fa.Schema([fa.Attribute("dx", hierarchy=tree), fa.Attribute("age", kind="numeric")]))
        reqs = [fa.KAnonymity(5)]

        def run():
            wall = time.perf_counter()
            release = fa.anonymize(inst, reqs, method="cpsat", time_limit=60, num_workers=2, seed=0)
            wall = time.perf_counter() - wall
            report = fa.verify(inst, release, reqs, metrics=False)
            return (f"{release.status.value} {release.provenance.get('fallback') or 'cpsat'}, "
                    f"NCP {float(release.objective):.4g}, {wall:.2f} s wall of 60, "
                    f"{'PASSED' if report.passed else 'FAILED'}")
    else:
        digits = len(str(n - 1))
        codes = [f"{i:0{digits}d}" for i in range(n)]
        rng = np.random.default_rng(0)
        table = pd.DataFrame({"age": rng.integers(18, 90, n), "dx": rng.permutation(codes)})
        tree = masking_hierarchy(codes, levels=digits - 1)
        inst = fa.Instance(table, fa.Schema([fa.Attribute("age", kind="numeric"),
                                             fa.Attribute("dx", role="sensitive", hierarchy=tree)]))
        t = "0.6" if step == "tcloseness" else "0.4"
        reqs = [fa.KAnonymity(5), fa.TCloseness(t, distance="hierarchical", attribute="dx")]
        method = "mondrian" if step == "tcloseness" else "sabre"

        def run():
            release = fa.anonymize(inst, reqs, method=method, seed=0)
            report = fa.verify(inst, release, reqs, metrics=False)
            return f"{'PASSED' if report.passed else 'FAILED'}, {release.n_groups} classes"
    before = _rss_mb()
    cpu = time.process_time() + _children_cpu()
    try:
        with memory_limit(memory):
            outcome = run()
    except fa.MemoryLimitError as exc:
        outcome = f"refused: {str(exc).split(' of memory')[0]}"
    return {"step": step, "n": n, "cpu_s": time.process_time() + _children_cpu() - cpu, "peak_rss_mb": _rss_mb(),
            "rss_before_mb": before, "outcome": outcome}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--steps", nargs="+", default=list(DEFAULT_STEPS), choices=STEPS)
    parser.add_argument("--memory-limit", default="4GB")
    parser.add_argument("--label", default="current")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "large_domains.json"))
    parser.add_argument("--one", nargs=2, metavar=("STEP", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], int(args.one[1]), args.memory_limit)))
        return
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    for n in args.sizes:
        for step in args.steps:
            done = subprocess.run([sys.executable, __file__, "--one", step, str(n), "--memory-limit", args.memory_limit],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                row = {"step": step, "n": n, "outcome": f"exit {done.returncode}: {done.stderr.strip()[-200:]}"}
            else:
                row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append({"label": args.label, **row})
            print(rows[-1], flush=True)
    show(rows, ["label", "step", "n", "cpu_s", "peak_rss_mb", "rss_before_mb", "outcome"])
    write_results(args.out, {"label": args.label, "memory_limit": args.memory_limit, "rows": rows})


if __name__ == "__main__":
    main()
