"""``fairanon app`` itself: the command started as a user starts it (``--no-browser``,
``--port 0`` for a free port), its printed address used with and without the token,
then stopped by SIGINT and SIGTERM as Ctrl-C and a service manager stop it; a port in
use is a one-line error, with no address printed."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
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


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
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
