"""Timeline suggestions from an incident's evidence: one function per evidence kind.

A suggester takes an artifact and yields ``Suggestion``s; ``SUGGESTERS`` maps an artifact
kind to its suggesters ("*" applies to every artifact). Adding a kind (counter findings,
regression alerts, ...) is one function and one line in the dict. Keys are stable across
re-parses (they name the artifact by sha256 and the item by its position in the file), so a
decision taken on a suggestion sticks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache

from artifacts.models import Artifact
from artifacts.parsers import ParseError, get_parser
from artifacts.parsers.streams import open_decompressed
from artifacts.times import aware_datetime

if TYPE_CHECKING:
    from .models import Incident

log = logging.getLogger(__name__)

# NCCL debug-log event kinds worth a timeline entry; communicator init/destroy lines are
# routine and would drown the rest.
NCCL_EVENT_KINDS = {
    "nccl_warn": "alert",
    "comm_abort": "alert",
    "watchdog_timeout": "alert",
    "watchdog_exception": "alert",
    "work_timeout": "alert",
    "nccl_error": "alert",
    "dist_backend_error": "alert",
    "watchdog_stuck": "alert",
}
MAX_PER_ARTIFACT = 100
EVENT_CACHE_SECONDS = 3600


@dataclass(frozen=True)
class Suggestion:
    key: str
    at: datetime
    kind: str  # a TimelineEvent.Kind value
    text: str
    source: str  # what produced it, e.g. "nccl_debug"
    artifact_id: int
    run_id: int | None = None
    approximate_time: bool = False  # the source had no timestamp; the artifact's time is used


Suggester = Callable[[Artifact], Iterable[Suggestion]]


def from_artifact_times(artifact: Artifact) -> Iterator[Suggestion]:
    """When the evidence was captured (upload metadata) and when it reached PerfHub."""
    tag = artifact.sha256[:16]
    if artifact.captured_at:
        yield Suggestion(
            key=f"artifact:{tag}:captured",
            at=artifact.captured_at,
            kind="evidence",
            text=f"Evidence captured: `{artifact.original_name}` ({artifact.get_kind_display()})",
            source="artifact",
            artifact_id=artifact.pk,
        )
    yield Suggestion(
        key=f"artifact:{tag}:uploaded",
        at=artifact.uploaded_at,
        kind="evidence",
        text=f"Evidence uploaded to PerfHub: `{artifact.original_name}`",
        source="artifact",
        artifact_id=artifact.pk,
    )


def from_failed_runs(artifact: Artifact) -> Iterator[Suggestion]:
    """nccl-tests runs that failed (errors) or stopped before their footer."""
    tag = artifact.sha256[:16]
    for run in artifact.runs.all():
        what = f"{run.collective or run.benchmark} on {run.nranks or '?'} ranks"
        if run.errors:
            text = f"nccl-tests {what} failed: `{str(run.errors[0])[:300]}`"
            if len(run.errors) > 1:
                text += f" (+{len(run.errors) - 1} more)"
        elif not run.complete:
            text = f"nccl-tests {what} stopped before its footer (truncated output)"
        else:
            continue
        yield Suggestion(
            key=f"run:{tag}:{run.index}:failed",
            at=run.measured_at,
            kind="observation",
            text=text,
            source="nccl_tests",
            artifact_id=artifact.pk,
            run_id=run.pk,
        )


def from_nccl_debug_events(artifact: Artifact) -> Iterator[Suggestion]:
    """NCCL WARNs, aborts and PyTorch watchdog timeouts with their own timestamps."""
    tag = artifact.sha256[:16]
    fallback = artifact.captured_at or artifact.uploaded_at
    count = 0
    for event in nccl_debug_events(artifact):
        timeline_kind = NCCL_EVENT_KINDS.get(str(event.get("kind")))
        if timeline_kind is None:
            continue
        at, approximate = _event_time(event.get("time"), fallback)
        where = " ".join(
            part
            for part in (
                f"on {event['host']}" if event.get("host") else "",
                f"rank {event['rank']}" if event.get("rank") is not None else "",
            )
            if part
        )
        repeats = (event.get("details") or {}).get("repeats", 1)
        text = f"{_EVENT_LABELS.get(event['kind'], event['kind'])}{' ' + where if where else ''}: "
        text += f"`{str(event.get('text', ''))[:400]}`"
        if repeats and repeats > 1:
            text += f" (repeated {repeats} times)"
        yield Suggestion(
            key=f"nccl:{tag}:{event.get('line', count)}:{event['kind']}",
            at=at,
            kind=timeline_kind,
            text=text,
            source="nccl_debug",
            artifact_id=artifact.pk,
            approximate_time=approximate,
        )
        count += 1
        if count >= MAX_PER_ARTIFACT:
            return


_EVENT_LABELS = {
    "nccl_warn": "NCCL WARN",
    "comm_abort": "NCCL communicator aborted",
    "watchdog_timeout": "PyTorch watchdog timeout",
    "watchdog_exception": "PyTorch watchdog exception",
    "work_timeout": "NCCL work timeout",
    "nccl_error": "NCCL error",
    "dist_backend_error": "DistBackendError",
    "watchdog_stuck": "Watchdog stuck",
}

SUGGESTERS: dict[str, list[Suggester]] = {
    "*": [from_artifact_times],
    "nccl_tests": [from_failed_runs],
    "nccl_debug": [from_nccl_debug_events],
}


def nccl_debug_events(artifact: Artifact) -> list[dict[str, Any]]:
    """The parsed events of an nccl_debug artifact.

    Taken from ``Artifact.summary["events"]`` when the parser stored them there; otherwise
    the stored file is parsed again (cached per sha256 and parser version).
    """
    if isinstance(artifact.summary.get("events"), list):
        return artifact.summary["events"]
    if artifact.status != Artifact.Status.PARSED:
        return []
    cache_key = f"incidents:nccl-events:{artifact.sha256}:{artifact.parser_version}"
    cached = cache.get(cache_key)
    if cached is not None:
        return cached
    try:
        parser = get_parser(artifact.kind)
        with artifact.file.open("rb") as raw:
            stream = open_decompressed(
                raw,
                compressed_size=artifact.size,
                max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
                max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
            )
            result = parser.parse(stream)
    except (ParseError, OSError) as exc:
        log.warning("no suggestions from artifact %s: %s", artifact.pk, exc)
        return []
    events = [_event_dict(e) for e in getattr(result, "events", ())]
    cache.set(cache_key, events, EVENT_CACHE_SECONDS)
    return events


def suggestions_for(incident: Incident, *, include_decided: bool = False) -> list[Suggestion]:
    """All open suggestions for an incident's evidence, oldest first."""
    artifacts = [
        link.artifact
        for link in incident.evidence.select_related("artifact").prefetch_related("artifact__runs")
    ]
    decided = set() if include_decided else set(incident.decisions.values_list("key", flat=True))
    found: dict[str, Suggestion] = {}
    for artifact in artifacts:
        for suggester in [*SUGGESTERS["*"], *SUGGESTERS.get(artifact.kind, [])]:
            for suggestion in suggester(artifact):
                if suggestion.key not in decided:
                    found.setdefault(suggestion.key, suggestion)
    return sorted(found.values(), key=lambda s: (s.at, s.key))


def suggestion_by_key(incident: Incident, key: str) -> Suggestion | None:
    return next((s for s in suggestions_for(incident, include_decided=True) if s.key == key), None)


def _event_time(text: Any, fallback: datetime) -> tuple[datetime, bool]:
    if text:
        try:
            return aware_datetime(str(text)), False
        except ValueError:
            pass
    return fallback, True


def _event_dict(event: Any) -> dict[str, Any]:
    return {
        "kind": event.kind,
        "time": event.time,
        "host": event.host,
        "rank": event.rank,
        "text": event.text,
        "line": getattr(event, "line", None),
        "details": dict(getattr(event, "details", {}) or {}),
    }
