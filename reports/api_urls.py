from rest_framework.routers import SimpleRouter

from reports.api import ReportViewSet

# SimpleRouter: the artifacts router already serves the API root at api/v1/.
router = SimpleRouter()
router.register("reports", ReportViewSet, basename="api-report")

urlpatterns = router.urls
