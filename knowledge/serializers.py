"""Explicit input and output shapes of the knowledge API."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from knowledge.citations import KINDS
from knowledge.embeds import page_html
from knowledge.models import (
    DEFAULT_VERIFY_INTERVAL_DAYS,
    Page,
    PageRevision,
    PageStatus,
    PageType,
    Topic,
)
from knowledge.querysets import page_freshness


class PageCreateSerializer(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    slug = serializers.CharField(max_length=120, required=False, allow_blank=True,
                                 help_text="default: made from the title")  # fmt: skip
    type = serializers.ChoiceField(choices=PageType.choices)
    topic = serializers.ChoiceField(choices=Topic.choices)
    status = serializers.ChoiceField(choices=PageStatus.choices, default=PageStatus.DRAFT)
    body = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False,
                                 help_text="Markdown")  # fmt: skip
    tags = serializers.ListField(child=serializers.CharField(max_length=30), required=False)
    applies_to = serializers.JSONField(
        required=False,
        help_text='e.g. {"gpu": ["H100", "H200"], "fabric": ["roce"], "nccl": ">=2.19, <2.24"}',
    )
    settings = serializers.ListField(
        child=serializers.DictField(), required=False,
        help_text='e.g. [{"kind": "env", "name": "NCCL_IB_GID_INDEX", "value": "3"}]',
    )  # fmt: skip
    verify_interval_days = serializers.IntegerField(
        min_value=0, max_value=3650, required=False, default=DEFAULT_VERIFY_INTERVAL_DAYS
    )
    owner = serializers.CharField(required=False, allow_blank=True, allow_null=True,
                                  help_text="username")  # fmt: skip
    message = serializers.CharField(required=False, allow_blank=True, max_length=300)


class PageUpdateSerializer(serializers.Serializer):
    revision = serializers.IntegerField(
        help_text="the revision this edit is based on; a newer one on the server gives 409"
    )
    title = serializers.CharField(max_length=200, required=False)
    type = serializers.ChoiceField(choices=PageType.choices, required=False)
    topic = serializers.ChoiceField(choices=Topic.choices, required=False)
    status = serializers.ChoiceField(choices=PageStatus.choices, required=False)
    body = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    tags = serializers.ListField(child=serializers.CharField(max_length=30), required=False)
    applies_to = serializers.JSONField(required=False)
    settings = serializers.ListField(child=serializers.DictField(), required=False)
    verify_interval_days = serializers.IntegerField(min_value=0, max_value=3650, required=False)
    owner = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    message = serializers.CharField(required=False, allow_blank=True, max_length=300)


class PageWrittenSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    revision = serializers.IntegerField()
    url = serializers.CharField()


class ConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    current_revision = serializers.IntegerField()
    base_revision = serializers.IntegerField()
    current = serializers.DictField(help_text="the page's content at current_revision")


class BadgeSerializer(serializers.Serializer):
    dimension = serializers.CharField()
    label = serializers.CharField()
    text = serializers.CharField()


class PageListSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    owner = serializers.SerializerMethodField()
    badges = BadgeSerializer(many=True, read_only=True)
    stale = serializers.SerializerMethodField()
    stale_reasons = serializers.SerializerMethodField()

    class Meta:
        model = Page
        fields = [
            "id", "slug", "url", "page_url", "title", "type", "topic", "status", "owner", "tags",
            "applies_to", "badges", "revision", "verified_at", "verify_interval_days", "stale",
            "stale_reasons", "evidence_count", "evidence_newest_at", "updated_at",
        ]  # fmt: skip

    def get_url(self, page: Page) -> str:
        return _absolute(self, reverse("api-page-detail", args=[page.slug]))

    def get_page_url(self, page: Page) -> str:
        return _absolute(self, page.get_absolute_url())

    def get_owner(self, page: Page) -> str | None:
        return page.owner.get_username() if page.owner_id and page.owner else None

    def _freshness(self, page: Page) -> Any:
        if not hasattr(page, "freshness"):
            page.freshness = page_freshness(page)  # type: ignore[attr-defined]
        return page.freshness  # type: ignore[attr-defined]

    def get_stale(self, page: Page) -> bool:
        return self._freshness(page).stale

    def get_stale_reasons(self, page: Page) -> list[str]:
        return list(self._freshness(page).reasons)


class PageDetailSerializer(PageListSerializer):
    html = serializers.SerializerMethodField(help_text="the body as sanitized HTML")
    citations = serializers.SerializerMethodField()
    aliases = serializers.SerializerMethodField(help_text="other slugs that redirect here")

    class Meta(PageListSerializer.Meta):
        fields = [*PageListSerializer.Meta.fields, "body", "html", "settings", "citations",
                  "aliases", "symptoms"]  # fmt: skip

    def get_aliases(self, page: Page) -> list[str]:
        return sorted(a.slug for a in page.aliases.all())

    def get_html(self, page: Page) -> str:
        return str(page_html(page.body, page))

    def get_citations(self, page: Page) -> list[dict[str, Any]]:
        return [
            {
                "id": c.pk,
                "kind": c.kind,
                "object_id": c.object_id,
                "note": c.note,
                "pinned": c.pinned,
            }
            for c in page.citations.all()
        ]


class RevisionSerializer(serializers.ModelSerializer):
    author = serializers.StringRelatedField()

    class Meta:
        model = PageRevision
        fields = ["number", "message", "author", "restored_from", "created_at", "title", "status"]


class VerifySerializer(serializers.Serializer):
    note = serializers.CharField()
    versions = serializers.DictField(
        child=serializers.CharField(allow_blank=True),
        required=False,
        help_text='e.g. {"nccl": "2.23.4", "driver": "550.54.15"}',
    )
    verified_at = serializers.DateTimeField(required=False)


class CiteSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=[])
    object_id = serializers.CharField(max_length=64)
    note = serializers.CharField(required=False, allow_blank=True, max_length=300)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = sorted(KINDS)


class SearchHitSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="page, artifact, incident, ...")
    subtype = serializers.CharField(help_text="page type or artifact kind")
    title = serializers.CharField(source="title_text")
    url = serializers.CharField()
    snippet = serializers.CharField(help_text="escaped HTML; only <mark> elements are markup")
    topic = serializers.CharField()
    score = serializers.FloatField()


class FacetValueSerializer(serializers.Serializer):
    value = serializers.CharField()
    count = serializers.IntegerField()
    selected = serializers.BooleanField()


class SearchResponseSerializer(serializers.Serializer):
    query = serializers.CharField()
    count = serializers.IntegerField()
    results = SearchHitSerializer(many=True)
    facets = serializers.DictField(child=FacetValueSerializer(many=True))


class VerdictSerializer(serializers.Serializer):
    dimension = serializers.CharField()
    wanted = serializers.CharField()
    have = serializers.CharField(allow_null=True)
    state = serializers.ChoiceField(choices=["match", "mismatch", "unknown"])


class ApplicablePageSerializer(serializers.Serializer):
    slug = serializers.CharField(source="page.slug")
    title = serializers.CharField(source="page.title")
    page_url = serializers.SerializerMethodField()
    relevance = serializers.IntegerField()
    verdicts = VerdictSerializer(many=True)

    def get_page_url(self, item: Any) -> str:
        return _absolute(self, item.page.get_absolute_url())


def _absolute(serializer: serializers.Serializer, path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request else path
