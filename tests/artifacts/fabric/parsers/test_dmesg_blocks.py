"""dmesg read in blocks (issue 27) gives what the line-by-line reading gives, on random files
of real-shaped pieces: every stamp shape, NVRM/Xid runs, wrapped and unstamped lines, journal
lines, noise, CRLF, lone CRs, bytes that are not UTF-8, over-long lines."""
# ruff: noqa: E501

from __future__ import annotations

import io
import random

import pytest

from artifacts.fabric.parsers import dmesg
from artifacts.fabric.parsers.dmesg import events
from artifacts.fabric.parsers.dmesg.stamps import split_stamp
from artifacts.parsers.textutil import LineReader
from tests.artifacts.fabric.parsers.blocks import assert_reads_as, jitter
from tests.samples import SAMPLES_DIR, sample

XID = "counters/gpud_dmesg_with_NVRM_Xid_119.log"
SAMPLE = SAMPLES_DIR / XID  # random files use it when there (a checkout without shared/)
STAMPS = [
    "[ 1234.567890] ",
    "[   12.3] ",
    "[ 1234.567890 <    0.000123>] ",
    "[  +0.000123] ",
    "[  +2.500000] ",
    "[Dec 3 10:11] ",
    "[Sun Feb 23 16:24:18 2025] ",
    "[Sun Feb 23 16:24:19 2025]",
    "2024-12-03T10:11:12,123456+00:00 ",
    "<3>[ 12.5] ",
    "kern  :err   : [ 12.5] ",
    "Dec 03 10:11:12 gpu-7 kernel: ",
    "Mar  3 10:00:01 gpu-7 kernel: [ 1400.1] ",
    "2024-12-03T10:11:12+0000 gpu-8 kernel: ",
    "[ 1234.567890] gpu-7 kernel: ",
    "1733220672.123456 gpu-9 kernel: ",
    "[ 12.3] gpu-7 kernel:",
    "",  # dmesg -t
    "                                         [ 12.3] ",  # a bracket past 40 characters
]
MESSAGES = [
    "NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP!",
    "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "NVRM: GPU4 RPC history (CPU -> GSP):",
    "NVRM:     entry function                   data0              data1",
    "NVRM:      0    103  GSP_RM_ALLOC          0x0000000000002081 0x0000000000000004",
    "NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d",
    "NVRM: GPU Board Serial Number: 1650124014249",
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023",
    "NVRM: API mismatch: the client has the version 535.129.03, but",
    "NVRM: this kernel module has the version 535.104.05.  Please",
    "NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x31:0x40:2488)",
    "NVRM: GPU 0000:3b:00.0: rm_init_adapter failed, device minor number 0",
    "NVRM: GPU at PCI:0000:18:00: GPU has fallen off the bus.",
    "NVRM: GPU 0000:18:00.0: GPU has fallen",
    "NVRM: os_schedule: Attempted to yield the CPU while in atomic or interrupt context",
    "NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30).",
    "NVRMx something",
    "nvidia-nvswitch3: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 46 LTSSM Fault Up",
    "mlx5_core 0000:3b:00.0 ens1f0np0: Link down",
    "mlx5_core 0000:3b:00.0 ens1f0np0: Link up",
    "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
    "pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer",
    "Out of memory: Killed process 1234 (python) total-vm:123kB",
    "mlx5_core 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)",
    "nvme 0000:3b:00.0: 31.504 Gb/s available PCIe bandwidth (8.0 GT/s PCIe x4 link)",
    "mce: [Hardware Error]: Machine check events logged",
    "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0",
    "watchdog: BUG: soft lockup - CPU#12 stuck for 22s! [python:4242]",
    "INFO: task python:4242 blocked for more than 120 seconds.",
    "NETDEV WATCHDOG: ens1f0np0 (mlx5_core): transmit queue 3 timed out",
    "Linux version 5.15.0-112-generic (buildd@lcy02-amd64-051) (gcc 11.4.0)",
    "CPU: 17 PID: 2024380 Comm: nvidia-smi Tainted: P           OE     5.15.0-112-generic #122-Ubuntu",
    "Hardware name: Dell Inc. PowerEdge XE9680/0KK0RG, BIOS 2.3.5 09/10/2024",
    "Call Trace:",
    " <TASK>",
    " show_stack+0x52/0x5c",
    "clocksource: Long readout interval, skipping watchdog check",
    "ACPI: PCI Interrupt Link [LNKA] (IRQs 3 4 5 6 7 9 10 11 12 14 15)",
    "random: crng init done host kernel: x",
    "version of nothing",
    "x kernel: y",
    "",
]
# lines with no stamp of their own: the rest of a wrapped message, noise, words cut apart
EXTRAS = [
    b"\n",
    b"off the bus.\n",
    b"the bus.\n",
    b"  name=python, Ch 00000001\n",
    b"$ dmesg -T | grep NVRM\n",
    b"some noise line\n",
    b"NVRM: Xid (PCI:0000:9b:00): 13, Graphics Exception\n",
    b"mlx5_core 0000:3b:00.0 ens1f0np0: Link up\n",
    b"[ 12.3] broken\r[ 12.4] after a lone CR\n",
    b"[ 12.3] bad bytes \xff\xfe here NVRM: x\n",
    b"[ 12.3] no newline at the end",
    b"[ 12.3] " + b"x" * 300 + b" NVRM: long\n",
    b"[ 12.3] " + b"y" * 90 + b"\n",
]


