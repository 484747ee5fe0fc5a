"""Knowledge for failures: every failure rule links a starter page that declares it, and a
failed run (and the incident opened from it) lists those pages instead of "No symptoms
seen here"."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from artifacts.fabric.failure_checks import RULE_SPECS
from artifacts.models import Finding
from knowledge.models import Page, PageStatus
from tests.artifacts.fabric.conftest import evaluated, upload

pytestmark = pytest.mark.django_db
NO_SYMPTOMS = "No symptoms seen here"
SECTIONS = ("## What", "## Usual causes", "## Commands that tell them apart",
            "## What to attach to a vendor case", "## Sources")  # fmt: skip


@pytest.fixture
def starter_pages(db):  # type: ignore[no-untyped-def]
    call_command("load_kb", stdout=io.StringIO())


def test_every_failure_rule_has_a_published_page_that_declares_it(starter_pages) -> None:
    slugs = set()
    for spec in RULE_SPECS:
        page = Page.objects.get(slug=spec["kb"])
        assert page.status == PageStatus.PUBLISHED
        assert f"rule:{spec['id']}" in page.symptoms, (page.slug, spec["id"])
        slugs.add(page.slug)
    assert len(slugs) >= 10
    for page in Page.objects.filter(slug__in=slugs):
        body = page.body
        for section in SECTIONS:
            assert section in body, (page.slug, section)


def test_a_failed_run_page_lists_its_findings_and_pages(starter_pages, viewer_client) -> None:  # type: ignore[no-untyped-def]
    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G1_FAIL_network_error.log"))
    run = artifact.runs.get()
    page = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-findings"' in page and "nccl_remote_error" in page
    assert NO_SYMPTOMS not in page
    assert "remote process exited or there was a network error" in page
    assert "/kb/nccl-remote-error/" in page and "/kb/nccl-tests-failed-runs/" in page


def test_the_incident_opened_from_it_lists_the_pages(starter_pages, editor, editor_client) -> None:  # type: ignore[no-untyped-def]
    from incidents.services import incident_attach_artifacts, incident_create

    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G4_FAIL_network_error.log"))
    assert Finding.objects.filter(artifact=artifact, rule="nccl_remote_error").exists()
    incident = incident_create(title="pair test fails", severity="SEV3", by=editor)
    incident_attach_artifacts(incident=incident, artifact_ids=[artifact.pk], by=editor)
    page = editor_client.get(incident.get_absolute_url()).content.decode()
    assert NO_SYMPTOMS not in page
    assert "/kb/nccl-remote-error/" in page
    # the findings are suggested for the timeline, like the other findings of its evidence
    assert "NCCL remote error on cnode2-016" in page


def test_a_generated_ib_completion_error_links_its_page(starter_pages, viewer_client) -> None:  # type: ignore[no-untyped-def]
    from artifacts.parsing import artifact_parse
    from artifacts.runs.demo import failure_file
    from artifacts.services import artifact_ingest

    demo = failure_file("ib_completion")
    outcome = artifact_ingest(stream=io.BytesIO(demo.content), name=demo.name, enqueue=False)
    artifact = evaluated(artifact_parse(artifact_id=outcome.artifact.pk))
    finding = Finding.objects.get(artifact=artifact, rule="ib_completion_error")
    page = viewer_client.get(finding.get_absolute_url()).content.decode()
    assert "/kb/nccl-ib-completion-errors/" in page


def test_a_separate_nccl_log_of_the_same_hosts_is_the_jobs_evidence(  # type: ignore[no-untyped-def]
    starter_pages, viewer_client
):
    """The run's file says only 'remote process exited'; the NCCL log of the same host, taken
    in the same minutes, names the cause: the run page shows its finding and page."""
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G1_FAIL_network_error.log"))
    run = artifact.runs.get()
    at = run.measured_at.isoformat()
    prefix = "cnode2-016:340134:340150 [0] NCCL"
    log = (
        f"{prefix} INFO NCCL version 2.28.7+cuda12.9\n"
        f"{prefix} INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.0.16<0>\n"
        f"{prefix} WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n"
    )
    outcome = artifact_ingest(
        stream=io.BytesIO(log.encode()), name="nccl.cnode2-016.log",
        metadata={"captured_at": at}, enqueue=False,
    )  # fmt: skip
    other = evaluated(artifact_parse(artifact_id=outcome.artifact.pk))
    assert Finding.objects.filter(artifact=other, rule="ibv_call_failed").exists()
    page = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert "ibv_reg_mr failed on cnode2-016" in page
    assert "/kb/nccl-ibv-call-failed/" in page


def test_an_xid_in_the_hosts_kernel_log_reaches_the_failed_run(  # type: ignore[no-untyped-def]
    starter_pages, viewer_client
):
    from tests.artifacts.fabric.conftest import upload_text

    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G1_FAIL_network_error.log"))
    run = artifact.runs.get()
    dmesg = (
        "[1234567.123456] NVRM: Xid (PCI:0000:43:00): 79, pid=340134, name=alltoall_perf, "
        "GPU has fallen off the bus.\n"
    )
    kernel = evaluated(
        upload_text("dmesg.txt", dmesg, host="cnode2-016",
                    metadata={"captured_at": run.measured_at.isoformat()})
    )  # fmt: skip
    assert Finding.objects.filter(artifact=kernel, rule="gpu_xid").exists()
    page = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert "Xid 79 on cnode2-016" in page and "/kb/xid-triage/" in page
