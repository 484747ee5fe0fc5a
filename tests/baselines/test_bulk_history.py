"""``seed_demo --measurements N``: the fleet history, bulk-loaded, parses back to its rows."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from artifacts.models import Artifact, BenchmarkRun, Measurement, RunRank
from artifacts.parsers import get_parser
from artifacts.parsers.streams import open_decompressed
from baselines.bulk_history import COLLECTIVES, LABEL, _loss, fleet, load_fleet
from baselines.demo_history import STACKS, RunPlan
from baselines.models import HardwareProfile, RunContext, Series, SeriesPoint

pytestmark = pytest.mark.django_db


def test_fleet_history_fills_every_collective_and_size_on_every_profile(capsys):
    call_command("seed_demo", "--measurements", "4000", "--profiles", "5")
    assert HardwareProfile.objects.count() == 5
    assert Measurement.objects.count() >= 4000
    assert set(BenchmarkRun.objects.values_list("collective", flat=True)) == set(COLLECTIVES)
    sizes = Measurement.objects.values_list("size_bytes", flat=True)
    assert (min(sizes), max(sizes)) == (8, 16 * 1024**3)
    assert RunContext.objects.count() == BenchmarkRun.objects.count()
    usable = Measurement.objects.filter(run__errors=[]).count()
    assert SeriesPoint.objects.count() == usable
    # every rank row of every run, as the parser would store them
    assert RunRank.objects.count() == sum(run.nranks for run in BenchmarkRun.objects.only("nranks"))
    assert Series.objects.filter(point_count__gt=0).count() == Series.objects.count()
    assert "History: " in capsys.readouterr().out
    with pytest.raises(CommandError, match="already loaded"):
        call_command("seed_demo", "--measurements", "100", "--profiles", "5")


def test_fleet_artifacts_parse_back_to_exactly_the_stored_numbers():
    load_fleet(measurements=1500, profiles=3, log=lambda message: None)
    parser = get_parser("nccl_tests")
    for artifact in Artifact.objects.filter(label=LABEL)[:3]:
        with artifact.file.open("rb") as raw:
            assert raw.read(2) == b"\x1f\x8b"  # stored gzip, as uploads may be
        with artifact.file.open("rb") as raw:
            parsed = parser.parse(open_decompressed(raw, compressed_size=artifact.size))
        stored = list(artifact.runs.order_by("index").prefetch_related("measurements"))
        assert len(parsed.runs) == len(stored) == len(COLLECTIVES)
        for run, again in zip(stored, parsed.runs, strict=True):
            assert (run.collective, run.nranks, run.nccl_version, run.complete) == (
                again.collective, again.nranks, again.nccl_version, again.complete,
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


def test_fleet_is_many_kinds_of_cluster_and_every_one_flaps_once_recently():
    members = fleet(10, 1000, seed=7)
    assert len({m.demo.slug for m in members}) == 10
    assert {m.template.fabric for m in members} == {"nvlink", "roce_v2", "infiniband"}
    assert all(m.dip_start is not None and 600 <= m.dip_start < 980 for m in members)


def _plan(slug: str, collective: str, nccl: str) -> RunPlan:
    member = next(m for m in fleet(5, 1000, seed=7) if m.demo.slug.startswith(slug))
    index = next(i for i, s in enumerate(STACKS) if s["nccl"] == nccl)
    return RunPlan(member.demo, collective, night=0, stack_index=index)


def test_the_history_holds_its_software_regressions_and_their_fixes():
    big, small = 1024**3, 1024
    # NCCL 2.23.4 costs RoCE all_reduce on large messages only; 2.25.1 fixes it
    assert _loss(_plan("h200-roce", "all_reduce", "2.23.4"), big) > 0.07
    assert _loss(_plan("h200-roce", "all_reduce", "2.23.4"), small) < 0.001
    assert _loss(_plan("h200-roce", "all_reduce", "2.25.1"), big) == 0.0
    # driver 570.86.15 (stack of NCCL 2.25.1) costs NVSwitch all_gather from 16 MiB, then back
    assert _loss(_plan("h100-nvs", "all_gather", "2.25.1"), big) == 0.07
    assert _loss(_plan("h100-nvs", "all_gather", "2.25.1"), small) == 0.0
    assert _loss(_plan("h100-nvs", "all_gather", "2.26.2"), big) == 0.0
    assert _loss(_plan("h100-ib", "all_gather", "2.25.1"), big) == 0.0
    assert _loss(_plan("h100-nvs", "all_reduce", "2.25.1"), big) == 0.0
    # 2.26.2 gains reduce_scatter on NVSwitch
    assert _loss(_plan("b200-nvs", "reduce_scatter", "2.26.2"), big) < 0
