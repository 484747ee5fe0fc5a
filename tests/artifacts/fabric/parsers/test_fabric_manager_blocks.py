"""fabric_manager read in blocks, with each entry's words looked for once (issue 27), gives
what the line-by-line reading gives, on random files of real-shaped pieces: dated and
undated entries, journal lines, continuation lines, words in odd case and beyond ASCII,
noise, CRLF, lone CRs, bytes that are not UTF-8, over-long lines."""
# ruff: noqa: E501

from __future__ import annotations

import io
import random

import pytest

from artifacts.fabric.parsers import fabric_manager
from artifacts.parsers.textutil import LineReader
from tests.artifacts.fabric.parsers.blocks import assert_reads_as, jitter
from tests.artifacts.fabric.parsers.test_fabric_manager import TROUBLE
from tests.samples import SAMPLES_DIR

SAMPLE = SAMPLES_DIR / "counters/gpud_nvidia_fabricmanager.log"
PREFIXES = [
    "[Feb 25 2025 13:59:45] [INFO] [tid 1803] ",
    "[Feb 25 2025 13:59:46] [INFO] [tid 1808] ",
    "[Feb 30 2025 13:59:46] [INFO] [tid 1808] ",  # no such day: no time
    "[Feb 25 2025 14:00:00] [ERROR] [tid 12727] ",
    "[Feb 25 2025 14:00:01] [WARNING] [tid 134] ",
    "[Feb 25 2025 14:00:02] [DEBUG] [tid 134] ",
    "[Feb  5 2025 14:00:03][NOTICE][tid 9]",
    "[ERROR] [tid 12727] ",
    "[INFO] ",
    "[tid 5] ",
    "Feb 27 15:10:02 hgx-07 nv-fabricmanager[2931]: ",
    "",
    "  ",
]
MESSAGES = [
    "Received an inband message:  Message header details: magic Id:adbc request Id:1fdba18d7da4ef9e status:0 type:4 length:14",
    "Message payload details:Team release request: Team Handle:99c9f23d49236386 Flags:0",
    "Message payload details:Team setup request: Allocation Size:60000000 Flags:0 Number of GPUs:8 GPU Handles:6319a3aba7f6e5de",
    "Message payload details:Team setup response: Team Handle:7777bfab5a11aea8 Flags:0",
    "multicast group 0 is freed.",
    "multicast group 1 is allocated.",
    "MULTICAST GROUP 2 IS ALLOCATED.",
    "successfully setup multicast team for request id 8331980469606044544.",
    "successfully released multicast team with handle 11081654703155798918.",
    "Sending inband response message:  Message header details: magic Id:adbc",
    "Fabric Manager version 535.161.08 is running with the following configuration options",
    "Fabric Manager version is : 550.54.15",
    "detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61",
    "detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33",
    "Fabric Manager detected GPU NVL Fatal error on :",
    "moduleId : 1",
    "gpuGuid : 0xb0cf0e0300e42e00",
    "portNum : 61",
    "failed to find the GPU handle 5410063385821516767 in the multicast team request setup 6130285411925746235.",
    "Trunk port failure detected for switch GUID 0xb0cf0e0300e42e00 port number 61.",
    "NVLink training failed on port 3",
    "NVLink link error on trunk 2",
    "Partition id 3 is activated.",
    "deactivating partition 4",
    "request to query NVSwitch device information failed",
    "Successfully configured all the available NVSwitches to route GPU NVLink traffic.",
    "connected to the GFM",
    "nothing to see here",
    "t\u0113am with a non-ASCII letter: multicast group 3 is allocated.",
    "\u212aelvin sign: successfully setup multicast team",
    "",
]
EXTRAS = [
    b"\n",
    b"\n\n",
    b"some noise before anything\n",
    b"[\xff\xfe] bad bytes multicast group 5 is freed.\n",
    b"[Feb 25 2025 13:59:45] [INFO] [tid 1] a lone CR\rmulticast group 7 is allocated.\n",
    b"[Feb 25 2025 13:59:45] [INFO] [tid 1] no newline at the end",
    b"[Feb 25 2025 13:59:45] [INFO] [tid 1] " + b"z" * 300 + b" team\n",
    b"payload " + b"q" * 5000 + b"\n",
    TROUBLE.encode(),
]


def _line_by_line(data: bytes, max_line_bytes: int) -> fabric_manager.FabricManagerResult:
    """The reading before issue 27: line by line, and every pattern tried whatever words the
    entry holds (no text is lowered, every line may be an undated entry), so the words the
    block reading looks for first are shown to be needed by their patterns."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fabric_manager, "_lower", lambda text: None)
        patch.setattr(fabric_manager, "_maybe_undated", lambda line: True)
        reader = LineReader(io.BytesIO(data), max_line_bytes=max_line_bytes)
        state = fabric_manager._State()
        for line in reader:
            state.feed(line, reader.line_no)
        state.flush()
        if not state.entries:
            raise fabric_manager.ParseError("none")
        return state.result(reader.repair_warnings())


def _random_log(rng: random.Random) -> bytes:
    parts = []
    for _ in range(rng.randrange(1, 150)):
        roll = rng.random()
        if roll < 0.1:
            parts.append(rng.choice(EXTRAS))
        elif roll < 0.2 and SAMPLE.exists():
            parts.append(jitter(rng, SAMPLE.read_bytes(), rng.choice([0, 0.02])))
        else:
            line = rng.choice(PREFIXES) + rng.choice(MESSAGES)
            if rng.random() < 0.1:
                line = line.swapcase() if rng.random() < 0.5 else line.upper()
            parts.append(jitter(rng, line.encode(), rng.choice([0, 0.05])) + b"\n")
    data = b"".join(parts)
    if rng.random() < 0.15:
        data = data.replace(b"\n", b"\r\n")
    return data


@pytest.mark.parametrize("seed", range(150))
def test_blocks_read_as_lines(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    data = _random_log(rng)
    max_line = rng.choice([64, 200, 256 * 1024])
    monkeypatch.setattr(fabric_manager, "MAX_EVENTS", rng.choice([2, 20, 20_000]))
    monkeypatch.setattr(fabric_manager, "MAX_ENTRY_CHARS", rng.choice([50, 4000]))
    monkeypatch.setattr(fabric_manager, "BLOCK_BYTES", rng.choice([64, 333, 4096, 1 << 20]))
    monkeypatch.setattr(fabric_manager, "MAX_LINE_BYTES", max_line)
    assert_reads_as(fabric_manager.parse, data, lambda: _line_by_line(data, max_line))
