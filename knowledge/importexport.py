"""Pages as Markdown files with YAML front matter, for review in git, and back.

    ---
    title: RoCE v2 lossless setup on ConnectX-7
    slug: roce-v2-lossless-connectx-7
    type: tuning_recipe
    topic: network
    status: published
    owner: alice            # a username; unknown users are dropped with a warning
    aliases: [roce-ecn-dcqcn]   # other slugs that lead to the page (e.g. findings topics)
    tags: [roce, pfc, ecn]
    verify_interval_days: 180
    applies_to:
      nic: [ConnectX-7]
      fabric: [roce]
    settings:
    - kind: command
      value: mlnx_qos -i eth2 --trust dscp
    ---

    The Markdown body...

``export_page`` then ``parse_page`` gives back the same content, field for field (tested).
Floats and dates in the YAML stay strings: ``nccl: 2.20`` must not become 2.2.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from django.contrib.auth import get_user_model
from django.db import transaction

from knowledge import symptoms as symptom_decl
from knowledge.applicability import DIMENSIONS
from knowledge.models import CONTENT_FIELDS, DEFAULT_VERIFY_INTERVAL_DAYS, Page
from knowledge.services import (
    PageError,
    RevisionConflict,
    alias_slugs,
    clean_content,
    normalize_body,
    page_create,
    page_set_aliases,
    page_set_symptoms,
    page_update,
)

FRONT_MATTER_KEYS = ("title", "slug", "type", "topic", "status", "owner", "aliases", "tags",
                     "verify_interval_days", "applies_to", "settings", "symptoms")  # fmt: skip
MAX_IMPORT_BYTES = 2 * 1024 * 1024
_SETTING_KEYS = ("kind", "scope", "name", "value", "note")
LOADER_MESSAGE = "load_kb"


class PageFileError(ValueError):
    """A file that is not a page: no front matter, bad YAML, missing or invalid fields."""


class StringLoader(yaml.SafeLoader):
    """SafeLoader that keeps floats, booleans and timestamps as the strings they were written as."""


StringLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in {
        "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool"}]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}  # fmt: skip


def export_page(page: Page) -> str:
    meta: dict[str, Any] = {
        "title": page.title,
        "slug": page.slug,
        "type": page.type,
        "topic": page.topic,
        "status": page.status,
    }
    if page.owner_id:
        meta["owner"] = page.owner.get_username()
    if aliases := sorted(a.slug for a in page.aliases.all()):
        meta["aliases"] = aliases
    meta["tags"] = list(page.tags or [])
    meta["verify_interval_days"] = page.verify_interval_days
    # Fixed key orders: PostgreSQL's jsonb does not keep the order things were written in.
    if page.applies_to:
        meta["applies_to"] = {d: page.applies_to[d] for d in DIMENSIONS if d in page.applies_to}
    if page.settings:
        meta["settings"] = [{k: s[k] for k in _SETTING_KEYS if k in s} for s in page.settings]
    if page.symptoms:
        meta["symptoms"] = list(page.symptoms)
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n\n{page.body}"


@dataclass
class ParsedPage:
    slug: str
    content: dict[str, Any]
    owner: str = ""
    warnings: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    symptoms: list[str] = field(default_factory=list)


def parse_page(text: str, *, default_slug: str = "") -> ParsedPage:
    """Front matter + body -> validated content; raises PageFileError saying what is wrong."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise PageFileError("the file does not start with front matter ('---' on the first line)")
    end = text.find("\n---\n", 3)
    if end < 0 and text.endswith("\n---"):
        end = len(text) - 4
    if end < 0:
        raise PageFileError("the front matter is not closed by a '---' line")
    try:
        meta = yaml.load(text[4:end], Loader=StringLoader)
    except yaml.YAMLError as exc:
        raise PageFileError(f"front matter is not valid YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise PageFileError("front matter must be a mapping of keys to values")
    unknown = sorted(set(meta) - set(FRONT_MATTER_KEYS))
    if unknown:
        known = ", ".join(FRONT_MATTER_KEYS)
        raise PageFileError(f"unknown front matter key(s) {', '.join(unknown)}; known: {known}")
    body = normalize_body(text[end + 5 :])
    fields = {k: meta[k] for k in CONTENT_FIELDS if k in meta}
    fields.setdefault("status", "draft")
    fields.setdefault("tags", [])
    fields.setdefault("applies_to", {})
    fields.setdefault("settings", [])
    fields.setdefault("verify_interval_days", DEFAULT_VERIFY_INTERVAL_DAYS)
    fields["body"] = body
    try:
        content = clean_content(fields)
    except PageError as exc:
        raise PageFileError(str(exc)) from None
    slug = str(meta.get("slug") or default_slug).strip()
    if not slug:
        raise PageFileError("no slug in the front matter")
    raw_aliases = meta.get("aliases") or []
    if not isinstance(raw_aliases, list):
        raise PageFileError("aliases must be a list of slugs, e.g. [roce-ecn-dcqcn]")
    try:
        aliases = alias_slugs(raw_aliases)  # clashes with other pages are checked on import
    except PageError as exc:
        raise PageFileError(str(exc)) from None
    try:
        symptoms = symptom_decl.clean(meta.get("symptoms") or [])
    except symptom_decl.SymptomError as exc:
        raise PageFileError(str(exc)) from None
    return ParsedPage(
        slug=slug, content=content, owner=str(meta.get("owner") or ""), aliases=aliases,
        symptoms=symptoms,
    )  # fmt: skip


Mode = Literal["skip", "update", "loader"]


@dataclass(frozen=True)
class ImportOutcome:
    slug: str
    action: Literal["created", "updated", "unchanged", "skipped", "failed"]
    message: str
    page: Page | None = None


def page_import(text: str, *, by: Any, mode: Mode = "update", default_slug: str = "",
                origin: str = "") -> ImportOutcome:  # fmt: skip
    """Create or update one page from its Markdown file.

    ``mode``: ``skip`` leaves existing pages alone; ``update`` makes a new revision when the
    content differs; ``loader`` (``manage.py load_kb``) updates only pages whose newest
    revision came from the loader itself, so edits made in PerfHub are never overwritten.
    """
    try:
        parsed = parse_page(text, default_slug=default_slug)
    except PageFileError as exc:
        return ImportOutcome(default_slug or origin, "failed", f"{origin or 'file'}: {exc}")
    owner = _owner_or_none(parsed)
    existing = Page.objects.filter(slug=parsed.slug).first()
    message = f"{LOADER_MESSAGE}: {origin}" if mode == "loader" else f"Imported {origin}".strip()
    try:
        if existing is None:
            with transaction.atomic():
                page = page_create(by=by, slug=parsed.slug, owner=owner, message=message,
                                   **parsed.content)  # fmt: skip
                page_set_aliases(page=page, aliases=parsed.aliases)
                page_set_symptoms(page=page, symptoms=parsed.symptoms)
            return ImportOutcome(parsed.slug, "created", f"{parsed.slug}: created", page)
        if existing.content() == parsed.content:
            if mode != "skip" and (
                page_set_aliases(page=existing, aliases=parsed.aliases)
                | page_set_symptoms(page=existing, symptoms=parsed.symptoms)
            ):
                return ImportOutcome(
                    parsed.slug, "updated", f"{parsed.slug}: aliases or symptoms updated", existing
                )
            return ImportOutcome(parsed.slug, "unchanged", f"{parsed.slug}: unchanged", existing)
        if mode == "skip":
            return ImportOutcome(
                parsed.slug, "skipped", f"{parsed.slug}: exists; left as is", existing
            )
        if mode == "loader" and not last_change_by_loader(existing):
            return ImportOutcome(
                parsed.slug,
                "skipped",
                f"{parsed.slug}: edited in PerfHub since it was loaded; not overwritten "
                "(use --force to load the file as a new revision)",
                existing,
            )
        changes = dict(parsed.content)
        if owner is not None:
            changes["owner"] = owner
        with transaction.atomic():
            page = page_update(page=existing, base_revision=existing.revision, by=by,
                               message=message, **changes)  # fmt: skip
            page_set_aliases(page=page, aliases=parsed.aliases)
            page_set_symptoms(page=page, symptoms=parsed.symptoms)
        return ImportOutcome(parsed.slug, "updated", f"{parsed.slug}: updated to revision "
                             f"{page.revision}", page)  # fmt: skip
    except (PageError, RevisionConflict) as exc:
        return ImportOutcome(parsed.slug, "failed", f"{parsed.slug}: {exc}")


def _owner_or_none(parsed: ParsedPage) -> Any:
    if not parsed.owner:
        return None
    user = get_user_model().objects.filter(username=parsed.owner).first()
    if user is None:
        parsed.warnings.append(f"owner {parsed.owner!r} is not a user here; left without owner")
    return user


def last_change_by_loader(page: Page) -> bool:
    latest = page.revisions.order_by("-number").first()
    return latest is None or (
        latest.author_id is None and latest.message.startswith(LOADER_MESSAGE)
    )


def export_zip(pages: Iterable[Page]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for page in pages:
            archive.writestr(f"{page.slug}.md", export_page(page))
    return buffer.getvalue()


def markdown_files(name: str, data: bytes) -> list[tuple[str, str]]:
    """``[(file name, text)]`` from one upload: a .md file or a .zip of them."""
    if name.lower().endswith(".zip"):
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except zipfile.BadZipFile:
            raise PageFileError(f"{name}: not a zip file") from None
        files: list[tuple[str, str]] = []
        total = 0
        for info in archive.infolist():
            if info.is_dir() or not info.filename.lower().endswith(".md"):
                continue
            total += info.file_size
            if total > 20 * MAX_IMPORT_BYTES:
                raise PageFileError(f"{name}: more than {20 * MAX_IMPORT_BYTES} bytes of Markdown")
            files.append(
                (info.filename.rsplit("/", 1)[-1], _text(info.filename, archive.read(info)))
            )
        return files
    if len(data) > MAX_IMPORT_BYTES:
        raise PageFileError(f"{name}: larger than {MAX_IMPORT_BYTES} bytes")
    return [(name, _text(name, data))]


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PageFileError(f"{name}: not UTF-8 text") from None
