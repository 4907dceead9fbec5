"""The benchmark report: one self-contained HTML file and a terminal summary.

:func:`write_report` writes ``report.html`` into a benchmark output directory: every
plot is a PNG drawn with matplotlib (Agg canvas, no display or global backend change)
and embedded as a ``data:`` URI, and no script, style sheet or font is fetched, so the
file opens from disk or as a mail attachment. It holds

- the runs (outcome, status, verification, time, peak memory, losses);
- runtime and peak memory versus instance size, on log axes;
- loss versus parameter curves for every numeric parameter that varies;
- per instance: per-tuple privacy (class size) and loss histograms and ECDFs, the
  coverage matrix, the ranking table (Copeland scores, Pareto sets, cycles), the
  unary indices and the multi-property verdicts.

:func:`print_summary` prints the runs and rankings as tables on the terminal (rich).
"""

from __future__ import annotations

import base64
import datetime
import html
import io
import math
import os
import platform
import re
import sys
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .compare import Comparison, compare_results
from .quality import COMPARATORS, PROPERTIES
from .runner import read_results

__all__ = ["print_summary", "summary_table", "write_report"]

_LOSS_METRICS = ("GCP", "LM_avg", "MRE", "discernibility", "C_avg")
_MAX_SERIES = 12


# ---------------------------------------------------------------------- figures
def _figure(n_panels: int, *, width: float = 5.2, height: float = 3.6):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    cols = min(n_panels, 2)
    rows = math.ceil(n_panels / cols)
    fig = Figure(figsize=(width * cols, height * rows))
    FigureCanvasAgg(fig)
    # Fixed margins: a layout engine would draw every figure twice.
    fig.subplots_adjust(
        left=0.1, right=0.97, bottom=0.16 / rows, top=1 - 0.1 / rows, wspace=0.28, hspace=0.4
    )
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return fig, axes[:n_panels]


def _log_axis(axis) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator

    # Plain numbers on major and a few minor ticks, so that a range under one decade
    # still has labels.
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(1, 10))))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _img(fig, ident: str, alt: str) -> str:
    return (
        f'<img class="plot" id="{html.escape(ident)}" alt="{html.escape(alt)}" '
        f'src="data:image/png;base64,{_png(fig)}">'
    )


def _wide(values: list[np.ndarray]) -> bool:
    low = min(float(np.min(v)) for v in values)
    high = max(float(np.max(v)) for v in values)
    return low > 0 and high / low > 20


def _distribution_figure(vectors: Mapping[str, np.ndarray], prop: str):
    """Histogram (share of records) and ECDF of one per-tuple property, one series per
    release."""
    fig, (hist, ecdf) = _figure(2)
    values = [np.asarray(v, dtype=float) for v in vectors.values()]
    log = _wide(values)
    low = min(float(v.min()) for v in values)
    high = max(float(v.max()) for v in values)
    if log:
        bins = np.geomspace(low, high * 1.0001, 40)
    elif high > low:
        bins = np.linspace(low, high, 40)
    else:
        bins = np.linspace(low - 0.5, high + 0.5, 3)
    label = PROPERTIES[prop].label if prop in PROPERTIES else prop
    for i, (name, v) in enumerate(vectors.items()):
        v = np.asarray(v, dtype=float)
        if i >= _MAX_SERIES:
            break
        weights = np.full(len(v), 1.0 / len(v))
        hist.hist(v, bins=bins, weights=weights, histtype="step", linewidth=1.4, label=name)
        xs = np.sort(v)
        ecdf.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post", linewidth=1.4, label=name)
    for ax in (hist, ecdf):
        if log:
            ax.set_xscale("log")
            _log_axis(ax.xaxis)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    hist.set_ylabel("share of records")
    hist.set_title("histogram")
    ecdf.set_ylabel("share of records ≤ x")
    ecdf.set_title("ECDF")
    ecdf.set_ylim(0, 1.02)
    ecdf.legend(fontsize="x-small", loc="lower right")
    return fig


def _coverage_figure(comparison: Comparison, prop: str):
    names = comparison.releases
    n = len(names)
    pair = comparison.pairwise[comparison.pairwise["property"] == prop]
    matrix = np.full((n, n), np.nan)
    pos = {name: i for i, name in enumerate(names)}
    for _, row in pair.iterrows():
        matrix[pos[row["first"]], pos[row["second"]]] = float(row["P_cov"])
    np.fill_diagonal(matrix, 1.0)
    side = max(4.0, 0.55 * n + 2.5)
    fig, (ax,) = _figure(1, width=side + 1.5, height=side)
    fig.subplots_adjust(left=0.3, bottom=0.3, right=0.95, top=0.92)
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(n), [_short(x) for x in names], rotation=45, ha="right", fontsize="x-small")
    ax.set_yticks(range(n), [_short(x) for x in names], fontsize="x-small")
    ax.set_xlabel("second release (D2)")
    ax.set_ylabel("first release (D1)")
    ax.set_title(f"P_cov(D1, D2) on {prop}")
    if n <= 12:
        for i in range(n):
            for j in range(n):
                ax.text(
                    j,
                    i,
                    f"{matrix[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize="xx-small",
                    color="white" if matrix[i, j] < 0.6 else "black",
                )
    fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def _short(text: str, width: int = 28) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _series_plot(
    ax, frame: pd.DataFrame, x: str, y: str, series: str, *, logx=False, logy=False
) -> None:
    shown = 0
    for name, group in frame.groupby(series, sort=False):
        if shown >= _MAX_SERIES:
            break
        data = group.groupby(x, sort=True)[y].mean().dropna()
        if data.empty:
            continue
        ax.plot(
            data.index.to_numpy(dtype=float),
            data.to_numpy(dtype=float),
            marker="o",
            linewidth=1.2,
            markersize=4,
            label=_short(str(name), 40),
        )
        shown += 1
    if logx:
        ax.set_xscale("log")
        _log_axis(ax.xaxis)
    if logy:
        ax.set_yscale("log")
        _log_axis(ax.yaxis)
    ax.set_xlabel(x.removeprefix("p."))
    ax.set_ylabel(y)
    ax.grid(alpha=0.3, which="both")


