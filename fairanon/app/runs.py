"""The Run, progress and Results pages: a run is the command line's ``fairanon
anonymize`` on the job file the session writes (:mod:`fairanon.app.worker`), its
progress pushed by server-sent events, cancelled by ending its process group; the
results are read from its files (the verifier's report with its witnesses, the
conflict of an infeasible set, the risk and utility views), downloaded one by one or
as a standalone HTML report.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, StreamingResponse

from .._validation import check_time_limit
from ..exceptions import FairanonError
from . import worker
from .data import PREVIEW_ROWS
from .requirements import check_requirements, whole_number
from .session import DATA_FOLDER, JOB_ARCHIVE, Asked, job_archive

router = APIRouter()
HERE = Path(__file__).parent


def current_requirements(asked: Asked) -> tuple:
    """(job-file specs, requirements, None), or (None, None, what to do first), of the
    set `asked` (:meth:`~fairanon.app.session.Session.asked`)."""
    instance = asked.data.instance
    if instance is None:
        return None, None, "Choose the data first (Data page)."
    if asked.job_requirements is not None:
        from ..models.requirements import requirement_from_spec, validate_requirements

        try:
            reqs = [requirement_from_spec(s) for s in asked.job_requirements]
            validate_requirements(instance, reqs, caller="anonymize")  # against the data, as anonymize does
            return asked.job_requirements, reqs, None
        except FairanonError as exc:
            return None, None, f"The job file's requirements: {exc}"
    specs, reqs, errors, whole = check_requirements(instance, asked.form)
    if errors or whole:
        return None, None, "Set valid requirements first (Requirements page)."
    return specs, reqs, None


@router.get("/run", response_class=HTMLResponse)
async def show_run_page(request: Request):
    return await run_page(request)


async def run_page(request: Request, error: str | None = None, status_code: int = 200):
    """The Run page, with `error` shown (not a route: the message and status are the
    app's, never a query's)."""
    from ..api import METHODS, choose_method

    session = request.app.state.session
    asked = await asyncio.to_thread(session.asked)  # off the event loop: the lock is held while data loads
    specs, reqs, problem = current_requirements(asked)
    auto = None
    if reqs:
        time_limit = asked.job_settings.get("time_limit")
        # auto's choice reads the whole table (a quarter second on Adult): kept per data and requirements
        key = (asked.data.generation, json.dumps(specs, sort_keys=True, default=str), time_limit)
        try:
            if key not in session.auto_choices:
                chosen = await asyncio.to_thread(choose_method, asked.data.instance, reqs, time_limit=time_limit)
                session.auto_choices = {key: chosen}
            auto = session.auto_choices[key]
        except FairanonError as exc:
            problem = str(exc)
    return request.app.state.render(request, "run.html", status_code, methods=list(METHODS), specs=specs,
                                    auto=auto, problem=problem, error=error, settings=asked.job_settings,
                                    runs=sorted(session.runs.values(), key=lambda r: -r.id),
                                    status=worker.read_status)


@router.post("/run")
async def start_run(request: Request):
    from ..api import METHODS

    session = request.app.state.session
    form = await request.form()
    asked = await asyncio.to_thread(session.asked)  # one set: the run's data, requirements and settings agree
    specs, _, problem = current_requirements(asked)
    if problem:
        return await run_page(request, error=problem, status_code=400)
    method = str(form.get("method", "auto"))
    release_format = str(form.get("format", "csv"))
    if release_format not in worker.FORMATS:
        return await run_page(request, error=f"The release format must be one of {list(worker.FORMATS)}; got "
                                             f"{release_format!r}.", status_code=400)
    seed_text, limit_text = str(form.get("seed", "")).strip(), str(form.get("time_limit", "")).strip()
    if method not in METHODS:
        return await run_page(request, error=f"Unknown method {method!r}; one of {sorted(METHODS)}.",
                              status_code=400)
    seed = whole_number(seed_text)
    if seed_text and seed is None:
        return await run_page(request, error=f"The seed must be an int >= 0; got {seed_text!r}.", status_code=400)
    try:
        # InvalidParameterError is a ValueError: one message for both.
        limit = check_time_limit(float(limit_text), "the Run form") if limit_text else None
    except ValueError:
        return await run_page(request, error=f"The time limit must be a positive number of seconds; got "
                                             f"{limit_text!r}.", status_code=400)
    document = session.job_document(specs, method=method, seed=seed, time_limit=limit, asked=asked)
    try:
        # The utility analysis's classifier predicts the decision: without one, none.
        classify = asked.data.instance.schema.decision is not None
        return await asyncio.to_thread(_start, session, document, release_format, classify=classify)
    except FairanonError as exc:  # a file the job names cannot be copied into the run
        return await run_page(request, error=str(exc), status_code=400)


def _start(session, document: dict, release_format: str, base: str | None = None,
           classify: bool = True) -> RedirectResponse:
    """A new run of the job `document` (its relative paths read from `base`; the job's
    files copied into the run) in a worker, its utility analysis with a classifier when
    `classify` (the instance has a decision) and scikit-learn is there; the answer: its
    progress page."""
    run = session.new_run(document, base)
    classifier = "logistic" if classify and _have_sklearn() else "none"
    run.format, run.classify = release_format, classify
    run.process = worker.start(run.job, run.folder, {"classifier": classifier, "format": release_format,
                                                     "seed": document.get("seed"),
                                                     "candidates": document.get("method") == "fulldomain"})
    return RedirectResponse(f"/runs/{run.id}", status_code=303)


def run_status(run) -> dict:
    """The worker's status of `run`, with a cancel or a worker that died said, and the elapsed time."""
    status = worker.read_status(run.folder)
    ended = run.process is not None and run.process.poll() is not None  # poll() also reaps an ended worker
    if run.cancelled:
        status.update(state="cancelled", step="cancelled")
    elif status.get("state") != "done" and ended:
        status.update(state="failed", step=f"the worker ended unexpectedly (exit code {run.process.returncode})")
    started = status.get("started")
    status["elapsed_s"] = round((status.get("ended") or time.time()) - started, 1) if started else 0.0
    return status


