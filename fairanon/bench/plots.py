"""The figures of the benchmark report, drawn with matplotlib on an Agg canvas (no
display, no global backend change) and embedded as PNG ``data:`` URIs.

- runtime and peak memory versus size, losses versus every swept parameter, and
  time, stars and discernibility along each sweep a suite declares;
- per comparison (docs/papers.md, DW-10): histograms and ECDFs of a per-tuple property
  (items 2-3), the pairwise per-tuple scatter of two releases with its counts and
  indices (item 4), the P_cov and dominance-outcome heatmaps (item 5), privacy and
  fairness versus loss with the Pareto front (item 6) and the win map, the share of
  records each release serves best (item 7); :func:`comparison_views` yields them in
  the report's order for the report and the app's Compare page.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..models.metrics import infinite_cap
from .compare import Comparison
from .quality import PROPERTIES

__all__ = [
    "View",
    "cap_of",
    "comparison_views",
    "coverage_figure",
    "display_names",
    "distribution_figure",
    "dominance_figure",
    "img",
    "parameter_figure",
    "pick_pair",
    "runtime_figure",
    "scatter_figure",
    "short",
    "shown_properties",
    "sweep_figure",
    "tradeoff_figure",
    "values",
    "win_shares",
    "winmap_figure",
]

_LOSS_METRICS = ("GCP", "LM_avg", "MRE", "discernibility", "C_avg")
#: The most points a scatter draws as vector markers (see :func:`scatter_figure`).
RASTER_POINTS = 2000
_MAX_SERIES = 12


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


def img(fig, ident: str, alt: str) -> str:
    return (
        f'<img class="plot" id="{html.escape(ident)}" alt="{html.escape(alt)}" '
        f'src="data:image/png;base64,{_png(fig)}">'
    )


def _wide(values: list[np.ndarray]) -> bool:
    low = min(float(np.min(v)) for v in values)
    high = max(float(np.max(v)) for v in values)
    return low > 0 and high / low > 20


def distribution_figure(vectors: Mapping[str, np.ndarray], prop: str):
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


def coverage_figure(comparison: Comparison, prop: str):
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
    show = display_names(names)
    ax.set_xticks(
        range(n), [short(show[x]) for x in names], rotation=45, ha="right", fontsize="x-small"
    )
    ax.set_yticks(range(n), [short(show[x]) for x in names], fontsize="x-small")
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


def short(text: str, width: int = 28) -> str:
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
            label=short(str(name), 40),
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


def sweep_figure(frame: pd.DataFrame, title: str):
    """A sweep declared by the suite (``sweep`` and ``sweep_x`` columns): time, stars and
    discernibility against ``sweep_x``, one series per algorithm; runs without a release
    meeting the requirements (INFEASIBLE, UNKNOWN) count for time only."""
    metrics = [m for m in ("time_s", "suppressed_cells", "discernibility") if m in frame.columns]
    fig, axes = _figure(len(metrics))
    x = pd.to_numeric(frame["sweep_x"], errors="coerce")
    if x.isna().any():  # categorical values (e.g. distributions): positions in order of appearance
        labels = list(dict.fromkeys(frame["sweep_x"].astype(str)))
        x = frame["sweep_x"].astype(str).map({v: i for i, v in enumerate(labels)}).astype(float)
    else:
        labels = None
    solved = frame["status"].astype(str).isin(["OPTIMAL", "FEASIBLE"])
    data = frame.assign(x=x, series=frame["algorithm"].astype(str))
    for ax, metric in zip(axes, metrics):
        part = data if metric == "time_s" else data[solved]
        part = part.assign(**{metric: pd.to_numeric(part[metric], errors="coerce")})
        logy = metric in ("time_s", "discernibility") and (part[metric].dropna() > 0).all()
        _series_plot(ax, part, "x", metric, "series", logy=logy)
        ax.set_xlabel(title)
        if labels is not None:
            ax.set_xticks(range(len(labels)), labels)
        ax.set_title(f"{metric} versus {title}")
    axes[0].legend(fontsize="x-small")
    return fig


def runtime_figure(ok: pd.DataFrame, failed: pd.DataFrame):
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


def parameter_figure(frame: pd.DataFrame, x: str, others: list[str]):
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


# ---------------------------------------------------------------------- comparison views
def display_names(names: list[str]) -> dict[str, str]:
    """Release names without the words they all end with (the requirement set, when
    the comparison is of one requirement set).

    >>> display_names(["mondrian k+t", "sabre k+t"])
    {'mondrian k+t': 'mondrian', 'sabre k+t': 'sabre'}
    """
    split = [n.split(" ") for n in names]
    common = 0
    while all(len(w) > common + 1 for w in split) and len({w[-1 - common] for w in split}) == 1:
        common += 1
    if len(names) < 2 or not common:
        return {n: n for n in names}
    return {n: " ".join(w[:-common]) for n, w in zip(names, split)}


def shown_properties(comparison: Comparison) -> list[str]:
    """The properties the comparison views show, in reading order: privacy (class
    size), utility (loss), then the fairness properties measured."""
    compared = list(comparison.metadata.get("defined", {}))
    out = [p for p in ("size", "loss") if p in compared]
    out += [p for p in compared if PROPERTIES[p].family == "fairness"]
    return out


def values(comparison: Comparison, prop: str) -> dict[str, np.ndarray]:
    """Per release, the values of `prop` as measured (floats) on the records (or
    groups) where every release defines it, in one order."""
    unit = comparison.metadata.get("defined", {}).get(prop, {}).get("unit", "tuple")
    frames = comparison.group_vectors if unit == "group" else comparison.vectors
    series = {n: frames[n][prop] for n in comparison.releases}
    mask = np.logical_and.reduce([s.notna().to_numpy() for s in series.values()])
    return {n: np.array([float(v) for v in s.to_numpy()[mask]]) for n, s in series.items()}


def cap_of(comparison: Comparison, prop: str) -> float | None:
    """The value recording an unbounded measure in `prop` (alpha-protection by a ratio
    measure), or None."""
    if not prop.startswith("alpha_"):
        return None
    n = comparison.metadata.get("context", {}).get("n_rows")
    return None if n is None else infinite_cap(prop[len("alpha_") :], int(n))


def _unbounded(arrays: list[np.ndarray], cap: float | None, log: bool):
    """Values at the cap moved one step above the largest finite value: the arrays to
    plot and that position (None when no value is at the cap)."""
    if cap is None or not any((a >= cap).any() for a in arrays):
        return arrays, None
    finite = [a[a < cap] for a in arrays]
    top = max((float(f.max()) for f in finite if len(f)), default=1.0)
    low = min((float(f.min()) for f in finite if len(f)), default=top)
    spot = top * 2.0 if log and top > 0 else top + max((top - low) * 0.15, 0.5)
    return [np.where(a >= cap, spot, a) for a in arrays], spot


def _mark_unbounded(axis, spot: float | None) -> None:
    """Tick the position of the unbounded values "∞" (after the data is drawn)."""
    if spot is None:
        return
    from matplotlib.ticker import FixedLocator, FuncFormatter

    low = axis.get_view_interval()[0]
    ticks = [t for t in axis.get_ticklocs() if low <= t < spot / 1.5] + [spot]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(
        FuncFormatter(lambda v, _: "∞" if abs(v - spot) <= 1e-9 * max(1.0, spot) else f"{v:g}")
    )


def _higher(prop: str, arr: np.ndarray) -> np.ndarray:
    """Oriented for order only (higher is better)."""
    return arr if PROPERTIES[prop].direction == "higher" else -arr


def _better_text(prop: str) -> str:
    return "higher is better" if PROPERTIES[prop].direction == "higher" else "lower is better"


def _label(prop: str) -> str:
    return PROPERTIES[prop].label if prop in PROPERTIES else prop


def pick_pair(comparison: Comparison, props: list[str]) -> tuple[str, str] | None:
    """The two releases the pairwise scatter shows: the highest total Copeland score
    under ▶cov over `props` (the input order breaks ties)."""
    names = comparison.releases
    if len(names) < 2:
        return None
    total = {n: 0 for n in names}
    for p in props:
        ranking = comparison.rankings.get((p, "cov"))
        if ranking is not None:
            for n in names:
                total[n] += ranking.scores[n]
    order = sorted(names, key=lambda n: -total[n])
    return order[0], order[1]


def scatter_figure(comparison: Comparison, first: str, second: str, props: list[str]):
    """Per record, the value under `first` (x) against `second` (y), one panel per
    property (docs/papers.md, DW-6): the diagonal, and the counts W12, W21,
    ties with P_cov and P_spr both ways. Equal points are drawn once, their area
    growing with the number of records they stand for."""
    fig, axes = _figure(len(props), width=4.6, height=4.4)
    fig.subplots_adjust(top=1 - 0.16 / math.ceil(len(props) / 2), hspace=0.65)
    pairwise = comparison.pairwise
    for ax, prop in zip(axes, props):
        vals = values(comparison, prop)
        x, y = vals[first], vals[second]
        cap = cap_of(comparison, prop)
        finite = [a[a < cap] if cap is not None else a for a in (x, y)]
        log = _wide([f for f in finite if len(f)] or [x, y])
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            _log_axis(ax.xaxis)
            _log_axis(ax.yaxis)
        (x, y), spot = _unbounded([x, y], cap, log)
        pairs = pd.DataFrame({"x": x, "y": y}).value_counts().reset_index(name="n")
        area = 12 + 60 * np.sqrt(pairs["n"].to_numpy() / pairs["n"].max())
        # Thousands of points as vector markers make an SVG of megabytes (11.8 MB on Adult):
        # above RASTER_POINTS the point cloud alone is drawn as an image.
        ax.scatter(pairs["x"], pairs["y"], s=area, alpha=0.55, edgecolors="none",
                   rasterized=len(pairs) > RASTER_POINTS)
        low = float(min(x.min(), y.min()))
        high = float(max(x.max(), y.max()))
        pad = (high - low) * 0.05 or 0.5
        if log:
            line = np.geomspace(low, high, 50)
        else:
            line = np.linspace(low - pad, high + pad, 50)
            ax.set_xlim(low - pad, high + pad)
            ax.set_ylim(low - pad, high + pad)
        ax.plot(line, line, color="grey", linewidth=1, linestyle="--")
        _mark_unbounded(ax.xaxis, spot)
        _mark_unbounded(ax.yaxis, spot)
        stats = ""
        row = pairwise[
            (pairwise["property"] == prop)
            & (pairwise["first"] == first)
            & (pairwise["second"] == second)
        ]
        if len(row):
            r = row.iloc[0]
            back = pairwise[
                (pairwise["property"] == prop)
                & (pairwise["first"] == second)
                & (pairwise["second"] == first)
            ].iloc[0]
            stats = (
                f"\nW12 {int(r['W12']):,}  W21 {int(r['W21']):,}  ties {int(r['ties']):,}; "
                f"{r['dominance'].lower()}\n"
                f"P_cov {float(r['P_cov']):.3g} / {float(back['P_cov']):.3g}   "
                f"P_spr {float(r['P_spr']):.4g} / {float(back['P_spr']):.4g}"
            )
        side = "above" if PROPERTIES[prop].direction == "higher" else "below"
        ax.set_title(f"{prop}: {side} the diagonal, y is better{stats}", fontsize="x-small")
        show = display_names(comparison.releases)
        ax.set_xlabel(short(show[first], 40))
        ax.set_ylabel(short(show[second], 40))
        ax.grid(alpha=0.3)
    return fig


_OUTCOME_CODE = {"EQUAL": 0, "BETTER": 1, "WORSE": 2, "INCOMPARABLE": 3}
_OUTCOME_GLYPH = {"EQUAL": "=", "BETTER": "≻", "WORSE": "≺", "INCOMPARABLE": "∥"}


def dominance_matrix(comparison: Comparison, prop: str | None) -> np.ndarray:
    """Outcome names of row release against column release on `prop`, or set-level
    (every compared property) when `prop` is None."""
    names = comparison.releases
    pos = {n: i for i, n in enumerate(names)}
    pairwise = comparison.pairwise
    props = list(comparison.metadata.get("defined", {})) if prop is None else [prop]
    out = np.full((len(names), len(names)), "EQUAL", dtype=object)
    per: dict = {}
    for _, row in pairwise[pairwise["property"].isin(props)].iterrows():
        per.setdefault((row["first"], row["second"]), []).append(row["dominance"])
    for (a, b), outcomes in per.items():
        weak12 = all(o in ("EQUAL", "BETTER") for o in outcomes)
        weak21 = all(o in ("EQUAL", "WORSE") for o in outcomes)
        out[pos[a], pos[b]] = (
            "EQUAL"
            if weak12 and weak21
            else "BETTER"
            if weak12
            else "WORSE"
            if weak21
            else "INCOMPARABLE"
        )
    return out


def dominance_figure(comparison: Comparison, props: list[str]):
    """The dominance outcome of every pair of releases (docs/papers.md, Dewri et al., Table 4):
    one panel per property and one for all of them together (set-level ⪰)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    names = comparison.releases
    n = len(names)
    panels = [(p, p) for p in props] + [(None, "all properties (set level)")]
    side = max(3.6, 0.42 * n + 2.4)
    fig, axes = _figure(len(panels), width=side + 0.6, height=side)
    rows = math.ceil(len(panels) / 2)
    fig.subplots_adjust(
        left=0.22, bottom=0.08 + 0.1 / rows, right=0.98, top=1 - 0.06 / rows, wspace=0.5, hspace=0.6
    )
    show = display_names(names)
    colors = ["#d9d9d9", "#1a9850", "#d73027", "#fdae61"]
    cmap = ListedColormap(colors)
    for ax, (prop, title) in zip(axes, panels):
        matrix = dominance_matrix(comparison, prop)
        codes = np.vectorize(_OUTCOME_CODE.get)(matrix).astype(float)
        ax.imshow(codes, cmap=cmap, vmin=-0.5, vmax=3.5)
        labels = [short(show[x], 22) for x in names]
        ax.set_xticks(range(n), labels, rotation=45, ha="right", fontsize="xx-small")
        ax.set_yticks(range(n), labels, fontsize="xx-small")
        ax.set_title(title, fontsize="small")
        if n <= 16:
            for i in range(n):
                for j in range(n):
                    if i != j:
                        ax.text(
                            j,
                            i,
                            _OUTCOME_GLYPH[matrix[i, j]],
                            ha="center",
                            va="center",
                            fontsize="small",
                        )
    handles = [
        Patch(color=c, label=t)
        for c, t in zip(
            colors,
            ("equal", "row dominates column (≻)", "column dominates row (≺)", "incomparable (∥)"),
        )
    ]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize="x-small", frameon=False)
    return fig


