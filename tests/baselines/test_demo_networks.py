"""``seed_demo`` (what ``make run`` loads): the demo profiles state their networks, so the
multi-node demo runs show % of peak at once, stated rather than assumed."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from artifacts.models import BenchmarkRun
from baselines.demo_history import demo_profiles_state
from baselines.limits.reads import RunEfficiency, run_efficiency
from baselines.models import HardwareProfile

pytestmark = pytest.mark.django_db


def test_demo_multi_node_runs_are_measured_against_their_stated_network(  # type: ignore[no-untyped-def]
    eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # the worker files the runs
        call_command("seed_demo", "--days", "1")
    multi = BenchmarkRun.objects.filter(nhosts__gt=1, benchmark="nccl-tests", errors=[])
    assert multi.exists()
    for run in multi.filter(collective="all_reduce"):
        result = run_efficiency(run)
        assert isinstance(result, RunEfficiency), getattr(result, "reason", result)
        assert result.assumed is None and result.peak.bottleneck == "network"
        # 8 x ConnectX-7 400 Gb/s per node: 400 GB/s; the demo plateaus sit below it
        assert result.peak.peak_busbw_gbps == 400.0
        assert 50 < (result.large.pct_of_peak or 0) < 100


def test_an_editors_network_choice_survives_a_second_seed() -> None:
    demo_profiles_state()
    HardwareProfile.objects.filter(slug="ib-h100-16x8").update(nics_per_node=4)
    demo_profiles_state()
    assert HardwareProfile.objects.get(slug="ib-h100-16x8").nics_per_node == 4
    assert HardwareProfile.objects.get(slug="h200-roce-2x8").nic_speed_gbps == 400
