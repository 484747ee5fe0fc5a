"""Celery tasks: thin, named, idempotent wrappers around services."""

from __future__ import annotations

from celery import shared_task

from incidents.bundles.services import bundle_build
from incidents.models import EvidenceBundle


@shared_task(name="incidents.build_bundle", acks_late=True)
def build_bundle(bundle_id: int) -> str:
    """Build one evidence bundle; a bundle already built is left as it is."""
    try:
        return bundle_build(bundle_id=bundle_id).status
    except EvidenceBundle.DoesNotExist:
        return "deleted"
