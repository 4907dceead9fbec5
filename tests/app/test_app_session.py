"""The app's session under requests served at once, and its files: a run whose files
cannot be copied leaves nothing behind, runs started together get two numbers, two trees
applied together both stay, a run never reads half of a change of the requirements, nor the
Requirements page its data apart from its fields, a numeric column's text is read once and a data file gone
meanwhile is a message, files of one name are copied apart, and a job archive that
cannot be written is a message with no half file left; the app's stop cancels its runs
against one deadline, a session given to the app stays the caller's, and the warm-up
draws and compiles every page's parts. Interleavings are forced with events, never
with sleeps."""

from __future__ import annotations

import html
import io
import os
import threading
import zipfile

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("multipart")

from fastapi.testclient import TestClient  # noqa: E402

import fairanon.jobs  # noqa: E402
from fairanon.app.session import Session  # noqa: E402
from fairanon.app.web import CSRF_HEADER, create_app  # noqa: E402
from fairanon.exceptions import InvalidParameterError  # noqa: E402
from fairanon.instances.builders import with_hierarchy  # noqa: E402
from fairanon.instances.hierarchy import Hierarchy  # noqa: E402

TOKEN = "test-token"
LOAN = {"instance": {"dataset": "ruggieri_loan"}, "requirements": [{"k_anonymity": {"k": 2}}]}


@pytest.fixture
def session():
    s = Session()
    yield s
    s.close()


class _SpiedLock:
    """The session's lock, which sets `waiting` when the thread named `name` asks for it
    while another thread holds it (a thread that gets it at once has not waited)."""

    def __init__(self, name: str, waiting: threading.Event):
        self._lock, self._name, self._waiting = threading.RLock(), name, waiting

    def __enter__(self):
        if threading.current_thread().name == self._name:
            if self._lock.acquire(blocking=False):
                return True
            self._waiting.set()
        return self._lock.__enter__()

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)


