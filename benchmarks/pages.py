"""Page speed with a long history: run lists, series charts, alerts, matrix, comparison, search.

Needs a database with a history loaded: ``manage.py seed_demo --runs 10000`` (~300,000
measurement rows) or ``manage.py seed_demo --measurements 10000000`` (the fleet history of
``baselines.bulk_history``); with ``--seed`` it loads the one asked for first when the
database holds fewer rows. Each page is requested in-process (Django test client, signed in
as an editor) ``--repeat`` times after a warm-up, and the table gives p50/p95/max wall time
and the number of SQL queries:

    psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE perfhub_bench"
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfhub_bench
    .venv/bin/python manage.py migrate
    .venv/bin/python benchmarks/pages.py --seed --measurements 10000000

Targets: < 200 ms p95 for each page (issue 5 at 10,000 runs, issue 14 at 10,000,000
measurement rows).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")

TARGET_MS = 200.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument(
        "--measurements", type=int, default=0, help="measurement rows (the fleet history)"
    )
    parser.add_argument("--seed", action="store_true", help="load the history when missing")
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument(
        "--explain", type=int, default=0, help="EXPLAIN (ANALYZE, BUFFERS) the N slowest pages"
    )
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client

    from artifacts.models import BenchmarkRun, Measurement
    from baselines.demo_history import seed_history
    from baselines.models import Alert, HardwareProfile, Series

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from proc import machine_line

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    print(machine_line())
    if args.measurements:
        return fleet_pages(args)
    runs = BenchmarkRun.objects.count()
    if runs < args.runs and args.seed:
        print(f"loading {args.runs} runs of history ...", flush=True)
        clock = time.perf_counter()
        seed_history(runs=args.runs, log=lambda message: None)
        print(f"loaded in {time.perf_counter() - clock:.0f} s", flush=True)
        runs = BenchmarkRun.objects.count()
    if runs < args.runs:
        print(f"only {runs} runs in the database; run with --seed or seed_demo --runs N")
        return 2

    user, _ = User.objects.get_or_create(username="bench", defaults={"is_superuser": True})
    client = Client()
    client.force_login(user)
    profile = HardwareProfile.objects.get(slug="h200-roce-2x8")
    # The busiest series: the deliberate regression's all_reduce at 1 GiB.
    series = (
        Series.objects.filter(profile=profile, collective="all_reduce", size_bytes=1 << 30).first()
        or Series.objects.order_by("-point_count").first()
    )
    pages = [
        ("home", "/"),
        ("artifact list", "/artifacts/"),
        ("artifact list, page 100", "/artifacts/?page=100"),
        ("baselines home", "/baselines/"),
        ("run list", "/runs/"),
        ("run list, filtered", "/runs/?collective=all_reduce&nranks=16"),
        ("series chart (time)", f"/baselines/series/{series.pk}/"),
        ("series chart (version order)", f"/baselines/series/{series.pk}/?order=version"),
        ("alert list", "/baselines/alerts/?status="),
        ("alert summaries", "/baselines/summaries/"),
        ("version matrix (NCCL)", f"/baselines/matrix/?profile={profile.slug}&component=nccl"),
        ("version matrix (driver)", f"/baselines/matrix/?profile={profile.slug}&component=driver"),
    ]
    print(
        f"\n{connection.vendor}, {runs} runs, {Measurement.objects.count()} measurements, "
        f"{Series.objects.count()} series, {Alert.objects.count()} alerts; "
        f"{args.repeat} requests per page after a warm-up\n"
    )
    return measure(client, pages, args.repeat)


def measure(client: object, pages: list[tuple[str, str]], repeat: int) -> int:
    """Request each page ``repeat`` times after three warm-ups; print the table."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    header = f"{'page':32} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'queries':>8} {'KiB':>6}  ok"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for name, url in pages:
        for _ in range(3):
            response = client.get(url)
            assert response.status_code == 200, f"{url}: HTTP {response.status_code}"
        times = []
        for _ in range(repeat):
            clock = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - clock) * 1000)
        with CaptureQueriesContext(connection) as queries:
            client.get(url)
        times.sort()
        p50 = statistics.median(times)
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        worst = max(worst, p95)
        print(
            f"{name:32} {p50:8.1f} {p95:8.1f} {times[-1]:8.1f} {len(queries):8d} "
            f"{len(response.content) / 1024:6.0f}  {'yes' if p95 < TARGET_MS else 'NO'}"
        )
    print(f"\nworst p95 {worst:.1f} ms (target < {TARGET_MS:.0f} ms)")
    return 0 if worst < TARGET_MS else 1


