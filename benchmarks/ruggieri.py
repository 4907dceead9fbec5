"""Ruggieri's experiments (Using t-closeness anonymity to control for non-discrimination,
Trans. Data Privacy 7(2), 2014, §6), one command each, in the paper's setting.

    python benchmarks/ruggieri.py table1|fig5|fig6|fig7|fig8|fig9|fig10|fig11|all
        [--census DIR] [--repeat N] [--out DIR]

The setting (``benchmarks/_ruggieri.py``, ``fa.load("ruggieri", data=...)``): German
credit with its 7 PND attributes, Adult (all 48,842 rows) with its 6, Census-Income
(299,285 rows, when its files are in ``--census``; default ``$FAIRANON_DATA``, else
``shared/datasets`` beside the repository) with its 12; the PD attribute binarized
(not-single women, non-whites); dMondrian and dSabre (seed 0) at t run with
α-protection w.r.t. RD at bd_RD(t), which the verifier checks on every release.

The paper's figures are plots whose values are not printed; what the paper states about
each in its text (and the few numbers it prints: Table 1, the bounds of Fig. 6) is shown
beside fairanon's numbers, each statement marked HELD or NOT HELD with the measured
margin. Every command draws its figure with matplotlib into
``benchmarks/results/ruggieri_<experiment>.png`` and writes the numbers to
``ruggieri_<experiment>.json`` there. docs/papers.md (section "Ruggieri (2014)") lists
the outputs of one run and explains every difference.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
from fractions import Fraction

import numpy as np

import fairanon as fa
from fairanon.instances.datasets import RUGGIERI_TABLE1
from fairanon.models import measures as M
from fairanon.models.contexts import CONTEXT_MEASURES, contexts, extremes
from fairanon.models.describe import describe
from fairanon.models.metrics import count_queries, loss_metric, median_relative_error

import _ruggieri as R
from _data import DATA_HELP, data_dir

EXPERIMENTS = ("table1", "fig5", "fig6", "fig7", "fig8", "fig9", "fig10", "fig11")
METHODS = ("dmondrian", "dsabre")
#: Minimum supports of Fig. 8's extremes (eq. (1)).
FIG8_SUPPORTS = (1, 5, 20, 100)
#: "Reaching a bound": within this share of it (see :func:`reach`).
REACH = 0.95


class Claims:
    """The paper's statements next to fairanon's numbers, counted."""

    def __init__(self):
        self.rows: list[dict] = []

    def add(self, experiment: str, statement: str, held: bool, measured: str) -> None:
        self.rows.append({"experiment": experiment, "paper": statement, "held": bool(held), "fairanon": measured})
        print(f"  [{'HELD' if held else 'NOT HELD'}] paper: {statement}\n      fairanon: {measured}")

    def differences(self, experiment: str | None = None) -> int:
        return sum(1 for r in self.rows if not r["held"] and experiment in (None, r["experiment"]))


CLAIMS = Claims()


def _fmt(v, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, Fraction):
        v = float(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf"
        if math.isnan(v):
            return "nan"
        return f"{v:.{digits}g}"
    return str(v)


def _table(rows: list[dict], columns: list[str]) -> None:
    width = {c: max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in columns} if rows else {}
    print("  " + "  ".join(f"{c:>{width[c]}}" for c in columns))
    for r in rows:
        print("  " + "  ".join(f"{_fmt(r.get(c)):>{width[c]}}" for c in columns))


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, args, name: str, payload: dict) -> None:
    os.makedirs(args.out, exist_ok=True)
    png = os.path.join(args.out, f"ruggieri_{name}.png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    _plt().close(fig)
    with open(os.path.join(args.out, f"ruggieri_{name}.json"), "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=2, default=lambda o: float(o) if isinstance(o, (Fraction, np.floating)) else str(o))
    print(f"  drawn {png}")


def _data(args, data: str, drop=()):
    key = ("data", data, tuple(drop))
    if key not in args.cache:
        args.cache[key] = R.load(data, args.census, drop)
    return args.cache[key]


def _datasets(args, names=("german", "adult", "census")):
    out = []
    for name in names:
        inst = _data(args, name)
        if inst is None:
            print(f"  {name}: UCI Census-Income not found in {args.census!r}: skipped (pass --census DIR).")
            continue
        out.append((name, inst))
    return out


# ------------------------------------------------------------------ Table 1
def _continuous(inst, name: str) -> bool:
    """A PND attribute counts as continuous when numeric with more than 20 values."""
    attr = inst.schema[name]
    return attr.kind == "numeric" and len(np.unique(inst.codes(name))) > 20


def table1(args) -> None:
    print("\nTable 1 — summary of the data sets (paper vs fairanon, on the same UCI files)")
    rows = []
    for name, inst in _datasets(args):
        d = describe(inst)["discrimination"]
        p, tau = Fraction(d["p_minus"]), Fraction(d["tau"])
        pnd = inst.schema.generalizable
        cont = sum(_continuous(inst, c) for c in pnd)
        paper = RUGGIERI_TABLE1[name]
        mine = {
            "tuples": inst.n_rows, "discrete": len(pnd) - cont, "continuous": cont,
            "p_minus": round(float(p), 3), "tau": round(float(tau), 3), "t_max": round(float(max(p, 1 - p)), 3),
        }
        for key in ("tuples", "discrete", "continuous", "p_minus", "tau", "t_max"):
            rows.append({"data": name, "column": key, "paper": paper[key], "fairanon": mine[key],
                         "same": paper[key] == mine[key]})
        CLAIMS.add(
            "table1", f"{name}: tuples {paper['tuples']}, PND {paper['discrete']} discrete + {paper['continuous']} "
            f"continuous, p- {paper['p_minus']}, t range {paper['tau']} .. {paper['t_max']}",
            all(paper[k] == mine[k] for k in paper),
            f"tuples {mine['tuples']}, PND {mine['discrete']} + {mine['continuous']} ({', '.join(pnd)}), "
            f"p- {float(p):.4f}, tau(R) {float(tau):.4f}, t max {float(max(p, 1 - p)):.4f}",
        )
    _table(rows, ["data", "column", "paper", "fairanon", "same"])
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.axis("off")
    cells = [[r["data"], r["column"], _fmt(r["paper"]), _fmt(r["fairanon"])] for r in rows]
    ax.table(cellText=cells, colLabels=["data", "column", "paper", "fairanon"], loc="center")
    _save(fig, args, "table1", {"rows": rows})


# ------------------------------------------------------------------ Figs. 5-7
def _bounds(name: str, tau: float, p: Fraction) -> tuple[float, float]:
    """(lower, upper) bound of measure `name` on a context of maximum variational distance τ."""
    t = Fraction(tau).limit_denominator(10**9)
    if name in ("RD", "ED"):
        b = float(M.bound(name, t, p))
        return -b, b
    if name in ("RC", "EC"):
        return float(M.bound(name, t, p)), float(M.bound_opposite(name, t, p))
    return float(M.bound_opposite(name, t, p)), float(M.bound(name, t, p))


def reach(name: str, value: float, tau: float, p: Fraction) -> float:
    """How far a context goes towards the bound of its own τ: |f| / bd(τ) for RD and ED,
    log f / log bd(τ) for the ratios (against the upper bound when f >= 1, the lower one
    when f < 1); 1 = on the bound, > 1 would break Thm 10/15; NaN where the bound is 0,
    1 or infinite."""
    lo, hi = _bounds(name, tau, p)
    if name in ("RD", "ED"):
        return abs(value) / hi if hi > 0 else float("nan")
    bound = hi if value >= 1 else lo
    if bound in (0, math.inf) or bound == 1:
        # τ >= min(p-, 1 - p-): a rate of 0 or 1 on one side, the ratio bound is 0 or
        # infinite and met by any such context; not counted.
        return float("nan")
    if value <= 0 or math.isinf(value):
        return math.inf
    return math.log(value) / math.log(bound)


def _reach_rows(df, names, p, high: float) -> list[dict]:
    rows = []
    for name in names:
        r = np.array([reach(name, v, t, p) for v, t in zip(df[name].astype(float), df["tau"].astype(float))])
        tau = df["tau"].to_numpy(dtype=float)
        counted = ~np.isnan(r)
        i = int(np.nanargmax(r)) if counted.any() else 0
        hi = (tau >= high) & counted
        rows.append({
            "measure": name, "contexts": len(r), "counted": int(counted.sum()),
            "max_reach": float(r[i]) if counted.any() else float("nan"),
            "at_tau": float(tau[i]) if counted.any() else float("nan"),
            "reached": int((r[counted] >= REACH).sum()),
            "max_reach_low_tau": float(np.max(r[~hi & counted])) if (~hi & counted).any() else float("nan"),
            "max_reach_high_tau": float(np.max(r[hi])) if hi.any() else float("nan"),
            "above_bound": int((r[counted] > 1 + 1e-9).sum()),
        })
    return rows


def _scatter(ax, df, name, p, title, t_max):
    taus = np.linspace(0, t_max, 200)
    lo, hi = zip(*(_bounds(name, x, p) for x in taus))
    y = df[name].astype(float).to_numpy()
    finite = np.isfinite(y)
    ax.scatter(df["tau"].astype(float)[finite], y[finite], s=4, alpha=0.5)
    ax.plot(taus, hi, "r-", lw=1)
    ax.plot(taus, lo, "r-", lw=1)
    if name not in ("RD", "ED"):
        ax.set_yscale("log")
        ax.set_ylim(0.05, 20)
    ax.set_xlabel("τ")
    ax.set_title(title, fontsize=9)


def fig5(args) -> None:
    print("\nFig. 5 — German credit: τ vs each measure over closed PND itemsets (support >= 20; ED also >= 3)")
    inst = _data(args, "german")
    p = R.p_minus(inst)
    df = contexts(inst, min_support=20, itemsets=False)
    df3 = contexts(inst, min_support=3, measures=["ED", "ER", "EC"], itemsets=False)
    high = 0.15
    rows = _reach_rows(df, CONTEXT_MEASURES, p, high)
    rows3 = _reach_rows(df3, ["ED", "ER", "EC"], p, high)
    for r in rows3:
        r["measure"] += " (support >= 3)"
    print(f"  reach = |f| / bd_f(τ) (log scale for ratios) of each context; reached = contexts within {REACH:.0%} of the bound;"
          f" high τ = τ >= {high}")
    _table(rows + rows3, ["measure", "contexts", "counted", "max_reach", "at_tau", "reached", "max_reach_low_tau", "max_reach_high_tau", "above_bound"])
    by = {r["measure"]: r for r in rows + rows3}
    CLAIMS.add("fig5", "the bounds of Thm 10 and 15 hold on every context (the points lie between the curves)",
               all(r["above_bound"] == 0 for r in rows + rows3),
               f"{sum(r['above_bound'] for r in rows + rows3)} of {sum(r['contexts'] for r in rows + rows3)} points beyond a bound")
    pair = ["RD", "RR", "RC", "OR"]
    CLAIMS.add("fig5", f"RD, RR, RC, OR reach the bounds even for high τ (here: within {REACH:.0%} at τ >= {high})",
               all(by[m]["max_reach_high_tau"] >= REACH for m in pair),
               ", ".join(f"{m} {by[m]['max_reach_high_tau']:.3f}" for m in pair))
    ext = ["ED", "ER", "EC"]
    CLAIMS.add("fig5", "ED, ER, EC do not reach them at high τ (here: best reach at τ >= high below that of RD, RR, RC, OR)",
               max(by[m]["max_reach_high_tau"] for m in ext) < min(by[m]["max_reach_high_tau"] for m in pair),
               ", ".join(f"{m} {by[m]['max_reach_high_tau']:.3f}" for m in ext))
    low3 = {m: max(by[m]["max_reach_low_tau"], by[f"{m} (support >= 3)"]["max_reach"]) for m in ext}
    CLAIMS.add("fig5", f"ED, ER, EC reach the bounds for low τ or with a very low minimum support (here: within {REACH:.0%}"
               f" at τ < {high}, or at any τ with support >= 3)", all(v >= REACH for v in low3.values()),
               ", ".join(f"{m} {v:.3f}" for m, v in low3.items()))
    CLAIMS.add("fig5", "ED comes closer to its bound with minimum support 3 than with 20",
               by["ED (support >= 3)"]["max_reach"] > by["ED"]["max_reach"],
               f"max reach {by['ED (support >= 3)']['max_reach']:.3f} (support 3) vs {by['ED']['max_reach']:.3f} (support 20)")
    plt = _plt()
    fig, axes = plt.subplots(2, 4, figsize=(14, 6.5))
    t_max = float(max(p, 1 - p))
    for ax, name in zip(axes.flat, CONTEXT_MEASURES):
        _scatter(ax, df, name, p, f"{name}, support >= 20", t_max)
    _scatter(axes.flat[-1], df3, "ED", p, "ED, support >= 3", t_max)
    _save(fig, args, "fig5", {"reach": rows + rows3, "p_minus": p})


def _sanitized(args, t: str):
    key = ("german-sanitized", t)
    if key not in args.cache:
        inst = _data(args, "german")
        req = R.requirement(inst, t)
        out = {}
        for method in METHODS:
            rel, _, _ = R.run(method, inst, t)
            report = fa.verify(inst, rel, [req], metrics=False)
            assert report.passed, str(report)
            out[method] = rel
        args.cache[key] = out
    return args.cache[key]


def fig6(args) -> None:
    t = "0.15"
    print(f"\nFig. 6 — German credit after dMondrian and dSabre at t = {t}: RD and RR of closed PND itemsets")
    inst = _data(args, "german")
    p = R.p_minus(inst)
    bd_rd, bd_rr = M.bound("RD", Fraction(t), p), M.bound("RR", Fraction(t), p)
    rows, frames = [], {}
    for method, rel in _sanitized(args, t).items():
        df = contexts(inst, rel, min_support=20, measures=["RD", "RR"], itemsets=False)
        every = contexts(inst, rel, measures=["RD", "RR"], itemsets=False)
        frames[method] = df
        rows.append({
            "method": method, "contexts_s20": len(df), "max_tau_s20": df["tau"].max(), "max_tau_all": every["tau"].max(),
            "min_RD": df["RD"].min(), "max_RD": df["RD"].max(), "max_RD_all": every["RD"].max(),
            "min_RR": df["RR"].min(), "max_RR": df["RR"].max(), "max_RR_all": every["RR"].max(),
        })
    _table(rows, list(rows[0]))
    CLAIMS.add("fig6", f"bd_RD(0.15) = 0.3 and bd_RR(0.15) = 3 (p- = 0.3)", (bd_rd, bd_rr) == (Fraction(3, 10), 3),
               f"bd_RD = {bd_rd}, bd_RR = {bd_rr}")
    worst_tau = max(r["max_tau_all"] for r in rows)
    CLAIMS.add("fig6", "no closed PND itemset has τ > 0.3", worst_tau <= 0.3,
               f"largest τ over every itemset (any support) {worst_tau:.4f}: at most t = 0.15, as Lemma 8 gives")
    CLAIMS.add("fig6", "no closed PND itemset has RD > bd_RD(0.15) = 0.3 or RR > bd_RR(0.15) = 3",
               all(r["max_RD_all"] <= 0.3 and r["max_RR_all"] <= 3 for r in rows),
               "; ".join(f"{r['method']}: max RD {r['max_RD_all']:.4f}, max RR {r['max_RR_all']:.4f}" for r in rows))
    width = {r["method"]: (r["max_RD"] - r["min_RD"], r["max_RR"] / r["min_RR"]) for r in rows}
    CLAIMS.add("fig6", "dMondrian's release has a wider range of measure values, dSabre's narrow ranges (support >= 20)",
               width["dmondrian"][0] > width["dsabre"][0] and width["dmondrian"][1] > width["dsabre"][1],
               f"RD range {width['dmondrian'][0]:.4f} vs {width['dsabre'][0]:.4f}; RR max/min "
               f"{width['dmondrian'][1]:.3f} vs {width['dsabre'][1]:.3f}")
    plt = _plt()
    fig, axes = plt.subplots(2, 2, figsize=(9, 7))
    for i, method in enumerate(METHODS):
        for j, name in enumerate(("RD", "RR")):
            _scatter(axes[i, j], frames[method], name, p, f"{method}, t = {t}: {name}", 0.35)
            axes[i, j].set_xlim(0, 0.35)
    _save(fig, args, "fig6", {"rows": rows, "bd_RD": bd_rd, "bd_RR": bd_rr})


def fig7(args) -> None:
    t = "0.15"
    print(f"\nFig. 7 — German credit: distributions of RD and RR (closed itemsets, support >= 20): original, "
          f"dMondrian and dSabre at t = {t}")
    inst = _data(args, "german")
    frames = {"original": contexts(inst, min_support=20, measures=["RD", "RR"], itemsets=False)}
    for method, rel in _sanitized(args, t).items():
        frames[method] = contexts(inst, rel, min_support=20, measures=["RD", "RR"], itemsets=False)
    rows = []
    for name, df in frames.items():
        rd, rr = df["RD"].astype(float), df["RR"].astype(float)
        log_rr = np.abs(np.log(rr[(rr > 0) & np.isfinite(rr)]))
        rows.append({
            "data": name, "contexts": len(df), "mean_RD": rd.mean(), "mean_abs_RD": rd.abs().mean(),
            "share_abs_RD<=0.05": float((rd.abs() <= 0.05).mean()), "max_RD": rd.max(),
            "mean_abs_log_RR": float(log_rr.mean()), "max_RR": rr.max(),
        })
    _table(rows, list(rows[0]))
    by = {r["data"]: r for r in rows}
    CLAIMS.add("fig7", "both sanitized releases stay below bd_RD(0.15) = 0.3 and bd_RR(0.15) = 3",
               all(by[m]["max_RD"] <= 0.3 and by[m]["max_RR"] <= 3 for m in METHODS),
               ", ".join(f"{m}: max RD {by[m]['max_RD']:.3f}, max RR {by[m]['max_RR']:.3f}" for m in METHODS))
    CLAIMS.add("fig7", "both improve the degree of discrimination over the original (flatter around 0 for RD, 1 for RR)",
               all(by[m]["mean_abs_RD"] < by["original"]["mean_abs_RD"] and by[m]["mean_abs_log_RR"] < by["original"]["mean_abs_log_RR"] for m in METHODS),
               "mean |RD| " + ", ".join(f"{k} {by[k]['mean_abs_RD']:.4f}" for k in by)
               + "; mean |ln RR| " + ", ".join(f"{k} {by[k]['mean_abs_log_RR']:.4f}" for k in by))
    CLAIMS.add("fig7", "dSabre produces less discriminatory data than dMondrian",
               by["dsabre"]["mean_abs_RD"] < by["dmondrian"]["mean_abs_RD"],
               f"mean |RD| {by['dsabre']['mean_abs_RD']:.4f} (dSabre) vs {by['dmondrian']['mean_abs_RD']:.4f} (dMondrian); "
               f"max RD {by['dsabre']['max_RD']:.4f} vs {by['dmondrian']['max_RD']:.4f}")
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, df in frames.items():
        axes[0].hist(df["RD"].astype(float), bins=np.linspace(-0.6, 0.6, 49), histtype="step", density=True, label=name)
        rr = df["RR"].astype(float)
        axes[1].hist(rr[np.isfinite(rr)], bins=np.linspace(0, 4, 49), histtype="step", density=True, label=name)
    for ax, name in zip(axes, ("RD", "RR")):
        ax.set_xlabel(name)
        ax.legend()
    _save(fig, args, "fig7", {"rows": rows})


# ------------------------------------------------------------------ Fig. 8
def fig8(args) -> None:
    print("\nFig. 8 — extreme RD and ED over closed PND itemsets of the releases, against t, per minimum support")
    rows = []
    for name, inst in _datasets(args, ("german", "adult")):
        p = R.p_minus(inst)
        for t in R.T_GRID[name]:
            bd = float(M.bound("RD", Fraction(t), p))
            for method in METHODS:
                rel, _, _ = R.run(method, inst, t)
                req = R.requirement(inst, t)
                report = fa.verify(inst, rel, [req], metrics=False)
                df = contexts(inst, rel, measures=["RD", "ED"], itemsets=False)
                for e in extremes(df, ["RD", "ED"], FIG8_SUPPORTS).to_dict("records"):
                    rows.append({"data": name, "t": t, "method": method, "bd_RD": bd, "verified": report.passed, **e})
    _table([r for r in rows if r["min_support"] in (1, 20)],
           ["data", "t", "method", "min_support", "contexts", "bd_RD", "max_RD", "min_RD", "max_ED", "min_ED", "verified"])
    ok = all(r["verified"] and r["max_RD"] <= r["bd_RD"] + 1e-12 and r["min_RD"] >= -r["bd_RD"] - 1e-12 for r in rows)
    CLAIMS.add("fig8", "the extremes stay within ±bd_f(t) (Thm 20, 23)", ok,
               "every release verified bd_RD(t)-protective; |RD|, |ED| <= bd_RD(t) at every support" if ok else "a release exceeds its bound")
    def ratio(s):
        vals = [r["max_RD"] / r["bd_RD"] for r in rows if r["min_support"] == s and r["bd_RD"] > 0]
        return statistics.mean(vals)
    ratios = {s: ratio(s) for s in FIG8_SUPPORTS}
    CLAIMS.add("fig8", "the extremes approach the bd_f(t) limit for lower and lower minimum supports",
               all(ratios[a] >= ratios[b] for a, b in zip(FIG8_SUPPORTS, FIG8_SUPPORTS[1:])) and ratios[1] > ratios[FIG8_SUPPORTS[-1]],
               "mean max RD / bd_RD(t) over the runs: " + ", ".join(f"support {s}: {v:.3f}" for s, v in ratios.items()))
    near = [r for r in rows if r["min_support"] == 1]
    sharp = {m: sum(1 for r in near if r["method"] == m and r["max_RD"] >= REACH * r["bd_RD"]) for m in METHODS}
    runs = {m: sum(1 for r in near if r["method"] == m) for m in METHODS}
    CLAIMS.add("fig8", "without a minimum support the bounds can be considered sharp in practice (here: the largest"
               f" RD within {REACH:.0%} of bd_RD(t) in at least half of the runs)",
               sum(sharp.values()) >= len(near) / 2,
               f"support 1: dMondrian {sharp['dmondrian']} of {runs['dmondrian']} runs, dSabre {sharp['dsabre']} of "
               f"{runs['dsabre']}; dSabre's largest RD is "
               + ", ".join(sorted({f'{r["max_RD"]:.3f}' for r in near if r["method"] == "dsabre" and float(r["t"]) >= 0.3})
               ) + " at t >= 0.3")
    plt = _plt()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for i, name in enumerate(("german", "adult")):
        for j, method in enumerate(METHODS):
            ax = axes[i, j]
            sel = [r for r in rows if r["data"] == name and r["method"] == method]
            if not sel:
                continue
            ts = sorted({float(r["t"]) for r in sel})
            bd = [next(r["bd_RD"] for r in sel if float(r["t"]) == t) for t in ts]
            ax.plot(ts, bd, "k--", label="bd_RD(t)")
            ax.plot(ts, [-b for b in bd], "k--")
            for s in FIG8_SUPPORTS:
                pts = sorted((float(r["t"]), r["max_RD"], r["min_RD"], r["max_ED"]) for r in sel if r["min_support"] == s)
                ax.plot([x[0] for x in pts], [x[1] for x in pts], marker=".", label=f"max RD, s >= {s}")
                ax.plot([x[0] for x in pts], [x[2] for x in pts], marker=".", ls=":", label=f"min RD, s >= {s}")
            ax.set_title(f"{name}, {method}", fontsize=9)
            ax.set_xlabel("t")
            ax.legend(fontsize=6)
    _save(fig, args, "fig8", {"rows": rows, "ratios": ratios})


# ------------------------------------------------------------------ Figs. 9-11 (sweeps)
def sweep(args, name: str, inst, *, mre: bool = False, repeat: int = 1, label: str | None = None,
          methods=METHODS, options: dict | None = None) -> list[dict]:
    """Both methods over the t grid: status, classes, times, LM, optionally the MRE, and
    the verifier's verdict (α-protection at bd_RD(t); on Census-Income, where walking
    the 2^12 itemsets of every release takes minutes, t-closeness of the decision at
    the release's t, which implies it by Thm 10)."""
    label = label or name
    if args.experiment == "all" and options is None:  # one sweep serves Figs. 9, 10 and 11
        mre, repeat = True, (args.repeat if name != "census" else 1)
    key = ("sweep", label, mre, repeat, tuple(methods), repr(options))
    if key in args.cache:
        return args.cache[key]
    queries = None
    if mre:
        qkey = ("queries", label)
        if qkey not in args.cache:
            args.cache[qkey] = count_queries(inst, n_queries=10_000, seed=0)
        queries = args.cache[qkey]
    rows = []
    p = R.p_minus(inst)
    for t in R.T_GRID[name]:
        for method in methods:
            best = None
            for _ in range(repeat):
                rel, wall, cpu = R.run(method, inst, t, **(options or {}).get(method, {}))
                if best is None or cpu < best[2]:
                    best = (rel, wall, cpu)
            rel, wall, cpu = best
            if name == "census":
                check = fa.TCloseness(rel.provenance["t"], attribute=inst.schema.decision)
            else:
                check = R.requirement(inst, t)
            report = fa.verify(inst, rel, [check], metrics=False)
            row = {
                "data": label, "t": t, "method": method, "status": str(rel.status), "classes": rel.n_groups,
                "wall_s": wall, "cpu_s": cpu, "LM": loss_metric(inst, rel, numeric_loss="values")["LM_avg"],
                "bd_RD": float(M.bound("RD", Fraction(t), p)), "verified": report.passed, "checked": str(check),
                "achieved": report[str(check)].achieved,
            }
            if mre:
                row["MRE"] = median_relative_error(inst, rel, queries=queries)
            rows.append(row)
            print(f"    {label} t={t} {method}: {row['status']}, {row['classes']} classes, cpu {cpu:.2f} s, "
                  f"LM {row['LM']:.4f}" + (f", MRE {row['MRE']:.4f}" if mre else "") + f", verified {row['verified']}",
                  flush=True)
    args.cache[key] = rows
    return rows


