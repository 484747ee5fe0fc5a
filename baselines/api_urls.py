from django.urls import path
from rest_framework.routers import SimpleRouter

from baselines.api import (
    AlertSummaryViewSet,
    AlertViewSet,
    BaselineViewSet,
    HostMappingViewSet,
    ProfileViewSet,
    RunComparisonView,
    RunEfficiencyView,
    SeriesViewSet,
    StackViewSet,
    SubscriptionViewSet,
)
from baselines.sweeps.api import SweepViewSet

# SimpleRouter: no second API root view next to the artifacts router's.
router = SimpleRouter()
router.register("profiles", ProfileViewSet, basename="api-profile")
router.register("host-mappings", HostMappingViewSet, basename="api-host-mapping")
router.register("stacks", StackViewSet, basename="api-stack")
router.register("series", SeriesViewSet, basename="api-series")
router.register("baselines", BaselineViewSet, basename="api-baseline")
router.register("alerts", AlertViewSet, basename="api-alert")
router.register("alert-summaries", AlertSummaryViewSet, basename="api-alert-summary")
router.register("subscriptions", SubscriptionViewSet, basename="api-subscription")
router.register("sweeps", SweepViewSet, basename="api-sweep")

urlpatterns = [
    # Beside the artifacts router's runs/{id}/: included before it in perfhub/urls.py.
    path("runs/<int:pk>/comparison/", RunComparisonView.as_view(), name="api-run-comparison"),
    path("runs/<int:pk>/efficiency/", RunEfficiencyView.as_view(), name="api-run-efficiency"),
    *router.urls,
]
