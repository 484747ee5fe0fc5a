"""Celery tasks of the nccl-tests family."""

from __future__ import annotations

from celery import shared_task

from artifacts.runs.partitions import ensure_partitions


@shared_task(name="artifacts.runs.ensure_partitions")
def ensure_measurement_partitions() -> list[str]:
    """Periodic (celery beat, daily): the measurement partitions of this month and the next
    few, made before rows need them, and months waiting in the default partition moved out.
    Does nothing on SQLite."""
    return ensure_partitions()
