"""Which side of lns's certified gap is loose on German credit: the release or the bound.

Run ``python benchmarks/lns_gap.py`` (``--long S`` for the seconds of the long lns runs,
default 300; ``--no-long`` to skip them; ``--rows N`` for the subset, default 40;
``--limit S`` for cpsat's run on the subset, lns half of it, default 120; ``--mip-limit S``
for SCIP's, default 600: it stops at its proof; ``--lp-limit S`` and ``--master-limit S``
for the restricted master below, defaults 150 and 60, 0 skips it). Prints a table and writes
``benchmarks/results/lns_gap.json``.

The target: German credit, the 7 quasi-identifiers of
``benchmarks/exact.py`` (personal status generalizable), NCP, k = 5 and 10, lns for
60 s should certify a gap of at most 10 % (``benchmarks/lns.py`` measures it).

Two measurements tell which side is loose:

- the whole table: lns for 60 s and for ``--long`` seconds, its best release over
  time and its certified bound; when the longer run finds no much better release,
  either the search is stuck or the bound is loose;
- a subset small enough for a MIP solver: the first ``--rows`` records, k = 5. The LP
  bound (:func:`fairanon.solver.bounds.lp_bound`) is compared with lns and cpsat and
  with SCIP (through OR-Tools) solving the integer program the LP relaxes -- the type
  model over the join closure, ``x[t,v]`` integer, ``z[v]`` binary, ``x[t,v] <= w_t
  z[v]``, ``sum_t x[t,v] >= k z[v]``, ``sum_v x[t,v] = w_t`` -- whose incumbent is
  turned into a release and verified, and whose bound is SCIP's. When SCIP's release
  lies near the LP bound and lns's far above both, the search is the weak side.

A third, the restricted master (:mod:`fairanon.solver.master`): after each 60-s lns
run (and after lns on the subset), the LP bound for ``--lp-limit`` seconds from lns's
release keeps its columns, and CP-SAT solves the integer program over their vectors
and the release's classes for ``--master-limit`` seconds; the row shows the better of
the two releases and its gap to that LP bound.

CPU seconds count the forked processes too (lns's bound runs in one). Seed 0, a shared
2-core machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _table import show, write_results  # noqa: E402
from exact import GERMAN_QI  # noqa: E402

import fairanon as fa  # noqa: E402
from fairanon.methods.cpsat import cpsat  # noqa: E402
from fairanon.models.objectives import objective_value, relative_gap  # noqa: E402
from fairanon.release import Release, Status, generalize_partition  # noqa: E402
from fairanon.solver.bounds import ColumnPool, _closure_model, lp_bound  # noqa: E402
from fairanon.solver.master import restricted_master  # noqa: E402


def _cpu() -> float:
    """CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _german(rows: int | None = None):
    inst = fa.load("german", qi=GERMAN_QI, roles={"personal_status": "qi"})
    if rows is not None and rows < inst.n_rows:
        inst = inst.subset(inst.row_ids[:rows], name=f"german[{rows}]")
    return inst


def _per_cell(inst, value) -> float | None:
    return None if value is None else float(value) / (inst.n_rows * len(inst.schema.qi))


def _shown(value: float | None, places: int) -> str:
    """`value` to `places` decimals; "none" when there is none (no LP bound in time)."""
    return "none" if value is None else f"{value:.{places}f}"


def _lns(inst, k: int, limit: float) -> tuple[Release, dict]:
    cpu = _cpu()
    rel = fa.anonymize(inst, [fa.KAnonymity(k)], method="lns", seed=0, time_limit=limit,
                       objective="ncp")
    search = rel.provenance["search"]
    return rel, {
        "method": f"lns {limit:g} s",
        "verified": fa.verify(inst, rel, [fa.KAnonymity(k)], metrics=False).passed,
        "loss": _per_cell(inst, rel.objective),
        "bound": _per_cell(inst, rel.bound),
        "bound_method": (rel.provenance.get("lower_bound") or {}).get("method"),
        "gap": None if rel.provenance.get("gap") is None else float(rel.provenance["gap"]),
        "cpu_s": _cpu() - cpu,
        "rounds": search["rounds"],
        # The best release over time: (seconds, loss per cell) at each improvement.
        "history": [(round(t, 1), _per_cell(inst, Fraction(v))) for t, v in search["history"]],
    }


