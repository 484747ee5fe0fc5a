from rest_framework.routers import SimpleRouter

from artifacts.fabric.api import (
    CounterRateViewSet,
    CounterSampleViewSet,
    FindingViewSet,
    HostViewSet,
    LogEventViewSet,
)

router = SimpleRouter()
router.register("findings", FindingViewSet, basename="api-finding")
router.register("counter-samples", CounterSampleViewSet, basename="api-counter-sample")
router.register("counter-rates", CounterRateViewSet, basename="api-counter-rate")
router.register("log-events", LogEventViewSet, basename="api-log-event")
router.register("hosts", HostViewSet, basename="api-host")

urlpatterns = router.urls
