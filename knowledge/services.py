"""Writes on knowledge pages: create, update (no lost updates), restore, verify, cite.

Every write that changes a page's content makes a numbered revision with its author and
message. An update names the revision it was based on; when someone saved in between, it is
refused with :class:`RevisionConflict` (the API answers 409, the browser shows both versions)
and nothing is lost. The search index and the denormalised filter columns are kept here, in
the same transaction as the write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from knowledge import applicability as appl
from knowledge import recipes
from knowledge import symptoms as symptom_decl
from knowledge.citations import CitationError, get_kind, resolve_all
from knowledge.embeds import PageEmbedError, pin_body
from knowledge.indexing import page_document
from knowledge.models import (
    CONTENT_FIELDS,
    DEFAULT_VERIFY_INTERVAL_DAYS,
    Citation,
    Page,
    PageAlias,
    PageRevision,
    PageStatus,
    PageType,
    Topic,
    Verification,
)
from knowledge.search import index_document, remove_document
from knowledge.versions import VersionError, newest, version_key

MAX_TAGS = 20
_TAG = re.compile(r"^[a-z0-9][a-z0-9._+-]{0,29}$")
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# Paths under /kb/ that are pages of the app itself, not knowledge pages.
RESERVED_SLUGS = frozenset({"new", "stale", "import", "export", "preview", "cite-run"})


class PageError(Exception):
    """Invalid page input; ``errors`` maps field names to messages (for forms and the API)."""

    def __init__(self, errors: Mapping[str, list[str]]) -> None:
        self.errors = {k: list(v) for k, v in errors.items()}
        super().__init__(
            "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in self.errors.items())
        )


class RevisionConflict(Exception):
    """The page changed since the revision the edit was based on."""

    def __init__(self, page: Page, base_revision: int) -> None:
        self.page = page
        self.base_revision = base_revision
        super().__init__(
            f"'{page.title}' is at revision {page.revision}; this edit was based on revision "
            f"{base_revision}. Someone saved in between: merge their changes and save again."
        )


# --- validation ------------------------------------------------------------------------------


def clean_content(fields: Mapping[str, Any], *, partial: bool = False) -> dict[str, Any]:
    """Validated, canonical content fields; raises PageError listing every problem."""
    errors: dict[str, list[str]] = {}
    out: dict[str, Any] = {}
    unknown = set(fields) - set(CONTENT_FIELDS)
    if unknown:
        errors["fields"] = [f"unknown field(s): {', '.join(sorted(unknown))}"]
    required = () if partial else ("title", "type", "topic")
    for name in required:
        if not str(fields.get(name) or "").strip():
            errors.setdefault(name, []).append("This field is required.")
    if "title" in fields:
        title = " ".join(str(fields["title"] or "").split())
        if len(title) > 200:
            errors.setdefault("title", []).append("At most 200 characters.")
        out["title"] = title
    for name, choices in (("type", PageType), ("topic", Topic), ("status", PageStatus)):
        if name in fields and fields[name] not in (None, ""):
            value = str(fields[name])
            if value not in choices.values:
                errors.setdefault(name, []).append(
                    f"{value!r} is not one of {', '.join(choices.values)}."
                )
            out[name] = value
    if "body" in fields:
        out["body"] = normalize_body(str(fields["body"] or ""))
    if "tags" in fields:
        out["tags"] = _tags(fields["tags"], errors)
    if "applies_to" in fields:
        try:
            out["applies_to"] = appl.normalize_applicability(fields["applies_to"] or {})
        except appl.ApplicabilityError as exc:
            errors["applies_to"] = exc.problems
    if "settings" in fields:
        try:
            out["settings"] = recipes.normalize_settings(fields["settings"] or [])
        except recipes.RecipeError as exc:
            errors["settings"] = exc.problems
    if "verify_interval_days" in fields:
        try:
            days = int(fields["verify_interval_days"])
            if not 0 <= days <= 3650:
                raise ValueError
            out["verify_interval_days"] = days
        except (TypeError, ValueError):
            errors["verify_interval_days"] = ["A whole number of days from 0 to 3650."]
    if errors:
        raise PageError(errors)
    return out


def normalize_body(text: str) -> str:
    """One newline convention, no leading blank lines, exactly one final newline."""
    body = text.replace("\r\n", "\n").replace("\r", "\n")
    body = body.lstrip("\n").rstrip()
    return body + "\n" if body else ""


def _tags(raw: Any, errors: dict[str, list[str]]) -> list[str]:
    items = raw.split(",") if isinstance(raw, str) else list(raw or [])
    tags: list[str] = []
    for item in items:
        tag = str(item).strip().lower().replace(" ", "-")
        if not tag:
            continue
        if not _TAG.match(tag):
            errors.setdefault("tags", []).append(
                f"{tag!r}: tags are lower-case words of letters, digits, . _ + - (at most 30)."
            )
        elif tag not in tags:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        errors.setdefault("tags", []).append(f"At most {MAX_TAGS} tags.")
    return tags


def _owner(owner: Any) -> Any:
    if owner in (None, ""):
        return None
    if hasattr(owner, "pk"):
        return owner
    user = get_user_model().objects.filter(username=str(owner)).first()
    if user is None:
        raise PageError({"owner": [f"no user named {owner!r}"]})
    return user


def _author(by: Any) -> Any:
    return by if getattr(by, "pk", None) else None


def _unique_slug(title: str) -> str:
    base = slugify(title)[:100].strip("-") or "page"
    slug, n = base, 2
    while slug in RESERVED_SLUGS or Page.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


# --- writes ----------------------------------------------------------------------------------


def page_create(
    *,
    by: Any,
    title: str,
    type: str,
    topic: str,
    body: str = "",
    status: str = PageStatus.DRAFT,
    tags: Iterable[str] | str = (),
    applies_to: Mapping[str, Any] | None = None,
    settings: list[Mapping[str, Any]] | None = None,
    verify_interval_days: int = DEFAULT_VERIFY_INTERVAL_DAYS,
    owner: Any = None,
    slug: str | None = None,
    message: str = "",
) -> Page:
    content = clean_content(
        {
            "title": title, "type": type, "topic": topic, "body": body, "status": status,
            "tags": tags, "applies_to": applies_to or {}, "settings": settings or [],
            "verify_interval_days": verify_interval_days,
        }
    )  # fmt: skip
    owner_user = _owner(owner)
    if slug:
        slug = slug.strip().lower()
        if not _SLUG.match(slug) or len(slug) > 120:
            raise PageError({"slug": ["Lower-case letters, digits and single hyphens only."]})
        if slug in RESERVED_SLUGS:
            raise PageError({"slug": [f"{slug!r} is reserved; choose another slug."]})
        if Page.objects.filter(slug=slug).exists():
            raise PageError({"slug": [f"A page with slug {slug!r} already exists."]})
        if alias := PageAlias.objects.filter(slug=slug).select_related("page").first():
            raise PageError({"slug": [f"{slug!r} is an alias of '{alias.page.title}'."]})
    try:
        with transaction.atomic():
            page = Page(
                slug=slug or _unique_slug(content["title"]),
                owner=owner_user,
                created_by=_author(by),
                updated_by=_author(by),
                revision=1,
                **content,
            )
            _denormalise(page)
            page.save()
            pinned_body = _pinned(page, page.body, by=by)  # embeds need the page's id
            if pinned_body != page.body:
                page.body = pinned_body
                page.save(update_fields=["body"])
            _snapshot(page, by=by, message=message or "Created")
            index_document(page_document(page))
    except IntegrityError:  # the same slug, created a moment ago by someone else
        raise PageError({"slug": [f"A page with slug {page.slug!r} already exists."]}) from None
    return page


def page_update(
    *, page: Page, base_revision: int, by: Any, message: str = "", **changes: Any
) -> Page:
    """Apply ``changes`` (content fields, and ``owner``) if the page is still at base_revision.

    Saving exactly what is there already makes no revision (so loads are idempotent).
    """
    owner_given = "owner" in changes
    owner = _owner(changes.pop("owner")) if owner_given else None
    cleaned = clean_content(changes, partial=True)
    with transaction.atomic():
        locked = Page.objects.select_for_update().get(pk=page.pk)
        if locked.revision != int(base_revision):
            raise RevisionConflict(locked, int(base_revision))
        if "body" in cleaned:
            cleaned["body"] = _pinned(locked, cleaned["body"], by=by)
        changed = {k: v for k, v in cleaned.items() if getattr(locked, k) != v}
        if owner_given and locked.owner_id != getattr(owner, "pk", None):
            locked.owner = owner
            locked.save(update_fields=["owner", "updated_at"])
        if not changed:
            return locked
        for name, value in changed.items():
            setattr(locked, name, value)
        locked.revision += 1
        locked.updated_by = _author(by)
        _denormalise(locked)
        locked.save()
        _snapshot(locked, by=by, message=message or _describe_change(changed))
        index_document(page_document(locked))
    return locked


def page_restore(
    *, page: Page, number: int, base_revision: int, by: Any, message: str = ""
) -> Page:
    """A new revision whose content is that of revision ``number`` (history is never rewritten)."""
    old = PageRevision.objects.filter(page=page, number=number).first()
    if old is None:
        raise PageError({"revision": [f"'{page.title}' has no revision {number}."]})
    with transaction.atomic():
        locked = Page.objects.select_for_update().get(pk=page.pk)
        if locked.revision != int(base_revision):
            raise RevisionConflict(locked, int(base_revision))
        for name, value in old.content().items():
            setattr(locked, name, value)
        locked.revision += 1
        locked.updated_by = _author(by)
        _denormalise(locked)
        locked.save()
        _snapshot(
            locked, by=by, message=message or f"Restored revision {number}", restored_from=number
        )
        index_document(page_document(locked))
    return locked


MAX_ALIASES = 20


def alias_slugs(raw: Any) -> list[str]:
    """Well-formed alias slugs (sorted, unique), without asking the database."""
    items = raw.split(",") if isinstance(raw, str) else list(raw or [])
    aliases = sorted({str(a).strip().lower() for a in items if str(a).strip()})
    problems: list[str] = []
    for alias in aliases:
        if not _SLUG.match(alias) or len(alias) > 120:
            problems.append(f"{alias!r}: lower-case letters, digits and single hyphens only.")
        elif alias in RESERVED_SLUGS:
            problems.append(f"{alias!r} is reserved.")
    if len(aliases) > MAX_ALIASES:
        problems.append(f"At most {MAX_ALIASES} aliases.")
    if problems:
        raise PageError({"aliases": problems})
    return aliases


def clean_aliases(raw: Any, *, page: Page | None = None) -> list[str]:
    """Alias slugs that are well formed and free; raises PageError saying what is wrong."""
    aliases = alias_slugs(raw)
    problems: list[str] = []
    own = page.pk if page is not None else None
    taken = Page.objects.filter(slug__in=aliases).exclude(pk=own).values_list("slug", flat=True)
    problems += [f"{slug!r} is the slug of another page." for slug in taken]
    other = PageAlias.objects.filter(slug__in=aliases).exclude(page_id=own).select_related("page")
    problems += [f"{a.slug!r} is already an alias of '{a.page.title}'." for a in other]
    if problems:
        raise PageError({"aliases": problems})
    return [a for a in aliases if page is None or a != page.slug]


def page_set_aliases(*, page: Page, aliases: Any) -> bool:
    """Make ``aliases`` the page's alias slugs; True when that changed anything."""
    wanted = set(clean_aliases(aliases, page=page))
    with transaction.atomic():
        have = set(PageAlias.objects.filter(page=page).values_list("slug", flat=True))
        if wanted == have:
            return False
        PageAlias.objects.filter(page=page).exclude(slug__in=wanted).delete()
        PageAlias.objects.bulk_create([PageAlias(page=page, slug=s) for s in wanted - have])
    return True


