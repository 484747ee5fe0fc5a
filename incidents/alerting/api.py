"""The alerting webhooks (their own token, not a user's) and the log of their calls.

``POST /api/v1/integrations/alertmanager/`` takes Prometheus Alertmanager's webhook
(version 4); ``POST /api/v1/integrations/webhook/`` the generic shape (Grafana alerting's
webhook contact point). The token travels as ``Authorization: Bearer <token>`` (Alertmanager
``http_config.authorization``), ``Authorization: Token <token>``, or as the password of
HTTP basic auth. Adapters only: the work is in services.py.
"""

from __future__ import annotations

import base64
import binascii

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from incidents.alerting.services import webhook_receive, webhook_replay
from incidents.models import WebhookCall
from incidents.services import IncidentError


class WebhookAnswerSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="what the call did, or why it was refused")
    call = serializers.IntegerField(help_text="id of the logged call (replayable)")
    incidents = serializers.ListField(child=serializers.IntegerField())
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    resolved = serializers.IntegerField()


class WebhookCallSerializer(serializers.ModelSerializer):
    receiver = serializers.StringRelatedField()

    class Meta:
        model = WebhookCall
        fields = [
            "id", "receiver", "kind", "received_at", "remote_addr", "status_code", "outcome",
            "incidents", "replay_of", "body",
        ]  # fmt: skip


class _Receiver(APIView):
    # The alerting tool authenticates with the receiver's token, checked in the service
    # (so refused calls are logged too); no user session, hence no CSRF.
    authentication_classes: list[type] = []
    permission_classes = [AllowAny]
    # per client address (PERFHUB_WEBHOOK_RATE): a looping alerting tool gets 429s, not a
    # flood of incident updates; throttled calls are not logged
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "webhooks"
    kind = ""

    @extend_schema(
        request=None,
        responses={
            200: WebhookAnswerSerializer,
            400: OpenApiResponse(
                WebhookAnswerSerializer, description="malformed: `detail` says why"
            ),
            401: OpenApiResponse(WebhookAnswerSerializer, description="unknown or missing token"),
        },
    )
    def post(self, request: Request) -> Response:
        outcome, call = webhook_receive(
            kind=self.kind, token=_token(request), body=request.body,
            remote_addr=request.META.get("REMOTE_ADDR", ""),
        )  # fmt: skip
        response = Response(outcome.as_json(call), status=outcome.status_code)
        if outcome.status_code == status.HTTP_401_UNAUTHORIZED:
            response["WWW-Authenticate"] = 'Bearer realm="perfhub-webhooks"'
        return response


class AlertmanagerReceiver(_Receiver):
    """Prometheus Alertmanager webhook (JSON version 4): opens or updates incidents."""

    kind = "alertmanager"


class GenericReceiver(_Receiver):
    """Generic alert JSON (Grafana alerting's webhook contact point shape)."""

    kind = "generic"


class WebhookCallViewSet(viewsets.ReadOnlyModelViewSet):
    """Every call to the alerting webhooks, newest first; editors can replay one."""

    queryset = WebhookCall.objects.select_related("receiver").prefetch_related("incidents")
    serializer_class = WebhookCallSerializer

    @extend_schema(request=None, responses={200: WebhookAnswerSerializer})
    @action(detail=True, methods=["post"])
    def replay(self, request: Request, pk: str | None = None) -> Response:
        try:
            outcome, call = webhook_replay(call=self.get_object())
        except IncidentError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(outcome.as_json(call), status=outcome.status_code)


def _token(request: Request) -> str:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() in ("bearer", "token"):
        return value.strip()
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(value.strip()).decode().partition(":")[2]
        except (binascii.Error, UnicodeDecodeError):
            return ""
    return ""