@router.get("/runs/{run_id}", response_class=HTMLResponse)
async def run_view(request: Request, run_id: int):
    session = request.app.state.session
    run = session.runs.get(run_id)
    if run is None:
        return request.app.state.render(request, "missing.html", 404, what=f"run {run_id}")
    return request.app.state.render(request, "progress.html", run=run, status=run_status(run))


@router.get("/runs/{run_id}/events")
async def run_events(request: Request, run_id: int):
    session = request.app.state.session
    run = session.runs.get(run_id)
    if run is None:
        return PlainTextResponse(f"There is no run {run_id}.", status_code=404)  # as the pages say it

    stopping = request.app.state.stopping

    async def events():
        while not stopping.is_set():  # the server stopping: the stream ends, the page keeps what it showed
            status = run_status(run)
            yield f"data: {json.dumps(status)}\n\n"
            if status["state"] in ("done", "cancelled", "failed"):
                return
            await asyncio.sleep(0.25)

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.post("/runs/{run_id}/cancel")
async def cancel(request: Request, run_id: int):
    session = request.app.state.session
    run = session.runs.get(run_id)
    if run is None:
        return request.app.state.render(request, "missing.html", 404, what=f"run {run_id}")
    if run.process is not None and run.process.poll() is None:
        run.cancelled = True
        await asyncio.to_thread(worker.cancel, run.process)  # waits for the group to end
    return RedirectResponse(f"/runs/{run_id}", status_code=303)


def _finished(request: Request, run_id: int):
    """((run, status), None) for a finished run, else (None, the answer to give instead:
    a message when there is no such run, the progress page while it runs)."""
    run = request.app.state.session.runs.get(run_id)
    if run is None:
        return None, request.app.state.render(request, "missing.html", 404, what=f"run {run_id}")
    status = run_status(run)
    if status["state"] != "done":
        return None, RedirectResponse(f"/runs/{run_id}", status_code=303)
    return (run, status), None


@router.get("/runs/{run_id}/results", response_class=HTMLResponse)
async def results(request: Request, run_id: int):
    finished, instead = _finished(request, run_id)
    if instead is not None:
        return instead
    run, status = finished
    shown = await asyncio.to_thread(_results, run)  # reads the release and draws: off the event loop
    return request.app.state.render(request, "results.html", run=run, status=status, **shown)


def run_candidates(run) -> dict:
    """The lattice nodes of a fulldomain run's job that meet its requirements, as its
    worker listed them (``fairanon anonymize --candidates``, under the job's time and
    memory limits): {"listed": Candidates}, or {"error": why they were not listed}; {}
    for another method."""
    from ..jobs import read_document
    from ..solver.fulldomain import Candidates

    if read_document(run.job).get("method") != "fulldomain":
        return {}
    try:
        with open(os.path.join(run.folder, worker.CANDIDATES_FILE), encoding="utf-8") as fh:
            found = json.load(fh)
    except (OSError, ValueError):
        return {"error": "Not computed: the run wrote no list of candidates (its log says why)."}
    if "error" in found:
        return {"error": f"Not computed: {found['error']}"}
    listed = Candidates.from_dict(found)
    return {"error": f"Not computed: {listed.reason}."} if listed.reason else {"listed": listed}


