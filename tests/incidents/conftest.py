"""Fixtures of the incidents tests: parsed sample artifacts and a ready incident."""

from __future__ import annotations

from typing import Any

import pytest

from tests.samples import sample

PAIR_OK = "nccl_tests/xxrjun_pair_N2_G1_ok.log"
PAIR_FAIL = "nccl_tests/xxrjun_pair_N2_G1_FAIL_network_error.log"
NCCL_INFO = "nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log"


def ingest(relative: str, *, parse: bool = True, **kwargs: Any) -> Any:
    """Store (and parse) one shared sample, as an upload would."""
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    path = sample(relative)
    with path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, enqueue=False, **kwargs).artifact
    if parse and artifact.is_parseable:
        artifact = artifact_parse(artifact_id=artifact.pk)
    return artifact


def ingest_bytes(name: str, data: bytes, **kwargs: Any) -> Any:
    import io

    from artifacts.services import artifact_ingest

    return artifact_ingest(stream=io.BytesIO(data), name=name, enqueue=False, **kwargs).artifact


@pytest.fixture
def ok_artifact(db) -> Any:  # type: ignore[no-untyped-def]
    return ingest(PAIR_OK, metadata={"captured_at": "2025-03-01T10:00:00Z"})


@pytest.fixture
def failed_artifact(db) -> Any:  # type: ignore[no-untyped-def]
    return ingest(PAIR_FAIL, metadata={"captured_at": "2025-03-01T10:05:00Z"})


@pytest.fixture
def nccl_log(db) -> Any:  # type: ignore[no-untyped-def]
    """An NCCL_DEBUG=INFO log kept as a plain attachment (text, host names gdr114/gdr116)."""
    return ingest(NCCL_INFO, kind="other")


@pytest.fixture
def incident(editor) -> Any:  # type: ignore[no-untyped-def]
    from incidents.services import incident_create

    return incident_create(
        title="all-reduce stalls on rack 7",
        severity="SEV2",
        by=editor,
        summary="busbw dropped from 180 to 40 GB/s",
        cluster="b",
        hardware_generation="H100",
        affected_hosts=["cnode2-005"],
        tags=["nccl", "roce"],
    )
