"""``seed_demo --measurements N``: the fleet history, bulk-loaded, parses back to its rows."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from artifacts.models import Artifact, BenchmarkRun, Measurement, RunRank
from artifacts.parsers import get_parser
from artifacts.parsers.streams import open_decompressed
from baselines.bulk_history import COLLECTIVES, LABEL, fleet, load_fleet
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


def test_fleet_is_many_kinds_of_cluster_and_half_of_them_flap():
    members = fleet(10, 1000, seed=7)
    assert len({m.demo.slug for m in members}) == 10
    assert {m.template.fabric for m in members} == {"nvlink", "roce_v2", "infiniband"}
    flapping = [m for m in members if m.dip_start is not None]
    assert len(flapping) == 5 and all(600 <= m.dip_start < 1000 for m in flapping)
