"""ethtool_stats: `ethtool -S` dumps. Expected values read from the sample files (grep/awk)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import ethtool_stats
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

BYTEPS = "ethtool_rdma/byteps_issue179_mlx5_ethtool_S_grep_prio_before_after_EXCERPT.txt"
ETHQ = "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt"
LKML = "counters/lkml_bpf_mlx5_ethtool_S_nonzero_k5.15_vs_k6.5.txt"


def parse_file(relative: str) -> ethtool_stats.EthtoolStatsResult:
    with sample(relative).open("rb") as f:
        return ethtool_stats.parse(f)


def parse_text(text: str) -> ethtool_stats.EthtoolStatsResult:
    return ethtool_stats.parse(io.BytesIO(text.encode()))


def values(result: ethtool_stats.EthtoolStatsResult, snapshot: int) -> dict[str, int | float]:
    return {s.counter: s.value for s in result.samples if s.snapshot == snapshot}


def test_grep_prio_before_and_after_become_two_snapshots_of_one_nic() -> None:
    result = parse_file(BYTEPS)
    before, after = result.snapshots
    assert (before.device, before.label, before.counters) == (
        "enp178s0f0",
        "Before benchmarking",
        32,
    )
    assert (after.device, after.label, after.counters) == ("enp178s0f0", "After", 19)  # excerpt cut
    assert values(result, 0)["rx_prio0_bytes"] == 88034564921216
    assert values(result, 1)["rx_prio0_bytes"] == 88171136852706
    assert values(result, 1)["tx_prio0_packets"] == 40304494275
    assert values(result, 0)["rx_prio3_packets"] == 0
    units = {s.counter: s.unit for s in result.samples}
    assert (units["rx_prio0_bytes"], units["rx_prio0_packets"]) == ("bytes", "packets")
    assert {(s.host, s.port, s.captured_at) for s in result.samples} == {(None, None, None)}
    assert result.warnings == ()


def test_headerless_unindented_mlx5_dump() -> None:
    result = parse_file(ETHQ)
    [snapshot] = result.snapshots
    assert snapshot.counters == 751  # every line of the file
    v = values(result, 0)
    assert (v["rx_packets"], v["rx_bytes"]) == (845320277, 2195783498134)
    assert v["rx_prio0_packets"] == 845715962
    assert (v["rx_discards_phy"], v["rx_out_of_buffer"], v["tx_global_pause_duration"]) == (0, 0, 0)
    assert not any("prio" in c and "pause" in c for c in v)  # PFC never configured on this NIC
    assert {s.unit for s in result.samples if s.counter == "tx_global_pause_duration"} == {"us"}
    assert any("do not name their NIC" in w for w in result.warnings)


def test_two_kernels_compared_in_one_mail() -> None:
    result = parse_file(LKML)
    old, new = result.snapshots
    assert (old.label, old.counters) == ("ethtool output (5.15) - Missing counters are zero", 101)
    assert (new.label, new.counters) == ("ethtool output (6.5) - Missing counters are zero", 108)
    assert values(result, 0)["rx_out_of_buffer"] == 990473555
    assert values(result, 0)["rx_discards_phy"] == 58591428329
    assert values(result, 0)["tx_pause_ctrl_phy"] == 5745055
    assert values(result, 0)["tx_global_pause_duration"] == 771103810
    assert values(result, 1)["rx_out_of_buffer"] == 534918379
    assert values(result, 1)["rx_discards_phy"] == 441063206498
    assert values(result, 1)["rx_pp_alloc_fast"] == 3641784  # a 6.5-only counter
    assert "rx_pp_alloc_fast" not in values(result, 0)


def test_several_nics_prompts_dates_and_driver_info() -> None:
    text = """\
root@gpu-07:~# date
Tue Jun 18 10:00:00 UTC 2024
root@gpu-07:~# ethtool -i ens1f0np0
driver: mlx5_core
version: 24.04-0.6.6
firmware-version: 28.39.1002 (MT_0000000838)
bus-info: 0000:1a:00.0
root@gpu-07:~# ethtool -S ens1f0np0 | grep -E 'prio3|discard'
     rx_prio3_pause: 12
     rx_prio3_pause_duration: 480
     rx_discards_phy: 7
root@gpu-07:~# ethtool -S ens2f0np0
NIC statistics:
     rx_prio3_pause: 0
