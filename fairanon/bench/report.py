"""The benchmark report: one self-contained HTML file and a terminal summary.

:func:`write_report` writes ``report.html`` into a benchmark output directory: every
plot is a PNG drawn with matplotlib (Agg canvas, no display or global backend change)
and embedded as a ``data:`` URI, and no script, style sheet or font is fetched, so the
file opens from disk or as a mail attachment. It holds

- the runs (outcome, status, verification, time, peak memory, losses);
- runtime and peak memory versus instance size, on log axes;
- loss versus parameter curves for every numeric parameter that varies;
- the sweeps a suite declares (``sweep`` and ``sweep_x`` columns of requirement sets);
- per instance, the re-identification risk of every release (the ``risk.*`` columns the
  verifier's figures fill) against its loss, with the Pareto front;
- at the top, the verdicts in plain words (:mod:`~fairanon.bench.verdicts`);
- per comparison (an instance, or an instance under one requirement set): how
  suppressed records were read, per-tuple privacy (class size) and loss histograms
  and ECDFs, the comparison views of docs/papers.md, DW-10 (:mod:`~fairanon.bench.plots`: the
  pairwise per-tuple scatter, the coverage and dominance heatmaps, privacy and
  fairness versus loss with the Pareto front, the win map), the ranking table
  (Copeland scores per property, Pareto sets, cycles), the unary indices and the
  multi-property verdicts.

:func:`print_summary` prints the runs and rankings as tables on the terminal (rich).
"""

from __future__ import annotations

import datetime
import html
import math
import os
import platform
import re
import sys

import numpy as np
import pandas as pd

from .compare import Comparison, _slug, compare_results
from .plots import (
    comparison_views,
    img,
    parameter_figure,
    risk_loss_figure,
    runtime_figure,
    sweep_figure,
)
from .quality import COMPARATORS, PROPERTIES
from .runner import read_results
from .verdicts import comparison_verdicts, headline

__all__ = ["print_summary", "summary_table", "write_report"]


def _numeric_parameters(frame: pd.DataFrame) -> list[str]:
    """Parameters with several numeric values among the runs of some instance."""
    out = []
    for col in frame.columns:
        if not col.startswith("p."):
            continue
        values = pd.to_numeric(frame[col], errors="coerce")
        per_instance = values.groupby(frame["instance"]).nunique()
        if values.notna().any() and (per_instance > 1).any():
            out.append(col)
    return out


def _varying(frame: pd.DataFrame, exclude: str) -> list[str]:
    return [
        c
        for c in frame.columns
        if c.startswith("p.") and c != exclude and frame[c].nunique(dropna=True) > 1
    ]


