"""Opening a benchmark report in headless Chromium for the tests: whether every image
decodes, where the headings sit, and a screenshot of the top of the page."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

CHROMIUM = next(
    (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p),
    None,
)

# Runs once the page has loaded: records on each image whether it decoded and its
# natural width, and on each heading its box; the report itself holds no script.
_PROBE = (
    "<script>window.addEventListener('load', () => {"
    "for (const img of document.images) { img.setAttribute('data-width', img.naturalWidth);"
    " img.setAttribute('data-complete', img.complete); }"
    "for (const h of document.querySelectorAll('h1, h2, h3, section')) {"
    " const r = h.getBoundingClientRect();"
    " h.setAttribute('data-box', [r.left, r.top, r.width, r.height].map(Math.round).join(',')); }"
    "document.body.setAttribute('data-checked', document.images.length); });</script>"
)


def _run(args: list[str], tmp_path: Path) -> str:
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=10000",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False).stdout


def probe(report: str, tmp_path: Path, *, window: tuple[int, int] = (1280, 900)) -> str:
    """The DOM of `report` after loading, with the probe's data attributes."""
    page = Path(report).read_text(encoding="utf-8")
    copy = tmp_path / "probe.html"
    copy.write_text(page.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    return _run([f"--window-size={window[0]},{window[1]}", "--dump-dom", copy.as_uri()], tmp_path)


def screenshot(report: str, tmp_path: Path, *, window: tuple[int, int] = (1280, 900)) -> Path:
    """A PNG of the top of `report` (the first `window` of the page)."""
    out = tmp_path / "top.png"
    _run(
        [f"--window-size={window[0]},{window[1]}", f"--screenshot={out}", Path(report).as_uri()],
        tmp_path,
    )
    return out


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def images(dom: str) -> list[tuple[str, int, bool]]:
    """(id, natural width, complete) of every plot in a probed DOM."""
    out = []
    for tag in re.findall(r"<img[^>]*>", dom):
        ident = re.search(r'id="([^"]+)"', tag)
        width = re.search(r'data-width="(\d+)"', tag)
        complete = re.search(r'data-complete="(\w+)"', tag)
        out.append(
            (
                ident.group(1) if ident else "",
                int(width.group(1)) if width else 0,
                bool(complete) and complete.group(1) == "true",
            )
        )
    return out


def boxes(dom: str, tag: str) -> list[tuple[str, tuple[int, ...]]]:
    """(text, (left, top, width, height)) of every `tag` element in a probed DOM."""
    out = []
    for attrs, inner in re.findall(rf"<{tag}([^>]*)>(.*?)</{tag}>", dom, re.DOTALL):
        box = re.search(r'data-box="([-\d,]+)"', attrs)
        text = re.sub(r"<[^>]+>", "", inner).strip()
        if box:
            out.append((text, tuple(int(v) for v in box.group(1).split(","))))
    return out
