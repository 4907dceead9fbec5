"""The Compare page: finished runs side by side (status, verification, the loss and
class figures of the verifier's report, the risk figures of ``report.json``),
``fairanon bench``'s risk-against-loss plot
(:func:`fairanon.bench.plots.risk_loss_figure`), one point per run, its Pareto front
in red, and the bench's comparison plots of the runs' per-record vectors
(:func:`fairanon.bench.compare.compare_runs`, :func:`fairanon.bench.plots.comparison_views`),
one group of plots per comparison: the runs of one data (or of one data under one
requirement set), as the bench groups them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from . import worker
from .runs import run_status
from .session import _relocated

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


#: The release statuses whose releases are compared record by record (as the bench
#: measures vectors only for these).
COMPARED_STATUSES = ("OPTIMAL", "FEASIBLE")


def _data_key(run, section) -> str:
    """Equal for runs of the same data: the job's ``instance`` section with each file it
    names replaced by the file's checksum (each run holds its own copy). Made once per
    run: a run's files never change."""
    import json

    from ..instances.files import sha256_of

    if run.data_key is None:
        if isinstance(section, Mapping):
            section = _relocated(section, lambda path: sha256_of(os.path.join(run.folder, path)))
        run.data_key = json.dumps(section, sort_keys=True, default=str)
    return run.data_key


def _run_release(run, document: dict, names: dict, loaded: dict):
    """The :class:`~fairanon.bench.compare.RunRelease` of a finished run, or the reason
    it has none; `names` maps each data's key to its name on the page and `loaded` to
    its instance, read once for all runs of that data (both filled here)."""
    from ..bench.compare import RunRelease
    from ..exceptions import FairanonError
    from ..jobs import load_instance_spec, read_document, read_release

    status = _at(document, ("release", "status"))
    checks = _at(document, ("report", "checks")) or []
    if status not in COMPARED_STATUSES:
        return f"its status is {status}: there is no release"
    if not all(c.get("passed") for c in checks if c.get("integrity")):
        return "its release fails an integrity check"
    try:
        job = read_document(run.job)
        key = _data_key(run, job["instance"])
        if key not in loaded:
            loaded[key] = load_instance_spec(job["instance"], run.folder)
        data = loaded[key]
        release = read_release(os.path.join(run.folder, "out", document["release_file"]), data,
                               neutralized=document.get("neutralized_formulas"))
    except (FairanonError, OSError, ValueError, KeyError) as exc:
        return f"its files cannot be read ({exc})"
    if key not in names:
        taken = set(names.values())
        name, n = data.name, 1
        while name in taken:  # other data of the same name
            n += 1
            name = f"{data.name} ({n})"
        names[key] = name
    return RunRelease(name=label(run.id, document), instance=names[key], data=data,
                      requirements=tuple(job.get("requirements") or ()), release=release)


def per_record(runs: dict, documents: dict[int, dict], by: str) -> tuple[list[dict], list[str]]:
    """The bench's comparisons of the chosen runs, grouped `by` instance or requirements
    (:data:`fairanon.bench.compare.GROUPINGS`): a list of ``{"name", "releases",
    "views": [(kind, heading, text, svg)]}``, and a note per run that is not compared."""
    from ..bench.compare import CompareConfig, compare_runs
    from ..bench.plots import comparison_views
    from ..exceptions import FairanonError
    from .plots import svg

    names: dict = {}
    loaded: dict = {}
    held, notes = [], []
    for i, document in documents.items():
        found = _run_release(runs[i], document, names, loaded)
        if isinstance(found, str):
            notes.append(f"Run {i} is not compared record by record: {found}.")
        else:
            held.append(found)
    try:
        comparisons = compare_runs(held, CompareConfig(by=by))
    except FairanonError as exc:
        return [], [*notes, f"The runs cannot be compared record by record: {exc}"]
    out = []
    for name, comparison in comparisons.items():
        views = [(v.kind, v.heading, v.text, svg(v.figure)) for v in comparison_views(comparison, name)]
        out.append({"name": name, "releases": comparison.releases, "views": views})
    return out, notes


def shown(runs: dict, chosen: dict[int, dict], by: str) -> dict:
    """What the page shows of the `chosen` runs: the table, the risk-against-loss plot
    and the per-record comparisons grouped `by` (or the error of a bad grouping)."""
    from ..bench.compare import GROUPINGS

    if by not in GROUPINGS:
        return {"groupings": GROUPINGS, "chosen": {}, "status": 400,
                "error": f"Runs are grouped by one of {list(GROUPINGS)}; got {by!r}."}
    names, rows, plot = comparison(chosen) if chosen else ([], [], None)
    groups, notes = per_record(runs, chosen, by) if chosen else ([], [])
    return {"groupings": GROUPINGS, "chosen": chosen, "names": names, "rows": rows, "plot": plot,
            "groups": groups, "notes": notes}


def finished_runs(runs: dict) -> dict[int, dict]:
    """The report of each finished run, by number: finished as the Results page says it
    (a cancelled run or a worker that died is not)."""
    return {i: d for i, r in sorted(runs.items())
            if run_status(r)["state"] == "done" and (d := worker.read_report(r.folder))}


@router.get("/compare", response_class=HTMLResponse)
async def compare_page(request: Request, runs: list[int] = Query(default=[]), by: str = "instance"):
    session = request.app.state.session
    # every run's report is read, the bench's modules load and matplotlib draws: off the
    # event loop, so the progress streams keep going
    finished = await asyncio.to_thread(finished_runs, session.runs)
    unknown = [i for i in runs if i not in finished]
    chosen = {i: finished[i] for i in runs if i in finished}
    page = {"status": 200, "error": None, **await asyncio.to_thread(shown, session.runs, chosen, by)}
    if unknown:
        page.update(status=404, error=f"There is no finished run {', '.join(map(str, unknown))} to compare.")
    return request.app.state.render(request, "compare.html", page.pop("status"), finished=finished, label=label,
                                    by=by, **page)
