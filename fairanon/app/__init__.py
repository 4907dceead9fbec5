"""``fairanon app``: a local web app over the API, for choosing the data, setting the
requirements, running a method in a worker process with its progress pushed to the
page, and reading the verifier's report with its witnesses.

Needs the ``app`` extra (``pip install 'fairanon[app]'``): FastAPI, Uvicorn, Jinja2 and
python-multipart; htmx is served from the package. See ``docs/app.md``.
"""

from __future__ import annotations

__all__ = ["create_app", "serve"]


def create_app(job: str | None = None, *, token: str | None = None, port: int | None = None):
    """The app (an ASGI application); see :func:`fairanon.app.web.create_app`."""
    from .web import create_app as _create

    return _create(job, token=token, port=port)


def serve(job: str | None = None, *, port: int = 8765, open_browser: bool = True, host: str = "127.0.0.1") -> int:
    """Start the app on `host`:`port` (loopback by default), print its address with the
    access token, open the browser, and serve until Ctrl-C."""
    import secrets
    import threading
    import webbrowser

    import uvicorn

    token = secrets.token_urlsafe(24)
    app = create_app(job, token=token, port=port)
    url = f"http://{host}:{port}/data?token={token}"
    print(f"fairanon app: {url}  (Ctrl-C stops it)", flush=True)
    if open_browser:  # once the server listens
        threading.Timer(1.0, webbrowser.open, (url,)).start()
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        app.state.session.close()
    return 0