def _line_by_line(data: bytes, max_line_bytes: int) -> dmesg.DmesgResult:
    reader = LineReader(io.BytesIO(data), max_line_bytes=max_line_bytes)
    state = dmesg._State()
    # each stamp and event read afresh: what _State keeps per text is under test too
    state._stamp = split_stamp  # type: ignore[method-assign]
    state._event = events.event  # type: ignore[method-assign]
    for line in reader:
        state.feed(line, reader.line_no)
    if not state.kernel_lines:
        raise dmesg.ParseError("none")
    return state.result(reader.repair_warnings())


def _random_log(rng: random.Random) -> bytes:
    parts = []
    stamps = rng.sample(STAMPS, rng.randrange(1, 4))  # a file mostly keeps its shape
    for _ in range(rng.randrange(1, 120)):
        roll = rng.random()
        if roll < 0.1:
            parts.append(rng.choice(EXTRAS))
        elif roll < 0.2 and SAMPLE.exists():  # the real Xid 119 storm, stamps varied
            parts.append(jitter(rng, SAMPLE.read_bytes(), rng.choice([0, 0, 0.02])))
        else:
            stamp = rng.choice(stamps) if rng.random() < 0.9 else rng.choice(STAMPS)
            # a run of lines under one stamp, as an event and its NVRM lines are printed
            for _ in range(rng.choice([1, 1, 2, 5, 30])):
                line = (stamp + rng.choice(MESSAGES)).encode()
                parts.append(jitter(rng, line, rng.choice([0, 0.05])) + b"\n")
    data = b"".join(parts)
    if rng.random() < 0.15:
        data = data.replace(b"\n", b"\r\n")
    return data


