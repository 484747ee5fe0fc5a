"""rdma_counters: sysfs counters/hw_counters dumps and `rdma statistic show`.

Expected values read from the sample files with grep.
"""
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import rdma_counters
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

SYSFS = "counters/gpud_sysfs_infiniband_h100_9hca_grep_dump.txt"
RDMA_STAT = "counters/rdma_statistic_show_roce_mlx5_optional_counters.txt"


def parse_file(relative: str) -> rdma_counters.RdmaCountersResult:
    with sample(relative).open("rb") as f:
        return rdma_counters.parse(f)


def parse_text(text: str, name: str | None = None) -> rdma_counters.RdmaCountersResult:
    return rdma_counters.parse(io.BytesIO(text.encode()), name=name)


def rows(result: rdma_counters.RdmaCountersResult) -> dict[tuple[object, ...], object]:
    return {(s.device, s.port, s.counter): s.value for s in result.samples}


def test_sysfs_grep_dump_of_nine_hcas() -> None:
    result = parse_file(SYSFS)
    # 9 HCAs x (21 counters/ + 26 hw_counters/) = 423 path:value counter lines.
    assert len(result.samples) == 423
    assert sorted({s.device for s in result.samples}) == [
        "mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_bond_0",
    ]  # fmt: skip
    v = rows(result)
    assert v[("mlx5_0", 1, "port_rcv_data")] == 230539874932483
    assert v[("mlx5_0", 1, "port_xmit_wait")] == 2489603687
    assert v[("mlx5_0", 1, "excessive_buffer_overrun_errors")] == 15
    assert v[("mlx5_1", 1, "link_downed")] == 255
    assert v[("mlx5_0", 1, "roce_adp_retrans")] == 3
    assert v[("mlx5_0", 1, "rx_write_requests")] == 3809045607
    units = {s.counter: s.unit for s in result.samples}
    assert (units["port_xmit_data"], units["port_rcv_packets"], units["out_of_buffer"]) == (
        "4 bytes",
        "packets",
        "count",
    )
    [snapshot] = result.snapshots
    assert snapshot.counters == 423


def test_sysfs_attributes_become_hca_and_port_facts() -> None:
    result = parse_file(SYSFS)
    hcas = {h.device: h for h in result.hcas}
    assert (hcas["mlx5_0"].firmware, hcas["mlx5_0"].hca_type, hcas["mlx5_0"].board_id) == (
        "28.41.1000",
        "MT4129",
        "MT_0000000838",
    )
    assert hcas["mlx5_bond_0"].firmware == "32.38.3056"
    ports = {p.device: p for p in result.ports}
    assert len(ports) == 9
    assert (ports["mlx5_0"].state, ports["mlx5_0"].phys_state, ports["mlx5_0"].rate_gbps) == (
        "ACTIVE",
        "LinkUp",
        400.0,
    )
    assert ports["mlx5_0"].rate == "400 Gb/sec (4X NDR)"
    assert (ports["mlx5_bond_0"].link_layer, ports["mlx5_bond_0"].rate_gbps) == ("Ethernet", 200.0)
    assert result.summary()["ports_not_active"] == 0
    json.dumps(result.to_json())


def test_rdma_statistic_show_with_wrapped_lines_and_optional_counters() -> None:
    result = parse_file(RDMA_STAT)
    assert len(result.samples) == 30  # 28 default hw counters + 2 in "Optional-set:"
    assert {(s.device, s.port) for s in result.samples} == {("rocep8s0f0", 1)}
    names = [s.counter for s in result.samples]
    assert names[:2] == ["rx_write_requests", "rx_read_requests"]
    assert {
        "rp_cnp_handled",
        "np_ecn_marked_roce_packets",
        "np_cnp_sent",
        "cc_rx_ce_pkts",
        "cc_tx_cnp_pkts",
    } <= set(names)
    assert {s.value for s in result.samples} == {0}
    assert result.snapshots[0].device == "rocep8s0f0"


