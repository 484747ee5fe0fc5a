"""Re-derive the stack and profile of every filed run under the scoped rules (facts of the
same file, job or host only; docs/baselines.md), re-file the runs that move, report them."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from baselines.provenance.repair import facts_repair


class Command(BaseCommand):
    help = "Re-derive runs' stacks and profiles from the facts that describe them; re-file."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--dry-run", action="store_true", help="report, change nothing")
        parser.add_argument(
            "--suspects-only",
            action="store_true",
            help="only runs that cite another artifact or sit on a profile that learned fields",
        )
        parser.add_argument("--notify", action="store_true", help="notify about new summaries")

    def handle(
        self, *args: Any, dry_run: bool, suspects_only: bool, notify: bool, **_: Any
    ) -> None:
        report = facts_repair(
            dry_run=dry_run,
            suspects_only=suspects_only,
            notify=notify,
            progress=lambda text: self.stderr.write(text),
        )
        for line in report.lines():
            self.stdout.write(line)
