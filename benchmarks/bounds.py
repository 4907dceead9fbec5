"""The per-record lower bound with and without the classes' shared cost.

Run ``python benchmarks/bounds.py`` (``--no-adult`` to skip UCI Adult, ``--limit S`` for
the time of each bound, default none). Each row is
:func:`fairanon.models.bounds.lower_bound` on one setting, the sum of m(r) alone
(``shared=False``) and with the shared cost, their values per cell, and the CPU seconds
of each: German credit with the 7 quasi-identifiers of ``benchmarks/exact.py``, NCP,
k = 5 and 10 and k = 5 with 2-diversity (the converged LP bound of the type model, which
counts k alone, beside them: 1,237 and 1,885, ``fairanon.solver.bounds``); UCI Adult as
bundled (8 QIs, numeric age), k = 5, LM, pruned by a lattice-local release, beside the
release of ``benchmarks/lns_moves.py`` (LM_avg 0.0339 after 60 s), whose certified gap
a bound gives. Writes ``benchmarks/results/bounds.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from exact import GERMAN_QI  # noqa: E402

import fairanon as fa  # noqa: E402
from fairanon.models.bounds import lower_bound  # noqa: E402

#: Converged LP bounds of the type model on German credit (NCP, k alone).
LP = {5: 1237.18, 10: 1885.2}
#: lns's release on bundled Adult, k = 5, LM, 60 s (benchmarks/results/lns_moves.json).
ADULT_LNS = 0.0339


def row(name, inst, reqs, objective, release, limit, beside) -> dict:
    cells = inst.n_rows * len(inst.schema.qi)
    out = {"setting": name, "records": inst.n_rows, **beside}
    for shared in (False, True):
        cpu = time.process_time()
        found = lower_bound(inst, reqs, objective, release=release, time_limit=limit, shared=shared)
        key = "shared" if shared else "m"
        out[key] = float(found.value)
        out[f"{key}_per_cell"] = float(found.value) / cells
        out[f"{key}_cpu_s"] = time.process_time() - cpu
        if shared:
            out["details"] = found.details.get("shared")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=None)
    parser.add_argument("--no-adult", action="store_true")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "bounds.json"))
    args = parser.parse_args()
    rows = []
    german = fa.load("german", qi=GERMAN_QI, roles={"personal_status": "qi"})
    for name, reqs in (
        ("German 7 QIs, k = 5, NCP", [fa.KAnonymity(5)]),
        ("German 7 QIs, k = 10, NCP", [fa.KAnonymity(10)]),
        ("German 7 QIs, k = 5, l = 2, NCP", [fa.KAnonymity(5), fa.LDiversity(2)]),
    ):
        k = reqs[0].k
        beside = {"lp": LP[k]} if len(reqs) == 1 else {}
        rows.append(row(name, german, reqs, "ncp", None, args.limit, beside))
        print(rows[-1], flush=True)
    if not args.no_adult:
        adult = fa.load("adult", roles={"race": "qi"})
        reqs = [fa.KAnonymity(5)]
        start = fa.anonymize(adult, reqs, method="lattice-local", seed=0, objective="lm")
        r = row("bundled Adult, k = 5, LM", adult, reqs, "lm", start, args.limit,
                {"lns_60s_per_cell": ADULT_LNS})
        for key in ("m", "shared"):
            r[f"{key}_gap_to_lns"] = (ADULT_LNS - r[f"{key}_per_cell"]) / ADULT_LNS
        rows.append(r)
        print(rows[-1], flush=True)
    print()
    print(f"{'setting':34} {'sum m(r)':>10} {'CPU s':>7} {'+ shared':>10} {'CPU s':>7} {'LP':>8}")
    for r in rows:
        print(f"{r['setting']:34} {r['m']:10.4g} {r['m_cpu_s']:7.1f} {r['shared']:10.4g} "
              f"{r['shared_cpu_s']:7.1f} {r.get('lp', ''):>8}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    result = {"cores": os.cpu_count(), "limit": args.limit, "rows": rows}
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
