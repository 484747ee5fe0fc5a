"""nccl-tests output run with NCCL_DEBUG=INFO: runs from nccl_tests, NCCL facts from nccl_debug."""

from __future__ import annotations

import pytest

from artifacts.models import Finding, HostFact
from tests.artifacts.fabric.conftest import evaluated, upload

pytestmark = pytest.mark.django_db

INTERLEAVED = "nccl_tests/ssbandjl_alltoall_mpirun_without_MPI1_interleaved_debug.log"
PLAIN = "nccl_tests/xxrjun_smoke_N2_G1.log"


def test_interleaved_log_keeps_its_kind_and_gains_nccl_facts() -> None:
    artifact = upload(INTERLEAVED)
    assert (artifact.kind, artifact.status) == ("nccl_tests", "parsed")
    assert artifact.runs.count() >= 1  # the benchmark side is untouched
    versions = dict(
        HostFact.objects.filter(artifact=artifact, name="nccl.version").values_list("host", "value")
    )
    assert versions == {"gdr114": "2.26.5", "gdr116": "2.26.2"}
    transports = HostFact.objects.filter(artifact=artifact, name="nccl.transports")
    assert {t.value for t in transports} == {"IB"}
    assert artifact.log_events.exists()
    assert artifact.summary["nccl_debug_version_mismatch"] is True
    assert artifact.summary["nccl_debug_nccl_versions"] == ["2.26.2", "2.26.5"]


def test_findings_run_on_the_nccl_facts() -> None:
    artifact = evaluated(upload(INTERLEAVED))
    finding = Finding.objects.get(artifact=artifact, rule="nccl_version_mismatch")
    assert "2.26.2" in finding.title and "2.26.5" in finding.title


def test_reparse_does_not_duplicate_the_nccl_rows() -> None:
    from artifacts.parsing import artifact_parse

    artifact = upload(INTERLEAVED)
    first = (artifact.host_facts.count(), artifact.log_events.count(), artifact.runs.count())
    artifact_parse(artifact_id=artifact.pk)
    again = (artifact.host_facts.count(), artifact.log_events.count(), artifact.runs.count())
    assert first == again


def test_plain_nccl_tests_log_gets_no_second_reading() -> None:
    artifact = upload(PLAIN)
    assert artifact.kind == "nccl_tests"
    assert not any(key.startswith("nccl_debug_") for key in artifact.summary)
    assert not artifact.host_facts.exists()
