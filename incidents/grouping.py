"""Fold suggestions that report the same symptom into one group.

An 8-rank job whose collective hangs prints the same watchdog timeout on every rank, then
the same "exception detected by watchdog" line: sixteen suggestions that all say one thing.
Suggestions carry a ``symptom`` (see ``suggestions.log_symptom``, findings and baseline
alerts); those with the same symptom within ``GROUP_WINDOW`` of each other become one
``SuggestionGroup``: one line on the page with counts, hosts and ranks, expandable to the
individual lines, and one timeline event linked to all of them when accepted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from incidents.suggestions import Suggestion, suggestions_for

if TYPE_CHECKING:
    from incidents.models import Incident

# Reports of one symptom further apart than this are separate moments (a second hang an hour
# later is a second event, not a 200th rank of the first one).
GROUP_WINDOW = timedelta(minutes=10)
GROUP_PREFIX = "group:"
# Alerts of one alert summary are one change however far apart its runs are: no window.
WINDOWLESS = ("alert|",)


@dataclass(frozen=True)
class SuggestionGroup:
    """Suggestions of one symptom close in time; reads like a ``Suggestion`` (same fields)."""

    key: str
    at: datetime
    last_at: datetime
    kind: str
    text: str
    source: str
    artifact_id: int
    members: tuple[Suggestion, ...]
    hosts: tuple[str, ...]
    ranks: tuple[int, ...]
    run_id: int | None = None
    approximate_time: bool = False
    ref_kind: str = "group"
    ref_id: str = ""
    link_url: str = ""
    symptom: str = ""
    is_group: bool = field(default=True, init=False)

    @property
    def count(self) -> int:
        return len(self.members)

    def sources(self) -> list[dict[str, Any]]:
        """What an accepted group's event links to: every member's artifact, run and ref."""
        return [
            {
                "key": m.key,
                "at": m.at.isoformat(),
                "artifact_id": m.artifact_id,
                "run_id": m.run_id,
                "ref_kind": m.ref_kind or m.source,
                "ref_id": m.ref_id,
                "link_url": m.link_url,
                "host": m.host,
                "rank": m.rank,
            }
            for m in self.members
        ]


def grouped_for(incident: Incident) -> list[Suggestion | SuggestionGroup]:
    """The incident's open suggestions as the page shows them: groups folded in."""
    return group_suggestions(suggestions_for(incident))


def find_open(incident: Incident, key: str) -> Suggestion | SuggestionGroup | None:
    """A suggestion or group by key, decided or not (the service checks decisions)."""
    found = suggestions_for(incident, include_decided=True)
    if not key.startswith(GROUP_PREFIX):
        return next((s for s in found if s.key == key), None)
    # A group is looked up among the undecided members only: members accepted one by one
    # have left the group, and the group's key is what the page showed.
    items = group_suggestions(suggestions_for(incident))
    return next((s for s in items if s.key == key), None)


def group_suggestions(found: Iterable[Suggestion]) -> list[Suggestion | SuggestionGroup]:
    """Suggestions with groups folded in, oldest first. A symptom seen once stays as it is."""
    singles: list[Suggestion | SuggestionGroup] = []
    by_symptom: dict[str, list[Suggestion]] = {}
    for suggestion in found:
        if suggestion.symptom:
            by_symptom.setdefault(suggestion.symptom, []).append(suggestion)
        else:
            singles.append(suggestion)
    for members in by_symptom.values():
        ordered = sorted(members, key=lambda s: (s.at, s.key))
        windows = [ordered] if ordered[0].symptom.startswith(WINDOWLESS) else _windows(ordered)
        for run in windows:
            singles.append(run[0] if len(run) == 1 else _group(run))
    return sorted(singles, key=lambda s: (s.at, s.key))


def _windows(members: list[Suggestion]) -> list[list[Suggestion]]:
    runs: list[list[Suggestion]] = []
    for suggestion in members:
        if runs and suggestion.at - runs[-1][-1].at <= GROUP_WINDOW:
            runs[-1].append(suggestion)
        else:
            runs.append([suggestion])
    return runs


def _group(members: list[Suggestion]) -> SuggestionGroup:
    first, last = members[0], members[-1]
    hosts = tuple(sorted({m.host for m in members if m.host}))
    ranks = tuple(sorted({m.rank for m in members if m.rank is not None}))
    digest = hashlib.sha256(f"{first.symptom}\n{first.key}".encode()).hexdigest()[:20]
    kinds = {m.kind for m in members}
    return SuggestionGroup(
        key=f"{GROUP_PREFIX}{first.source}:{digest}",
        at=first.at,
        last_at=last.at,
        kind="alert" if "alert" in kinds else first.kind,
        text=group_text(members, hosts, ranks),
        source=first.source,
        artifact_id=first.artifact_id,
        members=tuple(members),
        hosts=hosts,
        ranks=ranks,
        approximate_time=any(m.approximate_time for m in members),
        link_url=first.link_url,
        symptom=first.symptom,
    )


def group_text(members: list[Suggestion], hosts: tuple[str, ...], ranks: tuple[int, ...]) -> str:
    """ "NCCL watchdog timeout in ALLGATHER seq 1 on 8 ranks of 2 hosts, 120 s, first at ..."."""
    first, last = members[0], members[-1]
    text = f"**{first.symptom_label or first.source}**"
    host_part = f"{len(hosts)} host{'s' if len(hosts) != 1 else ''}"
    if ranks:
        text += f" on {len(ranks)} rank{'s' if len(ranks) != 1 else ''}"
        text += f" of {host_part}" if hosts else ""
    elif hosts:
        text += f" on {host_part}"
    if first.detail:
        text += f", {first.detail}"
    text += f", first at {_time(first.at)}"
    spread = (last.at - first.at).total_seconds()
    if spread > 0:
        text += f", last {spread:.3g} s later"
    text += f" ({len(members)} reports"
    if hosts:
        shown = ", ".join(hosts[:8]) + (f" and {len(hosts) - 8} more" if len(hosts) > 8 else "")
        text += f"; hosts {shown}"
    if ranks:
        text += f"; ranks {_ranges(ranks)}"
    return text + ")"


def _time(at: datetime) -> str:
    at = at.astimezone(UTC)
    stamp = at.strftime("%Y-%m-%d %H:%M:%S")
    return stamp + (f".{at.microsecond:06d}" if at.microsecond else "") + " UTC"


def _ranges(values: tuple[int, ...]) -> str:
    """0-7, 9, 12-13: rank lists of big jobs stay short."""
    parts: list[str] = []
    start = prev = values[0]
    for value in (*values[1:], None):
        if value is not None and value == prev + 1:
            prev = value
            continue
        parts.append(f"{start}-{prev}" if prev > start else str(start))
        if value is not None:
            start = prev = value
    return ", ".join(parts)
