from django.urls import path
from rest_framework.routers import SimpleRouter

from knowledge.api import PageViewSet, search_api

router = SimpleRouter()
router.register("pages", PageViewSet, basename="api-page")

urlpatterns = [
    path("search/", search_api, name="api-search"),
    *router.urls,
]