@pytest.mark.parametrize("seed", range(150))
def test_blocks_read_as_lines(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    data = _random_log(rng)
    max_line = rng.choice([64, 200, 256 * 1024])
    monkeypatch.setattr(dmesg, "MAX_EVENTS", rng.choice([3, 20, 20_000]))
    monkeypatch.setattr(dmesg, "MAX_JOINED", rng.choice([2, 40]))
    monkeypatch.setattr(dmesg, "BLOCK_BYTES", rng.choice([64, 333, 4096, 1 << 20]))
    monkeypatch.setattr(dmesg, "MAX_LINE_BYTES", max_line)
    assert_reads_as(dmesg.parse, data, lambda: _line_by_line(data, max_line))


def test_the_xid_storm_tiled_past_the_event_cap() -> None:
    """Thousands of copies: events beyond the cap dropped, NVRM lines joined to the
    messages seen before, the same way in both readings."""
    data = sample(XID).read_bytes() * 5000
    result = dmesg.parse(io.BytesIO(data))
    assert result == _line_by_line(data, 256 * 1024)
    assert len(result.events) == dmesg.MAX_EVENTS


@pytest.mark.parametrize(
    "second",
    ["[ 12.300000] gpu-7 kernel: NVRM: b", "2024-12-03T10:11:12+00:00 gpu-7 kernel: NVRM: b"],
)
def test_a_journal_line_after_the_same_stamp_text_is_read_as_a_journal_line(second: str) -> None:
    first = second.replace("gpu-7 kernel: ", "").replace("b", "a")
    data = f"{first}\n{second}\n".encode()
    result = dmesg.parse(io.BytesIO(data))
    assert result == _line_by_line(data, 256 * 1024)
    assert result.hosts == ("gpu-7",)


# An Xid's RPC history under one stamp text, read by _State._stamp_run in one loop over
# windows that double: the run meets window and block boundaries, ordinary lines of its stamp, a line with a word a check
# needs, a line "kernel: " may make a journal line, stamps a second apart (-d/relative
# deltas that do not join), and an event cap it reaches in the middle.
RUN_STAMPS = [
    "[ 1234.567890] ",
    "[ 1234.567890 <    1.500000>] ",
    "[  +0.000123] ",
    "[  +2.500000] ",
    "[Sun Feb 23 16:24:18 2025] ",
    "[Dec 3 10:11] ",
    "2024-12-03T10:11:12,123456+00:00 ",
    "<3>[ 12.5] ",
    "[Mon Xid at 12 2025] ",  # a -T date's free text with a word a check needs
]
RUN_MIDDLES = [
    "Call Trace:",
    "kernel: NVRM: looks like a journal line",
    "host kernel: NVRM: GPU4 RPC history (CPU -> GSP):",
    "NVRM: Xid (PCI:0000:9b:00): 119, pid=1, name=x, Timeout after 6s",
    "NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d",
    "NVRM: API mismatch: the client has the version 535.129.03, but",
    "NVRM: this kernel module has the version 535.104.05.  Please",
    "NVRM:    ",
    "NVRMx not a message",
    "",
    # read until the kernel version and hardware are known, counted after
    "Linux version 5.15.0-112-generic (buildd@lcy02-amd64-051)",
    "CPU: 17 PID: 2024380 Comm: nvidia-smi Tainted: P           OE     5.15.0-112-generic #1",
    "Hardware name: Dell Inc. PowerEdge XE9680/0KK0RG, BIOS 2.3.5 09/10/2024",
    "NVRM: Hardware name in an NVRM line",
]


def _rpc_history(rng: random.Random, stamp: str) -> str:
    lines = [line.split("] ", 1)[1] for line in SAMPLE_TEXT.splitlines() if "NVRM:  " in line]
    lines += ["NVRM: GPU4 RPC history (CPU -> GSP):"] * 3  # the same message again
    rng.shuffle(lines)
    for _ in range(rng.randrange(0, 6)):
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(RUN_MIDDLES))
    return "".join(f"{stamp}{line}\n" for line in lines)


SAMPLE_TEXT = (
    SAMPLE.read_text()
    if SAMPLE.exists()
    else "[Sun Feb 23 16:24:18 2025] NVRM:      0    103  GSP_RM_ALLOC          0x0000000000002081\n"
)


@pytest.mark.parametrize("seed", range(60))
def test_rpc_history_runs_read_as_lines(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    parts = []
    for _ in range(rng.randrange(1, 12)):
        stamp = rng.choice(RUN_STAMPS)
        head = rng.choice([*MESSAGES[:3], "NVRM: os_schedule: Attempted to yield", "Call Trace:"])
        parts.append(f"{stamp}{head}\n" + _rpc_history(rng, stamp))
    data = "".join(parts).encode()
    monkeypatch.setattr(dmesg, "MAX_EVENTS", rng.choice([2, 5, 20_000]))
    monkeypatch.setattr(dmesg, "MAX_JOINED", rng.choice([3, 40]))
    monkeypatch.setattr(dmesg, "BLOCK_BYTES", rng.choice([200, 1000, 4096, 1 << 20]))
    monkeypatch.setattr(dmesg, "_MEMO_BODIES", rng.choice([2, 4096]))
    monkeypatch.setattr(dmesg, "_RUN_WINDOW", rng.choice([16, 300, 4096]))
    assert_reads_as(dmesg.parse, data, lambda: _line_by_line(data, 256 * 1024))
