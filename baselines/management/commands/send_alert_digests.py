"""Send the pending alert digests (and retry failed notifications). Run it from cron or
celery beat, e.g. daily; the Celery task ``baselines.send_digests`` does the same."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from baselines.notify import digests_send


class Command(BaseCommand):
    help = "Send pending alert-summary digests and retry failed notifications."

    def handle(self, *args: Any, **options: Any) -> None:
        sent = digests_send()
        self.stdout.write(f"{sent} message(s) sent.")
