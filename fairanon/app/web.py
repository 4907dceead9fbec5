"""The app (FastAPI, Jinja2 templates, htmx; every asset is served from the package):
the access token and the CSRF token checked in one place, the page renderer, and one
router per step of the steward's work (:mod:`~fairanon.app.data`,
:mod:`~fairanon.app.hierarchies`, :mod:`~fairanon.app.requirements`,
:mod:`~fairanon.app.runs`, :mod:`~fairanon.app.compare`). Each route reads a form,
calls the API or starts a worker, and renders what comes back; an error of the API is
shown as its message on the page.
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from . import compare, data, hierarchies, requirements, runs
from .data import MAX_UPLOAD
from .requirements import whole_number
from .session import Session

HERE = Path(__file__).parent
#: The access token's cookie; an app on a given port adds it to the name, since a browser
#: sends the cookies of a host to each of its ports (as Jupyter names its cookies).
COOKIE = "fairanon_app_token"
#: The form field (or header, for htmx requests) that carries the page's CSRF token.
CSRF_FIELD, CSRF_HEADER = "csrf", "X-CSRF-Token"


class _ForgedRequest(Exception):
    """A POST without the CSRF token of the app's pages."""


def _same(given: str, secret: str) -> bool:
    """Whether `given` is `secret`, in constant time (``compare_digest`` refuses a str
    that is not ASCII, so both are compared as UTF-8 bytes)."""
    return secrets.compare_digest(given.encode("utf-8", "surrogatepass"), secret.encode("utf-8"))


def create_app(job: str | None = None, *, token: str | None = None, session: Session | None = None,
               port: int | None = None) -> FastAPI:
    """The app; `token` (default: a new random one) must be given once as ``?token=``;
    `port`, the port it is served on, names its cookie."""
    token = token or secrets.token_urlsafe(24)
    cookie = COOKIE if port is None else f"{COOKIE}_{port}"
    csrf = secrets.token_urlsafe(24)
    owned = session is None  # a session given by the caller is the caller's to close
    session = Session() if owned else session

    async def check_csrf(request: Request) -> None:
        # A page of the app carries the token in each form (and htmx sends it as a header);
        # a page of another site cannot read it, so it cannot make the user's browser post.
        if request.method != "POST":
            return
        given = request.headers.get(CSRF_HEADER)
        if given is None:
            given = (await request.form()).get(CSRF_FIELD)
        if not isinstance(given, str) or not _same(given, csrf):
            raise _ForgedRequest

    app = FastAPI(title="fairanon", docs_url=None, redoc_url=None, openapi_url=None,
                  dependencies=[Depends(check_csrf)])
    app.state.token, app.state.session, app.state.csrf = token, session, csrf
    #: Set when the server stops (:func:`fairanon.app.serve`): a progress stream then ends,
    #: rather than holding the stop until the server cancels it.
    app.state.stopping = threading.Event()

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

        try:
            session.open_job(read_document(job), os.path.dirname(os.path.abspath(job)), os.path.basename(job))
        except BaseException:  # no app holds the session: its folder goes now, if it is ours
            if owned:
                session.close()
            raise

    @app.middleware("http")
    async def require_token(request: Request, call_next):
        if request.url.path.startswith("/static/"):
            return await call_next(request)
        length = whole_number(request.headers.get("content-length", ""))
        if length is not None and length > MAX_UPLOAD + 2**20:  # refused before the body is read
            return PlainTextResponse(f"The request is larger than the app's upload limit of {MAX_UPLOAD // 2**20} MB.",
                                     status_code=413)
        given = request.query_params.get("token")
        if given is not None and _same(given, token):
            response = await call_next(request)
            response.set_cookie(cookie, token, httponly=True, samesite="strict")
            return response
        if _same(request.cookies.get(cookie, ""), token):
            return await call_next(request)
        return PlainTextResponse("Open the address that `fairanon app` printed (it carries the access token).",
                                 status_code=403)

    def page(request: Request, name: str, status_code: int = 200, **context) -> HTMLResponse:
        context.update(session=session, page_name=name.split(".")[0], csrf=csrf, csrf_field=CSRF_FIELD,
                       csrf_header=CSRF_HEADER)
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    app.state.render, app.state.templates = page, templates
    for module in (data, hierarchies, requirements, runs, compare):  # the steps, in the steward's order
        app.include_router(module.router)

    return app


def warm_up(app: FastAPI) -> None:
    """Import what the pages import on their first visit (the API's method table, the
    bench's comparison and plots, matplotlib with its fonts and SVG writer: about 2 s of
    CPU in all) and compile every template, so that no page pays for it later: a first
    Compare page during a long run took 0.27 s loading the bench's modules."""
    from matplotlib.figure import Figure

    from ..api import METHODS
    from ..bench.compare import compare_runs  # noqa: F401
    from ..bench.plots import comparison_views  # noqa: F401
    from ..jobs import read_release  # noqa: F401
    from ..models.describe import describe  # noqa: F401
    from ..models.requirements import requirement_from_spec  # noqa: F401
    from ..solver.fulldomain import Candidates  # noqa: F401
    from .plots import svg

    METHODS.load()  # the methods themselves, imported on first use

    svg(Figure(figsize=(1, 1)))  # a first drawing loads the font list and the SVG writer
    environment = app.state.templates.env
    for name in environment.list_templates():
        environment.get_template(name)


def warm_up_after_the_first_page(app: FastAPI) -> None:
    """Run :func:`warm_up` in a thread once the app has answered its first request (so
    that the first page does not wait for it), while the user reads that page."""
    started = threading.Event()

    @app.middleware("http")
    async def warm(request: Request, call_next):
        response = await call_next(request)
        if not started.is_set():
            started.set()
            threading.Thread(target=warm_up, args=(app,), name="fairanon-app-warm-up", daemon=True).start()
        return response
