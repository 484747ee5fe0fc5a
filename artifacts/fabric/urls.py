from django.urls import path

from artifacts.fabric import views

urlpatterns = [
    path("fabric/", views.finding_list, name="finding-list"),
    path("fabric/findings/<int:pk>/", views.finding_detail, name="finding-detail"),
    path(
        "fabric/findings/<int:pk>/acknowledge/",
        views.finding_acknowledge_view,
        name="finding-acknowledge",
    ),
    path("fabric/hosts/", views.host_list, name="fabric-host-list"),
    path("fabric/hosts/<str:host>/", views.host_detail, name="fabric-host"),
    path("fabric/fleet/", views.fleet_view, name="fabric-fleet"),
    path("artifacts/<int:pk>/counters/", views.artifact_counters, name="artifact-counters"),
]
