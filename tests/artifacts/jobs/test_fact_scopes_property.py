"""Property: whatever is uploaded (random hosts, labels, times, job ids), no run carries a
fact whose source is neither on its hosts nor in its job."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.jobs.models import Job, JobMember
from artifacts.models import Artifact, HostFact
from baselines.models import RunContext
from tests.artifacts.jobs.evidence import nccl_debug_text, nccl_tests_text, upload

pytestmark = pytest.mark.django_db
START = datetime(2025, 1, 1, 8, 0, tzinfo=UTC)
HOSTS = ["a1", "a2", "b1"]

upload_plan = st.fixed_dictionaries(
    {
        "log": st.booleans(),  # an NCCL_DEBUG log (job facts) or an nccl-tests table (a run)
        "hosts": st.lists(st.sampled_from(HOSTS), min_size=1, max_size=3, unique=True),
        "label": st.sampled_from(["", "nightly", "sweep"]),
        "minutes": st.sampled_from([0, 3, 30, 240]),
        "job": st.sampled_from([None, "j1", "j2"]),
    }
)


def _allowed_sources(context: RunContext) -> set[int]:
    """Artifacts whose facts may describe the run: its own, its job's, and (host facts
    only) those stating facts about one of its hosts."""
    artifact = context.run.artifact
    allowed = {artifact.pk}
    member = JobMember.objects.filter(artifact=artifact).first()
    if member is not None:
        allowed |= set(member.job.members.values_list("artifact_id", flat=True))
    return allowed


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plans=st.lists(upload_plan, min_size=2, max_size=5))
def test_no_run_carries_a_fact_from_outside_its_hosts_and_its_job(plans) -> None:
    Artifact.objects.all().delete()
    Job.objects.all().delete()
    for i, plan in enumerate(plans):
        metadata = {"captured_at": (START + timedelta(minutes=plan["minutes"])).isoformat()}
        if plan["job"]:
            metadata["job"] = plan["job"]
        # Each upload is unique (index in the bytes) and echoes its own NCCL_IB_HCA value.
        content = (
            nccl_debug_text(plan["hosts"], hca=f"mlx5_{i}")
            if plan["log"]
            else nccl_tests_text(plan["hosts"] * 2, tag=f"upload {i}")
        )
        upload(content, f"u{i}.{'log' if plan['log'] else 'txt'}", label=plan["label"],
               metadata=metadata)  # fmt: skip
    for context in RunContext.objects.select_related("run__artifact", "stack"):
        hosts = set(context.run.ranks.values_list("host", flat=True))
        in_job = _allowed_sources(context)
        for entry in context.provenance:
            source = entry["artifact"]
            if source is None or source in in_job:
                continue
            # Not in its job: only a host fact about one of the run's hosts may apply.
            assert entry["kind"] != "env", entry
            assert entry["key"] not in ("nccl",), entry
            stated_on = set(
                HostFact.objects.filter(artifact_id=source).values_list("host", flat=True)
            )
            assert stated_on & hosts, entry
        # Independently of the provenance record: every NCCL_* value the stack carries is
        # stated by the run's own file or a file of its job.
        for key, value in context.stack.nccl_env.items():
            assert HostFact.objects.filter(
                artifact_id__in=in_job, name=f"nccl.env.{key}", value=value
            ).exists(), (key, value)