def _in_thread(name: str, function, *args) -> tuple[threading.Thread, dict, threading.Event]:
    """`function(*args)` started in a thread named `name`: the thread, what it returned or
    raised (``{"value": ...}`` or ``{"error": ...}``), and an event set when it ended."""
    out, ended = {}, threading.Event()

    def target():
        try:
            out["value"] = function(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc
        finally:
            ended.set()

    thread = threading.Thread(target=target, name=name)
    thread.start()
    return thread, out, ended


def _race(first, second, inside: threading.Event, waiting: threading.Event, go_on: threading.Event):
    """`first` started and held `inside` its change, then `second` started; once the
    second waits at the lock (or, without one, has ended) the first goes on. Returns
    both outcomes (as :func:`_in_thread` gives them), neither an error."""
    a, a_out, _ = _in_thread("A", first)
    inside.wait()
    b, b_out, b_ended = _in_thread("B", second)
    while not (waiting.is_set() or b_ended.is_set()):  # B at the lock (or, without one, already done)
        waiting.wait(0.05)
    go_on.set()
    a.join()
    b.join()
    assert "error" not in a_out and "error" not in b_out, (a_out, b_out)
    return a_out, b_out


def test_a_run_whose_files_cannot_be_copied_leaves_nothing_and_the_next_takes_its_number(session):
    with pytest.raises(InvalidParameterError, match="cannot be copied into the run"):
        session.new_run({"instance": {"csv": "/nonexistent/p.csv"}, "requirements": []})
    assert session.runs == {} and not os.listdir(os.path.join(session.folder, "runs"))
    run = session.new_run(LOAN)
    assert run.id == 1 and os.path.isfile(run.job) and session.runs == {1: run}


def test_two_runs_started_at_once_get_two_numbers(session, tmp_path, monkeypatch):
    """Run A stops while copying its data; run B starts then. B waits for the number
    until A has registered, then takes the next one (before, both took 1)."""
    table = tmp_path / "p.csv"
    table.write_text("a\n1\n", encoding="utf-8")
    copying, go_on, waiting = threading.Event(), threading.Event(), threading.Event()
    session.lock = _SpiedLock("B", waiting)
    copy = Session._copy

    def held_copy(self, *args):
        if threading.current_thread().name == "A":
            copying.set()
            go_on.wait()
        return copy(self, *args)

    document = {"instance": {"csv": str(table)}, "requirements": []}
    monkeypatch.setattr(Session, "_copy", held_copy)
    a_out, b_out = _race(lambda: session.new_run(document), lambda: session.new_run(document), copying, waiting,
                         go_on)
    assert (a_out["value"].id, b_out["value"].id) == (1, 2)
    assert sorted(session.runs) == [1, 2] and session.runs[2] is b_out["value"]
    for run in session.runs.values():
        assert os.path.isfile(os.path.join(run.folder, "data", "p.csv"))


def test_two_trees_applied_at_once_both_stay(session, monkeypatch):
    """Applying purpose's tree stops while the data is read again; emp's tree is applied
    then. Before, the first to finish was overwritten by the other; now both trees are
    in the job's schema and in the data."""
    session.use({"dataset": "ruggieri_loan"}, "ruggieri_loan")
    schema = session.instance.schema
    purpose = with_hierarchy(schema["purpose"], Hierarchy.from_levels(
        [["housing", "any purpose", "*"], ["car", "any purpose", "*"]]))
    emp = with_hierarchy(schema["emp"], Hierarchy.from_levels([["no", "any", "*"], ["yes", "any", "*"]]))
    reading, go_on, waiting = threading.Event(), threading.Event(), threading.Event()
    session.lock = _SpiedLock("B", waiting)
    load = fairanon.jobs.load_instance_spec

    def held_load(*args, **kwargs):
        if threading.current_thread().name == "A":
            reading.set()
            go_on.wait()
        return load(*args, **kwargs)

    monkeypatch.setattr(fairanon.jobs, "load_instance_spec", held_load)
    _race(lambda: session.set_attribute(purpose), lambda: session.set_attribute(emp), reading,
          waiting, go_on)
    spec = session.source["schema"]
    assert spec["purpose"]["hierarchy"][0] == ["housing", "any purpose", "*"]
    assert spec["emp"]["hierarchy"][0] == ["no", "any", "*"]
    assert session.instance.schema["purpose"].hierarchy.ancestors("car") == ["car", "any purpose", "*"]
    assert session.instance.schema["emp"].hierarchy.ancestors("yes") == ["yes", "any", "*"]


@pytest.fixture
def client():
    app = create_app(token=TOKEN)
    with TestClient(app, headers={CSRF_HEADER: app.state.csrf}) as c:
        assert c.get(f"/data?token={TOKEN}").status_code == 200
        yield c
    app.state.session.close()


def test_a_numeric_columns_text_is_read_once_and_a_read_error_is_a_message(client, monkeypatch):
    """The preview reads a numeric column as written once per data; a file that can no
    longer be read (an OSError of the disk, a loader's ValueError) is a message, as for
    the Data page, not an error of the server."""
    files = {"file": ("people.csv", b"age,income\n030,10\n45.0,20\n45,30\n", "text/csv")}
    assert client.post("/data/upload", files=files).status_code == 200
    form = {"attr": "age", "builder": "intervals", "widths": "10"}
    first = client.post("/hierarchies/preview", data=form)
    assert first.status_code == 200 and "[40-50)" in first.text and "45.0" in first.text
    for error in (OSError(5, "Input/output error"), ValueError("unreadable bytes")):
        def broken(*args, error=error, **kwargs):
            raise error

        with monkeypatch.context() as mp:
            mp.setattr(fairanon.jobs, "load_instance_spec", broken)
            again = client.post("/hierarchies/preview", data=form)  # the column the session holds
            other = client.post("/hierarchies/preview", data={**form, "attr": "income"})
        assert again.status_code == 200 and again.text == first.text
        assert other.status_code == 200 and f"Cannot load the data: {error}" in html.unescape(other.text)


def test_files_of_one_name_are_copied_apart(session, tmp_path):
    """Three files named ``1`` and one named ``2`` (data/1 is a file, so the second
    ``1`` cannot go in a folder data/1)."""
    paths = []
    for folder in ("a", "b", "c", "d"):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / ("2" if folder == "d" else "1")
        path.write_text(folder, encoding="utf-8")
        paths.append(str(path))
    document = {"instance": {"csv": paths[0], "schema": {
        name: {"role": "qi", "type": "categorical", "hierarchy": path}
        for name, path in zip(("x", "y", "z"), paths[1:])}}}
    run = session.new_run(document)
    written = fairanon.jobs.read_document(run.job)["instance"]
    named = [written["csv"], *(written["schema"][n]["hierarchy"] for n in ("x", "y", "z"))]
    assert len(set(named)) == 4
    for relative, folder in zip(named, "abcd"):
        with open(os.path.join(run.folder, relative), encoding="utf-8") as fh:
            assert fh.read() == folder


def test_a_job_archive_that_cannot_be_written_is_a_message(client, failing_run, monkeypatch):
    run, _ = failing_run(client.app.state.session)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as mp:
        mp.setattr(zipfile.ZipFile, "write", full)
        response = client.get(f"/runs/{run.id}/files/job.zip")
    assert response.status_code == 500
    assert response.text.startswith("The run's job archive cannot be written: ") and "No space left" in response.text
    assert not [n for n in os.listdir(run.folder) if n.endswith((".part", ".zip"))]
    archive = client.get(f"/runs/{run.id}/files/job.zip")  # once there is room again
    assert zipfile.ZipFile(io.BytesIO(archive.content)).namelist()[0] == "job.yaml"


def test_a_cancel_as_the_worker_starts_is_quiet(tmp_path, capfd):
    """SIGINT to the worker's group as soon as it exists, while its interpreter starts:
    it waits (blocked) for the worker's handler, so no command runs, the run is
    cancelled and nothing is printed on the app's terminal (a KeyboardInterrupt
    traceback was when it came during the imports)."""
    import signal

    from fairanon.app import worker

    job = tmp_path / "job.yaml"
    job.write_text("instance: {dataset: ruggieri_loan}\nrequirements: [{k_anonymity: {k: 2}}]\n", encoding="utf-8")
    process = worker.start(str(job), str(tmp_path), {"classifier": "none", "format": "csv", "seed": None})
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait() == 0
    status = worker.read_status(str(tmp_path))
    assert status["state"] == "cancelled" and status["code"] is None  # the command was not started
    assert not (tmp_path / "out").exists()
    assert capfd.readouterr().err == ""


class _Stubborn:
    """A worker's process (as :func:`fairanon.app.worker.cancel` sees it) that ignores
    SIGINT: each wait runs out, moving the clock `now` (a one-item list) on by its timeout."""

    def __init__(self, pid: int, now: list, calls: list):
        self.pid, self.now, self.calls, self.killed = pid, now, calls, False

    def poll(self):
        return 0 if self.killed else None

    def wait(self, timeout=None):
        import subprocess

        self.calls.append(("wait", self.pid, timeout))
        if self.killed:
            return 0
        self.now[0] += timeout
        raise subprocess.TimeoutExpired("worker", timeout)


def test_runs_are_cancelled_together_against_one_deadline(monkeypatch):
    """Two runs that ignore SIGINT: both groups get SIGINT before any wait, the first
    wait takes the whole grace and the second none of it, then both groups are killed
    (the stop took the grace once per run, and a second Ctrl-C meanwhile raised)."""
    import signal

    from fairanon.app import worker

    now, calls = [100.0], []
    processes = [_Stubborn(pid, now, calls) for pid in (11, 12)]

    def killpg(pid, sig):
        calls.append(("kill", pid, sig))
        if sig == signal.SIGKILL:
            next(p for p in processes if p.pid == pid).killed = True

    monkeypatch.setattr(worker.os, "killpg", killpg)
    monkeypatch.setattr(worker.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(worker, "CANCEL_GRACE", 10.0)
    worker.cancel(*processes)
    assert calls == [("kill", 11, signal.SIGINT), ("kill", 12, signal.SIGINT),
                     ("wait", 11, 10.0), ("wait", 12, 0.0),
                     ("kill", 11, signal.SIGKILL), ("wait", 11, None), ("kill", 12, signal.SIGKILL), ("wait", 12, None)]


def test_a_session_given_to_the_app_is_not_closed_by_a_job_error(session, tmp_path, monkeypatch):
    """A job file that cannot be read: the app made with the caller's session leaves
    it (and its folder) to the caller; one it made itself it removes."""
    job = tmp_path / "job.yaml"
    job.write_text("instance: {dataset: adult\n", encoding="utf-8")  # the mapping is not closed
    with pytest.raises(InvalidParameterError):
        create_app(str(job), token=TOKEN, session=session)
    assert os.path.isdir(session.folder)
    made = []
    original = Session.__init__

    def spied(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(self.folder)

    monkeypatch.setattr(Session, "__init__", spied)
    with pytest.raises(InvalidParameterError):
        create_app(str(job), token=TOKEN)
    assert len(made) == 1 and not os.path.exists(made[0])


def test_the_warm_up_runs(session):
    """:func:`~fairanon.app.web.warm_up` imports what the pages import, draws once and
    compiles every template: a renamed import or a broken template fails here, not in a
    thread of a running app where nobody sees it."""
    from fairanon.app.web import warm_up

    app = create_app(token=TOKEN, session=session)
    environment = app.state.templates.env
    warm_up(app)
    assert len(environment.cache) == len(environment.list_templates()) > 0  # each compiled once


def test_figures_drawn_at_once_each_keep_their_text_as_text(monkeypatch):
    """:func:`~fairanon.app.plots.svg` sets matplotlib's settings (process-wide) for one
    drawing: a second drawing while the first is written waits for it. Without the wait
    the second was written under the settings the first's end put back (its text drawn
    as paths) and its own end left the settings changed."""
    import matplotlib
    from matplotlib.figure import Figure

    from fairanon.app import plots

    asked = threading.Event()  # the second drawing asked for the lock (or, without one, went on)
    monkeypatch.setattr(plots, "_RC_LOCK", _SpiedLock("second", asked))
    before = matplotlib.rcParams["svg.fonttype"]
    first, second = Figure(figsize=(1, 1)), Figure(figsize=(1, 1))
    first.text(0.5, 0.5, "first")
    second.text(0.5, 0.5, "second")
    first_written, seen = threading.Event(), {}
    savefig = Figure.savefig

    def spied(fig, *args, **kwargs):
        if fig is first:  # the first waits inside its drawing until the second has come
            started.set()
            asked.wait()
        else:
            asked.set()
            first_written.wait()  # the second draws once the first is done
        seen[fig] = matplotlib.rcParams["svg.fonttype"]
        return savefig(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spied)
    started = threading.Event()
    one, out_one, _ = _in_thread("first", plots.svg, first)
    started.wait()
    two, out_two, _ = _in_thread("second", plots.svg, second)
    one.join()
    first_written.set()
    two.join()
    assert "error" not in out_one and "error" not in out_two, (out_one, out_two)
    assert seen == {first: "none", second: "none"}
    assert "<text" in out_one["value"] and "<text" in out_two["value"]
    assert matplotlib.rcParams["svg.fonttype"] == before


def test_a_tree_made_for_a_table_is_not_applied_to_another(session):
    """A tree built while another request chose other data is refused with a message
    (purpose's tree is not written into German credit's schema); a change of the same
    table's schema meanwhile does not count."""
    session.use({"dataset": "ruggieri_loan"}, "ruggieri_loan")
    built_for = session.data
    purpose = with_hierarchy(built_for.instance.schema["purpose"], Hierarchy.from_levels(
        [["housing", "any purpose", "*"], ["car", "any purpose", "*"]]))
    emp = with_hierarchy(built_for.instance.schema["emp"], Hierarchy.from_levels([["no", "*"], ["yes", "*"]]))
    session.set_attribute(emp, built_for)  # the same table: applied
    session.set_attribute(purpose, built_for)
    assert session.source["schema"]["purpose"]["hierarchy"][0] == ["housing", "any purpose", "*"]
    session.use({"dataset": "german"}, "german")
    with pytest.raises(InvalidParameterError, match="The data changed to 'german' while this was being done for "
                                                    "'ruggieri_loan'"):
        session.set_attribute(purpose, built_for)
    assert "purpose" not in (session.source.get("schema") or {})


def test_a_run_never_reads_half_of_a_change_of_the_requirements(session, monkeypatch):
    """A job file's requirements are being set (A stops before the fields that show
    them); a run reads the set then (B). B waits at the lock until A has set all of it,
    then reads the job's requirements, settings and fields together (before, it read
    the job's requirements beside the fields typed for the previous ones)."""
    session.use({"dataset": "ruggieri_loan"}, "ruggieri_loan")
    session.set_requirements({"k": "2"})
    setting, go_on, waiting = threading.Event(), threading.Event(), threading.Event()
    session.lock = _SpiedLock("B", waiting)

    class Paused(type(session)):
        def __setattr__(self, name, value):
            if name == "form" and threading.current_thread().name == "A":
                setting.set()
                go_on.wait()
            super().__setattr__(name, value)

    monkeypatch.setattr(session, "__class__", Paused)
    job = {"requirements": [{"k_anonymity": {"k": 3}}], "method": "mondrian", "seed": 4}
    _, b_out = _race(lambda: session.set_requirements(job=job), session.asked, setting, waiting, go_on)
    asked = b_out["value"]
    assert asked.job_requirements == [{"k_anonymity": {"k": 3}}] and asked.form == {"k": "3"}
    assert asked.job_settings == {"method": "mondrian", "seed": 4, "time_limit": None, "options": None}
    document = session.job_document(asked.job_requirements, method="mondrian", seed=4, time_limit=None, asked=asked)
    assert document["instance"] == {"dataset": "ruggieri_loan"} and document["requirements"] == job["requirements"]
    session.set_requirements({"l": "2"})  # the page's fields again, in place of the job's
    assert session.asked()[1:3] == (None, {"l": "2"})


def test_the_requirements_page_reads_its_data_and_fields_at_once(client, monkeypatch):
    """The Requirements page (A) stops as it reads the data; another request then makes
    German credit the data with k = 2000 in the fields (B). B waits at the lock until A
    has read the data and the fields together, so A's page shows the loan table with its
    k = 2 and no message (before, it read the loan table and then B's k = 2000, and
    showed k = 2000 refused for the loan table's 17 rows under German credit's name)."""
    session = client.app.state.session
    session.use({"dataset": "ruggieri_loan"}, "ruggieri_loan")
    session.set_requirements({"k": "2"})
    reading, go_on, waiting = threading.Event(), threading.Event(), threading.Event()
    session.lock = _SpiedLock("B", waiting)
    armed = [True]

    class Paused(type(session)):
        def __getattribute__(self, name):
            if name == "data" and armed[0] and threading.current_thread().name != "B":
                armed[0] = False
                reading.set()
                go_on.wait()
            return super().__getattribute__(name)

    monkeypatch.setattr(session, "__class__", Paused)

    def change():
        session.use({"dataset": "german"}, "german")
        session.set_requirements({"k": "2000"})

    a_out, _ = _race(lambda: client.get("/requirements"), change, reading, waiting, go_on)
    page = a_out["value"]
    assert page.status_code == 200
    assert 'id="f-k" name="k" value="2"' in page.text and "exceeds" not in page.text
    assert "data: <b>ruggieri_loan</b> (17 rows)" in page.text
    assert session.asked().form == {"k": "2000"} and session.source_label == "german"  # B's change, after
