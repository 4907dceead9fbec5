"""Exact models benchmark: how large an instance CP-SAT proves optimal within a minute.

Run ``python benchmarks/exact.py`` (``--quick`` for the targets and short ladders,
``--limit S`` for another time limit per run). Prints a table and writes
``benchmarks/results/exact.json``.

Targets from the project's issue tracker:

- proven-optimal min-stars (k, Sigma)-anonymization of the whole German credit table
  (1,000 records) with quasi-identifiers personal status, job and savings (60 distinct
  vectors), k = 10 and proportional constraints (rho = 0.96) on job and personal status,
  within 60 s (personal status generalizable, as in DIVA's experiments; with it
  protected, i.e. never generalized, the requirements are infeasible, which is reported
  too);
- the full-domain optimum on Adult (8 quasi-identifiers), k in {2, 5, 10}, within 10 s.

Then, for each model (local suppression, local recoding with diversity constraints,
local recoding under k and l, full-domain), a ladder of growing German credit subsets
and synthetic tables: each step runs with the time limit; a ladder stops after two
steps without a proof, so the table shows the largest instance proven optimal and the
gap at the limit for the next sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from fractions import Fraction

from _table import show

import fairanon as fa
from fairanon.exceptions import FairanonError
from fairanon.instances.synthetic import population
from fairanon.methods.cpsat import cpsat
from fairanon.models.diversity import proportional
from fairanon.solver.fulldomain import fulldomain
from fairanon.solver.local_recoding import model_size

GERMAN_QI = [
    "personal_status",
    "job",
    "savings",
    "housing",
    "employment",
    "credit_history",
    "purpose",
]


def _german(n_qi: int, n_rows: int):
    inst = fa.load("german", qi=GERMAN_QI[:n_qi], roles={"personal_status": "qi"})
    if n_rows < inst.n_rows:
        inst = inst.subset(inst.row_ids[:n_rows], name=f"german[{n_rows}]")
    return inst


def _sigma(inst):
    return [
        fa.KAnonymity(10),
        *proportional(inst, "job", Fraction(24, 25)),
        *proportional(inst, "personal_status", Fraction(24, 25)),
    ]


def _run(label, func, inst, reqs, **options):
    started = time.perf_counter()
    try:
        rel = func(inst, reqs, seed=0, **options)
    except FairanonError as exc:
        return {
            "instance": label,
            "status": "REFUSED",
            "reason": str(exc)[:120],
            "seconds": time.perf_counter() - started,
        }
    seconds = time.perf_counter() - started
    row = {
        "instance": label,
        "records": inst.n_rows,
        "status": str(rel.status),
        "objective": _num(rel.objective),
        "bound": _num(rel.bound),
        "gap": rel.provenance.get("gap"),
        "seconds": seconds,
    }
    model = rel.provenance.get("model") or {}
    row["distinct_qi"] = model.get("distinct_qi")
    row["variables"] = model.get("variables")
    search = rel.provenance.get("search") or {}
    if search:
        row["lattice"] = search.get("lattice_size")
        row["nodes_evaluated"] = search.get("nodes_evaluated")
    if rel.status == fa.Status.INFEASIBLE:
        row["conflict"] = rel.provenance.get("conflict")
    return row


def _num(x):
    if x is None:
        return None
    return float(x) if isinstance(x, Fraction) else x


def _distinct(inst) -> int:
    return model_size(inst, [], recoding="suppression", max_types=0)["distinct_qi"]


def targets(limit: float) -> list[dict]:
    rows = []
    inst = _german(3, 1000)
    row = _run(
        "german 3 QIs, k=10 + Sigma(0.96)",
        cpsat,
        inst,
        _sigma(inst),
        recoding="suppression",
        objective="stars",
        time_limit=limit,
    )
    rows.append({"task": "target: (k, Sigma) min stars", "model": "cpsat/suppression", **row})
    protected = fa.load("german", qi=GERMAN_QI[:3])
    row = _run(
        "same, personal status protected",
        cpsat,
        protected,
        _sigma(protected),
        recoding="suppression",
        objective="stars",
        time_limit=limit,
    )
    rows.append({"task": "target: (k, Sigma) min stars", "model": "cpsat/suppression", **row})
    adult = fa.load("adult")
    for k in (2, 5, 10):
        for objective in ("lm", "discernibility"):
            row = _run(
                f"adult 8 QIs, k={k}",
                fulldomain,
                adult,
                [fa.KAnonymity(k)],
                objective=objective,
                time_limit=limit,
            )
            rows.append(
                {"task": f"target: full-domain optimum ({objective})", "model": "fulldomain", **row}
            )
    return rows


def _ladder(task, model, steps, limit, func, **options) -> list[dict]:
    """Run steps (label, instance, requirements) in order; stop after two unproven ones."""
    rows, misses = [], 0
    for label, inst, reqs in steps:
        row = _run(label, func, inst, reqs, time_limit=limit, **options)
        if row.get("distinct_qi") is None and row["status"] != "REFUSED":
            row["distinct_qi"] = _distinct(inst)
        rows.append({"task": task, "model": model, **row})
        print(f"  {model:28s} {label:34s} {row['status']:10s} {row['seconds']:6.1f} s", flush=True)
        if row["status"] != "OPTIMAL":
            misses += 1
            if misses == 2:
                break
    return rows


def _german_steps(requirements, quick, sizes):
    for n_qi, n_rows in sizes[:3] if quick else sizes:
        inst = _german(n_qi, n_rows)
        yield f"german {n_qi} QIs, {n_rows} rows", inst, requirements(inst)


def _synthetic_steps(requirements, quick):
    sizes = [(2, 200), (2, 1000), (3, 500), (3, 1000), (3, 2000), (4, 1000), (4, 2000), (5, 2000)]
    for n_qi, n_rows in sizes[:4] if quick else sizes:
        inst = population(n_rows, n_qi=n_qi, n_zip=20, seed=0)
        yield f"synthetic {n_qi}+1 QIs, {n_rows} rows", inst, requirements(inst)


def ladders(limit: float, quick: bool) -> list[dict]:
    rows = []

    def k_l(inst):
        return [fa.KAnonymity(5), fa.LDiversity(2)]

    # Sigma is infeasible on subsets (the rare job values cannot fill classes of 10), so
    # that ladder grows the quasi-identifiers of the whole table.
    whole = [(3, 1000), (4, 1000), (5, 1000), (6, 1000), (7, 1000)]
    growing = [
        (3, 1000),
        (4, 250),
        (4, 500),
        (4, 1000),
        (5, 250),
        (5, 500),
        (5, 1000),
        (6, 500),
        (7, 500),
    ]
    rows += _ladder(
        "ladder: German, k=10 + Sigma",
        "cpsat/suppression stars",
        _german_steps(_sigma, quick, whole),
        limit,
        cpsat,
        recoding="suppression",
        objective="stars",
    )
    rows += _ladder(
        "ladder: German, k=10 + Sigma",
        "cpsat/generalization stars",
        _german_steps(_sigma, quick, whole),
        limit,
        cpsat,
        recoding="generalization",
        objective="stars",
    )
    rows += _ladder(
        "ladder: German, k=5 + 2-diversity",
        "cpsat/suppression stars",
        _german_steps(k_l, quick, growing),
        limit,
        cpsat,
        recoding="suppression",
        objective="stars",
    )
    rows += _ladder(
        "ladder: German, k=5 + 2-diversity",
        "cpsat/generalization ncp",
        _german_steps(k_l, quick, growing),
        limit,
        cpsat,
        recoding="generalization",
        objective="ncp",
    )
    rows += _ladder(
        "ladder: synthetic, k=5 + 2-diversity",
        "cpsat/suppression stars",
        _synthetic_steps(k_l, quick),
        limit,
        cpsat,
        recoding="suppression",
        objective="stars",
    )
    rows += _ladder(
        "ladder: synthetic, k=5 + 2-diversity",
        "cpsat/generalization ncp",
        _synthetic_steps(k_l, quick),
        limit,
        cpsat,
        recoding="generalization",
        objective="ncp",
    )

    def fd_steps():
        german = fa.load("german")
        yield (
            "german 7+1 QIs, k=10, RD <= 0.2",
            german,
            [fa.KAnonymity(10), fa.AlphaProtection("RD", "0.2")],
        )
        adult = fa.load("adult")
        yield (
            "adult 8 QIs, k=10, RD <= 0.2",
            adult,
            [fa.KAnonymity(10), fa.AlphaProtection("RD", "0.2")],
        )
        for n_rows in [10_000] if quick else [10_000, 100_000, 1_000_000]:
            inst = population(n_rows, n_qi=7, seed=0)
            yield f"synthetic 7+1 QIs, {n_rows} rows, k=10", inst, [fa.KAnonymity(10)]

    rows += _ladder(
        "ladder: full-domain", "fulldomain lm", fd_steps(), limit, fulldomain, objective="lm"
    )
    return rows


def summary(rows: list[dict]) -> list[dict]:
    """Per ladder and model: the largest instance proven optimal and the next sizes' gaps."""
    out = []
    for key in dict.fromkeys(
        (r["task"], r["model"]) for r in rows if r["task"].startswith("ladder")
    ):
        runs = [r for r in rows if (r["task"], r["model"]) == key]
        proven = [r for r in runs if r["status"] == "OPTIMAL"]
        best = max(
            proven, key=lambda r: (r.get("distinct_qi") or 0, r.get("records") or 0), default=None
        )
        out.append(
            {
                "task": key[0],
                "model": key[1],
                "largest proven": None
                if best is None
                else f"{best['instance']} ({best.get('distinct_qi')} distinct QI vectors, "
                f"{best['seconds']:.1f} s)",
                "next": "; ".join(
                    f"{r['instance']}: {r['status']}"
                    + (f", gap {r['gap']:.3g}" if r.get("gap") else "")
                    for r in runs
                    if r["status"] != "OPTIMAL"
                )
                or "-",
            }
        )
    return out


def _show(
    rows: list[dict],
    columns=(
        "task",
        "model",
        "instance",
        "records",
        "distinct_qi",
        "variables",
        "status",
        "objective",
        "bound",
        "gap",
        "seconds",
    ),
) -> None:
    show(rows, columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per run (default 60)")
    parser.add_argument("--quick", action="store_true", help="targets and short ladders only")
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "exact.json")
    )
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, time limit per run: {args.limit:g} s", flush=True)
    rows = targets(args.limit)
    rows += ladders(args.limit, args.quick)
    _show(rows)
    print()
    best = summary(rows)
    _show(best, ("task", "model", "largest proven", "next"))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "machine": {
                    "cores": os.cpu_count(),
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                },
                "time_limit_s": args.limit,
                "rows": rows,
                "summary": best,
            },
            fh,
            indent=2,
            default=str,
        )
    print(f"Wrote {args.out}")


if __name__ == "__main__":
    main()
