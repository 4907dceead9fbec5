"""DIVA benchmark: the experiments of DIVA's Table 5 and Figures 4-5, and its targets.

The sweeps themselves are the suite ``benchmarks/suites/diva.yaml``, run by

    FAIRANON_DATA=<folder with census_income_{train,test}.csv.gz> fairanon bench benchmarks/suites/diva.yaml

which writes ``benchmarks/results/diva/`` (results.csv and report.html with the figures).
This script

- ``--write-suite``: regenerates that suite. Census-Income samples (60k..300k records,
  seeded), |Σ| in 4..20, conflict rate in 0..1, k in 10..50 (defaults |R| = 180k,
  |Σ| = 8, cf = 0.2, k = 20) for DIVA-Basic, MinChoice and MaxFanOut (and the exact mode
  in the |Σ| sweep), Mondrian released with DIVA's stars in the |R| and k sweeps,
  k-member and OKA (quadratic) with every DIVA variant on samples of 2.5k-10k records,
  German credit with DIVA's published Credit constraints (Job and Sex, rho = 0.96;
  with the counts as upper bounds, and with the published [x, x] bounds) for k = 5..20, and synthetic populations of
  100k records (Zipf, uniform, Gaussian values). Constraint sets with a given conflict
  rate (set form, docs/papers.md, DV-7) are found by a seeded local search over
  proportional constraints (rho = 0.96) on the values and pairs of values of the
  categorical quasi-identifiers, and written into the suite;
- ``--summary DIR``: prints every point of a finished run of the suite (status, time,
  stars, discernibility, verified);
- by default, the targets, each in a process of its own: Census-Income at full size
  with |Σ| = 8, cf = 0.2, k = 20, MaxFanOut (under 60 s and 4 GB); the 120k-record,
  |Σ| = 12, cf = 0.2, k = 20 MaxFanOut point under a 60 s limit; and how far past their
  limit runs of 2, 5 and 10 s end on a 50k-record sample. Prints a table and writes
  ``benchmarks/results/diva.json``.

Census-Income is read from ``--census DIR`` (default ``$FAIRANON_DATA``, else
``shared/datasets`` beside the repository); the Census parts are skipped without it.
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
from fairanon.instances.datasets import load_census
from fairanon.instances.synthetic import population
from fairanon.methods.diva import diva
from fairanon.models.diversity import conflict_rate, encode_constraints, proportional

from _data import DATA_HELP, data_dir

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "suites", "diva.yaml")
STRATEGIES = {"basic": "DIVA-Basic", "minchoice": "MinChoice", "maxfanout": "MaxFanOut"}
DIVA_TIME = 60  # seconds per DIVA run: the target of every point
GERMAN_ROLES = {"sex": "qi", "personal_status": "ignore"}


# ------------------------------------------------------------------ data
def census(folder: str) -> fa.Instance:
    return load_census(os.path.join(folder, "census_income_train.csv.gz"),
                       os.path.join(folder, "census_income_test.csv.gz"))


def sample(inst: fa.Instance, n: int, seed: int = 0) -> fa.Instance:
    """What ``fa.load("census", rows=n, seed=seed)`` draws."""
    if n >= inst.n_rows:
        return inst
    rows = np.sort(np.random.default_rng(seed).permutation(inst.n_rows)[:n])
    return inst.subset(inst.row_ids[rows], name=f"{inst.name}[{n}]")


def german_credit() -> fa.Instance:
    """German credit as in the DIVA repository: Sex (from personal status, which it
    replaces) among the quasi-identifiers."""
    return fa.load("german", roles=GERMAN_ROLES)


def credit_constraints(inst: fa.Instance, exact: bool = False) -> list:
    """DIVA's published Credit proportion set (docs/papers.md, DV-9), rho = 0.96 rounded:
    Job 605, 192, 142, 21 and Sex 662, 298, each with the value's count as upper bound,
    or (`exact`) as published: Job [x, x], Sex(male) [662, 690], Sex(female) [298, 298]."""
    if exact:
        return (proportional(inst, "job", 0.96, rounding="round", upper="lower")
                + proportional(inst, "sex", 0.96, rounding="round", upper="majority"))
    return (proportional(inst, "job", 0.96, rounding="round")
            + proportional(inst, "sex", 0.96, rounding="round"))


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


# ------------------------------------------------------------------ the suite
def _algorithms(*names: str) -> list[dict]:
    table = {
        **{label: {"method": "diva", "name": label, "params": {"next_node": key}} for key, label in STRATEGIES.items()},
        "DIVA-exact": {"method": "diva-exact", "name": "DIVA-exact"},
        # Mondrian's partition released by DIVA's Suppress: DIVA with no constraint and
        # Mondrian for the rest is exactly that.
        "Mondrian (stars)": {"method": "diva", "name": "Mondrian (stars)", "params": {"anonymize": "mondrian"}},
        "k-member": {"method": "kmember", "name": "k-member", "params": {"recoding": "suppress"}, "time_limit": 1800},
        "OKA": {"method": "oka", "name": "OKA", "params": {"recoding": "suppress"}, "time_limit": 1800},
    }
    return [table[n] for n in names]


class _Flow(dict):
    """A mapping written on one line."""


def _reqset(name: str, k: int, sigma, sweep: str, x) -> dict:
    return {"name": f"{name} ({sweep} = {x})", "columns": _Flow(sweep=sweep, sweep_x=x),
            "set": [_Flow(k_anonymity={"k": k}), *[_Flow(s.to_spec()) for s in sigma]]}


def _experiment(name, instance, reqsets, algorithms) -> dict:
    return {"name": name, "instances": [instance], "requirements": reqsets, "algorithms": algorithms}


def suite_document(folder: str, seed: int = 0) -> dict:
    """The suite of DIVA's experiments (see the module docstring)."""
    full = census(folder)
    diva_algs = _algorithms(*STRATEGIES.values())
    baselines = _algorithms("Mondrian (stars)")
    experiments = []

    def census_instance(n: int, label: str) -> dict:
        return {"dataset": "census", "options": {"rows": int(n), "seed": seed}, "name": label}

    def sweep_point(sweep, x, inst, inst_label, n_rows, m, cf, k, algorithms, with_baselines):
        sigma = constraint_set(inst, m, cf, k, seed=seed)
        spec = census_instance(n_rows, inst_label)
        experiments.append(_experiment(f"{sweep} = {x}", spec, [_reqset("k+Σ", k, sigma, sweep, x)], algorithms))
        if with_baselines:
            experiments.append(_experiment(f"{sweep} = {x} (baselines)", spec, [_reqset("k", k, [], sweep, x)],
                                           baselines))

    for n in (60000, 120000, 180000, 240000, full.n_rows):
        sweep_point("|R|", n, sample(full, n, seed), f"census {n // 1000}k", n, 8, 0.2, 20, diva_algs, True)
    base = sample(full, 180000, seed)
    sigma_k = constraint_set(base, 8, 0.2, 50, seed=seed)
    for m in (4, 8, 12, 16, 20):
        sweep_point("|Σ|", m, base, "census 180k (|Σ| sweep)", 180000, m, 0.2, 20,
                    diva_algs + _algorithms("DIVA-exact"), False)
    for cf in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        sweep_point("cf", cf, base, "census 180k (cf sweep)", 180000, 8, cf, 20, diva_algs, False)
    k_spec = census_instance(180000, "census 180k (k sweep)")
    for k in (10, 20, 30, 40, 50):
        experiments.append(_experiment(f"k = {k}", k_spec, [_reqset("k+Σ", k, sigma_k, "k", k)], diva_algs))
        experiments.append(_experiment(f"k = {k} (baselines)", k_spec, [_reqset("k", k, [], "k", k)], baselines))
    small = _algorithms("Mondrian (stars)", "k-member", "OKA")
    for n in (2500, 5000, 10000):
        sweep_point("|R| (quadratic baselines)", n, sample(full, n, seed), f"census {n / 1000:g}k", n, 8, 0.2, 20,
                    diva_algs + _algorithms("DIVA-exact"), False)
        experiments.append(_experiment(f"|R| (quadratic baselines) = {n} (baselines)",
                                       census_instance(n, f"census {n / 1000:g}k"),
                                       [_reqset("k", 20, [], "|R| (quadratic baselines)", n)], small))
    german = german_credit()
    german_spec = {"dataset": "german", "options": {"roles": GERMAN_ROLES}, "name": "german credit"}
    # k up to 20: the published set keeps 21 of the 22 unemployed / unskilled
    # non-resident records visible, so k > 22 is infeasible (named by the precheck).
    for label, credit in (("German credit", credit_constraints(german)),
                          ("German credit, [x, x] bounds", credit_constraints(german, exact=True))):
        for k in (5, 10, 15, 20):
            sweep = f"k ({label})"
            experiments.append(_experiment(f"{label} k = {k}", german_spec, [_reqset("k+Σ", k, credit, sweep, k)],
                                           diva_algs + _algorithms("DIVA-exact")))
            if label == "German credit":
                experiments.append(_experiment(f"{label} k = {k} (baselines)", german_spec,
                                               [_reqset("k", k, [], sweep, k)], small))
    for dist in ("zipf", "uniform", "gaussian"):
        args = {"n_rows": 100000, "n_qi": 7, "distribution": dist, "seed": seed}
        inst = population(**args)
        sigma = constraint_set(inst, 8, 0.2, 20, seed=seed)
        spec = {"synthetic": args, "name": f"population {dist}"}
        experiments.append(_experiment(f"distribution = {dist}", spec,
                                       [_reqset("k+Σ", 20, sigma, "distribution (Pop-Syn)", dist)], diva_algs))
        experiments.append(_experiment(f"distribution = {dist} (baselines)", spec,
                                       [_reqset("k", 20, [], "distribution (Pop-Syn)", dist)], baselines))
    return {
        "name": "diva",
        "description": "DIVA's Table 5 sweeps on Census-Income, German credit and synthetic populations, "
                       "with k-member, OKA and Mondrian released with stars as baselines.",
        "seeds": [seed],
        "repetitions": 1,
        "time_limit": DIVA_TIME,
        "grace": 30,
        "memory_limit": "8GB",
        "jobs": 1,
        "out": "benchmarks/results/diva",
        "metrics": {"mre": False, "vectors": False},
        "experiments": experiments,
    }


