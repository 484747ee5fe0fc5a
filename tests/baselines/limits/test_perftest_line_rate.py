"""perftest bandwidth against the negotiated line rate of the port it ran on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from artifacts.models import BenchmarkRun
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.limits.reads import Unavailable, run_efficiency
from baselines.services import artifact_evaluate
from tests.baselines.limits.test_link_evidence import ibstat

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "perftest"
HOST = "gpu-node-03"  # the prompt of the ib_write_bw transcript; it ran on mlx5_3


def upload(content: bytes, name: str, host: str = "") -> None:
    outcome = artifact_ingest(
        stream=io.BytesIO(content), name=name, host=host, label="pt", enqueue=False
    )
    artifact = artifact_parse(artifact_id=outcome.artifact.pk)
    assert artifact.status == "parsed", artifact.error
    artifact_evaluate(artifact_id=artifact.pk, notify=False)


@pytest.mark.django_db
@pytest.mark.parametrize(("rate", "peak", "pct"), [(400, 50.0, 98.0), (200, 25.0, 196.0)])
def test_perftest_is_measured_against_the_ports_negotiated_rate(rate, peak, pct):  # type: ignore[no-untyped-def]
    rates = [400] * 8
    rates[3] = rate  # mlx5_3, the port ib_write_bw ran on
    upload(ibstat(rates), "ibstat.txt", host=HOST)
    upload((FIXTURE / "ib_write_bw_roce_4qp_report_gbits.txt").read_bytes(), "ib_write_bw.txt")
    run = BenchmarkRun.objects.get(benchmark="perftest")
    result = run_efficiency(run)
    assert not isinstance(result, Unavailable), result
    assert (result.peak.bottleneck, result.peak.peak_busbw_gbps) == ("nic_line_rate", peak)
    assert "mlx5_3" in result.peak.explanation
    # 8 MiB: 391.92 Gb/s / 8 = 48.99 GB/s; / 50 GB/s (400 Gb/s port) = 98.0 %.
    # (At 200 Gb/s the port could not have carried it: 196 % says the evidence disagrees.)
    big = result.sizes[-1]
    assert (big.size_bytes, big.busbw_gbps, big.pct_of_peak) == (8388608, 48.99, pct)
