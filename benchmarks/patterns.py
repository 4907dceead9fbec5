"""Benchmark of fairanon.patterns on the paper's data (Hajian et al., DMKD 2015, §7).

    python benchmarks/patterns.py            # runtime: Adult at 5 % support (the paper: < 2 minutes)
    python benchmarks/patterns.py --tables   # also Tables 6-9 and the §7.2.3 distortion figures
    python benchmarks/patterns.py --tables 9 7   # only some of them

Prints tables and writes benchmarks/results/patterns.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from fractions import Fraction

from fairanon import patterns as fp

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def _clock(func, *args, **kwargs):
    started = time.perf_counter()
    out = func(*args, **kwargs)
    return out, time.perf_counter() - started


def runtime(support=Fraction(1, 20), alphas=(Fraction(6, 5), Fraction(3, 2))) -> list:
    """Detection + sanitization on Adult at 5 % support, per measure and α."""
    data, t_load = _clock(fp.paper_adult)
    ps, t_mine = _clock(fp.PatternSet.from_db, data.train, support, data.roles)
    rows = []
    for measure in ("slift", "elift"):
        for alpha in alphas:
            det, t_detect = _clock(fp.detect_discriminatory, ps, measure, alpha)
            result, t_total = _clock(fp.sanitize, ps, measure, alpha)
            rows.append({
                "measure": measure, "alpha": float(alpha), "itemsets": len(ps), "discriminatory": len(det),
                "detect_s": round(t_detect, 3), "detect_sanitize_s": round(t_total, 3), "passes": result.rounds,
                "converged": result.converged, "virtual_records": result.patterns.ledger_total,
                "support_altered": round(float(fp.support_altered(ps, result.patterns)), 4),
                "distortion": round(float(fp.distortion(ps, result.patterns)), 4),
            })
    priv, t_priv = _clock(fp.sanitize, ps, "slift", alphas[0], k=5)
    rows.append({"measure": "slift", "alpha": float(alphas[0]), "k": 5, "itemsets": len(ps),
                 "detect_sanitize_s": round(t_priv, 3), "note": "Alg. 5 with k = 5 (privacy step included)",
                 "passes": priv.rounds, "converged": priv.converged, "virtual_records": priv.patterns.ledger_total})
    for r in rows:
        r.update(load_s=round(t_load, 3), mine_s=round(t_mine, 3))
    return rows


def _accuracy(data, ps, k, alpha):
    clf = lambda p: round(fp.CMARClassifier(p, data.roles.class_items, data.train.n_records).accuracy(data.test), 3)
    priv = fp.k_anonymize(ps, k).patterns
    both = fp.sanitize(ps, "slift", alpha, k=k).patterns
    star = fp.sanitize(ps, "slift", alpha).patterns
    return {"k": k, "alpha": float(alpha), "FP": clf(ps), "FP'": clf(priv), "FP''": clf(both), "FP*": clf(star)}


def table6() -> list:
    adult = fp.paper_adult()
    ps = fp.PatternSet.from_db(adult.train, Fraction(1, 10), adult.roles)
    return [_accuracy(adult, ps, k, a) for k in (5, 50) for a in (Fraction(6, 5), Fraction(3, 2))]


def table7() -> list:
    german = fp.paper_german(split="stratified", seed=0)
    ps = fp.PatternSet.from_db(german.train, Fraction(1, 10), german.roles)
    return [_accuracy(german, ps, k, a) for k in (3, 10) for a in (Fraction(6, 5), Fraction(9, 5))]


def table8() -> list:
    rows = []
    for name, data, ks, alphas in (("adult", fp.paper_adult(), (5, 10, 25, 50, 100), (1.2, 1.3, 1.4, 1.5, 1.6)),
                                   ("german", fp.paper_german(), (3, 5, 10, 15), (1.2, 1.4, 1.6, 1.8, 2.0))):
        for sigma in (Fraction(15, 100), Fraction(20, 100)):
            ps = fp.PatternSet.from_db(data.train, sigma, data.roles)
            for k in ks:
                priv = fp.k_anonymize(ps, k)
                for a in alphas:
                    imp = fp.discrimination_impact(ps, priv.patterns, "slift", a)
                    rows.append({"data": name, "sigma": float(sigma), "k": k, "alpha": a, "channels": priv.initial_violations,
                                 "disc_FP": imp["discriminatory_before"], "disc_FP'": imp["discriminatory_after"],
                                 "DPD": None if imp["dpd"] is None else round(100 * float(imp["dpd"]), 2),
                                 "NDD": None if imp["ndd"] is None else round(100 * float(imp["ndd"]), 2)})
    return rows


def table9() -> list:
    rows = []
    for name, data, ks in (("adult", fp.paper_adult(), (5, 10, 25, 50, 100)), ("german", fp.paper_german(), (3, 5, 10, 15))):
        ps = fp.PatternSet.from_db(data.train, Fraction(1, 10), data.roles)
        sets = {"FP": ps}
        for k in ks:
            sets[f"FP' k={k}"] = fp.k_anonymize(ps, k).patterns
        for label, s in sets.items():
            row = {"data": name, "set": label}
            for d in ("0.85", "0.9", "0.95", "1"):
                det = fp.detect_unexplainable(s, "slift", Fraction(6, 5), d)
                n = len(det) + len(det.explained)
                row["n"] = n
                row[d] = round(100 * len(det.explained) / n, 2) if n else None
            rows.append(row)
    return rows


def section_7_2_3() -> list:
    adult = fp.paper_adult()
    ps = fp.PatternSet.from_db(adult.train, Fraction(1, 10), adult.roles)
    k5 = fp.k_anonymize(ps, 5).patterns
    both = fp.sanitize(ps, "slift", Fraction(6, 5), k=5).patterns
    return [{"set": "FP' (k = 5)", "support_altered_pct": round(100 * float(fp.support_altered(ps, k5)), 2),
             "distortion": round(float(fp.distortion(ps, k5)), 4)},
            {"set": "FP'' (k = 5, α = 1.2)", "support_altered_pct": round(100 * float(fp.support_altered(ps, both)), 2),
             "distortion": round(float(fp.distortion(ps, both)), 4)}]


TABLES = {
    "6": ("Table 6: Adult accuracy, σ = 10 %, slift", table6),
    "7": ("Table 7: German accuracy, σ = 10 %, slift (stratified 2/3-1/3 split, seed 0)", table7),
    "8": ("Table 8: DPD / NDD (%) after the privacy step, slift", table8),
    "9": ("Table 9: % of α-discriminatory patterns that are d-explainable, α = 1.2, σ = 10 %", table9),
    "7.2.3": ("§7.2.3: Adult, σ = 10 %: support altered and distortion", section_7_2_3),
}


def _print(rows, title):
    print(f"\n{title}")
    if not rows:
        return
    keys = list(rows[0])
    widths = {k: max(len(str(k)), *(len(str(r.get(k, ""))) for r in rows)) for k in keys}
    print("  ".join(str(k).ljust(widths[k]) for k in keys))
    for r in rows:
        print("  ".join(str(r.get(k, "")).ljust(widths[k]) for k in keys))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="*", help="also reproduce the paper's tables (6 7 8 9 7.2.3; none listed: all)")
    args = parser.parse_args(argv)
    machine = {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    print(f"fairanon.patterns benchmark on {machine['cores']} cores ({machine['platform']})")
    rows = runtime()
    _print(rows, "Adult, 5 % support: detection + sanitization (seconds)")
    results = {"machine": machine, "runtime_adult_5pct": rows}
    if args.tables is not None:
        for key in args.tables or list(TABLES):
            title, func = TABLES[key]
            table, seconds = _clock(func)
            results[f"table_{key}"] = table
            _print(table, f"{title}  [{seconds:.0f} s]")
            sys.stdout.flush()
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, "patterns.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2, default=str)
    print(f"\nWrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