"""
    result = parse_text(text)
    first, second = result.snapshots
    assert (first.host, first.device, first.captured_at) == (
        "gpu-07",
        "ens1f0np0",
        "2024-06-18T10:00:00+00:00",
    )
    assert (second.host, second.device, second.counters) == ("gpu-07", "ens2f0np0", 1)
    rows = {(s.device, s.counter): (s.value, s.unit) for s in result.samples}
    assert rows[("ens1f0np0", "rx_prio3_pause")] == (12, "frames")
    assert rows[("ens1f0np0", "rx_prio3_pause_duration")] == (480, "us")
    assert rows[("ens2f0np0", "rx_prio3_pause")] == (0, "frames")
    [driver] = result.drivers
    assert (driver.device, driver.driver, driver.firmware, driver.bus_info) == (
        "ens1f0np0",
        "mlx5_core",
        "28.39.1002 (MT_0000000838)",
        "0000:1a:00.0",
    )
    assert result.parts == ("statistics", "driver_info")
    assert result.warnings == ()
    json.dumps(result.to_json())


def test_repeated_counters_without_header_start_a_new_snapshot() -> None:
    result = parse_text("eth3:\nrx_bytes: 10\ntx_bytes: 20\nrx_bytes: 15\ntx_bytes: 26\n")
    assert [(s.index, s.device, s.counters) for s in result.snapshots] == [
        (0, "eth3", 2),
        (1, "eth3", 2),
    ]
    assert values(result, 1) == {"rx_bytes": 15, "tx_bytes": 26}


def test_grep_of_pause_and_pci_counters_shows_global_pause_not_pfc() -> None:
    path = more_sample(
        "ethtool_rdma/cn_nic_notes_cx4lx_25g_ethtool_S_grep_pause_nonzero_tx_global_pause_EXCERPT.txt"
    )
    assert ethtool_stats.accepts(path.name, path.read_bytes())
    result = ethtool_stats.parse(path.open("rb"))
    rows = {s.counter: (s.value, s.unit) for s in result.samples}
    assert {s.device for s in result.samples} == {"eth03"}  # "# ethtool -S eth03 | grep ..."
    assert len(rows) == 17  # every grep-kept line is a counter
    assert rows["tx_global_pause"] == (1266552, "frames")
    assert rows["tx_pause_ctrl_phy"] == (1266552, "frames")
    assert rows["tx_global_pause_duration"][0] == 555665182
    assert rows["tx_pci_signal_integrity"] == (3, "count")
    assert rows["tx_pause_storm_error_events"][0] == 0


PASTED = """We saw this on gpu-node-3 after the job hung. Counters below:
# ethtool -S ens1f0np0 | grep pause
     rx_prio3_pause: 1234{note}
     tx_prio3_pause: 0
Then 10 s later:
     rx_prio3_pause: 2234
     tx_prio3_pause: 0
