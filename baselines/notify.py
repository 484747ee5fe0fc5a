"""Telling subscribers about new alert summaries: e-mail (Django's mail backend) or a
Slack-compatible webhook (JSON POST with ``text`` and ``blocks``), at once or as a digest.

Each (subscription, summary) pair is a ``Delivery`` row, so a summary reaches a subscriber
at most once however often the pipeline re-evaluates; failed deliveries keep the error and
are retried by the digest run (``manage.py send_alert_digests``, task ``baselines.send_digests``).
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections import defaultdict
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from baselines.models import Alert, AlertSummary, Delivery, Subscription

log = logging.getLogger(__name__)
WEBHOOK_TIMEOUT_S = 10
MAX_ATTEMPTS = 3
ALERTS_PER_MESSAGE = 10


def base_url() -> str:
    """Where links in messages point (``PERFHUB_BASE_URL`` setting; the dev server by default)."""
    return str(getattr(settings, "PERFHUB_BASE_URL", "") or "http://127.0.0.1:8000").rstrip("/")


def summary_notify(*, summary_id: int) -> list[Delivery]:
    """Deliver one new summary to every subscription that wants it (digests: queued)."""
    summary = AlertSummary.objects.select_related("profile").filter(pk=summary_id).first()
    if summary is None:
        return []
    # A subscription's "benchmark/collective" matches either: all_reduce, or a metrics
    # upload's benchmark (megatron-gpt3), or one of its metrics (tokens_per_s).
    names = summary.alerts.values_list("series__collective", "series__benchmark")
    collectives = {name for pair in names for name in pair if name}
    deliveries = []
    for subscription in Subscription.objects.filter(active=True).order_by("pk"):
        if not subscription.wants(summary, collectives):
            continue
        delivery, _ = Delivery.objects.get_or_create(subscription=subscription, summary=summary)
        if delivery.state == Delivery.State.SENT or subscription.digest:
            deliveries.append(delivery)
            continue
        _deliver(subscription, [delivery])
        deliveries.append(delivery)
    return deliveries


def digests_send() -> int:
    """One message per digest subscription with its pending summaries, and a retry of failed
    immediate deliveries. Returns the number of messages sent."""
    due = (
        Delivery.objects.filter(subscription__active=True)
        .filter(state__in=[Delivery.State.PENDING, Delivery.State.FAILED])
        .filter(attempts__lt=MAX_ATTEMPTS)
        .select_related("subscription", "summary__profile")
        .order_by("subscription_id", "summary__created_at")
    )
    by_subscription: dict[int, list[Delivery]] = defaultdict(list)
    for delivery in due:
        by_subscription[delivery.subscription_id].append(delivery)
    sent = 0
    for deliveries in by_subscription.values():
        subscription = deliveries[0].subscription
        batches = [deliveries] if subscription.digest else [[d] for d in deliveries]
        for batch in batches:
            sent += _deliver(subscription, batch)
    return sent


def _deliver(subscription: Subscription, deliveries: list[Delivery]) -> int:
    summaries = [d.summary for d in deliveries]
    try:
        if subscription.channel == Subscription.Channel.WEBHOOK:
            webhook_post(subscription.target, webhook_payload(summaries, digest=len(summaries) > 1))
        else:
            subject, body = email_message(summaries)
            recipients = [a.strip() for a in subscription.target.split(",") if a.strip()]
            send_mail(subject, body, None, recipients, fail_silently=False)
    except (OSError, ValueError, urllib.error.URLError) as exc:
        log.warning("notification to %s failed: %s", subscription, exc)
        for d in deliveries:
            d.state, d.error, d.attempts = Delivery.State.FAILED, str(exc)[:2000], d.attempts + 1
            d.save(update_fields=["state", "error", "attempts"])
        return 0
    now = timezone.now()
    for d in deliveries:
        d.state, d.error, d.attempts, d.sent_at = Delivery.State.SENT, "", d.attempts + 1, now
        d.save(update_fields=["state", "error", "attempts", "sent_at"])
    return 1


# ---------------------------------------------------------------------------------- content


def _alert_lines(summary: AlertSummary) -> list[str]:
    alerts = (
        summary.alerts.select_related("series")
        .exclude(status=Alert.Status.INVALID)
        .order_by("magnitude_pct")[:ALERTS_PER_MESSAGE]
    )
    return [
        f"  {a.get_kind_display()} {a.magnitude_pct:+.1f}%  {a.series.identity_text()}"
        for a in alerts
    ]


def email_message(summaries: list[AlertSummary]) -> tuple[str, str]:
    if len(summaries) == 1:
        subject = f"[PerfHub] {summaries[0].title}"
    else:
        subject = f"[PerfHub] {len(summaries)} new alert summaries"
    blocks = []
    for s in summaries:
        blocks.append("\n".join([s.title, f"{base_url()}{s.get_absolute_url()}", *_alert_lines(s)]))
    footer = f"\n\nManage subscriptions: {base_url()}/baselines/subscriptions/"
    return subject[:250], "\n\n".join(blocks) + footer


def webhook_payload(summaries: list[AlertSummary], *, digest: bool = False) -> dict[str, Any]:
    """Slack's incoming-webhook shape (``text`` + ``blocks``), plus ``perfhub`` with the data
    for receivers that are not Slack (Mattermost and Teams connectors read ``text``)."""
    head = (
        f"{len(summaries)} new PerfHub alert summaries"
        if digest
        else f"PerfHub alert: {summaries[0].title}"
    )
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{_escape(head)}*"}}
    ]
    for s in summaries:
        lines = [f"<{base_url()}{s.get_absolute_url()}|{_escape(s.title)}>", *_alert_lines(s)]
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}})
    return {
        "text": head,
        "blocks": blocks[:50],  # Slack's limit per message
        "perfhub": {
            "summaries": [
                {
                    "id": s.pk,
                    "title": s.title,
                    "profile": s.profile.slug,
                    "change": s.change_text,
                    "regressions": s.regressions,
                    "improvements": s.improvements,
                    "variance_changes": s.variance_changes,
                    "url": f"{base_url()}{s.get_absolute_url()}",
                }
                for s in summaries
            ]
        },
    }


def _escape(text: str) -> str:
    # Slack mrkdwn: &, <, > must be escaped; nothing else is interpreted inside a section.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def webhook_post(url: str, payload: dict[str, Any]) -> None:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"webhook URL must start with http:// or https://, not {url[:40]!r}")
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", "User-Agent": "PerfHub"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as response:
        if response.status >= 300:
            raise OSError(f"webhook answered HTTP {response.status}")