def write_suite(path: str, folder: str, seed: int) -> None:
    import yaml

    doc = suite_document(folder, seed)
    header = (
        "# DIVA's experiments (Milani, Huang, Chiang, EDBT 2021: Table 5, Figures 4-5): every sweep on\n"
        "# Census-Income samples (|R|, |Σ|, conflict rate, k; defaults 180k, 8, 0.2, 20), German credit with\n"
        "# the published Credit constraints, synthetic populations (Zipf, uniform, Gaussian), for DIVA-Basic,\n"
        "# MinChoice, MaxFanOut (and the exact mode), with Mondrian released with DIVA's stars (DIVA with no\n"
        "# constraint and Mondrian for the rest), k-member and OKA (quadratic: on samples of up to 10k) as\n"
        "# baselines. The constraint sets were chosen for their conflict rate by a seeded local search:\n"
        "#   python benchmarks/diva.py --write-suite   (regenerates this file)\n"
        "# Census-Income is not bundled: FAIRANON_DATA names the folder holding census_income_{train,test}.csv.gz.\n"
        "#   FAIRANON_DATA=... fairanon bench benchmarks/suites/diva.yaml\n"
    )
    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data):
            return True

    Dumper.add_representer(_Flow, lambda dumper, data: dumper.represent_mapping(
        "tag:yaml.org,2002:map", data.items(), flow_style=True))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(header)
        yaml.dump(doc, fh, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=140, default_flow_style=None)
    print(f"Wrote {path} ({len(doc['experiments'])} experiments)")


