"""Journalist risk against a population table on Dask against one machine.

Run ``python benchmarks/dask_journalist.py`` (``--repeat R`` runs per row, best kept;
``--rows N``: the synthetic population, default 1,000,000, 0 skips it). Prints one row
per table and engine and writes ``benchmarks/results/dask_journalist.json``.

- Adult: 30,162 rows raw and Mondrian's k = 5 release, against Adult's 48,842 records of
  train + test (``adult_full``) as a pandas table (one machine) and as a Parquet file of
  four row groups read by Dask.
- Synthetic: ``population(N, n_qi=3)`` as the population (Parquet, partitions of about
  250,000 records), every tenth record as the table, raw and after Mondrian k = 10.
- ``fa.risk`` with every other figure left out but the sample risk (``models=()``,
  ``suda_max_size=None``, ``sensitive=()``), with and without the population: the
  difference is what the journalist risk costs. Dask runs on its synchronous scheduler
  in this process, so that the CPU seconds (``time.process_time``) hold all its work.
- "same" says whether the Dask engine's journalist figures equal one machine's (exact
  Fractions, witness included).
"""

from __future__ import annotations

import argparse
import os
import tempfile

import dask
import pandas as pd
from _table import show, timed, write_results

import fairanon as fa
from fairanon.instances.synthetic import population

OPTIONS = {"models": (), "suda_max_size": None, "sensitive": ()}


def _text(table: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns as text, as a Parquet file of the table holds them."""
    return table.astype({c: str for c in table.columns if isinstance(table[c].dtype, pd.CategoricalDtype)})


def _rows(name: str, inst, release, pop_table: pd.DataFrame, pop_path: str, repeat: int) -> list[dict]:
    rows = []
    base_local, t_local0 = timed(repeat, lambda: fa.risk(inst, release, **OPTIONS))
    local, t_local = timed(repeat, lambda: fa.risk(inst, release, population=pop_table, **OPTIONS))
    _, t_dask0 = timed(repeat, lambda: fa.risk(inst, release, engine="dask", **OPTIONS))
    dist, t_dask = timed(repeat, lambda: fa.risk(inst, release, engine="dask", population=pop_path, **OPTIONS))
    j = local.journalist
    figures = f"highest {j.highest}, marketer {float(j.marketer):.4g}, above 1/5: {j.records_above}"
    for engine, population_form, t, t0 in (("local", "pandas", t_local, t_local0), ("dask", "parquet", t_dask, t_dask0)):
        rows.append({"table": name, "engine": engine, "population": population_form, "N": j.population_size,
                     "classes": local.sample.n_classes, "journalist": figures,
                     "same": dist.journalist == j, "cpu_s": round(t[0], 3), "cpu_s_without": round(t0[0], 3),
                     "journalist_cpu_s": round(t[0] - t0[0], 3), "wall_s": round(t[1], 3)})
    return rows


def bench_adult(repeat: int, directory: str) -> list[dict]:
    inst = fa.load("adult")
    release = fa.anonymize(inst, [fa.KAnonymity(5)], method="mondrian", seed=0)
    pop = _text(fa.load("adult_full").table)
    path = os.path.join(directory, "adult_full.parquet")
    pop.to_parquet(path, index=False, row_group_size=-(-len(pop) // 4))
    return (_rows("adult raw", inst, None, pop, path, repeat)
            + _rows("adult k=5", inst, release, pop, path, repeat))


def bench_synthetic(n: int, repeat: int, directory: str) -> list[dict]:
    whole = population(n, n_qi=3, seed=0)
    pop = _text(whole.table)
    inst = fa.Instance(pop.iloc[::10], whole.schema, name=f"population({n})[::10]")
    release = fa.anonymize(inst, [fa.KAnonymity(10)], method="mondrian", seed=0)
    path = os.path.join(directory, "population.parquet")
    pop.to_parquet(path, index=False, row_group_size=250_000)
    return (_rows(f"synthetic {len(inst.table)} of {n} raw", inst, None, pop, path, repeat)
            + _rows(f"synthetic {len(inst.table)} of {n} k=10", inst, release, pop, path, repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "dask_journalist.json"))
    args = parser.parse_args()
    with dask.config.set(scheduler="synchronous"), tempfile.TemporaryDirectory() as directory:
        rows = bench_adult(args.repeat, directory)
        if args.rows:
            rows += bench_synthetic(args.rows, args.repeat, directory)
    show(rows, ["table", "engine", "population", "N", "classes", "same", "cpu_s", "cpu_s_without",
                "journalist_cpu_s", "wall_s", "journalist"])
    write_results(args.out, {"repeat": args.repeat, "rows": args.rows, "results": rows})


if __name__ == "__main__":
    main()
