"""How evidence really arrives, as transformations of a file's bytes.

Each function takes the bytes of a clean file and returns them as an engineer would have
them after a terminal paste, a launcher, a log collector or a Windows tool. The metamorphic
tests (tests/artifacts/test_real_inputs.py) and ``benchmarks/real_inputs.py`` apply every one
to every shared sample and expect the same kind and the same facts.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import random
import re
import zlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from hypothesis import strategies as st

from artifacts.parsers import ParseError
from artifacts.parsers.detection import KEEPS_LINE_TIMES
from artifacts.parsers.reading import parse_file
from artifacts.parsers.streams import open_decompressed
from tests.samples import MORE_SAMPLES_DIR, SAMPLES_DIR, TESTS_DIR

SHARED_DIR = SAMPLES_DIR.parent

Transform = Callable[[bytes], bytes]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _per_line(prefix: Callable[[int], bytes]) -> Transform:
    def apply(data: bytes) -> bytes:
        lines = _lines(data)
        last = lines.pop() if lines and lines[-1] == b"" else None
        out = b"\n".join(prefix(i) + line for i, line in enumerate(lines))
        return out + (b"\n" if last is not None else b"")

    return apply


def prompt_line(data: bytes) -> bytes:
    return b"$ cat evidence.txt\n" + data


def root_prompt(data: bytes) -> bytes:
    # a prompt naming no host (parsers take the host from user@host prompts, on purpose)
    return b"sh-5.1# cat evidence.txt\n" + data


def fenced(data: bytes) -> bytes:
    body = data if data.endswith(b"\n") else data + b"\n"
    return b"```text\n" + body + b"```\n"


def crlf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def ansi(data: bytes) -> bytes:
    lines = _lines(data)
    return b"\n".join(b"\x1b[1;32m" + line + b"\x1b[0m" if line.strip() else line for line in lines)


openmpi = _per_line(lambda i: b"[1,0]<stdout>:")
openmpi_indented = _per_line(lambda i: b"  [1,0]<stdout>:")
slurm = _per_line(lambda i: b"0: ")
torchrun = _per_line(lambda i: b"[rank3]:")
pdsh = _per_line(lambda i: b"gpu07: ")
kubectl = _per_line(lambda i: b"2025-06-01T10:%02d:%02d.%09dZ " % (i // 60 % 60, i % 60, i * 7919))
journald = _per_line(
    lambda i: b"Jun 01 10:%02d:%02d gpu07 python3[4242]: " % (i // 60 % 60, i % 60)
)
tee_timestamps = _per_line(lambda i: b"[2025-06-01 10:%02d:%02d] " % (i // 60 % 60, i % 60))


def srun_lines(data: bytes) -> bytes:
    return (
        b"srun: job 81234 queued and waiting for resources\n"
        b"srun: job 81234 has been allocated resources\n" + data
    )


def libfabric_noise(data: bytes) -> bytes:
    noise = b"".join(
        b"libfabric:31337:1717236000::cxi:core:cxip_info_init():%d<warn> cxi0: "
        b"fi_getinfo failed for provider verbs (retry %d)\n" % (400 + i % 50, i)
        for i in range(2000)
    )
    return noise + data


def utf16(data: bytes) -> bytes:
    return data.decode("utf-8", errors="replace").encode("utf-16")


def utf8_bom(data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


def second_command(data: bytes) -> bytes:
    body = data if data.endswith(b"\n") else data + b"\n"
    return body + b"$ hostname\ngpu07\n"


TRANSFORMS: dict[str, Transform] = {
    "prompt": prompt_line,
    "root prompt": root_prompt,
    "fenced": fenced,
    "CRLF": crlf,
    "ANSI": ansi,
    "Open MPI": openmpi,
    "Open MPI indented": openmpi_indented,
    "Slurm label": slurm,
    "srun lines": srun_lines,
    "torchrun": torchrun,
    "pdsh": pdsh,
    "kubectl timestamps": kubectl,
    "journald": journald,
    "tee timestamps": tee_timestamps,
    "libfabric noise": libfabric_noise,
    "UTF-16": utf16,
    "UTF-8 BOM": utf8_bom,
    "second command": second_command,
}

# Keys of a parse result that depend on where in the file something was (a prefix or a
# noise block shifts them) or on the warnings about cleaning; everything else is a fact.
_POSITIONAL = re.compile(r"(?:^|_)(?:line|lines|line_no|line_start|line_end|offset)$|^bytes_read$")


def facts(result_json: Any, *, drop: frozenset[str] = frozenset()) -> Any:
    """A parse result's JSON without warnings, line positions and the ``drop`` keys."""
    if isinstance(result_json, dict):
        return {
            k: facts(v, drop=drop)
            for k, v in result_json.items()
            if k != "warnings" and k not in drop and not _POSITIONAL.search(k)
        }
    if isinstance(result_json, list):
        return [facts(v, drop=drop) for v in result_json]
    return result_json


