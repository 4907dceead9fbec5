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


class _Stopped(BaseException):
    """A stop signal before the server is made. A BaseException, as KeyboardInterrupt is:
    code that turns an Exception into its own error (logging's configuration, a data
    loader's) lets it through."""


def _stop_signals() -> tuple:
    """The signals that stop the app: Ctrl-C, a service manager's SIGTERM and, where it
    exists, SIGHUP (the terminal closed)."""
    import signal

    return (signal.SIGINT, signal.SIGTERM) + ((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())


def _server(config, stopping):
    """A uvicorn server that sets the threading event `stopping` when a signal stops it
    (the app's progress streams then end instead of holding the stop for
    :data:`STOP_GRACE` seconds) and that SIGHUP stops as SIGINT and SIGTERM do."""
    import contextlib
    import signal
    import threading

    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            stopping.set()
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self):
            extra = [s for s in _stop_signals() if s not in uvicorn.server.HANDLED_SIGNALS]
            own = threading.current_thread() is threading.main_thread()
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in extra} if own else {}
            try:
                with super().capture_signals():
                    yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server(config)


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
    serve until Ctrl-C, SIGTERM or SIGHUP, which stop it (the runs cancelled, the
    session's folder removed) and return 0; a further stop signal meanwhile only says
    that the runs are being cancelled."""
    import contextlib
    import secrets
    import signal
    import sys
    import threading
    import webbrowser

    import uvicorn

    sock = listening_socket(host, port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    closing, live, server = False, 0, None

    def stop(signum, frame) -> None:
        if not closing:
            if server is None:
                raise _Stopped
            # from the server's making on, a stop is its own (before it handles the signals, and
            # when it raises them again after its stop): it ends the progress streams and stops
            server.handle_exit(signum, frame)
            return
        # a second Ctrl-C while the runs are cancelled: the stop goes on, and says so (where it
        # can: after a SIGHUP the terminal may be gone, and an error here would stop the stop)
        with contextlib.suppress(OSError):
            print(f"fairanon app: stopping: cancelling {live} run{'s' if live != 1 else ''}...", file=sys.stderr,
                  flush=True)

    # before the server is made, a stop signal raises _Stopped; then the server handles it
    # (uvicorn itself while it serves, this handler before and after: uvicorn raises the
    # signal again for the handler it found), so that a stop is an ordinary return
    signals = _stop_signals() if threading.current_thread() is threading.main_thread() else ()
    previous = {sig: signal.signal(sig, stop) for sig in signals}
    session = None
    try:
        from .session import Session
        from .web import create_app as create, warm_up_after_the_first_page

        # held while the folder is made and named here: a stop in between would leave it behind
        held = signal.pthread_sigmask(signal.SIG_BLOCK, signals) if signals and hasattr(signal, "pthread_sigmask") \
            else None
        try:
            session = Session()
        finally:
            if held is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
        app = create(job, token=token, port=port, session=session)
        warm_up_after_the_first_page(app)
        server = _server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=STOP_GRACE),
                         app.state.stopping)
        url = f"http://{host}:{port}/data?token={token}"
        print(f"fairanon app: {url}  (Ctrl-C stops it)", flush=True)
        if open_browser:
            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        server.run(sockets=[sock])
    except _Stopped:
        pass
    finally:
        closing = True
        try:
            sock.close()
            if session is not None:
                live = sum(r.process is not None and r.process.poll() is None for r in session.runs.values())
                session.close()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    print("fairanon app: stopped", file=sys.stderr, flush=True)
    return 0
