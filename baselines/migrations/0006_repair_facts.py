"""Run the facts repair once (issue 23): runs filed when facts travelled by upload label are
derived again from the facts of their own file, job and hosts, and re-filed when they move.

It calls today's code (``baselines.provenance.repair``) because the repair is the whole
filing pipeline, which historical models cannot run. A database without runs (new
installations, test databases) skips it; ``elidable`` lets a later squash drop it, and
``manage.py repair_facts`` does the same at any time.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def repair(apps: Any, schema_editor: Any) -> None:
    if not apps.get_model("artifacts", "BenchmarkRun").objects.exists():
        return
    from baselines.provenance.repair import facts_repair

    lines = list(facts_repair(suspects_only=True).lines())
    for line in lines[:40]:
        print(f"  repair_facts: {line}")
    if len(lines) > 40:
        print(f"  repair_facts: ... {len(lines) - 40} more (manage.py repair_facts --dry-run)")


class Migration(migrations.Migration):
    dependencies = [
        ("baselines", "0005_fact_provenance"),
        ("artifacts", "0008_jobs"),
    ]

    operations = [migrations.RunPython(repair, migrations.RunPython.noop, elidable=True)]
