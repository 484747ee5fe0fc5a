"""``seed_demo --runs N``: a long history, bulk-loaded, that parses back to the same numbers."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from artifacts.models import Artifact, BenchmarkRun, Measurement
from artifacts.parsers import get_parser
from baselines.demo_history import LABEL, STACKS, seed_history
from baselines.models import HardwareProfile, HostProfileMapping, RunContext, SeriesPoint

pytestmark = pytest.mark.django_db


def test_seed_demo_runs_loads_that_many_runs_with_series_and_stacks(capsys):
    call_command("seed_demo", "--runs", "150")
    assert BenchmarkRun.objects.count() == 150
    assert Artifact.objects.filter(label=LABEL).count() == 30  # 10 nights x 3 profiles
    assert RunContext.objects.count() == 150
    usable = Measurement.objects.filter(run__errors=[]).count()
    assert SeriesPoint.objects.count() == usable > 150 * 10
    nccl = set(BenchmarkRun.objects.values_list("nccl_version", flat=True))
    assert nccl == {s["nccl"] for s in STACKS}  # the whole release history, compressed
    h200 = HardwareProfile.objects.get(slug="h200-roce-2x8")
    assert (h200.fabric, h200.nic_model, h200.gpu_generation) == ("roce_v2", "ConnectX-7", "Hopper")
    assert HostProfileMapping.objects.filter(profile=h200, pattern="h200-r07n*").exists()
    assert "History: 150 runs" in capsys.readouterr().out
    with pytest.raises(CommandError, match="already loaded"):
        call_command("seed_demo", "--runs", "10")


def test_generated_artifacts_parse_back_to_exactly_the_stored_numbers():
    seed_history(runs=45, log=lambda message: None)
    parser = get_parser("nccl_tests")
    for artifact in Artifact.objects.filter(label=LABEL)[:3]:
        with artifact.file.open("rb") as stream:
            parsed = parser.parse(stream)
        stored = list(artifact.runs.order_by("index").prefetch_related("measurements"))
        assert len(parsed.runs) == len(stored)
        for run, again in zip(stored, parsed.runs, strict=True):
            assert (run.collective, run.nranks, run.nccl_version, run.gpu, run.complete) == (
                again.collective, again.nranks, again.nccl_version, again.ranks[0].gpu,
                again.complete,
            )  # fmt: skip
            rows = [
                (m.size_bytes, m.count, m.oop_time_us, m.oop_busbw_gbps, m.ip_busbw_gbps)
                for m in run.measurements.all()
            ]
            assert rows == [
                (r.size_bytes, r.count, r.out_of_place.time_us, r.out_of_place.busbw_gbps,
                 r.in_place.busbw_gbps)
                for r in again.rows
            ]  # fmt: skip
            assert run.ranks.count() == len(again.ranks)


def test_evaluate_runs_backfills_artifacts_parsed_before_baselines_existed(capsys):
    from artifacts.runs.demo import demo_files
    from baselines.models import AlertSummary
    from tests.baselines.baseline_fixtures import ingest_and_parse

    for demo in demo_files():
        if demo.metadata["profile"] == "h200-roce-2x8" and demo.label == "nightly":
            ingest_and_parse(demo)  # no on-commit callbacks in a test transaction: not filed
    assert not RunContext.objects.exists()
    call_command("evaluate_runs")
    assert RunContext.objects.count() == 6
    assert AlertSummary.objects.get().stack_after.nccl == "2.23.4"
    assert "6 artifact(s) evaluated" in capsys.readouterr().out
    call_command("send_alert_digests")
    assert "0 message(s) sent" in capsys.readouterr().out
