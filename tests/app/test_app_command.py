"""``fairanon app`` itself: the command started as a user starts it (``--no-browser``,
``--port 0`` for a free port), its printed address used with and without the token,
then stopped by SIGINT, SIGTERM and SIGHUP as Ctrl-C, a service manager and a closed
terminal stop it (with a progress stream open, and with a second Ctrl-C while runs are
being cancelled); a port in use is a one-line error, with no address printed."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("multipart")

from fairanon.app import listening_socket  # noqa: E402
from fairanon.cli import main  # noqa: E402

ADDRESS = re.compile(r"^fairanon app: (http://127\.0\.0\.1:(\d+)/data\?token=([\w-]+))  \(Ctrl-C stops it\)$")


def _get(url: str) -> tuple[int, str, str]:
    """(status, body, Set-Cookie header) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, response.read().decode(), response.headers.get("set-cookie", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), exc.headers.get("set-cookie", "")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["ctrl-c", "sigterm", "sighup"])
def test_the_command_serves_its_printed_address_and_stops_cleanly(tmp_path, stop):
    # the session's folder goes under TMPDIR: after the stop nothing of it is left
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-m", "fairanon.cli", "app", "--no-browser", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = process.stdout.readline().rstrip("\n")
        found = ADDRESS.match(line)
        assert found, (line, process.stderr.read() if process.poll() is not None else "")
        url, port, token = found.groups()
        assert int(port) > 0  # the port bound, not the 0 asked for
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith("fairanon-app-")]
        status, page, cookie = _get(url)
        assert status == 200 and "no data chosen" in page
        assert cookie.startswith(f"fairanon_app_token_{port}={token};")  # named by the port it is served on
        refused = "Open the address that `fairanon app` printed (it carries the access token)."
        assert _get(f"http://127.0.0.1:{port}/data")[:2] == (403, refused)
        assert _get(f"http://127.0.0.1:{port}/data?token={token}x")[:2] == (403, refused)
        process.send_signal(stop)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert out == "" and err == "fairanon app: stopped\n"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("fairanon-app-")]
    listening_socket("127.0.0.1", int(port)).close()  # nothing listens on the port any more


#: `fairanon app` with runs put into its session as it starts: argv[1] "stream", a run
#: whose worker's status says "running" for ever (no process); argv[1] "workers", two
#: runs whose processes (each its own group, as a worker's) note a SIGINT in a file of
#: argv[2] and go on until killed, and a cancel grace of 2 s rather than 10.
DRIVER = """import os, subprocess, sys, time
from fairanon.app import web, worker
from fairanon.app.session import Run
from fairanon.cli import main

WORKER = ("import os, signal, sys, time; name = sys.argv[1]; "
          "signal.signal(signal.SIGINT, lambda *_: open(name, 'a').write(' SIGINT')); "
          "open(name, 'w').write(str(os.getpid())); time.sleep(600)")
create = web.create_app

def create_app(*args, **kwargs):
    app = create(*args, **kwargs)
    session = app.state.session
    if sys.argv[1] == "stream":
        folder = os.path.join(session.folder, "r1")
        os.makedirs(folder)
        worker.write_status(folder, state="running", step="anonymizing", started=time.time())
        session.runs[1] = Run(1, folder, "job.yaml")
    else:
        worker.CANCEL_GRACE = 2.0
        for n in (1, 2):
            name = os.path.join(sys.argv[2], f"worker{n}")
            process = subprocess.Popen([sys.executable, "-c", WORKER, name], start_new_session=True)
            while not os.path.exists(name):
                time.sleep(0.05)
            session.runs[n] = Run(n, session.folder, "job.yaml", process=process)
    return app

web.create_app = create_app
sys.exit(main(["app", "--no-browser", "--port", "0"]))
"""


def _driven(tmp_path, *args: str) -> tuple[subprocess.Popen, str, str]:
    """The app started by :data:`DRIVER` with `args` (its folder under `tmp_path`): the
    process, its port and its token."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-c", DRIVER, *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline().rstrip("\n")
    found = ADDRESS.match(line)
    if not found:
        process.kill()
        pytest.fail(f"no address printed: {line!r} {process.communicate()[1]}")
    return process, found.group(2), found.group(3)


def test_a_stop_with_a_progress_stream_open_ends_the_stream_and_stops_cleanly(tmp_path):
    # uvicorn waited STOP_GRACE for the stream, then cancelled it with an error and a traceback
    process, port, token = _driven(tmp_path, "stream")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/runs/1/events?token={token}", timeout=120) as stream:
            assert stream.readline().startswith(b'data: {"state": "running"')
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=120)
            rest = stream.read()  # the stream ended by the app: at most the events sent before the stop
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0 and out == "" and err == "fairanon app: stopped\n"
    assert all(line.startswith(b"data: ") for line in rest.split(b"\n\n") if line.strip())
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("fairanon-app-")]


def test_a_second_ctrl_c_while_runs_are_cancelled_only_says_so(tmp_path):
    # it raised inside the session's close: exit 1 with a traceback, the folder and the workers left
    process, _, _ = _driven(tmp_path, "workers", str(tmp_path))
    notes = [tmp_path / "worker1", tmp_path / "worker2"]
    pids = [int(note.read_text().split()[0]) for note in notes]
    try:
        process.send_signal(signal.SIGINT)
        # both workers signalled before either is waited for; the app then waits out the grace
        while not all("SIGINT" in note.read_text() for note in notes) and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
        left = [pid for pid in pids if _exists(pid)]
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        for pid in pids:  # whatever the outcome, no worker outlives the test
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert process.returncode == 0, err
    assert out == "" and err == "fairanon app: stopping: cancelling 2 runs...\nfairanon app: stopped\n"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("fairanon-app-")]
    assert left == []  # each ignored the SIGINT: killed with its group after the grace, and reaped


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_port_in_use_is_a_one_line_error_without_an_address(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["app", "--no-browser", "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"fairanon: error: Port {port} on 127.0.0.1 is in use (another fairanon app or another "
                   "program); choose another with --port, or --port 0 for any free port.\n")


def test_a_port_out_of_range_is_a_one_line_error(capsys):
    assert main(["app", "--no-browser", "--port", "70000"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "fairanon: error: The port must be an int in [0, 65535]; got 70000.\n"


def test_a_job_file_that_cannot_be_read_is_an_error_without_an_address(capsys, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the session's folder would be
    job = tmp_path / "job.yaml"
    job.write_text("instance: {dataset: adult\n")  # the mapping is not closed
    assert main(["app", str(job), "--no-browser", "--port", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"fairanon: error: Job file '{job}'") and err.count("\n") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["job.yaml"]  # no session folder left behind
