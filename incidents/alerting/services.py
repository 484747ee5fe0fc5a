"""Alerting webhooks open and update incidents: receive, apply, replay.

``webhook_receive`` is the whole receiver: it checks the token, reads the body
(payloads.py), applies it and logs the call (``WebhookCall``) whatever the outcome, so every
call can be read and replayed. ``notification_apply`` is idempotent: alerts are matched to
incidents by fingerprint, then by ``groupKey`` (``AlertLink``), so a re-sent notification,
a repeated firing or a replay updates the same incident and never adds an event twice
(events carry a stable ``suggestion_key``).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from incidents.alerting import labels as label_maps
from incidents.alerting.payloads import AlertItem, Notification, PayloadError, read
from incidents.models import (
    AlertLink,
    Incident,
    MilestoneRecord,
    TimelineEvent,
    WebhookCall,
    WebhookReceiver,
)
from incidents.services import IncidentError, incident_create, incident_update

# Statuses before "resolved": a resolved notification moves these on; later ones stay.
_OPEN = (
    Incident.Status.INVESTIGATING,
    Incident.Status.IDENTIFIED,
    Incident.Status.MITIGATED,
)


@dataclass
class Outcome:
    status_code: int
    detail: str
    incidents: list[Incident] = field(default_factory=list)
    created: int = 0
    updated: int = 0
    resolved: int = 0

    def as_json(self, call: WebhookCall) -> dict[str, Any]:
        return {
            "detail": self.detail,
            "call": call.pk,
            "incidents": [i.pk for i in self.incidents],
            "created": self.created,
            "updated": self.updated,
            "resolved": self.resolved,
        }


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def webhook_receiver_create(
    *, name: str, kind: str = WebhookReceiver.Kind.ALERTMANAGER, token: str | None = None,
    label_map: dict[str, Any] | None = None,
) -> tuple[WebhookReceiver, str]:  # fmt: skip
    """A receiver and its token (shown once: only its sha256 is stored)."""
    label_maps.effective(label_map)  # refuse a bad map now, not at the first alert
    token = token or secrets.token_urlsafe(32)
    receiver = WebhookReceiver.objects.create(
        name=name, kind=kind, token_sha256=token_digest(token), label_map=label_map or {}
    )
    return receiver, token


def webhook_receive(
    *, kind: str, token: str, body: bytes, remote_addr: str = ""
) -> tuple[Outcome, WebhookCall]:
    """Check the token, apply the body, log the call. Never raises on bad input."""
    receiver = (
        WebhookReceiver.objects.filter(token_sha256=token_digest(token), enabled=True).first()
        if token
        else None
    )
    if receiver is None:
        outcome = Outcome(401, "unknown or missing webhook token")
    elif receiver.kind != kind:
        outcome = Outcome(400, f"this token belongs to a {receiver.kind} receiver, not {kind}")
    else:
        outcome = _apply_body(receiver, body)
    call = WebhookCall.objects.create(
        receiver=receiver, kind=kind, remote_addr=remote_addr[:64],
        body=body.decode("utf-8", "replace")[:1_000_000], status_code=outcome.status_code,
        outcome=outcome.detail,
    )  # fmt: skip
    call.incidents.set(outcome.incidents)
    _prune_call_log()
    return outcome, call


def _prune_call_log() -> None:
    """Drop calls older than ``PERFHUB_WEBHOOK_LOG_DAYS`` that changed no incident (refused
    calls, repeats): a chatty Alertmanager sends the same group every few minutes for as
    long as it fires. Calls that opened or updated an incident are its provenance and stay."""
    days = settings.PERFHUB_WEBHOOK_LOG_DAYS
    if days > 0:
        old = timezone.now() - timedelta(days=days)
        WebhookCall.objects.filter(received_at__lt=old, incidents=None).delete()


def webhook_replay(*, call: WebhookCall) -> tuple[Outcome, WebhookCall]:
    """Apply a logged call's body again (after fixing a label map, say); logged as a call
    of its own. Idempotent like any re-sent notification."""
    if call.receiver is None:
        raise IncidentError("this call had no valid token: there is no receiver to replay it for")
    outcome = _apply_body(call.receiver, call.body.encode())
    replay = WebhookCall.objects.create(
        receiver=call.receiver, kind=call.kind, body=call.body, status_code=outcome.status_code,
        outcome=f"replay of call {call.pk}: {outcome.detail}", replay_of=call,
    )  # fmt: skip
    replay.incidents.set(outcome.incidents)
    return outcome, replay


def _apply_body(receiver: WebhookReceiver, body: bytes) -> Outcome:
    try:
        notification = read(body, kind=receiver.kind)
        label_map = label_maps.effective(receiver.label_map)
    except (PayloadError, ValueError) as exc:
        return Outcome(400, str(exc))
    try:
        return notification_apply(receiver=receiver, notification=notification, label_map=label_map)
    except IncidentError as exc:
        return Outcome(400, str(exc))


@transaction.atomic
def notification_apply(
    *, receiver: WebhookReceiver, notification: Notification, label_map: dict[str, Any]
) -> Outcome:
    outcome = Outcome(200, "")
    touched: dict[int, Incident] = {}
    for alert in notification.alerts:
        incident, created = _incident_for(receiver, notification, alert, label_map)
        if incident is None:
            continue  # resolved before we ever saw it firing: nothing to open
        touched[incident.pk] = incident
        outcome.created += created
        _link_and_record(receiver, notification, alert, incident, label_map)
        _maybe_reopen(incident, alert)
    for incident in touched.values():
        if _maybe_resolve(receiver, notification, incident):
            outcome.resolved += 1
    outcome.updated = len(touched) - outcome.created
    outcome.incidents = list(touched.values())
    outcome.detail = (
        f"{len(notification.alerts)} alert(s): {outcome.created} incident(s) opened, "
        f"{outcome.updated} updated, {outcome.resolved} resolved"
    )
    if notification.truncated:
        outcome.detail += f" ({notification.truncated} more alert(s) truncated by the sender)"
    return outcome


def _incident_for(
    receiver: WebhookReceiver, notification: Notification, alert: AlertItem,
    label_map: dict[str, Any],
) -> tuple[Incident | None, bool]:  # fmt: skip
    links = AlertLink.objects.filter(receiver=receiver).select_related("incident")
    link = (
        links.filter(fingerprint=alert.fingerprint).first()
        or links.filter(group_key=notification.group_key).first()
    )
    if link is not None:
        return link.incident, False
    if alert.status == "resolved":
        return None, False
    return _open_incident(receiver, notification, alert, label_map), True


def _open_incident(
    receiver: WebhookReceiver, notification: Notification, alert: AlertItem,
    label_map: dict[str, Any],
) -> Incident:  # fmt: skip
    labels = {**notification.common_labels, **alert.labels}
    annotations = {**notification.common_annotations, **alert.annotations}
    mapped = label_maps.apply(label_map, labels, annotations)
    title = notification.title or mapped.title or "alert"
    if mapped.summary and mapped.summary not in title:
        title = f"{title}: {mapped.summary}"
    started = alert.starts_at or timezone.now()
    incident = incident_create(
        title=title[:200], severity=mapped.severity, by=None, cluster=mapped.cluster[:120],
        affected_hosts=list(mapped.hosts), affected_jobs=list(mapped.jobs),
        summary=_summary(receiver, notification, labels, annotations),
        milestones={"impact_started": started, "detected": started}, override=True,
        tags=["alert", receiver.name],
    )  # fmt: skip
    # incident_create records these as set by hand; say where they came from.
    incident.milestones.update(source=_source(receiver), note=f"alert {alert.fingerprint}")
    return incident


def _link_and_record(
    receiver: WebhookReceiver, notification: Notification, alert: AlertItem, incident: Incident,
    label_map: dict[str, Any],
) -> None:  # fmt: skip
    labels = {**notification.common_labels, **alert.labels}
    mapped = label_maps.apply(
        label_map, labels, {**notification.common_annotations, **alert.annotations}
    )
    link, _ = AlertLink.objects.get_or_create(
        receiver=receiver, group_key=notification.group_key, fingerprint=alert.fingerprint,
        defaults={"incident": incident, "labels": labels, "starts_at": alert.starts_at},
    )  # fmt: skip
    link.status, link.ends_at = alert.status, alert.ends_at if alert.status == "resolved" else None
    link.save(update_fields=["status", "ends_at", "last_seen"])
    new_hosts = [h for h in mapped.hosts if h not in incident.affected_hosts]
    if new_hosts:
        incident_update(
            incident=incident, by=None, affected_hosts=[*incident.affected_hosts, *new_hosts]
        )
    when = alert.ends_at if alert.status == "resolved" else alert.starts_at
    # One event per alert, status and start: a re-sent or repeated notification finds it.
    key = f"{receiver.kind}:{alert.fingerprint}:{alert.status}:{_stamp(alert.starts_at)}"[:200]
    if incident.events.filter(suggestion_key=key).exists():
        return
    where = ", ".join(mapped.hosts)
    text = f"**{receiver.get_kind_display()}: {mapped.title or 'alert'} {alert.status}**"
    text += f" on {where}" if where else ""
    if summary := mapped.summary:
        text += f": {summary[:400]}"
    TimelineEvent.objects.create(
        incident=incident, at=when or timezone.now(), kind=TimelineEvent.Kind.ALERT, text=text,
        ref_kind=receiver.kind, ref_id=alert.fingerprint[:40],
        link_url=alert.generator_url if _safe_url(alert.generator_url) else "",
        suggestion_key=key,
    )  # fmt: skip


def _maybe_resolve(
    receiver: WebhookReceiver, notification: Notification, incident: Incident
) -> bool:
    """When every alert linked to the incident is resolved, stamp mitigated and resolved at
    the last alert's end (provenance: the receiver's kind)."""
    links = list(incident.alert_links.all())
    if not links or any(link.status != "resolved" for link in links):
        return False
    ended = max((link.ends_at for link in links if link.ends_at), default=None)
    ended = ended or timezone.now()
    changed = False
    # Only milestones still empty: a time set by a person is never overwritten.
    for milestone in ("acknowledged", "mitigated", "resolved"):
        if incident.milestone(milestone) is None:
            setattr(incident, f"{milestone}_at", ended)
            MilestoneRecord.objects.create(
                incident=incident, milestone=milestone, at=ended, source=_source(receiver),
                override=True, note=f"group {notification.group_key}"[:300],
            )  # fmt: skip
            changed = True
    if incident.status in _OPEN:
        incident.status = Incident.Status.RESOLVED
        changed = True
    if changed:
        incident.save()
    return changed


def _maybe_reopen(incident: Incident, alert: AlertItem) -> None:
    """The alert fires again after the incident was resolved: the fix did not hold, so the
    incident goes back to investigating (its lifecycle times stay, as for a person's going
    back)."""
    resolved = incident.resolved_at
    if (
        alert.status == "firing"
        and incident.status == Incident.Status.RESOLVED
        and resolved is not None
        and alert.starts_at is not None
        and alert.starts_at > resolved
    ):
        incident.status = Incident.Status.INVESTIGATING
        incident.save(update_fields=["status", "updated_at"])


def _source(receiver: WebhookReceiver) -> str:
    if receiver.kind == WebhookReceiver.Kind.ALERTMANAGER:
        return MilestoneRecord.Source.ALERTMANAGER
    return MilestoneRecord.Source.WEBHOOK


def _summary(
    receiver: WebhookReceiver, notification: Notification, labels: dict[str, str],
    annotations: dict[str, str],
) -> str:  # fmt: skip
    lines = [f"Opened by the `{receiver.name}` webhook receiver ({receiver.get_kind_display()})."]
    lines += [f"- **{k}**: {v}" for k, v in sorted(annotations.items())]
    lines.append("")
    lines.append("Labels: " + ", ".join(f"`{k}={v}`" for k, v in sorted(labels.items())))
    if notification.external_url and _safe_url(notification.external_url):
        lines.append(f"\nSource: <{notification.external_url}>")
    return "\n".join(lines)


def _safe_url(url: str) -> bool:
    return url.startswith(("http://", "https://")) and not any(c.isspace() for c in url)


def _stamp(value: datetime | None) -> str:
    return value.isoformat() if value else ""