def summary(out: str) -> None:
    """Every point of a finished suite run, as the closing note reports them."""
    frame = pd.read_csv(os.path.join(out, "results.csv"))
    cols = ["sweep", "sweep_x", "instance", "algorithm", "outcome", "status", "time_s", "suppressed_cells",
            "discernibility", "verified", "reason"]
    frame = frame[[c for c in cols if c in frame.columns]]
    with pd.option_context("display.max_rows", None, "display.width", 250, "display.max_colwidth", 90):
        print(frame.to_string(index=False))
    solved = frame["status"].isin(["OPTIMAL", "FEASIBLE"])
    print(f"\n{len(frame)} runs: {dict(frame['status'].value_counts())}; slowest {frame['time_s'].max():.1f} s; "
          f"verified {int(frame['verified'].astype(str).eq('True').sum())} of {int(solved.sum())} solved")


# ------------------------------------------------------------------ Figures 4-5: the claims
#: Table 4 of the paper: |R|, attributes n, distinct quasi-identifier vectors, |Σ|.
PAPER_TABLE4 = {
    "Pantheon": (11341, 17, 5636, 24),
    "Census": (299285, 40, 12405, 21),
    "Credit": (1000, 20, 60, 18),
    "Pop-Syn": (100000, 7, 24630, 10),
}
SOLVED = ("OPTIMAL", "FEASIBLE")
DIVA_NAMES = tuple(STRATEGIES.values())
#: A trend claim ("rises", "decreases") holds when the last point differs from the first by
#: more than this share in the claimed direction.
TREND = 0.05