def _front(points: list[tuple[str, float, float]]) -> list[str]:
    """Names of the points no other beats on both coordinates (lower x and higher y
    are better; at least as good on both and better on one beats)."""
    out = []
    for name, x, y in points:
        beaten = any(
            (x2 <= x and y2 >= y) and (x2 < x or y2 > y) for n2, x2, y2 in points if n2 != name
        )
        if not beaten:
            out.append(name)
    return out


def _front_panel(axis, points: list[tuple[str, float, float]], sign: float, show: Mapping[str, str]) -> None:
    """Draw (name, x, y) points, lower x better and y better in the direction of `sign`
    (1: higher, -1: lower), the Pareto front in red joined by a line, each point named
    by `show`; a y axis spanning more than 50 times is drawn in log scale."""
    front = set(_front([(n, x, sign * y) for n, x, y in points]))
    at: dict = {}
    for name, x, y in points:
        at.setdefault((x, y), []).append(name)
    for (x, y), group in at.items():
        on = any(n in front for n in group)
        axis.scatter(
            [x],
            [y],
            s=46 if on else 26,
            color="#d62728" if on else "#7f7f7f",
            zorder=3,
            edgecolors="black" if on else "none",
            linewidths=0.6,
        )
        text = short(", ".join(show[n] for n in group), 34)
        axis.annotate(text, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=6)
    line = sorted((x, y) for n, x, y in points if n in front)
    if len(line) > 1:
        axis.plot([p[0] for p in line], [p[1] for p in line], color="#d62728", linewidth=1.2, zorder=2)
    ys = [p[2] for p in points]
    if min(ys) > 0 and max(ys) / min(ys) > 50:
        axis.set_yscale("log")
    axis.margins(x=0.2, y=0.12)
    axis.grid(alpha=0.3)