# A collector's timestamp is the only time an NCCL line has: kept, it adds event times the
# original file did not have, so those are left out of the comparison (nothing else may change).
TIME_TRANSFORMS = frozenset({"kubectl timestamps", "journald", "tee timestamps"})
TIME_KEYS = frozenset({"time", "first_time", "last_time"})


def comparable(kind: str, transform: str, read: Any) -> Any:
    if kind in KEEPS_LINE_TIMES and transform in TIME_TRANSFORMS and not isinstance(read, str):
        return facts(read, drop=TIME_KEYS)
    return read


# Samples the text transformations do not apply to, and why (also in docs/formats.md).
EXEMPT_SUFFIXES = {
    ".gz": "compressed export: written to a file by the tool, never through a terminal",
    ".sqlite": "binary database export",
    ".nsys-rep": "binary report",
    ".md": "notes about the samples, not evidence",
}
# JSON and XML documents read from their first byte: behind 2,000 lines of another
# program's output they are no longer that document (a tool wrote them to a file).
DOCUMENT_EXEMPT = {"libfabric noise"}
DOCUMENT_KINDS = {"torch_trace", "nccl_topology"}


def applies(path_name: str, kind: str, transform: str, head: bytes) -> bool:
    if any(path_name.endswith(suffix) for suffix in EXEMPT_SUFFIXES):
        return False
    is_document = kind in DOCUMENT_KINDS or head.lstrip()[:5] in (b"<?xml", b"<!DOC")
    return not (is_document and transform in DOCUMENT_EXEMPT)


def opener(data: bytes) -> Callable[[], AbstractContextManager[BinaryIO]]:
    def open_stream() -> AbstractContextManager[BinaryIO]:
        return open_decompressed(io.BytesIO(data), compressed_size=len(data))

    return open_stream


def reading(name: str, data: bytes) -> tuple[str, Any]:
    """(kind, facts) of bytes read as an upload is, or (kind, "error: ...")."""
    try:
        found, result = parse_file(opener(data), name)
    except ParseError as exc:
        return "?", f"error: {exc.message}"
    return found.kind, facts(result.to_json())


def same_reading(kind: str, want: Any, transform: str, got_kind: str, got: Any) -> str | None:
    """Why a transformed file's reading differs from the original's, or None."""
    if got_kind != kind:
        return f"kind {got_kind}"
    if comparable(kind, transform, got) != comparable(kind, transform, want):
        return "facts differ"
    return None


# --- the corpus -----------------------------------------------------------------------------


def text_samples() -> list[Path]:
    """Every sample of both shared folders the text transformations apply to (none when
    ../shared is absent)."""
    files: list[Path] = []
    for folder in (SAMPLES_DIR, MORE_SAMPLES_DIR):
        if folder.is_dir():
            files += sorted(p for p in folder.rglob("*") if p.is_file())
    return [
        p
        for p in files
        if p.name != "MANIFEST.tsv" and not any(p.name.endswith(s) for s in EXEMPT_SUFFIXES)
    ]


def sample_id(path: Path) -> str:
    """ "samples/<kind>/<file>" or "more-samples/<kind>/<file>"."""
    return str(path.relative_to(SHARED_DIR))


# Cases that are a parser's own problem (handed to its owner in /tmp/brief/handoff.md):
# left out of the asserted matrix, each with its reason, and checked to still fail
# (test_real_inputs.test_the_known_cases_still_fail) so the list shrinks when one is fixed.
KNOWN: dict[tuple[str, str], str] = {}


# --- generated variation --------------------------------------------------------------------
# The fixed list above is what we thought of; Hypothesis composes the same kinds of layers at
# random (tests/artifacts/test_generated_variation.py, benchmarks/real_inputs.py): prefix
# shapes and separators, prompts of several shells, another program's lines around ours,
# cut lines, line ends, encodings, colours and trailing spaces.