# ---------------------------------------------------------------------- tables
def summary_table(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (instance, release): runs, outcomes, median time, peak memory,
    verification, the main losses and the gaps to the lower bounds (``gap``: to the
    method's own bound on its objective; ``gap.ncp``, ``gap.lm``: to the NCP and LM
    bounds)."""
    rows = []
    for (instance, release), group in results.groupby(["instance", "release"], sort=False):
        ok = group[group["outcome"] == "ok"]
        row = {
            "instance": instance,
            "release": release,
            "ok/runs": f"{len(ok)}/{len(group)}",
            "failed": ", ".join(
                f"{o}×{c}" for o, c in group["outcome"].value_counts().items() if o != "ok"
            ),
            "status": ", ".join(sorted(map(str, ok["status"].dropna().unique())))
            if "status" in ok
            else "",
            "verified": bool(ok["verified"].astype(str).eq("True").all())
            if len(ok) and "verified" in ok
            else None,
            "time_s": float(ok["time_s"].median()) if len(ok) else math.nan,
            "peak_mb": float(group["peak_rss_mb"].max())
            if group["peak_rss_mb"].notna().any()
            else math.nan,
        }
        for metric in ("GCP", "LM_avg", "MRE", "discernibility", "gap", "gap.ncp", "gap.lm",
                       "risk.prosecutor_highest", "risk.prosecutor_average", "utility.tv_max"):
            if metric in ok.columns and pd.to_numeric(ok[metric], errors="coerce").notna().any():
                row[metric] = float(pd.to_numeric(ok[metric], errors="coerce").mean())
        rows.append(row)
    return pd.DataFrame(rows)


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "NO"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.3e}"
    return str(value)


def _html_table(frame: pd.DataFrame, *, index: bool = False, cls: str = "") -> str:
    head = ([frame.index.name or ""] if index else []) + [str(c) for c in frame.columns]
    out = [
        f'<table class="{cls}"><thead><tr>'
        + "".join(f"<th>{html.escape(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
    ]
    for idx, row in frame.iterrows():
        values = ([idx] if index else []) + row.tolist()
        # Text reads from the left, numbers (and signed scores) from the right.
        cells = [
            f'<td class="t">{html.escape(_fmt(v))}</td>'
            if isinstance(v, str) and not re.fullmatch(r"[+-]?\d+( ★)?", v)
            else f"<td>{html.escape(_fmt(v))}</td>"
            for v in values
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _ranking_html(comparison: Comparison) -> str:
    table = comparison.ranking_table()
    props = [p for p in PROPERTIES if any(k[0] == p for k in comparison.rankings)]
    main = pd.DataFrame(index=table.index)
    for p in props:
        if f"{p}:cov" in table.columns:
            star = table.get(f"pareto:{p}", pd.Series(False, index=table.index))
            main[f"{p} (cov)"] = [
                f"{s:+d}{' ★' if m else ''}" for s, m in zip(table[f"{p}:cov"], star)
            ]
    for name in list(comparison.multi_rankings) + list(comparison.goal_scores):
        main[name] = table[name]
    if "pareto:joint" in table.columns:
        main["joint Pareto"] = table["pareto:joint"]
    parts = [
        (
            "<p>Copeland scores (wins − losses over the other releases) under ▶cov, the "
            "tuple-aligned comparator; ★ marks the Pareto set of the property (no other release "
            "dominates it). Multi-property procedures follow, then the joint Pareto set.</p>"
        ),
        _html_table(main, index=True, cls="ranking"),
    ]
    cycles = comparison.cycles()
    if cycles:
        items = "".join(f"<li><b>{html.escape(c)}</b>: {html.escape(t)}</li>" for c, t in cycles)
        parts.append(
            '<div class="cycles"><p><b>Cycles.</b> These comparators are not transitive on '
            f"these releases, so their score order is an aggregate, not a ranking:</p><ul>{items}</ul></div>"
        )
    else:
        parts.append('<p class="nocycle">No comparator produced a cycle on these releases.</p>')
    full = table[[c for c in table.columns if ":" in c and not c.startswith("pareto:")]]
    parts.append(
        "<details><summary>Copeland scores under every comparator</summary>"
        "<p>▶spr orders as the mean does and ▶hv as the product (geometric mean) does "
        "(docs/papers.md, DW-6).</p>" + _html_table(full.T, index=True) + "</details>"
    )
    return "".join(parts)


def _unary_html(comparison: Comparison) -> str:
    cols = [
        "property",
        "release",
        "min",
        "mean",
        "max",
        "p_rank",
        "d_max",
        "variance",
        "gini",
        "floor_share",
    ]
    frame = comparison.unary[cols].copy()
    for col in cols[2:]:
        frame[col] = [float(v) if v is not None else math.nan for v in frame[col]]
    return (
        "<details><summary>Unary indices and bias descriptors</summary>"
        "<p>min, mean and max are of the values as measured; P_rank is the distance of the "
        "oriented vector to D_max (lower is better); variance, Gini and floor share describe "
        "the spread and have no better/worse direction.</p>" + _html_table(frame) + "</details>"
    )


def _pairwise_html(comparison: Comparison) -> str:
    frame = comparison.pairwise
    frame = frame[frame["property"].isin(["size", "loss"])].copy()
    for col in ("P_cov", "P_spr", "log_P_hv"):
        frame[col] = [float(v) for v in frame[col]]
    return (
        "<details><summary>Pairwise indices (class size and loss; all properties in "
        "comparison/&lt;instance&gt;/pairwise.csv)</summary>" + _html_table(frame) + "</details>"
    )


def _multi_html(comparison: Comparison) -> str:
    if comparison.multi.empty and not comparison.goal_scores:
        return ""
    frame = comparison.multi.copy()
    if not frame.empty:
        for col in ("value_first", "value_second"):
            frame[col] = [float(v) for v in frame[col]]
    parts = ["<h4>Multi-property comparison</h4>"]
    if not frame.empty:
        parts.append(_html_table(frame))
    for name, scores in comparison.goal_scores.items():
        parts.append(
            f"<p>{html.escape(name)} (lower is closer to the goals): "
            + ", ".join(f"{html.escape(r)} {float(v):.4g}" for r, v in scores.items())
            + "</p>"
        )
    return "".join(parts)


_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em;max-width:1250px;color:#222}
h1{font-size:1.6em} h2{border-bottom:1px solid #ccc;margin-top:2em} table{border-collapse:collapse;
font-size:.85em;margin:.6em 0} th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}
th{background:#f3f3f3} td.t{text-align:left} img.plot{max-width:100%;
display:block;margin:.6em 0} .cycles{background:#fff4e5;border-left:4px solid #f0a020;padding:.3em 1em}
.meta{color:#555;font-size:.9em} details{margin:.5em 0} summary{cursor:pointer;color:#135}
#verdicts{background:#f4f8fb;border:1px solid #cfe0ec;padding:.2em 1.2em 1em;margin-top:1em}
#verdicts h2{margin-top:.6em} ul.lead{font-size:1.05em} .verdict h3{font-size:1em;margin:.9em 0 .2em}
.verdict ul{margin:.2em 0} .verdict li{margin:.15em 0}
"""


def _comparison_html(name: str, comparison: Comparison) -> list[str]:
    """The section of one comparison: distributions, the comparison views
    (docs/papers.md, DW-10), the ranking and the tables."""
    slug = _slug(name)
    names = comparison.releases
    parts = [f"<h2 id='c-{html.escape(slug)}'>Releases of {html.escape(name)}</h2>"]
    parts.append(_setting_html(comparison))
    for view in comparison_views(comparison, name):
        parts.append(f"<h3>{html.escape(view.heading)}</h3>")
        if view.text:
            parts.append(f"<p>{html.escape(view.text, quote=False)}</p>")
        parts.append(img(view.figure, f"plot-{view.kind}-{slug}", view.alt))
    if len(names) < 2:
        parts.append(f"<p>One release of {html.escape(name)}: nothing to rank.</p>")
        parts.append(_unary_html(comparison))
        return parts
    parts.append("<h3>Ranking</h3>")
    parts.append(_ranking_html(comparison))
    parts.append(_unary_html(comparison))
    parts.append(_pairwise_html(comparison))
    parts.append(_multi_html(comparison))
    degenerate = comparison.metadata.get("hv_degenerate")
    if degenerate:
        parts.append(
            f"<p class='meta'>P_hv cannot separate releases on {html.escape(', '.join(degenerate))}: some "
            "oriented entries are 0 (e.g. a class holding one sensitive value has attribute-disclosure "
            "probability 1), so every product is 0 and ▶hv ties (docs/papers.md, DW-5).</p>"
        )
    return parts


def _setting_html(comparison: Comparison) -> str:
    """How suppressed records were read, and on which records each property was
    compared when not on all of them."""
    items = []
    suppression = comparison.metadata.get("suppression", {})
    policies = sorted({info.get("policy", "as_class") for info in suppression.values()})
    counts = {
        r: info.get("suppressed") for r, info in suppression.items() if info.get("suppressed")
    }
    text = (f"Suppressed records read under the policy {', '.join(policies) or 'as_class'} "
            "(docs/papers.md, DW-8)")
    if counts:
        text += ": " + ", ".join(f"{html.escape(r)} {c}" for r, c in counts.items())
    else:
        text += "; no release suppresses a record"
    items.append(text + ".")
    for prop, info in comparison.metadata.get("defined", {}).items():
        if info["unit"] == "group":
            items.append(f"{prop} is compared over its {info['compared']} groups (unit = group).")
        elif info["compared"] < info["total"]:
            items.append(
                f"{prop} is compared on the {info['compared']:,} of {info['total']:,} records where "
                "every release defines it."
            )
    warnings_ = [info["warning"] for info in suppression.values() if info.get("warning")]
    out = "<ul class='meta'>" + "".join(f"<li>{t}</li>" for t in items) + "</ul>"
    if warnings_:
        out += (
            "<div class='cycles'>"
            + "".join(f"<p>{html.escape(w)}</p>" for w in sorted(set(warnings_)))
            + "</div>"
        )
    return out


def _verdicts_html(comparisons: dict, results: pd.DataFrame) -> str:
    parts = ["<section id='verdicts'><h2>Verdicts</h2>"]
    parts.append(
        "<ul class='lead'>"
        + "".join(f"<li>{html.escape(t)}</li>" for t in headline(comparisons, results))
        + "</ul>"
    )
    for name, comparison in comparisons.items():
        items = comparison_verdicts(comparison, results)
        parts.append(
            f"<div class='verdict'><h3><a href='#c-{html.escape(_slug(name))}'>{html.escape(name)}</a></h3><ul>"
            + "".join(f"<li>{html.escape(t)}</li>" for t in items)
            + "</ul></div>"
        )
    parts.append("</section>")
    return "".join(parts)


#: The loss risk is drawn against: the first of these that the runs report.
_RISK_LOSSES = ("LM_avg", "GCP", "discernibility")


def _risk_html(ok: pd.DataFrame) -> list[str]:
    """Risk versus loss per instance with at least two releases: the verifier's risk
    figures of every run against its loss, and their Pareto front."""
    if "risk.prosecutor_average" not in ok.columns:
        return []
    parts = []
    for instance, group in ok.groupby("instance", sort=False):
        loss = next((c for c in _RISK_LOSSES if c in group.columns
                     and pd.to_numeric(group[c], errors="coerce").notna().any()), None)
        if loss is None or group["release"].nunique() < 2:
            continue
        parts.append(f"<h3>{html.escape(str(instance))}: risk versus {html.escape(loss)}</h3>")
        parts.append(img(risk_loss_figure(group, loss), f"plot-risk-loss-{_slug(str(instance))}",
                         f"re-identification risk versus {loss} of {instance}"))
    if parts:
        parts.insert(0, (
            "<h2>Risk versus loss</h2><p>The re-identification risk of each release (its classes as "
            "the verifier reads them, the suppressed records one class: docs/risk.md) against its "
            "loss; means over seeds. A release on the red front has no other that is both less "
            "risky and loses less. <code>fairanon risk</code> gives every figure of one release.</p>"
        ))
    return parts


def write_report(out: str, comparisons: dict | None = None, *, title: str | None = None) -> str:
    """Write ``report.html`` for a benchmark output directory and return its path.

    Parameters
    ----------
    out : str
        A directory written by :func:`~fairanon.bench.runner.run_suite`.
    comparisons : dict instance -> Comparison, optional
        Default: :func:`~fairanon.bench.compare.compare_results` of `out`.
    title : str, optional
    """
    from .._version import __version__

    results = read_results(out)
    if "run_index" in results.columns:
        results = results.sort_values("run_index", kind="stable")
    if comparisons is None:
        comparisons = compare_results(out)
    title = title or f"fairanon benchmark: {os.path.basename(os.path.normpath(out))}"
    ok = results[results["outcome"] == "ok"].copy()
    failed = results[results["outcome"] != "ok"].copy()
    for frame in (ok, failed):
        for col in ("time_s", "peak_rss_mb", "n_rows", "wall_s"):
            if col in frame.columns:
                frame[col] = pd.to_numeric(frame[col], errors="coerce")
    counts = ", ".join(f"{c} {o}" for o, c in results["outcome"].value_counts().items())
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        (
            f"<p class='meta'>{len(results)} runs ({html.escape(counts)}) · written "
            f"{datetime.datetime.now().isoformat(timespec='seconds')} · fairanon {__version__}"
            f" · Python {platform.python_version()} · {os.cpu_count()} cores · "
            f"{html.escape(platform.platform())}</p>"
        ),
        _verdicts_html(comparisons, results) if comparisons else "",
        "<h2>Runs</h2>",
        (
            "<p>Median method time over repetitions; peak memory is the largest ru_maxrss of the "
            "runs' processes; losses are averaged over seeds.</p>"
        ),
        _html_table(summary_table(results)),
    ]
    if len(failed):
        cols = [
            c
            for c in ("label", "outcome", "timeout_phase", "error", "wall_s")
            if c in failed.columns
        ]
        parts += ["<h3>Runs that did not finish</h3>", _html_table(failed[cols])]

    if len(ok):
        parts += [
            "<h2>Runtime versus size</h2>",
            img(
                runtime_figure(ok, failed),
                "plot-runtime-size",
                "runtime and peak memory versus number of rows",
            ),
        ]
    parameters = [x for x in _numeric_parameters(ok)]
    if parameters:
        parts.append(
            "<h2>Loss versus parameter</h2><p>One series per instance, algorithm and "
            "requirement set (and other varying parameters); means over seeds and repetitions.</p>"
        )
    for x in parameters:
        group = ok[pd.to_numeric(ok[x], errors="coerce").notna()]
        parts.append(f"<h3>{html.escape(x[2:])}</h3>")
        fig = parameter_figure(group.assign(**{x: pd.to_numeric(group[x])}), x, _varying(group, x))
        parts.append(img(fig, f"plot-param-{x}", f"losses and time versus {x[2:]}"))

    if "sweep" in ok.columns and ok["sweep"].notna().any():
        parts.append(
            "<h2>Sweeps</h2><p>The sweeps the suite declares: time of every run, stars and "
            "discernibility of the releases that meet their requirements, one series per "
            "algorithm.</p>"
        )
        for sweep, group in ok[ok["sweep"].notna()].groupby("sweep", sort=False):
            parts.append(f"<h3>{html.escape(str(sweep))}</h3>")
            parts.append(img(sweep_figure(group, str(sweep)), f"plot-sweep-{sweep}", f"sweep over {sweep}"))

    parts += _risk_html(ok)

    for name, comparison in comparisons.items():
        parts += _comparison_html(name, comparison)
    parts.append(
        "<h2>Notes</h2><ul>"
        "<li>Property vectors (Dewri et al., EDBT 2009) are per record; lower-is-better ones are "
        "flipped against their upper bound (risk, adisc, tclose against 1, sfreq against N, "
        "loss against the number of quasi-identifiers) before comparing; see "
        "comparison/&lt;instance&gt;/report.json.</li>"
        "<li>Fairness per record (docs/papers.md, DW-10): alpha_&lt;measure&gt; is the worst "
        "discrimination measure of the contexts (itemsets of released values) the record's class "
        "falls in, so the worst record shows the verifier's achieved alpha; an unbounded value "
        "(Ruggieri's x/0) is recorded as N + 1 (N² + 1 for the odds ratio), above every finite "
        "one, which order-based comparators read exactly but means and sums do not. div_share is "
        "the share of a diversity constraint's target records left visible, per group or "
        "broadcast to the records it targets.</li>"
        "<li>Releases are compared only with releases of the same instance; repetitions are "
        "timing repeats and only the first is compared.</li>"
        f"<li>Comparators: {', '.join(COMPARATORS)}; ▶cov is not transitive, so its cycles are listed.</li>"
        "</ul></body></html>"
    )
    path = os.path.join(out, "report.html")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
    return path


