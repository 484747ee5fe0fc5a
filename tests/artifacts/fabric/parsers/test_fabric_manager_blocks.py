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
from artifacts.fabric.parsers.fabric_manager import messages
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
        patch.setattr(messages, "_lower", lambda text: None)
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


# The rows of a block (issue 27): dated entries of the usual shape are read by one pattern per
# block and counted per distinct message; these files hold mostly such entries, so that the
# rows are read together, with the lines a row may hold (blank, payload, key : value, words
# of an undated entry) and the lines that stop the rows.
LEVELS = ["INFO", "INFO", "INFO", "ERROR", "WARNING", "WARN", "DEBUG", "CRITICAL", "FATAL"]
CONTINUATIONS = [
    "",
    "   ",
    "Message payload details:Team setup request: Allocation Size:60000000 Flags:0 Number of GPUs:4 GPU Handles:6319a3aba7f6e5de",
    "Message payload details:Team release request: Team Handle:99c9f23d49236386 Flags:0",
    "moduleId : 1",
    "  gpuGuid : 0xb0cf0e0300e42e00",
    "the multicast word alone, no message of Fabric Manager",
    "t\u0113am payload beyond ASCII",
    # these start an entry whose date was removed: the row they are in is no single entry
    "multicast group 3 is allocated.",
    "multica\u017ft group 4 is freed.",  # a long s: "s" to re.I, not to str.lower
    "Feb 27 15:10:02 hgx-07 nv-fabricmanager[2931]: [ERROR] [tid 4] connected",
    # these lines start with "[" and are no row: the rows of the block stop there
    "[tid 5] portNum : 61",
    "[ERROR] [tid 12727] detected NVSwitch fatal error 20034 on fid 0",
    "[Feb \u0662\u0665 2025 14:00:00] [INFO] [tid 1] Arabic-Indic digits: an entry, no row",
    "[Feb 25 2025 14:00:00]\u2003[INFO] [tid 1] an em space: an entry, no row",
]


def _stamp(rng: random.Random) -> str:
    day = rng.choice([" 5", "25", "28", "30"])  # Feb 30: no such day, no time
    return f"[Feb {day} 2025 {rng.randrange(24):02}:{rng.randrange(60):02}:{rng.randrange(60):02}]"


def _rows_log(rng: random.Random) -> tuple[bytes, bool]:
    """Dated entries of a few messages (each message many times, with other stamps, tids,
    levels and case), some with continuation lines; and whether the rows may all be read
    together (no line of the file stops them)."""
    messages = rng.sample(MESSAGES, rng.randrange(1, 8))
    followers = rng.sample(CONTINUATIONS, rng.randrange(0, 5))
    lines = []
    for _ in range(rng.randrange(1, 400)):
        gap = rng.choice(["] [", "] [", "][", "]  ["])
        line = f"{_stamp(rng)} [{rng.choice(LEVELS)}{gap}tid {rng.randrange(1, 20000)}] "
        message = rng.choice(messages)
        if rng.random() < 0.05:
            message = message.swapcase() if rng.random() < 0.5 else message.upper()
        lines.append(line + message)
        while followers and rng.random() < 0.3:
            lines.append(rng.choice(followers))
    data = "\n".join(lines).encode() + b"\n"
    if rng.random() < 0.1:
        data = b"lines before the first entry\n" + data
    stoppers = CONTINUATIONS[CONTINUATIONS.index("multicast group 3 is allocated.") :]
    return data, len(lines) > 20 and not set(followers) & set(stoppers)


