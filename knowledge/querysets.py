"""Named reads for knowledge pages: filtered lists, freshness, applicability, backlinks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Min, Q, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Lower
from django.utils import timezone

from artifacts.models import Artifact, BenchmarkRun
from knowledge import applicability as appl
from knowledge.models import Citation, Page, PageStatus
from knowledge.staleness import Freshness, KnownVersion, Verification, freshness

# Upload metadata keys read as software versions (see docs/knowledge.md, "Facts").
METADATA_VERSION_KEYS = ("nccl", "rccl", "driver", "cuda", "rocm", "kernel", "ofed", "doca",
                         "nic_firmware")  # fmt: skip
METADATA_FACT_KEYS = (*METADATA_VERSION_KEYS, "gpu", "nic", "fabric")

# Other apps (baselines' software stacks) add the versions they know of.
KnownVersionSource = Callable[[], Iterable[KnownVersion]]
KNOWN_VERSION_SOURCES: list[KnownVersionSource] = []


def register_known_versions(source: KnownVersionSource) -> None:
    KNOWN_VERSION_SOURCES.append(source)


def known_versions(dimensions: Iterable[str] | None = None) -> list[KnownVersion]:
    """Software versions PerfHub has seen, with when each first appeared.

    Bounded: one query for the NCCL versions of runs, one per upload-metadata key asked for
    (only the dimensions some page constrains need asking).
    """
    wanted = set(METADATA_VERSION_KEYS if dimensions is None else dimensions)
    known: list[KnownVersion] = []
    if "nccl" in wanted:
        known += [
            KnownVersion("nccl", v, first)
            for v, first in BenchmarkRun.objects.exclude(nccl_version="")
            .order_by()
            .values_list("nccl_version")
            .annotate(first=Min("created_at"))
        ]
    for key in (k for k in METADATA_VERSION_KEYS if k in wanted):
        rows = (
            Artifact.objects.annotate(v=KT(f"metadata__{key}"))
            .exclude(v__isnull=True)
            .order_by()
            .values_list("v")
            .annotate(first=Min("uploaded_at"))
        )
        known += [KnownVersion(key, str(v), first) for v, first in rows if str(v).strip()]
    for source in KNOWN_VERSION_SOURCES:
        known += [k for k in source() if k.dimension in wanted]
    return known


def constrained_dimensions(pages: Iterable[Page]) -> set[str]:
    return {d for p in pages for d in (p.applies_to or {}) if d in appl.RANGE_DIMENSIONS}


def page_freshness(
    page: Page, known: list[KnownVersion] | None = None, now: datetime | None = None
) -> Freshness:
    checks = (
        [Verification(page.verified_at, page.verified_versions or {})] if page.verified_at else []
    )
    if known is None:
        known = known_versions(constrained_dimensions([page]))
    return freshness(
        status=page.status,
        applicability=page.applies_to or {},
        interval_days=page.verify_interval_days,
        verifications=checks,
        known=known,
        now=now or timezone.now(),
    )


def with_freshness(pages: Iterable[Page], known: list[KnownVersion] | None = None) -> list[Page]:
    """Pages with ``.freshness`` set (known versions read once for all of them)."""
    items = list(pages)
    versions = known if known is not None else known_versions(constrained_dimensions(items))
    now = timezone.now()
    for page in items:
        page.freshness = page_freshness(page, versions, now)  # type: ignore[attr-defined]
    return items


def stale_page_ids(known: list[KnownVersion] | None = None) -> list[int]:
    published = Page.objects.filter(status=PageStatus.PUBLISHED).only(
        "id", "status", "applies_to", "verify_interval_days", "verified_at", "verified_versions"
    )
    return [p.pk for p in with_freshness(published, known) if p.freshness.stale]  # type: ignore[attr-defined]


def pages_filtered(params: Mapping[str, Any]) -> QuerySet[Page]:
    qs = Page.objects.select_related("owner")
    if q := str(params.get("q") or "").strip():
        qs = qs.filter(Q(title__icontains=q) | Q(slug__icontains=q) | Q(tag_index__icontains=q))
    if value := params.get("type"):
        qs = qs.filter(type=value)
    if value := params.get("topic"):
        qs = qs.filter(topic=value)
    if value := params.get("status"):
        qs = qs.filter(status=value)
    if value := params.get("generation"):
        qs = qs.filter(gpu_index__icontains=f"|{appl.canonical_gpu(str(value))}|")
    if value := params.get("fabric"):
        qs = qs.filter(fabric_index__icontains=f"|{appl.canonical_fabric(str(value)) or value}|")
    if value := params.get("nic"):
        qs = qs.filter(nic_index__icontains=f"|{appl.canonical_nic(str(value))}|")
    if value := params.get("tag"):
        qs = qs.filter(tag_index__icontains=f"|{str(value).lower()}|")
    if value := params.get("owner"):
        qs = qs.filter(owner__username=value)
    stale = str(params.get("stale") or "").lower()
    if stale in {"1", "true", "yes", "0", "false", "no"}:
        ids = stale_page_ids()
        qs = qs.filter(pk__in=ids) if stale in {"1", "true", "yes"} else qs.exclude(pk__in=ids)
    return qs.order_by(Lower("title"), "id")


def stale_pages_by_owner() -> list[tuple[str, list[Page]]]:
    """``[(owner name, [stale published pages])]``, owners A-Z, "no owner" last."""
    ids = stale_page_ids()
    pages = with_freshness(Page.objects.select_related("owner").filter(pk__in=ids))
    groups: dict[str, list[Page]] = {}
    for page in sorted(
        pages, key=lambda p: (p.verified_at is not None, p.verified_at or 0, p.title)
    ):
        name = page.owner.get_username() if page.owner else ""
        groups.setdefault(name, []).append(page)
    return sorted(groups.items(), key=lambda kv: (kv[0] == "", kv[0].lower()))


@dataclass(frozen=True)
class ApplicablePage:
    page: Page
    relevance: int
    verdicts: tuple[appl.Verdict, ...]

    @property
    def unknown(self) -> list[str]:
        return [v.label for v in self.verdicts if v.state == "unknown"]


def pages_for_facts(facts: Mapping[str, Any], *, limit: int = 12) -> list[ApplicablePage]:
    """Published pages with at least one dimension matching and none contradicting, most
    specific first (one query: applicability is matched in Python, pages are few)."""
    found: list[ApplicablePage] = []
    for page in Page.objects.filter(status=PageStatus.PUBLISHED).exclude(applies_to={}):
        score = appl.relevance(page.applies_to or {}, facts)
        if score:
            found.append(ApplicablePage(page, score, appl.explain(page.applies_to, facts)))
    found.sort(key=lambda a: (-a.relevance, a.page.title))
    return found[:limit]


def run_facts(run: BenchmarkRun) -> dict[str, str]:
    """What a run says about its hardware and software, for applicability."""
    meta = run.artifact.metadata if run.artifact_id else {}
    facts = {k: str(meta[k]) for k in METADATA_FACT_KEYS if meta.get(k) not in (None, "")}
    if run.gpu:
        facts["gpu"] = run.gpu
    if run.nccl_version:
        facts["nccl"] = run.nccl_version
    return appl.normalize_facts(facts)


# HardwareProfile.fabric values (baselines) -> knowledge fabric names (applicability.FABRICS)
PROFILE_FABRICS = {"roce_v2": "roce", "infiniband": "infiniband"}


def profile_facts(profile: Any) -> dict[str, str]:
    """What a baselines.HardwareProfile says about hardware (it knows no software versions)."""
    facts = {
        "gpu": profile.gpu_model or profile.gpu_match,
        "nic": profile.nic_model,
        "fabric": PROFILE_FABRICS.get(profile.fabric, ""),
    }
    return appl.normalize_facts(facts)


def incident_facts(incident: Any) -> dict[str, str]:
    """An incident's hardware: its generation, and its profile's facts when it names one."""
    facts: dict[str, str] = {}
    if name := (incident.hardware_profile or "").strip():
        profile = _profile_named(name)
        if profile is not None:
            facts.update(profile_facts(profile))
    if incident.hardware_generation:
        facts["gpu"] = incident.hardware_generation
    # The software stack accepted from the evidence (incidents/facts.py), first value each.
    environment = getattr(incident, "environment", None) or {}
    for key, dim in INCIDENT_STACK_FACTS.items():
        if value := str(environment.get(key) or "").split(",")[0].strip():
            facts[dim] = value
    return appl.normalize_facts(facts)


INCIDENT_STACK_FACTS = {
    "nccl": "nccl", "cuda": "cuda", "driver": "driver", "kernel": "kernel",
    "firmware": "nic_firmware",
}  # fmt: skip


def _profile_named(name: str) -> Any:
    from django.apps import apps

    try:
        model = apps.get_model("baselines", "HardwareProfile")
    except LookupError:
        return None
    return model._default_manager.filter(Q(slug=name) | Q(name__iexact=name)).first()


def subject_facts(subject: Any) -> dict[str, str]:
    """Facts of a run, hardware profile or incident (``{% applicable_pages subject %}``)."""
    label = getattr(getattr(subject, "_meta", None), "label", "")
    if isinstance(subject, BenchmarkRun):
        return run_facts(subject)
    if label == "baselines.HardwareProfile":
        return profile_facts(subject)
    if label == "incidents.Incident":
        return incident_facts(subject)
    if isinstance(subject, Mapping):
        return appl.normalize_facts(subject)
    return {}


def pages_citing(
    kind: str, object_id: Any, *, pinned: Mapping[str, Any] | None = None
) -> QuerySet[Page]:
    """Pages citing one object; ``pinned`` also finds citations of its earlier ids (a run
    re-parsed gets a new id but keeps its artifact hash and index)."""
    condition = Q(kind=kind, object_id=str(object_id))
    if pinned:
        condition |= Q(kind=kind, **{f"pinned__{k}": v for k, v in pinned.items()})
    page_ids = Citation.objects.filter(condition).values("page_id")
    return Page.objects.filter(pk__in=page_ids).order_by("title")


def pages_citing_page(page: Page) -> list[Page]:
    """The "cited by pages" list: pages citing ``page`` as evidence, or linking to it in their text
    (``[see](/kb/slug/)``); one query each, link matches checked exactly in Python."""
    cited = list(pages_citing("page", page.pk))
    pattern = re.compile(rf"/kb/{re.escape(page.slug)}(?![A-Za-z0-9_-])")
    linking = (
        Page.objects.filter(body__contains=f"/kb/{page.slug}")
        .exclude(pk=page.pk)
        .exclude(pk__in=[p.pk for p in cited])
        .only("id", "slug", "title", "body")
    )
    found = cited + [p for p in linking if pattern.search(p.body)]
    return sorted(found, key=lambda p: (p.title.lower(), p.pk))


def pages_citing_run(run: BenchmarkRun) -> QuerySet[Page]:
    return pages_citing(
        "run",
        run.pk,
        pinned={"artifact_sha256": run.artifact.sha256, "run_index": run.index},
    )


def filter_options() -> dict[str, list[tuple[str, str]]]:
    owners = (
        Page.objects.exclude(owner=None)
        .order_by()
        .values_list("owner__username", flat=True)
        .distinct()
    )
    return {
        "generations": appl.generation_choices(),
        "fabrics": list(appl.FABRICS.items()),
        "owners": [(o, o) for o in sorted(owners)],
    }
