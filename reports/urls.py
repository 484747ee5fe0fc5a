from django.urls import path

from reports import views

urlpatterns = [
    path("reports/", views.report_list, name="report-list"),
    path("reports/new/", views.report_builder, name="report-new"),
    path("reports/<int:pk>/", views.report_detail, name="report-detail"),
    path("reports/<int:pk>/export/", views.report_export, name="report-export"),
    path("reports/<int:pk>/rebuild/", views.report_rebuild_view, name="report-rebuild"),
]