@router.post("/runs/{run_id}/choose")
async def choose(request: Request, run_id: int):
    """Release one listed candidate of a fulldomain run: a new run of the same job with
    ``options: {levels: ...}``, which ``fairanon anonymize`` reproduces."""
    from ..jobs import read_document

    session = request.app.state.session
    run = session.runs.get(run_id)
    if run is None:
        return request.app.state.render(request, "missing.html", 404, what=f"run {run_id}")
    found = await asyncio.to_thread(run_candidates, run)
    listed = found.get("listed")
    text = str((await request.form()).get("candidate", "")).strip()
    count = len(listed.candidates) if listed else 0
    number = whole_number(text)
    if number is None or not number < count:
        if count:
            why = f"The candidate must be one of 0..{count - 1}; got {text!r}."
        elif "error" in found:  # a fulldomain run whose listing failed or ran out of time: its own reason
            why = f"Run {run_id} lists no candidate transformations. {found['error']}"
        elif listed is not None:  # the listing's own account: of the whole lattice, or of its cheapest nodes
            why = f"Run {run_id} lists no candidate transformations: {listed.summary()}."
        else:
            why = f"Run {run_id} lists no candidate transformations (only fulldomain runs do)."
        return PlainTextResponse(why, status_code=400)
    document = dict(read_document(run.job))
    document["options"] = {**(document.get("options") or {}), "levels": listed.candidates[number].levels}
    return await asyncio.to_thread(_start, session, document, run.format, run.folder,
                                   classify=run.classify)


@router.get("/runs/{run_id}/report.html")
async def html_report(request: Request, run_id: int):
    """The Results page as one standalone HTML file (styles inline, no scripts, no links into the app)."""
    from .._version import __version__

    finished, instead = _finished(request, run_id)
    if instead is not None:
        return instead
    run, status = finished
    shown = await asyncio.to_thread(_results, run)
    with open(run.job, encoding="utf-8") as fh:
        job_text = fh.read()
    response = request.app.state.render(request, "report.html", run=run, status=status, standalone=True,
                                        version=__version__, job_text=job_text,
                                        css=(HERE / "static" / "app.css").read_text(encoding="utf-8"),
                                        **shown)
    response.headers["Content-Disposition"] = f'attachment; filename="report-run{run_id}.html"'
    return response


@router.get("/runs/{run_id}/files/{name}")
async def download(request: Request, run_id: int, name: str):
    finished, instead = _finished(request, run_id)  # a running or cancelled run's files are not its outputs
    if instead is not None:
        return instead
    run, _ = finished
    files = worker.run_files(run.folder)
    if name == JOB_ARCHIVE:
        try:
            files[name] = await asyncio.to_thread(job_archive, run.folder)  # compresses the data: off the event loop
        except FairanonError as exc:  # a full disk: the message, and no half archive left
            return PlainTextResponse(str(exc), status_code=500)
    if name not in files:
        return request.app.state.render(request, "missing.html", 404, what=name)
    return FileResponse(files[name], filename=name)


def _results(run) -> dict:
    """What the Results page shows, read from the run's files."""
    import pandas as pd

    from ..jobs import read_table

    files = worker.run_files(run.folder)
    with open(os.path.join(run.folder, worker.LOG_FILE), encoding="utf-8") as fh:
        log = fh.read()
    document = worker.read_report(run.folder)
    utility = None
    if worker.UTILITY_FILE in files:
        with open(files[worker.UTILITY_FILE], encoding="utf-8") as fh:
            utility = json.load(fh)
    table, highlighted = None, {}
    name = (document or {}).get("release_file")
    if name and name in files:
        from ..instances.files import restore_formulas

        if name.endswith(".parquet"):  # written with --format parquet: indexed by record_id, no neutralizing
            release = read_table(files[name], "parquet")
        else:
            release = read_table(files[name], "csv", text_columns=(), id_column="record_id").set_index("record_id")
            if document.get("neutralized_formulas"):
                release = restore_formulas(release)
        for i, check in enumerate((document or {}).get("report", {}).get("checks", [])):
            if not check.get("passed") and isinstance(check.get("witness"), dict):
                for record in check["witness"].get("records") or []:
                    highlighted.setdefault(str(record), []).append(i)
        chosen = [r for r in release.index if str(r) in highlighted]
        rest = [r for r in release.index[:PREVIEW_ROWS] if str(r) not in highlighted]
        table = pd.concat([release.loc[chosen], release.loc[rest]]) if chosen else release.loc[rest]
    from .plots import candidates_svg, risk_svg, utility_svg

    release_doc = (document or {}).get("release") or {}
    conflict = {"reason": release_doc.get("reason"), "requirements": (release_doc.get("provenance") or {}).get(
        "conflict") or []} if release_doc.get("status") == "INFEASIBLE" else None
    chosen = ((document or {}).get("release") or {}).get("provenance", {}).get("levels")
    found = run_candidates(run) if document else {}
    return {"candidates": found, "chosen_levels": chosen,
            # the job names files (copied under data/): job.yaml alone does not reproduce the release, job.zip does
            "names_files": os.path.isdir(os.path.join(run.folder, DATA_FOLDER)),
            "candidates_plot": candidates_svg(found["listed"], chosen) if found.get("listed") else None,
            "files": sorted(files), "document": document, "utility": utility, "log": log, "table": table,
            "highlighted": highlighted, "conflict": conflict,
            "risk_plot": risk_svg(document["risk"]) if (document or {}).get("risk") else None,
            "utility_plot": utility_svg(utility) if utility else None}


def _have_sklearn() -> bool:
    import importlib.util

    return importlib.util.find_spec("sklearn") is not None
