"""The app in a real browser: Playwright for Python driving the system's Chromium
(``.ci/run`` installs it with apt-get where it can; Playwright's own browser download
is not used). Skipped, saying why, when Playwright or Chromium is missing."""

from __future__ import annotations

import shutil
import socket
import threading
import time

import pytest

pytest.importorskip("fastapi")
playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
TOKEN = "browser-token"


@pytest.fixture
def server():
    import uvicorn

    from fairanon.app.web import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(token=TOKEN)
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)
    app.state.session.close()


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (chromium, chromium-browser, google-chrome): "
                                             "apt-get install -y chromium")
def test_a_new_user_runs_k_anonymity_and_sees_passed(server, tmp_path):
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(f"{server}/data?token={TOKEN}")
        page.select_option("select[name=dataset]", "ruggieri_loan")
        page.click("text=Open")
        page.wait_for_selector("text=ruggieri_loan: 17 records")
        page.screenshot(path=str(tmp_path / "data.png"), full_page=True)
        page.click("text=Next: hierarchies")
        page.wait_for_selector("text=Import an ARX CSV")
        page.click("text=Next: requirements")
        page.fill("#f-k", "100")
        page.press("#f-k", "Tab")  # htmx checks the field on change
        page.wait_for_selector("#e-k .error")
        assert "exceeds the 17 rows" in page.inner_text("#e-k")
        page.fill("#f-k", "2")
        page.click("text=Save and continue")
        page.wait_for_selector("text=auto would run")
        page.click("#start")
        page.wait_for_selector("#verdict", timeout=300_000)  # progress by SSE, then the results page
        assert "PASSED" in page.inner_text("#verdict")
        page.screenshot(path=str(tmp_path / "results.png"), full_page=True)
        with page.expect_download() as download:
            page.click("a[href$='/files/release.csv']")
        assert download.value.suggested_filename == "release.csv"
        browser.close()
