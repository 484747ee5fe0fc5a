"""The two search sources this app defines: knowledge pages and artifacts.

Pages are indexed by knowledge/services.py whenever they are written; artifacts by the
``post_save``/``post_delete`` signals connected in ``KnowledgeConfig.ready`` (ingest saves the
row, and the parse saves it again once its runs exist, so both moments are covered).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.urls import reverse

from artifacts.models import Artifact
from artifacts.parsers.generic import search_text
from knowledge.applicability import gpu_model
from knowledge.embeds import strip_shortcodes
from knowledge.models import Page
from knowledge.search import (
    SearchDocument,
    index_document,
    markdown_text,
    register_source,
    remove_document,
)

# Saves that only move parse progress along say nothing new about the artifact.
_PROGRESS_ONLY = frozenset({"progress_bytes", "progress_total", "status", "parse_started_at"})


def page_document(page: Page) -> SearchDocument:
    parts = [markdown_text(strip_shortcodes(page.body)), " ".join(page.tags or [])]
    for setting in page.parsed_settings:
        parts.append(" ".join(filter(None, [setting.name, setting.value, setting.note])))
    parts += [f"{b.label} {b.text}" for b in page.badges]
    return SearchDocument(
        source="page",
        key=str(page.pk),
        title=page.title,
        body="\n".join(p for p in parts if p),
        url=page.get_absolute_url(),
        subtype=page.type,
        topic=page.topic,
        generations=(page.applies_to or {}).get("gpu", []),
        updated_at=page.updated_at,
    )


def artifact_document(
    artifact: Artifact, runs: Iterable[tuple[str, str, str]] | None = None
) -> SearchDocument:
    if runs is None:
        runs = artifact.runs.order_by().values_list("collective", "gpu", "nccl_version").distinct()
    runs = list(runs)
    meta = artifact.metadata or {}
    parts = [
        artifact.get_kind_display(),
        artifact.label,
        artifact.host,
        " ".join(f"{k} {_flat(v)}" for k, v in meta.items()),
        " ".join(" ".join(filter(None, r)) for r in runs),
        # a file no parser took is found by what its generic reading holds
        search_text(artifact.generic or {}),
    ]
    gpus = {gpu_model(g) for _c, g, _n in runs if g} | {gpu_model(str(meta.get("gpu", "")))}
    return SearchDocument(
        source="artifact",
        key=str(artifact.pk),
        title=artifact.original_name,
        body="\n".join(p for p in parts if p),
        url="",  # ArtifactSource.url answers when a hit is shown (see search._url_of)
        subtype=artifact.kind,
        generations=sorted(g for g in gpus if g),
        updated_at=artifact.parsed_at or artifact.uploaded_at,
    )


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k} {_flat(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return " ".join(_flat(v) for v in value)
    return str(value)


class PageSource:
    name = "page"
    label = "Knowledge page"

    def documents(self) -> Iterable[SearchDocument]:
        for page in Page.objects.iterator():
            yield page_document(page)


class ArtifactSource:
    name = "artifact"
    label = "Artifact"

    def url(self, key: str) -> str:
        return reverse("artifact-detail", args=[key])

    def documents(self) -> Iterable[SearchDocument]:
        for artifact in Artifact.objects.iterator():
            yield artifact_document(artifact)


register_source(PageSource())
register_source(ArtifactSource())


def artifact_saved(
    sender: Any, instance: Artifact, update_fields: Any = None, **kwargs: Any
) -> None:
    if update_fields and set(update_fields) <= _PROGRESS_ONLY:
        return
    index_document(artifact_document(instance))


def artifact_deleted(sender: Any, instance: Artifact, **kwargs: Any) -> None:
    remove_document("artifact", str(instance.pk))
