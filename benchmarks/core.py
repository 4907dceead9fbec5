"""Core benchmark: loading Adult, Mondrian, and verifying every requirement type.

Run ``python benchmarks/core.py`` (``--repeat N`` for more repetitions). Prints a table
and writes ``benchmarks/results/core.json``. Targets from the project's issue tracker:
verification of k, l, t, four diversity constraints and RD alpha-protection (minimum
support 20) on Adult (30,162 rows, 8 quasi-identifiers) under 1 s in total; Mondrian
with k = 10 under 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import fairanon as fa
from fairanon.models.metrics import ncp, loss_metric


def _timed(func, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - started)
    return result, min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "core.json"))
    args = parser.parse_args()

    rows = []
    inst, best, median = _timed(lambda: fa.load("adult"), args.repeat)
    rows.append({"task": "load adult", "best_s": best, "median_s": median, "rows": inst.n_rows, "qis": len(inst.schema.qi)})

    k10 = [fa.KAnonymity(10)]
    release, best, median = _timed(lambda: fa.anonymize(inst, k10, method="mondrian", seed=0), args.repeat)
    gcp = ncp(inst, release)["GCP"]
    lm = loss_metric(inst, release)["LM_avg"]
    rows.append({"task": "mondrian k=10", "best_s": best, "median_s": median, "classes": release.n_groups,
                 "GCP": gcp, "LM_avg": lm})

    reqs = [
        fa.KAnonymity(10),
        fa.LDiversity(2),
        fa.TCloseness(0.2, distance="ordered"),
        fa.DiversityConstraint({"race": "Black"}, 2000, 3000),
        fa.DiversityConstraint({"race": "Asian-Pac-Islander"}, 500, 1000),
        fa.DiversityConstraint({"sex": "Female"}, 0, 10000),
        fa.DiversityConstraint({"race": "Amer-Indian-Eskimo", "sex": "Female"}, 50, 200),
        fa.AlphaProtection("RD", 0.2, min_support=20),
    ]
    report, best, median = _timed(lambda: fa.verify(inst, release, reqs, metrics=False), args.repeat)
    rows.append({"task": "verify k,l,t,4 diversity,RD alpha", "best_s": best, "median_s": median,
                 "passed": report.passed,
                 "failed": [c.name for c in report.failures]})
    for req in reqs:
        _, best, median = _timed(lambda: fa.verify(inst, release, [req], metrics=False), args.repeat)
        rows.append({"task": f"  verify {req}", "best_s": best, "median_s": median,
                     "passed": report[str(req)].passed})
    _, best, median = _timed(lambda: fa.verify(inst, release, reqs, metrics=True), args.repeat)
    rows.append({"task": "verify all + metrics", "best_s": best, "median_s": median})

    main_reqs = [fa.KAnonymity(5), fa.LDiversity(2), fa.TCloseness(0.2, distance="ordered")]
    release5, best, median = _timed(lambda: fa.anonymize(inst, main_reqs, method="mondrian", seed=0), args.repeat)
    rows.append({"task": "mondrian k=5,l=2,t=0.2 (default job)", "best_s": best, "median_s": median,
                 "classes": release5.n_groups, "GCP": ncp(inst, release5)["GCP"]})

    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    print(f"fairanon {fa.__version__} core benchmark — {machine['cpus']} cores, Python {machine['python']}")
    print(f"{'task':<48} {'best s':>8} {'median s':>9}  notes")
    for row in rows:
        notes = ", ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in row.items() if k not in ("task", "best_s", "median_s"))
        print(f"{row['task']:<48} {row['best_s']:>8.3f} {row['median_s']:>9.3f}  {notes}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"machine": machine, "repeat": args.repeat, "results": rows}, fh, indent=2, default=str)
    print(f"Wrote {args.out}")


if __name__ == "__main__":
    main()
