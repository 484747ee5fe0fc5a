from rest_framework.routers import SimpleRouter

from artifacts.api import ArtifactViewSet
from artifacts.runs.api import RunViewSet

# The API root (perfhub/api_root.py) lists every app's groups; routers here have none.
router = SimpleRouter()
router.register("artifacts", ArtifactViewSet, basename="api-artifact")
router.register("runs", RunViewSet, basename="api-run")

urlpatterns = router.urls
