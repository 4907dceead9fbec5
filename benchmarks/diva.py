"""DIVA benchmark: the shape of the parameter sweep of DIVA's Table 5, and its target.

Run ``python benchmarks/diva.py`` (``--quick`` for a smaller grid, ``--census DIR`` for
the folder holding ``census_income_{train,test}.csv.gz``; default ``$FAIRANON_DATA``,
else ``shared/datasets`` beside the repository; the Census parts are skipped without it).
Prints a table and writes ``benchmarks/results/diva.json``.

- **Target** (in a child process, so its peak memory is its own): Census-Income at full
  size (299,285 rows), |Σ| = 8 proportional constraints (rho = 0.96, fairanon's default
  bounds) chosen for a conflict rate of 0.2, k = 20, MaxFanOut: under 60 s and 4 GB.
- **Census sweeps** (DIVA Table 5; defaults |R| = 180k, |Σ| = 8, cf = 0.2, k = 20): |R|
  in 60k..300k (seeded random samples), |Σ| in 4..20, cf in 0..1, k in 10..50, for
  DIVA-Basic, MinChoice, MaxFanOut (and the exact mode in the |Σ| sweep) and Mondrian
  released with DIVA's stars.
- **Baselines** (DIVA Fig. 5): k-member and OKA are quadratic, so they run with every
  other method on Census samples of 2.5k-10k records.
- **German credit** with DIVA's published Credit constraints (Sex and Job, rho = 0.96),
  k = 10 and 20, every method.
- **Synthetic populations** (DIVA Fig. 4d): 100k records, Zipf, uniform and Gaussian
  values, |Σ| = 8, cf = 0.2, k = 20.

Each row gives the runtime of the method (the verifier's time is not included), the
stars (suppressed quasi-identifier cells), the discernibility metric with suppression
(baselines spec §1.4) and whether Σ and k-anonymity hold according to the verifier.
Constraint sets with a given conflict rate (set form, baselines spec §7.4) are found by a
seeded local search over proportional constraints on the values (and pairs of values) of
the categorical quasi-identifiers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd

import fairanon as fa
from fairanon.heuristics.kmember import kmember
from fairanon.heuristics.mondrian import mondrian
from fairanon.heuristics.oka import oka
from fairanon.instances.datasets import load_census
from fairanon.instances.synthetic import population
from fairanon.methods.diva import diva, diva_exact
from fairanon.models.diversity import conflict_rate, encode_constraints, proportional
from fairanon.release import Release, generalize_partition

from _data import DATA_HELP, data_dir

STRATEGIES = ("basic", "minchoice", "maxfanout")


# ------------------------------------------------------------------ data
def census(folder: str) -> fa.Instance:
    return load_census(os.path.join(folder, "census_income_train.csv.gz"),
                       os.path.join(folder, "census_income_test.csv.gz"))


def sample(inst: fa.Instance, n: int, seed: int = 0) -> fa.Instance:
    if n >= inst.n_rows:
        return inst
    rows = np.sort(np.random.default_rng(seed).permutation(inst.n_rows)[:n])
    return inst.subset(inst.row_ids[rows], name=f"{inst.name}[{n}]")


def german_with_sex() -> fa.Instance:
    """German credit with DIVA's Sex attribute (from personal status, which it replaces)."""
    base = fa.load("german", roles={"personal_status": "ignore"})
    table = pd.concat([base.table, base.extra], axis=1)
    table["sex"] = np.where(table["personal_status"].astype(str).str.startswith("female"), "Female", "Male")
    return fa.Instance(table, fa.Schema([*base.schema, fa.Attribute("sex")]), name="german")


