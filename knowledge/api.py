"""REST endpoints for knowledge pages and search. Adapters: validate, call a service, render."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action, api_view
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge import applicability as appl
from knowledge.citations import CitationError
from knowledge.models import Page, PageStatus, PageType, Topic
from knowledge.querysets import pages_filtered, pages_for_facts, with_freshness
from knowledge.search import SOURCES, search
from knowledge.serializers import (
    ApplicablePageSerializer,
    CiteSerializer,
    ConflictSerializer,
    PageCreateSerializer,
    PageDetailSerializer,
    PageListSerializer,
    PageUpdateSerializer,
    PageWrittenSerializer,
    RevisionSerializer,
    SearchResponseSerializer,
    VerifySerializer,
)
from knowledge.services import (
    PageError,
    RevisionConflict,
    citation_add,
    page_create,
    page_update,
    page_verify,
)

_PAGE_FILTERS = [
    OpenApiParameter("generation", str, description="GPU model or architecture, e.g. H100, Hopper"),
    OpenApiParameter("type", str, enum=PageType.values),
    OpenApiParameter("topic", str, enum=Topic.values),
    OpenApiParameter("status", str, enum=PageStatus.values),
    OpenApiParameter("stale", bool, description="true: only stale pages; false: only fresh"),
    OpenApiParameter("fabric", str, enum=list(appl.FABRICS)),
    OpenApiParameter("nic", str, description="e.g. ConnectX-7"),
    OpenApiParameter("tag", str),
    OpenApiParameter("owner", str, description="username"),
    OpenApiParameter("q", str, description="title, slug or tag contains"),
]
_FACT_PARAMS = [
    OpenApiParameter(dim, str, description=f"{appl.LABELS[dim]} of the profile/run")
    for dim in appl.DIMENSIONS
]


def _written(page: Page, request: Request) -> dict[str, Any]:
    return {
        "id": page.pk,
        "slug": page.slug,
        "revision": page.revision,
        "url": request.build_absolute_uri(page.get_absolute_url()),
    }


def _bad(exc: PageError) -> Response:
    return Response({"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)


class PageViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    lookup_field = "slug"
    filter_backends: list[type] = []  # filtering is done by pages_filtered

    def get_queryset(self) -> QuerySet[Page]:
        if self.action == "list":
            return pages_filtered(self.request.query_params)
        return Page.objects.select_related("owner")

    def get_serializer_class(self) -> type:
        return PageListSerializer if self.action == "list" else PageDetailSerializer

    @extend_schema(parameters=_PAGE_FILTERS)
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        queryset = self.get_queryset()
        page = self.paginate_queryset(queryset)
        items = with_freshness(page if page is not None else queryset)
        data = PageListSerializer(items, many=True, context={"request": request}).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    @extend_schema(request=PageCreateSerializer, responses={201: PageWrittenSerializer})
    def create(self, request: Request) -> Response:
        form = PageCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        try:
            page = page_create(by=request.user, **data)
        except PageError as exc:
            return _bad(exc)
        return Response(_written(page, request), status=status.HTTP_201_CREATED)

    @extend_schema(
        request=PageUpdateSerializer,
        responses={
            200: PageWrittenSerializer,
            409: OpenApiResponse(
                ConflictSerializer, description="saved in between: re-read, merge"
            ),
        },
        description="Update some fields. `revision` must be the page's current revision; "
        "when someone saved in between the answer is 409 with the current content.",
    )
    def partial_update(self, request: Request, slug: str | None = None) -> Response:
        return self._update(request)

    @extend_schema(
        request=PageUpdateSerializer,
        responses={200: PageWrittenSerializer, 409: ConflictSerializer},
    )
    def update(self, request: Request, slug: str | None = None) -> Response:
        return self._update(request)

    def _update(self, request: Request) -> Response:
        page = self.get_object()
        form = PageUpdateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        base = data.pop("revision")
        try:
            saved = page_update(page=page, base_revision=base, by=request.user, **data)
        except RevisionConflict as exc:
            body = {
                "detail": str(exc),
                "current_revision": exc.page.revision,
                "base_revision": base,
                "current": exc.page.content(),
            }
            return Response(body, status=status.HTTP_409_CONFLICT)
        except PageError as exc:
            return _bad(exc)
        return Response(_written(saved, request))

    @extend_schema(responses=RevisionSerializer(many=True))
    @action(detail=True, methods=["get"])
    def revisions(self, request: Request, slug: str | None = None) -> Response:
        page = self.get_object()
        revisions = page.revisions.select_related("author").defer("body")
        return Response(RevisionSerializer(revisions, many=True).data)

    @extend_schema(request=VerifySerializer, responses={201: PageDetailSerializer})
    @action(detail=True, methods=["post"])
    def verify(self, request: Request, slug: str | None = None) -> Response:
        page = self.get_object()
        form = VerifySerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            page_verify(
                page=page,
                by=request.user,
                note=form.validated_data["note"],
                versions=form.validated_data.get("versions"),
                at=form.validated_data.get("verified_at"),
            )
        except PageError as exc:
            return _bad(exc)
        page.refresh_from_db()
        body = PageDetailSerializer(page, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=CiteSerializer, responses={201: PageDetailSerializer})
    @action(detail=True, methods=["post"])
    def citations(self, request: Request, slug: str | None = None) -> Response:
        page = self.get_object()
        form = CiteSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            citation_add(page=page, by=request.user, **form.validated_data)
        except CitationError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        page.refresh_from_db()
        body = PageDetailSerializer(page, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=_FACT_PARAMS,
        responses=ApplicablePageSerializer(many=True),
        description="Published pages that apply to a profile/run described by its facts.",
    )
    @action(detail=False, methods=["get"])
    def applicable(self, request: Request) -> Response:
        facts = {d: request.query_params.get(d, "") for d in appl.DIMENSIONS}
        found = pages_for_facts(facts, limit=50)
        return Response(
            ApplicablePageSerializer(found, many=True, context={"request": request}).data
        )


@extend_schema(
    parameters=[
        OpenApiParameter(
            "q", str, required=True, description='words, "phrases", -excluded, a or b'
        ),
        OpenApiParameter("type", str, many=True, enum=sorted(SOURCES) or None),
        OpenApiParameter("topic", str, enum=Topic.values),
        OpenApiParameter("generation", str),
        OpenApiParameter("limit", int, description="default 20, at most 100"),
        OpenApiParameter("offset", int),
    ],
    responses=SearchResponseSerializer,
)
@api_view(["GET"])
def search_api(request: Request) -> Response:
    params = request.query_params
    limit = min(100, max(1, _int(params.get("limit"), 20)))
    results = search(
        params.get("q", ""),
        types=params.getlist("type"),
        topic=params.get("topic", ""),
        generation=params.get("generation", ""),
        limit=limit,
        offset=max(0, _int(params.get("offset"), 0)),
    )
    body = {
        "query": results.query,
        "count": results.total,
        "results": results.hits,
        "facets": results.facets,
    }
    return Response(SearchResponseSerializer(body).data)


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
