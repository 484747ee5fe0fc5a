"""Fixtures of the knowledge tests: a page factory and parsed nccl-tests runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def make_page(db, editor) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    from knowledge.services import page_create

    def make(title: str = "NCCL on H100 over RoCE", **fields: Any) -> Any:
        defaults: dict[str, Any] = {"type": "tuning_recipe", "topic": "nccl", "status": "published",
                                    "body": "Set **NCCL_IB_GID_INDEX** for RoCE v2.\n"}  # fmt: skip
        return page_create(by=editor, title=title, **{**defaults, **fields})

    return make


@pytest.fixture
def parsed_run(db) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    """A parsed nccl-tests file from ../shared/samples; returns its first run."""
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest
    from tests.samples import sample

    def parse(relative: str = "nccl_tests/xxrjun_pair_N2_G1_ok.log", **kwargs: Any) -> Any:
        path = sample(relative)
        with path.open("rb") as stream:
            artifact = artifact_ingest(
                stream=stream, name=path.name, enqueue=False, **kwargs
            ).artifact
        artifact = artifact_parse(artifact_id=artifact.pk)
        return artifact.runs.order_by("index").first()

    return parse
