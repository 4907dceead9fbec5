"""Sabre and dSabre benchmark.

Run ``python benchmarks/sabre.py`` (``--repeat N`` for more repetitions of the Sabre
runs, ``--census DIR`` for the folder holding UCI Census-Income,
``census_income_{train,test}.csv.gz``; default ``$FAIRANON_DATA``, else ``shared/datasets``
beside the repository; skipped when absent). Prints two tables and writes
``benchmarks/results/sabre.json``.

1. Sabre on UCI Adult (30,162 complete rows), ARX's usual setting: 8 quasi-identifiers
   (age, education, marital-status, native-country, race, income, sex, workclass),
   sensitive occupation, equal-distance EMD, k = 5 and t = 0.2. Reported: LM averaged
   over quasi-identifier cells with suppressed cells counting 1 (ARX's normalized
   loss), GCP (NCP averaged the same way), the share of suppressed records and the
   time. Target from the issue tracker: ARX's optimal generalization (Flash, 100 %
   suppression limit) reaches a loss of about 0.60 with 8,156 records suppressed in
   about 2.4 s; Sabre should lose less in under 1 s.
2. dSabre against t on Adult (all 48,842 rows, the 6 PND attributes of [R], race
   binarized white / non-white) and, when its files are found, Census-Income (299,285
   rows, 12 PND attributes), in the paper's setting (``benchmarks/_ruggieri.py``:
   α-protection w.r.t. RD at bd_RD(t)): time (Ruggieri Fig. 11, a bell shape; every run
   under 10 s), classes, LM (Fig. 9), and the verifier's verdict with the largest RD over
   all contexts against bd_RD(t). ``benchmarks/ruggieri.py fig10`` adds the median
   relative error.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import fairanon as fa
from fairanon.heuristics.sabre import sabre
from fairanon.models.metrics import loss_metric, ncp

import _ruggieri as R
from _data import DATA_HELP, data_dir

ADULT_QI = ["age", "education", "marital-status", "native-country", "race", "income", "sex", "workclass"]


def _timed(func, repeat: int):
    """Result, best and median wall seconds, best CPU seconds of this process (the machine
    may be shared: CPU time is the steadier figure)."""
    times, cpu, result = [], [], None
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = func()
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return result, min(times), statistics.median(times), min(cpu)


def sabre_rows(repeat: int) -> list[dict]:
    inst = fa.load("adult", qi=ADULT_QI, roles={"occupation": "sensitive", "race": "qi", "income": "qi"})
    reqs = [fa.KAnonymity(5), fa.TCloseness("0.2", distance="equal", attribute="occupation")]
    rows = []
    for options in ({"retrieval": "knn"}, {"retrieval": "approx"}):
        release, best, median, cpu = _timed(lambda options=options: sabre(inst, reqs, seed=0, **options), repeat)
        report = fa.verify(inst, release, reqs, metrics=False)
        lm = loss_metric(inst, release)
        rows.append(
            {
                "task": f"sabre adult k=5 t=0.2 {options['retrieval']}",
                "best_s": best,
                "median_s": median,
                "cpu_s": cpu,
                "LM_avg": lm["LM_avg"],
                "GCP": ncp(inst, release)["GCP"],
                "suppressed_share": len(release.suppressed) / inst.n_rows,
                "classes": release.n_groups,
                "buckets": len(release.provenance["buckets"]),
                "verified": report.passed,
            }
        )
    return rows


def dsabre_rows(name: str, instance, ts) -> list[dict]:
    rows = []
    for t in ts:
        req = R.requirement(instance, t)
        release, wall, cpu = R.run("dsabre", instance, t)
        report = fa.verify(instance, release, [req], metrics=False)
        rows.append(
            {
                "task": f"dsabre {name} t={t}",
                "best_s": wall,
                "median_s": wall,
                "cpu_s": cpu,
                "status": str(release.status),
                "classes": release.n_groups,
                "leaves": release.provenance["n_leaves"],
                "LM_avg": loss_metric(instance, release, numeric_loss="values")["LM_avg"],
                "bd_RD": float(req.alpha),
                "max_RD": float(report[str(req)].achieved),
                "verified": report.passed,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--census", default=data_dir(), help=DATA_HELP)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "sabre.json"))
    args = parser.parse_args()
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    rows = sabre_rows(args.repeat)
    rows += dsabre_rows("adult_full", R.load("adult"), R.T_GRID["adult"])
    census = R.load("census", args.census)
    if census is not None:
        rows += dsabre_rows("census", census, R.T_GRID["census"])
    else:
        print(f"Census-Income not found under {args.census}: skipped.")

    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    machine["load_average_1min"] = [load_start, load_end]
    print(
        f"fairanon {fa.__version__} Sabre/dSabre benchmark — {machine['cpus']} cores, "
        f"Python {machine['python']}, load average {load_start:.1f} at the start, {load_end:.1f} at the end"
    )
    print("Reference (ARX Flash, Adult, k=5, t=0.2 equal EMD on occupation): loss 0.60, 8,156 records suppressed, ~2.4 s")
    print(f"{'task':<40} {'best s':>8} {'median s':>9}  notes")
    for row in rows:
        notes = ", ".join(
            f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
            for k, v in row.items()
            if k not in ("task", "best_s", "median_s")
        )
        print(f"{row['task']:<40} {row['best_s']:>8.3f} {row['median_s']:>9.3f}  {notes}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"machine": machine, "repeat": args.repeat, "results": rows}, fh, indent=2, default=str)
    print(f"Wrote {args.out}")


if __name__ == "__main__":
    main()
