"""Every page of a first hour, loaded in a real browser: cold (empty cache) and warm.

Starts the production web stack on 127.0.0.1 (gunicorn + WhiteNoise, static files collected
as `make run` collects them) over the configured database, signs in through the login page
with a benchmark user (an editor, created once), and loads each page of the journey with
Debian's chromium through Playwright:

* cold: a new browser context each time (no cache, no connections), login cookie only;
* warm: the same page again in that context (static files from the browser cache).

The time is the browser's own navigation timing: from the request to the load event
(``performance.getEntriesByType("navigation")[0].duration``), with every deferred script
run. Targets on the 2-core development machine: cold < 1 s, warm < 300 ms for every page.
plotly.js (4.7 MB) is fetched after the load event (``static/js/plotly_loader.js``), so a
chart page's text and tables show first; the "charts" columns say when the last chart of
the page was drawn (``performance.now()`` once every ``[data-figure]`` says it is), the
time a person waits for the picture.

    make run   # once: demo data; then stop it (or point --url at it and skip the server)
    .venv/bin/python benchmarks/browser_pages.py --repeat 5

With ``--screenshots docs/img`` it also saves what each page of the journey looks like
(1400 x 900, the demo data), the pictures of the README's "first ten minutes": taken by
this script from the running demo, they stay current.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")

COLD_TARGET_MS, WARM_TARGET_MS = 1000.0, 300.0
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
USER = "bench-browser"


def journey() -> list[tuple[str, str]]:
    """(name, path) of the pages a newcomer opens, with ids of objects the database holds."""
    import django

    django.setup()
    from artifacts.jobs.models import Job
    from artifacts.models import Artifact, BenchmarkRun
    from baselines.models import Alert, HardwareProfile, Series, Sweep
    from incidents.models import Incident
    from knowledge.models import Page
    from reports.models import Report

    pages = [
        ("home", "/"),
        ("artifacts", "/artifacts/"),
        ("runs", "/runs/"),
        ("baselines", "/baselines/"),
        ("version matrix", "/baselines/matrix/"),
        ("alerts", "/baselines/alerts/"),
        ("reports", "/reports/"),
        ("incidents", "/incidents/"),
        ("knowledge", "/kb/"),
        ("search", "/search/?q=nccl"),
    ]
    firsts = [
        ("an artifact", Artifact.objects.filter(status="parsed").order_by("-pk").first()),
        ("a run", BenchmarkRun.objects.order_by("-pk").first()),
        ("a profile", HardwareProfile.objects.order_by("pk").first()),
        ("a series", Series.objects.order_by("pk").first()),
        ("an alert", Alert.objects.order_by("-pk").first()),
        ("a report", Report.objects.order_by("-pk").first()),
        ("an incident", Incident.objects.order_by("-pk").first()),
        ("a knowledge page", Page.objects.order_by("pk").first()),
        ("a job", Job.objects.order_by("-pk").first()),
        ("a sweep", Sweep.objects.order_by("-pk").first()),
    ]
    pages += [(name, obj.get_absolute_url()) for name, obj in firsts if obj is not None]
    return pages


def bench_user() -> str:
    """The benchmark login (editor); a new password each run, so none is stored anywhere."""
    from django.contrib.auth.models import Group, User

    password = secrets.token_urlsafe(12)
    user, _ = User.objects.get_or_create(username=USER)
    user.set_password(password)
    user.save()
    user.groups.add(Group.objects.get_or_create(name="editor")[0])
    return password


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int) -> subprocess.Popen[bytes]:
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, check=True
    )
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "perfhub.wsgi", "-b",
         f"127.0.0.1:{port}", "-w", "2", "--log-level", "warning"],
        cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.2)
    server.kill()
    raise SystemExit("gunicorn did not start within 60 s")


def navigation_ms(page: object) -> float:
    return float(
        page.evaluate(  # type: ignore[attr-defined]
            "() => performance.getEntriesByType('navigation')[0].duration"
        )
    )


def charts_ms(page: object) -> float | None:
    """When the page's last chart was drawn (ms from the request), None without charts."""
    if not page.evaluate("() => document.querySelectorAll('[data-figure]').length"):  # type: ignore[attr-defined]
        return None
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => [...document.querySelectorAll('[data-figure]')]"
        ".every(f => f.dataset.rendered === 'true')",
        timeout=15000,
    )
    return float(page.evaluate("() => performance.now()"))  # type: ignore[attr-defined]


