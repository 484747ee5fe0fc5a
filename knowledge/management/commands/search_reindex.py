"""Rebuild the search index from every registered source (or some of them)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from knowledge.search import SOURCES, reindex


class Command(BaseCommand):
    help = "Rebuild the full-text search index (pages, artifacts and any registered source)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("sources", nargs="*", help=f"default: all ({', '.join(SOURCES)})")

    def handle(self, *args: Any, sources: list[str], **options: Any) -> None:
        unknown = sorted(set(sources) - set(SOURCES))
        if unknown:
            raise CommandError(
                f"unknown source(s) {', '.join(unknown)}; known: {', '.join(SOURCES)}"
            )
        counts = reindex(sources or None)
        self.stdout.write(", ".join(f"{name}: {n} document(s)" for name, n in counts.items()))
