"""Measurements partitioned by month on PostgreSQL, a plain table on SQLite (issue 27).

Every test runs on both databases: on PostgreSQL (``DATABASE_URL=postgres://...``) it checks
the partitions, on SQLite that the same code leaves the plain table and behaves the same.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from artifacts.models import Artifact, BenchmarkRun, Measurement
from artifacts.runs import partitions
from artifacts.runs.tasks import ensure_measurement_partitions

POSTGRES = connection.vendor == "postgresql"
BEFORE = ("artifacts", "0010_parse_stalls")


def _artifact(name: str = "a.log") -> Artifact:
    return Artifact.objects.create(
        file=f"artifacts/{name}", original_name=name, sha256=name.ljust(64, "0"), size=1
    )


def _run(artifact: Artifact, when: dt.datetime, index: int = 0) -> BenchmarkRun:
    return BenchmarkRun.objects.create(
        artifact=artifact, index=index, collective="all_reduce", measured_at=when
    )


def _measure(run: BenchmarkRun, sizes: list[int]) -> list[Measurement]:
    return Measurement.objects.bulk_create(
        Measurement(run=run, size_bytes=size, oop_busbw_gbps=size / 1e6) for size in sizes
    )


@pytest.mark.django_db
def test_the_table_is_partitioned_on_postgresql_only():
    assert partitions.is_partitioned() is POSTGRES
    names = partitions.partitions()
    if POSTGRES:
        assert partitions.DEFAULT in names
        this_month = partitions.name_of(dt.datetime.now(dt.UTC).date())
        assert this_month in names  # the migration made this month and the next ones
    else:
        assert names == []


@pytest.mark.django_db
def test_partitions_are_made_ahead_once_each():
    today = dt.datetime.now(dt.UTC)
    ahead = partitions.months(today, today + dt.timedelta(days=31 * 8))[:8]
    made = partitions.ensure_partitions(ahead=7)
    again = partitions.ensure_partitions(ahead=7)
    assert again == []  # idempotent: nothing made twice, no error
    if POSTGRES:
        names = set(partitions.partitions())
        assert {partitions.name_of(month) for month in ahead} <= names
        assert set(made) <= names
    else:
        assert made == []


@pytest.mark.django_db
def test_the_task_makes_this_month_and_the_next_ones_and_beat_runs_it():
    entries = {e["task"] for e in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "artifacts.runs.ensure_partitions" in entries
    result = ensure_measurement_partitions.apply().get()
    assert isinstance(result, list)
    if POSTGRES:
        today = dt.datetime.now(dt.UTC)
        wanted = partitions.months(today, today + dt.timedelta(days=31 * partitions.AHEAD_MONTHS))
        wanted = wanted[: partitions.AHEAD_MONTHS + 1]
        assert {partitions.name_of(m) for m in wanted} <= set(partitions.partitions())
    assert ensure_measurement_partitions.apply().get() == []


@pytest.mark.django_db
def test_rows_take_their_runs_time_and_land_in_its_month():
    artifact = _artifact()
    march = _run(artifact, dt.datetime(2025, 3, 31, 23, 30, tzinfo=dt.UTC), 0)
    april = _run(artifact, dt.datetime(2025, 4, 1, 0, 30, tzinfo=dt.UTC), 1)
    partitions.ensure_partitions(since=march.measured_at, until=april.measured_at, ahead=0)
    rows = _measure(march, [8, 16]) + _measure(april, [8])
    one = Measurement.objects.create(run=april, size_bytes=32)  # save() fills the time too
    for row in [*rows, one]:
        row.refresh_from_db()
        assert row.measured_at == row.run.measured_at
    held = {row.pk: partitions.partition_holding(row.pk) for row in [*rows, one]}
    if POSTGRES:
        assert held == {
            rows[0].pk: "artifacts_measurement_p2025_03",
            rows[1].pk: "artifacts_measurement_p2025_03",
            rows[2].pk: "artifacts_measurement_p2025_04",
            one.pk: "artifacts_measurement_p2025_04",
        }
    else:
        assert set(held.values()) == {None}


@pytest.mark.django_db
def test_a_month_without_partition_waits_in_the_default_one_until_its_partition_is_made():
    artifact = _artifact()
    old = _run(artifact, dt.datetime(2019, 6, 15, tzinfo=dt.UTC))  # an old log, uploaded today
    rows = _measure(old, [8, 1024, 1 << 20])
    if POSTGRES:
        assert {partitions.partition_holding(r.pk) for r in rows} == {partitions.DEFAULT}
    made = partitions.ensure_partitions(ahead=0)  # adopts the months found in the default
    if POSTGRES:
        assert "artifacts_measurement_p2019_06" in made
        assert {partitions.partition_holding(r.pk) for r in rows} == {
            "artifacts_measurement_p2019_06"
        }
    assert list(old.measurements.values_list("size_bytes", flat=True)) == [8, 1024, 1 << 20]


@pytest.mark.django_db
def test_queries_read_the_same_rows_in_the_same_order():
    artifact = _artifact()
    runs = [
        _run(artifact, dt.datetime(2024, month, 10, tzinfo=dt.UTC), index)
        for index, month in enumerate((1, 2, 7))
    ]
    partitions.ensure_partitions(since=runs[0].measured_at, until=runs[-1].measured_at)
    for run in runs:
        _measure(run, [1 << 20, 8, 1024])  # stored out of order: read back by size
    first = runs[1]
    assert list(first.measurements.values_list("size_bytes", flat=True)) == [8, 1024, 1 << 20]
    assert Measurement.objects.filter(run__in=runs).count() == 9
    assert Measurement.objects.filter(run__collective="all_reduce", size_bytes=8).count() == 3
    got = Measurement.objects.get(run=first, size_bytes=1024)
    assert got.oop_busbw_gbps == pytest.approx(1024 / 1e6)
    assert Measurement.objects.get(pk=got.pk).run_id == first.pk
    got.oop_busbw_gbps = 9.5
    got.save()  # an update by primary key finds its row
    assert Measurement.objects.get(pk=got.pk).oop_busbw_gbps == 9.5
    ids = [m.pk for m in Measurement.objects.filter(run__in=runs)]
    assert len(ids) == len(set(ids))  # ids stay unique across the partitions


@pytest.mark.django_db
def test_deleting_a_run_or_its_artifact_deletes_its_measurements_in_every_month():
    artifact, other = _artifact("a.log"), _artifact("b.log")
    jan = _run(artifact, dt.datetime(2024, 1, 5, tzinfo=dt.UTC), 0)
    aug = _run(artifact, dt.datetime(2024, 8, 5, tzinfo=dt.UTC), 1)
    kept = _run(other, dt.datetime(2024, 8, 6, tzinfo=dt.UTC), 0)
    partitions.ensure_partitions(since=jan.measured_at, until=aug.measured_at, ahead=0)
    for run in (jan, aug, kept):
        _measure(run, [8, 16])
    jan.delete()
    assert Measurement.objects.filter(run_id=jan.pk).count() == 0
    assert Measurement.objects.count() == 4
    artifact.delete()
    assert list(Measurement.objects.values_list("run_id", flat=True)) == [kept.pk, kept.pk]


def _rows_before_the_migration(apps: Any) -> dict[str, Any]:
    artifact_model = apps.get_model("artifacts", "Artifact")
    run_model = apps.get_model("artifacts", "BenchmarkRun")
    measurement_model = apps.get_model("artifacts", "Measurement")
    artifact = artifact_model.objects.create(
        file="artifacts/old.log", original_name="old.log", sha256="1" * 64, size=1
    )
    whens = [dt.datetime(2023, 11, 30, 23, tzinfo=dt.UTC), dt.datetime(2024, 2, 1, tzinfo=dt.UTC)]
    made = {}
    for index, when in enumerate(whens):
        run = run_model.objects.create(artifact=artifact, index=index, measured_at=when)
        for size in (8, 64):
            row = measurement_model.objects.create(run=run, size_bytes=size, ip_time_us=1.5)
            made[row.pk] = (run.pk, when, size)
    return made


@pytest.mark.django_db(transaction=True)
def test_a_database_with_measurements_migrates_and_reads_them_back():
    executor = MigrationExecutor(connection)
    latest = [key for key in executor.loader.graph.leaf_nodes() if key[0] == "artifacts"]
    executor.migrate([BEFORE])
    made = _rows_before_the_migration(executor.loader.project_state([BEFORE]).apps)
    executor = MigrationExecutor(connection)
    executor.migrate(latest)
    assert partitions.is_partitioned() is POSTGRES
    rows = {m.pk: m for m in Measurement.objects.all()}
    assert set(rows) == set(made)
    for pk, (run_id, when, size) in made.items():
        assert (rows[pk].run_id, rows[pk].measured_at, rows[pk].size_bytes) == (run_id, when, size)
        assert rows[pk].ip_time_us == 1.5
    if POSTGRES:
        held = {partitions.partition_holding(pk) for pk in made}
        assert held == {"artifacts_measurement_p2023_11", "artifacts_measurement_p2024_02"}
    # new rows continue the ids of the old ones
    run = BenchmarkRun.objects.get(pk=next(iter(made.values()))[0])
    new = Measurement.objects.create(run=run, size_bytes=128)
    assert new.pk > max(made)
    # and the migration goes back: a plain table with the same rows
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    assert partitions.is_partitioned() is False
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM artifacts_measurement")
        assert cursor.fetchone()[0] == len(made) + 1
    executor = MigrationExecutor(connection)
    executor.migrate(latest)
    assert Measurement.objects.count() == len(made) + 1
