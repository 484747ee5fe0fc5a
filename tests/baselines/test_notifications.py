"""Notifications: e-mail through Django's mail backend, Slack-compatible webhooks, digests.

Mail goes to Django's locmem backend (pytest-django's default in tests); webhooks go to a
real HTTP server on 127.0.0.1 started by the test.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.core import mail

from baselines.models import AlertSummary, Delivery, HardwareProfile, Subscription
from baselines.notify import digests_send, summary_notify
from tests.baselines.baseline_fixtures import load_demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def webhook():
    """A local HTTP server recording the JSON bodies POSTed to it; answers ``status``."""
    received: list[dict] = []
    state = {"status": 200}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers["Content-Length"])
            received.append(
                {"body": json.loads(self.rfile.read(length)), "type": self.headers["Content-Type"]}
            )
            self.send_response(state["status"])
            self.end_headers()

        def log_message(self, *args):  # keep the test output clean
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield {
        "url": f"http://127.0.0.1:{server.server_port}/hook",
        "received": received,
        "state": state,
    }
    server.shutdown()
    server.server_close()


def subscribe(**fields):
    defaults = {"name": "perf team", "channel": "email", "target": "perf@example.com"}
    return Subscription.objects.create(**{**defaults, **fields})


def test_a_confirmed_summary_is_mailed_once_to_matching_subscriptions(
    eager_tasks, django_capture_on_commit_callbacks
):
    h200 = HardwareProfile.objects.create(slug="h200-roce-2x8")
    subscribe(profile=h200, target="a@example.com, b@example.com")
    subscribe(name="other profile", profile=HardwareProfile.objects.create(slug="b200"))
    subscribe(name="other benchmark", collective="alltoall")
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    summary = AlertSummary.objects.get()
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["a@example.com", "b@example.com"]
    assert message.subject == f"[PerfHub] {summary.title}"
    assert f"/baselines/summaries/{summary.pk}/" in message.body
    assert "regression -" in message.body and "all_reduce" in message.body
    summary_notify(summary_id=summary.pk)  # again: already delivered
    assert len(mail.outbox) == 1
    assert Delivery.objects.get().state == "sent" and summary.notified_at is not None


def test_nothing_is_sent_before_a_second_run_confirms_the_change(
    eager_tasks, django_capture_on_commit_callbacks
):
    subscribe()
    from artifacts.runs.demo import demo_files

    files = [
        f
        for f in demo_files()
        if f.metadata["profile"] == "h200-roce-2x8" and f.metadata["collective"] == "all_reduce"
    ]
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"],
              order=lambda _: files[:4])  # fmt: skip
    summary = AlertSummary.objects.get()
    assert not summary.confirmed and summary.notified_at is None and not mail.outbox
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"],
              order=lambda _: files[4:5])  # fmt: skip
    summary.refresh_from_db()
    assert summary.confirmed and len(mail.outbox) == 1


def test_webhooks_get_slack_compatible_json(
    eager_tasks, django_capture_on_commit_callbacks, webhook
):
    subscribe(channel="webhook", target=webhook["url"])
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    summary = AlertSummary.objects.get()
    (call,) = webhook["received"]
    body = call["body"]
    assert call["type"] == "application/json"
    assert body["text"] == f"PerfHub alert: {summary.title}"
    assert body["blocks"][0]["type"] == "section"
    assert body["blocks"][0]["text"]["type"] == "mrkdwn"
    assert f"/baselines/summaries/{summary.pk}/|" in body["blocks"][1]["text"]["text"]
    data = body["perfhub"]["summaries"][0]
    assert data["profile"] == "h200-roce-2x8" and data["regressions"] == summary.regressions


def test_a_failing_webhook_keeps_the_error_and_the_digest_run_retries_it(
    eager_tasks, django_capture_on_commit_callbacks, webhook
):
    webhook["state"]["status"] = 500
    subscription = subscribe(channel="webhook", target=webhook["url"])
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    delivery = Delivery.objects.get(subscription=subscription)
    assert delivery.state == "failed" and "500" in delivery.error and delivery.attempts == 1
    webhook["state"]["status"] = 200
    assert digests_send() == 1
    delivery.refresh_from_db()
    assert delivery.state == "sent" and delivery.error == "" and len(webhook["received"]) == 2


def test_digest_subscriptions_collect_summaries_into_one_message(
    eager_tasks, django_capture_on_commit_callbacks
):
    subscribe(digest=True, include_improvements=True)
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    summary = AlertSummary.objects.get()
    second = AlertSummary.objects.create(
        key="p-test", profile=summary.profile, title="driver 550 → 560 on h200: 3 series improved",
        improvements=3, confirmed=True,
    )  # fmt: skip
    summary_notify(summary_id=second.pk)
    assert not mail.outbox
    assert set(Delivery.objects.values_list("state", flat=True)) == {"pending"}
    assert digests_send() == 1
    (message,) = mail.outbox
    assert message.subject == "[PerfHub] 2 new alert summaries"
    assert summary.title in message.body and second.title in message.body
    assert digests_send() == 0  # nothing pending any more


def test_improvements_only_notify_subscriptions_that_ask_for_them():
    profile = HardwareProfile.objects.create(slug="p")
    summary = AlertSummary.objects.create(key="k", profile=profile, title="faster", improvements=2)
    quiet = subscribe()
    keen = subscribe(name="keen", target="keen@example.com", include_improvements=True)
    summary_notify(summary_id=summary.pk)
    assert [m.to for m in mail.outbox] == [["keen@example.com"]]
    assert not quiet.deliveries.exists() and keen.deliveries.get().state == "sent"
