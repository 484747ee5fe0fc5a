from rest_framework.routers import SimpleRouter

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

urlpatterns = router.urls