def pantheon_note(folder: str | None) -> str:
    """What the output says about the Pantheon data set (Table 4, Fig. 4c)."""
    found = []
    if folder and os.path.isdir(folder):
        found = [f for f in os.listdir(folder) if "pantheon" in f.lower()]
    where = f" ({', '.join(found)} found in {folder}, but no loader reads it)" if found else (
        f" (not bundled, no loader, nothing named pantheon in {folder!r})")
    return ("Pantheon (Table 4: 11,341 tuples, 17 attributes, 5,636 QI vectors, |Σ| = 24), the data set of "
            f"Fig. 4c, is not available{where}: Fig. 4c's claims are checked on the cf sweep of "
            "Census-Income 180k instead.")


def table4(folder: str | None, seed: int = 0) -> list[dict]:
    """Table 4 as fairanon's runs see the data: |R|, attributes, distinct QI vectors, and
    the largest |Σ| of the suite on that data set, beside the paper's."""
    rows = []

    def row(name, inst, sigma):
        qi = list(inst.schema.qi)
        paper = PAPER_TABLE4[name]
        rows.append({"data set": name, "paper": paper,
                     "fairanon": (inst.n_rows, len(inst.table.columns), int(len(inst.table.drop_duplicates(qi))), sigma),
                     "qi": qi})

    rows.append({"data set": "Pantheon", "paper": PAPER_TABLE4["Pantheon"], "fairanon": None, "qi": []})
    if folder and os.path.exists(os.path.join(folder, "census_income_train.csv.gz")):
        row("Census", census(folder), 20)
    german = german_credit()
    row("Credit", german, len(credit_constraints(german)))
    row("Pop-Syn", population(100000, n_qi=7, distribution="zipf", seed=seed), 8)
    return rows


def _solved(frame: pd.DataFrame) -> pd.Series:
    return frame["status"].astype(str).isin(SOLVED) & frame["verified"].astype(str).eq("True")


def sweep_table(frame: pd.DataFrame, sweep: str, metric: str, algorithms) -> pd.DataFrame:
    """metric per sweep_x (rows, in the suite's order) and algorithm (columns). Time is
    kept for every run that ended (a run that hit its limit counts its time); stars and
    discernibility only for verified releases."""
    part = frame[frame["sweep"].astype(str) == sweep]
    if metric not in ("time_s", "cpu_s"):
        part = part[_solved(part)]
    part = part[part["algorithm"].isin(algorithms)]
    order = list(dict.fromkeys(_label(x) for x in frame.loc[frame["sweep"].astype(str) == sweep, "sweep_x"]))
    table = part.assign(x=part["sweep_x"].map(_label)).pivot_table(
        index="x", columns="algorithm", values=metric, aggfunc="mean")
    return table.reindex(index=[x for x in order if x in table.index],
                         columns=[a for a in algorithms if a in table.columns])


