"""Cleaning copies the runs of lines it leaves as they are at once (``cleaning._runs``),
takes layers off every line by one substitution per layer, and cleans only the lines it may
change: random files of NCCL lines (own headers, TRACE lines with a function name, glued
headers, launcher tags), prompts, fences, colours and carriage returns, under random
prefixes of the layers a view names (and of others), read in random chunk sizes, must give
what cleaning each line on its own gives, with the same line map."""

from __future__ import annotations

import io

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from artifacts.parsers import cleaning, normalize
from artifacts.parsers.cleaning import CleanStream, LineMap
from artifacts.parsers.normalize import View

NCCL_LINES = (
    "gpu07:123:456 [0] NCCL INFO Channel 00/02 : 0 1",
    "gpu08:12:45 [1] NCCL WARN NET/IB : Got completion",
    "node-1:1:2 [3] NCCL TRACE foo NCCL bar",
    "gpu07:842736:842746 [1] ncclTopoPopulateNics, 1242 NCCL INFO Filled mlx5_0 > x",
)
ODD_LINES = (
    # glued headers, in every place ``_split_glued`` looks for them
    "gpu07:123:456 [0] NCCL INFO Channel 00/02 : 0 1gpu08:12:45 [1] NCCL INFO Ring 00",
    "gpu07:842736:842746 [1] ncclTopo, 12 NCCL INFO Filledgpu08:1:2 [0] NCCL INFO glued",
    "readgpu08:1:1 [0] NCCL INFO glued",
    "x gpu07:5:5 [0] NCCL INFO y",
    "gpu07:1:2 [0] NCCL INFO a] NCCL INFO b",
    "gpu07:1:2 [0] NCCL INFOgpu07:1:2 [0] NCCL TRACE z",
    "x] NCCL WARN y",
    # launcher tags and srun's own lines
    "[rank0]:gpu07:1:1 [0] NCCL INFO r",
    "[1,0]<stdout>:gpu08:1:1 [0] NCCL INFO m",
    "gpu07:1:1 [0] NCCL INFO x[default1]:y",
    "srun: error: foo",
    "  [1,0]<stderr>:[rank2]:gpu07:1:1 [0] NCCL INFO both tags",
    "x [1,1]<stdout>:y",
    # what cleaning changes in any file
    "# comment line",
    "% ls -l",
    "> quoted",
    "user@host ~> ls -la",
    "```bash",
    "~~~",
    "\x1b[31mred\x1b[0m gpu07:1:1 [0] NCCL INFO x",
    "a\rb\rc",
    "trailing\r",
    "$ nccl-tests",
    "user@gpu07:~$ all_reduce_perf -b 8",
    "\u276f ls",
    "(venv)\t# ls -l",
    "(base) user@gpu07 ~ % ls",
    "PS C:\\Users> dir",
    "caf\u00e9 \u00bb ok",
    # what it leaves
    "NCCL version 2.18.1+cuda12.1",
    "plain text line",
    "",
    "   ",
)


# Layers as ``normalize.plan`` names them, and prefixes of theirs (and not) to put on lines.
LAYERS = (
    (),
    ("slurm",),
    ("kubectl", "host"),
    ("timestamp",),
    ("syslog",),
    ("keep:kubectl",),
    (r"time:^\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\ \|\ ",),
    (r"time:^\[ *\d+\.\d{3,9}\] ", "slurm"),
    (r"tag:^\[(?=[^\]]*[A-Za-z])[\w.\-@/:]{1,40}\] ",),
    (r"tag:^(?=[\w.\-@/]*\d)[A-Za-z0-9][\w.\-@/]{0,63}: ",),
)
PREFIXES = (
    "",
    "0: ",
    " 12: ",
    "0: 1: ",
    "2024-05-01T10:00:00.123Z ",
    "2024-05-01T10:00:00Z gpu07: ",
    "gpu07: ",
    "10:00:01 | ",
    "10:00:01.5 | 3: ",
    "[2024-05-01 10:00:00] ",
    "Feb 23 16:24:18 gpu07 nccl[42]: ",
    "Feb 23 16:24:18 gpu07 kernel: ",
    "[   12.345678] 0: ",
    "[worker-2] ",
    "[000] ",
)


def line_by_line(data: bytes, view: View) -> tuple[bytes, list[list[int]]]:
    """The definition: every line cleaned on its own, numbered as it goes."""
    lines = data.decode("utf-8").split("\n")
    if not lines[-1]:
        lines.pop()
    out, line_map, clean = [], LineMap(), 0
    for original, line in enumerate(lines, 1):
        for piece in normalize.pieces(line.rstrip("\r"), view):
            clean += 1
            line_map.add(clean, original)
            out.append(f"{piece}\n")
    return "".join(out).encode(), line_map.to_json()


