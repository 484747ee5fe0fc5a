"""Prometheus exposition text: samples placed by labels, scrapes split, facts from labels.

No shared sample exists; the scrapes below follow dcgm-exporter's and node_exporter's
output (metric and label names as those exporters print them).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.metrics.parsers.prometheus import text as prometheus_text
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.artifacts.bundles import factory as bf

GPU0 = (
    'gpu="0",UUID="GPU-509665ad-b600-ac93-3616-d754b23d636d",pci_bus_id="00000000:18:00.0",'
    'device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-07",'
    'DCGM_FI_DRIVER_VERSION="560.35.03"'
)
DCGM = f"""\
# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{{{GPU0}}} 1980
DCGM_FI_DEV_SM_CLOCK{{{GPU0.replace('gpu="0"', 'gpu="1"')}}} 1755
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{{{GPU0}}} 41
# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{{{GPU0},err_code="0",err_msg="No Error"}} 0
"""
NODE = """\
# HELP node_ethtool_rx_prio3_pause Network interface rx_prio3_pause
# TYPE node_ethtool_rx_prio3_pause untyped
node_ethtool_rx_prio3_pause{device="ens1f0np0"} 1.2345e+06 1740327901000
# HELP node_network_receive_bytes_total Network device statistic receive_bytes.
# TYPE node_network_receive_bytes_total counter
node_network_receive_bytes_total{device="ens1f0np0"} 9.87654321e+11 1740327901000
# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 123456.78
node_cpu_seconds_total{cpu="0",mode="user"} 42.5
node_infiniband_port_data_received_bytes_total{device="mlx5_0",port="1"} 4.5e+12
node_filesystem_avail_bytes{device="/dev/nvme0n1p2",fstype="ext4",\
mountpoint="/var/lib/odd \\"dir\\", x"} 1e+10
node_load1 NaN
node_uname_info{domainname="(none)",machine="x86_64",nodename="gpu-node-07",\
release="5.15.0-131-generic",sysname="Linux",version="#141-Ubuntu SMP"} 1
"""


def parse(text: str) -> prometheus_text.PrometheusTextResult:
    return prometheus_text.parse(io.BytesIO(text.encode()))


def rows(result: prometheus_text.PrometheusTextResult) -> dict[tuple, object]:
    return {(s.host, s.device, s.port, s.counter): s for s in result.samples}


def test_dcgm_exporter_scrape() -> None:
    r = parse(DCGM)
    got = rows(r)
    clock = got[("gpu-node-07", "GPU 0", None, "DCGM_FI_DEV_SM_CLOCK")]
    assert (clock.value, clock.unit, clock.captured_at) == (1980, "MHz", None)
    assert got[("gpu-node-07", "GPU 1", None, "DCGM_FI_DEV_SM_CLOCK")].value == 1755
    assert got[("gpu-node-07", "GPU 0", None, "DCGM_FI_DEV_GPU_TEMP")].unit == "C"
    # err labels are dropped (their text changes with the value), not glued into the name
    assert ("gpu-node-07", "GPU 0", None, "DCGM_FI_DEV_XID_ERRORS") in got
    facts = {(f.device, f.name): f.value for f in r.facts}
    assert facts[("GPU 0", "gpu.uuid")] == "GPU-509665ad-b600-ac93-3616-d754b23d636d"
    assert facts[("GPU 0", "gpu.name")] == "NVIDIA H100 80GB HBM3"
    assert facts[("GPU 1", "gpu.driver_version")] == "560.35.03"
    assert r.hosts == ("gpu-node-07",) and r.scrapes == 1
    families = {f.name: (f.type, f.samples) for f in r.families}
    assert families["DCGM_FI_DEV_SM_CLOCK"] == ("gauge", 2)
    json.dumps(r.to_json())


def test_node_exporter_scrape() -> None:
    r = parse(NODE)
    got = rows(r)
    host = "gpu-node-07"  # from node_uname_info, for series without a host label
    pause = got[(host, "ens1f0np0", None, "rx_prio3_pause")]  # node_ethtool_ prefix removed
    assert (pause.value, pause.captured_at) == (1234500, "2025-02-23T16:25:01+00:00")
    assert got[(host, "ens1f0np0", None, "node_network_receive_bytes_total")].unit == "bytes"
    idle = got[(host, "cpu0", None, 'node_cpu_seconds_total{mode="idle"}')]
    assert (idle.value, idle.unit) == (123456.78, "s")
    assert got[(host, "mlx5_0", 1, "node_infiniband_port_data_received_bytes_total")].value == (
        4_500_000_000_000
    )  # fmt: skip
    odd = got[
        (
            host,
            "/dev/nvme0n1p2",
            None,
            'node_filesystem_avail_bytes{fstype="ext4",mountpoint="/var/lib/odd "dir", x"}',
        )
    ]
    assert odd.value == 10_000_000_000  # fmt: skip
    assert any("NaN" in w for w in r.warnings)
    assert ("gpu-node-07", None, "kernel.version", "5.15.0-131-generic") in {
        (f.host, f.device, f.name, f.value) for f in r.facts
    }


def test_concatenated_scrapes_become_snapshots() -> None:
    later = NODE.replace("1.2345e+06 1740327901000", "1.3345e+06 1740327961000")
    r = parse(NODE + later)
    assert r.scrapes == 2
    pauses = [s for s in r.samples if s.counter == "rx_prio3_pause"]
    assert [(s.snapshot, s.value) for s in pauses] == [(0, 1234500), (1, 1334500)]
    assert pauses[1].captured_at == "2025-02-23T16:26:01+00:00"


def test_openmetrics_seconds_timestamps() -> None:
    text = '# TYPE x counter\nx_total{device="eth0"} 5 1740327901.5\n# EOF\n'
    (sample,) = parse(text).samples
    assert sample.captured_at == "2025-02-23T16:25:01.500000+00:00"


def test_split_sample() -> None:
    assert prometheus_text.split_sample('a{b="c",} 1') == ("a", {"b": "c"}, 1.0, None)
    assert prometheus_text.split_sample("a{} -Inf 12")[2] == float("-inf")
    assert prometheus_text.split_sample("rx_bytes: 123") is None
    assert prometheus_text.split_sample('a{b="c" 1') is None
    assert prometheus_text.split_sample("a 1 2 3") is None


def test_detection_and_refusal() -> None:
    assert detect_kind("metrics", DCGM.encode()) == "prometheus_text"
    assert detect_kind("node.prom", NODE.encode()) == "prometheus_text"
    # neither an ethtool list nor an NCCL log is a scrape
    assert not prometheus_text.accepts("eth.txt", bf.text(bf.ETHTOOL).encode())
    assert not prometheus_text.accepts("ib.txt", bf.text(bf.IBSTAT).encode())
    with pytest.raises(ParseError, match="no Prometheus samples"):
        parse(bf.text(bf.IBSTAT))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                ["# TYPE a counter", "# HELP a x", "# EOF", 'a{b="c"} 1', 'a{b="\\"} 2',
                 "a 1e999", "a NaN 1", "a{", "a} 1", 'a{b="c",d="e"} 1 -5', "{}"]
            ),
            st.text(max_size=40),
        ),
        max_size=40,
    )
)  # fmt: skip
def test_fuzz_only_parse_error(lines: list[str]) -> None:
    with contextlib.suppress(ParseError):
        parse("\n".join(lines))
