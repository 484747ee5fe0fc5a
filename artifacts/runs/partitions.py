"""Measurements partitioned by month on PostgreSQL (issue 27).

``artifacts_measurement`` is, on PostgreSQL, a table partitioned by range of ``measured_at``
(the run's time, copied on every row): one partition per calendar month
(``artifacts_measurement_p2025_03``) and a default partition that catches rows of months
without one (an old log uploaded today), so an insert never fails for want of a partition.
Queries are unchanged: they go through the parent table, which PostgreSQL routes and prunes.

Partitions are made ahead by the periodic task ``artifacts.runs.ensure_partitions`` (celery
beat, daily) and, for a bulk load, by the loader for the months it writes. Making a month's
partition also moves that month's rows out of the default partition (PostgreSQL refuses to
attach a range the default partition holds rows of), so the default stays small.

Django sees an ordinary table with ``id`` as its primary key; in PostgreSQL the key is
``(id, measured_at)`` (a partitioned table's unique keys must hold the partition key), and
``id`` stays unique because every row takes it from the one identity sequence. No table
references a measurement by foreign key, so nothing needs ``id`` alone to be unique.

SQLite (development, tests) keeps the plain table: every function here does nothing there.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from django.db import connection, transaction

TABLE = "artifacts_measurement"
DEFAULT = f"{TABLE}_default"
AHEAD_MONTHS = 3  # months made ahead of today by the periodic task


def _month(when: date | datetime) -> date:
    return date(when.year, when.month, 1)


def _next(month: date) -> date:
    return date(month.year + month.month // 12, month.month % 12 + 1, 1)


def months(first: date | datetime, last: date | datetime) -> list[date]:
    """The first days of every month from ``first``'s to ``last``'s, both included."""
    out, month, end = [], _month(first), _month(last)
    while month <= end:
        out.append(month)
        month = _next(month)
    return out


def name_of(month: date) -> str:
    return f"{TABLE}_p{month.year:04d}_{month.month:02d}"


def is_partitioned(using: Any = None) -> bool:
    """Whether the measurements table is partitioned (PostgreSQL after migration 0011)."""
    conn = using or connection
    if conn.vendor != "postgresql":
        return False
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)",
            [TABLE],
        )
        row = cursor.fetchone()
    return bool(row and row[0] == "p")


def partitions(using: Any = None) -> list[str]:
    """The names of the partitions, the default one included, in name order."""
    conn = using or connection
    if not is_partitioned(conn):
        return []
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = to_regclass(%s) ORDER BY c.relname",
            [TABLE],
        )
        return [name for (name,) in cursor.fetchall()]


def _bound(month: date) -> str:
    return f"{month.isoformat()} 00:00:00+00"


def _create_month(cursor: Any, month: date, quote: Any) -> None:
    """One month's partition; its rows waiting in the default partition are moved into it
    (in one transaction: the default partition cannot keep rows of an attached range)."""
    low, high = _bound(month), _bound(_next(month))
    waiting = f"measured_at >= '{low}' AND measured_at < '{high}'"
    cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {quote(DEFAULT)} WHERE {waiting})")
    moving = cursor.fetchone()[0]
    if moving:
        cursor.execute(
            f"CREATE TEMP TABLE measurement_moving ON COMMIT DROP AS "
            f"SELECT * FROM {quote(DEFAULT)} WHERE {waiting}"
        )
        cursor.execute(f"DELETE FROM {quote(DEFAULT)} WHERE {waiting}")
    cursor.execute(
        f"CREATE TABLE IF NOT EXISTS {quote(name_of(month))} PARTITION OF {quote(TABLE)} "
        f"FOR VALUES FROM ('{low}') TO ('{high}')"
    )
    if moving:
        cursor.execute(f"INSERT INTO {quote(TABLE)} SELECT * FROM measurement_moving")
        cursor.execute("DROP TABLE measurement_moving")


def ensure_partitions(
    *,
    ahead: int = AHEAD_MONTHS,
    since: date | datetime | None = None,
    until: date | datetime | None = None,
    using: Any = None,
) -> list[str]:
    """Make the monthly partitions missing from ``since``'s month (default: this month) to
    ``ahead`` months after ``until`` (default: today), and one for every month that has rows
    in the default partition. Idempotent; returns the names made (none on SQLite)."""
    conn = using or connection
    if not is_partitioned(conn):
        return []
    quote = conn.ops.quote_name
    today = datetime.now(UTC)
    last = _month(until or today)
    for _ in range(max(0, ahead)):
        last = _next(last)
    wanted = set(months(since or today, last))
    with conn.cursor() as cursor:
        # months whose rows wait in the default partition (a few rows: read by a scan)
        cursor.execute(
            f"SELECT DISTINCT date_trunc('month', measured_at AT TIME ZONE 'UTC')::date "
            f"FROM {quote(DEFAULT)}"
        )
        wanted.update(month for (month,) in cursor.fetchall())
    existing = set(partitions(conn))
    made = []
    for month in sorted(wanted):
        if name_of(month) in existing:
            continue
        with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
            _create_month(cursor, month, quote)
        made.append(name_of(month))
    return made


def partition_holding(measurement_id: int, using: Any = None) -> str | None:
    """The partition a measurement's row is stored in (None on SQLite or when absent)."""
    conn = using or connection
    if not is_partitioned(conn):
        return None
    with conn.cursor() as cursor:
        cursor.execute(
            f"SELECT tableoid::regclass::text FROM {conn.ops.quote_name(TABLE)} WHERE id = %s",
            [measurement_id],
        )
        row = cursor.fetchone()
    return row[0].strip('"') if row else None
