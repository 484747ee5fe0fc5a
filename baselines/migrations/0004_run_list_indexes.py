"""Indexes the run list needs at ten million measurements (issue 14, docs/baselines.md).

They index ``artifacts_benchmarkrun`` but live here, with the page-speed work of baselines:
the artifacts app's migrations belong to the evidence families. Plain SQL valid on SQLite and
PostgreSQL, so they are not part of any model's state (``makemigrations`` sees nothing).

* ``(collective, nranks, measured_at, id)``: the run list filtered by collective and rank
  count counts its rows from the index alone and reads each page in the list's order (the
  count alone read 12,000 heap rows, 85 ms, on 333,000 runs);
* ``(measured_at, id)``: the list's own order (newest first, id as tie-break) straight from
  one index, so page 100 reads 5,000 index entries instead of sorting by two keys.
"""

from django.db import migrations

INDEXES = {
    "run_list_filter_idx": "(collective, nranks, measured_at, id)",
    "run_list_order_idx": "(measured_at, id)",
}


class Migration(migrations.Migration):
    dependencies = [
        ("baselines", "0003_drift_alerts_and_profile_limits"),
        ("artifacts", "0007_artifact_detection"),
    ]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX IF NOT EXISTS {name} ON artifacts_benchmarkrun {columns}",
            f"DROP INDEX IF EXISTS {name}",
        )
        for name, columns in INDEXES.items()
    ]
