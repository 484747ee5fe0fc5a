"""Shared helpers for report tests: real samples ingested and parsed in place.

Django is imported inside the helpers, so the pure tests also run with ``-p no:django``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.samples import sample

G1 = "nccl_tests/xxrjun_pair_N2_G1_ok.log"  # 2 ranks on 2 hosts, 1 GPU each
G8 = "nccl_tests/xxrjun_pair_N2_G8_ok.log"  # 16 ranks on the same 2 hosts, 8 GPUs each


def ingest_path(path: Path, **kwargs: Any) -> Any:
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    with path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, enqueue=False, **kwargs).artifact
    return artifact_parse(artifact_id=artifact.pk)


def ingest_bytes(name: str, content: bytes, **kwargs: Any) -> Any:
    import io

    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    outcome = artifact_ingest(stream=io.BytesIO(content), name=name, enqueue=False, **kwargs)
    return artifact_parse(artifact_id=outcome.artifact.pk)


@pytest.fixture
def parsed(db) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    def load(relative: str, **kwargs: Any) -> Any:
        return ingest_path(sample(relative), **kwargs)

    return load


@pytest.fixture
def pair(parsed) -> tuple[Any, Any]:  # type: ignore[no-untyped-def]
    """G1 first (the reference: measured, i.e. uploaded, first), then G8."""
    return parsed(G1, label="g1"), parsed(G8, label="g8")


@pytest.fixture
def pair_report(pair, editor) -> Any:  # type: ignore[no-untyped-def]
    from reports.services import report_create

    return report_create(
        kind="runs", title="G1 vs G8", artifact_ids=[a.pk for a in pair], created_by=editor
    )
