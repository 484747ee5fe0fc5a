"""Knowledge pages, their revisions, verifications and cited evidence, and the search index.

Writes go through knowledge/services.py (revision numbers, the no-lost-update rule and the
search index are kept there); reads through knowledge/querysets.py.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse

from documents.pinning import PinnedEmbed
from knowledge import applicability, recipes

User = settings.AUTH_USER_MODEL


class PageType(models.TextChoices):
    BEST_PRACTICE = "best_practice", "best practice"
    TUNING_RECIPE = "tuning_recipe", "tuning recipe"
    RUNBOOK = "runbook", "runbook"
    NPI_EVALUATION = "npi_evaluation", "NPI evaluation"
    KNOWN_ISSUE = "known_issue", "known issue"


class Topic(models.TextChoices):
    NCCL = "nccl", "NCCL"
    NETWORK = "network", "RoCE / network"
    KERNEL = "kernel", "Linux kernel"
    FRAMEWORK = "framework", "PyTorch / framework"
    GPU = "gpu", "GPU"
    STORAGE = "storage", "Storage"


class PageStatus(models.TextChoices):
    DRAFT = "draft", "draft"
    PUBLISHED = "published", "published"
    DEPRECATED = "deprecated", "deprecated"


DEFAULT_VERIFY_INTERVAL_DAYS = 180
# What a revision snapshots: the content of a page, everything import/export carries.
CONTENT_FIELDS = (
    "title", "type", "topic", "status", "body", "tags", "applies_to", "settings",
    "verify_interval_days",
)  # fmt: skip


class Page(models.Model):
    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=120, unique=True)
    type = models.CharField(max_length=20, choices=PageType.choices, db_index=True)
    topic = models.CharField(max_length=20, choices=Topic.choices, db_index=True)
    status = models.CharField(
        max_length=12, choices=PageStatus.choices, default=PageStatus.DRAFT, db_index=True
    )
    owner = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="kb_pages"
    )
    body = models.TextField(blank=True, help_text="Markdown")
    tags = models.JSONField(default=list, blank=True)
    applies_to = models.JSONField(default=dict, blank=True)
    settings = models.JSONField(default=list, blank=True, help_text="structured recipe settings")
    # Symptoms the page explains (knowledge/symptoms.py): "rule:<finding rule>",
    # "log:<log event kind>", "xid:<n>", "alert:<alert kind>". Like aliases, not revisioned.
    symptoms = models.JSONField(default=list, blank=True)
    verify_interval_days = models.PositiveIntegerField(
        default=DEFAULT_VERIFY_INTERVAL_DAYS, help_text="0: verification never expires"
    )
    revision = models.PositiveIntegerField(default=0, help_text="number of the latest revision")

    # Denormalised for filters (kept by services; "|H100|Hopper|" so icontains finds a term).
    gpu_index = models.CharField(max_length=500, blank=True, db_index=True)
    tag_index = models.CharField(max_length=500, blank=True)
    nic_index = models.CharField(max_length=300, blank=True)
    fabric_index = models.CharField(max_length=100, blank=True)
    # Newest verification (explicit or passing evidence) and what it was verified on.
    verified_at = models.DateTimeField(null=True, blank=True, db_index=True)
    verified_versions = models.JSONField(default=dict, blank=True)
    evidence_count = models.PositiveIntegerField(default=0)
    evidence_newest_at = models.DateTimeField(null=True, blank=True)

    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    class Meta:
        ordering = ["title", "id"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("kb-page", args=[self.slug])

    def content(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in CONTENT_FIELDS}

    @property
    def badges(self) -> list[applicability.Badge]:
        return applicability.badges(self.applies_to or {})

    @property
    def parsed_settings(self) -> list[recipes.Setting]:
        try:
            return recipes.parse_settings(self.settings)
        except recipes.RecipeError:
            return []  # stored settings are validated on save; never break a page over one

    @property
    def is_deprecated(self) -> bool:
        return self.status == PageStatus.DEPRECATED


class PageRevision(models.Model):
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=200)
    type = models.CharField(max_length=20, choices=PageType.choices)
    topic = models.CharField(max_length=20, choices=Topic.choices)
    status = models.CharField(max_length=12, choices=PageStatus.choices)
    body = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    applies_to = models.JSONField(default=dict, blank=True)
    settings = models.JSONField(default=list, blank=True)
    verify_interval_days = models.PositiveIntegerField(default=DEFAULT_VERIFY_INTERVAL_DAYS)
    message = models.CharField(max_length=300, blank=True)
    author = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    restored_from = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["page", "number"], name="kb_revision_number_once")
        ]

    def __str__(self) -> str:
        return f"r{self.number} of {self.page_id}"

    def content(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in CONTENT_FIELDS}


class Verification(models.Model):
    """Someone checked that the page still holds, on some versions, and said how."""

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="verifications")
    revision = models.PositiveIntegerField(help_text="the page revision that was verified")
    note = models.TextField()
    versions = models.JSONField(
        default=dict, blank=True, help_text='what it was verified on, e.g. {"nccl": "2.23.4"}'
    )
    verified_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    verified_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-verified_at", "-id"]

    def __str__(self) -> str:
        return f"verification of {self.page_id} at {self.verified_at:%Y-%m-%d}"


class Citation(models.Model):
    """A page cites a piece of evidence owned by some app: ``kind`` + ``object_id``.

    Kinds are a registry (knowledge/citations.py): run and artifact here; reports, incidents
    and findings register theirs. ``pinned`` freezes what was cited (artifact sha256, parser
    version, the numbers shown) so a re-parse, which gives runs new ids, neither breaks the
    link nor silently changes the proof.
    """

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="citations")
    kind = models.CharField(max_length=20, db_index=True)
    object_id = models.CharField(max_length=64, db_index=True)
    pinned = models.JSONField(default=dict, blank=True)
    note = models.CharField(max_length=300, blank=True)
    added_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["added_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["page", "kind", "object_id"], name="kb_cite_once_per_page"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id} cited by page {self.page_id}"


class SearchEntry(models.Model):
    """One searchable document from any registered source (knowledge/search.py).

    On SQLite an FTS5 table mirrors title/body/keywords through triggers (see migration
    0002); on PostgreSQL a GIN index over the same text serves full-text queries.
    """

    source = models.CharField(max_length=20)
    key = models.CharField(max_length=64)
    title = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    # Parts of compound words (net.ipv4.tcp_mtu_probing -> "net ipv4 tcp mtu probing"): the
    # two engines split such words differently, this column makes both find the parts.
    keywords = models.TextField(blank=True)
    url = models.CharField(max_length=500)
    subtype = models.CharField(max_length=40, blank=True)
    topic = models.CharField(max_length=40, blank=True)
    generations = models.CharField(max_length=300, blank=True, help_text="|H100|H200|")
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "key"], name="kb_search_entry_once")
        ]

    def __str__(self) -> str:
        return f"{self.source}:{self.key}"


class PageEmbed(PinnedEmbed):
    """Evidence drawn inside a page's body: ``{{chart run=12}}`` is saved as ``pin=<this id>``.

    The shortcode kinds and their rendering are the post-mortems' registry
    (documents/embeds.py; reports add ``{{report id=..}}``); this row is the page's own copy
    of what was pinned, so a re-parse or a deleted run never changes what the page shows.
    """

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="embeds")

    def __str__(self) -> str:
        return f"{self.kind} embed {self.pk} on page {self.page_id}"


class PageAlias(models.Model):
    """Another slug under which a page is found: ``/kb/<alias>/`` redirects to the page.

    Topic names that other code links to (a findings rule's ``kb`` topic, an old slug after a
    rename) resolve to the page that covers them, without the linking code knowing its slug.
    """

    slug = models.SlugField(max_length=120, unique=True)
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="aliases")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return f"{self.slug} -> page {self.page_id}"


class RecipeReview(models.Model):
    """A later sweep disagrees with a tuning recipe (docs/tuning.md): the recipe's value does
    not win (or loses) at sizes the recipe claims, so someone should look at it again."""

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="reviews")
    sweep = models.ForeignKey("baselines.Sweep", on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["page", "sweep"], name="kb_review_once_per_sweep")
        ]

    def __str__(self) -> str:
        return f"{self.page_id} disputed by sweep {self.sweep_id}"
