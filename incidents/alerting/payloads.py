"""Read an alerting webhook's JSON into a ``Notification`` (pure: no Django).

Two shapes, one reader: Prometheus Alertmanager's webhook (``version`` "4", ``groupKey``,
``alerts[]`` with ``fingerprint``) and the generic shape other tools send (Grafana alerting's
webhook contact point is the Alertmanager shape plus ``title``/``state``/``message``; a tool
that sends no ``groupKey`` or ``fingerprint`` gets them computed from its labels). Anything
that is not one of them raises ``PayloadError`` with the reason, which the receiver answers
as 400.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

STATUSES = ("firing", "resolved")
# Alertmanager sends this for "not ended yet".
_ZERO_TIME = "0001-01-01T00:00:00Z"


class PayloadError(ValueError):
    """The body is not a notification this receiver reads; the message says why."""


@dataclass(frozen=True)
class AlertItem:
    fingerprint: str
    status: str
    labels: dict[str, str]
    annotations: dict[str, str]
    starts_at: datetime | None
    ends_at: datetime | None
    generator_url: str = ""


@dataclass(frozen=True)
class Notification:
    group_key: str
    status: str
    receiver: str
    alerts: tuple[AlertItem, ...]
    common_labels: dict[str, str] = field(default_factory=dict)
    common_annotations: dict[str, str] = field(default_factory=dict)
    external_url: str = ""
    title: str = ""
    truncated: int = 0  # alerts Alertmanager left out (max_alerts): said in the call's outcome


def read(body: bytes | str, *, kind: str) -> Notification:
    """The notification in ``body``; ``kind`` "alertmanager" insists on version 4."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise PayloadError(f"body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PayloadError("body must be a JSON object")
    if kind == "alertmanager":
        version = data.get("version")
        if str(version) != "4":
            raise PayloadError(f"unsupported Alertmanager webhook version {version!r} (want '4')")
        if not isinstance(data.get("groupKey"), str) or not data["groupKey"]:
            raise PayloadError("groupKey is missing")
    alerts = data.get("alerts")
    if not isinstance(alerts, list) or not alerts:
        raise PayloadError("alerts must be a non-empty list")
    items = tuple(_alert(a, i) for i, a in enumerate(alerts))
    group_labels = _labels(data.get("groupLabels"), "groupLabels")
    status = str(data.get("status") or _worst(items))
    if status not in STATUSES:
        raise PayloadError(f"status must be firing or resolved, not {status!r}")
    group_key = data.get("groupKey") or _digest({"group": group_labels or items[0].labels})
    return Notification(
        group_key=str(group_key)[:500],
        status=status,
        receiver=str(data.get("receiver") or ""),
        alerts=items,
        common_labels=_labels(data.get("commonLabels"), "commonLabels"),
        common_annotations=_labels(data.get("commonAnnotations"), "commonAnnotations"),
        external_url=str(data.get("externalURL") or ""),
        title=str(data.get("title") or ""),
        truncated=_count(data.get("truncatedAlerts")),
    )


def _alert(raw: Any, index: int) -> AlertItem:
    where = f"alerts[{index}]"
    if not isinstance(raw, dict):
        raise PayloadError(f"{where} must be an object")
    labels = _labels(raw.get("labels"), f"{where}.labels")
    if not labels:
        raise PayloadError(f"{where}.labels is missing or empty")
    status = str(raw.get("status") or "firing")
    if status not in STATUSES:
        raise PayloadError(f"{where}.status must be firing or resolved, not {status!r}")
    fingerprint = raw.get("fingerprint") or _digest(labels)
    return AlertItem(
        fingerprint=str(fingerprint)[:200],
        status=status,
        labels=labels,
        annotations=_labels(raw.get("annotations"), f"{where}.annotations"),
        starts_at=_time(raw.get("startsAt"), f"{where}.startsAt"),
        ends_at=_time(raw.get("endsAt"), f"{where}.endsAt"),
        generator_url=str(raw.get("generatorURL") or ""),
    )


def _labels(raw: Any, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise PayloadError(f"{where} must be an object of strings")
    return {str(k): str(v) for k, v in raw.items()}


def _time(raw: Any, where: str) -> datetime | None:
    if raw in (None, "", _ZERO_TIME) or str(raw).startswith("0001-01-01"):
        return None
    try:
        value = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        raise PayloadError(f"{where} is not an RFC 3339 time: {raw!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _count(raw: Any) -> int:
    try:
        return max(0, int(raw or 0))
    except (TypeError, ValueError):
        return 0


def _worst(items: tuple[AlertItem, ...]) -> str:
    return "firing" if any(a.status == "firing" for a in items) else "resolved"


def _digest(labels: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(labels, sort_keys=True).encode()).hexdigest()[:16]
