"""dmesg: every stamp shape of dmesg and journalctl, NVRM messages without an Xid, wrapped
lines, unstamped logs (issue 22). NVRM texts are the driver's own wording (as quoted in public
bug reports); the Xid sample's values were read from the file."""
# ruff: noqa: E501

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import dmesg
from artifacts.fabric.parsers.dmesg.stamps import split_stamp
from tests.samples import sample

XID = "counters/gpud_dmesg_with_NVRM_Xid_119.log"
MESSAGE = "mlx5_core 0000:3b:00.0 ens1f0np0: Link down"


def parse_text(text: str) -> dmesg.DmesgResult:
    return dmesg.parse(io.BytesIO(text.encode()))


@pytest.mark.parametrize(
    ("line", "time", "host", "uptime", "delta", "shape"),
    [
        (f"[ 1234.567890] {MESSAGE}", None, None, 1234.56789, None, "uptime"),
        (f"[   12.3] {MESSAGE}", None, None, 12.3, None, "uptime"),
        (f"[ 1234.567890 <    0.000123>] {MESSAGE}", None, None, 1234.56789, 0.000123, "uptime"),
        (f"[  +0.000123] {MESSAGE}", None, None, None, 0.000123, "relative"),
        (f"[+0.500000] {MESSAGE}", None, None, None, 0.5, "relative"),
        (f"[Dec 3 10:11] {MESSAGE}", None, None, None, None, "human_date"),
        (f"[Sun Feb 23 16:24:18 2025] {MESSAGE}", "2025-02-23T16:24:18", None, None, None, "date"),
        (
            f"2024-12-03T10:11:12,123456+00:00 {MESSAGE}",
            "2024-12-03T10:11:12.123456+00:00",
            None,
            None,
            None,
            "iso",
        ),
        (f"<3>[ 12.5] {MESSAGE}", None, None, 12.5, None, "uptime"),
        (f"kern  :err   : [ 12.5] {MESSAGE}", None, None, 12.5, None, "uptime"),
        (f"Dec 03 10:11:12 gpu-7 kernel: {MESSAGE}", None, "gpu-7", None, None, "syslog"),
        (f"Dec 03 10:11:12.123456 gpu-7 kernel: {MESSAGE}", None, "gpu-7", None, None, "syslog"),
        (
            f"Mar  3 10:00:01 gpu-7 kernel: [ 1400.1] {MESSAGE}",
            None,
            "gpu-7",
            1400.1,
            None,
            "syslog",
        ),
        (
            f"2024-12-03T10:11:12+0000 gpu-7 kernel: {MESSAGE}",
            "2024-12-03T10:11:12+00:00",
            "gpu-7",
            None,
            None,
            "journal_iso",
        ),
        (
            f"2024-12-03T10:11:12.123456+00:00 gpu-7 kernel: {MESSAGE}",
            "2024-12-03T10:11:12.123456+00:00",
            "gpu-7",
            None,
            None,
            "journal_iso",
        ),
        (
            f"[ 1234.567890] gpu-7 kernel: {MESSAGE}",
            None,
            "gpu-7",
            1234.56789,
            None,
            "journal_monotonic",
        ),
        (
            f"1733220672.123456 gpu-7 kernel: {MESSAGE}",
            "2024-12-03T10:11:12.123456+00:00",
            "gpu-7",
            None,
            None,
            "journal_unix",
        ),
    ],
)
def test_every_stamp_shape(
    line: str,
    time: str | None,
    host: str | None,
    uptime: float | None,
    delta: float | None,
    shape: str,
) -> None:
    stamp = split_stamp(line)
    assert stamp is not None
    assert (stamp.time, stamp.host, stamp.uptime_s, stamp.delta_s, stamp.shape) == (
        time,
        host,
        uptime,
        delta,
        shape,
    )
    assert stamp.message == MESSAGE
    [event] = parse_text(line + "\n").events
    assert (event.kind, event.details["state"], event.time, event.host) == (
        "nic_link",
        "down",
        time,
        host,
    )


