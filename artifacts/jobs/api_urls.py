from rest_framework.routers import SimpleRouter

from artifacts.jobs.api import JobViewSet

# SimpleRouter: the artifacts router already serves the API root at api/v1/.
router = SimpleRouter()
router.register("jobs", JobViewSet, basename="api-job")

urlpatterns = router.urls
