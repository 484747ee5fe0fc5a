"""Nsight Systems report files (``.nsys-rep``, formerly ``.qdrep``): kept as evidence.

The report is NVIDIA's own container format, readable only by nsys. PerfHub keeps the file
(download it, attach it to incidents) and tells the user how to get the analysable SQLite
export. The parse "succeeds" with that message as a warning, so the artifact is not shown as
failed: nothing is wrong with the file, it just needs one more step.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.parsers.base import ParseError, ParseResult

KIND = "nsys_rep"
VERSION = 1

# Every report starts with this signature (from the days nsys was the Tegra profiler),
# followed by the version as year@release@patch@build.
MAGIC = b"NVIDIA Tegra Profiler Report"
_VERSION = re.compile(rb"^NVIDIA Tegra Profiler Report (\d{4})@(\d+)@(\d+)@(\d+)")
CHUNK = 1024 * 1024
EXPORT_HINT = (
    "An .nsys-rep report is kept as evidence but cannot be analysed here: export it with "
    "`nsys export --type sqlite --lazy=false report.nsys-rep` and upload the .sqlite file "
    "for kernel, memory, API, NVTX and GPU utilisation summaries."
)


@dataclasses.dataclass(frozen=True)
class NsysRepResult(ParseResult):
    kind: ClassVar[str] = KIND
    nsys_version: str | None = None
    size_bytes: int = 0
    message: str = EXPORT_HINT

    def summary(self) -> dict[str, Any]:
        return {"nsys_version": self.nsys_version, "needs": "nsys export --type sqlite"}


def accepts(name: str, head: bytes) -> bool:
    return head.startswith(MAGIC)


def parse(stream: BinaryIO) -> NsysRepResult:
    try:
        head = stream.read(CHUNK)
        size = len(head)
        while chunk := stream.read(CHUNK):
            size += len(chunk)
    except ParseError:
        raise
    except (OSError, ValueError, EOFError) as exc:
        raise ParseError(f"could not read the file: {exc}", permanent=False) from exc
    if not head.startswith(MAGIC):
        raise ParseError(
            "not an Nsight Systems report: the file does not start with the .nsys-rep "
            "signature ('NVIDIA Tegra Profiler Report')"
        )
    m = _VERSION.match(head)
    version = ".".join(g.decode() for g in m.groups()) if m else None
    return NsysRepResult(nsys_version=version, size_bytes=size, warnings=(EXPORT_HINT,))
