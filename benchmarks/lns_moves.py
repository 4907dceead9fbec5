"""lns with and without the local search over record moves first.

Run ``python benchmarks/lns_moves.py`` (``--limit S``, ``--seeds 0 1 2``, ``--shares 0
0.5 0.75 0.9``, 0.9 being the shipped share, ``--adult`` to add UCI Adult k = 5 LM,
``--only-adult``). Each run is
``fa.anonymize(method="lns", time_limit=S)`` (the bound beside the search, as by
default) with :data:`fairanon.methods.lns.MOVES_SHARE` set to each share in turn, the
variants interleaved run after run so that they meet the same load on a shared machine.
German credit: the 7 quasi-identifiers of benchmarks/exact.py, k = 5 and 10, NCP,
reported as GCP with the gap to the converged LP bound of the type model (0.1767 and
0.2693, README); Adult: LM_avg. CPU seconds are the parent's (start, local search,
re-solves) and the children's (the bound beside the search, the second search
process). Writes ``benchmarks/results/lns_moves.json``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _table import write_results  # noqa: E402
from exact import GERMAN_QI  # noqa: E402

import fairanon as fa  # noqa: E402
import fairanon.methods.lns as lns_module  # noqa: E402
from fairanon.models.objectives import objective_value  # noqa: E402

#: Converged LP bounds of the type model on German credit (GCP; README).
LP_GCP = {5: 0.1767, 10: 0.2693}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(inst, reqs, objective, limit, seed, share) -> dict:
    lns_module.MOVES_SHARE = share
    cpu, child, clock = time.process_time(), _children_cpu(), time.perf_counter()
    rel = fa.anonymize(inst, reqs, method="lns", seed=seed, time_limit=limit, objective=objective)
    row = {
        "share": share,
        "seed": seed,
        "seconds": time.perf_counter() - clock,
        "cpu_s": time.process_time() - cpu,
        "children_cpu_s": _children_cpu() - child,
        "verified": fa.verify(inst, rel, reqs, metrics=False).passed,
        "value": float(objective_value(inst, rel, objective)),
        "start": rel.provenance["search"]["start"],
        "start_value": float(rel.provenance["search"]["start_objective"]),
        "rounds": rel.provenance["search"]["rounds"],
        "bound": None if rel.bound is None else float(rel.bound),
        "gap": rel.provenance.get("gap"),
        "load": os.getloadavg()[0],
    }
    moves = rel.provenance["search"].get("moves")
    if moves:
        row["moves"] = {k: (float(v) if k == "objective" else v) for k, v in moves.items()}
    row["loss"] = row["value"] / (inst.n_rows * len(inst.schema.qi))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--shares", type=float, nargs="+", default=[0.0, 0.5, 0.75, 0.9])
    parser.add_argument("--ks", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--adult", action="store_true")
    parser.add_argument("--only-adult", action="store_true")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "lns_moves.json"))
    args = parser.parse_args()
    rows = []
    cases = []
    if not args.only_adult:
        german = fa.load("german", qi=GERMAN_QI, roles={"personal_status": "qi"})
        cases += [(f"german k={k}", german, [fa.KAnonymity(k)], "ncp", k) for k in args.ks]
    if args.adult or args.only_adult:
        cases.append(("adult k=5", fa.load("adult", roles={"race": "qi"}), [fa.KAnonymity(5)], "lm", None))
    for seed in args.seeds:
        for task, inst, reqs, objective, k in cases:
            for share in args.shares:
                row = {"task": task, **run(inst, reqs, objective, args.limit, seed, share)}
                if k in LP_GCP and "german" in task:
                    row["gap_to_lp"] = 1 - LP_GCP[k] / row["loss"]
                rows.append(row)
                print(
                    f"{task:12s} seed {seed} share {share:.2f}: loss {row['loss']:.4f} "
                    f"(start {row['start']} {row['start_value'] / (inst.n_rows * len(inst.schema.qi)):.4f}) "
                    f"gap_lp {row.get('gap_to_lp', float('nan')):.3f} gap {row['gap'] or float('nan'):.3f} "
                    f"bound {(row['bound'] or float('nan')) / (inst.n_rows * len(inst.schema.qi)):.4f} rounds {row['rounds']} "
                    f"{row['seconds']:.1f} s, cpu {row['cpu_s']:.1f}+{row['children_cpu_s']:.1f} s "
                    f"load {row['load']:.1f} verified {row['verified']} moves {row.get('moves', {}).get('kicks')}",
                    flush=True,
                )
                write_results(args.out, {"limit": args.limit, "rows": rows})


if __name__ == "__main__":
    main()
