"""Fleet comparison of facts across hosts: text facts by majority, numeric ones by MAD."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from artifacts.fabric import fleet
from artifacts.models import Artifact, HostFact

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, tzinfo=UTC)


def _facts(name: str, values: dict[str, object], *, device: str = "", at: int = 0) -> None:
    artifact = Artifact.objects.create(
        original_name=f"{name}-{at}.txt", sha256=f"{at:064d}", size=1, kind="nccl_debug"
    )
    for host, value in values.items():
        number = float(value) if isinstance(value, int | float) else None
        HostFact.objects.create(
            artifact=artifact, host=host, device=device, name=name, value=str(value),
            number=number, observed_at=T0 + timedelta(hours=at),
        )  # fmt: skip


def test_text_fact_names_the_odd_host_and_the_newest_value_wins() -> None:
    _facts("nccl.version", {"n1": "2.21.5", "n2": "2.21.5", "n3": "2.21.5", "n4": "2.18.1"})
    result = fleet.fact_by_host("nccl.version")
    assert not result.numeric and result.majority == "2.21.5"
    assert result.hosts.outliers.names == ["n4"]
    assert result.hosts.table["host"].iloc[0] == "n4"  # odd hosts first
    # n4 was upgraded: a newer upload replaces its value, nobody is odd any more
    _facts("nccl.version", {"n4": "2.21.5"}, at=1)
    assert fleet.fact_by_host("nccl.version").hosts.outliers.names == []


def test_a_tie_names_nobody() -> None:
    _facts("qos.trust", {"a": "dscp", "b": "dscp", "c": "pcp", "d": "pcp"}, device="eth2")
    assert fleet.fact_by_host("qos.trust").hosts.outliers.names == []


def test_numeric_fact_uses_the_worst_device_and_mad() -> None:
    for index, host in enumerate([f"h{i}" for i in range(6)] + ["slow"]):
        for rail in range(4):
            rate = 200 if host == "slow" and rail == 2 else 400
            _facts("port.rate_gbps", {host: rate}, device=f"mlx5_{rail}", at=index * 10 + rail)
    result = fleet.fact_by_host("port.rate_gbps", direction="low")
    assert result.numeric
    table = result.hosts.table.set_index("host")
    assert table.loc["slow", "value"] == 200 and table.loc["slow", "device"] == "mlx5_2"
    assert table.loc["h0", "readings"] == 4
    assert result.hosts.outliers.names == ["slow"]
    assert "port.rate_gbps" in fleet.fleet_facts()


def test_fleet_page_fact_mode_and_export(viewer_client) -> None:
    _facts("hca.firmware", {"n1": "28.39.1002", "n2": "28.39.1002", "n3": "28.36.1010"},
           device="mlx5_0")  # fmt: skip
    page = viewer_client.get("/fabric/fleet/", {"mode": "fact", "fact": "hca.firmware"})
    text = page.content.decode()
    assert page.status_code == 200 and 'id="fleet-majority"' in text
    assert "/fabric/hosts/n3/" in text.split('id="verdict"')[1].split("</section>")[0]
    assert "28.36.1010" in text and 'value="hca.firmware"' in text  # picker lists the fact
    body = json.loads(
        viewer_client.get(
            "/fabric/fleet/", {"mode": "fact", "fact": "hca.firmware", "format": "json"}
        ).content
    )
    assert body["outliers"] == ["n3"] and body["majority"] == "28.39.1002"
    export = viewer_client.get("/fabric/fleet/", {"mode": "fact", "fact": "hca.firmware",
                                                  "format": "csv"})  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(export.content.decode())))
    assert (rows[0]["host"], rows[0]["value"], rows[0]["outlier"]) == ("n3", "28.36.1010", "True")
