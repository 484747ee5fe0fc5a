"""Measurements carry their run's time and, on PostgreSQL, are partitioned by month of it.

Issue 27: the measurements table grows by millions of rows a year. On PostgreSQL it becomes
a table partitioned by range of ``measured_at`` (``artifacts/runs/partitions.py`` says how
the partitions are named and made ahead); SQLite keeps a plain table with the new column.

Existing rows take their run's time. On PostgreSQL the table is rebuilt: renamed aside, a
partitioned table of the same columns made in its place, the rows copied with their run's
time in one ``INSERT ... SELECT`` (cheaper than an ``UPDATE`` of every row followed by a
copy), the old table dropped, then its indexes and constraints made again exactly as the
catalogue had them, the primary key as ``(id, measured_at)`` (it must hold the partition
key), plus a BRIN index on ``measured_at``. The reverse rebuilds a plain table the same way.
The foreign key's own index on ``run_id`` goes first: ``(run_id, size_bytes)`` serves it.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

TABLE = "artifacts_measurement"
ASIDE = f"{TABLE}_unpartitioned"
BRIN = f"{TABLE}_measured_at_brin"
RUNS = "artifacts_benchmarkrun"
HELP = "the run's time (the partition key)"


def _fill_sqlite(cursor: Any) -> None:
    cursor.execute(
        f"UPDATE {TABLE} SET measured_at = "
        f"(SELECT r.measured_at FROM {RUNS} r WHERE r.id = {TABLE}.run_id) "
        "WHERE measured_at IS NULL"
    )


def _rebuild(connection: Any, *, partitioned: bool) -> None:
    """Make the table again, partitioned by month of ``measured_at`` or plain."""
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL maintenance_work_mem = '512MB'")
        # what the table has beside its primary key, made again on the new table
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = %s AND indexname NOT IN "
            "(SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass)",
            [TABLE, TABLE],
        )
        indexes = [definition for name, definition in cursor.fetchall() if name != BRIN]
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = %s::regclass AND contype IN ('u', 'f')",
            [TABLE],
        )
        constraints = cursor.fetchall()
        cursor.execute(
            "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            [TABLE],
        )
        columns = cursor.fetchone()[0]
        cursor.execute(f"ALTER TABLE {quote(TABLE)} RENAME TO {quote(ASIDE)}")
        partition_by = " PARTITION BY RANGE (measured_at)" if partitioned else ""
        cursor.execute(
            f"CREATE TABLE {quote(TABLE)} (LIKE {quote(ASIDE)} INCLUDING DEFAULTS "
            f"INCLUDING IDENTITY INCLUDING CONSTRAINTS){partition_by}"
        )
        cursor.execute(f"ALTER TABLE {quote(TABLE)} ALTER COLUMN measured_at SET NOT NULL")
        if partitioned:
            from artifacts.runs.partitions import DEFAULT, ensure_partitions

            cursor.execute(f"CREATE TABLE {quote(DEFAULT)} PARTITION OF {quote(TABLE)} DEFAULT")
            cursor.execute(f"SELECT min(measured_at), max(measured_at) FROM {RUNS}")
            first, last = cursor.fetchone()
            ensure_partitions(since=first, until=last, using=connection)
            ensure_partitions(using=connection)  # this month and the next ones
            chosen = ", ".join(
                "r.measured_at" if c == "measured_at" else f"o.{c}" for c in columns.split(", ")
            )
            cursor.execute(
                f"INSERT INTO {quote(TABLE)} ({columns}) SELECT {chosen} "
                f"FROM {quote(ASIDE)} o JOIN {RUNS} r ON r.id = o.run_id"
            )
        else:
            cursor.execute(
                f"INSERT INTO {quote(TABLE)} ({columns}) SELECT {columns} FROM {quote(ASIDE)}"
            )
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence(%s, 'id'), coalesce(max(id), 0) + 1, false) "
            f"FROM {quote(TABLE)}",
            [TABLE],
        )
        cursor.execute(f"DROP TABLE {quote(ASIDE)}")
        # the new identity's sequence takes the usual name back once the old one is gone
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [TABLE])
        sequence = cursor.fetchone()[0]
        if sequence.split(".")[-1].strip('"') != f"{TABLE}_id_seq":
            cursor.execute(f"ALTER SEQUENCE {sequence} RENAME TO {quote(TABLE + '_id_seq')}")
        key = "id, measured_at" if partitioned else "id"
        cursor.execute(
            f"ALTER TABLE {quote(TABLE)} ADD CONSTRAINT {quote(TABLE + '_pkey')} "
            f"PRIMARY KEY ({key})"
        )
        for definition in indexes:  # "ON ONLY" (a partitioned table's) would skip partitions
            cursor.execute(definition.replace(" ON ONLY ", " ON ", 1))
        for name, definition in constraints:
            cursor.execute(f"ALTER TABLE {quote(TABLE)} ADD CONSTRAINT {quote(name)} {definition}")
        if partitioned:
            # rows arrive in time order: a BRIN index of a few pages bounds time ranges
            cursor.execute(f"CREATE INDEX {quote(BRIN)} ON {quote(TABLE)} USING brin (measured_at)")
        cursor.execute(f"ANALYZE {quote(TABLE)}")


def forward(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        _rebuild(connection, partitioned=True)
    else:
        with connection.cursor() as cursor:
            _fill_sqlite(cursor)


def backward(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        _rebuild(connection, partitioned=False)
        with connection.cursor() as cursor:  # the column is dropped next: let it be null
            cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN measured_at DROP NOT NULL")


def _set_null(apps: Any, schema_editor: Any, *, null: bool) -> None:
    if schema_editor.connection.vendor == "postgresql":
        return
    model = apps.get_model("artifacts", "Measurement")
    old = model._meta.get_field("measured_at")
    new = models.DateTimeField(null=null, help_text=HELP)
    new.set_attributes_from_name("measured_at")
    new.model = model
    schema_editor.alter_field(model, old, new)


def not_null(apps: Any, schema_editor: Any) -> None:
    _set_null(apps, schema_editor, null=False)


def nullable(apps: Any, schema_editor: Any) -> None:
    _set_null(apps, schema_editor, null=True)


class Migration(migrations.Migration):
    dependencies = [
        ("artifacts", "0010_parse_stalls"),
    ]

    operations = [
        migrations.AlterField(
            model_name="measurement",
            name="run",
            field=models.ForeignKey(
                db_index=False,
                on_delete=models.deletion.CASCADE,
                related_name="measurements",
                to="artifacts.benchmarkrun",
            ),
        ),
        migrations.AddField(
            model_name="measurement",
            name="measured_at",
            field=models.DateTimeField(null=True, help_text=HELP),
        ),
        migrations.RunPython(forward, backward),
        # NOT NULL: on PostgreSQL the rebuild made it so (and the column is in the primary
        # key, where it cannot be undone before the reverse rebuild); elsewhere altered here
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="measurement",
                    name="measured_at",
                    field=models.DateTimeField(help_text=HELP),
                ),
            ],
            database_operations=[migrations.RunPython(not_null, nullable)],
        ),
    ]
