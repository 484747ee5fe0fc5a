"""ibnetdiscover: nodes, ports, cables (once), widths/speeds, GUIDs and LIDs. Expected values
read from the superbench sample (8 switches: a spine, 2 lines, 5 leaves; 10 HCAs, all 4xHDR)
and from made-up fragments in the tool's shapes."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import ibnetdiscover
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

SUPERBENCH = "counters/superbench_ibnetdiscover.txt"


def parse_text(text: str) -> ibnetdiscover.IbnetdiscoverResult:
    return ibnetdiscover.parse(io.BytesIO(text.encode()))


def test_fabric_nodes_and_their_guids() -> None:
    path = more_sample(SUPERBENCH)
    assert ibnetdiscover.accepts(path.name, path.read_bytes())
    result = ibnetdiscover.parse(path.open("rb"))
    text = path.read_text()
    assert len(result.nodes) == text.count("\nSwitch ") + text.count("\nCa ") == 18
    summary = result.summary()
    assert (summary["switches"], summary["cas"], summary["routers"]) == (8, 10, 0)
    spine = result.nodes[0]
    assert (spine.node_type, spine.guid, spine.ports, spine.lid, spine.lmc) == (
        "switch", "0x0ff08c43213b3f30", 41, 387, 0,
    )  # fmt: skip
    assert spine.description == "MF0;rmd70-0101-0908-01ib1-A:MCS8500/S01/U1"
    assert (spine.vendor_id, spine.device_id, spine.system_image_guid) == (
        "0x2c9", "0xd2f0", "0xb8599f0300c2f06a",
    )  # fmt: skip
    assert spine.enhanced_port0 is True and result.nodes[1].enhanced_port0 is False  # "base"
    hca = next(n for n in result.nodes if n.guid == "0x043f720300e61112")
    assert (hca.node_type, hca.description, hca.device_id) == (
        "ca", "RMD701091906037 ibp11s0f0", "0x101b",
    )  # fmt: skip
    assert result.parts == ("nodes", "ports")
    json.dumps(result.to_json())


def test_ports_and_cables_from_both_ends_counted_once() -> None:
    result = ibnetdiscover.parse(more_sample(SUPERBENCH).open("rb"))
    # spine 3 + lines 4 and 3 + 5 leaves x 3 switch port lines, and one per HCA
    assert len(result.ports) == 3 + 4 + 3 + 5 * 3 + 10
    # spine: 3 cables; line switches to 5 leaves; 5 leaves x 2 HCAs
    assert len(result.links) == 3 + 5 + 10 == result.summary()["links"]
    assert result.summary()["rates"] == {"4xHDR": 18}
    assert result.summary()["links_below_common_rate"] == 0
    ca_port = next(p for p in result.ports if p.guid == "0x0ff08c4321664e96")
    assert (ca_port.port, ca_port.port_guid, ca_port.lid) == (1, "0x0ff08c4321664e96", 1181)
    assert (ca_port.peer_guid, ca_port.peer_port, ca_port.peer_lid) == (
        "0x0ff08c43215bae48", 1, 556,
    )  # fmt: skip
    assert ca_port.peer == "MF0;rmd70-0101-0919-01ib0:MQM8700/U1"
    assert (ca_port.width, ca_port.speed, ca_port.rate_gbps) == (4, "HDR", 200.0)
    assert ca_port.attributes == {"s": 4, "w": 2, "v": 3, "e": 4}
    # the aggregation node is printed only from the spine's side: its cable is still there
    agg = [link for link in result.links if link.b == "Mellanox Technologies Aggregation Node"]
    assert [(a.a_port, a.b_guid, a.b_port) for a in agg] == [(41, "0x0ff08c43213b3f38", 1)]


DOWNTRAINED = """\
switchguid=0x7cfe900300a5a2c0(7cfe900300a5a2c0)
Switch\t36 "S-7cfe900300a5a2c0"\t\t# "leaf-1" enhanced port 0 lid 5 lmc 0
[1]\t"H-0002c90300a1b2c0"[1](2c90300a1b2c1)\t\t# "gpu01 mlx5_0" lid 12 4xNDR
[2]\t"H-0002c90300a1b2d0"[1](2c90300a1b2d1)\t\t# "gpu02 mlx5_0" lid 13 2xNDR
[3]\t"H-0002c90300a1b2e0"[1](2c90300a1b2e1)\t\t# "gpu03 mlx5_0" lid 14 4xNDR
"""


def test_a_cable_below_the_fabric_rate_and_port_lines_of_one_block() -> None:
    result = parse_text(DOWNTRAINED)
    assert [link.rate_gbps for link in result.links] == [400.0, 200.0, 400.0]
    [slow] = ibnetdiscover.degraded_links(result.links)
    assert (slow.a, slow.a_port, slow.b, slow.width) == ("leaf-1", 2, "gpu02 mlx5_0", 2)
    assert result.summary()["common_rate"] == "4xNDR"


def test_port_lines_without_their_node_header_are_a_fragment() -> None:
    lines = DOWNTRAINED.splitlines()[2:]
    assert ibnetdiscover.accepts("x", "\n".join(lines).encode())
    result = parse_text("\n".join(lines))
    assert result.nodes == () and result.parts == ("ports",)
    assert [(p.guid, p.port, p.peer, p.rate_gbps) for p in result.ports] == [
        (None, 1, "gpu01 mlx5_0", 400.0),
        (None, 2, "gpu02 mlx5_0", 200.0),
        (None, 3, "gpu03 mlx5_0", 400.0),
    ]
    assert len(result.links) == 3


PORTS_LIST = """\
SW     2   17 0x0002c90000000001 4x SDR - CA    44    1 0x0002c9030001d737 ( 'ISR9024 Voltaire' - 'ibsrv mlx4_0' )
SW     2   18 0x0002c90000000001 4x DDR - SW     3    1 0x0002c90000000002 ( 'ISR9024 Voltaire' - 'ISR9024 two' )
SW     2   19 0x0002c90000000001 4x SDR                                    'ISR9024 Voltaire'
"""  # noqa: E501


def test_the_ports_listing() -> None:
    result = parse_text(PORTS_LIST)
    assert result.parts == ("ports_list",)
    first, second, down = result.ports
    assert (first.guid, first.port, first.lid, first.peer_guid, first.peer_lid) == (
        "0x0002c90000000001", 17, 2, "0x0002c9030001d737", 44,
    )  # fmt: skip
    assert (first.peer_type, first.peer, first.rate_gbps) == ("ca", "ibsrv mlx4_0", 10.0)
    assert (second.speed, second.rate_gbps) == ("DDR", 20.0)
    assert down.peer_guid is None and down.width == 4


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no ibnetdiscover output"):
        parse_text("vendid=0x2c9\nsomething else\n")


@pytest.mark.parametrize(
    "relative",
    [
        "counters/gpud_ibstat_h100_all_active.txt",
        "counters/ibv_devinfo_cx6_ib_single_hca.txt",
        "counters/gpud_sysfs_infiniband_h100_9hca_grep_dump.txt",
        "mlxlink/sigcomm26_bf3_100g_dac_mlxlink_m_c_two_ports_EXCERPT.txt",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not ibnetdiscover.accepts(path.name, path.read_bytes())


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(ibnetdiscover.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=7779), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = more_sample(SUPERBENCH).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(ibnetdiscover.parse(io.BytesIO(blob)).to_json())
