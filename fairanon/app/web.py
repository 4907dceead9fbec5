"""The app's pages and routes (FastAPI, Jinja2 templates, htmx; every asset is served
from the package). Each route reads a form, calls the API (:mod:`fairanon.jobs` to load
data, the requirement classes and their validation, :func:`fairanon.describe`,
:func:`fairanon.api.choose_method`) or starts a worker (:mod:`fairanon.app.worker`),
and renders what comes back; an error of the API is shown as its message on the page.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from pathlib import Path

from fastapi import Depends, FastAPI, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from ..exceptions import FairanonError
from . import compare, hierarchies, requirements, worker
from .requirements import check_requirements, form_of
from .session import ROLES, Session

HERE = Path(__file__).parent
#: The largest upload read (bytes); larger files are refused with a message.
MAX_UPLOAD = 200 * 2**20
PREVIEW_ROWS = 20
COOKIE = "fairanon_app_token"
#: The form field (or header, for htmx requests) that carries the page's CSRF token.
CSRF_FIELD, CSRF_HEADER = "csrf", "X-CSRF-Token"


class _ForgedRequest(Exception):
    """A POST without the CSRF token of the app's pages."""

def _inferred_schema(table) -> dict:
    """A first schema for an uploaded table: numeric columns numeric, the others
    categorical, every column a quasi-identifier (the user changes roles on the page)."""
    import pandas as pd

    return {str(c): {"role": "qi", "type": "numeric" if pd.api.types.is_numeric_dtype(table[c]) else "categorical"}
            for c in table.columns}


