"""PerfHub's project package. ``celery_app`` is loaded on first use, not on import: every
process imports this package (settings live here), and Celery with kombu costs ~80 ms and
~10 MB that ``manage.py parse`` and most commands never need. ``celery -A perfhub`` finds
the app in ``perfhub.celery``; ``perfhub.dispatch`` imports it before sending a task."""

from __future__ import annotations

from typing import Any

__all__ = ["celery_app"]


def __getattr__(name: str) -> Any:
    if name == "celery_app":
        from perfhub.celery import app

        return app
    raise AttributeError(f"module 'perfhub' has no attribute {name!r}")