def _runtime_figure(ok: pd.DataFrame, failed: pd.DataFrame):
    fig, (time_ax, mem_ax) = _figure(2)
    frame = ok.assign(series=ok["release"].astype(str))
    positive = frame[frame["time_s"] > 0]
    _series_plot(time_ax, positive, "n_rows", "time_s", "series", logx=True, logy=True)
    _series_plot(
        mem_ax,
        frame[frame["peak_rss_mb"] > 0],
        "n_rows",
        "peak_rss_mb",
        "series",
        logx=True,
        logy=True,
    )
    if len(failed):
        bad = failed[failed["wall_s"] > 0]
        time_ax.scatter(
            bad["n_rows"], bad["wall_s"], marker="x", color="red", label="timeout / memout / error"
        )
    time_ax.set_title("runtime of the method")
    time_ax.set_ylabel("seconds")
    mem_ax.set_title("peak memory of the run's process")
    mem_ax.set_ylabel("MB (ru_maxrss)")
    time_ax.legend(fontsize="x-small")
    return fig


def _parameter_figure(frame: pd.DataFrame, x: str, others: list[str]):
    metrics = [m for m in _LOSS_METRICS if m in frame.columns and frame[m].notna().any()][:3] + [
        "time_s"
    ]
    fig, axes = _figure(len(metrics))
    labels = (
        frame["instance"].astype(str)
        + " · "
        + frame["algorithm"].astype(str)
        + " "
        + frame["reqset"].astype(str)
    )
    for col in others:
        labels = labels + " " + col[2:] + "=" + frame[col].astype(str)
    data = frame.assign(series=labels)
    for ax, metric in zip(axes, metrics):
        logy = metric in ("discernibility", "time_s") and (data[metric] > 0).all()
        _series_plot(ax, data, x, metric, "series", logy=logy)
        ax.set_title(f"{metric} versus {x[2:]}")
    axes[0].legend(fontsize="x-small")
    return fig


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
        for metric in ("GCP", "LM_avg", "MRE", "discernibility", "gap", "gap.ncp", "gap.lm"):
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
        "(comparison spec F5, F7).</p>" + _html_table(full.T, index=True) + "</details>"
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
"""


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
            _img(
                _runtime_figure(ok, failed),
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
        fig = _parameter_figure(group.assign(**{x: pd.to_numeric(group[x])}), x, _varying(group, x))
        parts.append(_img(fig, f"plot-param-{x}", f"losses and time versus {x[2:]}"))

    for instance, comparison in comparisons.items():
        parts.append(f"<h2>Releases of {html.escape(instance)}</h2>")
        vectors = _load_vectors(out, results, comparison)
        for prop, what in (("size", "privacy: equivalence-class size"), ("loss", "loss")):
            if vectors and all(prop in v.columns for v in vectors.values()):
                parts.append(f"<h3>Per-tuple {html.escape(what)}</h3>")
                fig = _distribution_figure(
                    {n: v[prop].to_numpy() for n, v in vectors.items()}, prop
                )
                parts.append(
                    _img(fig, f"plot-{prop}-{instance}", f"per-tuple {what} on {instance}")
                )
        if len(comparison.releases) > 1 and "size" in set(comparison.pairwise.get("property", [])):
            parts.append("<h3>Coverage of class sizes</h3>")
            parts.append(
                _img(
                    _coverage_figure(comparison, "size"),
                    f"plot-coverage-{instance}",
                    f"coverage matrix of class sizes on {instance}",
                )
            )
        if len(comparison.releases) < 2:
            parts.append(f"<p>One release of {html.escape(instance)}: nothing to rank.</p>")
            parts.append(_unary_html(comparison))
            continue
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
                "probability 1), so every product is 0 and ▶hv ties (comparison spec P-11).</p>"
            )
    parts.append(
        "<h2>Notes</h2><ul>"
        "<li>Property vectors (Dewri et al., EDBT 2009) are per record; lower-is-better ones are "
        "flipped against their upper bound (risk, adisc, tclose against 1, sfreq against N, "
        "loss against the number of quasi-identifiers) before comparing; see "
        "comparison/&lt;instance&gt;/report.json.</li>"
        "<li>Releases are compared only with releases of the same instance; repetitions are "
        "timing repeats and only the first is compared.</li>"
        f"<li>Comparators: {', '.join(COMPARATORS)}; ▶cov is not transitive, so its cycles are listed.</li>"
        "</ul></body></html>"
    )
    path = os.path.join(out, "report.html")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
    return path


def _load_vectors(out: str, results: pd.DataFrame, comparison: Comparison) -> dict:
    rows = results[
        (results["instance"] == comparison.instance)
        & (results["outcome"] == "ok")
        & (results["repetition"] == 0)
    ].drop_duplicates("release")
    vectors = {}
    for _, row in rows.iterrows():
        if row["release"] in comparison.releases and isinstance(row.get("vectors"), str):
            path = os.path.join(out, row["vectors"])
            if os.path.exists(path):
                vectors[row["release"]] = pd.read_parquet(path)
    return vectors


# ---------------------------------------------------------------------- terminal
def print_summary(results: pd.DataFrame, comparisons: dict | None = None, *, console=None) -> None:
    """Print the runs and, per instance, the rankings under ▶cov as rich tables."""
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
            for c in ("size:cov", "loss:cov", "util_paper:cov", "ldist:cov")
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