def test_rdma_link_show_head_headers_prompts_and_snapshots() -> None:
    text = """\
[root@node12 ~]# rdma link show
link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0
link mlx5_1/1 state DOWN physical_state DISABLED netdev ens1f1np1
[root@node12 ~]# date; head /sys/class/infiniband/mlx5_0/ports/1/hw_counters/{np_cnp_sent,rp_cnp_handled}
2024-05-01 12:00:00
==> /sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent <==
42
==> /sys/class/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled <==
40
2024-05-01 12:00:10
mlx5_0/ports/1/hw_counters/np_cnp_sent:52
mlx5_0/ports/1/hw_counters/rp_cnp_handled:47
"""
    result = parse_text(text)
    assert [(p.device, p.state, p.phys_state) for p in result.ports] == [
        ("mlx5_0", "ACTIVE", "LinkUp"),
        ("mlx5_1", "DOWN", "Disabled"),
    ]
    assert {p.host for p in result.ports} == {"node12"}
    first, second = result.snapshots
    assert (first.captured_at, first.counters, first.device) == ("2024-05-01T12:00:00", 2, "mlx5_0")
    assert (second.captured_at, second.counters) == ("2024-05-01T12:00:10", 2)
    later = {s.counter: s.value for s in result.samples if s.snapshot == second.index}
    assert later == {"np_cnp_sent": 52, "rp_cnp_handled": 47}
    assert {s.host for s in result.samples} == {"node12"}


def test_bare_list_takes_its_device_from_the_file_name() -> None:
    result = parse_text(
        "out_of_sequence:3\nrp_cnp_handled:9\n", name="gpu3_mlx5_2_port1_hw_counters.txt"
    )
    assert {(s.device, s.port) for s in result.samples} == {("mlx5_2", 1)}
    anonymous = parse_text("out_of_sequence:3\n")
    assert anonymous.samples[0].device is None
    assert any("do not name their device" in w for w in anonymous.warnings)


TTAR = "counters/procfs_sysfs_infiniband_counters_hw_counters.ttar"


def test_a_ttar_archive_of_sysfs_one_file_per_counter() -> None:
    path = more_sample(TTAR)
    assert rdma_counters.accepts(path.name, path.read_bytes())
    result = rdma_counters.parse(path.open("rb"))
    text = path.read_text()
    # every "Path:" record is read: a counter, a port attribute or a device attribute
    attributes = sum(len(h.details) for h in result.hcas)  # none: all are typed
    port_attrs = sum(
        1 for p in result.ports for v in (p.state, p.phys_state, p.rate, p.link_layer) if v
    )
    device_attrs = sum(
        1 for h in result.hcas for v in (h.firmware, h.board_id, h.hca_type, h.node_guid) if v
    )
    assert len(result.samples) + port_attrs + device_attrs + attributes == text.count("\nPath: ")
    rows = {(s.device, s.port, s.counter): (s.value, s.unit) for s in result.samples}
    assert rows[("mlx5_0", 1, "port_xmit_data")] == (2880761508848, "4 bytes")
    assert rows[("mlx5_0", 1, "resp_cqe_error")] == (8109, "count")
    assert rows[("mlx5_0", 1, "local_ack_timeout_err")] == (131, "count")
    hcas = {h.device: h for h in result.hcas}
    assert hcas["hfi1_0"].firmware == "1.27.0" and hcas["mlx4_0"].hca_type == "MT4099"
    # ttar marks a value without a final newline with "EOF": not part of the GUID
    assert hcas["mlx5_0"].node_guid == "0x0a7fbc1245efd23b"
    ports = {(p.device, p.port): p for p in result.ports}
    assert ports[("mlx4_0", 2)].rate_gbps == 40.0 and ports[("hfi1_0", 1)].rate_gbps == 100.0
    assert result.parts == ("sysfs_device_attributes", "sysfs_counters", "sysfs_port_attributes")


