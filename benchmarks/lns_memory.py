"""Peak memory of lns on a table with a large categorical quasi-identifier.

Run ``python benchmarks/lns_memory.py`` (``--values 3000`` for the categorical values,
``--rows 6000`` records, ``--rounds 6`` search rounds). Prints a table and writes
``benchmarks/results/lns_memory.json``.

A synthetic table (seed 0): a categorical attribute of m values under a two-level
tree of m / 10 groups whose leaves are spread over the domain order (so its nodes are
not runs of values), ages 0-59 (numeric, more values than ``max_range_values``) and
sex; k = 5. Measured with tracemalloc: the peak of lns from mondrian's release for
the given rounds (one process, no bound), and the memory held by one attribute's
label registry after it has met every tree node and ranges of 50 values every 7
values. The target: the registry does not grow by m bytes a label (it holds runs and
packed bits), so both stay well below the labels x values tables of before (at
m = 3,000 before: registry 14.2 MB held, lns peak 23.3 MB, the same objective). CPU
seconds, as the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

import numpy as np
import pandas as pd
from _table import show, write_results

import fairanon as fa
from fairanon.methods.lns import lns
from fairanon.solver.lns import Registry


def wide_table(rows: int, m: int, seed: int = 0) -> fa.Instance:
    """`rows` records: a categorical QI of `m` values in m / 10 spread-out groups, age, sex."""
    rng = np.random.default_rng(seed)
    values = [f"v{i:05d}" for i in range(m)]
    groups = max(m // 10, 1)
    tree = fa.Hierarchy.from_mapping({"*": {f"g{g}": values[g::groups] for g in range(groups)}})
    table = pd.DataFrame({"c": rng.choice(values, rows), "age": rng.integers(0, 60, rows),
                          "sex": rng.choice(["F", "M"], rows)})
    schema = fa.Schema([fa.Attribute("c", hierarchy=tree), fa.Attribute("age", kind="numeric"),
                        fa.Attribute("sex")])
    return fa.Instance(table, schema, name=f"wide{m}")


def _registry(m: int) -> dict:
    values = [f"v{i:05d}" for i in range(m)]
    groups = max(m // 10, 1)
    tree = fa.Hierarchy.from_mapping({"*": {f"g{g}": values[g::groups] for g in range(groups)}})
    inst = fa.Instance(pd.DataFrame({"x": values}), fa.Schema([fa.Attribute("x", hierarchy=tree)]))
    tracemalloc.start()
    cpu = time.process_time()
    reg = Registry(inst, "x")
    for v in range(m):
        reg.ancestors(v)
    for lo in range(0, m - 50, 7):
        reg.range_label(lo, lo + 50)
    cpu = time.process_time() - cpu
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"what": f"registry of {m:,} values", "labels": len(reg), "held_mb": held / 1e6,
            "peak_mb": peak / 1e6, "cpu_s": cpu, "objective": "-", "verified": "-"}


def _search(rows: int, m: int, rounds: int) -> dict:
    inst = wide_table(rows, m)
    reqs = [fa.KAnonymity(5)]
    tracemalloc.start()
    cpu = time.process_time()
    rel = lns(inst, reqs, seed=0, max_rounds=rounds, bound=False, searches=1, start="mondrian")
    cpu = time.process_time() - cpu
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"what": f"lns, {rows:,} rows, {rounds} rounds", "labels": "-", "held_mb": held / 1e6,
            "peak_mb": peak / 1e6, "cpu_s": cpu, "objective": float(rel.objective),
            "verified": fa.verify(inst, rel, reqs, metrics=False).passed}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--values", type=int, default=3000)
    parser.add_argument("--rows", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    rows = [_registry(args.values), _search(args.rows, args.values, args.rounds)]
    print(f"lns memory with a categorical QI of {args.values:,} values (tracemalloc, CPU seconds)")
    show(rows, ["what", "labels", "held_mb", "peak_mb", "cpu_s", "objective", "verified"])
    write_results(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "lns_memory.json"),
        {"load_average": os.getloadavg(), "args": vars(args), "rows": rows},
    )


if __name__ == "__main__":
    main()
