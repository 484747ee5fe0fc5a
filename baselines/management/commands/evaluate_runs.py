"""File, compare and scan already parsed artifacts (after installing or upgrading baselines,
or after editing profiles in bulk). Idempotent: evaluating twice changes nothing."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from artifacts.models import Artifact
from baselines.services import artifact_evaluate


class Command(BaseCommand):
    help = "Run the baselines after-parse evaluation on parsed artifacts, oldest first."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("ids", nargs="*", type=int, help="artifact ids (default: all parsed)")
        parser.add_argument(
            "--notify", action="store_true", help="also notify subscribers of new summaries"
        )

    def handle(self, *args: Any, ids: list[int], notify: bool, **options: Any) -> None:
        artifacts = Artifact.objects.filter(status=Artifact.Status.PARSED)
        if ids:
            artifacts = artifacts.filter(pk__in=ids)
        done = runs = alerts = 0
        for artifact_id in artifacts.order_by("captured_at", "uploaded_at", "pk").values_list(
            "pk", flat=True
        ):
            evaluation = artifact_evaluate(artifact_id=artifact_id, notify=notify)
            done, runs, alerts = done + 1, runs + evaluation.runs, alerts + evaluation.alerts
        self.stdout.write(f"{done} artifact(s) evaluated: {runs} run(s), {alerts} alert update(s).")
