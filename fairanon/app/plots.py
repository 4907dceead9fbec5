"""The Results page's plots, drawn with matplotlib (an Agg canvas, no global backend)
as SVG text put into the page: a fulldomain run's candidate transformations
(:func:`fairanon.solver.fulldomain.candidates`), the risk view from the ``risk`` section of
``report.json`` (:func:`fairanon.risk`'s report) and the utility view from
``utility.json`` (:func:`fairanon.utility`'s report). They show what the reports
hold; nothing is computed here.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Mapping
from fractions import Fraction

__all__ = ["candidates_svg", "risk_svg", "svg", "utility_svg"]

#: Held while a figure is written: ``rc_context`` changes matplotlib's settings for the
#: whole process, and the warm-up and requests served in threads draw at once (one
#: drawing's exit would restore the settings under another's feet).
_RC_LOCK = threading.Lock()


def _figure(width: float, height: float, panels: int = 1):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, panels, squeeze=False).ravel()


def svg(fig) -> str:
    """`fig` as inline SVG text, its text kept as text."""
    from matplotlib import rc_context

    out = io.StringIO()
    with _RC_LOCK, rc_context({"svg.fonttype": "none"}):  # text as <text> (escaped): readable, searchable, smaller
        fig.savefig(out, format="svg")
    text = out.getvalue()
    return text[text.index("<svg"):]  # inline in the page: no XML prologue


def _share(text: str) -> str:
    return f"{float(Fraction(text)):.3g}"


def risk_svg(risk: Mapping) -> str | None:
    """Records by prosecutor risk (the report's histogram of 1 / class size over
    intervals ]lo, hi]), the intervals above the threshold in red; None when the
    report has no histogram."""
    sample = risk.get("sample") or {}
    bins = [b for b in sample.get("histogram") or [] if b.get("records")]
    if not bins:
        return None
    fig, (axis,) = _figure(7.5, 3.2)
    labels = [f"{_share(b['lo'])}–{_share(b['hi'])}" for b in bins]
    threshold = (sample.get("threshold") or {}).get("exact")
    colors = ["#c44" if threshold is not None and Fraction(b["lo"]) >= Fraction(threshold) else "#48a" for b in bins]
    axis.bar(range(len(bins)), [b["records"] for b in bins], color=colors)
    axis.set_xticks(range(len(bins)), labels, rotation=45, ha="right", fontsize=7)
    axis.set_ylabel("records")
    axis.set_xlabel("prosecutor risk (1 / class size)" + (f"; red: above {_share(threshold)}" if threshold else ""))
    fig.subplots_adjust(bottom=0.35, left=0.1, right=0.98, top=0.95)
    return svg(fig)


def utility_svg(utility: Mapping) -> str | None:
    """Per quasi-identifier, the share of records released exactly, generalized,
    suppressed (and untruthful, which a verified release has none of), and the total
    variation distance between the distributions before and after."""
    attributes = [a for a in utility.get("attributes") or [] if a.get("n")]
    if not attributes:
        return None
    fig, (shares, distance) = _figure(8.5, 0.45 * len(attributes) + 1.2, panels=2)
    names = [a["name"] for a in attributes]
    left = [0.0] * len(attributes)
    for key, color in (("exact", "#4a4"), ("generalized", "#da3"), ("suppressed", "#c44"), ("untruthful", "#000")):
        widths = [a.get(key, 0) / a["n"] for a in attributes]
        shares.barh(names, widths, left=left, color=color, label=key)
        left = [x + w for x, w in zip(left, widths)]
    shares.set_xlim(0, 1)
    shares.invert_yaxis()
    shares.set_xlabel("share of records")
    shares.legend(fontsize=7, loc="lower right", framealpha=0.8)
    distance.barh(names, [a.get("tv_distance", 0) for a in attributes], color="#48a")
    distance.invert_yaxis()
    distance.set_yticks(range(len(names)), [""] * len(names))
    distance.set_xlabel("total variation distance")
    fig.subplots_adjust(left=0.18, right=0.98, wspace=0.08, bottom=0.8 / (0.45 * len(attributes) + 1.2), top=0.97)
    return svg(fig)


def candidates_svg(listed, chosen: Mapping | None = None) -> str:
    """Loss (LM_avg) against the highest prosecutor risk of each listed candidate of a
    fulldomain lattice, numbered as in the table; the Pareto ones filled, the others
    hollow, the released node (`chosen`, its levels) ringed in red."""
    fig, (axis,) = _figure(7.5, 3.4)
    for pareto, style in ((True, {"color": "#48a"}), (False, {"facecolors": "none", "edgecolors": "#888"})):
        points = [(float(c.prosecutor_highest), float(c.lm_avg)) for c in listed.candidates if c.pareto == pareto]
        if points:
            axis.scatter(*zip(*points), s=30, label="Pareto" if pareto else "other", **style)
    for i, c in enumerate(listed.candidates):
        axis.annotate(str(i), (float(c.prosecutor_highest), float(c.lm_avg)), fontsize=7,
                      xytext=(4, 3), textcoords="offset points")
        if chosen is not None and c.levels == dict(chosen):
            axis.scatter([float(c.prosecutor_highest)], [float(c.lm_avg)], s=140, facecolors="none",
                         edgecolors="#c44", label="this release")
    axis.set_xlabel("highest prosecutor risk (1 / smallest class)")
    axis.set_ylabel("loss (LM_avg)")
    axis.legend(fontsize=7, loc="upper right", framealpha=0.8)
    fig.subplots_adjust(bottom=0.16, left=0.1, right=0.98, top=0.95)
    return svg(fig)
