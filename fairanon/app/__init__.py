"""``fairanon app``: a local web app over the API, for choosing the data, setting the
requirements, running a method in a worker process with its progress pushed to the
page, and reading the verifier's report with its witnesses.

Needs the ``app`` extra (``pip install 'fairanon[app]'``): FastAPI, Uvicorn, Jinja2 and
python-multipart; htmx is served from the package. See ``docs/app.md``.
"""

from __future__ import annotations

__all__ = ["create_app", "listening_socket", "serve"]


def create_app(job: str | None = None, *, token: str | None = None, port: int | None = None):
    """The app (an ASGI application); see :func:`fairanon.app.web.create_app`."""
    from .web import create_app as _create

    return _create(job, token=token, port=port)


#: Seconds an open connection (a page's progress stream) may hold the server's stop.
STOP_GRACE = 3


class _Stopped(Exception):
    """SIGINT or SIGTERM, once the server has stopped (uvicorn raises the signal again then)."""


def _stop(signum, frame) -> None:
    raise _Stopped


def listening_socket(host: str, port: int):
    """A socket bound to `host`:`port` and listening; port 0 takes a free one. A port in
    use, or one the user may not take, is an :class:`~fairanon.exceptions.InvalidParameterError`
    saying so in one line, before any address is printed."""
    import errno
    import socket

    from ..exceptions import InvalidParameterError

    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidParameterError(f"The port must be an int in [0, 65535]; got {port!r}.")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a port in TIME_WAIT is free
    try:
        sock.bind((host, port))
        sock.listen(128)  # a browser that connects before the server runs waits in the backlog
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InvalidParameterError(f"Port {port} on {host} is in use (another fairanon app or another "
                                        "program); choose another with --port, or --port 0 for any free "
                                        "port.") from None
        raise InvalidParameterError(f"Cannot listen on {host}:{port}: {exc.strerror}; choose another port "
                                    "with --port.") from None
    return sock


def serve(job: str | None = None, *, port: int = 8765, open_browser: bool = True, host: str = "127.0.0.1") -> int:
    """Start the app on `host`:`port` (loopback by default; port 0: any free port), print
    its address with the access token once the port is bound, open the browser, and
    serve until Ctrl-C or SIGTERM, which stop it (the runs cancelled, the session's
    folder removed) and return 0."""
    import secrets
    import signal
    import sys
    import threading
    import webbrowser

    import uvicorn

    sock = listening_socket(host, port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    # uvicorn handles SIGINT and SIGTERM while it serves, then raises the signal again
    # for the handler it found: this one, so that a stop is an ordinary return
    main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)} if main_thread else {}
    app = None
    try:
        from .web import warm_up_after_the_first_page

        app = create_app(job, token=token, port=port)
        url = f"http://{host}:{port}/data?token={token}"
        print(f"fairanon app: {url}  (Ctrl-C stops it)", flush=True)
        if open_browser:
            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        warm_up_after_the_first_page(app)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=STOP_GRACE))
        server.run(sockets=[sock])
    except _Stopped:
        pass
    finally:
        sock.close()
        if app is not None:
            app.state.session.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("fairanon app: stopped", file=sys.stderr, flush=True)
    return 0