def median_or_none(values: list[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def measure(url: str, password: str, pages: list[tuple[str, str]], repeat: int) -> list[tuple]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        login = browser.new_context()
        page = login.new_page()
        page.goto(f"{url}/login/")
        page.fill("input[name=username]", USER)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_load_state("load")
        cookies = login.cookies()
        login.close()
        for name, path in pages:
            cold, warm, cold_charts, warm_charts = [], [], [], []
            for _ in range(repeat):
                context = browser.new_context()  # an empty cache
                context.add_cookies(cookies)
                tab = context.new_page()
                tab.goto(url + path, wait_until="load")
                cold.append(navigation_ms(tab))
                cold_charts.append(charts_ms(tab))
                tab.goto(url + path, wait_until="load")
                warm.append(navigation_ms(tab))
                warm_charts.append(charts_ms(tab))
                context.close()
            rows.append((name, path, statistics.median(cold), max(cold), statistics.median(warm),
                         max(warm), median_or_none(cold_charts),
                         median_or_none(warm_charts)))  # fmt: skip
        browser.close()
    return rows


def screenshots(url: str, password: str, pages: list[tuple[str, str]], folder: Path) -> int:
    """One PNG per page, named after it (``a run`` -> ``a-run.png``), once charts are drawn."""
    from playwright.sync_api import sync_playwright

    folder.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.goto(f"{url}/login/")
        tab.fill("input[name=username]", USER)
        tab.fill("input[name=password]", password)
        tab.click("button[type=submit]")
        tab.wait_for_load_state("load")
        for name, path in pages:
            tab.goto(url + path, wait_until="load")
            charts_ms(tab)  # charts are drawn after the load event: wait for them
            tab.screenshot(path=str(folder / f"{name.replace(' ', '-')}.png"))
        browser.close()
    return len(pages)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="cold and warm loads per page")
    parser.add_argument("--url", default="", help="a running PerfHub instead of starting one")
    parser.add_argument(
        "--screenshots", type=Path, metavar="DIR", help="also save a PNG of every page here"
    )
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    pages = journey()
    password = bench_user()
    server = None
    url = args.url.rstrip("/")
    if not url:
        port = free_port()
        server = start_server(port)
        url = f"http://127.0.0.1:{port}"
    try:
        rows = measure(url, password, pages, args.repeat)
        if args.screenshots:
            taken = screenshots(url, password, pages, args.screenshots)
            print(f"{taken} screenshots in {args.screenshots}")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    print(f"{len(pages)} pages, {args.repeat} cold + {args.repeat} warm loads each, {url}")
    print(f"| page | path | cold p50 ms | cold max | warm p50 ms | warm max | "
          f"cold charts p50 ms | warm charts p50 ms | "
          f"cold < {COLD_TARGET_MS:.0f} | warm < {WARM_TARGET_MS:.0f} |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    failed = 0
    for name, path, cold, cold_max, warm, warm_max, cold_charts, warm_charts in rows:
        ok_cold, ok_warm = cold < COLD_TARGET_MS, warm < WARM_TARGET_MS
        failed += not (ok_cold and ok_warm)
        drawn = " | ".join("-" if ms is None else f"{ms:.0f}" for ms in (cold_charts, warm_charts))
        verdict = f"{'yes' if ok_cold else 'NO'} | {'yes' if ok_warm else 'NO'}"
        print(f"| {name} | `{path}` | {cold:.0f} | {cold_max:.0f} | {warm:.0f} | {warm_max:.0f} | "
              f"{drawn} | {verdict} |")  # fmt: skip
    print(f"{len(rows) - failed} of {len(rows)} pages meet both targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
