"""Helpers for the fabric tests that talk to the database.

Django is imported inside the helpers, so the pure tests here also run with ``-p no:django``.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from tests.samples import sample


def upload(relative: str, **kwargs: Any) -> Any:
    """Ingest one shared sample and parse it in-process (the findings pass is separate)."""
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    path = sample(relative)
    with path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, enqueue=False, **kwargs).artifact
    return artifact_parse(artifact_id=artifact.pk)


def upload_text(name: str, text: str, **kwargs: Any) -> Any:
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    artifact = artifact_ingest(
        stream=io.BytesIO(text.encode()), name=name, enqueue=False, **kwargs
    ).artifact
    return artifact_parse(artifact_id=artifact.pk)


def evaluated(artifact: Any) -> Any:
    from artifacts.fabric.services import fabric_refresh

    fabric_refresh(artifact_id=artifact.pk)
    artifact.refresh_from_db()
    return artifact


@pytest.fixture
def pause_storm_pair(db: Any) -> tuple[Any, Any]:
    """Two uploads of one NIC's ethtool -S, 60 s apart, with PFC pauses on priority 3."""

    def reading(pauses: int, duration: int, drops: int) -> str:
        return (
            "root@gpu-node-07:~# ethtool -S eth3\nNIC statistics:\n"
            f"     rx_prio3_pause: {pauses}\n     rx_prio3_pause_duration: {duration}\n"
            f"     rx_prio3_bytes: {pauses * 1000}\n     rx_discards_phy: {drops}\n"
            "     tx_pause_storm_warning_events: 0\n"
        )

    first = upload_text(
        "eth3-before.txt", reading(1_000, 10_000, 5),
        metadata={"captured_at": "2025-03-01T10:00:00Z"},
    )  # fmt: skip
    second = upload_text(
        "eth3-after.txt", reading(1_201_000, 12_010_000, 5),
        metadata={"captured_at": "2025-03-01T10:01:00Z"},
    )  # fmt: skip
    return evaluated(first), evaluated(second)