NOISE_LINES: tuple[bytes, ...] = tuple(
    line
    for line in (TESTS_DIR / "fixtures" / "noise" / "other_programs.log").read_bytes().split(b"\n")
    if line
)
STAMPS = ("iso", "iso-bracket", "syslog", "epoch", "uptime", "clock-pipe")
TAG_FORMS = ("pipe", "colon", "bracket", "angle")
LAUNCHERS = ("openmpi", "slurm", "torchrun", "pdsh", "kubectl", "journald")
PROMPTS = ("bash", "bracketed", "zsh", "zsh-host", "fish", "powershell", "root", "starship")
HOSTS = ("gpu07", "node-12", "x3006c0s1b0n0", "10.0.0.5", "worker-3", "web_1", "dgx-a100-031")


@dataclass(frozen=True)
class Layer:
    """One prefix on every line: a stamp, a tag with its values, or a known launcher's."""

    family: str  # "stamp", "tag" or "launcher"
    style: str  # a name from STAMPS, TAG_FORMS or LAUNCHERS
    hosts: int = 1  # how many tag values (hosts, ranks, services) take turns

    def label(self) -> str:
        return f"{self.family}:{self.style}"


@dataclass(frozen=True)
class Variation:
    cut_head: int = 0  # lines cut from the start of the original (a fragment)
    cut_tail: int = 0  # ... and from its end
    noise_before: int = 0  # other programs' lines before ours
    noise_between: int = 0  # ... in the middle of ours
    noise_after: int = 0  # ... and after
    layers: tuple[Layer, ...] = ()  # innermost first
    prompt: str | None = None  # a prompt line of that shell style before the output
    colour: bool = False
    trailing_spaces: bool = False
    crlf: bool = False
    encoding: str = "utf-8"  # "utf-8", "utf-8-sig" or "utf-16"

    def labels(self) -> list[str]:
        """The layer types this variation applies (the benchmark's rows)."""
        out = [layer.label() for layer in self.layers]
        if self.prompt:
            out.append(f"prompt:{self.prompt}")
        if self.cut_head or self.cut_tail:
            out.append("cut")
        if self.noise_before or self.noise_between or self.noise_after:
            out.append("noise")
        out += [
            name
            for name, on in (
                ("colour", self.colour),
                ("trailing spaces", self.trailing_spaces),
                ("CRLF", self.crlf),
            )
            if on
        ]
        if self.encoding != "utf-8":
            out.append(self.encoding)
        return out or ["none"]


def random_variation(rng: random.Random) -> Variation:
    """A variation drawn from ``rng``: every choice is made here, so a seed names it."""

    def layer() -> Layer:
        family = rng.choice(("stamp", "tag", "launcher"))
        styles = {"stamp": STAMPS, "tag": TAG_FORMS, "launcher": LAUNCHERS}[family]
        return Layer(family, rng.choice(styles), rng.randint(1, 3))

    return Variation(
        cut_head=rng.choice((0, 0, 0, 1, 2, 5)),
        cut_tail=rng.choice((0, 0, 0, 1, 3)),
        noise_before=rng.choice((0, 0, 3, 40, 400)),
        noise_between=rng.choice((0, 0, 0, 2, 20)),
        noise_after=rng.choice((0, 0, 5)),
        # layers of distinct styles: one collector does not stamp a line twice
        layers=tuple(
            {
                (x.family, x.style): x for x in (layer() for _ in range(rng.choice((0, 1, 1, 2))))
            }.values()
        ),
        prompt=rng.choice((None, None, *PROMPTS)),
        colour=rng.random() < 0.3,
        trailing_spaces=rng.random() < 0.3,
        crlf=rng.random() < 0.3,
        encoding=rng.choice(("utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16")),
    )


def variations(salt: str = "") -> st.SearchStrategy[Variation]:
    """Variations named by a seed (mixed with ``salt``, the sample, so that a few draws per
    sample still cover every kind of layer across the corpus). A seed rather than one
    strategy per field: with one or two examples per file Hypothesis would otherwise start
    from the plainest variation each time; a failure still shrinks to a small seed."""
    mix = zlib.crc32(salt.encode())
    return st.integers(0, 2**32 - 1).map(lambda seed: random_variation(random.Random(seed ^ mix)))


