"""Load the project's generated demo data through the real ingest path (idempotent).

A baselines command: besides the demo nccl-tests runs (artifacts) it can bulk-load long
histories, which are baselines' series and alerts.
"""

from __future__ import annotations

import io
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from artifacts.models import Artifact
from artifacts.parsing import artifact_parse
from artifacts.runs.demo import demo_files
from artifacts.services import artifact_ingest


class Command(BaseCommand):
    help = "Generate realistic nccl-tests outputs for a few hardware profiles and ingest them."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--days", type=int, default=6, help="days of nightly history")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--user", default="demo")
        parser.add_argument(
            "--runs",
            type=int,
            default=0,
            help="instead: bulk-load N runs of long history (10,000 runs = about 290,000 "
            "measurement rows; minutes, so `make run` keeps the short demo)",
        )
        parser.add_argument(
            "--measurements",
            type=int,
            default=0,
            help="instead: bulk-load a fleet's years of nightly sweeps with at least this many "
            "measurement rows (10,000,000: PostgreSQL COPY, minutes; baselines.bulk_history)",
        )
        parser.add_argument(
            "--profiles", type=int, default=24, help="hardware profiles of --measurements"
        )

    def handle(self, *args: Any, days: int, seed: int, user: str, **options: Any) -> None:
        uploader = get_user_model().objects.filter(username=user).first()
        if options.get("measurements"):  # the fleet history: millions of rows through COPY
            from baselines.bulk_history import load_fleet_command

            return load_fleet_command(
                measurements=options["measurements"],
                profiles=options["profiles"],
                seed=seed,
                uploader=uploader,
                write=self.stdout.write,
            )
        if options.get("runs"):  # baselines' bulk generator (bulk_create, for 10,000+ runs)
            from baselines.demo_history import seed_history_command

            return seed_history_command(
                runs=options["runs"], seed=seed, uploader=uploader, write=self.stdout.write
            )
        # the demo's profiles state their networks before the runs are filed on them
        from baselines.demo_history import demo_profiles_state

        demo_profiles_state()
        created = 0
        for demo in demo_files(days=days, seed=seed):
            outcome = artifact_ingest(
                stream=io.BytesIO(demo.content),
                name=demo.name,
                uploaded_by=uploader,
                label=demo.label,
                host=demo.host,
                metadata=demo.metadata,
                enqueue=False,  # parsed right here, so the first screen is complete at once
            )
            if outcome.created or outcome.artifact.status == Artifact.Status.PENDING:
                artifact_parse(artifact_id=outcome.artifact.pk)
                created += outcome.created
        self.stdout.write(f"Demo data: {created} new artifact(s); existing ones left as they are.")