def _master(inst, k: int, start: Release, lp_limit: float, limit: float) -> dict:
    """The restricted master (:func:`fairanon.solver.master.restricted_master`) over the
    columns the LP bound generates in `lp_limit` seconds from `start`, in `limit`
    seconds; its gap against that LP bound."""
    reqs = [fa.KAnonymity(k)]
    cpu = _cpu()
    pool = ColumnPool()
    lp = lp_bound(inst, reqs, "ncp", release=start, time_limit=lp_limit, pool=pool)
    lp_cpu = _cpu() - cpu
    found, info = restricted_master(inst, reqs, "ncp", pool, start, time_limit=limit)
    better = found is not None and found.objective < start.objective
    best = found if better else start
    bound = None if lp is None else lp.value
    return {
        "method": f"+ LP {lp_limit:g} s, master {limit:g} s",
        "verified": fa.verify(inst, best, reqs, metrics=False).passed,
        "loss": _per_cell(inst, best.objective),
        "bound": _per_cell(inst, bound),
        "gap": None if bound is None else float(relative_gap(best.objective, bound)),
        "cpu_s": _cpu() - cpu,
        "lp_cpu_s": lp_cpu,
        "master": {**info, "improved": better},
    }


def whole(long: float | None, lp_limit: float, master_limit: float) -> list[dict]:
    inst = _german()
    rows = []
    for k in (10, 5):
        for limit in (60.0, long):
            if limit is None:
                continue
            rel, row = _lns(inst, k, limit)
            found = [{"instance": f"german 1000, k={k}", **row}]
            if limit == 60.0 and master_limit > 0:
                found.append({"instance": f"german 1000, k={k}",
                              **_master(inst, k, rel, lp_limit, master_limit)})
            for row in found:
                print(f"  {row['instance']} {row['method']}: {row['loss']:.4f}, bound "
                      f"{_shown(row['bound'], 4)}, gap {_shown(row['gap'], 3)}, "
                      f"{row['cpu_s']:.0f} s CPU", flush=True)
            rows += found
    return rows


def _mip(inst, k: int, limit: float) -> tuple[Release | None, float, bool, float]:
    """SCIP on the type model over the join closure (module docstring): its incumbent
    as a release (None when it has none), its bound per cell, whether it proved the
    incumbent optimal, and its CPU seconds."""
    from ortools.linear_solver import pywraplp

    cpu = _cpu()
    model = _closure_model(inst, k, "ncp", 300_000, None)
    pr, enc = model.pricer, model.enc
    w = enc.weight.astype(np.int64)
    solver = pywraplp.Solver.CreateSolver("SCIP")
    solver.SetTimeLimit(int(1000 * limit))
    objective = solver.Objective()
    released: list[list] = [[] for _ in range(enc.n_types)]
    assigned = []  # (type, vector, variable)
    for v in range(pr.n_vec):
        used = solver.BoolVar(f"z{v}")
        types = pr.types[pr.starts[v] : pr.starts[v + 1]].tolist()
        amounts = []
        for t in types:
            x = solver.IntVar(0, int(w[t]), f"x{t}_{v}")
            solver.Add(x <= int(w[t]) * used)  # records go only to a vector in use
            objective.SetCoefficient(x, float(pr.int_cost[v]))
            released[t].append(x)
            amounts.append(x)
            assigned.append((t, v, x))
        solver.Add(solver.Sum(amounts) >= k * used)  # a class holds at least k records
    for t in range(enc.n_types):
        solver.Add(solver.Sum(released[t]) == int(w[t]))  # each record released once
    objective.SetMinimization()
    status = solver.Solve()
    bound = objective.BestBound() / model.scale
    if status not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        return None, _per_cell(inst, bound), False, _cpu() - cpu
    # Rows of each type in order, dealt to the vectors in use by their amounts.
    rows_of = [list(np.flatnonzero(enc.row_type == t)) for t in range(enc.n_types)]
    groups = np.empty(inst.n_rows, dtype=np.int64)
    for t, v, x in assigned:
        for _ in range(int(round(x.solution_value()))):
            groups[rows_of[t].pop()] = v
    table = generalize_partition(inst, groups)
    rel = Release(table, groups, status=Status.FEASIBLE, provenance={"method": "scip"})
    return rel, _per_cell(inst, bound), status == pywraplp.Solver.OPTIMAL, _cpu() - cpu


