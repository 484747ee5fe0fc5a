from django.urls import path

from artifacts import views

urlpatterns = [
    path("", views.home, name="home"),
    path("artifacts/", views.artifact_list, name="artifact-list"),
    path("artifacts/<int:pk>/", views.artifact_detail, name="artifact-detail"),
    path("artifacts/<int:pk>/download/", views.artifact_download, name="artifact-download"),
    path("artifacts/<int:pk>/reparse/", views.artifact_reparse, name="artifact-reparse"),
    path("artifacts/<int:pk>/lines/", views.artifact_lines, name="artifact-lines"),
]
