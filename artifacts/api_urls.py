from rest_framework.routers import DefaultRouter

from .api import ArtifactViewSet, RunViewSet

router = DefaultRouter()
router.register("artifacts", ArtifactViewSet, basename="api-artifact")
router.register("runs", RunViewSet, basename="api-run")

urlpatterns = router.urls