def _pairs(rows, metric):
    """(t, dMondrian value, dSabre value) per t."""
    by = {(r["t"], r["method"]): r[metric] for r in rows}
    ts = sorted({r["t"] for r in rows}, key=float)
    return [(t, by[(t, "dmondrian")], by[(t, "dsabre")]) for t in ts]


def _plot_metric(ax, rows, metric, title, log=False):
    for method in sorted({r["method"] for r in rows}):
        pts = sorted((float(r["t"]), r[metric]) for r in rows if r["method"] == method)
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", ms=3, label=method)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("t")
    ax.set_ylabel(metric)
    if log:
        ax.set_yscale("log")
    ax.legend(fontsize=7)


def fig9(args) -> None:
    print("\nFig. 9 — information loss LM (average over PND and PD attributes) against t")
    data = _datasets(args)
    results = {name: sweep(args, name, inst) for name, inst in data}
    for name, rows in results.items():
        print(f"  {name}:")
        _table(rows, ["t", "method", "status", "classes", "LM", "bd_RD", "verified"])
    for name, rows in results.items():
        pairs = _pairs(rows, "LM")
        low = pairs[: max(1, len(pairs) // 2)]
        wins = sum(1 for _, m, s in low if s < m)
        CLAIMS.add("fig9", f"{name}: dSabre loses less than dMondrian for the lower values of t",
                   wins == len(low),
                   f"dSabre's LM below dMondrian's at {wins} of the {len(low)} lower t values ("
                   + ", ".join(f"t={t}: {s:.3f} vs {m:.3f}" for t, m, s in low) + ")")
        sab = [s for _, _, s in pairs]
        steps = sum(1 for a, b in zip(sab, sab[1:]) if abs(a - b) > 1e-12)
        CLAIMS.add("fig9", f"{name}: dSabre's LM is step-shaped (a whole tree level appears at once)",
                   steps < len(sab) - 1,
                   f"dSabre's LM changes at {steps} of the {len(sab) - 1} steps of t")
    plt = _plt()
    fig, axes = plt.subplots(1, len(results) + 1, figsize=(4.2 * (len(results) + 1), 3.8))
    axes = np.atleast_1d(axes)
    for ax, (name, rows) in zip(axes, results.items()):
        _plot_metric(ax, rows, "LM", name)
    ax = axes[-1]
    for name, rows in results.items():
        pts = sorted((r["bd_RD"], r["LM"]) for r in rows if r["method"] == "dsabre")
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", ms=3, label=f"{name}, dSabre")
    ax.set_xlabel("bd_RD(t) = bd_ED(t)")
    ax.set_ylabel("LM")
    ax.set_title("dSabre: LM against the guaranteed bound", fontsize=9)
    ax.legend(fontsize=7)
    _save(fig, args, "fig9", {"rows": results})


def fig10(args) -> None:
    print("\nFig. 10 — median relative error of 10,000 count queries against t")
    data = _datasets(args)
    results = {name: sweep(args, name, inst, mre=True) for name, inst in data}
    census = [n for n, _ in data if n == "census"]
    if census:
        dropped = _data(args, "census", ("wage per hour", "age"))
        results["census without wage per hour, age"] = sweep(
            args, "census", dropped, mre=True, label="census without wage per hour, age")
    for name, rows in results.items():
        print(f"  {name}:")
        _table(rows, ["t", "method", "status", "classes", "MRE", "LM", "verified"])
    for name, rows in results.items():
        pairs = _pairs(rows, "MRE")
        wins = sum(1 for _, m, s in pairs if s < m)
        if name in ("german", "adult"):
            CLAIMS.add("fig10", f"{name}: dSabre outperforms dMondrian on all values of t", wins == len(pairs),
                       f"dSabre's MRE lower at {wins} of {len(pairs)} t values (" + ", ".join(
                           f"t={t}: {s:.3f} vs {m:.3f}" for t, m, s in pairs) + ")")
        elif name == "census":
            CLAIMS.add("fig10", "census: dSabre does not outperform dMondrian", wins < len(pairs),
                       f"dSabre's MRE lower at {wins} of {len(pairs)} t values (" + ", ".join(
                           f"t={t}: {s:.3f} vs {m:.3f}" for t, m, s in pairs) + ")")
        else:
            ratio = [s / m for _, m, s in pairs if m > 0]
            gm = math.exp(statistics.mean(math.log(x) for x in ratio)) if ratio else float("nan")
            CLAIMS.add("fig10", "census without wage per hour and age: dSabre comparable to dMondrian (here: "
                       "geometric mean of the MRE ratio within 0.8 .. 1.25)", 0.8 <= gm <= 1.25,
                       f"dSabre / dMondrian MRE, geometric mean {gm:.3f}; lower at {wins} of {len(pairs)} t values")
    plt = _plt()
    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.8))
    for ax, (name, rows) in zip(np.atleast_1d(axes), results.items()):
        _plot_metric(ax, rows, "MRE", name)
    _save(fig, args, "fig10", {"rows": results})