@pytest.mark.parametrize("seed", range(150))
def test_rows_read_as_lines(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    data, together = _rows_log(rng)
    block = rng.choice([333, 4096, 1 << 20])
    monkeypatch.setattr(fabric_manager, "MAX_EVENTS", rng.choice([2, 20, 20_000]))
    monkeypatch.setattr(fabric_manager, "MAX_ENTRY_CHARS", rng.choice([50, 4000]))
    monkeypatch.setattr(fabric_manager, "BLOCK_BYTES", block)
    # small memos: emptied while the file is read
    monkeypatch.setattr(fabric_manager, "_MEMO_ENTRIES", rng.choice([1, 3, 4096]))
    monkeypatch.setattr(fabric_manager, "_MEMO_CHARS", rng.choice([40, 2048]))
    counted = _spy_rows(monkeypatch)
    assert_reads_as(fabric_manager.parse, data, lambda: _line_by_line(data, 256 * 1024))
    if block > 333 and together:
        assert counted, "the rows were read line by line"


def _spy_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows each block's rows taken together held (the fast path ran)."""
    counted: list[int] = []
    count_rows = fabric_manager._State._count_rows

    def spy(state: fabric_manager._State, rows: list, line_no: int) -> bool:
        took = count_rows(state, rows, line_no)
        if took:
            counted.append(len(rows))
        return took

    monkeypatch.setattr(fabric_manager._State, "_count_rows", spy)
    return counted


def _parse(text: str) -> fabric_manager.FabricManagerResult:
    return fabric_manager.parse(io.BytesIO(text.encode()))


def test_a_repeated_message_keeps_each_entry_its_stamp_tid_and_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = _spy_rows(monkeypatch)
    error = "detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0"
    text = (
        f"[Feb 25 2025 13:59:45] [INFO] [tid 1] Fabric Manager version 535.161.08 is running\n"
        f"[Feb 25 2025 13:59:46] [ERROR] [tid 7] {error}\n"
        "Message payload details:Team release request: Team Handle:99c9f23d49236386 Flags:0\n"
        "\n"
        f"[Feb 30 2025 13:59:47] [ERROR] [tid 8] {error}\n"
        "[Feb 25 2025 13:59:48] [INFO] [tid 9] Partition id 3 is activated.\n"
        f"[Feb 26 2025 01:02:03] [WARNING] [tid 10] {error}\n"
        "[Feb 30 2025 13:59:49] [INFO] [tid 11] the last entry, fed line by line\n"
    )
    result = _parse(text)
    assert counted == [5]  # the last entry is fed line by line: it may go on
    assert [(e.time, e.level, e.tid, e.line, e.kind) for e in result.events] == [
        ("2025-02-25T13:59:46", "ERROR", 7, 2, "nvswitch_fatal"),
        (None, "ERROR", 8, 5, "nvswitch_fatal"),
        ("2025-02-26T01:02:03", "WARNING", 10, 7, "nvswitch_fatal"),
    ]
    assert (
        result.events[0].text
        == error
        + "\nMessage payload details:Team release request: Team Handle:99c9f23d49236386 Flags:0"
    )
    assert result.events[1].text == error
    assert [(p.partition, p.state, p.time, p.line) for p in result.partitions] == [
        (3, "activated", "2025-02-25T13:59:48", 6)
    ]
    assert result.version == "535.161.08"
    assert result.levels == {"ERROR": 2, "INFO": 3, "WARNING": 1}
    assert (result.first_time, result.last_time) == ("2025-02-25T13:59:45", "2025-02-26T01:02:03")
    assert result.multicast.release_requests == 1
    assert result == _line_by_line(text.encode(), 256 * 1024)


def test_an_entry_cut_by_a_block_boundary_keeps_its_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _spy_rows(monkeypatch)
    head = "[Feb 25 2025 14:01:18] [INFO] [tid 1803] Received an inband message:\n"
    payload = "Message payload details:Team setup request: Allocation Size:60000000 Flags:0 Number of GPUs:{n} GPU Handles:6319a3aba7f6e5de\n"
    text = "".join(head + payload.format(n=n) + "\n" for n in range(1, 200))
    for block in (100, 333, 4096):
        monkeypatch.setattr(fabric_manager, "BLOCK_BYTES", block)
        result = _parse(text)
        assert result.multicast.setup_requests == 199
        assert result.multicast.max_gpus_per_team == 199
        assert result == _line_by_line(text.encode(), 256 * 1024)
    assert sum(counted) > 150


def test_a_continuation_that_starts_an_undated_entry_stops_the_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = _spy_rows(monkeypatch)
    text = (
        "[Feb 25 2025 13:59:45] [INFO] [tid 1] Received an inband message:\n"
        "multicast group 3 is allocated.\n"  # an undated entry, not this entry's line
        "[Feb 25 2025 13:59:46] [INFO] [tid 2] multicast group 3 is freed.\n"
        "[Feb 25 2025 13:59:47] [INFO] [tid 3] the last\n"
    )
    result = _parse(text)
    assert counted == []
    assert result.entries == 4 and result.parts[:2] == ("entries", "undated")
    assert (result.multicast.groups_allocated, result.multicast.groups_freed) == (1, 1)
    assert result == _line_by_line(text.encode(), 256 * 1024)


@pytest.mark.parametrize(
    "odd",
    [
        "[tid 5] portNum : 61",  # a continuation that starts with "["
        "[ERROR] [tid 12727] detected NVSwitch fatal error 20034 on fid 0",  # undated
        "[Feb \u0662\u0665 2025 14:00:00] [INFO] [tid 1] multicast group 1 is freed.",
        "[Feb 25 2025 14:00:00]\u2003[ERROR] [tid 1] an em space",
        "[feb 25 2025 14:00:00] [INFO] [tid 1] multicast group 1 is freed.",  # not a stamp
    ],
)
def test_a_line_that_starts_with_a_bracket_and_is_no_row(odd: str) -> None:
    text = (
        "[Feb 25 2025 13:59:45] [ERROR] [tid 1] Trunk port failure detected\n"
        f"{odd}\n"
        "[Feb 25 2025 13:59:46] [INFO] [tid 2] multicast group 3 is allocated.\n"
        "[Feb 25 2025 13:59:47] [INFO] [tid 3] the last\n"
    )
    assert _parse(text) == _line_by_line(text.encode(), 256 * 1024)


def test_levels_and_case_variants_of_one_message_are_apart() -> None:
    text = "".join(
        f"[Feb 25 2025 13:59:4{i}] [{level}] [tid {i}] {message}\n"
        for i, (level, message) in enumerate(
            [
                ("INFO", "successfully setup multicast team for request id 1."),
                ("ERROR", "successfully setup multicast team for request id 1."),
                ("INFO", "SUCCESSFULLY SETUP MULTICAST TEAM for request id 1."),
                ("INFO", "\u212aelvin: successfully setup multicast team"),
                ("WARNING", "successfully setup multicast team for request id 1."),
                ("INFO", "successfully setup multicast team for request id 1."),
                ("DEBUG", "the last"),
            ]
        )
    )
    result = _parse(text)
    assert result.multicast.setups_ok == 6
    assert [(e.kind, e.tid) for e in result.events] == [("fm_error", 1), ("fm_warning", 4)]
    assert result.levels == {"DEBUG": 1, "ERROR": 1, "INFO": 4, "WARNING": 1}
    assert result == _line_by_line(text.encode(), 256 * 1024)
