"""What a page can cite, as a registry of kinds, and what it says about the page's proof.

A kind knows how to *pin* one of its objects (freeze the identity and the numbers shown, at
the moment of citing) and how to *resolve* many citations at once (a bounded number of
queries, whatever the number of citations). Run and artifact are defined here; a page can
cite another page. Other apps register their own kinds from their ``AppConfig.ready``::

    from knowledge.citations import register_kind
    register_kind(IncidentCitations())   # name = "incident"

and "used in incidents"-style backlinks with :func:`register_backlinks`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from django.db.models import Count, Max, Q

from artifacts.models import Artifact, BenchmarkRun
from artifacts.times import aware_datetime

if TYPE_CHECKING:
    from knowledge.models import Citation, Page

# At most this many points of a run's curve are pinned (nccl-tests sweeps have ~30).
MAX_PINNED_ROWS = 80


class CitationError(Exception):
    """The cited object does not exist or the kind is unknown."""


@dataclass(frozen=True)
class Cited:
    """A citation as the page shows it: the pinned values, and what became of the object."""

    kind: str
    object_id: str
    title: str
    url: str = ""
    summary: str = ""
    measured_at: datetime | None = None
    passing: bool | None = None  # None: not a measurement
    measurements: int = 0
    versions: dict[str, str] = field(default_factory=dict)
    rows: list[list[float | None]] = field(default_factory=list)  # [size, oop busbw, ip busbw]
    missing: bool = False  # the object is gone; the pinned values remain
    changed: bool = False  # re-parsed since and the numbers differ from the pinned ones
    note: str = ""
    citation_id: int | None = None


class CitationKind(Protocol):
    name: str
    label: str

    def pin(self, object_id: str) -> dict[str, Any]: ...

    def resolve(self, citations: Sequence[Citation]) -> dict[int, Cited]: ...


KINDS: dict[str, CitationKind] = {}


def register_kind(kind: CitationKind) -> None:
    KINDS[kind.name] = kind


def get_kind(name: str) -> CitationKind:
    try:
        return KINDS[name]
    except KeyError:
        raise CitationError(
            f"unknown citation kind {name!r}; known: {', '.join(sorted(KINDS))}"
        ) from None


def resolve_all(citations: Sequence[Citation]) -> list[Cited]:
    """Every citation resolved, in citation order; one batch per kind."""
    by_kind: dict[str, list[Citation]] = {}
    for citation in citations:
        by_kind.setdefault(citation.kind, []).append(citation)
    resolved: dict[int, Cited] = {}
    for name, group in by_kind.items():
        kind = KINDS.get(name)
        if kind is None:
            resolved.update({c.pk: _unknown(c) for c in group})
        else:
            resolved.update(kind.resolve(group))
    return [resolved[c.pk] for c in citations if c.pk in resolved]


def _unknown(citation: Citation) -> Cited:
    return Cited(
        kind=citation.kind,
        object_id=citation.object_id,
        title=str(citation.pinned.get("title") or f"{citation.kind} {citation.object_id}"),
        missing=True,
        note=citation.note,
        citation_id=citation.pk,
    )


def _when(text: Any) -> datetime | None:
    try:
        return aware_datetime(str(text)) if text else None
    except ValueError:
        return None


# --- runs ------------------------------------------------------------------------------------


def run_passes(run: BenchmarkRun) -> bool:
    """A measurement that can verify a page: complete, no errors, no out-of-bounds values."""
    return run.complete and not run.errors and not run.out_of_bounds


def run_versions(run: BenchmarkRun) -> dict[str, str]:
    meta = run.artifact.metadata if run.artifact_id else {}
    versions = {
        k: str(meta[k]) for k in ("cuda", "driver", "kernel", "ofed", "doca") if meta.get(k)
    }
    if nccl := run.nccl_version or meta.get("nccl"):
        versions["nccl"] = str(nccl)
    return versions


def _run_title(run: BenchmarkRun | None, pinned: dict[str, Any]) -> str:
    collective = (run.collective if run else pinned.get("collective")) or "run"
    nranks = (run.nranks if run else pinned.get("nranks")) or "?"
    return f"{collective} · {nranks} ranks"


class RunCitations:
    name = "run"
    label = "benchmark run"

    def pin(self, object_id: str) -> dict[str, Any]:
        run = BenchmarkRun.objects.select_related("artifact").filter(pk=_int(object_id)).first()
        if run is None:
            raise CitationError(f"no benchmark run #{object_id}")
        rows = list(
            run.measurements.values_list("size_bytes", "oop_busbw_gbps", "ip_busbw_gbps")[
                :MAX_PINNED_ROWS
            ]
        )
        return {
            "artifact_id": run.artifact_id,
            "artifact_sha256": run.artifact.sha256,
            "artifact_name": run.artifact.original_name,
            "run_index": run.index,
            "parser_version": run.artifact.parser_version,
            "collective": run.collective,
            "nranks": run.nranks,
            "gpu": run.gpu,
            "nccl_version": run.nccl_version,
            "avg_busbw_gbps": run.avg_busbw_gbps,
            "measured_at": run.measured_at.isoformat(),
            "passing": run_passes(run),
            "versions": run_versions(run),
            "rows": [list(r) for r in rows],
        }

    def resolve(self, citations: Sequence[Citation]) -> dict[int, Cited]:
        runs = _runs_for(citations)
        result: dict[int, Cited] = {}
        for c in citations:
            run = runs.get(c.pk)
            pinned = c.pinned
            if run is None:
                result[c.pk] = Cited(
                    kind=self.name,
                    object_id=c.object_id,
                    title=_run_title(None, pinned),
                    summary=_run_summary(pinned),
                    measured_at=_when(pinned.get("measured_at")),
                    passing=pinned.get("passing"),
                    measurements=1,
                    versions=dict(pinned.get("versions") or {}),
                    rows=list(pinned.get("rows") or []),
                    missing=True,
                    note=c.note,
                    citation_id=c.pk,
                )
                continue
            result[c.pk] = Cited(
                kind=self.name,
                object_id=str(run.pk),
                title=_run_title(run, pinned),
                url=run.get_absolute_url(),
                summary=_run_summary(pinned),
                measured_at=run.measured_at,
                passing=run_passes(run),
                measurements=1,
                versions=run_versions(run),
                rows=list(pinned.get("rows") or []),
                changed=_differs(run.avg_busbw_gbps, pinned.get("avg_busbw_gbps")),
                note=c.note,
                citation_id=c.pk,
            )
        return result


def _runs_for(citations: Sequence[Citation]) -> dict[int, BenchmarkRun]:
    """The run of each citation: by id, else (re-parsed: new ids) by artifact hash + index."""
    ids = {_int(c.object_id) for c in citations}
    by_id = {r.pk: r for r in BenchmarkRun.objects.select_related("artifact").filter(pk__in=ids)}
    found: dict[int, BenchmarkRun] = {}
    lost: list[Citation] = []
    for c in citations:
        run = by_id.get(_int(c.object_id))
        if run is not None and run.artifact.sha256 == c.pinned.get(
            "artifact_sha256", run.artifact.sha256
        ):
            found[c.pk] = run
        else:
            lost.append(c)
    pins = [(c.pinned.get("artifact_sha256"), c.pinned.get("run_index")) for c in lost]
    pins = [(sha, index) for sha, index in pins if sha and index is not None]
    if pins:
        condition = Q()
        for sha, index in pins:
            condition |= Q(artifact__sha256=sha, index=index)
        again = {
            (r.artifact.sha256, r.index): r
            for r in BenchmarkRun.objects.select_related("artifact").filter(condition)
        }
        for c in lost:
            run = again.get((c.pinned.get("artifact_sha256"), c.pinned.get("run_index")))
            if run is not None:
                found[c.pk] = run
    return found


def _run_summary(pinned: dict[str, Any]) -> str:
    parts = [
        p
        for p in (
            pinned.get("gpu"),
            pinned.get("nccl_version") and f"NCCL {pinned['nccl_version']}",
        )
        if p
    ]
    if pinned.get("avg_busbw_gbps") is not None:
        parts.append(f"avg busbw {pinned['avg_busbw_gbps']:.2f} GB/s (pinned)")
    if pinned.get("artifact_name"):
        parts.append(str(pinned["artifact_name"]))
    return " · ".join(parts)


def _differs(current: float | None, pinned: Any) -> bool:
    if current is None or pinned is None:
        return current != pinned
    return abs(float(current) - float(pinned)) > 1e-6 * max(1.0, abs(float(pinned)))


# --- artifacts -------------------------------------------------------------------------------


class ArtifactCitations:
    name = "artifact"
    label = "artifact"

    def pin(self, object_id: str) -> dict[str, Any]:
        artifact = Artifact.objects.filter(pk=_int(object_id)).first()
        if artifact is None:
            raise CitationError(f"no artifact #{object_id}")
        return {
            "sha256": artifact.sha256,
            "original_name": artifact.original_name,
            "kind": artifact.kind,
            "parser_version": artifact.parser_version,
            "title": artifact.original_name,
        }

    def resolve(self, citations: Sequence[Citation]) -> dict[int, Cited]:
        shas = [c.pinned.get("sha256") for c in citations if c.pinned.get("sha256")]
        ids = [_int(c.object_id) for c in citations]
        artifacts = (
            Artifact.objects.filter(Q(pk__in=ids) | Q(sha256__in=shas))
            .annotate(
                n_runs=Count("runs", distinct=True),
                n_passing=Count(
                    "runs",
                    filter=Q(runs__complete=True, runs__errors=[])
                    & (Q(runs__out_of_bounds=0) | Q(runs__out_of_bounds__isnull=True)),
                    distinct=True,
                ),
                newest_run=Max("runs__measured_at"),
            )
            .order_by()
        )
        by_sha = {a.sha256: a for a in artifacts}
        by_id = {a.pk: a for a in artifacts}
        result: dict[int, Cited] = {}
        for c in citations:
            artifact = by_sha.get(c.pinned.get("sha256", "")) or by_id.get(_int(c.object_id))
            if artifact is None:
                result[c.pk] = Cited(
                    kind=self.name,
                    object_id=c.object_id,
                    title=str(c.pinned.get("original_name") or f"artifact {c.object_id}"),
                    missing=True,
                    note=c.note,
                    citation_id=c.pk,
                )
                continue
            measured = artifact.newest_run or artifact.captured_at or artifact.uploaded_at
            meta = artifact.metadata or {}
            versions = {
                k: str(meta[k])
                for k in ("nccl", "cuda", "driver", "kernel", "ofed", "doca")
                if meta.get(k)
            }
            result[c.pk] = Cited(
                kind=self.name,
                object_id=str(artifact.pk),
                title=artifact.original_name,
                url=artifact.get_absolute_url(),
                summary=f"{artifact.get_kind_display()} · {artifact.n_runs} run(s)",
                measured_at=measured,
                passing=(artifact.n_runs > 0 and artifact.n_passing == artifact.n_runs)
                if artifact.n_runs
                else None,
                measurements=artifact.n_runs,
                versions=versions,
                note=c.note,
                citation_id=c.pk,
            )
        return result


# --- other pages -----------------------------------------------------------------------------


class PageCitations:
    name = "page"
    label = "knowledge page"

    def pin(self, object_id: str) -> dict[str, Any]:
        from knowledge.models import Page

        page = Page.objects.filter(Q(pk=_int(object_id)) | Q(slug=object_id)).first()
        if page is None:
            raise CitationError(f"no knowledge page {object_id!r}")
        return {"slug": page.slug, "title": page.title, "revision": page.revision, "id": page.pk}

    def resolve(self, citations: Sequence[Citation]) -> dict[int, Cited]:
        from knowledge.models import Page

        pages = Page.objects.in_bulk([_int(c.object_id) for c in citations])
        result: dict[int, Cited] = {}
        for c in citations:
            page = pages.get(_int(c.object_id))
            result[c.pk] = Cited(
                kind=self.name,
                object_id=c.object_id,
                title=page.title if page else str(c.pinned.get("title", c.object_id)),
                url=page.get_absolute_url() if page else "",
                summary=f"revision {c.pinned.get('revision')} when cited",
                missing=page is None,
                note=c.note,
                citation_id=c.pk,
            )
        return result


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


register_kind(RunCitations())
register_kind(ArtifactCitations())
register_kind(PageCitations())


# --- backlinks from other apps ---------------------------------------------------------------


@dataclass(frozen=True)
class Backlink:
    title: str
    url: str
    detail: str = ""


@dataclass(frozen=True)
class BacklinkGroup:
    label: str  # "Used in incidents"
    provider: Callable[[Page], Iterable[Backlink]]


BACKLINKS: list[BacklinkGroup] = []


def register_backlinks(label: str, provider: Callable[[Page], Iterable[Backlink]]) -> None:
    """E.g. incidents: ``register_backlinks("Used in incidents", incidents_citing_page)``."""
    BACKLINKS.append(BacklinkGroup(label, provider))


def backlinks(page: Page) -> list[tuple[str, list[Backlink]]]:
    groups = [(g.label, list(g.provider(page))) for g in BACKLINKS]
    return [(label, links) for label, links in groups if links]