#: The risk figures of every run (:func:`fairanon.bench.child._risk_columns`) drawn
#: against loss, with what they mean.
RISK_COLUMNS = {
    "risk.prosecutor_average": "average prosecutor (marketer) risk",
    "risk.prosecutor_highest": "highest prosecutor risk",
}


def risk_loss_figure(frame: pd.DataFrame, loss: str):
    """Each risk figure of :data:`RISK_COLUMNS` (y, lower is better) against `loss`
    (x, lower is better), one point per release of one instance (the mean over its
    seeds and repetitions), the Pareto front of the two drawn in red and its releases
    named."""
    columns = [c for c in RISK_COLUMNS if c in frame.columns]
    fig, axes = _figure(len(columns), width=5.0, height=4.0)
    data = frame.assign(**{c: pd.to_numeric(frame[c], errors="coerce") for c in [loss, *columns]})
    means = data.groupby("release", sort=False)[[loss, *columns]].mean()
    show = display_names(list(means.index))
    for ax, column in zip(axes, columns):
        points = [(str(n), float(row[loss]), float(row[column])) for n, row in means.iterrows()
                  if not (math.isnan(row[loss]) or math.isnan(row[column]))]
        if points:
            _front_panel(ax, points, -1.0, show)
        ax.set_xlabel(f"{loss} (lower is better)")
        ax.set_ylabel(f"{RISK_COLUMNS[column]} (lower is better)")
        ax.set_title(f"{RISK_COLUMNS[column]} versus {loss}; red: Pareto front", fontsize="small")
    return fig


