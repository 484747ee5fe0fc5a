from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from perfhub import auth_oidc, views
from perfhub.api_root import ApiRootView

urlpatterns = [
    path("login/", auth_oidc.SignInView.as_view(), name="login"),
    # OpenID Connect's start and return; 404 unless PERFHUB_OIDC_CLIENT_ID is set
    path("oidc/authenticate/", auth_oidc.authenticate_view, name="oidc_authentication_init"),
    path("oidc/callback/", auth_oidc.callback_view, name="oidc_authentication_callback"),
    path("logout/", auth_oidc.SignOutView.as_view(), name="logout"),
    path("account/token/", views.api_token, name="api-token"),
    path("admin/", admin.site.urls),
    path("", include("artifacts.urls")),
    path("", include("artifacts.runs.urls")),
    path("api/v1/", ApiRootView.as_view(), name="api-root"),
    path("baselines/", include("baselines.urls")),
    # before the artifacts API: it adds runs/{id}/comparison/ beside the runs router
    path("api/v1/", include("baselines.api_urls")),
    path("api/v1/", include("artifacts.api_urls")),
    path("", include("incidents.urls")),
    path("api/v1/", include("incidents.api_urls")),
    path("", include("reports.urls")),
    path("api/v1/", include("reports.api_urls")),
    path("", include("knowledge.urls")),
    path("api/v1/", include("knowledge.api_urls")),
    path("", include("artifacts.traces.urls")),
    path("api/v1/", include("artifacts.traces.api_urls")),
    path("", include("artifacts.fabric.urls")),
    path("api/v1/", include("artifacts.fabric.api_urls")),
    path("", include("artifacts.jobs.urls")),
    path("api/v1/", include("artifacts.jobs.api_urls")),
    path("", include("artifacts.nsight.urls")),
    path("api/v1/", include("artifacts.nsight.api_urls")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The browsable docs are a page (login redirect); the schema is an API resource (401).
    path(
        "api-docs/",
        login_required(SpectacularSwaggerView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
]