def page_set_symptoms(*, page: Page, symptoms: Any) -> bool:
    """Make ``symptoms`` the page's declared symptoms (knowledge/symptoms.py); True when that
    changed anything. Like aliases, not revisioned: they say what the page is found by."""
    try:
        wanted = symptom_decl.clean(symptoms)
    except symptom_decl.SymptomError as exc:
        raise PageError({"symptoms": [str(exc)]}) from exc
    if wanted == list(page.symptoms or []):
        return False
    page.symptoms = wanted
    page.save(update_fields=["symptoms"])
    return True


def page_delete(*, page: Page) -> None:
    with transaction.atomic():
        remove_document("page", str(page.pk))
        Citation.objects.filter(kind="page", object_id=str(page.pk)).delete()
        page.delete()


def page_verify(
    *,
    page: Page,
    by: Any,
    note: str,
    versions: Mapping[str, str] | None = None,
    at: datetime | None = None,
) -> Verification:
    """Record "still holds" with a note and, optionally, the versions it was checked on."""
    text = (note or "").strip()
    if not text:
        raise PageError({"note": ["Say how it was verified (what was run, where, the result)."]})
    cleaned: dict[str, str] = {}
    errors: list[str] = []
    for dim, version in (versions or {}).items():
        if str(version or "").strip() == "":
            continue
        if dim not in appl.RANGE_DIMENSIONS:
            errors.append(
                f"{dim!r} is not a software dimension ({', '.join(appl.RANGE_DIMENSIONS)})"
            )
            continue
        try:
            version_key(str(version))
        except VersionError as exc:
            errors.append(f"{dim}: {exc}")
            continue
        cleaned[dim] = str(version).strip()
    if errors:
        raise PageError({"versions": errors})
    when = at or timezone.now()
    if when > timezone.now():
        raise PageError({"verified_at": ["A verification cannot be in the future."]})
    with transaction.atomic():
        verification = Verification.objects.create(
            page=page,
            revision=page.revision,
            note=text,
            versions=cleaned,
            verified_by=_author(by),
            verified_at=when,
        )
        page_refresh_proof(page)
    return verification


