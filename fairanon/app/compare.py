"""The Compare page: finished runs side by side (status, verification, the loss and
class figures of the verifier's report, the risk figures of ``report.json``) and
``fairanon bench``'s risk-against-loss plot
(:func:`fairanon.bench.plots.risk_loss_figure`), one point per run, its Pareto front
in red.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from . import worker

router = APIRouter()

#: The loss figure the plot puts on its x axis (from the verifier's report).
LOSS = "GCP"
#: The rows of the side-by-side table: (label, path into report.json).
ROWS = (
    ("status", ("report", "status")), ("verification passed", ("report", "passed")),
    ("method", ("report", "method")), ("classes", ("report", "n_classes")),
    ("smallest class", ("report", "metrics", "min_class_size")), ("GCP", ("report", "metrics", "GCP")),
    ("LM (average)", ("report", "metrics", "LM_avg")), ("discernibility", ("report", "metrics", "discernibility")),
    ("suppressed cells", ("report", "metrics", "suppressed_cells")),
    ("highest prosecutor risk", ("risk", "sample", "prosecutor_highest", "exact")),
    ("average prosecutor risk", ("risk", "sample", "prosecutor_average", "exact")),
    ("sample uniques", ("risk", "uniqueness", "sample_uniques")),
)


def _at(document: dict, path: tuple):
    for key in path:
        if not isinstance(document, dict) or key not in document:
            return None
        document = document[key]
    return document


def label(run_id: int, document: dict) -> str:
    """A run's name in the table and the plot: its number, method and requirements."""
    requirements = ", ".join(_at(document, ("release", "provenance", "requirements")) or [])
    return f"run {run_id}: {_at(document, ('report', 'method'))} ({requirements})"


def comparison(documents: dict[int, dict]) -> tuple[list[str], list[tuple[str, list]], str | None]:
    """(column labels, table rows, the risk-against-loss plot as SVG or None)."""
    import pandas as pd

    from ..bench.plots import risk_loss_figure
    from .plots import svg

    names = [label(i, d) for i, d in documents.items()]
    rows = [(name, [_at(d, path) for d in documents.values()]) for name, path in ROWS]
    frame = pd.DataFrame([{"release": n, LOSS: _at(d, ("report", "metrics", LOSS)),
                           "risk.prosecutor_average": _at(d, ("risk", "sample", "prosecutor_average", "value")),
                           "risk.prosecutor_highest": _at(d, ("risk", "sample", "prosecutor_highest", "value"))}
                          for n, d in zip(names, documents.values())])
    plot = svg(risk_loss_figure(frame, LOSS)) if frame[LOSS].notna().any() else None
    return names, rows, plot


@router.get("/compare", response_class=HTMLResponse)
async def compare_page(request: Request, runs: list[int] = Query(default=[])):
    session = request.app.state.session
    finished = {i: d for i, r in sorted(session.runs.items())
                if worker.read_status(r.folder).get("state") == "done" and (d := worker.read_report(r.folder))}
    unknown = [i for i in runs if i not in finished]
    chosen = {i: finished[i] for i in runs if i in finished}
    # matplotlib draws the plot: off the event loop, so the progress streams keep going
    names, rows, plot = await asyncio.to_thread(comparison, chosen) if chosen else ([], [], None)
    error = f"There is no finished run {', '.join(map(str, unknown))} to compare." if unknown else None
    return request.app.state.render(request, "compare.html", 404 if unknown else 200, finished=finished,
                                    chosen=chosen, names=names, rows=rows, plot=plot, error=error,
                                    label=label)
