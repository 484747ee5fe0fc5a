"""Failures read as symptoms: failed, truncated and out-of-bounds nccl-tests runs and the
NCCL/CUDA/verbs error lines in them become findings with a symptom key (the rule id).

Real samples where they exist; the others are made by the project's own generator
(``artifacts.runs.demo.failure_file``: the demo's 16-node InfiniBand all_reduce failing
with that signature).
"""

from __future__ import annotations

import io

import pytest

from artifacts.fabric.signatures import classify
from artifacts.models import Finding
from artifacts.runs.demo import FAILURE_KINDS, failure_file
from tests.artifacts.fabric.conftest import evaluated, upload
from tests.samples import more_sample

pytestmark = pytest.mark.django_db
FAILURE_RULES = {
    "nccl_tests_failed", "nccl_tests_truncated", "nccl_tests_out_of_bounds",
    "ib_completion_error", "ibv_call_failed", "nccl_remote_error", "nccl_system_error",
    "nccl_cuda_error", "nccl_internal_error", "nccl_invalid_usage", "cuda_failure",
}  # fmt: skip


def rules_of(artifact) -> set[str]:  # type: ignore[no-untyped-def]
    return set(Finding.objects.filter(artifact=artifact).values_list("rule", flat=True))


def generated(kind: str):  # type: ignore[no-untyped-def]
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    demo = failure_file(kind)
    outcome = artifact_ingest(
        stream=io.BytesIO(demo.content), name=demo.name, metadata=demo.metadata, enqueue=False
    )
    return evaluated(artifact_parse(artifact_id=outcome.artifact.pk))


# --- real samples ----------------------------------------------------------------------------


def test_a_network_error_run_is_a_failed_run_and_a_remote_error() -> None:
    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G1_FAIL_network_error.log"))
    assert rules_of(artifact) == {"nccl_tests_failed", "nccl_remote_error"}
    failed = Finding.objects.get(artifact=artifact, rule="nccl_tests_failed")
    assert failed.severity == "critical" and failed.host == "cnode2-016"
    assert "alltoall run 0 failed on cnode2-016" in failed.title
    assert "remote process exited" in failed.title
    assert failed.kb_slug == "nccl-tests-failed-runs"
    remote = Finding.objects.get(artifact=artifact, rule="nccl_remote_error")
    assert remote.kb_slug == "nccl-remote-error"
    assert remote.evidence["lines_total"] == 1  # the " .. pid: Test failure" echoes are not causes


def test_four_ranks_reporting_it_are_one_finding() -> None:
    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G4_FAIL_network_error.log"))
    remote = Finding.objects.get(artifact=artifact, rule="nccl_remote_error")  # one, not four
    assert remote.host == "cnode2-016"
    failed = Finding.objects.get(artifact=artifact, rule="nccl_tests_failed")
    pids = {e.split()[3] for e in failed.evidence["errors"] if e.lstrip().startswith("..")}
    assert len(pids) == 4  # every rank's trace is kept as evidence


def test_unhandled_system_error_sample() -> None:
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    path = more_sample("nccl_tests/alcf_sophia_n2_g8_FAIL_unhandled_system_error.dat")
    outcome = artifact_ingest(stream=io.BytesIO(path.read_bytes()), name=path.name, enqueue=False)
    artifact = evaluated(artifact_parse(artifact_id=outcome.artifact.pk))
    assert {"nccl_tests_failed", "nccl_system_error"} <= rules_of(artifact)
    system = Finding.objects.filter(artifact=artifact, rule="nccl_system_error")
    assert system.exists() and all(f.severity == "critical" for f in system)


def test_a_run_cut_after_its_devices_is_truncated() -> None:
    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G4_TRUNCATED_after_devices.log"))
    finding = Finding.objects.get(artifact=artifact, rule="nccl_tests_truncated")
    assert "before its first size" in finding.title and finding.severity == "warning"


def test_only_the_cut_run_of_a_file_is_truncated() -> None:
    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G1_TRUNCATED_sendrecv_header.log"))
    truncated = Finding.objects.filter(artifact=artifact, rule="nccl_tests_truncated")
    assert [f.title.split()[0] for f in truncated] == ["sendrecv"]


