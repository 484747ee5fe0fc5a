"""How long a comparison report takes: build (collect + compute + freeze), page, exports.

Self-contained: a throw-away SQLite database in a temporary PERFHUB_VAR_DIR, filled with the
demo generator's history (``--days`` nightlies per profile). It builds the "runs" report of
the h200 all_reduce nightlies grouped by NCCL version (the deliberate 2.21.5 -> 2.23.4
regression), then renders its page and every export ``--repeat`` times and prints a table:

    .venv/bin/python benchmarks/report_build.py --days 30

The inline/worker threshold (``reports.services.INLINE_MAX_POINTS``) is meant to keep
inline builds well under a second; this script shows where that is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")


def timed(action: Callable[[], object], repeat: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeat):
        clock = time.perf_counter()
        result = action()
        times.append((time.perf_counter() - clock) * 1000)
    return times, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30, help="nightlies per demo profile")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["PERFHUB_VAR_DIR"] = tempfile.mkdtemp(prefix="perfhub-bench-")

    import django

    django.setup()
    import io

    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from artifacts.models import Measurement
    from artifacts.parsing import artifact_parse
    from artifacts.runs.demo import demo_files
    from artifacts.services import artifact_ingest
    from reports import exports
    from reports.services import report_create

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    call_command("migrate", verbosity=0)
    ids = []
    for f in demo_files(days=args.days):
        if "h200-roce-2x8_all_reduce" in f.name and f.label == "nightly":
            outcome = artifact_ingest(
                stream=io.BytesIO(f.content), name=f.name, metadata=f.metadata, enqueue=False
            )
            ids.append(artifact_parse(artifact_id=outcome.artifact.pk).pk)
    points = Measurement.objects.filter(run__artifact_id__in=ids).count()

    def build() -> object:
        return report_create(kind="runs", title="bench", artifact_ids=ids, group_by="nccl_version")

    rows = []
    build_ms, report = timed(build, args.repeat)
    rows.append(("build (collect, compare, freeze)", build_ms, ""))
    user = User.objects.create_superuser("bench", password="x")
    client = Client()
    client.force_login(user)
    page_ms, response = timed(lambda: client.get(f"/reports/{report.pk}/"), args.repeat)
    rows.append(("report page", page_ms, f"{len(response.content) / 1024:.0f} KiB"))
    html_ms, html = timed(lambda: exports.report_html(report), args.repeat)
    rows.append(("HTML export (plotly inlined)", html_ms, f"{len(html) / 1024**2:.1f} MiB"))
    zip_ms, archive = timed(lambda: exports.tables_zip(report), args.repeat)
    rows.append(("CSV zip of every table", zip_ms, f"{len(archive) / 1024:.0f} KiB"))
    chart = exports.report_charts(report)[0].name
    exports.chart_image(report, chart, "png")  # starts kaleido's browser once
    png_ms, png = timed(lambda: exports.chart_image(report, chart, "png"), args.repeat)
    rows.append(("PNG of one chart (kaleido warm)", png_ms, f"{len(png) / 1024:.0f} KiB"))

    print(f"{len(ids)} runs, {points} measurement rows; verdict: {report.summary[0]}")
    print(f"{'step':<36} {'median ms':>10} {'max ms':>10}  size")
    for name, times, size in rows:
        print(f"{name:<36} {statistics.median(times):>10.1f} {max(times):>10.1f}  {size}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
