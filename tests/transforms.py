"""How evidence really arrives, as transformations of a file's bytes.

Each function takes the bytes of a clean file and returns them as an engineer would have
them after a terminal paste, a launcher, a log collector or a Windows tool. The metamorphic
tests (tests/artifacts/test_real_inputs.py) and ``benchmarks/real_inputs.py`` apply every one
to every shared sample and expect the same kind and the same facts.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, BinaryIO

from artifacts.parsers import ParseError
from artifacts.parsers.detection import KEEPS_LINE_TIMES
from artifacts.parsers.reading import parse_file
from artifacts.parsers.streams import open_decompressed
from tests.samples import MORE_SAMPLES_DIR, SAMPLES_DIR

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
