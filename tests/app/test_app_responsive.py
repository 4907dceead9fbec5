"""The app stays responsive while a route does slow work: the heavy call of each slow route
(reading an upload, describing the data, auto's choice, a hierarchy's preview, the
Results page and its HTML report, the Compare page's reading of the runs' reports and
its plots, cancelling a run) is held on an event while another request, a run's progress
stream, is sent; that request is answered before the held call returns, so the heavy
call does not run on the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
pytest.importorskip("multipart")

from fairanon.app import compare, runs, worker  # noqa: E402
from fairanon.app.session import Session  # noqa: E402
from fairanon.app.web import CSRF_HEADER, create_app  # noqa: E402

TOKEN = "test-token"
#: Seconds a held call waits at most: only reached when the route blocks the event loop
#: (then the test fails on the order of events, not on a duration).
GUARD = 30


class _Running:
    """A worker process that is still running (the cancel route asks it only `poll`;
    it has no pid, so nothing can signal it)."""

    def poll(self):
        return None


def _held(original, entered: threading.Event, release: threading.Event, returned: threading.Event):
    """`original` (or nothing, when None) called once `release` is set."""

    def call(*args, **kwargs):
        entered.set()
        release.wait(GUARD)
        returned.set()
        return original(*args, **kwargs) if original is not None else None

    return call


# (request method, path, request arguments, object and attribute of the heavy call;
#  None as the object: the call is replaced without calling the original)
CASES = {
    "upload": ("POST", "/data/upload", {"files": {"file": ("t.csv", b"a,b\n1,x\n2,y\n")}},
               "fairanon.jobs", "read_table"),
    "describe": ("GET", "/data", {}, "fairanon.models.describe", "describe"),
    "dataset": ("POST", "/data/dataset", {"data": {"dataset": "german"}}, Session, "use"),
    "auto": ("GET", "/run", {}, "fairanon.api", "choose_method"),
    "hierarchy": ("POST", "/hierarchies/preview", {"data": {"attr": "purpose", "builder": "grouping", "sizes": "2"}},
                  "fairanon.app.hierarchies", "build"),
    "results": ("GET", "/runs/1/results", {}, runs, "_results"),
    "report": ("GET", "/runs/1/report.html", {}, runs, "_results"),
    "compare": ("GET", "/compare", {"params": {"runs": 1}}, compare, "shown"),
    "compare-reports": ("GET", "/compare", {}, compare, "finished_runs"),
    "cancel": ("POST", "/runs/2/cancel", {}, None, "cancel"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_progress_is_answered_while_a_slow_route_works(case, failing_run, monkeypatch):
    import importlib

    method, path, arguments, owner, name = CASES[case]
    app = create_app(token=TOKEN)
    session = app.state.session
    session.use({"dataset": "ruggieri_loan"}, "ruggieri_loan")
    session.form = {"k": "2"}
    failing_run(session)  # run 1: finished, with a release and report.json
    running = session.new_run({"instance": {"dataset": "ruggieri_loan"}})  # run 2: still running
    running.process = _Running()
    entered, release, returned = threading.Event(), threading.Event(), threading.Event()
    if owner is None:
        monkeypatch.setattr(worker, name, _held(None, entered, release, returned))
    else:
        owner = importlib.import_module(owner) if isinstance(owner, str) else owner
        monkeypatch.setattr(owner, name, _held(getattr(owner, name), entered, release, returned))

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app", params={"token": TOKEN},
                                     headers={CSRF_HEADER: app.state.csrf}) as client:
            slow = asyncio.create_task(client.request(method, path, **arguments))
            assert await asyncio.to_thread(entered.wait, GUARD), "the slow route never reached its heavy call"
            progress = await client.get("/runs/1/events")
            answered_first = not returned.is_set()
            release.set()
            return progress, answered_first, await slow

    try:
        progress, answered_first, response = asyncio.run(scenario())
    finally:
        release.set()
        running.process = None  # not a process the session could end
        session.close()
    assert progress.status_code == 200 and '"state": "done"' in progress.text
    assert answered_first, f"the progress stream waited for {path}'s heavy call"
    assert response.status_code in (200, 303), response.text
