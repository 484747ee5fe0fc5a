from rest_framework.routers import DefaultRouter

from artifacts.api import ArtifactViewSet
from artifacts.runs.api import RunViewSet

# One router for the core and the runs family, so the API root lists both.
router = DefaultRouter()
router.register("artifacts", ArtifactViewSet, basename="api-artifact")
router.register("runs", RunViewSet, basename="api-run")

urlpatterns = router.urls