class Trickle(io.BytesIO):
    """A stream that answers at most ``size`` bytes a read: chunks end inside lines, inside
    a CRLF and inside a UTF-8 character."""

    def __init__(self, data: bytes, size: int) -> None:
        super().__init__(data)
        self.size = size

    def read(self, n: int | None = -1) -> bytes:
        return super().read(self.size if n is None or n < 0 else min(n, self.size))


@st.composite
def files(draw: st.DrawFn) -> tuple[bytes, View]:
    share_odd = draw(st.sampled_from((0.0, 0.02, 0.3, 1.0)))
    lines = draw(
        st.lists(
            st.one_of(
                st.sampled_from(NCCL_LINES),
                st.sampled_from(ODD_LINES).filter(lambda _: draw(st.floats(0, 1)) < share_odd),
            ),
            max_size=80,
        )
    )
    prefixes = draw(st.lists(st.sampled_from(PREFIXES), min_size=1, max_size=3))
    lines = [draw(st.sampled_from(prefixes)) + line for line in lines]
    end = draw(st.sampled_from(("\n", "\r\n", "\n\r\n")))
    text = end.join(lines) + (end if draw(st.booleans()) else "")
    view = View(
        layers=draw(st.sampled_from(LAYERS)),
        hosts=draw(st.sampled_from(((), ("gpu07", "gpu08", "node-1")))),
        document=draw(st.booleans()),
    )
    return text.encode(), view


@settings(max_examples=200)
@given(case=files(), size=st.integers(1, 64))
@example(case=(b"gpu07:1:2 [0] NCCL INFO a] NCCL INFO b\n", View(hosts=("gpu07",))), size=7)
@example(case=(b"0: gpu07:1:2 [0] NCCL INFO a\n\n0: x\n", View(layers=("slurm",))), size=64)
@example(case=(b"x [1,1]<stdout>:y", View(hosts=("gpu07",))), size=1)  # a tag glued mid-line
def test_copied_runs_read_as_each_line_cleaned_alone(case: tuple[bytes, View], size: int) -> None:
    data, view = case
    want, want_map = line_by_line(data, view)
    stream = CleanStream(Trickle(data, size), view)
    assert stream.read() == want
    assert stream.line_map.to_json() == want_map
    assert cleaning.clean_bytes(data, view) == want


def lines_cleaned_alone(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lines ``pieces`` is asked to clean from now on, in order."""
    seen: list[str] = []
    pieces = cleaning.pieces

    def counting(line: str, view: View) -> list[str]:
        seen.append(line)
        return list(pieces(line, view))

    monkeypatch.setattr(cleaning, "pieces", counting)
    return seen


def test_a_long_clean_log_is_copied_not_cleaned_line_by_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fast path is taken: an NCCL log with one glued line in 3,000 cleans only that one
    (``pieces`` sees one line), and the glued line is still cut."""
    plain = NCCL_LINES[:3]  # the fourth holds "> ", which may be a prompt's
    lines = [plain[i % len(plain)] for i in range(3000)]
    lines[1500] = ODD_LINES[0]
    data = ("\n".join(lines) + "\n").encode()
    view = View(hosts=("gpu07", "gpu08", "node-1"))
    seen = lines_cleaned_alone(monkeypatch)
    got = CleanStream(io.BytesIO(data), view).read().decode()
    assert seen == [ODD_LINES[0]]
    assert got.count("\n") == 3001
    assert "Ring 00" in got.split("\n")[1501]


def test_layers_are_taken_off_a_long_log_without_a_step_per_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Slurm-labelled NCCL log: the labels go by one substitution, only the glued line is
    cleaned on its own (from its original line, label included), and the line map holds."""
    lines = [f"{i % 8}: {NCCL_LINES[i % 3]}" for i in range(3000)]
    lines[1500] = "3: " + ODD_LINES[0]
    data = ("\n".join(lines) + "\n").encode()
    view = View(layers=("slurm",), hosts=("gpu07", "gpu08", "node-1"))
    seen = lines_cleaned_alone(monkeypatch)
    stream = CleanStream(io.BytesIO(data), view)
    got = stream.read()
    assert seen == ["3: " + ODD_LINES[0]]
    assert (got, stream.line_map.to_json()) == line_by_line(data, view)