def is_document(kind: str, data: bytes) -> bool:
    """JSON and XML documents: read from their first byte, so only what surrounds the whole
    document varies (prompt, line ends, encoding), never their lines."""
    start = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:5]
    return kind in DOCUMENT_KINDS or start[:1] in (b"{", b"[") or start in (b"<?xml", b"<!DOC")


def cut(data: bytes, variation: Variation) -> bytes:
    """The fragment of the original a variation keeps (lines cut at its start and end)."""
    if not (variation.cut_head or variation.cut_tail):
        return data
    lines = data.split(b"\n")
    ended = bool(lines) and lines[-1] == b""
    if ended:
        lines.pop()
    kept = lines[variation.cut_head : len(lines) - variation.cut_tail]
    return b"\n".join(kept) + (b"\n" if kept else b"")


def _noise(count: int, salt: int) -> list[bytes]:
    return [NOISE_LINES[(salt * 7 + i * 13) % len(NOISE_LINES)] for i in range(count)]


def _stamp(style: str, i: int) -> bytes:
    m, s, frac = i // 60 % 60, i % 60, i * 7919 % 1_000_000
    return {
        "iso": b"2025-06-01T10:%02d:%02d.%06dZ " % (m, s, frac),
        "iso-bracket": b"[2025-06-01 10:%02d:%02d,%03d] " % (m, s, frac % 1000),
        "syslog": b"Jun  1 10:%02d:%02d " % (m, s),
        "epoch": b"17172360%02d.%06d " % (s, frac),
        "uptime": b"[%6d.%06d] " % (1000 + i, frac),
        "clock-pipe": b"10:%02d:%02d.%03d | " % (m, s, frac % 1000),
    }[style]