def _label(x) -> str:
    """A sweep value as the suite wrote it: 20 and 60000, not the 20.0 a CSV gives back."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        return str(x)
    return str(int(value)) if value.is_integer() else str(value)


def gain(table: pd.DataFrame, better: str, other: str) -> float | None:
    """Mean relative gain of `better` over `other` (1 - better / other, in %), over the
    points where both have a value; positive when `better` is lower (faster, fewer stars,
    lower discernibility)."""
    if better not in table or other not in table:
        return None
    both = table[[better, other]].dropna()
    both = both[both[other] > 0]
    if both.empty:
        return None
    return float(100 * (1 - both[better] / both[other]).mean())


def _fmt_gain(g: float | None) -> str:
    return "no common point" if g is None else f"{g:+.1f} %"


def _series(table: pd.DataFrame, alg: str, fmt="{:.3g}") -> str:
    if alg not in table:
        return "no run"
    return ", ".join(f"{x}: {fmt.format(v)}" if pd.notna(v) else f"{x}: -" for x, v in table[alg].items())


def _growth(table: pd.DataFrame, alg: str) -> tuple[float | None, int, int, str]:
    """Last over first value, how many of the steps rise, and "from x to y"."""
    if alg not in table:
        return None, 0, 0, ""
    values = table[alg].dropna()
    if len(values) < 2 or values.iloc[0] <= 0:
        return None, 0, 0, ""
    steps = np.diff(values.to_numpy())
    span = f"from {values.index[0]} to {values.index[-1]}"
    return float(values.iloc[-1] / values.iloc[0]), int((steps > 0).sum()), len(steps), span


def claims(frame: pd.DataFrame) -> list[dict]:
    """The claims of the paper's §4 (Figs. 4-5), each checked on a finished suite run:
    {figure, claim, paper, fairanon, held (True / False / None when not measurable)}.

    Accuracy is the discernibility metric, as in the paper (lower is more accurate);
    a gain in % is the mean over the sweep's points of 1 - ours / theirs, so +17 % means
    17 % less discernibility (or stars, or time) than the other strategy. A trend ("rises",
    "decreases") holds when the last point of the sweep differs from the first by more
    than :data:`TREND` in the claimed direction; the steps that go that way are counted
    beside it. Time is the
    CPU time of the run's process (``cpu_s``; DIVA runs on one core), which other work
    on a shared machine does not inflate as it does wall-clock time."""
    out = []
    clock = "cpu_s" if "cpu_s" in frame.columns else "time_s"

    def claim(figure, text, paper, fairanon, held):
        out.append({"figure": figure, "claim": text, "paper": paper, "fairanon": fairanon, "held": held})

    def gains(sweep, figure):
        for metric, label in ((clock, "time"), ("suppressed_cells", "stars"), ("discernibility", "discernibility")):
            table = sweep_table(frame, sweep, metric, DIVA_NAMES)
            for other in ("MinChoice", "DIVA-Basic"):
                g = gain(table, "MaxFanOut", other)
                claim(figure, f"MaxFanOut's gain over {other} in {label} ({sweep} sweep)", "MaxFanOut best (§4.1)",
                      _fmt_gain(g), None if g is None else g >= 0)

    # Fig. 4a: runtime against |Σ| (Census).
    times = sweep_table(frame, "|Σ|", clock, DIVA_NAMES)
    basic, up, n, span = _growth(times, "DIVA-Basic")
    claim("4a", "DIVA-Basic's runtime grows exponentially with |Σ| (here: faster than linearly, above ×5 from "
          "|Σ| = 4 to 20)", "exponential growth", f"×{basic:.2f} {span} ({_series(times, 'DIVA-Basic', '{:.1f} s')})"
          if basic else "no runs", None if basic is None else basic > 5)
    for alg in ("MinChoice", "MaxFanOut"):
        g, up, n, span = _growth(times, alg)
        claim("4a", f"{alg} scales linearly with |Σ| (at most ×5 from |Σ| = 4 to 20)", "linear scale-up",
              f"×{g:.2f} {span} ({_series(times, alg, '{:.1f} s')})" if g else "no runs", None if g is None else g <= 5)
    # Fig. 4b: accuracy against |Σ|.
    dm = sweep_table(frame, "|Σ|", "discernibility", DIVA_NAMES)
    for alg in DIVA_NAMES:
        g, up, n, span = _growth(dm, alg)
        claim("4b", f"{alg}: accuracy declines as |Σ| grows (discernibility rises)", "linear decline",
              f"discernibility ×{g:.3f} {span}, rising in {up} of {n} steps" if g else "no runs",
              None if g is None else g >= 1 + TREND)
    gains("|Σ|", "4a-b")
    # Fig. 4c: accuracy against the conflict rate (Pantheon in the paper, Census 180k here).
    dm = sweep_table(frame, "cf", "discernibility", DIVA_NAMES)
    for alg in DIVA_NAMES:
        g, up, n, span = _growth(dm, alg)
        claim("4c", f"{alg}: accuracy declines for increasing cf (on Census, not Pantheon)", "declines",
              f"discernibility ×{g:.3f} {span}, rising in {up} of {n} steps" if g else "no runs",
              None if g is None else g >= 1 + TREND)
    for better, other, paper in (("MaxFanOut", "DIVA-Basic", 17), ("MinChoice", "DIVA-Basic", 9)):
        g = gain(dm, better, other)
        claim("4c", f"{better} outperforms {other} in accuracy by +{paper} % (cf sweep)", f"+{paper} %",
              _fmt_gain(g), None if g is None else g > 0)
    g = gain(dm, "MaxFanOut", "MinChoice")
    claim("4c", "MaxFanOut outperforms MinChoice in accuracy (cf sweep)", "MaxFanOut better", _fmt_gain(g),
          None if g is None else g > 0)
    gains("cf", "4c")
    # Fig. 4d: accuracy against the distribution (Pop-Syn, 100k, |Σ| = 8).
    sweep = "distribution (Pop-Syn)"
    dm = sweep_table(frame, sweep, "discernibility", DIVA_NAMES)
    for other, paper in (("MinChoice", 8), ("DIVA-Basic", 17)):
        g = gain(dm, "MaxFanOut", other)
        best = None if "MaxFanOut" not in dm or other not in dm else bool((dm["MaxFanOut"] <= dm[other]).all())
        claim("4d", f"MaxFanOut outperforms {other} in accuracy on every distribution, by {paper} %", f"+{paper} %",
              f"{_fmt_gain(g)}; per distribution: MaxFanOut {_series(dm, 'MaxFanOut', '{:.4g}')}; "
              f"{other} {_series(dm, other, '{:.4g}')}", best if g is None else (best and g > 0))
    gains(sweep, "4d")
    # Fig. 5a-b: against k (Census 180k), with the baselines.
    every = DIVA_NAMES + ("Mondrian (stars)",)
    dm = sweep_table(frame, "k", "discernibility", every)
    times = sweep_table(frame, "k", clock, every)
    for alg in every:
        g, up, n, span = _growth(dm, alg)
        claim("5a", f"{alg}: the penalty (discernibility) rises with k", "rises",
              f"×{g:.3f} {span}, rising in {up} of {n} steps" if g else "no runs",
              None if g is None else g >= 1 + TREND)
    for alg in ("MinChoice", "MaxFanOut"):
        if alg in times and "Mondrian (stars)" in times:
            slower = times[alg] / times["Mondrian (stars)"]
            claim("5b", f"{alg} takes longer than the baseline Mondrian (stars)", "higher runtimes",
                  f"×{slower.min():.2f} to ×{slower.max():.2f} Mondrian's time", bool((slower > 1).all()))
        g, up, n, span = _growth(times, alg)
        claim("5b", f"{alg}: runtime decreases as k grows", "decreases",
              f"×{g:.2f} {span} ({_series(times, alg, '{:.1f} s')})" if g else "no runs",
              None if g is None else g <= 1 - TREND)
    gains("k", "5a-b")
    # Fig. 5c-d: against |R| (Census samples), with the baselines.
    dm = sweep_table(frame, "|R|", "discernibility", every)
    times = sweep_table(frame, "|R|", clock, every)
    for alg in DIVA_NAMES:
        if alg in dm and "Mondrian (stars)" in dm:
            both = dm[[alg, "Mondrian (stars)"]].dropna()
            g = gain(dm, alg, "Mondrian (stars)")
            claim("5c", f"{alg} is more accurate than the baseline Mondrian (stars) at every |R|", "DIVA better",
                  f"{_fmt_gain(g)} discernibility; better at {int((both[alg] < both['Mondrian (stars)']).sum())} "
                  f"of {len(both)} sizes", bool((both[alg] < both["Mondrian (stars)"]).all()) if len(both) else None)
    small = sweep_table(frame, "|R| (quadratic baselines)", "discernibility",
                        DIVA_NAMES + ("Mondrian (stars)", "k-member", "OKA"))
    for base in ("k-member", "OKA"):
        g = gain(small, "MaxFanOut", base)
        claim("5c", f"MaxFanOut is more accurate than {base} (2.5k-10k samples)", "DIVA better", _fmt_gain(g),
              None if g is None else g > 0)
    for alg in every:
        g, up, n, span = _growth(times, alg)
        claim("5d", f"{alg}: runtime increases with |R|", "increases",
              f"×{g:.2f} {span} ({_series(times, alg, '{:.1f} s')})" if g else "no runs",
              None if g is None else g >= 1 + TREND)
    gains("|R|", "5c-d")
    return out


def print_claims(rows: list[dict]) -> None:
    held = sum(r["held"] is True for r in rows)
    failed = sum(r["held"] is False for r in rows)
    for r in rows:
        mark = {True: "held", False: "NOT held", None: "not measured"}[r["held"]]
        print(f"Fig. {r['figure']:<5} {mark:<13} {r['claim']}\n{'':20}paper: {r['paper']}; fairanon: {r['fairanon']}")
    print(f"\n{len(rows)} claims: {held} held, {failed} not held, {len(rows) - held - failed} not measured")


def figures(frame: pd.DataFrame, out: str) -> list[str]:
    """Figs. 4a-d and 5a-d from a finished suite run, one PNG per sweep."""
    import matplotlib

    matplotlib.use("Agg")
    from fairanon.bench.plots import sweep_figure

    os.makedirs(out, exist_ok=True)
    paths = []
    for fig, sweep in (("fig4ab", "|Σ|"), ("fig4c", "cf"), ("fig4d", "distribution (Pop-Syn)"), ("fig5ab", "k"),
                       ("fig5cd", "|R|"), ("fig5cd_small", "|R| (quadratic baselines)")):
        part = frame[frame["sweep"].astype(str) == sweep]
        if part.empty:
            continue
        figure = sweep_figure(part, sweep)
        path = os.path.join(out, f"{fig}.png")
        figure.savefig(path, dpi=110, bbox_inches="tight")
        paths.append(path)
    return paths


def paper_figures(args) -> None:
    """Run the suite (or read a finished run) and print Table 4, the claims of Figs. 4-5
    and where the figures are drawn."""
    out = args.claims or os.path.join(HERE, "results", "diva")
    print(pantheon_note(args.census))
    print("\nTable 4 (paper | fairanon): |R|, attributes, distinct QI vectors, |Σ|")
    for row in table4(args.census, args.seed):
        ours = "not available" if row["fairanon"] is None else " / ".join(f"{v:,}" for v in row["fairanon"])
        print(f"  {row['data set']:<9} {' / '.join(f'{v:,}' for v in row['paper']):<28} {ours}")
    if not args.claims:
        cmd = [sys.executable, "-m", "fairanon.cli", "bench", SUITE, "--out", out, "--resume"]
        print(f"\nRunning {' '.join(cmd[2:])} (resumes a partial run)", flush=True)
        env = {**os.environ, "FAIRANON_DATA": args.census or ""}
        # fairanon bench exits 1 when a run has no verified release, which an INFEASIBLE
        # point (with its conflict named) is; the statuses are counted below.
        done = subprocess.run(cmd, env=env, check=False)
        if done.returncode not in (0, 1):
            sys.exit(f"fairanon bench failed (exit {done.returncode}); see its output above.")
    frame = pd.read_csv(os.path.join(out, "results.csv"))
    statuses = ", ".join(f"{n} {s}" for s, n in frame["status"].astype(str).value_counts().items())
    print(f"\nRuns: {statuses}; verified {int(_solved(frame).sum())}.")
    for _, row in frame[~_solved(frame)].drop_duplicates(["sweep", "sweep_x", "reason"]).iterrows():
        print(f"  {row['sweep']} = {_label(row['sweep_x'])}: {row['status']}: {row['reason']}")
    print(f"\nClaims of §4 (Figs. 4-5) on {len(frame)} runs of {out}:")
    rows = claims(frame)
    print_claims(rows)
    paths = figures(frame, os.path.join(out, "figures"))
    print("\nFigures: " + ", ".join(os.path.relpath(p) for p in paths))
    with open(os.path.join(out, "claims.json"), "w", encoding="utf-8") as fh:
        json.dump({"pantheon": pantheon_note(args.census), "claims": rows}, fh, indent=2, default=str)


# ------------------------------------------------------------------ the targets
def target_child(args) -> None:
    """Runs in its own process: one target, printed as JSON."""
    started = time.perf_counter()
    full = census(args.census)
    load_s = time.perf_counter() - started
    n, m, cf, k, limit = args.target_child
    inst = sample(full, int(n), args.seed)
    del full
    sigma = constraint_set(inst, int(m), float(cf), int(k), seed=args.seed)
    reqs = [fa.KAnonymity(int(k)), *sigma]
    started, cpu = time.perf_counter(), time.process_time()
    release = diva(inst, reqs, next_node="maxfanout", seed=args.seed,
                   time_limit=None if float(limit) <= 0 else float(limit))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    report = fa.verify(inst, release, reqs)
    verify_s = time.perf_counter() - started
    search = release.provenance.get("search", {})
    print(json.dumps({
        "rows": inst.n_rows, "load_s": load_s, "sigma": [repr(s) for s in sigma],
        "cf": float(conflict_rate(inst, sigma)), "k": int(k), "time_limit": float(limit), "method": "maxfanout",
        "status": str(release.status), "seconds": seconds, "cpu_s": cpu, "peak_rss_mb": peak_mb,
        "verify_s": verify_s, "passed": report.passed, "reason": release.reason,
        "stars": report.metrics.get("suppressed_cells"), "DM": report.metrics.get("discernibility"),
        "coloring_found": search.get("coloring", {}).get("found"), "repaired": release.provenance.get("repaired"),
    }))


def run_target(args, n, m, cf, k, limit) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--census", args.census, "--seed", str(args.seed),
           "--target-child", str(n), str(m), str(cf), str(k), str(limit)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--census", default=data_dir(), help=DATA_HELP)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write-suite", nargs="?", const=SUITE, metavar="PATH",
                        help=f"write the suite (default {os.path.relpath(SUITE)})")
    parser.add_argument("--summary", metavar="DIR", help="print the points of a finished suite run")
    parser.add_argument("--figures", action="store_true",
                        help="Figs. 4-5: run the suite (resuming), print Table 4 and the paper's claims, draw the figures")
    parser.add_argument("--claims", metavar="DIR", help="as --figures, on a finished suite run in DIR")
    parser.add_argument("--target-child", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "diva.json"))
    args = parser.parse_args()
    if args.target_child:
        target_child(args)
        return
    if args.summary:
        summary(args.summary)
        return
    if args.figures or args.claims:
        paper_figures(args)
        return
    has_census = args.census is not None and os.path.exists(os.path.join(args.census, "census_income_train.csv.gz"))
    if args.write_suite:
        if not has_census:
            sys.exit(f"Census-Income not found in {args.census!r}; pass --census DIR.")
        write_suite(args.write_suite, args.census, args.seed)
        return
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    print(f"fairanon {fa.__version__} DIVA targets — {machine['cpus']} cores, Python {machine['python']}")
    if not has_census:
        print(f"Census-Income not found in {args.census!r}: nothing to run (pass --census DIR).")
        return
    targets = [
        ("full Census, |Σ| 8, cf 0.2, k 20, no limit", 299285, 8, 0.2, 20, 0, "< 60 s, < 4096 MB"),
        ("120k, |Σ| 12, cf 0.2, k 20, limit 60 s", 120000, 12, 0.2, 20, 60, "verified or proof, < 60 s"),
        *[(f"50k, |Σ| 16, cf 0.2, k 20, limit {t} s", 50000, 16, 0.2, 20, t, f"ends by {t} s + margin")
          for t in (2, 5, 10)],
    ]
    print(f"{'target':<46}{'status':<11}{'s':>8}{'cpu s':>8}{'MB':>7}{'stars':>10}{'DM':>13}  verified  goal")
    results = {"machine": machine, "targets": []}
    for label, n, m, cf, k, limit, goal in targets:
        row = {"target": label, "goal": goal, **run_target(args, n, m, cf, k, limit)}
        results["targets"].append(row)
        if "error" in row:
            print(f"{label:<46}failed: {row['error'][-300:]}")
            continue
        print(f"{label:<46}{row['status']:<11}{row['seconds']:>8.2f}{row['cpu_s']:>8.2f}{row['peak_rss_mb']:>7.0f}"
              f"{row['stars'] or '-':>10}{row['DM'] or '-':>13}  {str(row['passed']):<8}  {goal}", flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2, default=str)
    print(f"Wrote {args.out}")


if __name__ == "__main__":
    main()