def test_a_shell_loop_printing_path_and_value() -> None:
    text = (
        "$ for f in /sys/class/infiniband/mlx5_2/ports/1/hw_counters/*; do echo $f $(cat $f); done\n"
        "/sys/class/infiniband/mlx5_2/ports/1/hw_counters/np_cnp_sent 1052612505\n"
        "/sys/class/infiniband/mlx5_2/ports/1/hw_counters/out_of_sequence 1811101\n"
        "# comment the author added\n"
        "/sys/class/infiniband/mlx5_2/ports/1/hw_counters/rp_cnp_handled 0\n"
        "/sys/class/infiniband/mlx5_2/ports/1/state 4: ACTIVE\n"
        "/sys/class/infiniband/mlx5_2/fw_ver 28.39.1002\n"
    )
    assert rdma_counters.accepts("x", text.encode())
    result = rdma_counters.parse(io.BytesIO(text.encode()))
    assert [(s.device, s.port, s.counter, s.value) for s in result.samples] == [
        ("mlx5_2", 1, "np_cnp_sent", 1052612505),
        ("mlx5_2", 1, "out_of_sequence", 1811101),
        ("mlx5_2", 1, "rp_cnp_handled", 0),
    ]
    assert result.ports[0].state == "ACTIVE" and result.hcas[0].firmware == "28.39.1002"


BOND = "ethtool_rdma/cn_rdma_notes_mlx5_bond0_show_counters_nonzero_np_cnp_ecn_EXCERPT.txt"
FOUR_PORT = "ethtool_rdma/cn_rdma_notes_cx4lx_4port_rdma_statistic_show_and_show_counters_mlx5_0_EXCERPT.txt"


def test_show_counters_names_the_device_and_port_of_its_bare_list() -> None:
    path = more_sample(BOND)
    assert rdma_counters.accepts(path.name, path.read_bytes())
    result = rdma_counters.parse(io.BytesIO(path.read_bytes()))  # no file name given
    rows = {(s.device, s.port, s.counter): s.value for s in result.samples}
    assert len(rows) == 30 and result.warnings == ()
    assert rows[("mlx5_bond_0", 1, "np_cnp_sent")] == 1052612505
    assert rows[("mlx5_bond_0", 1, "np_ecn_marked_roce_packets")] == 21278189006
    assert rows[("mlx5_bond_0", 1, "out_of_sequence")] == 1811101
    assert rows[("mlx5_bond_0", 1, "resp_cqe_error")] == 3293504
    assert rows[("mlx5_bond_0", 1, "rp_cnp_handled")] == 0


def test_rdma_statistic_of_four_ports_then_show_counters_of_one() -> None:
    result = rdma_counters.parse(more_sample(FOUR_PORT).open("rb"))
    assert result.parts == ("rdma_statistic", "bare_counters")
    first, second = result.snapshots
    assert (first.counters, second.device, second.counters) == (4 * 29, "mlx5_0", 30)
    statistic = {(s.device, s.counter): s.value for s in result.samples if s.snapshot == 0}
    assert statistic[("mlx5_0", "out_of_buffer")] == 135
    assert statistic[("mlx5_0", "resp_cqe_error")] == 1009
    assert statistic[("mlx5_0", "req_cqe_error")] == 22
    assert statistic[("mlx5_3", "out_of_buffer")] == 0
    listed = {(s.port, s.counter): s.value for s in result.samples if s.snapshot == 1}
    assert listed[(1, "out_of_buffer")] == 135 and listed[(1, "resp_cqe_flush_error")] == 998


def test_bare_counters_with_the_persons_notes_after_the_values() -> None:
    text = (
        "# show_counters mlx5_3\nPort 1 hw counters:\n"
        "out_of_sequence: 1811101   # after the reboot\nnp_cnp_sent: 52 <- low\n"
        "rp_cnp_handled: 0\n"
    )
    result = rdma_counters.parse(io.BytesIO(text.encode()))
    assert [(s.device, s.port, s.counter, s.value) for s in result.samples] == [
        ("mlx5_3", 1, "out_of_sequence", 1811101),
        ("mlx5_3", 1, "np_cnp_sent", 52),
        ("mlx5_3", 1, "rp_cnp_handled", 0),
    ]