def _tag(layer: Layer, i: int, total: int) -> bytes:
    # hosts take turns in runs, as a collector interleaves whole buffers of each process
    host = HOSTS[(i * layer.hosts // max(total, 1)) % len(HOSTS)].encode()
    return {
        "pipe": host.ljust(14) + b"| ",
        "colon": host + b": ",
        "bracket": b"[" + host + b"] ",
        "angle": host + b"> ",
    }[layer.style]


_LAUNCHER_PREFIX: dict[str, Callable[[int], bytes]] = {
    "openmpi": lambda i: b"[1,0]<stdout>:",
    "slurm": lambda i: b"%d: " % (i // 50 % 2),
    "torchrun": lambda i: b"[rank3]:",
    "pdsh": lambda i: b"gpu07: ",
    "kubectl": lambda i: b"2025-06-01T10:%02d:%02d.%09dZ " % (i // 60 % 60, i % 60, i * 7919),
    "journald": lambda i: b"Jun 01 10:%02d:%02d gpu07 python3[4242]: " % (i // 60 % 60, i % 60),
}

_PROMPT_LINES = {
    "bash": b"{user}@{host}:~/runs$ cat evidence.txt",
    "bracketed": b"[{user}@{host} runs]$ cat evidence.txt",
    "zsh": b"{user}@{host} runs % cat evidence.txt",
    "zsh-host": b"{host}% cat evidence.txt",
    "fish": b"{user}@{host} ~/runs> cat evidence.txt",
    "powershell": b"PS C:\\Users\\{user}> type evidence.txt",
    "root": b"# cat /tmp/evidence.txt",
    "starship": b"\xe2\x9d\xaf cat evidence.txt",
}


def vary(
    data: bytes, variation: Variation, *, document: bool = False, host: str = "gpu07"
) -> bytes:
    """The bytes of ``data`` arrived the way ``variation`` says. A document keeps its lines;
    ``host``: the host a prompt names (the one the evidence names, when it names one)."""
    if not document:
        data = cut(data, variation)
    lines = data.split(b"\n")
    ended = bool(lines) and lines[-1] == b""
    if ended:
        lines.pop()
    if not document:
        blanks = [i for i, line in enumerate(lines) if not line.strip()]
        middle = min(blanks, key=lambda i: abs(i - len(lines) // 2)) if blanks else len(lines)
        lines = (
            _noise(variation.noise_before, 1)
            + lines[:middle]
            + _noise(variation.noise_between, 2)
            + lines[middle:]
            + _noise(variation.noise_after, 3)
        )
        if variation.trailing_spaces:
            lines = [line + b"  " if i % 3 == 0 else line for i, line in enumerate(lines)]
        if variation.colour:
            lines = [b"\x1b[0;33m" + line + b"\x1b[0m" if line.strip() else line for line in lines]
        for layer in variation.layers:
            if layer.family == "tag":
                # a tag is told from a "name: value" line by its values repeating: a file
                # too short for that is left without it
                if len(lines) < 4:
                    continue
                layer = Layer(layer.family, layer.style, min(layer.hosts, len(lines) // 4))
            lines = [_prefix(layer, i, len(lines)) + line for i, line in enumerate(lines)]
    if variation.prompt:
        prompt = _PROMPT_LINES[variation.prompt].replace(b"{host}", host.encode())
        prompt = prompt.replace(b"{user}", b"svc-perf")
        lines.insert(0, b"\x1b[1;32m" + prompt + b"\x1b[0m" if variation.colour else prompt)
    out = b"\n".join(lines) + (b"\n" if ended or variation.prompt else b"")
    if variation.crlf:
        out = crlf(out)
    if variation.encoding != "utf-8":
        out = out.decode("utf-8", errors="replace").encode(variation.encoding)
    return out


def _prefix(layer: Layer, i: int, total: int) -> bytes:
    if layer.family == "stamp":
        return _stamp(layer.style, i)
    if layer.family == "tag":
        return _tag(layer, i, total)
    return _LAUNCHER_PREFIX[layer.style](i)


def contains(got: Any, want: Any) -> bool:
    """Whether every fact of ``want`` is read in ``got``: what the original left unknown
    (None) may be known now (a host from a prompt, a time from a collector), and lists may
    hold more (another program's line that is an event too), in the same order."""
    if want is None:
        return True
    if isinstance(want, dict):
        return isinstance(got, dict) and all(
            k in got and contains(got[k], v) for k, v in want.items()
        )
    if isinstance(want, list):
        if not isinstance(got, list):
            return False
        items = iter(got)
        return all(any(contains(item, w) for item in items) for w in want)
    return got == want


def named_host(facts_json: Any) -> str | None:
    """The first host a reading names (a prompt of the same session would name it too)."""
    if isinstance(facts_json, dict):
        host = facts_json.get("host")
        if isinstance(host, str) and host:
            return host
        values: Any = facts_json.values()
    elif isinstance(facts_json, list):
        values = facts_json
    else:
        return None
    return next((h for h in map(named_host, values) if h), None)


# Samples whose parser loses facts when another program's lines land inside its output (at
# a blank line in the middle of it: "noise_between") or right after a run cut short
# ("noise_after"), each with the reason, handed to the parser's owner in
# /tmp/brief/handoff.md: their variations leave that part out. Every other variation still
# applies to them.
NOISE_KNOWN: dict[str, tuple[tuple[str, ...], str]] = {
    "samples/nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log": (
        ("noise_between", "noise_after"),
        "nccl_tests (D): a result row completed after interleaved NCCL lines is lost when"
        " foreign lines follow (inside the run, or after the run cut short)",
    ),
}


def allowed(sample: str, variation: Variation) -> Variation:
    """The variation a sample is held to (see NOISE_KNOWN)."""
    fields, _reason = NOISE_KNOWN.get(sample, ((), ""))
    return dataclasses.replace(variation, **dict.fromkeys(fields, 0)) if fields else variation


def check_variation(
    name: str, data: bytes, kind: str, want: Any, variation: Variation, *, sample: str = ""
) -> str | None:
    """Why a variant of a sample (read as ``kind`` with facts ``want``) is not read alike,
    or None. A cut variant is held to what its fragment alone gives."""
    variation = allowed(sample, variation)
    document = is_document(kind, data)
    if not document and (variation.cut_head or variation.cut_tail):
        kind, want = reading(name, cut(data, variation))
        if kind in ("?", "other") or isinstance(want, str):
            return None  # the fragment holds none of the facts: nothing to keep
    changed = vary(data, variation, document=document, host=named_host(want) or "gpu07")
    got_kind, got = reading(name, changed)
    if got_kind != kind:
        return f"kind {got_kind}"
    if isinstance(got, str) or not contains(got, want):
        return "facts differ" if not isinstance(got, str) else got
    return None


@functools.lru_cache(maxsize=512)
def original_reading(path: Path) -> tuple[str, Any]:
    """(kind, facts) of a shared sample as stored, read once per test session."""
    return reading(path.name, path.read_bytes())
