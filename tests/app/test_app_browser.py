"""The app in a real browser: Playwright for Python driving the system's Chromium
(found on the path as ``chromium``, ``chromium-browser`` or ``google-chrome`` and
given to Playwright as its executable; ``.ci/run`` installs it with apt-get where it
can, and Playwright's own browser download is not used). Skipped, saying why, when
Playwright or Chromium is missing or Chromium cannot start.

One browser and one app serve the module. Three scenarios run by default: a new user's
release of Adult at k = 5 (a malformed CSV's message first; PASSED; the release and the
job file downloaded, the job re-run by the command line to the same bytes), a failing
check's witness, and an infeasible set's conflict. The others are slow (``-m slow``):
two Adult releases compared with the bench's plots, a hierarchy built and previewed,
and a long run followed and cancelled. With ``FAIRANON_APP_SCREENSHOTS=DIR`` every
scenario's screenshots are written to DIR (the README's and docs/app.md's come from
``docs/images``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time

import pytest

pytest.importorskip("fastapi")
playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
TOKEN = "browser-token"
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (chromium, chromium-browser, "
                                                         "google-chrome): apt-get install -y chromium")


@pytest.fixture(scope="module")
def server():
    """One app for the module's scenarios (each opens its own data; run numbers are read
    from the pages, since the runs of earlier scenarios stay in the session)."""
    import uvicorn

    from fairanon.app import listening_socket
    from fairanon.app.web import create_app

    # bound and listening before the server runs, as the command does: no port freed and taken again
    sock = listening_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    app = create_app(token=TOKEN)
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not srv.started and thread.is_alive():
        time.sleep(0.05)
    try:
        assert srv.started, "the app's server ended without starting (its error is in the log above)"
        yield f"http://127.0.0.1:{port}", app
    finally:
        srv.should_exit = True
        thread.join(10)
        sock.close()
        app.state.session.close()


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module's scenarios; skipped, saying why, when Playwright or
    Chromium cannot start (a ``chromium`` on the path that is only a stub, for one)."""
    try:
        playwright = playwright_api.sync_playwright().start()
    except Exception as exc:  # noqa: BLE001 - whatever stops its driver here (missing, unable to run) is a skip
        pytest.skip(f"Playwright could not be started: {(str(exc).splitlines() or [type(exc).__name__])[0]}")
    try:
        try:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except playwright_api.Error as exc:
            pytest.skip(f"Chromium at {CHROMIUM} could not be started: {str(exc).splitlines()[0]}")
        yield chromium
        chromium.close()
    finally:
        playwright.stop()


@pytest.fixture
def page(server, browser):
    """A browser page of its own (its own cookies) signed in to the app: the address
    with the token, as printed; the requirement fields blank, as a new user finds them
    (each scenario opens its own data)."""
    url, app = server
    app.state.session.set_requirements({})
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.goto(f"{url}/data?token={TOKEN}")
    yield tab
    context.close()


def screenshot(page, tmp_path, name: str, height: int | None = None) -> None:
    """The whole page, or its top `height` pixels (a long page's full shot is too large
    for the docs)."""
    folder = os.environ.get("FAIRANON_APP_SCREENSHOTS") or str(tmp_path)
    os.makedirs(folder, exist_ok=True)
    clip = None if height is None else {"x": 0, "y": 0, "width": page.viewport_size["width"], "height": height}
    page.screenshot(path=os.path.join(folder, f"app-{name}.png"), full_page=True, clip=clip)


def open_dataset(page, name: str) -> None:
    page.select_option("select[name=dataset]", name)
    page.get_by_role("button", name="Open", exact=True).click()
    page.wait_for_selector(f"text={name}: ")


def start_run(page, *, method: str | None = None, time_limit: str | None = None) -> int:
    """Click Run on the Run page; the run's number, from the progress page's address."""
    if method:
        page.select_option("select[name=method]", method)
    if time_limit:
        page.fill("input[name=time_limit]", time_limit)
    page.click("#start")
    page.wait_for_url(re.compile(r".*/runs/\d+(/results)?(\?.*)?$"))
    return int(re.search(r"/runs/(\d+)", page.url).group(1))


