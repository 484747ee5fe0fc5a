"""Per-QP RDMA counters end to end: stored as counter rows per counter set, paired into
rates, named by the transport-retry finding, and QPs listed as host facts."""

from __future__ import annotations

import pytest

from artifacts.models import CounterRate, Finding, HostFact
from tests.artifacts.fabric.conftest import evaluated, upload_text
from tests.artifacts.fabric.parsers.test_rdma_counters_qp import RES_QP, SET4, STAT_QP

pytestmark = pytest.mark.django_db


def test_qp_counter_sets_become_rates_findings_and_facts() -> None:
    after = STAT_QP.replace("out_of_sequence\n17", "out_of_sequence\n40")
    artifact = upload_text(
        "rdma_stat_qp.txt", STAT_QP + "$ sleep 10\n" + after + RES_QP,
        host="gpu-node-07", metadata={"snapshot_interval_s": 10},
    )  # fmt: skip
    assert artifact.kind == "rdma_counters" and artifact.status == "parsed"
    evaluated(artifact)
    rate = CounterRate.objects.get(host="gpu-node-07", device=SET4, counter="out_of_sequence")
    assert (rate.delta, rate.dt_seconds, rate.value) == (23.0, 10.0, 2.3)
    finding = Finding.objects.get(artifact=artifact, rule="transport_retries", device=SET4)
    assert "ib_send_bw" in finding.title
    facts = {
        (f.device, f.name): f.value
        for f in HostFact.objects.filter(artifact=artifact, host="gpu-node-07")
    }
    assert facts[(SET4, "qp_counter.lqpns")] == "258, 259"
    assert facts[(SET4, "qp_counter.qp_type")] == "RC"
    assert facts[("mlx5_0 qp 261", "qp.state")] == "RTS"
    assert facts[("mlx5_0 qp 261", "qp.owner")] == "ib_write_bw pid 419"
    assert facts[("mlx5_0 qp 1", "qp.owner")] == "ib_core"


def test_per_qp_retries_show_on_the_artifact_and_host_pages(viewer_client) -> None:
    after = STAT_QP.replace("out_of_sequence\n17", "out_of_sequence\n40")
    artifact = upload_text(
        "rdma_stat_qp.txt", STAT_QP + "$ sleep 10\n" + after + RES_QP,
        host="gpu-node-07", metadata={"snapshot_interval_s": 10},
    )  # fmt: skip
    evaluated(artifact)
    counters = viewer_client.get(f"/artifacts/{artifact.pk}/counters/").content.decode()
    assert "mlx5_2 cntn 4 (ib_send_bw pid 9829)" in counters and "out_of_sequence" in counters
    host = viewer_client.get("/fabric/hosts/gpu-node-07/").content.decode()
    assert "RDMA transport retries on mlx5_2 cntn 4 (ib_send_bw pid 9829)" in host
    assert "qp.owner" in host and "ib_write_bw pid 419" in host