def tradeoff_figure(comparison: Comparison, props: list[str]):
    """Mean loss per record (x) against the mean of each privacy or fairness property
    (y), one point per release, the Pareto front of the two drawn and its releases
    named (docs/papers.md, DW-10). Alpha-protection is summarized by its median
    over the records, which an unbounded context (recorded at the cap) cannot swamp."""
    loss = values(comparison, "loss")
    fig, axes = _figure(len(props), width=5.0, height=4.0)
    for ax, prop in zip(axes, props):
        vals = values(comparison, prop)
        sign = 1.0 if PROPERTIES[prop].direction == "higher" else -1.0
        stat = "median" if prop.startswith("alpha_") else "mean"
        points = [
            (n, float(loss[n].mean()), float(getattr(np, stat)(vals[n])))
            for n in comparison.releases
        ]
        _front_panel(ax, points, sign, display_names(comparison.releases))
        ax.set_xlabel("mean loss per record (lower is better)")
        ax.set_ylabel(f"{stat} {prop} ({_better_text(prop)})")
        ax.set_title(f"{prop} versus loss; red: Pareto front", fontsize="small")
    return fig


def win_shares(comparison: Comparison, prop: str) -> dict[str, float]:
    """Share of the records (or groups) each release serves strictly best on `prop`,
    and under ``"tie"`` the share where several releases share the best value."""
    vals = values(comparison, prop)
    names = list(vals)
    matrix = np.vstack([_higher(prop, vals[n]) for n in names])
    best = matrix.max(axis=0)
    at_best = np.abs(matrix - best) <= 1e-12 * np.maximum(1.0, np.abs(best))
    count = at_best.sum(axis=0)
    total = matrix.shape[1]
    out = {n: float(((count == 1) & at_best[i]).sum()) / total for i, n in enumerate(names)}
    out["tie"] = float((count > 1).sum()) / total
    return out


