"""Celery wiring: configuration comes from Django settings (CELERY_* names)."""

import os

from celery import Celery
from kombu import Exchange, Queue

from perfhub.queues import queue_names

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")
# Celery's Django fixup runs the system checks when a worker starts: they import every view,
# URL pattern and template library (~1.8 s of a 3 s start) and check nothing a worker uses.
# The web process, `manage.py check` and `migrate` run them. CELERY_SKIP_CHECKS= (empty)
# runs them here too.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("perfhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Declared, so a worker started without -Q reads every queue the routes send to; one started
# with -Q reads only those (a pool per kind of work in production). Each has an exchange and
# routing key of its own: sharing the default ones would copy every message to every queue.
app.conf.task_queues = [
    Queue(name, Exchange(name, type="direct"), routing_key=name)
    for name in queue_names(app.conf.task_default_queue)
]
app.autodiscover_tasks()
# Families inside the artifacts app keep their own tasks modules (artifacts.fabric.tasks).


def _families() -> list[str]:
    from django.conf import settings

    return settings.PERFHUB_FAMILIES


app.autodiscover_tasks(_families)