def download(page, selector: str, tmp_path) -> bytes:
    with page.expect_download() as info:
        page.click(selector)
    target = tmp_path / info.value.suggested_filename
    info.value.save_as(target)
    return target.read_bytes()


def rerun_by_the_command_line(job: bytes, tmp_path) -> bytes:
    from fairanon.cli import main

    path = tmp_path / "downloaded-job.yaml"
    path.write_bytes(job)
    assert main(["anonymize", str(path), "--out", str(tmp_path / "cli")]) == 0
    return (tmp_path / "cli" / "release.csv").read_bytes()


def test_a_new_user_releases_adult_at_k5(page, tmp_path):
    """A steward's first release: a malformed file refused with a message, then the
    bundled Adult, k = 5, run, PASSED, the release and the job file downloaded, and the
    job re-run by the command line gives the same release; each page photographed."""
    page.set_input_files("input[name=file]", files=[{"name": "bad.csv", "mimeType": "text/csv",
                                                      "buffer": b'a,b\n1,"2\n'}])
    page.get_by_role("button", name="Upload").click()
    assert "Cannot read" in page.get_by_role("alert").inner_text()  # and the app is still usable
    open_dataset(page, "adult")
    screenshot(page, tmp_path, "data")
    page.click("text=Next: hierarchies")
    page.click("text=Next: requirements")
    page.fill("#f-k", "40000")
    page.press("#f-k", "Tab")  # htmx checks the group on change
    page.wait_for_selector("#e-k .error")
    assert "k=40000 exceeds the 30162 rows" in page.inner_text("#e-k")  # the API's message beside the field
    page.fill("#f-k", "5")
    page.press("#f-k", "Tab")
    page.wait_for_selector("#e-k .error", state="detached")
    screenshot(page, tmp_path, "requirements")
    page.click("text=Save and continue")
    page.wait_for_selector("text=auto would run")
    screenshot(page, tmp_path, "run")
    # Mondrian: the default run stays short (auto's portfolio takes 26 s of CPU on Adult,
    # and its release, mondrian-loss's, 14 s with the verification, risk and utility)
    run = start_run(page, method="mondrian")
    page.wait_for_selector("#progress[data-state=running]")
    screenshot(page, tmp_path, "progress")
    page.wait_for_url(f"**/runs/{run}/results", timeout=600_000)  # progress by SSE, then the results page
    assert "PASSED" in page.inner_text("#verdict")
    page.wait_for_selector("#risk-plot svg")
    screenshot(page, tmp_path, "results")
    release = download(page, "a[href$='/files/release.csv']", tmp_path)
    job = download(page, "a[href$='/files/job.yaml']", tmp_path)
    assert rerun_by_the_command_line(job, tmp_path) == release


def test_a_failing_check_shows_its_witness(page, server, failing_run, tmp_path):
    """A release that fails 5-anonymity (its report as the command line writes it):
    the failing check, and its class's records highlighted at the top of the table."""
    url, app = server
    open_dataset(page, "ruggieri_loan")  # the data of the run, in the page's header
    run, report = failing_run(app.state.session)
    page.goto(f"{url}/runs/{run.id}/results")
    assert "FAILED" in page.inner_text("#verdict")
    witness = next(c.witness for c in report.checks if not c.passed)
    rows = page.locator("tr.witness-row")
    marked = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
    assert sorted(marked) == sorted(str(r) for r in witness["records"])
    assert page.locator("tr.witness-row").first.evaluate("e => getComputedStyle(e.cells[0]).fontWeight") == "700"
    screenshot(page, tmp_path, "witness")


def test_an_infeasible_set_shows_the_conflict(page, tmp_path):
    open_dataset(page, "ruggieri_loan")
    page.click("text=3 Requirements")
    page.fill("#f-k", "2")
    page.fill("#f-diversity", "sex(female) [9, 9]")  # 8 of the 17 records are female
    page.click("text=Save and continue")
    start_run(page, method="cpsat")
    page.wait_for_selector("#conflict", timeout=300_000)
    conflict = page.inner_text("#conflict")
    assert "No release satisfies these requirements" in conflict and "diversity sex[female] in [9, 9]" in conflict
    screenshot(page, tmp_path, "conflict")


