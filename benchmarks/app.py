"""App benchmark: ``fairanon app`` as a user meets it, through its HTTP interface.

Run ``python benchmarks/app.py`` (``--lns-seconds S`` for the long run, default 60;
``--samples N`` page loads during it, default 40). Prints one row per figure and writes
``benchmarks/results/app.json``.

- first page: ``fairanon app --no-browser`` started as a process; wall seconds from the
  start to the first answer of the Data page, and the server's CPU seconds by then.
- Adult release: Adult chosen, k = 5 set, Run clicked (``mondrian-loss``, the method
  ``auto``'s portfolio picks on Adult, run alone so that the release is reproducible, and
  ``auto`` itself), then followed by the server-sent events until the results page is
  reachable; wall seconds from the click, the CPU seconds of the server and its workers
  (Linux ``/proc``: the server's own and its reaped children's), and whether the
  verifier passed the release.
- Compare: the two Adult releases on the Compare page, side by side with the comparison
  plots of ``fairanon bench`` drawn from their per-record vectors; wall and server CPU
  seconds of the page, its size and the kinds of plot it holds.
- responsiveness: while an ``lns`` run of ``--lns-seconds`` on Adult (k = 5) is in
  progress, the Data, Requirements, Run and Compare pages are loaded in turn; the wall
  seconds of each load (median, 95th percentile, largest) and the server's CPU seconds
  (median, largest; /proc counts in clock ticks of 0.01 s), then the run is cancelled.

Wall seconds are what a user waits for; on a shared machine they carry the other load,
so the CPU seconds are given beside them where a process can be measured.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

from _table import show, write_results

HERE = os.path.dirname(os.path.abspath(__file__))


def _cpu(pid: int) -> float:
    """CPU seconds of a process and of its children it has waited for (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class App:
    """A started ``fairanon app`` and a client of it (the token in every address)."""

    def __init__(self):
        self.started = time.perf_counter()
        self.process = subprocess.Popen([sys.executable, "-m", "fairanon.cli", "app", "--no-browser", "--port",
                                         "0"], stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()  # printed once the port is bound
        self.port, self.token = re.search(r":(\d+)/data\?token=([\w-]+)", line).groups()
        self.csrf = None
        # the cookie the first page sets carries the token through the app's redirects
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}{path}{sep}token={self.token}"

    def get(self, path: str) -> str:
        with self.opener.open(self.url(path), timeout=600) as response:
            page = response.read().decode()
        found = re.search(r'name="csrf" value="([\w-]+)"', page)
        self.csrf = found.group(1) if found else self.csrf
        return page

    def post(self, path: str, form: dict) -> str:
        data = urllib.parse.urlencode({**form, "csrf": self.csrf}).encode()
        with self.opener.open(urllib.request.Request(self.url(path), data=data), timeout=600) as response:
            return response.geturl()

    def wait(self, run_id: int) -> dict:
        last = None
        with self.opener.open(self.url(f"/runs/{run_id}/events"), timeout=3600) as stream:
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("data: "):
                    last = json.loads(line[6:])
        return last

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def first_page(app: App) -> dict:
    deadline = time.time() + 120
    while True:
        try:
            app.get("/data")
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.02)
    return {"figure": "first page (Data)", "wall_s": round(time.perf_counter() - app.started, 3),
            "cpu_s": round(_cpu(app.process.pid), 3), "value": "200"}


def adult_release(app: App, method: str, run_id: int) -> dict:
    cpu, wall = _cpu(app.process.pid), time.perf_counter()
    location = app.post("/run", {"method": method, "seed": "0", "time_limit": "", "format": "csv"})
    assert location.split("?")[0].endswith(f"/runs/{run_id}"), location
    status = app.wait(run_id)
    wall = time.perf_counter() - wall
    page = app.get(f"/runs/{run_id}/results")
    time.sleep(1)  # the worker has exited: the next page's status check reaps it, adding its CPU to the server's
    app.get(f"/runs/{run_id}")
    verdict = re.search(r'id="verdict">([^<]*)', page).group(1)
    return {"figure": f"verified Adult release, k=5, {method}, from the click", "wall_s": round(wall, 3),
            "cpu_s": round(_cpu(app.process.pid) - cpu, 3),
            "value": f"{status['state']}; {verdict.split('—')[0].strip()}"}


def compare(app: App, runs: tuple[int, ...]) -> dict:
    cpu, wall = _cpu(app.process.pid), time.perf_counter()
    page = app.get("/compare?" + "&".join(f"runs={i}" for i in runs))
    wall = time.perf_counter() - wall
    kinds = re.findall(r'<figure class="plot" id="plot-(\w+)-1">', page)
    return {"figure": f"Compare page of runs {', '.join(map(str, runs))} (Adult, per-record plots)",
            "wall_s": round(wall, 3), "cpu_s": round(_cpu(app.process.pid) - cpu, 3),
            "value": f"{len(page) / 1e3:.0f} kB; {' '.join(kinds)}"}


def responsiveness(app: App, seconds: float, samples: int, run_id: int) -> list[dict]:
    app.post("/run", {"method": "lns", "seed": "0", "time_limit": str(seconds), "format": "csv"})
    time.sleep(3)  # the worker has started anonymizing
    loads, cpus = {}, {}
    pages = ("/data", "/requirements", "/run", "/compare")
    for i in range(samples):
        path = pages[i % len(pages)]
        cpu, wall = _cpu(app.process.pid), time.perf_counter()
        app.get(path)
        loads.setdefault(path, []).append(time.perf_counter() - wall)
        cpus.setdefault(path, []).append(_cpu(app.process.pid) - cpu)
        time.sleep(max(0.0, (seconds - 10) / samples))
    with app.opener.open(app.url(f"/runs/{run_id}/events"), timeout=60) as stream:
        state = json.loads(stream.readline()[6:])  # the run's state while the pages were loaded
    app.post(f"/runs/{run_id}/cancel", {})
    rows = []
    for path in [*loads, "every page"]:
        xs = sorted(loads[path] if path in loads else [x for v in loads.values() for x in v])
        cs = sorted(cpus[path] if path in cpus else [x for v in cpus.values() for x in v])
        rows.append({"figure": f"page load during an lns run: {path}", "wall_s": round(statistics.median(xs), 4),
                     "cpu_s": round(statistics.median(cs), 3),
                     "value": f"wall p95 {xs[int(0.95 * (len(xs) - 1))]:.4f} s, largest {xs[-1]:.4f} s; "
                              f"server CPU largest {cs[-1]:.2f} s; {len(xs)} loads, run {state['state']}"})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lns-seconds", type=float, default=60)
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args()
    app = App()
    try:
        rows = [first_page(app)]
        app.post("/data/dataset", {"dataset": "adult"})
        app.get("/requirements")
        app.post("/requirements", {"k": "5"})
        app.get("/run")
        rows.append(adult_release(app, "mondrian-loss", 1))
        rows.append(adult_release(app, "auto", 2))
        rows.append(compare(app, (1, 2)))
        rows += responsiveness(app, args.lns_seconds, args.samples, 3)
    finally:
        app.close()
    show(rows, ["figure", "wall_s", "cpu_s", "value"])
    write_results(os.path.join(HERE, "results", "app.json"),
                  {"lns_seconds": args.lns_seconds, "samples": args.samples, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
