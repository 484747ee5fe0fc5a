"""REST endpoints for incidents, timelines, post-mortems, bundles, action items and vendor
tickets. Adapters only: validate input, call a service or a queryset, render."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import FileResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from incidents.bundles.services import bundle_request
from incidents.drafting import draft_from_evidence
from incidents.grouping import grouped_for
from incidents.models import (
    ALL_MILESTONES,
    ActionItem,
    EvidenceBundle,
    Incident,
    PostMortemReview,
    PostMortemRevision,
    TimelineEvent,
    VendorTicket,
)
from incidents.postmortems import (
    PostMortemConflict,
    postmortem_restore,
    postmortem_save,
    postmortem_state,
    render_postmortem,
    revision_diff,
)
from incidents.querysets import action_items_filtered, incidents_filtered, tickets_filtered
from incidents.reviews import review_add, review_resolve
from incidents.serializers import (
    ActionItemSerializer,
    AttachSerializer,
    BundleRequestSerializer,
    BundleSerializer,
    CorrespondenceSerializer,
    EvidenceSerializer,
    IncidentSerializer,
    IncidentWriteSerializer,
    MilestoneRecordSerializer,
    MilestoneWriteSerializer,
    PostMortemConflictSerializer,
    PostMortemDiffSerializer,
    PostMortemDraftSerializer,
    PostMortemRestoreSerializer,
    PostMortemReviewSerializer,
    PostMortemReviewWriteSerializer,
    PostMortemRevisionSerializer,
    PostMortemSerializer,
    PostMortemWriteSerializer,
    SuggestionDecisionSerializer,
    SuggestionItemSerializer,
    TimelineEventPatchSerializer,
    TimelineEventSerializer,
    TimelineEventWriteSerializer,
    VendorTicketSerializer,
)
from incidents.services import (
    IncidentError,
    action_item_create,
    action_item_update,
    correspondence_add,
    incident_attach_artifacts,
    incident_create,
    incident_detach_artifact,
    incident_set_milestone,
    incident_set_status,
    incident_update,
    suggestion_accept,
    suggestion_reject,
    ticket_create,
    ticket_update,
    timeline_event_create,
    timeline_event_update,
)

_INCIDENT_FILTERS = [
    OpenApiParameter("status", str, enum=Incident.Status.values),
    OpenApiParameter("open", bool, description="everything but closed"),
    OpenApiParameter("severity", str, enum=["SEV1", "SEV2", "SEV3", "SEV4"]),
    OpenApiParameter("tag", str),
    OpenApiParameter("owner", str, description="username"),
    OpenApiParameter("cluster", str, description="contains"),
    OpenApiParameter("hardware_generation", str),
    OpenApiParameter("since", str, description="detected on or after YYYY-MM-DD"),
    OpenApiParameter("until", str, description="detected on or before YYYY-MM-DD"),
    OpenApiParameter("vendor", str, enum=VendorTicket.Vendor.values, description="of a ticket"),
    OpenApiParameter(
        "q", str, description="title, summary, impact, cluster, hosts, jobs, tag or case number"
    ),
]


def _bad(exc: Exception) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


class IncidentViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
    mixins.UpdateModelMixin, viewsets.GenericViewSet,
):  # fmt: skip
    """Incidents. Writes go through incidents.services; PUT/PATCH take the same fields as
    POST (all optional on PATCH), plus ``status`` and the lifecycle ``*_at`` times."""

    serializer_class = IncidentSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[Incident]:
        if self.action == "list":
            return incidents_filtered(self.request.query_params)
        return Incident.objects.select_related("owner").prefetch_related("tags", "participants")

    @extend_schema(parameters=_INCIDENT_FILTERS)
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=IncidentWriteSerializer, responses={201: IncidentSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        form = IncidentWriteSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        wanted_status = data.pop("status", None)
        milestones = {m: data.pop(f"{m}_at", None) for m in ALL_MILESTONES}
        try:
            incident = incident_create(
                by=request.user,
                tags=data.pop("tags", []),
                participants=data.pop("participants", []),
                milestones=milestones,
                override=data.pop("override", False),
                **data,
            )
            if wanted_status and wanted_status != incident.status:
                incident = incident_set_status(
                    incident=incident, status=wanted_status, by=request.user
                )
        except IncidentError as exc:
            return _bad(exc)
        body = IncidentSerializer(self._fresh(incident), context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=IncidentWriteSerializer, responses={200: IncidentSerializer})
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        incident = self.get_object()
        partial = kwargs.get("partial", False)
        form = IncidentWriteSerializer(data=request.data, partial=partial)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        override = data.pop("override", False)
        wanted_status = data.pop("status", None)
        times = {m: data.pop(f"{m}_at") for m in ALL_MILESTONES if f"{m}_at" in data}
        try:
            incident = incident_update(
                incident=incident,
                by=request.user,
                tags=data.pop("tags", None),
                participants=data.pop("participants", None),
                **data,
            )
            for milestone, at in times.items():
                incident = incident_set_milestone(
                    incident=incident, milestone=milestone, at=at, by=request.user,
                    override=override,
                )  # fmt: skip
            if wanted_status and wanted_status != incident.status:
                incident = incident_set_status(
                    incident=incident, status=wanted_status, by=request.user
                )
        except IncidentError as exc:
            return _bad(exc)
        body = IncidentSerializer(self._fresh(incident), context={"request": request}).data
        return Response(body)

    @extend_schema(request=IncidentWriteSerializer, responses={200: IncidentSerializer})
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self.update(request, *args, partial=True, **kwargs)

    def _fresh(self, incident: Incident) -> Incident:
        """Re-read with tags/participants, which the services changed behind the instance."""
        return Incident.objects.prefetch_related("tags", "participants").get(pk=incident.pk)

    # --- lifecycle ------------------------------------------------------------------------

    @extend_schema(
        methods=["GET"],
        responses={200: MilestoneRecordSerializer(many=True)},
        summary="Lifecycle history",
        description="Every change of a lifecycle time, newest first: who set it and how "
        "(manual, status change, derived from an artifact), and whether out of order.",
    )
    @extend_schema(
        methods=["POST"],
        request=MilestoneWriteSerializer,
        responses={201: MilestoneRecordSerializer(many=True)},
        summary="Set one lifecycle time",
        description="With `artifact` and no `at`, the time is derived from the artifact. "
        "Out-of-order times give 400 naming both times unless `override` is true.",
    )
    @action(detail=True, methods=["get", "post"])
    def lifecycle(self, request: Request, pk: str | None = None) -> Response:
        incident = self.get_object()
        code = status.HTTP_200_OK
        if request.method == "POST":
            form = MilestoneWriteSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            data = form.validated_data
            if (
                data.get("artifact")
                and not incident.evidence.filter(artifact=data["artifact"]).exists()
            ):
                return _bad(IncidentError("derive lifecycle times from attached evidence only"))
            try:
                incident_set_milestone(
                    incident=incident, milestone=data["milestone"], at=data.get("at"),
                    by=request.user, artifact=data.get("artifact"), override=data["override"],
                    note=data["note"],
                )  # fmt: skip
            except IncidentError as exc:
                return _bad(exc)
            code = status.HTTP_201_CREATED
        records = incident.milestones.select_related("set_by")
        return Response(MilestoneRecordSerializer(records, many=True).data, status=code)

    # --- evidence ---------------------------------------------------------------------------

    @extend_schema(
        methods=["GET"], responses={200: EvidenceSerializer(many=True)}, summary="Evidence"
    )
    @extend_schema(
        methods=["POST"],
        request=AttachSerializer,
        responses={201: EvidenceSerializer(many=True)},
        summary="Attach artifacts as evidence",
        description="Already attached artifacts are skipped; unknown ids give 400.",
    )
    @action(detail=True, methods=["get", "post"], url_path="artifacts")
    def artifacts(self, request: Request, pk: str | None = None) -> Response:
        incident = self.get_object()
        if request.method == "POST":
            form = AttachSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            try:
                incident_attach_artifacts(
                    incident=incident, artifact_ids=form.validated_data["artifact_ids"],
                    by=request.user, note=form.validated_data.get("note", ""),
                )  # fmt: skip
            except IncidentError as exc:
                return _bad(exc)
        evidence = incident.evidence.select_related("artifact", "added_by")
        body = EvidenceSerializer(evidence, many=True, context={"request": request}).data
        code = status.HTTP_201_CREATED if request.method == "POST" else status.HTTP_200_OK
        return Response(body, status=code)

    @extend_schema(request=None, responses={204: None}, summary="Detach an artifact")
    @action(detail=True, methods=["delete"], url_path=r"artifacts/(?P<artifact_id>\d+)")
    def detach(self, request: Request, pk: str | None = None, artifact_id: str = "") -> Response:
        incident_detach_artifact(incident=self.get_object(), artifact_id=int(artifact_id))
        return Response(status=status.HTTP_204_NO_CONTENT)

    # --- suggestions and timeline ---------------------------------------------------------

    @extend_schema(responses={200: SuggestionItemSerializer(many=True)}, summary="Suggested events")
    @action(detail=True, methods=["get"], url_path="suggested-events")
    def suggested_events(self, request: Request, pk: str | None = None) -> Response:
        suggestions = grouped_for(self.get_object())
        return Response(SuggestionItemSerializer(suggestions, many=True).data)

    @extend_schema(
        request=SuggestionDecisionSerializer,
        responses={201: TimelineEventSerializer},
        summary="Accept a suggested event",
        description="Creates a timeline event linked to the suggestion's artifact/run. "
        "`kind`, `text` and `key_event` override the suggestion's.",
    )
    @action(detail=True, methods=["post"], url_path="suggested-events/accept")
    def accept_suggestion(self, request: Request, pk: str | None = None) -> Response:
        form = SuggestionDecisionSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            event = suggestion_accept(
                incident=self.get_object(), key=data["key"], by=request.user,
                kind=data.get("kind"), text=data.get("text"), key_event=data["key_event"],
            )  # fmt: skip
        except IncidentError as exc:
            return _bad(exc)
        return Response(TimelineEventSerializer(event).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=SuggestionDecisionSerializer, responses={204: None}, summary="Reject a suggestion"
    )
    @action(detail=True, methods=["post"], url_path="suggested-events/reject")
    def reject_suggestion(self, request: Request, pk: str | None = None) -> Response:
        form = SuggestionDecisionSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            suggestion_reject(
                incident=self.get_object(), key=form.validated_data["key"], by=request.user
            )
        except IncidentError as exc:
            return _bad(exc)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        methods=["GET"],
        responses={200: TimelineEventSerializer(many=True)},
        parameters=[
            OpenApiParameter("kind", str, many=True, enum=TimelineEvent.Kind.values),
            OpenApiParameter("key", bool, description="key events only"),
        ],
    )
    @extend_schema(
        methods=["POST"],
        request=TimelineEventWriteSerializer,
        responses={201: TimelineEventSerializer},
    )
    @action(detail=True, methods=["get", "post"])
    def timeline(self, request: Request, pk: str | None = None) -> Response:
        incident = self.get_object()
        if request.method == "POST":
            form = TimelineEventWriteSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            try:
                event = timeline_event_create(
                    incident=incident, by=request.user, **form.validated_data
                )
            except IncidentError as exc:
                return _bad(exc)
            return Response(TimelineEventSerializer(event).data, status=status.HTTP_201_CREATED)
        events = incident.events.select_related("author")
        if kinds := request.query_params.getlist("kind"):
            events = events.filter(kind__in=kinds)
        if request.query_params.get("key") in ("1", "true"):
            events = events.filter(key=True)
        return Response(TimelineEventSerializer(events, many=True).data)

    # --- post-mortem ----------------------------------------------------------------------

    @extend_schema(
        responses={200: PostMortemDraftSerializer},
        summary="The post-mortem template filled from the evidence (not saved)",
    )
    @action(detail=True, methods=["get"], url_path="postmortem/draft-from-evidence")
    def postmortem_draft(self, request: Request, pk: str | None = None) -> Response:
        incident = self.get_object()
        return Response(
            {"body": draft_from_evidence(incident), "revision": postmortem_state(incident).revision}
        )

    @extend_schema(methods=["GET"], responses={200: PostMortemReviewSerializer(many=True)})
    @extend_schema(
        methods=["POST"],
        request=PostMortemReviewWriteSerializer,
        responses={201: PostMortemReviewSerializer},
        summary="Review the post-mortem (a comment, changes requested, or an approval)",
    )
    @action(detail=True, methods=["get", "post"], url_path="postmortem/reviews")
    def postmortem_reviews(self, request: Request, pk: str | None = None) -> Response:
        incident = self.get_object()
        if request.method == "POST":
            form = PostMortemReviewWriteSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            try:
                review = review_add(incident=incident, by=request.user, **form.validated_data)
            except IncidentError as exc:
                return _bad(exc)
            return Response(PostMortemReviewSerializer(review).data, status=status.HTTP_201_CREATED)
        reviews = PostMortemReview.objects.filter(postmortem__incident=incident).select_related(
            "reviewer", "resolved_by"
        )
        return Response(PostMortemReviewSerializer(reviews, many=True).data)

    @extend_schema(request=None, responses={200: PostMortemReviewSerializer})
    @action(
        detail=True,
        methods=["post"],
        url_path=r"postmortem/reviews/(?P<review_id>\d+)/resolve",
    )
    def postmortem_review_resolve(
        self, request: Request, pk: str | None = None, review_id: str | None = None
    ) -> Response:
        review = get_object_or_404(
            PostMortemReview, pk=review_id, postmortem__incident=self.get_object()
        )
        review = review_resolve(review=review, by=request.user)
        return Response(PostMortemReviewSerializer(review).data)

    @extend_schema(methods=["GET"], responses={200: PostMortemSerializer}, summary="Post-mortem")
    @extend_schema(
        methods=["PUT"],
        request=PostMortemWriteSerializer,
        responses={
            200: PostMortemSerializer,
            409: OpenApiResponse(
                PostMortemConflictSerializer,
                description="`revision` is not the current one: nothing was saved; the "
                "answer carries the current revision and body (and a merge when possible)",
            ),
        },
        summary="Save the post-mortem as a new revision",
    )
    @action(detail=True, methods=["get", "put"])
    def postmortem(self, request: Request, pk: str | None = None) -> Response:
        incident = self.get_object()
        if request.method == "PUT":
            form = PostMortemWriteSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            data = form.validated_data
            try:
                postmortem_save(
                    incident=incident, body=data["body"], base_revision=data["revision"],
                    by=request.user, message=data.get("message", ""), status=data.get("status"),
                )  # fmt: skip
            except PostMortemConflict as conflict:
                return _conflict_response(conflict)
            except IncidentError as exc:
                return _bad(exc)
        return Response(_postmortem_body(incident))

    @extend_schema(
        responses={200: PostMortemRevisionSerializer(many=True)}, summary="Post-mortem revisions"
    )
    @action(detail=True, methods=["get"], url_path="postmortem/revisions")
    def postmortem_revisions(self, request: Request, pk: str | None = None) -> Response:
        revisions = PostMortemRevision.objects.filter(
            postmortem__incident=self.get_object()
        ).select_related("author")
        return Response(PostMortemRevisionSerializer(revisions, many=True).data)

    @extend_schema(
        responses={200: PostMortemDiffSerializer},
        parameters=[
            OpenApiParameter("a", int, description="older revision (0: empty; default b-1)"),
            OpenApiParameter("b", int, description="newer revision (default: the latest)"),
        ],
        summary="Diff two post-mortem revisions",
    )
    @action(detail=True, methods=["get"], url_path="postmortem/diff")
    def postmortem_diff(self, request: Request, pk: str | None = None) -> Response:
        bodies = dict(
            PostMortemRevision.objects.filter(postmortem__incident=self.get_object()).values_list(
                "number", "body"
            )
        )
        if not bodies:
            return Response({"detail": "no revisions yet"}, status=status.HTTP_404_NOT_FOUND)
        try:
            new = int(request.query_params.get("b", max(bodies)))
            old = int(request.query_params.get("a", new - 1))
        except ValueError:
            return _bad(ValueError("a and b are revision numbers"))
        if new not in bodies or (old not in bodies and old != 0):
            return Response(
                {"detail": f"no such revisions: {old}, {new}"}, status=status.HTTP_404_NOT_FOUND
            )
        lines = revision_diff(bodies.get(old, ""), bodies[new])
        return Response({"a": old, "b": new, "lines": [list(line) for line in lines]})

    @extend_schema(
        request=PostMortemRestoreSerializer,
        responses={200: PostMortemSerializer, 409: PostMortemConflictSerializer},
        summary="Restore an old revision as a new one",
        description="History is never rewritten: the old text becomes the next revision. "
        "`revision` must be the current one, else 409 as for PUT.",
    )
    @action(detail=True, methods=["post"], url_path="postmortem/restore")
    def postmortem_restore(self, request: Request, pk: str | None = None) -> Response:
        incident = self.get_object()
        form = PostMortemRestoreSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            postmortem_restore(
                incident=incident, number=form.validated_data["number"],
                base_revision=form.validated_data["revision"], by=request.user,
            )  # fmt: skip
        except PostMortemConflict as conflict:
            return _conflict_response(conflict)
        except IncidentError as exc:
            return _bad(exc)
        return Response(_postmortem_body(incident))

    # --- bundles --------------------------------------------------------------------------

    @extend_schema(methods=["GET"], responses={200: BundleSerializer(many=True)})
    @extend_schema(
        methods=["POST"],
        request=BundleRequestSerializer,
        responses={201: BundleSerializer},
        summary="Build an evidence bundle",
        description="Small inputs are built before the answer (status `ready`, `sha256` and "
        "`download_url` set); large ones are built by a worker: poll `url` until `ready`.",
    )
    @action(detail=True, methods=["get", "post"])
    def bundles(self, request: Request, pk: str | None = None) -> Response:
        incident = self.get_object()
        if request.method == "POST":
            return _create_bundle(request, incident=incident)
        bundles = incident.bundles.prefetch_related("artifacts").select_related("created_by")
        return Response(BundleSerializer(bundles, many=True, context={"request": request}).data)


def _conflict_response(conflict: PostMortemConflict) -> Response:
    """409 with the current revision and text: nothing was saved."""
    current = conflict.current
    return Response(
        {
            "detail": str(conflict),
            "revision": current.revision,
            "body": current.body,
            "status": current.status,
            "merged": conflict.merged,
        },
        status=status.HTTP_409_CONFLICT,
    )


def _postmortem_body(incident: Incident) -> dict[str, Any]:
    state = postmortem_state(incident)
    pm = state.postmortem
    latest = pm.revisions.first() if pm else None
    return {
        "body": state.body,
        "revision": state.revision,
        "status": state.status,
        "message": latest.message if latest else "",
        "html": str(render_postmortem(state.body, incident, interactive=False)),
        "updated_by": pm.updated_by.get_username() if pm and pm.updated_by else None,
        "updated_at": pm.updated_at if pm else None,
    }


def _create_bundle(
    request: Request, *, incident: Incident | None = None, ticket: VendorTicket | None = None
) -> Response:
    form = BundleRequestSerializer(data=request.data)
    form.is_valid(raise_exception=True)
    data = form.validated_data
    try:
        bundle = bundle_request(
            by=request.user,
            incident=incident,
            ticket=ticket or data.get("ticket"),
            artifact_ids=data.get("artifact_ids"),
            redact=data["redact"],
            patterns=data["patterns"],
        )
    except IncidentError as exc:
        return _bad(exc)
    body = BundleSerializer(bundle, context={"request": request}).data
    return Response(body, status=status.HTTP_201_CREATED)


class TimelineEventViewSet(
    mixins.RetrieveModelMixin, mixins.UpdateModelMixin, mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):  # fmt: skip
    """One timeline event: change its time, kind, text or key flag, or delete it."""

    queryset = TimelineEvent.objects.select_related("author")
    serializer_class = TimelineEventSerializer
    http_method_names = ["get", "patch", "delete", "head", "options"]

    @extend_schema(request=TimelineEventPatchSerializer, responses={200: TimelineEventSerializer})
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        form = TimelineEventPatchSerializer(data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        try:
            event = timeline_event_update(event=self.get_object(), **form.validated_data)
        except IncidentError as exc:
            return _bad(exc)
        return Response(TimelineEventSerializer(event).data)


class ActionItemViewSet(viewsets.ModelViewSet):
    """Action items of all incidents. ``status`` defaults to ``open``; ``status=any`` for all."""

    serializer_class = ActionItemSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[ActionItem]:
        if self.action == "list":
            return action_items_filtered(self.request.query_params)
        return ActionItem.objects.select_related("owner")

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=[*ActionItem.Status.values, "any"]),
            OpenApiParameter("type", str, enum=ActionItem.Type.values),
            OpenApiParameter("owner", str, description="username"),
            OpenApiParameter("incident", int),
            OpenApiParameter("overdue", bool),
        ]
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    def perform_create(self, serializer: serializers.BaseSerializer) -> None:
        data = dict(serializer.validated_data)
        try:
            serializer.instance = action_item_create(
                incident=data.pop("incident"), title=data.pop("title"), by=self.request.user, **data
            )
        except IncidentError as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from exc

    def perform_update(self, serializer: serializers.BaseSerializer) -> None:
        data = dict(serializer.validated_data)
        data.pop("incident", None)  # an item stays with its incident
        try:
            serializer.instance = action_item_update(item=serializer.instance, **data)
        except IncidentError as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from exc


class VendorTicketViewSet(viewsets.ModelViewSet):
    serializer_class = VendorTicketSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[VendorTicket]:
        if self.action == "list":
            return tickets_filtered(self.request.query_params).prefetch_related(
                "incidents", "artifacts"
            )
        return VendorTicket.objects.prefetch_related("incidents", "artifacts")

    @extend_schema(
        parameters=[
            OpenApiParameter("vendor", str, enum=VendorTicket.Vendor.values),
            OpenApiParameter("status", str, enum=VendorTicket.Status.values),
            OpenApiParameter("open", bool),
            OpenApiParameter("severity", str),
            OpenApiParameter("incident", int),
            OpenApiParameter("q", str, description="title or case number contains"),
        ]
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    def perform_create(self, serializer: serializers.BaseSerializer) -> None:
        data = dict(serializer.validated_data)
        try:
            serializer.instance = ticket_create(
                title=data.pop("title"), vendor=data.pop("vendor"), by=self.request.user,
                incident_ids=[i.pk for i in data.pop("incidents", [])],
                artifact_ids=[a.pk for a in data.pop("artifacts", [])],
                **data,
            )  # fmt: skip
        except IncidentError as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from exc

    def perform_update(self, serializer: serializers.BaseSerializer) -> None:
        data = dict(serializer.validated_data)
        incidents, artifacts = data.pop("incidents", None), data.pop("artifacts", None)
        try:
            serializer.instance = ticket_update(
                ticket=serializer.instance, by=self.request.user,
                incident_ids=None if incidents is None else [i.pk for i in incidents],
                artifact_ids=None if artifacts is None else [a.pk for a in artifacts],
                **data,
            )  # fmt: skip
        except IncidentError as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from exc

    @extend_schema(methods=["GET"], responses={200: CorrespondenceSerializer(many=True)})
    @extend_schema(
        methods=["POST"],
        request=CorrespondenceSerializer,
        responses={201: CorrespondenceSerializer},
        summary="Log correspondence",
        description="What was sent to or received from the vendor (or an internal note). "
        "With `bundle`, records that the evidence bundle was sent.",
    )
    @action(detail=True, methods=["get", "post"])
    def correspondence(self, request: Request, pk: str | None = None) -> Response:
        ticket = self.get_object()
        if request.method == "POST":
            form = CorrespondenceSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            data = form.validated_data
            try:
                message = correspondence_add(
                    ticket=ticket, direction=data["direction"], text=data.get("text", ""),
                    by=request.user, at=data.get("at"), bundle=data.get("bundle"),
                )  # fmt: skip
            except IncidentError as exc:
                return _bad(exc)
            return Response(CorrespondenceSerializer(message).data, status=status.HTTP_201_CREATED)
        messages = ticket.messages.select_related("author")
        return Response(CorrespondenceSerializer(messages, many=True).data)

    @extend_schema(methods=["GET"], responses={200: BundleSerializer(many=True)})
    @extend_schema(
        methods=["POST"], request=BundleRequestSerializer, responses={201: BundleSerializer}
    )
    @action(detail=True, methods=["get", "post"])
    def bundles(self, request: Request, pk: str | None = None) -> Response:
        ticket = self.get_object()
        if request.method == "POST":
            return _create_bundle(request, ticket=ticket)
        bundles = ticket.bundles.prefetch_related("artifacts").select_related("created_by")
        return Response(BundleSerializer(bundles, many=True, context={"request": request}).data)


class BundleViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = BundleSerializer
    queryset = EvidenceBundle.objects.select_related("created_by").prefetch_related(
        Prefetch("artifacts")
    )

    @extend_schema(
        responses={(200, "application/zip"): OpenApiResponse(description="the zip file")},
        summary="Download a built bundle",
    )
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk: str | None = None) -> FileResponse | Response:
        bundle = get_object_or_404(EvidenceBundle, pk=pk)
        if bundle.status != EvidenceBundle.Status.READY:
            return Response(
                {"detail": f"bundle {bundle.pk} is {bundle.status}, not ready"},
                status=status.HTTP_409_CONFLICT,
            )
        return bundle_file_response(bundle)


def bundle_file_response(bundle: EvidenceBundle) -> FileResponse:
    """Always an attachment with nosniff, like artifact downloads."""
    response = FileResponse(
        bundle.file.open("rb"),
        as_attachment=True,
        filename=bundle.filename,
        content_type="application/zip",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response