def fig11(args) -> None:
    print("\nFig. 11 — running time against t (CPU seconds of the method call, best of --repeat; the"
          " machine may be shared, so CPU time is the steadier figure)")
    data = _datasets(args, ("adult", "census"))
    results = {}
    for name, inst in data:
        repeat = args.repeat if name != "census" else 1
        rows = list(sweep(args, name, inst, repeat=repeat))
        alt = sweep(args, name, inst, repeat=repeat, methods=("dsabre",), options={"dsabre": {"split_rule": "alternate"}},
                    label=f"{name} (alternate halving)")
        for r in alt:
            r = dict(r, method="dsabre, alternate halving")
            rows = rows + [r]
        results[name] = rows
    for name, rows in results.items():
        print(f"  {name}:")
        _table(rows, ["t", "method", "classes", "cpu_s", "wall_s"])
    for name, rows in results.items():
        mon = [r["cpu_s"] for r in sorted((r for r in rows if r["method"] == "dmondrian"), key=lambda r: float(r["t"]))]
        ups = sum(1 for a, b in zip(mon, mon[1:]) if b >= a)
        rho = _spearman(list(range(len(mon))), mon)
        CLAIMS.add("fig11", f"{name}: dMondrian's time increases with t", rho > 0.5,
                   f"Spearman correlation of time with t {rho:.2f}; {ups} of {len(mon) - 1} steps up "
                   f"({mon[0]:.2f} s at the lowest t, {max(mon):.2f} s at most)")
        for method in ("dsabre", "dsabre, alternate halving"):
            sab = [r["cpu_s"] for r in sorted((r for r in rows if r["method"] == method), key=lambda r: float(r["t"]))]
            i = int(np.argmax(sab))
            bell = 0 < i < len(sab) - 1 and sab[-1] < 0.8 * sab[i] and sab[0] < 0.8 * sab[i]
            CLAIMS.add("fig11", f"{name}: {method}'s time is bell-shaped in t (here: peak inside the range, both ends"
                       " at least 20 % below it)", bell,
                       f"{sab[0]:.2f} s at the lowest t, peak {sab[i]:.2f} s at t = {R.T_GRID[name][i]}, {sab[-1]:.2f} s at the highest")
    plt = _plt()
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.8))
    for ax, (name, rows) in zip(np.atleast_1d(axes), results.items()):
        _plot_metric(ax, rows, "cpu_s", name)
    _save(fig, args, "fig11", {"rows": results})


def _spearman(x, y) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    if np.std(rx) == 0 or np.std(ry) == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=EXPERIMENTS + ("all",))
    parser.add_argument("--census", default=data_dir(), help=DATA_HELP)
    parser.add_argument("--repeat", type=int, default=3, help="timing runs per point of Fig. 11 (Census-Income: 1)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = parser.parse_args(argv)
    args.cache = {}
    print(f"fairanon {fa.__version__}, Python {platform.python_version()}, {os.cpu_count()} cores; "
          "Ruggieri (2014) in the paper's setting")
    for name in EXPERIMENTS if args.experiment == "all" else (args.experiment,):
        globals()[name](args)
    n = CLAIMS.differences()
    print(f"\n{len(CLAIMS.rows)} statements of the paper checked, {n} not held"
          + (": " + "; ".join(f"{r['experiment']}: {r['paper']}" for r in CLAIMS.rows if not r["held"]) if n else "."))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"ruggieri_{args.experiment}_claims.json"), "w", encoding="utf-8") as fh:
        json.dump(CLAIMS.rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
