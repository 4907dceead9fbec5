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
2. dSabre's time against t (Ruggieri Fig. 11, a bell shape) on Adult (all 48,842 rows,
   the 6 PND attributes of [R], race binarized white / non-white) and, when its files
   are found, Census-Income (299,285 rows, 12 PND attributes); every run under 10 s.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import time
from fractions import Fraction

import numpy as np
import pandas as pd

import fairanon as fa
from fairanon.heuristics.dsabre import dsabre
from fairanon.heuristics.sabre import sabre
from fairanon.instances.datasets import load_census
from fairanon.instances.hierarchy import Hierarchy
from fairanon.models.describe import describe
from fairanon.models.metrics import loss_metric, ncp

from _data import DATA_HELP, data_dir

ADULT_QI = ["age", "education", "marital-status", "native-country", "race", "income", "sex", "workclass"]
RUGGIERI_ADULT_PND = ["age", "workclass", "education", "marital-status", "occupation", "relationship"]


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


def _binarized(instance, name, protected_label, other_label):
    """The PD attribute binarized (protected values vs the rest), as Ruggieri does."""
    attr = instance.schema[name]
    table = pd.concat([instance.table, instance.extra], axis=1)
    col = table[name].astype(str)
    table[name] = np.where(col.isin(attr.protected), protected_label, other_label)
    binary = attr.with_(hierarchy=Hierarchy.flat([protected_label, other_label]), protected=(protected_label,))
    return fa.Instance(table, instance.schema.replace(binary), instance.name)


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


def _t_grid(instance, n_points: int) -> list[Fraction]:
    """t from τ(R) to max(p-, 1 - p-) (Ruggieri Table 1), denser at low t where the
    search tree grows fastest (quadratic spacing), rounded to three decimals (up, so
    the first stays >= τ(R))."""
    d = describe(instance)["discrimination"]
    tau, p = Fraction(d["tau"]), Fraction(d["p_minus"])
    top = max(p, 1 - p)
    grid = [tau + (top - tau) * Fraction(i, n_points - 1) ** 2 for i in range(n_points)]
    return sorted({Fraction(math.ceil(t * 1000), 1000) for t in grid})


def dsabre_rows(name: str, instance, dec: str, n_points: int) -> list[dict]:
    rows = []
    for t in _t_grid(instance, n_points):
        req = fa.TCloseness(t, attribute=dec)
        release, best, median, cpu = _timed(lambda req=req: dsabre(instance, [req], seed=0), 1)
        rows.append(
            {
                "task": f"dsabre {name} t={float(t):.3f}",
                "best_s": best,
                "median_s": median,
                "cpu_s": cpu,
                "status": str(release.status),
                "classes": release.n_groups,
                "LM_avg": loss_metric(instance, release, numeric_loss="values")["LM_avg"],
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--points", type=int, default=10, help="t values per dSabre curve")
    parser.add_argument("--census", default=data_dir(), help=DATA_HELP)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "sabre.json"))
    args = parser.parse_args()
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    rows = sabre_rows(args.repeat)
    adult = _binarized(fa.load("adult", variant="full", qi=RUGGIERI_ADULT_PND), "race", "non-white", "white")
    rows += dsabre_rows("adult_full", adult, "income", args.points)
    train = os.path.join(args.census, "census_income_train.csv.gz")
    test = os.path.join(args.census, "census_income_test.csv.gz")
    if os.path.exists(train) and os.path.exists(test):
        census = _binarized(load_census(train, test), "race", "non-white", "white")
        rows += dsabre_rows("census", census, "income class", args.points)
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
