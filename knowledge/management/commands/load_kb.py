"""Load the starter pages in knowledge/content/ (or another folder) idempotently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from knowledge.importexport import last_change_by_loader, page_import
from knowledge.models import Page
from knowledge.services import page_verify

CONTENT_DIR = Path(__file__).resolve().parents[2] / "content"


class Command(BaseCommand):
    help = (
        "Load knowledge pages from Markdown files with front matter. New pages are created; "
        "pages last written by this command are updated when their file changed; pages edited "
        "in PerfHub since are left alone unless --force. A page the loader wrote is fresh: "
        "loading it is its verification (the files are reviewed in the repository), and it "
        "is owned by --owner unless its front matter names an owner."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--dir", default=str(CONTENT_DIR), help="folder of .md files")
        parser.add_argument(
            "--force",
            action="store_true",
            help="load changed files even over edits made in PerfHub",
        )
        parser.add_argument(
            "--owner",
            default="",
            help="username owning the pages loaded without an owner of their own (make run: demo)",
        )

    def handle(self, *args: Any, dir: str, force: bool, owner: str, **options: Any) -> None:
        folder = Path(dir)
        if not folder.is_dir():
            raise CommandError(f"{folder}: not a folder")
        team = get_user_model().objects.filter(username=owner).first() if owner else None
        if owner and team is None:
            raise CommandError(f"--owner {owner}: no such user")
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
            if outcome.page is not None and outcome.action != "failed":
                _adopt(outcome.page, new=outcome.action in {"created", "updated"}, owner=team,
                       origin=path.name)  # fmt: skip
            if outcome.action in {"failed", "skipped"} or options["verbosity"] > 1:
                stream = self.stderr if outcome.action == "failed" else self.stdout
                stream.write(outcome.message)
        summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "no files"
        self.stdout.write(f"Knowledge base: {summary} ({folder}).")
        if counts.get("failed"):
            raise CommandError(f"{counts['failed']} file(s) could not be loaded")


def _adopt(page: Page, *, new: bool, owner: Any, origin: str) -> None:
    """A page as the loader left it: owned, and verified by the loading itself.

    Without this every starter page showed "stale: never verified" and no owner the day it
    was loaded. Only content the loader wrote is vouched for: a page edited in PerfHub since
    keeps its own verifications and owner.
    """
    if not last_change_by_loader(page):
        return
    if owner is not None and page.owner_id is None:
        page.owner = owner
        page.save(update_fields=["owner"])
    if new or page.verified_at is None:
        page_verify(
            page=page,
            by=owner,
            note=f"Loaded from {origin} by load_kb: starter content, reviewed in the repository",
        )