def test_files_of_the_tree_that_are_not_read_do_not_split_the_reading() -> None:
    text = (
        "/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:100\n"
        "/sys/class/infiniband/mlx5_0/ports/1/gids/0:fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54\n"
        "/sys/class/infiniband/mlx5_0/ports/1/pkeys/0:0xffff\n"
        "/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data:200\n"
        "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:3\n"
    )
    result = rdma_counters.parse(io.BytesIO(text.encode()))
    assert [(s.counter, s.value, s.snapshot) for s in result.samples] == [
        ("port_rcv_data", 100, 0),
        ("port_xmit_data", 200, 0),
        ("out_of_sequence", 3, 0),
    ]


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no RDMA counters"):
        parse_text("hello\nworld\n")


@pytest.mark.parametrize("relative", [SYSFS, RDMA_STAT])
def test_accepts_its_samples(relative: str) -> None:
    path = sample(relative)
    assert rdma_counters.accepts(path.name, path.read_bytes())


def test_accepts_a_bare_hw_counters_listing_by_its_names() -> None:
    listing = (
        b"duplicate_request:0\nimplied_nak_seq_err:0\nlocal_ack_timeout_err:12\nout_of_buffer:7\n"
    )
    assert rdma_counters.accepts("hw_counters.txt", listing)


@pytest.mark.parametrize(
    "relative",
    [
        "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt",
        "counters/lkml_bpf_mlx5_ethtool_S_nonzero_k5.15_vs_k6.5.txt",
        "counters/gpud_ibstat_h100_all_active.txt",
        "counters/ibv_devinfo_cx6_ib_single_hca.txt",
        "nccl_tests/xxrjun_pair_N2_G1_ok.log",
        "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
        "counters/gpud_nvidia-smi_q_560.35.03.txt",
        "torch_profiler/hta_backward_thread_tiny.json",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not rdma_counters.accepts(path.name, path.read_bytes()[: 64 * 1024])


@pytest.mark.parametrize("relative", [SYSFS, RDMA_STAT])
def test_the_registry_detects_it(relative: str) -> None:
    path = sample(relative)
    assert detect_kind(path.name, path.read_bytes()[: 64 * 1024]) == "rdma_counters"


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(rdma_counters.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=4000), st.binary(max_size=8))
def test_truncated_and_corrupted_prefixes(cut: int, junk: bytes) -> None:
    data = sample(SYSFS).read_bytes()[:4000] + sample(RDMA_STAT).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            rdma_counters.parse(io.BytesIO(blob))


def test_rows_beyond_the_cap_are_counted_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counters past MAX_ROWS are dropped with a warning; the snapshots still count them."""
    whole = parse_file(RDMA_STAT)
    monkeypatch.setattr(rdma_counters, "MAX_ROWS", 10)
    with sample(RDMA_STAT).open("rb") as f:
        result = rdma_counters.parse(f)
    assert len(whole.samples) > 10 and len(result.samples) == 10
    assert result.samples == whole.samples[:10]
    assert [s.counters for s in result.snapshots] == [s.counters for s in whole.snapshots]
    assert f"{len(whole.samples) - 10} counter value(s) beyond 10 were not kept" in result.warnings


def test_snapshots_beyond_the_cap_are_read_not_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A polled dump (one reading after another): the snapshots past MAX_SNAPSHOTS are read
    and counted but not listed; their rows keep their own snapshot numbers."""
    data = sample(RDMA_STAT).read_bytes()
    polled = data + b"\n" + data + b"\n" + data
    whole = rdma_counters.parse(io.BytesIO(polled))
    monkeypatch.setattr(rdma_counters, "MAX_SNAPSHOTS", 2)
    result = rdma_counters.parse(io.BytesIO(polled))
    assert len(whole.snapshots) > 2 and result.snapshots == whole.snapshots[:2]
    assert result.samples == whole.samples
    unlisted = len(whole.snapshots) - 2
    assert f"{unlisted} snapshot(s) beyond 2 were not listed" in result.warnings