def constraint_set(inst: fa.Instance, n: int, cf: float, k: int, *, rho=0.96, seed: int = 0):
    """n proportional constraints whose set conflict rate is as close to `cf` as a seeded
    local search finds (single values and pairs of values of categorical QIs, each
    keeping at least 2k and at most 70 % of the records)."""
    attrs = [a for a in inst.schema.generalizable if inst.schema[a].kind != "numeric"]
    candidates = [s for a in attrs for s in proportional(inst, a, rho)
                  if s.lower >= 2 * k and s.upper <= 0.7 * inst.n_rows]
    pairs = [s for a, b in itertools.combinations(attrs, 2) for s in proportional(inst, [a, b], rho)
             if s.lower >= max(2 * k, inst.n_rows // 100)]
    candidates += sorted(pairs, key=lambda s: -s.upper)[:40]
    # Keep the constraints one class per protected value can satisfy on their own.
    protected = inst.schema.protected
    prot = inst.codes(protected) if protected else np.zeros(inst.n_rows, dtype=np.int64)
    kept = []
    for s, e in zip(candidates, encode_constraints(inst, candidates)):
        reach = sum(int((e.target & (prot == p)).sum()) for p in np.unique(prot)
                    if int((e.match & (prot == p)).sum()) >= k)
        if reach >= s.lower:
            kept.append(s)
    candidates = kept
    rng = np.random.default_rng(seed)
    rows = rng.permutation(inst.n_rows)[:20000]
    masks = np.array([e.target[rows] for e in encode_constraints(inst, candidates)], dtype=np.int16)

    def distance(hits):
        union = int((hits > 0).sum())
        return abs((int((hits > 1).sum()) / union if union else 0.0) - cf)

    best = None
    for _ in range(4):
        chosen = list(rng.choice(len(candidates), n, replace=False))
        hits = masks[chosen].sum(axis=0)
        current = distance(hits)
        for _ in range(1500):
            i, j = int(rng.integers(n)), int(rng.integers(len(candidates)))
            if j in chosen:
                continue
            trial = hits - masks[chosen[i]] + masks[j]
            d = distance(trial)
            if d <= current:
                chosen[i], hits, current = j, trial, d
        if best is None or current < best[0]:
            best = (current, sorted(chosen))
    return [candidates[i] for i in best[1]]


# ------------------------------------------------------------------ one run
def run(inst, reqs, method: str, *, seed: int, time_limit: float, exact_time: float) -> dict:
    started = time.perf_counter()
    if method in STRATEGIES:
        release = diva(inst, reqs, next_node=method, seed=seed, time_limit=time_limit)
    elif method == "exact":
        release = diva_exact(inst, reqs, seed=seed, time_limit=exact_time)
    elif method in ("kmember", "oka"):
        func = kmember if method == "kmember" else oka
        release = func(inst, [r for r in reqs if isinstance(r, fa.KAnonymity)], seed=seed, recoding="suppress")
    else:  # Mondrian's partition, released with DIVA's stars for comparable counts
        part = mondrian(inst, [r for r in reqs if isinstance(r, fa.KAnonymity)], seed=seed)
        release = Release(generalize_partition(inst, part.groups, recoding="suppress"), part.groups,
                          provenance={"method": "mondrian"})
    seconds = time.perf_counter() - started
    row = {"method": method, "status": str(release.status), "seconds": round(seconds, 3)}
    if release.status in (fa.Status.FEASIBLE, fa.Status.OPTIMAL):
        report = fa.verify(inst, release, reqs)
        diversity = [c for c in report.checks if c.name.startswith("diversity")]
        k_check = [c for c in report.checks if c.name.endswith("-anonymity")]
        row.update(
            stars=report.metrics.get("suppressed_cells"),
            DM=report.metrics.get("discernibility"),
            sigma_holds=all(c.passed for c in diversity),
            sigma_failed=sum(not c.passed for c in diversity),
            k_holds=all(c.passed for c in k_check),
            integrity=all(c.passed for c in report.checks if c.integrity),
        )
        exact = release.provenance.get("search", {}).get("exact")
        if exact:
            row["exact"] = {key: exact.get(key) for key in ("status", "pool_clusters", "complete", "gap")}
        if "search" in release.provenance:
            row["tries"] = release.provenance["search"].get("tries")
    else:
        row["reason"] = release.reason
    return row


def sweep_point(label, inst, sigma, k, methods, args, **extra) -> list[dict]:
    reqs = [fa.KAnonymity(k), *sigma]
    base = {"dataset": label, "rows": inst.n_rows, "sigma": len(sigma),
            "cf": round(float(conflict_rate(inst, sigma)), 3), "k": k, **extra}
    out = []
    for method in methods:
        row = {**base, **run(inst, reqs, method, seed=args.seed, time_limit=args.time_limit,
                             exact_time=args.exact_time)}
        _print(row)
        out.append(row)
    return out


# ------------------------------------------------------------------ output


def _header() -> None:
    print(f"{'dataset':<22}{'rows':>8}{'|Σ|':>5}{'cf':>6}{'k':>4}  {'method':<10}{'status':<11}"
          f"{'s':>8}{'stars':>10}{'DM':>14}  Σ  k")


def _print(row: dict) -> None:
    def mark(v):
        return "-" if v is None else ("yes" if v else "NO")

    print(f"{row['dataset']:<22}{row['rows']:>8}{row['sigma']:>5}{row['cf']:>6.2f}{row['k']:>4}  "
          f"{row['method']:<10}{row['status']:<11}{row['seconds']:>8.2f}{row.get('stars', '-'):>10}"
          f"{row.get('DM', '-'):>14}  {mark(row.get('sigma_holds'))} {mark(row.get('k_holds'))}", flush=True)


# ------------------------------------------------------------------ the target
def target_child(args) -> None:
    """Runs in its own process: load Census, choose Σ, run MaxFanOut, print JSON."""
    started = time.perf_counter()
    inst = census(args.census)
    load_s = time.perf_counter() - started
    sigma = constraint_set(inst, 8, 0.2, 20, seed=args.seed)
    reqs = [fa.KAnonymity(20), *sigma]
    started = time.perf_counter()
    release = diva(inst, reqs, next_node="maxfanout", seed=args.seed)
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    report = fa.verify(inst, release, reqs)
    verify_s = time.perf_counter() - started
    print(json.dumps({
        "rows": inst.n_rows, "load_s": load_s, "sigma": [repr(s) for s in sigma],
        "cf": float(conflict_rate(inst, sigma)), "k": 20, "method": "maxfanout",
        "status": str(release.status), "seconds": seconds, "peak_rss_mb": peak_mb,
        "verify_s": verify_s, "passed": report.passed,
        "stars": report.metrics.get("suppressed_cells"), "DM": report.metrics.get("discernibility"),
        "rest_anonymizer": release.provenance.get("rest_anonymizer"),
        "diverse_records": release.provenance.get("diverse_records"),
    }))


def target(args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--target-child", "--census", args.census,
           "--seed", str(args.seed)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--census", default=data_dir(), help=DATA_HELP)
    parser.add_argument("--quick", action="store_true", help="a smaller grid (a few minutes)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per DIVA run")
    parser.add_argument("--exact-time", type=float, default=60.0, help="seconds per exact run")
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["target", "census", "baselines", "german", "synthetic"])
    parser.add_argument("--target-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "diva.json"))
    args = parser.parse_args()
    if args.target_child:
        target_child(args)
        return
    has_census = args.census is not None and os.path.exists(os.path.join(args.census, "census_income_train.csv.gz"))
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    print(f"fairanon {fa.__version__} DIVA benchmark — {machine['cpus']} cores, Python {machine['python']}")
    results: dict = {"machine": machine, "quick": args.quick, "rows": []}
    rows = results["rows"]

    if has_census and "target" not in args.skip:
        print("Target: Census-Income, |Σ| = 8, cf = 0.2, k = 20, MaxFanOut (own process) ...", flush=True)
        results["target"] = t = target(args)
        if "error" in t:
            print("  failed:", t["error"])
        else:
            print(f"  {t['rows']} rows (load {t['load_s']:.1f} s), cf {t['cf']:.3f}: {t['status']} in "
                  f"{t['seconds']:.1f} s, peak RSS {t['peak_rss_mb']:.0f} MB, {t['stars']} stars, DM {t['DM']}, "
                  f"verified {t['passed']} ({t['verify_s']:.1f} s); goal < 60 s and < 4096 MB")

    _header()
    if has_census and "census" not in args.skip:
        full = census(args.census)
        sizes = (60000, 120000) if args.quick else (60000, 120000, 180000, 240000, full.n_rows)
        default_n = 60000 if args.quick else 180000
        methods = (*STRATEGIES, "mondrian")
        for n in sizes:
            inst = sample(full, n, args.seed)
            rows += sweep_point("census |R|", inst, constraint_set(inst, 8, 0.2, 20, seed=args.seed), 20, methods, args)
        base = sample(full, default_n, args.seed)
        for m in ((4, 8, 12) if args.quick else (4, 8, 12, 16, 20)):
            rows += sweep_point("census |Σ|", base, constraint_set(base, m, 0.2, 20, seed=args.seed), 20,
                                (*methods, "exact"), args)
        for cf in ((0.0, 0.2, 0.6, 1.0) if args.quick else (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)):
            rows += sweep_point("census cf", base, constraint_set(base, 8, cf, 20, seed=args.seed), 20, methods, args,
                                cf_goal=cf)
        sigma = constraint_set(base, 8, 0.2, 50, seed=args.seed)
        for k in ((10, 20, 50) if args.quick else (10, 20, 30, 40, 50)):
            rows += sweep_point("census k", base, sigma, k, methods, args)
        del full

    if has_census and "baselines" not in args.skip:
        full = census(args.census)
        for n in ((2500, 5000) if args.quick else (2500, 5000, 10000)):
            inst = sample(full, n, args.seed)
            rows += sweep_point("census baselines", inst, constraint_set(inst, 8, 0.2, 20, seed=args.seed), 20,
                                (*STRATEGIES, "exact", "kmember", "oka", "mondrian"), args)
        del full

    if "german" not in args.skip:
        german = german_with_sex()
        published = {
            "lower bounds": (proportional(german, "job", 0.96, rounding="round")
                             + proportional(german, "sex", 0.96, rounding="round")),
            "[x, x] bounds": (proportional(german, "job", 0.96, rounding="round", upper="lower")
                              + proportional(german, "sex", 0.96, rounding="round", upper="majority")),
        }
        for name, sigma in published.items():
            for k in (10, 20):
                rows += sweep_point(f"german {name}", german, sigma, k,
                                    (*STRATEGIES, "exact", "kmember", "oka", "mondrian"), args)

    if "synthetic" not in args.skip:
        n = 50000 if args.quick else 100000
        for dist in ("zipf", "uniform", "gaussian"):
            inst = population(n, n_qi=7, distribution=dist, seed=args.seed)
            rows += sweep_point(f"synthetic {dist}", inst, constraint_set(inst, 8, 0.2, 20, seed=args.seed), 20,
                                (*STRATEGIES, "mondrian"), args)

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2, default=str)
    print(f"Wrote {args.out}")


if __name__ == "__main__":
    main()
