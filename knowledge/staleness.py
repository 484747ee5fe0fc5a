"""When a page stops being trustworthy. Pure: plain values in, a verdict with reasons out.

A published page is *fresh* while both hold:

1. it was verified within its interval (``verify_interval_days``; 0 = no time limit).
   Verified means an explicit "verify" action with a note, or a cited measurement that
   passed (a complete nccl-tests run without errors), whichever is newer;
2. for every software dimension the page constrains (NCCL, driver, CUDA, kernel, OFED/DOCA,
   NIC firmware), no version inside that range has been seen that is newer than what the
   page was verified on. When no verification recorded a version for that dimension, a
   version in range first seen *after* the newest verification counts as newer.

Drafts are not trusted yet and deprecated pages no longer are, so neither is ever "stale".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from knowledge.applicability import LABELS, RANGE_DIMENSIONS
from knowledge.versions import VersionError, VersionRange, version_key


@dataclass(frozen=True)
class Verification:
    at: datetime
    versions: Mapping[str, str] = field(default_factory=dict)  # dimension -> version verified on


@dataclass(frozen=True)
class KnownVersion:
    """A software version PerfHub has seen somewhere (runs, uploads, profiles)."""

    dimension: str
    version: str
    first_seen: datetime


@dataclass(frozen=True)
class Freshness:
    stale: bool
    reasons: tuple[str, ...]
    verified_at: datetime | None
    due_at: datetime | None  # when time alone makes it stale

    @property
    def state(self) -> str:
        return "stale" if self.stale else "fresh"


NOT_CHECKED = Freshness(stale=False, reasons=(), verified_at=None, due_at=None)


def freshness(
    *,
    status: str,
    applicability: Mapping[str, Any],
    interval_days: int,
    verifications: Iterable[Verification],
    known: Iterable[KnownVersion],
    now: datetime,
) -> Freshness:
    checks = list(verifications)
    verified_at = max((v.at for v in checks), default=None)
    due_at = verified_at + timedelta(days=interval_days) if verified_at and interval_days else None
    if status != "published":
        return Freshness(False, (), verified_at, due_at)
    reasons: list[str] = []
    if verified_at is None:
        reasons.append("never verified")
    elif due_at is not None and now > due_at:
        age = (now - verified_at).days
        reasons.append(f"last verified {age} days ago (interval {interval_days} days)")
    reasons += _newer_versions(applicability, checks, list(known), verified_at)
    return Freshness(bool(reasons), tuple(reasons), verified_at, due_at)


def _newer_versions(
    applicability: Mapping[str, Any],
    checks: list[Verification],
    known: list[KnownVersion],
    verified_at: datetime | None,
) -> list[str]:
    reasons: list[str] = []
    for dim in RANGE_DIMENSIONS:
        spec = applicability.get(dim)
        if not spec:
            continue
        try:
            version_range = VersionRange.parse(str(spec))
        except VersionError:
            continue
        in_range = [k for k in known if k.dimension == dim and version_range.contains(k.version)]
        if not in_range:
            continue
        verified = [_key(v.versions[dim]) for v in checks if v.versions.get(dim)]
        verified = [k for k in verified if k is not None]
        if verified:
            best = max(verified)
            newer = [k for k in in_range if version_key(k.version) > best]
        elif verified_at is not None:
            newer = [k for k in in_range if k.first_seen > verified_at]
        else:
            newer = []  # "never verified" already says it
        if newer:
            top = max(newer, key=lambda k: version_key(k.version))
            reasons.append(
                f"{LABELS[dim]} {top.version} is within the page's range ({spec}) "
                "but the page was not verified on it"
            )
    return reasons


def _key(version: str) -> tuple[tuple[int, int | str], ...] | None:
    try:
        return version_key(version)
    except VersionError:
        return None