def test_a_good_run_raises_no_failure() -> None:
    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G1_ok.log"))
    assert not rules_of(artifact) & FAILURE_RULES


# --- generated fixtures, one per signature ---------------------------------------------------

EXPECTED = {
    "link_flap": {"nccl_tests_failed", "ibv_call_failed", "nccl_system_error"},
    "ib_completion": {"nccl_tests_failed", "ib_completion_error", "nccl_remote_error"},
    "remote_error": {"nccl_tests_failed", "nccl_remote_error"},
    "ibv_reg_mr": {"nccl_tests_failed", "ibv_call_failed", "nccl_system_error"},
    "unhandled_cuda": {"nccl_tests_failed", "cuda_failure", "nccl_cuda_error"},
    "cuda_oom": {"nccl_tests_failed", "cuda_failure"},
    "internal": {"nccl_tests_failed", "nccl_internal_error"},
    "invalid_usage": {"nccl_tests_failed", "nccl_invalid_usage"},
    "truncated": {"nccl_tests_truncated"},
    "out_of_bounds": {"nccl_tests_out_of_bounds"},
}


def test_every_generated_kind_is_tested() -> None:
    assert set(EXPECTED) == set(FAILURE_KINDS)
    assert set().union(*EXPECTED.values()) == FAILURE_RULES


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_failure_signature_yields_its_finding(kind: str) -> None:
    artifact = generated(kind)
    assert rules_of(artifact) & FAILURE_RULES == EXPECTED[kind]
    for finding in Finding.objects.filter(artifact=artifact, rule__in=FAILURE_RULES):
        assert finding.kb_slug, finding.rule
        assert "?" not in finding.title, finding.title  # every template field was filled


def test_ib_completion_error_names_status_and_vendor_syndrome() -> None:
    artifact = generated("ib_completion")
    finding = Finding.objects.get(artifact=artifact, rule="ib_completion_error")
    assert "IBV_WC_RETRY_EXC_ERR (status 12, vendor err 129)" in finding.title
    assert finding.host.startswith("ib-h100-n")
    assert finding.evidence["vendor_err"] == "129"
    # the WARN line is a run error and (when both parsers read the file) a log event: once
    assert finding.evidence["lines_total"] == 1


def test_the_failed_call_and_cuda_error_are_in_the_titles() -> None:
    assert (
        "ibv_reg_mr failed"
        in Finding.objects.get(artifact=generated("ibv_reg_mr"), rule="ibv_call_failed").title
    )
    oom = Finding.objects.get(artifact=generated("cuda_oom"), rule="cuda_failure")
    assert "out of memory" in oom.title


def test_out_of_bounds_is_critical() -> None:
    finding = Finding.objects.get(
        artifact=generated("out_of_bounds"), rule="nccl_tests_out_of_bounds"
    )
    assert finding.severity == "critical" and "24 out-of-bounds" in finding.title


def test_the_efficiency_finding_survives_the_findings_pass() -> None:
    """run_below_peak is stored by baselines after filing; the artifact's own findings pass
    (now run on nccl-tests files too) leaves it alone."""
    artifact = evaluated(upload("nccl_tests/xxrjun_pair_N2_G1_ok.log"))
    Finding.objects.create(
        artifact=artifact, rule="run_below_peak", fingerprint="run_below_peak|x|run 0||",
        severity="warning", severity_rank=2, title="t", explanation="e", device="run 0",
        observed_at=artifact.uploaded_at,
    )  # fmt: skip
    evaluated(artifact)
    assert "run_below_peak" in rules_of(artifact)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("NCCL WARN NET/IB : Got completion with error 5, opcode 0, len 0, vendor err 249",
         "ib_completion_error"),
        ("NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out", "ibv_call_failed"),
        ("h1: Test NCCL failure common.cu:1012 'unhandled cuda error / '", "nccl_cuda_error"),
        ("ncclRemoteError: A call failed possibly due to a network error", "nccl_remote_error"),
    ],
)  # fmt: skip
def test_classify_reads_the_older_and_other_shapes(line: str, key: str) -> None:
    assert key in {m.key for m in classify(line)}
