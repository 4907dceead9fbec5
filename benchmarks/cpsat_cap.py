"""Where CP-SAT's whole model stops paying against large-neighbourhood search: the
measurements behind :data:`fairanon.methods.cpsat.SEARCH_PAIRS_PER_SECOND`.

Run ``python benchmarks/cpsat_cap.py`` (``--limit S``, default 60; ``--only N ...`` for
some of the settings by number). Each setting is German credit on a subset of its
attributes as quasi-identifiers, k-anonymity, NCP (loss: GCP), or the first rows of bundled
UCI Adult on a subset of its quasi-identifiers, k-anonymity, LM (loss: LM_avg): ``cpsat``
with the cap off (``max_pairs_per_second=None``: the whole model is built and searched
from the best heuristic start) against ``lns`` alone, each with the time limit, and the
model's size (distinct records, assignment variables, and those per second of the
limit). The cap should lie where lns starts to win. Every release is verified. Writes
``benchmarks/results/cpsat_cap.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _table import show, write_results  # noqa: E402

import fairanon as fa  # noqa: E402
from fairanon.models.objectives import objective_value  # noqa: E402
from fairanon.solver.local_recoding import model_size  # noqa: E402

#: (dataset, quasi-identifiers, k, first rows or None for all): per dataset, at most 300
#: distinct records first (lns re-solves those whole before its local search), then more.
SETTINGS = (
    ("german", ("personal_status", "job", "savings"), 5, None),
    ("german", ("personal_status", "job", "savings", "housing"), 5, None),
    ("german", ("personal_status", "job", "savings", "purpose"), 5, None),
    ("german", ("personal_status", "job", "savings", "purpose"), 10, None),
    ("german", ("personal_status", "savings", "employment", "credit_history"), 5, None),
    ("german", ("checking_status", "purpose", "other_parties", "property"), 5, None),
    ("german", ("checking_status", "credit_history", "purpose", "housing"), 5, None),
    ("german", ("checking_status", "purpose", "savings", "property"), 5, None),
    ("german", ("checking_status", "credit_history", "purpose", "savings"), 5, None),
    ("german", ("job", "housing", "credit_history", "purpose"), 5, None),
    ("adult", ("workclass", "education", "sex"), 5, 1000),
    ("adult", ("education", "marital-status", "sex"), 5, 2000),
    ("adult", ("workclass", "marital-status", "occupation"), 5, 2000),
    ("adult", ("age", "marital-status", "sex"), 5, 1000),
    ("adult", ("age", "marital-status", "sex"), 5, 2000),
    ("adult", ("education", "occupation", "sex"), 5, 2000),
)
#: The objective of each dataset's settings.
OBJECTIVE = {"german": "ncp", "adult": "lm"}


def _instance(dataset, qi, rows):
    roles = {"personal_status": "qi"} if "personal_status" in qi else None
    inst = fa.load(dataset, qi=list(qi), roles=roles)
    return inst if rows is None else inst.subset(inst.row_ids[:rows], name=f"{dataset}[:{rows}]")


def setting(dataset, qi, k, first, limit) -> list[dict]:
    inst = _instance(dataset, qi, first)
    objective = OBJECTIVE[dataset]
    reqs = [fa.KAnonymity(k)]
    size = model_size(inst, reqs, objective=objective, max_vars=10**7)
    cells = inst.n_rows * len(qi)
    rows = []
    for method, options in (("cpsat", {"max_pairs_per_second": None}), ("lns", {})):
        wall = time.perf_counter()
        rel = fa.anonymize(inst, reqs, method=method, seed=0, time_limit=limit,
                           objective=objective, **options)
        wall = time.perf_counter() - wall
        rows.append({
            "data": inst.name, "qi": ",".join(qi), "k": k, "distinct": size["types"],
            "variables": size["pairs"], "per_s": round(size["pairs"] / limit), "method": method,
            "status": str(rel.status),
            "loss": float(objective_value(inst, rel, objective)) / cells,
            "gap": rel.provenance.get("gap"), "wall_s": round(wall, 1),
            "fallback": rel.provenance.get("fallback"),
            "verified": fa.verify(inst, rel, reqs, metrics=False).passed,
        })
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--only", nargs="+", type=int, choices=range(1, len(SETTINGS) + 1))
    args = parser.parse_args(argv)
    rows = []
    for i, (dataset, qi, k, first) in enumerate(SETTINGS, start=1):
        if args.only and i not in args.only:
            continue
        found = setting(dataset, qi, k, first, args.limit)
        show(found, ["data", "qi", "k", "distinct", "variables", "per_s", "method", "status",
                     "loss", "gap",
                     "wall_s", "verified"])
        print(flush=True)
        rows += found
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "cpsat_cap.json")
    write_results(path, {"limit": args.limit, "rows": rows})


if __name__ == "__main__":
    main()