I think the switch is congested.
"""


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["   # ", " // ", "  <- ", " (", " [", "\t#"]),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30),
)
def test_counters_with_notes_and_prose_around_them(marker: str, words: str) -> None:
    result = ethtool_stats.parse(io.BytesIO(PASTED.format(note=marker + words).encode()))
    rows = [(s.device, s.counter, s.value, s.snapshot) for s in result.samples]
    assert rows == [
        ("ens1f0np0", "rx_prio3_pause", 1234, 0),
        ("ens1f0np0", "tx_prio3_pause", 0, 0),
        ("ens1f0np0", "rx_prio3_pause", 2234, 1),
        ("ens1f0np0", "tx_prio3_pause", 0, 1),
    ]


def test_generic_driver_names_with_queue_brackets() -> None:
    result = parse_text("NIC statistics:\n     [0]: rx_ucast_packets: 5\n     port.rx_bytes: 9\n")
    assert values(result, 0) == {"[0]: rx_ucast_packets": 5, "port.rx_bytes": 9}


def test_ethtool_failure_message_is_reported() -> None:
    with pytest.raises(ParseError, match="no stats available"):
        parse_text("$ ethtool -S lo\nno stats available\n")
    with pytest.raises(ParseError, match="no ethtool -S counters"):
        parse_text("")


@pytest.mark.parametrize("relative", [BYTEPS, ETHQ, LKML])
def test_accepts_its_samples(relative: str) -> None:
    path = sample(relative)
    assert ethtool_stats.accepts(path.name, path.read_bytes()[: 64 * 1024])


@pytest.mark.parametrize(
    "relative",
    [
        "nccl_tests/xxrjun_pair_N2_G1_ok.log",
        "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
        "counters/gpud_sysfs_infiniband_h100_9hca_grep_dump.txt",
        "counters/rdma_statistic_show_roce_mlx5_optional_counters.txt",
        "counters/gpud_ibstat_h100_all_active.txt",
        "counters/gpud_ibstatus_a100_all_active.txt",
        "counters/ibv_devinfo_cx6_ib_single_hca.txt",
        "counters/gpud_nvidia-smi_q_560.35.03.txt",
        "counters/telegraf_nvidia-smi_q_x_a10g.xml",
        "interrupts/frc971_aos_test_fixture_desktop_20cpu_2x_nvidia_proc_interrupts.txt",
        "mlxlink/sigcomm26_bf3_100g_dac_mlxlink_m_c_two_ports_EXCERPT.txt",
        "torch_profiler/hta_backward_thread_tiny.json",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not ethtool_stats.accepts(path.name, path.read_bytes()[: 64 * 1024])


def test_refuses_random_text() -> None:
    assert not ethtool_stats.accepts("notes.txt", b"some words here\nand: more words\n" * 10)


@pytest.mark.parametrize("relative", [BYTEPS, ETHQ, LKML])
def test_the_registry_detects_it(relative: str) -> None:
    path = sample(relative)
    assert detect_kind(path.name, path.read_bytes()[: 64 * 1024]) == "ethtool_stats"


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(ethtool_stats.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=1392), st.binary(max_size=8))
def test_truncated_and_corrupted_prefixes(cut: int, junk: bytes) -> None:
    data = sample(BYTEPS).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            ethtool_stats.parse(io.BytesIO(blob))


# ----------------------------------------------------------------- `ethtool <dev>` settings

SETTINGS = """root@gpu-node-07:~# ethtool eth3
Settings for eth3:
\tSupported ports: [ Backplane ]
\tSupported link modes:   1000baseKX/Full
\t                        400000baseCR4/Full
\tSupports auto-negotiation: Yes
\tAdvertised link modes:  400000baseCR4/Full
\tSpeed: 200000Mb/s
\tDuplex: Full
\tAuto-negotiation: on
\tPort: Direct Attach Copper
\tPHYAD: 0
\tTransceiver: internal
\tCurrent message level: 0x00000004 (4)
\t                       link
\tLink detected: yes
root@gpu-node-07:~# ethtool eth4
Settings for eth4:
\tSpeed: Unknown!
\tDuplex: Unknown! (255)
\tPHYAD: 0
\tLink detected: no
"""


def link_facts(result: ethtool_stats.EthtoolStatsResult) -> list[tuple]:
    return [
        (link.host, link.device, link.speed_mbps, link.duplex, link.link_detected)
        for link in result.links
    ]


EXPECTED_LINKS = [
    ("gpu-node-07", "eth3", 200000, "Full", True),
    ("gpu-node-07", "eth4", None, "Unknown! (255)", False),
]


def test_link_settings_give_speed_and_state_and_no_counters() -> None:
    result = parse_text(SETTINGS)
    assert link_facts(result) == EXPECTED_LINKS
    assert result.samples == ()  # PHYAD: 0 is a setting, not a counter
    assert result.parts == ("link_settings",)
    assert result.links[0].port == "Direct Attach Copper" and result.links[0].autoneg == "on"
    assert detect_kind("eth3.txt", SETTINGS.encode()) == "ethtool_stats"


@pytest.mark.parametrize(
    "variant",
    [
        SETTINGS.replace("\n", "\r\n"),  # saved on Windows
        SETTINGS.replace("\t", ""),  # pasted from a web page: indentation lost
        SETTINGS.replace("\t", "    "),
        "```\n" + SETTINGS + "```\n",  # a fenced paste
    ],
)
def test_link_settings_survive_how_they_are_pasted(variant: str) -> None:
    assert link_facts(parse_text(variant)) == EXPECTED_LINKS


def test_link_settings_and_counters_in_one_file() -> None:
    counters = "root@gpu-node-07:~# ethtool -S eth3\nNIC statistics:\n     rx_prio3_pause: 12\n"
    result = parse_text(SETTINGS + counters)
    assert link_facts(result) == EXPECTED_LINKS
    assert [(s.device, s.counter, s.value) for s in result.samples] == [
        ("eth3", "rx_prio3_pause", 12)
    ]


def test_newer_ethtool_prints_the_lanes_of_the_speed() -> None:
    text = SETTINGS.replace("\tDuplex: Full\n", "\tLanes: 4\n\tDuplex: Full\n", 1)
    first, second = parse_text(text).links
    assert (first.speed_mbps, first.lanes) == (200000, 4)
    assert second.lanes is None and parse_text(SETTINGS).links[0].lanes is None


def test_a_block_of_nic_counters_inside_another_programs_log() -> None:
    # a headerless fragment among more lines of other output than counters
    noise = "".join(
        f"W0601 10:02:{i:02d}.2 2841 reflector.go:424] failed to list: {i}\n" for i in range(40)
    )
    block = "".join(
        f"     tx_prio{p}_pause: {p * 10}\n     rx_prio{p}_bytes: {p}\n" for p in range(4)
    )
    text = noise + block + noise
    assert ethtool_stats.accepts("x", text.encode())
    rows = {s.counter: s.value for s in parse_text(text).samples}
    assert rows == {**{f"tx_prio{p}_pause": p * 10 for p in range(4)},
                    **{f"rx_prio{p}_bytes": p for p in range(4)}}  # fmt: skip
    # the same number of "name: integer" lines of another program is not a NIC dump
    other = noise + "".join(f"   step_{i}: {i}\n" for i in range(8)) + noise
    assert not ethtool_stats.accepts("x", other.encode())


def test_rows_beyond_the_cap_are_counted_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A polled dump of many snapshots: rows past MAX_ROWS are dropped with a warning, and
    every snapshot still says how many counters it had."""
    one = parse_file(ETHQ)
    monkeypatch.setattr(ethtool_stats, "MAX_ROWS", 100)
    data = sample(ETHQ).read_bytes()
    result = ethtool_stats.parse(io.BytesIO(data + b"\n" + data))
    assert len(result.samples) == 100
    assert [s.counters for s in result.snapshots] == [s.counters for s in one.snapshots] * 2
    dropped = 2 * len(one.samples) - 100
    assert f"{dropped} counter value(s) beyond 100 were not kept" in result.warnings
