"""Fleet comparison of counter ratios (CNP ratio across hosts): numbers, outliers, page, export."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from artifacts.fabric import fleet
from artifacts.models import Artifact, CounterRate, CounterSnapshot

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, tzinfo=UTC)


def _cnp_fleet(deltas: dict[str, tuple[float, float]], *, reset_host: str = "") -> None:
    """Per host (Δnp_cnp_sent, Δrp_cnp_handled) over one 10 s window on mlx5_0."""
    artifact = Artifact.objects.create(
        original_name="hw_counters.txt", sha256="c" * 64, size=1, kind="rdma_counters"
    )
    for index, (host, (sent, handled)) in enumerate(deltas.items()):
        before = CounterSnapshot.objects.create(
            artifact=artifact, index=2 * index, source="rdma_counters", host=host,
            device="mlx5_0", port=1, taken_at=T0, time_source="file",
        )  # fmt: skip
        after = CounterSnapshot.objects.create(
            artifact=artifact, index=2 * index + 1, source="rdma_counters", host=host,
            device="mlx5_0", port=1, taken_at=T0 + timedelta(seconds=10), time_source="file",
        )  # fmt: skip
        for counter, delta in (("np_cnp_sent", sent), ("rp_cnp_handled", handled)):
            CounterRate.objects.create(
                before=before, after=after, host=host, device="mlx5_0", port=1,
                counter=counter, delta=delta, dt_seconds=10, value=delta / 10,
                unit="count/s", at=after.taken_at,
            )  # fmt: skip
        if host == reset_host:
            # a counter that went backwards: no delta may enter the sums
            CounterRate.objects.create(
                before=before, after=after, host=host, device="mlx5_0", port=1,
                counter="rp_cnp_handled", delta=None, dt_seconds=10, value=None,
                unit="count/s", flag="reset", at=after.taken_at,
            )  # fmt: skip


FLEET = {f"node{i}": (10_000.0 + 100 * i, 9_800.0 + 100 * i) for i in range(6)} | {
    "node-lossy": (10_000.0, 1_000.0)  # handles a tenth of what it is sent
}


def test_cnp_ratio_per_host_and_over_the_fleet() -> None:
    _cnp_fleet(FLEET, reset_host="node2")
    result = fleet.ratio_by_host("cnp_ratio")
    table = result.hosts.table.set_index("host")
    assert table.loc["node0", "value"] == pytest.approx(0.98)
    assert table.loc["node-lossy", "value"] == pytest.approx(0.1)
    assert table.loc["node2", "numerator"] == 10_000.0  # the reset row added nothing
    assert result.hosts.outliers.names == ["node-lossy"]
    sent = sum(s for s, _ in FLEET.values())
    handled = sum(h for _, h in FLEET.values())
    assert result.fleet_value == pytest.approx(handled / sent)
    assert (result.numerator_total, result.denominator_total) == (handled, sent)


def test_hosts_without_the_denominator_are_left_out() -> None:
    _cnp_fleet({"a": (0.0, 50.0), "b": (100.0, 90.0)})
    result = fleet.ratio_by_host("cnp_ratio")
    assert list(result.hosts.table["host"]) == ["b"]
    with pytest.raises(ValueError, match="metric must be one of"):
        fleet.ratio_by_host("nonsense")


def test_fleet_page_shows_the_cnp_ratio_and_exports_it(viewer_client) -> None:
    _cnp_fleet(FLEET)
    page = viewer_client.get("/fabric/fleet/", {"mode": "ratio", "ratio": "cnp_ratio"})
    text = page.content.decode()
    assert page.status_code == 200
    assert 'id="fleet-ratio"' in text and "CNP ratio: rp_cnp_handled / np_cnp_sent" in text
    assert "/fabric/hosts/node-lossy/" in text.split('id="verdict"')[1].split("</section>")[0]
    assert "Σ rp_cnp_handled" in text
    body = json.loads(
        viewer_client.get("/fabric/fleet/", {"mode": "ratio", "format": "json"}).content
    )
    assert body["metric"] == "cnp_ratio" and body["outliers"] == ["node-lossy"]
    assert body["numerator"] == "rp_cnp_handled" and body["fleet_value"] == pytest.approx(
        body["numerator_total"] / body["denominator_total"]
    )
    export = viewer_client.get("/fabric/fleet/", {"mode": "ratio", "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(export.content.decode())))
    lossy = next(r for r in rows if r["host"] == "node-lossy")
    assert (lossy["numerator"], lossy["denominator"], lossy["outlier"]) == (
        "1000.0", "10000.0", "True"
    )  # fmt: skip


def test_ratio_and_fact_modes_without_data_render(viewer_client) -> None:
    page = viewer_client.get("/fabric/fleet/", {"mode": "ratio"}).content.decode()
    assert "no np_cnp_sent deltas" in page and "No data for this choice." in page
    page = viewer_client.get("/fabric/fleet/", {"mode": "fact"})
    assert page.status_code == 200 and "Pick a counter" in page.content.decode()
    unknown = viewer_client.get("/fabric/fleet/", {"mode": "fact", "fact": "no.such.fact"})
    assert "No data for this choice." in unknown.content.decode()