def citation_add(*, page: Page, kind: str, object_id: Any, by: Any, note: str = "") -> Citation:
    kind_impl = get_kind(kind)
    key = str(object_id).strip()
    if kind == "page" and key in {str(page.pk), page.slug}:
        raise CitationError("a page cannot cite itself")
    pinned = kind_impl.pin(key)
    if kind == "page":
        key = str(pinned["id"])
    with transaction.atomic():
        citation, created = Citation.objects.get_or_create(
            page=page,
            kind=kind,
            object_id=key,
            defaults={"pinned": pinned, "note": note.strip()[:300], "added_by": _author(by)},
        )
        if not created:
            citation.pinned = pinned  # citing again re-pins to what is there now
            citation.note = note.strip()[:300] or citation.note
            citation.save(update_fields=["pinned", "note"])
        page_refresh_proof(page)
    return citation


def citation_remove(*, page: Page, citation_id: int) -> None:
    with transaction.atomic():
        Citation.objects.filter(page=page, pk=citation_id).delete()
        page_refresh_proof(page)


def page_refresh_proof(page: Page) -> Page:
    """Recompute the denormalised proof: newest verification, versions, evidence counts."""
    cited = resolve_all(list(page.citations.all()))
    measured = [c for c in cited if c.measurements and c.measured_at]
    passing = [c for c in measured if c.passing]
    checks = [(v.verified_at, v.versions) for v in page.verifications.all()]
    checks += [(c.measured_at, c.versions) for c in passing]
    page.verified_at = max((at for at, _ in checks if at), default=None)
    best: dict[str, str] = {}
    for dim in appl.RANGE_DIMENSIONS:
        found = newest([str(v[dim]) for _, v in checks if v.get(dim)])
        if found:
            best[dim] = found
    page.verified_versions = best
    page.evidence_count = sum(c.measurements for c in cited)
    page.evidence_newest_at = max((c.measured_at for c in measured), default=None)
    Page.objects.filter(pk=page.pk).update(
        verified_at=page.verified_at,
        verified_versions=page.verified_versions,
        evidence_count=page.evidence_count,
        evidence_newest_at=page.evidence_newest_at,
    )
    return page


# --- helpers ---------------------------------------------------------------------------------


def _denormalise(page: Page) -> None:
    spec = page.applies_to or {}
    page.gpu_index = _bars(appl.gpu_index_terms(spec.get("gpu", [])), 500)
    page.nic_index = _bars(spec.get("nic", []), 300)
    page.fabric_index = _bars(spec.get("fabric", []), 100)
    page.tag_index = _bars(page.tags or [], 500)


def _pinned(page: Page, body: str, *, by: Any) -> str:
    try:
        return pin_body(page, body, by=by)
    except PageEmbedError as exc:
        raise PageError({"body": [str(exc)]}) from exc


def _bars(values: Iterable[str], limit: int) -> str:
    items = [str(v) for v in values]
    return ("|" + "|".join(items) + "|")[:limit] if items else ""


def _snapshot(page: Page, *, by: Any, message: str, restored_from: int | None = None) -> None:
    PageRevision.objects.create(
        page=page,
        number=page.revision,
        message=message[:300],
        author=_author(by),
        restored_from=restored_from,
        **page.content(),
    )


def _describe_change(changed: Mapping[str, Any]) -> str:
    return "Changed " + ", ".join(name.replace("_", " ") for name in changed)