def subset(rows: int, limit: float, mip_limit: float, lp_limit: float,
           master_limit: float) -> list[dict]:
    k = 5
    inst = _german(rows)
    reqs = [fa.KAnonymity(k)]
    label = f"german {rows}, k={k}"
    cpu = _cpu()
    lp = lp_bound(inst, reqs, "ncp")
    lp_row = {"instance": label, "method": "LP bound", "bound": _per_cell(inst, lp.value),
              "cpu_s": _cpu() - cpu}
    out = [lp_row]
    release, bound, proven, seconds = _mip(inst, k, mip_limit)
    out.append({
        "instance": label,
        "method": f"SCIP {mip_limit:g} s",
        "verified": release is not None and fa.verify(inst, release, reqs, metrics=False).passed,
        "loss": None if release is None else _per_cell(inst, objective_value(inst, release, "ncp")),
        "bound": bound,
        "proven": proven,
        "cpu_s": seconds,
    })
    cpu = _cpu()
    rel = cpsat(inst, reqs, seed=0, time_limit=limit, objective="ncp")
    out.append({
        "instance": label,
        "method": f"cpsat {limit:g} s",
        "verified": fa.verify(inst, rel, reqs, metrics=False).passed,
        "loss": _per_cell(inst, rel.objective),
        "bound": _per_cell(inst, rel.bound),
        "cpu_s": _cpu() - cpu,
    })
    start, row = _lns(inst, k, limit / 2)
    out.append({"instance": label, **row})
    if master_limit > 0:
        out.append({"instance": label, **_master(inst, k, start, lp_limit, master_limit)})
    for row in out[1:]:
        if row.get("loss") is not None:
            # The gap certified by the LP bound alone.
            row["gap_to_lp"] = float(relative_gap(Fraction(row["loss"]), Fraction(lp_row["bound"])))
    for row in out:
        print(f"  {label} {row['method']}: loss {row.get('loss')}, bound {row.get('bound')}, "
              f"{row['cpu_s']:.0f} s CPU", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=float, default=300.0,
                        help="seconds of the long lns runs (default 300)")
    parser.add_argument("--no-long", action="store_true", help="skip the long lns runs")
    parser.add_argument("--rows", type=int, default=40, help="records of the subset (default 40)")
    parser.add_argument("--limit", type=float, default=120.0,
                        help="seconds of cpsat on the subset, lns half (default 120)")
    parser.add_argument("--mip-limit", type=float, default=600.0,
                        help="seconds of SCIP on the subset (default 600)")
    parser.add_argument("--lp-limit", type=float, default=150.0,
                        help="seconds of the LP bound generating the master's columns (default 150)")
    parser.add_argument("--master-limit", type=float, default=60.0,
                        help="seconds of the restricted master after the 60-s lns runs (default "
                             "60; 0 skips it)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "lns_gap.json"))
    args = parser.parse_args()
    started = time.perf_counter()
    rows = subset(args.rows, args.limit, args.mip_limit, args.lp_limit, args.master_limit)
    rows += whole(None if args.no_long else args.long, args.lp_limit, args.master_limit)
    print()
    show(rows, ("instance", "method", "verified", "proven", "loss", "bound", "gap", "gap_to_lp",
                "cpu_s"))
    write_results(args.out, {"long_s": None if args.no_long else args.long, "rows": args.rows,
                             "limit_s": args.limit, "mip_limit_s": args.mip_limit,
                             "lp_limit_s": args.lp_limit, "master_limit_s": args.master_limit,
                             "seconds": time.perf_counter() - started,
                             "results": rows})


if __name__ == "__main__":
    main()