def create_app(job: str | None = None, *, token: str | None = None, session: Session | None = None) -> FastAPI:
    """The app; `token` (default: a new random one) must be given once as ``?token=``."""
    token = token or secrets.token_urlsafe(24)
    csrf = secrets.token_urlsafe(24)
    session = session or Session()

    async def check_csrf(request: Request) -> None:
        # A page of the app carries the token in each form (and htmx sends it as a header);
        # a page of another site cannot read it, so it cannot make the user's browser post.
        if request.method != "POST":
            return
        given = request.headers.get(CSRF_HEADER)
        if given is None:
            given = (await request.form()).get(CSRF_FIELD)
        if not isinstance(given, str) or not secrets.compare_digest(given, csrf):
            raise _ForgedRequest

    app = FastAPI(title="fairanon", docs_url=None, redoc_url=None, openapi_url=None,
                  dependencies=[Depends(check_csrf)])
    app.state.token, app.state.session, app.state.csrf = token, session, csrf

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        # A malformed address or form (a run number that is not a number, a missing file):
        # a message, not the framework's JSON.
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'request'}: {e.get('msg')}"
                             for e in exc.errors())
        return PlainTextResponse(f"Bad request: {problems}.", status_code=400)

    @app.exception_handler(_ForgedRequest)
    async def forged(request: Request, exc: _ForgedRequest):
        return PlainTextResponse("This form did not come from a page of this app (its CSRF token is missing or "
                                 "wrong); reload the page and send it again.", status_code=403)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    templates = Jinja2Templates(directory=HERE / "templates")

    if job is not None:
        from ..jobs import read_document

        session.open_job(read_document(job), os.path.dirname(os.path.abspath(job)), os.path.basename(job))
        session.form = form_of(session.job_requirements)

    @app.middleware("http")
    async def require_token(request: Request, call_next):
        if request.url.path.startswith("/static/"):
            return await call_next(request)
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_UPLOAD + 2**20:  # refused before the body is read
            return PlainTextResponse(f"The request is larger than the app's upload limit of {MAX_UPLOAD // 2**20} MB.",
                                     status_code=413)
        given = request.query_params.get("token")
        if given is not None and secrets.compare_digest(given, token):
            response = await call_next(request)
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
            return response
        if secrets.compare_digest(request.cookies.get(COOKIE, ""), token):
            return await call_next(request)
        return PlainTextResponse("Open the address that `fairanon app` printed (it carries the access token).",
                                 status_code=403)

    def page(request: Request, name: str, status_code: int = 200, **context) -> HTMLResponse:
        context.update(session=session, page_name=name.split(".")[0], csrf=csrf, csrf_field=CSRF_FIELD,
                       csrf_header=CSRF_HEADER)
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    app.state.render = page
    app.include_router(hierarchies.router)
    app.include_router(requirements.router)
    app.include_router(compare.router)

    # -- Data ------------------------------------------------------------------
    @app.get("/")
    async def index():
        return RedirectResponse("/data", status_code=303)

    @app.get("/data", response_class=HTMLResponse)
    async def data(request: Request, error: str | None = None, status_code: int = 200):
        from ..instances.datasets.registry import DATASETS
        from ..models.describe import describe

        inst = session.instance
        description = describe(inst) if inst is not None else None
        preview = inst.table.head(PREVIEW_ROWS) if inst is not None else None
        return page(request, "data.html", status_code, datasets=list(DATASETS), description=description,
                    preview=preview, error=error, roles=ROLES,
                    editable=session.table_upload and session.job_requirements is None)

    @app.post("/data/dataset", response_class=HTMLResponse)
    async def choose_dataset(request: Request):
        form = await request.form()
        name = str(form.get("dataset", ""))
        try:
            session.use({"dataset": name}, name)
            session.job_requirements = None
        except FairanonError as exc:
            return await data(request, error=str(exc), status_code=400)
        return RedirectResponse("/data", status_code=303)

    @app.post("/data/upload", response_class=HTMLResponse)
    async def upload(request: Request, file: UploadFile):
        from ..jobs import read_table

        content = await file.read(MAX_UPLOAD + 1)
        if len(content) > MAX_UPLOAD:
            return await data(request, error=f"The file is larger than {MAX_UPLOAD // 2**20} MB, the app's upload "
                                             "limit; anonymize it with `fairanon anonymize` and a job file.",
                              status_code=413)
        if not content.strip():
            return await data(request, error="The uploaded file is empty.", status_code=400)
        path = session.upload_path(file.filename or "upload.csv")
        with open(path, "wb") as fh:
            fh.write(content)
        try:
            kind = "parquet" if path.endswith((".parquet", ".pq")) else "csv"
            table = read_table(path, kind)
            session.use({kind: path, "schema": _inferred_schema(table)}, os.path.basename(path))
            session.job_requirements = None
        except FairanonError as exc:
            return await data(request, error=str(exc), status_code=400)
        return RedirectResponse("/data", status_code=303)

    @app.post("/data/roles", response_class=HTMLResponse)
    async def roles(request: Request):
        form = await request.form()
        if not session.table_upload:
            return await data(request, error="Roles can be set here for an uploaded table.", status_code=400)
        schema = {}
        for name, attr in session.source["schema"].items():
            entry = {k: v for k, v in attr.items() if k not in ("role", "type", "protected", "negative")}
            entry.update(role=str(form.get(f"role:{name}", attr["role"])), type=str(form.get(f"type:{name}", attr["type"])))
            protected = str(form.get(f"protected:{name}", "")).strip()
            negative = str(form.get(f"negative:{name}", "")).strip()
            if protected:
                entry["protected"] = [v.strip() for v in protected.split(",") if v.strip()]
            if negative:
                entry["negative"] = negative
            schema[name] = entry
        try:
            session.use({**session.source, "schema": schema}, session.source_label)
        except FairanonError as exc:
            return await data(request, error=str(exc), status_code=400)
        return RedirectResponse("/data", status_code=303)

    @app.post("/data/job", response_class=HTMLResponse)
    async def open_job(request: Request, files: list[UploadFile]):
        """A job file picked with the files it names (its data and hierarchy files)."""
        from ..jobs import read_document

        contents = {}
        for upload in files:
            contents[upload.filename or ""] = await upload.read(MAX_UPLOAD + 1)
        if sum(len(c) for c in contents.values()) > MAX_UPLOAD:
            return await data(request, error=f"The files are larger than {MAX_UPLOAD // 2**20} MB together, the "
                                             "app's upload limit.", status_code=413)
        jobs = [n for n in contents if n.endswith((".yaml", ".yml", ".json"))]
        if len(jobs) != 1:
            return await data(request, error=f"Pick one job file (.yaml, .yml or .json) with the files it names; "
                                             f"got {len(jobs)} job files among {sorted(contents)}.", status_code=400)
        folder = session.upload_folder()
        try:
            for name, content in contents.items():
                with open(session.upload_path(name, folder), "wb") as fh:
                    fh.write(content)
            job = session.upload_path(jobs[0], folder)
            session.open_job(read_document(job), folder, os.path.basename(job), picked=True)
        except FairanonError as exc:
            return await data(request, error=str(exc), status_code=400)
        session.form = form_of(session.job_requirements)
        return RedirectResponse("/data", status_code=303)

    # -- Run -----------------------------------------------------------------
    def current_requirements():
        if session.instance is None:
            return None, None, "Choose the data first (Data page)."
        if session.job_requirements is not None:
            from ..models.requirements import requirement_from_spec

            try:
                return session.job_requirements, [requirement_from_spec(s) for s in session.job_requirements], None
            except FairanonError as exc:
                return None, None, str(exc)
        specs, reqs, errors, whole = check_requirements(session.instance, session.form)
        if errors or whole:
            return None, None, "Set valid requirements first (Requirements page)."
        return specs, reqs, None

    @app.get("/run", response_class=HTMLResponse)
    async def run_page(request: Request, error: str | None = None, status_code: int = 200):
        from ..api import METHODS, choose_method

        specs, reqs, problem = current_requirements()
        auto = None
        if reqs:
            time_limit = session.job_settings.get("time_limit")
            # auto's choice reads the whole table (a quarter second on Adult): kept per data and requirements
            key = (id(session.instance), json.dumps(specs, sort_keys=True, default=str), time_limit)
            try:
                if key not in session.auto_choices:
                    session.auto_choices = {key: choose_method(session.instance, reqs, time_limit=time_limit)}
                auto = session.auto_choices[key]
            except FairanonError as exc:
                problem = str(exc)
        return page(request, "run.html", status_code, methods=list(METHODS), specs=specs, auto=auto,
                    problem=problem, error=error, settings=session.job_settings,
                    runs=sorted(session.runs.values(), key=lambda r: -r.id), status=worker.read_status)

    @app.post("/run")
    async def start_run(request: Request):
        from ..api import METHODS

        form = await request.form()
        specs, _, problem = current_requirements()
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
        if seed_text and not seed_text.isdigit():
            return await run_page(request, error=f"The seed must be an int >= 0; got {seed_text!r}.", status_code=400)
        try:
            limit = float(limit_text) if limit_text else None
            if limit is not None and not limit > 0:
                raise ValueError
        except ValueError:
            return await run_page(request, error=f"The time limit must be a positive number of seconds; got "
                                                 f"{limit_text!r}.", status_code=400)
        document = session.job_document(specs, method=method, seed=int(seed_text) if seed_text else None,
                                        time_limit=limit)
        run = session.new_run(document)
        classifier = "logistic" if _have_sklearn() else "none"
        run.format = release_format
        run.process = worker.start(run.job, run.folder, {"classifier": classifier, "format": release_format})
        return RedirectResponse(f"/runs/{run.id}", status_code=303)

    def get_run(run_id: int):
        return session.runs.get(run_id)

    def run_status(run) -> dict:
        status = worker.read_status(run.folder)
        ended = run.process is not None and run.process.poll() is not None  # poll() also reaps an ended worker
        if run.cancelled:
            status.update(state="cancelled", step="cancelled")
        elif status.get("state") != "done" and ended:
            status.update(state="failed", step=f"the worker ended unexpectedly (exit code {run.process.returncode})")
        started = status.get("started")
        status["elapsed_s"] = round((status.get("ended") or time.time()) - started, 1) if started else 0.0
        return status

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    async def run_view(request: Request, run_id: int):
        run = get_run(run_id)
        if run is None:
            return page(request, "missing.html", 404, what=f"run {run_id}")
        return page(request, "progress.html", run=run, status=run_status(run))

    @app.get("/runs/{run_id}/events")
    async def run_events(run_id: int):
        run = get_run(run_id)
        if run is None:
            return PlainTextResponse("no such run", status_code=404)

        async def events():
            while True:
                status = run_status(run)
                yield f"data: {json.dumps(status)}\n\n"
                if status["state"] in ("done", "cancelled", "failed"):
                    return
                await asyncio.sleep(0.25)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.post("/runs/{run_id}/cancel")
    async def cancel(request: Request, run_id: int):
        run = get_run(run_id)
        if run is None:
            return page(request, "missing.html", 404, what=f"run {run_id}")
        if run.process is not None and run.process.poll() is None:
            run.cancelled = True
            worker.cancel(run.process)
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    # -- Results -------------------------------------------------------------
    @app.get("/runs/{run_id}/results", response_class=HTMLResponse)
    async def results(request: Request, run_id: int):
        run = get_run(run_id)
        if run is None:
            return page(request, "missing.html", 404, what=f"run {run_id}")
        status = run_status(run)
        if status["state"] != "done":
            return RedirectResponse(f"/runs/{run_id}", status_code=303)
        return page(request, "results.html", run=run, status=status, **_results(run))

    @app.get("/runs/{run_id}/report.html")
    async def html_report(request: Request, run_id: int):
        """The Results page as one standalone HTML file (styles inline, no scripts, no links into the app)."""
        from .._version import __version__

        run = get_run(run_id)
        if run is None:
            return page(request, "missing.html", 404, what=f"run {run_id}")
        status = run_status(run)
        if status["state"] != "done":
            return page(request, "missing.html", 404, what=f"report of run {run_id} yet (it is {status['state']})")
        with open(run.job, encoding="utf-8") as fh:
            job_text = fh.read()
        response = page(request, "report.html", run=run, status=status, standalone=True, version=__version__,
                        css=(HERE / "static" / "app.css").read_text(encoding="utf-8"), job_text=job_text,
                        **_results(run))
        response.headers["Content-Disposition"] = f'attachment; filename="report-run{run_id}.html"'
        return response

    @app.get("/runs/{run_id}/files/{name}")
    async def download(request: Request, run_id: int, name: str):
        run = get_run(run_id)
        files = worker.run_files(run.folder) if run is not None else {}
        if name not in files:
            return page(request, "missing.html", 404, what=name)
        return FileResponse(files[name], filename=name)

    return app


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
    from .plots import risk_svg, utility_svg

    release_doc = (document or {}).get("release") or {}
    conflict = {"reason": release_doc.get("reason"), "requirements": (release_doc.get("provenance") or {}).get(
        "conflict") or []} if release_doc.get("status") == "INFEASIBLE" else None
    return {"files": sorted(files), "document": document, "utility": utility, "log": log, "table": table,
            "highlighted": highlighted, "conflict": conflict,
            "risk_plot": risk_svg(document["risk"]) if (document or {}).get("risk") else None,
            "utility_plot": utility_svg(utility) if utility else None}


def _have_sklearn() -> bool:
    import importlib.util

    return importlib.util.find_spec("sklearn") is not None
