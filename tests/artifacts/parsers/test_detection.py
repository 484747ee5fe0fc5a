"""Detection by score: ranked candidates with reasons, ambiguity reported, later windows
read when the head is another program's preamble, transcripts cut into parts."""

from __future__ import annotations

import gzip
import io
import random
from types import SimpleNamespace

import pytest

from artifacts.parsers import OTHER, cleaning, detection, normalize
from artifacts.parsers.detection import detect_sample, sample
from artifacts.parsers.reading import parse_file, view_of
from tests.samples import TESTS_DIR
from tests.transforms import kubectl, libfabric_noise, opener

NCCL_TESTS = (
    b"# nThread 1 nGpus 8 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20\n"
    b"#\n# Using devices\n"
    b"#  Rank  0 Group  0 Pid   1234 on  gpu07 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
    b"#\n#                                                  out-of-place              in-place\n"
    b"#       size         count      type   redop    root     time   algbw   busbw #wrong"
    b"     time   algbw   busbw #wrong\n"
    b"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
    b"    (us)  (GB/s)  (GB/s)       \n"
    + b"".join(
        b"%12d  %12d     float     sum      -1    20.10    0.00    0.00      0    19.90"
        b"    0.00    0.00      0\n" % (size, size // 4)
        for size in (8, 16, 32, 64, 128)
    )
    + b"# Avg bus bandwidth    : 0.001\n"
)


def detected(name: str, data: bytes) -> object:
    return detect_sample(name, sample(io.BytesIO(data), len(data)))


def test_candidates_are_ranked_with_their_reasons() -> None:
    found = detected("ar.log", NCCL_TESTS)
    assert found.kind == "nccl_tests"
    assert found.candidates[0].kind == "nccl_tests"
    assert found.candidates[0].reasons
    assert found.to_json()["candidates"][0]["kind"] == "nccl_tests"


def test_unknown_content_has_no_candidates_and_is_other() -> None:
    found = detected("notes.txt", b"just some notes about the cluster\n")
    assert found.kind == OTHER and not found.candidates
    assert "no parser" in found.why()


def _stub(label: str, *, accepts: bool, score: float | None = None) -> SimpleNamespace:
    stub = SimpleNamespace(accepts=lambda name, head: accepts)
    if score is not None:
        stub.score = lambda name, head: (score, f"{label} banner")
    return stub


def _with_registry(monkeypatch: pytest.MonkeyPatch, stubs: dict[str, SimpleNamespace]) -> None:
    monkeypatch.setattr(detection, "PARSERS", dict.fromkeys(stubs, ""))
    monkeypatch.setattr(detection, "get_parser", stubs.__getitem__)


def test_a_near_tie_is_reported_as_ambiguous_with_both_candidates(monkeypatch) -> None:
    _with_registry(monkeypatch, {"a": _stub("A", accepts=True), "b": _stub("B", accepts=True)})
    found = detection.detect("x.txt", b"anything\n")
    assert found.ambiguous
    assert [c.kind for c in found.candidates] == ["a", "b"]  # the registry breaks the tie
    assert found.why().startswith("ambiguous: a (0.70), b (0.70)")


def test_an_exact_banner_outranks_a_generic_sniffer(monkeypatch) -> None:
    stubs = {"generic": _stub("G", accepts=True), "exact": _stub("E", accepts=True, score=0.95)}
    _with_registry(monkeypatch, stubs)
    found = detection.detect("x.txt", b"anything\n")
    assert found.kind == "exact" and not found.ambiguous
    assert found.candidates[0].reasons[0] == "E banner"


def test_a_low_best_score_is_ambiguous(monkeypatch) -> None:
    _with_registry(monkeypatch, {"weak": _stub("W", accepts=True, score=0.3)})
    assert detection.detect("x.txt", b"anything\n").ambiguous


def test_the_file_name_is_a_reason_never_the_decision() -> None:
    found = detected("ethtool_-S_eth0.txt", NCCL_TESTS)
    assert found.kind == "nccl_tests"


def test_later_windows_find_a_file_behind_thousands_of_preamble_lines() -> None:
    data = libfabric_noise(NCCL_TESTS)
    assert len(data) > 200_000
    found = detected("run.log", data)
    assert found.kind == "nccl_tests"
    assert any("past the start" in r for r in found.candidates[0].reasons)


def test_a_transcript_keeps_the_recognised_command_as_its_main_part() -> None:
    data = b"$ hostname\ngpu07\n$ cat all_reduce.log\n" + NCCL_TESTS + b"$ uptime\n 10:00 up\n"
    found = detected("session.txt", data)
    assert found.kind == "nccl_tests"
    main = [p for p in found.parts if p["main"]]
    assert [p["title"] for p in main] == ["cat all_reduce.log"]
    assert {p["title"] for p in found.parts} == {"hostname", "cat all_reduce.log", "uptime"}
    assert found.view.part is not None and found.view.part.title == "cat all_reduce.log"


def test_a_collectors_timestamp_stays_the_time_of_an_nccl_line() -> None:
    log = (
        b"gpu07:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        b"gpu07:1:1 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2 with error 12\n"
    ) * 3
    found, result = parse_file(opener(kubectl(log)), "job.log")
    assert found.kind == "nccl_debug" and "kubectl" not in found.view.layers
    times = [e["time"] for e in result.to_json()["events"]]
    assert times and all(t and t.startswith("2025-06-01T10:00") for t in times)


NOISE = (TESTS_DIR / "fixtures" / "noise" / "other_programs.log").read_bytes()


def test_content_is_found_behind_megabytes_of_other_programs_lines() -> None:
    # 5 MB of foreign lines: past the head and the first windows, found by its signature
    data = NOISE * (5 * 1024 * 1024 // len(NOISE)) + NCCL_TESTS + NOISE * 3
    assert len(data) > 5_000_000
    found, result = parse_file(opener(data), "run.log", size=len(data))
    assert found.kind == "nccl_tests"
    assert [r["size_bytes"] for r in result.to_json()["runs"][0]["rows"]] == [8, 16, 32, 64, 128]


def test_content_between_megabytes_of_noise_is_found_by_the_scan() -> None:
    # past the first MiB and in none of the fixed windows (1/3, 2/3, the end): only the
    # scan, read on from where the head ended, finds it
    noise = NOISE * (5 * 1024 * 1024 // len(NOISE))
    data = noise + NCCL_TESTS + noise * 4
    found = detect_sample("run.log", sample(io.BytesIO(data), len(data)))
    assert found.kind == "nccl_tests"


def test_content_behind_megabytes_of_noise_is_found_in_a_gzip_file_too() -> None:
    # a gzip member cannot seek: the scan reads on from where the head ended
    data = NOISE * (5 * 1024 * 1024 // len(NOISE)) + NCCL_TESTS + NOISE * 3
    packed = gzip.compress(data)
    found, result = parse_file(opener(packed), "run.log.gz", size=len(packed))
    assert found.kind == "nccl_tests"
    assert [r["size_bytes"] for r in result.to_json()["runs"][0]["rows"]] == [8, 16, 32, 64, 128]


class _Counting(io.BytesIO):
    """Counts the bytes read from it."""

    read_bytes = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.read_bytes += len(chunk)
        return chunk


def test_a_long_file_whose_head_is_sure_is_not_scanned() -> None:
    # the scan past the head is for heads that are unsure: a clean 40 MB nccl-tests file
    # is decided by its head, and only the head and the fixed windows are read
    data = NCCL_TESTS * (40 * 1024 * 1024 // len(NCCL_TESTS))
    stream = _Counting(data)
    found = detect_sample("run.log", sample(stream, len(data)))
    assert found.kind == "nccl_tests"
    assert stream.read_bytes < 2 * detection.WHOLE_BYTES


def test_a_few_hundred_foreign_lines_leave_the_signature_window_to_decide() -> None:
    data = NOISE * 8 + NCCL_TESTS  # ~350 lines first: in the head, but most of it
    found = detected("run.log", data)
    assert found.kind == "nccl_tests"


def test_the_scan_is_bounded() -> None:
    # no signature anywhere: the scan stops after SCAN_BYTES, whatever the size
    stream = io.BytesIO(b"x\n" * (detection.SCAN_BYTES + 3 * detection.SCAN_CHUNK))
    windows = detection._scanned(stream.read(detection.SCAN_CHUNK), stream)
    assert windows == ()
    assert stream.tell() <= detection.SCAN_BYTES + detection.SCAN_CHUNK


DMESG = b"".join(
    b"[%6d.%06d] NVRM: Xid (PCI:0000:%02x:00): 79, pid=%d, GPU has fallen off the bus.\n"
    % (100 + i, i, i, 4000 + i)
    for i in range(8)
)


def test_a_kind_keeps_its_own_stamp_under_a_collectors_tag() -> None:
    tagged = b"".join(b"gpu07 | " + line + b"\n" for line in DMESG.split(b"\n")[:-1])
    found = detected("kern.log", tagged)
    assert found.kind == "dmesg"
    assert found.view.layers and all(not layer.startswith("time:") for layer in found.view.layers)
    _, plain = parse_file(opener(DMESG), "kern.log")
    _, read = parse_file(opener(tagged), "kern.log")
    assert read.to_json()["events"] == plain.to_json()["events"]


# UTF-16 doubles the size: the first MiB read holds only noise, the NCCL lines (and the
# host their glued lines are split at) are found by the scan past it
NCCL_LINES = b"".join(
    b"gpu07:1234:1290 [%d] NCCL INFO Channel %02d/0 : 0[0] -> 1[1] via P2P/IPC\n" % (i % 8, i)
    for i in range(64)
)
NCCL_BEHIND_NOISE = (NOISE * (700 * 1024 // len(NOISE)) + NCCL_LINES).decode().encode("utf-16")


def test_what_a_scan_behind_noise_finds_plans_the_cleaning_too() -> None:
    data = NCCL_BEHIND_NOISE
    assert len(data) > detection.WHOLE_BYTES + 2 * len(NCCL_LINES)
    found = detect_sample("job.log", sample(io.BytesIO(data), len(data)))
    assert found.kind == "nccl_debug"
    assert "gpu07" in found.view.hosts


def test_a_parse_as_another_kind_plans_from_the_scan_too() -> None:
    # a stored file without a planned view (parse as a chosen kind) is cleaned the same way
    assert "gpu07" in view_of(opener(NCCL_BEHIND_NOISE)).hosts


# Pieces of terminal sessions: prompts of several shells, comment and heading lines that
# look like prompts to a byte search, and plain output.
SESSION_PIECES = [
    b"$ cat all_reduce.log\n",
    b"root@gpu07:~# nvidia-smi -q\n",
    b"user@gpu07 ~ % ibstat\n",
    b"\xe2\x9d\xaf dmesg -T\n",
    b"# nThread 1 nGpus 8 minBytes 8\n",
    b"#  Rank  0 Group  0 Pid 1234 on gpu07\n",
    b"> quoted mail line\n",
    b"50% done\n",
    b"\x1b[0;32mok\x1b[0m\n",
    b"\n",
    b"   \n",
    b"      8192          2048     float     sum      -1    20.10    0.41    0.71      0\n",
    b"GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234)\n",
]


@pytest.mark.parametrize("seed", range(150))
def test_one_part_at_most_is_what_cleaning_the_whole_file_says(seed: int) -> None:
    # the shortcut may only say "nothing to cut" where the whole file, cleaned, has fewer
    # than two transcript parts
    rng = random.Random(seed)
    whole = b"".join(rng.choice(SESSION_PIECES) for _ in range(rng.randint(1, 40)))
    if rng.random() < 0.3:  # a launcher label on every line
        whole = b"".join(b"%d: %s\n" % (rng.randrange(2), ln) for ln in whole.split(b"\n")[:-1])
    view = normalize.plan(whole)
    if detection._one_part_at_most(whole, view):
        clean = cleaning.clean_bytes(whole, view).decode("utf-8", "replace")
        assert len(normalize.transcript_parts(clean)) < 2


@pytest.mark.parametrize(
    ("whole", "expected"),
    [
        (NCCL_TESTS, True),  # "# nThread" is no prompt row
        (b"$ cat all_reduce.log\n" + NCCL_TESTS, True),
        (b"\n  \n  $ cat all_reduce.log\n" + NCCL_TESTS, True),
        (b"run 1\n$ cat all_reduce.log\n" + NCCL_TESTS, False),
        (b"$ cat all_reduce.log\n" + NCCL_TESTS + b"$ hostname\ngpu07\n", False),
    ],
)
def test_one_part_at_most(whole: bytes, expected: bool) -> None:
    assert detection._one_part_at_most(whole, normalize.plan(whole)) is expected