def winmap_figure(comparison: Comparison, props: list[str]):
    """The win map (docs/papers.md, DW-10): per property, the share of records
    each release gives strictly the best value, and the share where the best value is
    shared (grey)."""
    names = comparison.releases
    show = display_names(names)
    fig, (ax,) = _figure(1, width=9.0, height=0.7 * len(props) + 1.9)
    fig.subplots_adjust(left=0.16, right=0.98, top=0.86, bottom=0.34)
    cmap = _palette(len(names))
    for row, prop in enumerate(props):
        shares = win_shares(comparison, prop)
        left = 0.0
        for i, name in enumerate(names + ["tie"]):
            width = shares[name]
            color = "#c8c8c8" if name == "tie" else cmap[i]
            ax.barh(
                row,
                width,
                left=left,
                color=color,
                edgecolor="white",
                linewidth=0.5,
                label=(short(show[name], 30) if name != "tie" else "best value shared")
                if row == 0
                else None,
            )
            if width >= 0.08:
                ax.text(
                    left + width / 2,
                    row,
                    f"{width:.0%}",
                    ha="center",
                    va="center",
                    fontsize="x-small",
                )
            left += width
    ax.set_yticks(range(len(props)), props, fontsize="small")
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of records (groups for group-level properties)")
    ax.set_title("which release serves each record best", fontsize="small")
    ax.legend(
        fontsize="x-small",
        ncol=min(4, len(names) + 1),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.32),
        frameon=False,
    )
    return fig


