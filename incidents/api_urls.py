from django.urls import path
from rest_framework.routers import SimpleRouter

from incidents.alerting.api import AlertmanagerReceiver, GenericReceiver, WebhookCallViewSet
from incidents.api import (
    ActionItemViewSet,
    BundleViewSet,
    IncidentViewSet,
    TimelineEventViewSet,
    VendorTicketViewSet,
)

# SimpleRouter: the artifacts router already serves the API root at api/v1/.
router = SimpleRouter()
router.register("incidents", IncidentViewSet, basename="api-incident")
router.register("timeline-events", TimelineEventViewSet, basename="api-timeline-event")
router.register("action-items", ActionItemViewSet, basename="api-action-item")
router.register("vendor-tickets", VendorTicketViewSet, basename="api-ticket")
router.register("bundles", BundleViewSet, basename="api-bundle")
router.register("integrations/calls", WebhookCallViewSet, basename="api-webhook-call")

urlpatterns = [
    path(
        "integrations/alertmanager/",
        AlertmanagerReceiver.as_view(),
        name="api-alertmanager-receiver",
    ),
    path("integrations/webhook/", GenericReceiver.as_view(), name="api-generic-receiver"),
    *router.urls,
]
