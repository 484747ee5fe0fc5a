"""Celery tasks: thin, named, idempotent wrappers around services."""

from __future__ import annotations

from celery import shared_task

from artifacts.models import Artifact
from artifacts.parsers import ParseError
from artifacts.parsing import artifact_parse


@shared_task(
    name="artifacts.parse",
    autoretry_for=(ParseError,),
    retry_backoff=5,
    max_retries=3,
)
def parse_artifact(artifact_id: int) -> str:
    """Parse one artifact. Permanent parse errors are recorded and not raised, so only
    transient failures (storage unreachable) reach autoretry."""
    try:
        return artifact_parse(artifact_id=artifact_id).status
    except Artifact.DoesNotExist:
        return "deleted"  # removed between upload and parse: nothing to do
