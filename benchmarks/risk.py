"""Risk benchmark: every risk figure on Adult raw and after k = 5, and on 10 M synthetic rows.

Run ``python benchmarks/risk.py`` (``--repeat R`` runs per figure, best kept; ``--rows N``
for the synthetic table, default 10,000,000, 0 skips it; ``--suda-max-size M``, default 3).
Prints one row per figure and writes ``benchmarks/results/risk.json``.

- Adult: 30,162 rows, 8 quasi-identifiers (age numeric, race protected), income the
  decision. "raw" is the instance itself; "k=5" Mondrian's 5-anonymous release. The
  population for journalist risk and for the population models is Adult's 48,842 records
  of train + test ("adult_full", ``?`` kept; π = 30,162 / 48,842), whose true population
  uniques on the 8 quasi-identifiers are printed beside the estimates. Individual risk
  reads the sampling weights ``fnlwgt``.
- Each figure is timed on its own (CPU and wall seconds, best of R), from the regrouped
  classes, which are timed once as "classes"; "fa.risk" is the whole call (SUDA included).
- Synthetic: ``population(N, n_qi=7)`` (8 quasi-identifiers), raw and after Mondrian
  k = 10; the sample-based and uniqueness figures (π = 0.1) against ``fa.verify`` of the
  same release (requirement k, metrics on, as ``fairanon anonymize`` runs it).
"""

from __future__ import annotations

import argparse
import os
from fractions import Fraction

import numpy as np
from _table import show, timed, write_results

import fairanon as fa
from fairanon.instances.synthetic import population
from fairanon.models.risk import (
    attribute_disclosure,
    dankar,
    individual_risk,
    journalist_risk,
    pitman,
    population_model,
    risk,
    risk_classes,
    sample_risk,
    snb,
    suda,
    uniqueness,
    zayatz,
)


def _row(table: str, figure: str, value, times) -> dict:
    return {"table": table, "figure": figure, "value": value, "cpu_s": round(times[0], 4),
            "wall_s": round(times[1], 4)}


def _estimate_text(est) -> str:
    return f"{est.uniques:.0f}" if est.fitted else f"no fit ({est.detail})"


def bench_adult(repeat: int, suda_max: int) -> tuple[list[dict], dict]:
    inst = fa.load("adult")
    rel = fa.anonymize(inst, [fa.KAnonymity(5)], method="mondrian", seed=0)
    pop = fa.load("adult_full")
    truth = int((risk_classes(pop).sizes == 1).sum())
    rows = []
    for name, release in (("adult raw", None), ("adult k=5", rel)):
        classes, t = timed(repeat, lambda: risk_classes(inst, release))
        rows.append(_row(name, "classes", f"{classes.n_classes} classes", t))
        model = population_model(classes.n_records, population_size=pop.n_rows)
        s, t = timed(repeat, lambda: sample_risk(classes))
        rows.append(_row(name, "prosecutor / marketer / above 1/5 / histogram",
                         f"{s.highest} ({s.records_at_highest} rec) / {float(s.average):.4f} / {s.records_above}", t))
        j, t = timed(repeat, lambda: journalist_risk(classes, pop.table))
        rows.append(_row(name, "journalist vs adult_full", f"{j.highest} / marketer {float(j.marketer):.4f}", t))
        u, t = timed(repeat, lambda: uniqueness(classes))
        rows.append(_row(name, "sample uniques", u.sample_uniques, t))
        sizes, counts = classes.frequencies
        for fn in (pitman, zayatz, snb, dankar):
            est, t = timed(repeat, lambda fn=fn: fn(sizes, counts, model))
            extra = f" [{est.parameters.get('chosen') or est.detail}]" if fn is dankar and est.fitted else ""
            rows.append(_row(name, f"population uniques {fn.__name__} (true {truth})" if release is None else
                             f"population uniques {fn.__name__}", _estimate_text(est) + extra, t))
        ind, t = timed(repeat, lambda: individual_risk(classes, weights="fnlwgt"))
        rows.append(_row(name, "individual risk (fnlwgt): ER / global / max",
                         f"{ind.expected_reidentifications:.4g} / {ind.global_risk:.3g} / {ind.highest:.3g}", t))
        found, t = timed(repeat, lambda: suda(classes, max_size=suda_max, sampling_fraction=model.sampling_fraction))
        rows.append(_row(name, f"SUDA MSUs, max size {suda_max}, DIS-SUDA highest",
                         f"{found.n_msus} on {found.records_with_msu} rec, {found.dis.to_dict()['highest']:.3g}", t))
        d, t = timed(repeat, lambda: attribute_disclosure(classes, "income"))
        rows.append(_row(name, "delta-disclosure / beta-likeness (income)", f"{d.delta:.3g} / {float(d.beta):.4g}", t))
        whole, t = timed(repeat, lambda: risk(inst, release, population_size=pop.n_rows, population=pop.table,
                                               weights="fnlwgt", suda_max_size=suda_max))
        rows.append(_row(name, "fa.risk (everything)", "", t))
    return rows, {"adult_full_population_uniques": truth}


def bench_synthetic(n: int, repeat: int) -> list[dict]:
    inst = population(n, n_qi=7, seed=0)
    rel = fa.anonymize(inst, [fa.KAnonymity(10)], method="mondrian", seed=0)
    rows = []
    for name, release, k in ((f"synthetic {n:,} raw", None, 1), (f"synthetic {n:,} k=10", rel, 10)):
        classes, t_classes = timed(repeat, lambda: risk_classes(inst, release))
        rows.append(_row(name, "classes", f"{classes.n_classes} classes", t_classes))
        s, t_sample = timed(repeat, lambda: sample_risk(classes))
        rows.append(_row(name, "prosecutor / marketer / above 1/5 / histogram",
                         f"{s.highest} / {float(s.average):.4f} / {s.records_above}", t_sample))
        model = population_model(n, sampling_fraction=Fraction(1, 10))
        u, t_unique = timed(repeat, lambda: uniqueness(classes, model))
        est = u.estimates["dankar"]
        rows.append(_row(name, "sample uniques + Pitman, Zayatz, SNB, Dankar (pi = 0.1)",
                         f"{u.sample_uniques} / dankar {_estimate_text(est)}", t_unique))
        total = tuple(a + b + c for a, b, c in zip(t_classes, t_sample, t_unique))
        rows.append(_row(name, "sample-based + uniqueness, total", "", total))
        verified = release if release is not None else fa.Release(table=inst.table, groups=np.zeros(n))
        report, t = timed(1, lambda: fa.verify(inst, verified, [fa.KAnonymity(k)]))
        rows.append(_row(name, "fa.verify (for comparison)", "passed" if report.passed else "FAILED", t))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--suda-max-size", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "risk.json"))
    args = parser.parse_args()
    rows, extra = bench_adult(args.repeat, args.suda_max_size)
    if args.rows:
        rows += bench_synthetic(args.rows, 1)
    show(rows, ["table", "figure", "value", "cpu_s", "wall_s"])
    write_results(args.out, {"suda_max_size": args.suda_max_size, "repeat": args.repeat, **extra, "rows": rows})


if __name__ == "__main__":
    main()