@pytest.mark.slow
def test_two_adult_releases_compared_with_a_hierarchy_built(page, tmp_path):
    """Adult with a tree of age previewed on the Hierarchies page, released at k = 5 and
    at k = 10 by Mondrian, then the two side by side with the bench's per-record plots."""
    open_dataset(page, "adult")
    page.click("text=Next: hierarchies")
    page.click("a[href='/hierarchies?attr=age']")
    page.fill("input[name=bottom]", "20")
    page.fill("input[name=top]", "80")
    page.press("input[name=top]", "Tab")
    page.wait_for_selector("#preview .node")
    screenshot(page, tmp_path, "hierarchies")
    runs = []
    for k in (5, 10):
        page.click("text=3 Requirements")
        page.fill("#f-k", str(k))
        page.click("text=Save and continue")
        runs.append(start_run(page, method="mondrian"))
        page.wait_for_url(f"**/runs/{runs[-1]}/results", timeout=600_000)
        assert "PASSED" in page.inner_text("#verdict")
    page.click("text=5 Compare")
    for run in runs:
        page.check(f"input[name=runs][value='{run}']")
    page.click("#compare")
    page.wait_for_selector("#compare-plot svg")
    header = page.locator("#side-by-side tr").first.inner_text()
    assert f"run {runs[0]}: mondrian (5-anonymity)" in header and f"run {runs[1]}: mondrian (10-anonymity)" in header
    # the runs of one data: one comparison, each kind of the bench's plots drawn on the page
    shown = page.eval_on_selector_all("#comparison-1 figure.plot", "fs => fs.map(f => [f.id, "
                                      "f.querySelector('svg').getBoundingClientRect().width])")
    kinds = ("size", "loss", "scatter", "coverage", "dominance", "tradeoff", "winmap")
    assert sorted(i for i, _ in shown) == sorted(f"plot-{k}-1" for k in kinds)
    assert all(width > 100 for _, width in shown), shown
    screenshot(page, tmp_path, "compare", height=1525)  # the table, the risk plots and the first per-record row


@pytest.mark.slow
def test_a_hierarchy_is_built_previewed_and_applied(page, server):
    _, app = server
    open_dataset(page, "german")
    page.click("text=2 Hierarchies")
    page.click("a[href='/hierarchies?attr=age']")
    page.fill("input[name=widths]", "10, 15")  # 15 is not a multiple of 10
    page.press("input[name=widths]", "Tab")
    page.wait_for_selector("#preview .error")
    assert "whole multiple" in page.inner_text("#preview")
    page.fill("input[name=widths]", "10, 20")
    page.fill("input[name=top]", "60")
    page.press("input[name=top]", "Tab")
    page.wait_for_selector("#preview >> text=>=60")
    page.click("#apply")
    page.wait_for_selector("text=Export (ARX CSV)")
    assert app.state.session.instance.schema["age"].hierarchy.ancestors("67") == ["67", ">=60", "*"]


@pytest.mark.slow
def test_a_long_run_shows_progress_and_is_cancelled(page, server):
    _, app = server
    open_dataset(page, "german")
    page.click("text=3 Requirements")
    page.fill("#f-k", "5")
    page.click("text=Save and continue")
    run = start_run(page, method="lns", time_limit="60")
    page.wait_for_selector("#progress[data-state=running]", timeout=60_000)
    first = page.inner_text("#progress")
    page.wait_for_function(f"document.getElementById('progress').textContent !== {json.dumps(first)}")
    assert "anonymizing" in page.inner_text("#progress")  # the step and the time, pushed by the server
    page.click("#cancel")
    page.wait_for_selector("#progress[data-state=cancelled]")
    assert app.state.session.runs[run].process.poll() is not None  # the process group is gone
