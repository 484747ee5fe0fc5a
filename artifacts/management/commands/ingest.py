"""``manage.py ingest PATH... [--kind K] [--label L] [--wait] [--sweep NAME]``: the CLI upload
path. ``--sweep``: the files are one tuning sweep (docs/tuning.md)."""

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
        parser.add_argument(
            "--sweep",
            metavar="NAME",
            help="the files are runs of one tuning sweep (runs that differ in NCCL_* or other "
            "settings): make a sweep of them with this name",
        )

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
            if outcome.artifact.status == Artifact.Status.FAILED and outcome.created:
                failures += 1  # stored, but not queued: the broker is down
                self.stderr.write(f"{outcome.message}; {outcome.artifact.error}")
                continue
            self.stdout.write(outcome.message)
            artifacts.append(outcome.artifact)
        if opts["sweep"] is not None and artifacts:
            self._sweep(opts["sweep"], artifacts, user)
        if opts["wait"] and artifacts:
            failures += self._wait(artifacts, opts["timeout"])
        if failures:
            raise CommandError(f"{failures} file(s) not ingested or not parsed")

    def _sweep(self, name: str, artifacts: list[Artifact], user: Any) -> None:
        # The runs do not exist until the parses finish: the sweep holds the artifacts, and
        # its page reads their runs whenever it is opened.
        from artifacts.runs.hooks import make_sweep

        ids = sorted({a.pk for a in artifacts})  # a duplicate file is the same artifact
        sweep = make_sweep(name=name, artifact_ids=ids, user=user)
        self.stdout.write(f"sweep #{sweep.pk} {sweep.name!r}: {len(ids)} artifact(s)")

    def _wait(self, artifacts: list[Artifact], timeout: float) -> int:
        deadline = time.monotonic() + timeout
        pending = {a.pk for a in artifacts}
        failed = 0
        while pending and time.monotonic() < deadline:
            for a in Artifact.objects.filter(pk__in=pending, status__in=SETTLED):
                if a.status == Artifact.Status.STORED and not a.generic:
                    continue  # kept as evidence: its generic reading is still to come
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
