"""Filing parsed runs: hardware profile, software stack, series points - idempotently."""

import pytest

from artifacts.models import BenchmarkRun
from artifacts.runs.demo import demo_files
from baselines.filing import profile_match, run_file
from baselines.models import (
    HardwareProfile,
    HostProfileMapping,
    RunContext,
    Series,
    SeriesPoint,
    SeriesStackStats,
    SoftwareStack,
)
from baselines.services import artifact_evaluate
from tests.baselines.baseline_fixtures import ingest_and_parse

pytestmark = pytest.mark.django_db


def first_demo(profile="h200-roce-2x8", collective="all_reduce"):
    return next(
        f
        for f in demo_files()
        if f.metadata["profile"] == profile and f.metadata["collective"] == collective
    )


def test_upload_metadata_names_the_profile_and_creates_it_from_the_gpu_facts():
    match = profile_match(
        hosts=["h200-r07n03"], gpu="NVIDIA H200", gpus_per_node=8, metadata={"profile": "H200 RoCE"}
    )
    assert match.profile.slug == "h200-roce"
    assert (match.profile.gpu_model, match.profile.gpu_generation) == ("H200", "Hopper")
    assert match.profile.gpus_per_node == 8 and match.profile.auto_created
    assert match.matched_by == "upload metadata profile=h200-roce"


def test_host_mappings_win_over_the_gpu_name_and_the_majority_of_hosts_decides():
    ib = HardwareProfile.objects.create(slug="ib-h100", gpu_match="H100")
    nvs = HardwareProfile.objects.create(slug="nvs-h100", gpu_match="H100", gpus_per_node=8)
    HostProfileMapping.objects.create(pattern="ib-h100-n*", profile=ib)
    HostProfileMapping.objects.create(pattern="ib-h100-n001", profile=nvs, priority=5)
    hosts = ["ib-h100-n001", "ib-h100-n002", "ib-h100-n003"]
    match = profile_match(hosts=hosts, gpu="NVIDIA H100 80GB HBM3", gpus_per_node=8, metadata={})
    assert match.profile == ib  # 2 hosts of 3 map there (n001's own mapping has priority)
    assert match.matched_by == "host mapping ib-h100-n*"


def test_gpu_match_chooses_the_profile_with_the_same_gpus_per_node():
    HardwareProfile.objects.create(slug="h100-pcie-4", gpu_match="H100", gpus_per_node=4)
    eight = HardwareProfile.objects.create(slug="h100-sxm-8", gpu_match="H100", gpus_per_node=8)
    match = profile_match(hosts=["x"], gpu="NVIDIA H100 80GB HBM3", gpus_per_node=8, metadata={})
    assert match.profile == eight and "GPU name contains" in match.matched_by


def test_unknown_hardware_gets_an_automatic_profile_per_gpu_model_and_node_size():
    a = profile_match(hosts=["n1"], gpu="NVIDIA B200", gpus_per_node=8, metadata={})
    b = profile_match(hosts=["n2"], gpu="NVIDIA B200", gpus_per_node=8, metadata={})
    c = profile_match(hosts=["n3"], gpu="NVIDIA B200", gpus_per_node=4, metadata={})
    assert a.profile == b.profile != c.profile
    assert a.profile.slug == "auto-b200-8gpu" and a.profile.gpu_generation == "Blackwell"


def test_a_parsed_run_is_filed_with_profile_stack_and_one_point_per_size():
    artifact = ingest_and_parse(first_demo())
    artifact_evaluate(artifact_id=artifact.pk)
    run = artifact.runs.get()
    context = RunContext.objects.select_related("profile", "stack").get(run=run)
    assert context.profile.slug == "h200-roce-2x8"
    stack = context.stack
    assert (stack.nccl, stack.cuda, stack.nccl_tests) == ("2.21.5", "12.4", "2.17.6")
    assert context.stack_sources["nccl"] == "benchmark output"
    points = SeriesPoint.objects.filter(run=run).select_related("series")
    assert points.count() == run.measurements.count() == 31
    big = points.get(series__size_bytes=8 * 1024**3)
    assert big.value == run.measurements.get(size_bytes=8 * 1024**3).oop_busbw_gbps
    series = big.series
    assert (series.collective, series.dtype, series.redop, series.nranks, series.nnodes) == (
        "all_reduce", "float", "sum", 16, 2,
    )  # fmt: skip
    assert (series.metric, series.unit, series.direction) == ("busbw", "GB/s", "higher")
    assert series.point_count == 1 and series.last_value == big.value
    assert SeriesStackStats.objects.get(series=series, stack=stack).points == 1


def test_filing_twice_and_reparsing_leave_the_same_rows():
    artifact = ingest_and_parse(first_demo())
    artifact_evaluate(artifact_id=artifact.pk)
    counts = (Series.objects.count(), SeriesPoint.objects.count(), SoftwareStack.objects.count())
    artifact_evaluate(artifact_id=artifact.pk)
    run_file(run=BenchmarkRun.objects.get())
    assert (
        Series.objects.count(), SeriesPoint.objects.count(), SoftwareStack.objects.count()
    ) == counts  # fmt: skip
    from artifacts.parsing import artifact_parse

    artifact_parse(artifact_id=artifact.pk)  # new run rows: points went with the old ones
    artifact_evaluate(artifact_id=artifact.pk)
    assert SeriesPoint.objects.count() == counts[1] and RunContext.objects.count() == 1


def test_failed_runs_are_filed_under_their_profile_but_add_no_points():
    failed = next(
        f for f in demo_files() if f.label == "nightly" and b"Test NCCL failure" in f.content
    )
    artifact = ingest_and_parse(failed)
    artifact_evaluate(artifact_id=artifact.pk)
    run = artifact.runs.get()
    assert run.errors
    assert RunContext.objects.get(run=run).profile.slug == "ib-h100-16x8"
    assert not SeriesPoint.objects.filter(run=run).exists()


def test_two_runs_with_the_same_versions_and_environment_share_one_stack():
    one = ingest_and_parse(first_demo(), metadata={**first_demo().metadata, "NCCL_ALGO": "Ring"})
    sweep = next(
        f for f in demo_files() if f.label == "sweep" and f.metadata["profile"] == "h200-roce-2x8"
    )
    two = ingest_and_parse(sweep, metadata={**sweep.metadata, "NCCL_ALGO": "Ring"})
    three = ingest_and_parse(
        first_demo("h100-nvs-1x8"), metadata={**first_demo("h100-nvs-1x8").metadata}
    )
    for artifact in (one, two, three):
        artifact_evaluate(artifact_id=artifact.pk)
    stacks = {c.run.artifact_id: c.stack_id for c in RunContext.objects.select_related("run")}
    assert stacks[one.pk] == stacks[two.pk] != stacks[three.pk]
    assert SoftwareStack.objects.get(pk=stacks[one.pk]).nccl_env == {"NCCL_ALGO": "Ring"}