# ---------------------------------------------------------------------- terminal
def print_summary(results: pd.DataFrame, comparisons: dict | None = None, *, console=None) -> None:
    """Print the runs and, per comparison, the rankings under ▶cov as rich tables, then
    the verdicts in words."""
    from rich.console import Console
    from rich.table import Table

    # Piped output gets a wide table rather than rich's 80-column default.
    console = console or (Console() if sys.stdout.isatty() else Console(width=160))
    if "run_index" in results.columns:
        results = results.sort_values("run_index", kind="stable")
    summary = summary_table(results)
    table = Table(title="Runs", show_lines=False)
    for col in summary.columns:
        table.add_column(
            str(col),
            justify="left" if col in ("instance", "release", "failed", "status") else "right",
        )
    for _, row in summary.iterrows():
        table.add_row(*[_fmt(v) for v in row.tolist()])
    console.print(table)
    for instance, comparison in (comparisons or {}).items():
        if len(comparison.releases) < 2:
            continue
        ranking = comparison.ranking_table()
        cols = [
            c
            for c in ["size:cov", "loss:cov", "util_paper:cov", "ldist:cov"]
            + [f"{p}:cov" for p in PROPERTIES if PROPERTIES[p].family == "fairness"]
            if c in ranking.columns
        ]
        cols += list(comparison.multi_rankings) + list(comparison.goal_scores)
        t = Table(title=f"Copeland scores on {instance} (▶cov; * = Pareto set)")
        t.add_column("release", justify="left")
        for c in cols:
            t.add_column(c, justify="right")
        for release, row in ranking.iterrows():
            cells = []
            for c in cols:
                prop = c.split(":")[0]
                star = "*" if row.get(f"pareto:{prop}") is True else ""
                value = row[c]
                cells.append(
                    f"{value:+d}{star}" if isinstance(value, (int, np.integer)) else _fmt(value)
                )
            t.add_row(release, *cells)
        console.print(t)
        for comp, text in comparison.cycles():
            console.print(f"[yellow]cycle under {comp}:[/yellow] {text}")
    if comparisons:
        console.print("[bold]Verdicts[/bold]")
        for line in headline(comparisons, results):
            console.print(f"  {line}", highlight=False)
        for name, comparison in comparisons.items():
            console.print(f"[bold]{name}[/bold]", highlight=False)
            for line in comparison_verdicts(comparison, results):
                console.print(f"  - {line}", highlight=False)
