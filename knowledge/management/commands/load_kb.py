"""Load the starter pages in knowledge/content/ (or another folder) idempotently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from knowledge.importexport import page_import

CONTENT_DIR = Path(__file__).resolve().parents[2] / "content"


class Command(BaseCommand):
    help = (
        "Load knowledge pages from Markdown files with front matter. New pages are created; "
        "pages last written by this command are updated when their file changed; pages edited "
        "in PerfHub since are left alone unless --force."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--dir", default=str(CONTENT_DIR), help="folder of .md files")
        parser.add_argument(
            "--force",
            action="store_true",
            help="load changed files even over edits made in PerfHub",
        )

    def handle(self, *args: Any, dir: str, force: bool, **options: Any) -> None:
        folder = Path(dir)
        if not folder.is_dir():
            raise CommandError(f"{folder}: not a folder")
        files = sorted(folder.glob("*.md"))
        counts: dict[str, int] = {}
        for path in files:
            outcome = page_import(
                path.read_text(encoding="utf-8"),
                by=None,
                mode="update" if force else "loader",
                default_slug=path.stem,
                origin=path.name,
            )
            counts[outcome.action] = counts.get(outcome.action, 0) + 1
            if outcome.action in {"failed", "skipped"} or options["verbosity"] > 1:
                stream = self.stderr if outcome.action == "failed" else self.stdout
                stream.write(outcome.message)
        summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "no files"
        self.stdout.write(f"Knowledge base: {summary} ({folder}).")
        if counts.get("failed"):
            raise CommandError(f"{counts['failed']} file(s) could not be loaded")