def test_nvrm_messages_without_an_xid() -> None:
    result = parse_text(
        "[  100.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
        "[  200.2] NVRM: API mismatch: the client has the version 535.129.03, but\n"
        "[  200.2] NVRM: this kernel module has the version 535.104.05.  Please\n"
        "[  200.2] NVRM: make sure that this kernel module and all NVIDIA driver\n"
        "[  200.2] NVRM: components have the same version.\n"
        "[  300.3] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x26:0xffff:1474)\n"
        "[  300.4] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0\n"
        "[  400.5] NVRM: os_schedule: Attempted to yield the CPU while in atomic or interrupt context\n"
        "[  400.6] NVRM: os_schedule: Attempted to yield the CPU while in atomic or interrupt context\n"
        "[  500.7] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n"
    )
    assert result.driver_version == "535.104.05"
    kinds = [(e.kind, e.details.get("what")) for e in result.events]
    assert kinds == [
        ("nvrm", "api_mismatch"),
        ("nvrm", "rm_init_failed"),
        ("nvrm", "os_schedule"),
        ("gpu_off_bus", None),
    ]
    mismatch, init, schedule, off_bus = result.events
    assert (mismatch.details["client_version"], mismatch.details["kernel_version"]) == (
        "535.129.03",
        "535.104.05",
    )
    assert len(mismatch.details["more"]) == 3  # the message's other lines joined to it
    # printed within the same second: the second line belongs to the first message
    assert init.details["device"] == "0000:01:00.0"
    assert init.details["more"] == [
        "GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0"
    ]
    assert schedule.details["repeats"] == 2  # the same message twice: counted
    assert off_bus.details["device"] == "0000:3b:00.0"


def test_a_line_without_a_stamp_continues_the_message_before_it() -> None:
    result = parse_text(
        "[ 1400.1] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off\n"
        "the bus.\n"
        "[ 1500.2] pcieport 0000:00:01.0: AER: Uncorrected error received: 0000:18:00.0\n"
    )
    xid, aer = result.events
    assert xid.text.endswith("GPU has fallen off the bus.") and xid.details["xid"] == 79
    assert aer.kind == "pcie_aer" and "continuation" in result.parts


def test_a_wrapped_line_completes_an_event_its_first_part_did_not_make() -> None:
    result = parse_text(
        "[   10.0] some unrelated line\n[   12.0] NVRM: GPU at PCI:0000:3b:00 has fallen\noff the bus\n"
    )
    assert [e.kind for e in result.events] == ["gpu_off_bus"]


def test_unstamped_dmesg_t_output() -> None:
    result = parse_text(
        "NVRM: GPU at PCI:0000:18:00: GPU-11111111-2222-3333-4444-555555555555\n"
        "NVRM: Xid (PCI:0000:18:00): 48, pid=1234, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
        "mlx5_core 0000:3b:00.0 ens1f0np0: Link up\n"
    )
    xid, link = result.events
    assert (xid.details["xid"], xid.details["uuid"], xid.time) == (
        48,
        "GPU-11111111-2222-3333-4444-555555555555",
        None,
    )
    assert link.details["state"] == "up" and result.parts == ("no_stamp",)


def test_xid_sample_rpc_history_serial_and_parts() -> None:
    with sample(XID).open("rb") as f:
        result = dmesg.parse(f)
    [gpu] = result.gpus
    assert (gpu.pci, gpu.serial) == ("0000:9b:00", "1650124014249")  # line 2 of the file
    first = result.events[0]
    # lines 4-24: the GSP RPC buffer and both RPC history tables under the first Xid
    assert len(first.details["more"]) == 21
    assert first.details["more"][0].startswith("GPU4 GSP RPC buffer contains function 103")
    rate = next(e for e in result.events if e.kind == "nvrm")
    assert rate.details["message"].startswith("Rate limiting GSP RPC error prints")
    assert result.parts == ("date",)


