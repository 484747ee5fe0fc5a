"""What the support-bundle parsers share: the member record, limits, safe names, kind choice.

A bundle (nvidia-bug-report log, sysinfo-snapshot archive) is a container of other
evidence. Its parser lists the parts (``BundlePart``) and can hand each part's bytes to the
caller (``iter_parts`` in each module), who stores every part as its own artifact and lets
the registry parser of the part's kind read it. Pure Python: no Django here.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import tempfile
from collections.abc import Sequence
from typing import BinaryIO

# Limits against archive bombs and absurd bundles; the caller may pass tighter ones.
MAX_PARTS = 2000  # parts listed (and stored) per bundle
MAX_PART_BYTES = 256 * 1024 * 1024  # one part larger than this is listed but not stored
MAX_TOTAL_BYTES = 4 * 1024**3  # bytes read out of one bundle in all
SPOOL_BYTES = 8 * 1024 * 1024  # parts up to this size stay in memory while handed over
HEAD_BYTES = 64 * 1024

# Parsers whose sniffers take any "name: integer" list: in a bundle they only get a part
# whose name says what it is, or /proc/meminfo and driver registry dumps would pass for
# NIC counters.
GENERIC_KINDS = {"ethtool_stats": ("ethtool",), "rdma_counters": ("counter", "rdma", "hw_")}


@dataclasses.dataclass(frozen=True)
class Limits:
    max_parts: int = MAX_PARTS
    max_part_bytes: int = MAX_PART_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES


@dataclasses.dataclass(frozen=True)
class BundlePart:
    """One section/member. ``kind`` is the registry kind chosen for it ("other": none).

    ``stored`` is False for parts not worth or not safe to store on their own; ``note``
    says why (empty, no parser, unsafe path, over a limit). Line numbers are 1-based and
    refer to the (decompressed) bundle text; archives have none.
    """

    index: int
    name: str  # safe file name for the extracted part
    title: str  # section header / member path as found in the bundle
    kind: str
    size: int
    stored: bool
    note: str = ""
    line_start: int | None = None
    line_end: int | None = None
    # What plain detect_kind said of the part's name and head when choosing its kind ran it
    # ("" when a hinted kind was taken without it): ingest stores it as the member's
    # kind_detected instead of sniffing the same bytes again.
    detected: str = ""


def new_spool() -> BinaryIO:
    return tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # type: ignore[return-value]


_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._+@=-]+")


def safe_archive_path(path: str) -> str | None:
    """The member path normalised, or None when it tries to leave the archive (``..``,
    absolute paths, drive letters). Nothing is ever written to disk under this name; it is
    refused so that a hostile archive cannot masquerade as a system file in the listing."""
    if not path or "\x00" in path:
        return None
    cleaned = path.replace("\\", "/")
    if cleaned.startswith("/") or re.match(r"^[A-Za-z]:", cleaned):
        return None
    parts = [p for p in cleaned.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return posixpath.join(*parts)


def file_name(text: str, *, suffix: str = "") -> str:
    """A display/file name made of safe characters only (no separators), at most 200 long."""
    slug = _UNSAFE_CHARS.sub("_", text).strip("._") or "part"
    return (slug[: 200 - len(suffix)] + suffix) if not slug.endswith(suffix) else slug[:200]


def choose_kind(name: str, head: bytes, *, hints: tuple[str, ...] = ()) -> str:
    """The registry kind for a part: a hinted kind whose parser accepts it, else detection.

    Generic counter sniffers are only trusted when the part's name or title names them.
    """
    return choose_kind_detected(name, head, hints=hints)[0]


def choose_kind_detected(name: str, head: bytes, *, hints: tuple[str, ...] = ()) -> tuple[str, str]:
    """``choose_kind`` and what ``detect_kind`` said on the way ("" when it did not run)."""
    from artifacts.parsers import (  # the registry imports this module
        OTHER,
        PARSERS,
        detect_kind,
        get_parser,
    )

    for kind in hints:
        if kind in PARSERS and get_parser(kind).accepts(name, head):
            return kind, ""
    detected = kind = detect_kind(name, head)
    words = GENERIC_KINDS.get(kind)
    if words is not None and not any(w in name.lower() for w in words):
        return OTHER, detected
    if kind in ("nvidia_bug_report", "sysinfo_snapshot", "trace_archive"):
        return OTHER, detected  # a bundle inside a bundle is kept, not unpacked again
    return kind, detected


def known_kind(
    known: Sequence[BundlePart], index: int, title: str, size: int
) -> tuple[str, str] | None:
    """The (kind, detected) the bundle's parse chose for this part, when ``known`` (the
    parse's parts, handed to the unpack walk) lists the same part at the same place.

    The unpack walk reads the same bytes as the parse did, so the kind is the same one;
    reusing it saves detecting every member a second time. Anything that does not line up
    (another listing, a changed file) is detected afresh.
    """
    if index < len(known):
        part = known[index]
        if part.title == title and part.size == size:
            return part.kind, part.detected
    return None
