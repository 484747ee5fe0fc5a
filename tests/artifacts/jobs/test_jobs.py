"""Jobs decide which evidence shares facts: a stated job id, the same hosts over an
overlapping time, the bundle a file came from, or a person - never an upload label."""

from __future__ import annotations

import pytest

from artifacts.jobs.models import Job, JobMember
from artifacts.jobs.services import job_member_place
from artifacts.models import BenchmarkRun
from baselines.models import RunContext
from baselines.provenance.detaching import fact_detach
from tests.artifacts.jobs.evidence import nccl_debug_text, nccl_tests_text, reparse, upload
from tests.samples import sample

pytestmark = pytest.mark.django_db
HOSTS = ["gdr114", "gdr114", "gdr116", "gdr116"]
AT = "2024-10-18T10:00:00Z"


def context_of(artifact) -> RunContext:  # type: ignore[no-untyped-def]
    return RunContext.objects.select_related("stack", "profile").get(run__artifact=artifact)


def test_two_unrelated_uploads_with_one_label_share_no_fact() -> None:
    # The newcomer's case: an H100 node's nccl-tests log and a V100 RoCE NCCL_DEBUG log of two
    # other hosts, dropped together under one label.
    h100 = upload(
        sample("nccl_tests/xxrjun_singlenode_G8_h100.log").read_bytes(), "h100.log", label="n"
    )
    v100 = upload(
        sample("nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log").read_bytes(),
        "v100.log",
        kind="nccl_debug",
        label="n",
    )
    assert v100.host_facts.filter(name__startswith="nccl.env.").exists()
    for run in BenchmarkRun.objects.filter(artifact=h100):
        context = RunContext.objects.select_related("stack", "profile").get(run=run)
        assert context.stack.nccl_env == {}
        assert context.profile.fabric != "roce_v2"
        assert all(e["artifact"] != v100.pk for e in context.provenance)
    assert h100.job_membership.job_id != v100.job_membership.job_id


def test_a_stated_job_id_shares_the_jobs_nccl_environment() -> None:
    run = upload(nccl_tests_text(HOSTS), "a.txt", metadata={"job": "slurm-1", "captured_at": AT})
    log = upload(
        nccl_debug_text(["gdr114", "gdr116"], hca="mlx5_2"),
        "a.log",
        metadata={"slurm_job_id": "slurm-1", "captured_at": "2024-10-19T04:00:00Z"},
    )
    context = context_of(run)
    assert context.stack.nccl_env == {"NCCL_IB_HCA": "mlx5_2"}
    assert context.stack.nccl == "2.21.5"
    used = {e["key"]: e for e in context.provenance if e["used"]}
    assert used["NCCL_IB_HCA"]["artifact"] == log.pk
    assert used["NCCL_IB_HCA"]["why"] == f"same job #{log.job_membership.job_id}"
    assert Job.objects.get().how == Job.How.STATED


@pytest.mark.parametrize("log_first", [False, True])
def test_same_hosts_over_an_overlapping_time_are_one_job_in_either_order(log_first) -> None:
    files = [
        (nccl_tests_text(HOSTS), "b.txt", AT),
        (nccl_debug_text(["gdr114", "gdr116"], hca="mlx5_4"), "b.log", "2024-10-18T10:04:00Z"),
    ]
    if log_first:
        files.reverse()
    made = {name: upload(c, name, metadata={"captured_at": at}) for c, name, at in files}
    assert made["b.txt"].job_membership.job_id == made["b.log"].job_membership.job_id
    assert context_of(made["b.txt"]).stack.nccl_env == {"NCCL_IB_HCA": "mlx5_4"}


def test_same_hosts_hours_apart_or_other_hosts_at_once_are_other_jobs() -> None:
    run = upload(nccl_tests_text(HOSTS), "c.txt", metadata={"captured_at": AT})
    later = upload(
        nccl_debug_text(["gdr114", "gdr116"], hca="mlx5_5"),
        "later.log",
        metadata={"captured_at": "2024-10-18T13:00:00Z"},
    )
    other = upload(
        nccl_debug_text(["gdr114", "gdr117"], hca="mlx5_6"),
        "other.log",
        metadata={"captured_at": AT},
    )
    jobs = {a.job_membership.job_id for a in (run, later, other)}
    assert len(jobs) == 3
    assert context_of(run).stack.nccl_env == {}


def test_a_persons_detach_survives_a_reparse_of_both_files(editor) -> None:
    run = upload(nccl_tests_text(HOSTS), "d.txt", metadata={"job": "j-9", "captured_at": AT})
    log = upload(
        nccl_debug_text(["gdr114", "gdr116"], hca="mlx5_0"), "d.log", metadata={"job": "j-9"}
    )
    assert context_of(run).stack.nccl_env == {"NCCL_IB_HCA": "mlx5_0"}
    fact_detach(run=run.runs.get(), source_id=log.pk, key="NCCL_IB_HCA", user=editor)
    context = context_of(run)
    assert context.stack.nccl_env == {}
    assert context.stack.nccl == "2.21.5"  # only the one variable was detached
    reparse(log)
    reparse(run)
    context = context_of(run)
    assert context.stack.nccl_env == {} and context.stack.nccl == "2.21.5"


def test_a_persons_job_placement_survives_a_reparse(editor) -> None:
    run = upload(nccl_tests_text(HOSTS), "e.txt", metadata={"captured_at": AT})
    log = upload(
        nccl_debug_text(["gdr114", "gdr116"], hca="mlx5_1"),
        "e.log",
        metadata={"captured_at": "2024-10-18T18:00:00Z"},
    )
    assert context_of(run).stack.nccl_env == {}
    job_member_place(artifact=log, job=run.job_membership.job, user=editor)
    reparse(log)
    member = JobMember.objects.get(artifact=log)
    assert member.pinned and member.job_id == JobMember.objects.get(artifact=run).job_id
    assert "put here by" in member.reason
    assert context_of(run).stack.nccl_env == {"NCCL_IB_HCA": "mlx5_1"}


def test_a_label_alone_makes_no_job() -> None:
    a = upload(nccl_tests_text(["h1"]), "f.txt", label="nightly", metadata={"captured_at": AT})
    b = upload(nccl_tests_text(["h2"]), "g.txt", label="nightly", metadata={"captured_at": AT})
    assert a.job_membership.job_id != b.job_membership.job_id