# each shape's stamp for the original line's time (dmesg -T's "[Sun Feb 23 16:24:18 2025]")
STAMPS = {
    "uptime": lambda t, i: f"[{t:>8}.{i:06d}] ",
    "syslog": lambda t, i: f"Feb 23 16:{t // 60 % 60:02d}:{t % 60:02d} node7 kernel: ",
    "journal_iso": lambda t, i: (
        f"2025-02-23T16:{t // 60 % 60:02d}:{t % 60:02d}+0000 node7 kernel: "
    ),
    "relative": lambda t, i: f"[  +0.{i:06d}] ",
    "kern_level": lambda t, i: f"kern  :warn  : [{t:>8}.{i:06d}] ",
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(STAMPS)), st.booleans())
def test_the_xid_sample_under_any_stamp_keeps_its_events(shape: str, wrap: bool) -> None:
    lines = sample(XID).read_text().splitlines()
    stamp = STAMPS[shape]
    out = []
    for i, line in enumerate(lines):
        clock, body = line[12:].split("] ", 1)  # "[Sun Feb 23 16:24:18 2025] ..."
        seconds = int(clock[3:5]) * 60 + int(clock[6:8])
        if wrap and body.startswith("NVRM: Xid"):  # a mail client wrapped the long Xid lines
            cut = body.rindex(" ", 0, 60)
            out += [stamp(seconds, i) + body[:cut], body[cut + 1 :]]
        else:
            out.append(stamp(seconds, i) + body)
    result = parse_text("\n".join(out) + "\n")
    xids = [e for e in result.events if e.kind == "xid"]
    assert [(e.details["xid"], e.details.get("pid")) for e in xids] == [
        (119, 2024380), (119, 2024380), (119, 2024380), (119, 1263500), (119, 1240590)
    ]  # fmt: skip
    assert all(e.details["uuid"] == "GPU-509665ad-b600-ac93-3616-d754b23d636d" for e in xids)
    assert result.kernel_version == "5.15.0-112-generic"
    assert all(e.details["message"].startswith("Timeout after") for e in xids)


def test_host_trouble_a_gpu_job_feels() -> None:
    # the kernel's own wording: pcie_print_link_status(), mce, EDAC, the soft-lockup and
    # hung-task watchdogs, the netdev TX watchdog
    result = parse_text(
        "[    5.1] mlx5_core 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n"
        "[    5.2] mlx5_core 0000:5e:00.0: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)\n"
        "[  900.0] mce: [Hardware Error]: Machine check events logged\n"
        "[  901.0] EDAC MC1: 3 CE memory read error on CPU_SrcID#1_Ha#0_Chan#2_DIMM#0 (channel:2 slot:0 page:0x4b0c1 offset:0x0 grain:32 syndrome:0x0)\n"
        "[ 1000.0] watchdog: BUG: soft lockup - CPU#12 stuck for 22s! [python3:4242]\n"
        "[ 1100.0] INFO: task pt_main_thread:5151 blocked for more than 120 seconds.\n"
        "[ 1200.0] NETDEV WATCHDOG: ens1f0np0 (mlx5_core): transmit queue 3 timed out\n"
    )
    kinds = [(e.kind, e.details.get("what") or e.details.get("source")) for e in result.events]
    assert kinds == [
        ("pcie_link_limited", None),
        ("hardware_error", "mce"),
        ("hardware_error", "edac"),
        ("cpu_stall", "soft_lockup"),
        ("cpu_stall", "hung_task"),
        ("nic_tx_timeout", None),
    ]
    limited, _, edac, lockup, hung, tx = result.events
    assert (limited.details["device"], limited.details["speed"], limited.details["width"]) == (
        "0000:3b:00.0",
        "8.0 GT/s",
        8,
    )
    assert (
        limited.details["capable_speed"],
        limited.details["capable_width"],
        limited.details["limited_at"],
    ) == ("16.0 GT/s", 16, "0000:3a:00.0")
    assert (edac.details["controller"], edac.details["count"], edac.details["corrected"]) == (
        "MC1",
        3,
        True,
    )
    assert (
        lockup.details["cpu"],
        lockup.details["seconds"],
        lockup.details["process"],
        lockup.details["pid"],
    ) == (12, 22, "python3", 4242)
    assert (hung.details["process"], hung.details["pid"], hung.details["seconds"]) == (
        "pt_main_thread",
        5151,
        120,
    )
    assert (tx.details["device"], tx.details["driver"], tx.details["queue"]) == (
        "ens1f0np0",
        "mlx5_core",
        3,
    )
    links = {link["device"]: link for link in result.pcie_links}
    assert links["0000:3b:00.0"]["available_gbps"] == 63.008
    assert links["0000:5e:00.0"]["limited_at"] is None and links["0000:5e:00.0"]["width"] == 16
