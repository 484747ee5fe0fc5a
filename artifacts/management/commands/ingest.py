"""``manage.py ingest PATH... [--kind K] [--label L] [--wait]``: the CLI upload path."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from artifacts.models import Artifact
from artifacts.parsers import OTHER, PARSERS
from artifacts.services import IngestError, artifact_ingest

SETTLED = {Artifact.Status.PARSED, Artifact.Status.FAILED, Artifact.Status.STORED}


class Command(BaseCommand):
    help = "Store files as artifacts (directories are walked) and queue their parse."
    # Ingest needs the ORM and storage only; the system checks would import every view, DRF
    # and pandas. A broken project still fails loudly at the first query or in `manage.py check`.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--kind", choices=[*sorted(PARSERS), OTHER])
        parser.add_argument("--label", default="")
        parser.add_argument("--host", default="")
        parser.add_argument(
            "--job", default="", help="the job these files belong to (metadata 'job')"
        )
        parser.add_argument(
            "--metadata", default="{}", help='JSON object, e.g. \'{"cluster": "b"}\''
        )
        parser.add_argument("--user", help="record this user as the uploader")
        parser.add_argument("--wait", action="store_true", help="wait for the parses to finish")
        parser.add_argument("--timeout", type=float, default=600, help="seconds for --wait")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            metadata = json.loads(opts["metadata"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--metadata is not valid JSON: {exc}") from exc
        if opts.get("job"):
            metadata = {**metadata, "job": opts["job"]}
        user = None
        if opts["user"]:
            user = get_user_model().objects.filter(username=opts["user"]).first()
            if user is None:
                raise CommandError(f"no user {opts['user']!r}")
        artifacts, failures = [], 0
        for path in _files(opts["paths"]):
            try:
                with path.open("rb") as stream:
                    outcome = artifact_ingest(
                        stream=stream,
                        name=path.name,
                        uploaded_by=user,
                        kind=opts["kind"],
                        label=opts["label"],
                        host=opts["host"],
                        metadata=metadata,
                    )
            except (IngestError, OSError) as exc:
                failures += 1
                self.stderr.write(f"{path}: {exc}")
                continue
            self.stdout.write(outcome.message)
            artifacts.append(outcome.artifact)
        if opts["wait"] and artifacts:
            failures += self._wait(artifacts, opts["timeout"])
        if failures:
            raise CommandError(f"{failures} file(s) not ingested or not parsed")

    def _wait(self, artifacts: list[Artifact], timeout: float) -> int:
        deadline = time.monotonic() + timeout
        pending = {a.pk for a in artifacts}
        failed = 0
        while pending and time.monotonic() < deadline:
            for a in Artifact.objects.filter(pk__in=pending, status__in=SETTLED):
                pending.discard(a.pk)
                if a.status == Artifact.Status.FAILED:
                    failed += 1
                    self.stderr.write(f"#{a.pk} {a.original_name}: failed: {a.error}")
                else:
                    self.stdout.write(f"#{a.pk} {a.original_name}: {a.status} {a.summary}")
            if pending:
                time.sleep(0.5)
        if pending:
            self.stderr.write(
                f"timed out waiting for {len(pending)} parse(s); is a worker running?"
            )
            failed += len(pending)
        return failed


def _files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(p for p in sorted(path.rglob("*")) if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise CommandError(f"{raw}: no such file or directory")
    return found