@dataclass(frozen=True)
class View:
    """One plot of a comparison, as :func:`comparison_views` yields it.

    Attributes
    ----------
    kind : str
        size, loss, scatter, coverage, dominance, tradeoff or winmap.
    heading : str
    text : str
        What the plot shows, in a sentence or two ("" when the heading says it).
    alt : str
        The plot in words, for a reader that cannot see it.
    figure : matplotlib.figure.Figure
    """

    kind: str
    heading: str
    text: str
    alt: str
    figure: object


def comparison_views(comparison: Comparison, name: str) -> Iterator[View]:
    """The plots of one comparison (docs/papers.md, DW-10), in reading order: the
    distributions of class size and loss, then, when there are several releases, the
    pairwise scatter of the two leading ones, the coverage of class sizes, the dominance
    outcomes, privacy and fairness versus loss and the win map. Each figure is drawn when
    its view is reached, so a caller can render and free one at a time."""
    defined = comparison.metadata.get("defined", {})
    for prop, what in (("size", "privacy: equivalence-class size"), ("loss", "loss")):
        if prop in defined:
            yield View(prop, f"Per-tuple {what}", "", f"per-tuple {what} on {name}",
                       distribution_figure(values(comparison, prop), prop))
    if len(comparison.releases) < 2:
        return
    shown = shown_properties(comparison)
    pair = pick_pair(comparison, shown)
    if pair and shown:
        yield View(
            "scatter", "Record by record: the two leading releases",
            "Each point is a value under the first release (x) and the second (y) for the same records (its "
            "area grows with how many); the counts W12 (records where x is better), W21 and ties, P_cov and "
            "P_spr are in the box. Only this view shows which records gain and which lose (docs/papers.md, "
            "DW-6).",
            f"per-tuple values of {pair[0]} against {pair[1]} on {name}",
            scatter_figure(comparison, pair[0], pair[1], shown),
        )
    if "size" in defined:
        yield View("coverage", "Coverage of class sizes", "", f"coverage matrix of class sizes on {name}",
                   coverage_figure(comparison, "size"))
    if shown:
        yield View(
            "dominance", "Dominance",
            "Row against column: ≻ the row release is at least as good on every record and better on one, "
            "≺ the reverse, ∥ each is better somewhere.",
            f"dominance outcomes on {name}", dominance_figure(comparison, shown),
        )
    trade = [p for p in ("risk", *[p for p in shown if PROPERTIES[p].family == "fairness"]) if p in defined]
    if "loss" in defined and trade:
        yield View(
            "tradeoff", "Privacy and fairness versus loss",
            "One point per release (means over the records); the red line joins the releases no other beats "
            "on both axes.",
            f"privacy and fairness versus loss on {name}", tradeoff_figure(comparison, trade),
        )
    if shown:
        yield View("winmap", "Win map", "", f"win map on {name}", winmap_figure(comparison, shown))


def _palette(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]
