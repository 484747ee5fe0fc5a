"""Transaction-scoped locks for writes that workers must not interleave.

Two Celery workers filing evidence of one job at once touch the same rows (a job's hosts,
a series' points) in different orders, and PostgreSQL aborts one of them with "deadlock
detected". Such writes are short next to parsing, so each family of them takes one
advisory lock held until its transaction ends. SQLite serializes writers by itself.
"""

from __future__ import annotations

import zlib

from django.db import connection


def serialize(name: str) -> None:
    """Wait for, then hold until the end of the current transaction, the lock ``name``."""
    if connection.vendor != "postgresql":
        return
    if not connection.in_atomic_block:
        raise RuntimeError(f"lock {name!r} outside a transaction would be released at once")
    key = zlib.crc32(f"perfhub:{name}".encode())  # a stable 32-bit key per name
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])
