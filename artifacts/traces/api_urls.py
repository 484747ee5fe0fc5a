from rest_framework.routers import SimpleRouter

from artifacts.traces.api import TraceViewSet

# SimpleRouter: the artifacts router already serves the API root at api/v1/.
router = SimpleRouter()
router.register("traces", TraceViewSet, basename="api-trace")

urlpatterns = router.urls
