"""Freshness from the database: known versions from runs and uploads, evidence as proof."""

import io
from datetime import timedelta

import pytest
from django.utils import timezone

from artifacts.services import artifact_ingest
from knowledge.querysets import known_versions, page_freshness, stale_page_ids
from knowledge.services import citation_add, page_refresh_proof, page_verify

pytestmark = pytest.mark.django_db


def upload(name, **metadata):
    return artifact_ingest(
        stream=io.BytesIO(name.encode()), name=name, metadata=metadata, enqueue=False
    ).artifact


def test_known_versions_come_from_runs_and_upload_metadata(parsed_run):
    run = parsed_run()
    upload("a.txt", cuda="12.4", driver="550.54.15", nccl="2.23.4")
    upload("b.txt", cuda="12.6", gpus="16")
    upload("c.txt", cuda="", driver=550)  # empty values are ignored, numbers become text
    known = {(k.dimension, k.version) for k in known_versions()}
    assert {("cuda", "12.4"), ("cuda", "12.6"), ("driver", "550.54.15"), ("driver", "550")} <= known
    assert ("nccl", "2.23.4") in known and ("cuda", "") not in known
    if run.nccl_version:
        assert ("nccl", run.nccl_version) in known
    assert {k.dimension for k in known_versions(["cuda"])} == {"cuda"}


def test_a_new_driver_in_range_makes_a_verified_page_stale(make_page, editor):
    page = make_page(applies_to={"driver": ">=535"})
    upload("old.txt", driver="535.183.01")
    page_verify(page=page, by=editor, note="dcgm diag r3 on 535", versions={"driver": "535.183.01"})
    page.refresh_from_db()
    assert not page_freshness(page).stale and page.pk not in stale_page_ids()
    upload("new.txt", driver="550.54.15")
    result = page_freshness(page)
    assert result.stale and "Driver 550.54.15" in result.reasons[0]
    assert page.pk in stale_page_ids()
    page_verify(page=page, by=editor, note="re-run on 550", versions={"driver": "550.54.15"})
    page.refresh_from_db()
    assert not page_freshness(page).stale


def test_a_passing_cited_run_verifies_the_page(make_page, editor, parsed_run):
    run = parsed_run()
    assert run.complete and not run.errors
    page = make_page(verify_interval_days=0)  # the sample run is years old
    citation_add(page=page, kind="run", object_id=run.pk, by=editor)
    page.refresh_from_db()
    assert page.verified_at == run.measured_at and page.evidence_count == 1
    assert page.evidence_newest_at == run.measured_at
    assert not page_freshness(page).stale


def test_old_verification_expires_and_bad_verifications_are_refused(make_page, editor):
    page = make_page(verify_interval_days=30)
    page_verify(page=page, by=editor, note="ok", at=timezone.now() - timedelta(days=31))
    page.refresh_from_db()
    assert "31 days ago" in page_freshness(page).reasons[0]
    from knowledge.services import PageError

    with pytest.raises(PageError):
        page_verify(page=page, by=editor, note=" ")
    with pytest.raises(PageError):
        page_verify(page=page, by=editor, note="x", versions={"nccl": "latest"})
    with pytest.raises(PageError):
        page_verify(page=page, by=editor, note="x", at=timezone.now() + timedelta(days=2))
    assert page_refresh_proof(page).verified_at is not None
