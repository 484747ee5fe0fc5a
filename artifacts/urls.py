from django.urls import path

from . import views

urlpatterns = [
    path("artifacts/", views.artifact_list, name="artifact-list"),
    path("artifacts/<int:pk>/", views.artifact_detail, name="artifact-detail"),
    path("artifacts/<int:pk>/download/", views.artifact_download, name="artifact-download"),
    path("artifacts/<int:pk>/reparse/", views.artifact_reparse, name="artifact-reparse"),
    path("runs/", views.run_list, name="run-list"),
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
]