def fleet_pages(args: argparse.Namespace) -> int:
    """The pages on the fleet history (``seed_demo --measurements N``)."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client

    from artifacts.models import BenchmarkRun, Measurement
    from baselines.bulk_history import load_fleet
    from baselines.models import Alert, AlertSummary, Comparison, HardwareProfile, Series

    # The planner's row estimate is enough to know whether the history is there (an exact
    # count of ten million rows takes seconds).
    # (A partitioned table's rows are its partitions': their estimates are summed.)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT coalesce(sum(greatest(c.reltuples, 0)), 0)::bigint "
                "FROM pg_partition_tree(%s) t JOIN pg_class c ON c.oid = t.relid WHERE t.isleaf",
                [Measurement._meta.db_table],
            )
            rows = int(cursor.fetchone()[0])
        else:
            rows = Measurement.objects.count()
    if rows < args.measurements * 0.95 and args.seed:
        print(f"loading a fleet history of {args.measurements} measurements ...", flush=True)
        clock = time.perf_counter()
        load_fleet(measurements=args.measurements, log=lambda message: print(message, flush=True))
        print(f"loaded in {time.perf_counter() - clock:.0f} s", flush=True)
        rows = Measurement.objects.count()
    if rows < args.measurements * 0.95:
        print(f"only ~{rows} measurements; run with --seed or seed_demo --measurements N")
        return 2
    user, _ = User.objects.get_or_create(username="bench", defaults={"is_superuser": True})
    client = Client()
    client.force_login(user)
    # A RoCE cluster: its all_reduce at 1 GiB is the series with the NCCL 2.23.4 regression.
    profile = HardwareProfile.objects.filter(slug__startswith="h200-roce").order_by("slug").first()
    profile = profile or HardwareProfile.objects.order_by("slug").first()
    series = (
        Series.objects.filter(profile=profile, collective="all_reduce", size_bytes=1 << 30).first()
        or Series.objects.order_by("-point_count").first()
    )
    compared = (
        Comparison.objects.filter(profile=profile, verdict="regressed").order_by("-run_id").first()
        or Comparison.objects.order_by("-run_id").first()
    )
    run = BenchmarkRun.objects.order_by("-measured_at", "-id").first()
    compared_run = compared.run_id if compared else run.pk
    nodes = profile.slug.split("-")[2].split("x")[0]  # h200-roce-2x8-c01: 2 nodes x 8 GPUs
    nranks = 8 * int(nodes) if nodes.isdigit() else 16
    summary = AlertSummary.objects.order_by("-created_at", "-id").first()
    pages = [
        ("home", "/"),
        ("artifact list", "/artifacts/"),
        ("artifact list, page 100", "/artifacts/?page=100"),
        ("baselines home", "/baselines/"),
        ("run list", "/runs/"),
        ("run list, filtered", f"/runs/?collective=all_reduce&nranks={nranks}"),
        ("run list, page 100", "/runs/?page=100"),
        ("run page (newest)", f"/runs/{run.pk}/"),
        ("series list", "/baselines/series/"),
        ("series chart (time)", f"/baselines/series/{series.pk}/"),
        ("series chart (version order)", f"/baselines/series/{series.pk}/?order=version"),
        ("alert list", "/baselines/alerts/?status="),
        ("alert list, open", "/baselines/alerts/"),
        ("alert summaries", "/baselines/summaries/"),
        ("alert summary", f"/baselines/summaries/{summary.pk}/" if summary else "/baselines/"),
        ("version matrix (NCCL)", f"/baselines/matrix/?profile={profile.slug}&component=nccl"),
        ("version matrix (driver)", f"/baselines/matrix/?profile={profile.slug}&component=driver"),
        ("comparison panel (run page)", f"/runs/{compared_run}/"),
        ("comparison (full)", f"/baselines/runs/{compared_run}/comparison/"),
        ("search", "/search/?q=all_reduce+regression"),
    ]
    print(
        f"\n{connection.vendor}, ~{rows} measurements (planner estimate), "
        f"{HardwareProfile.objects.count()} profiles, {Series.objects.count()} series, "
        f"{Alert.objects.count()} alerts in {AlertSummary.objects.count()} summaries; "
        f"{args.repeat} requests per page after a warm-up\n"
    )
    print(table_sizes() + "\n")
    done = measure(client, pages, args.repeat)
    if args.explain:
        explain_heaviest(client, pages, args.explain)
    return done


def table_sizes() -> str:
    """The measurements table on disk: partitions, heap and index bytes, bytes per row."""
    from django.db import connection

    from artifacts.runs.partitions import TABLE, partitions

    if connection.vendor != "postgresql":
        return "measurements: SQLite, one plain table"
    parts = partitions() or [TABLE]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT sum(pg_table_size(c.oid)), sum(pg_indexes_size(c.oid)), "
            "sum(greatest(c.reltuples, 0))::bigint FROM pg_class c WHERE c.relname = ANY(%s)",
            [parts],
        )
        heap, indexes, rows = cursor.fetchone()
        cursor.execute(
            "SELECT i.relname, sum(pg_relation_size(i.oid)) FROM pg_index x "
            "JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid "
            "WHERE t.relname = ANY(%s) GROUP BY 1",
            [parts],
        )
        per_index = cursor.fetchall()
    rows = max(1, int(rows or 0))
    mb = 1024 * 1024
    lines = [
        f"measurements: {len(parts)} partition(s), ~{rows:,} rows, table {heap / mb:,.0f} MB "
        f"({heap / rows:.0f} B/row), indexes {indexes / mb:,.0f} MB ({indexes / rows:.0f} B/row)"
    ]
    # the partitions' indexes, summed under the name of the parent's index they belong to
    by_kind: dict[str, int] = {}
    for name, size in per_index:
        kind = "pkey" if name.endswith("pkey") else "run, size" if "run_id" in name else "brin"
        by_kind[kind] = by_kind.get(kind, 0) + int(size)
    lines += [f"  index {k}: {v / mb:,.0f} MB ({v / rows:.1f} B/row)" for k, v in by_kind.items()]
    return "\n".join(lines)


def explain_heaviest(client: object, pages: list[tuple[str, str]], count: int) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of the slowest query of each of the ``count`` slowest
    pages (one request each, its queries timed by Django)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    timed = []
    for name, url in pages:
        with CaptureQueriesContext(connection) as queries:
            clock = time.perf_counter()
            client.get(url)
            elapsed = time.perf_counter() - clock
        slowest = max(queries.captured_queries, key=lambda q: float(q["time"]), default=None)
        timed.append((elapsed, name, slowest))
    for elapsed, name, query in sorted(timed, key=lambda t: t[0], reverse=True)[:count]:
        if not query or connection.vendor != "postgresql":
            continue
        print(f"\n### {name}: {elapsed * 1000:.1f} ms; its slowest query {query['time']} s\n")
        print(query["sql"][:600] + "\n")
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + query["sql"])
            print("\n".join(row[0] for row in cursor.fetchall()))


if __name__ == "__main__":
    sys.exit(main())
