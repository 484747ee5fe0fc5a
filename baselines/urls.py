from django.urls import path

from baselines import views
from baselines.provenance import views as provenance_views
from baselines.sweeps import views as sweep_views

app_name = "baselines"

urlpatterns = [
    path("", views.home, name="home"),
    path("profiles/", views.profile_list, name="profile-list"),
    path("profiles/new/", views.profile_edit, name="profile-new"),
    path("profiles/<slug:slug>/", views.profile_detail, name="profile-detail"),
    path("profiles/<slug:slug>/edit/", views.profile_edit, name="profile-edit"),
    path("profiles/<slug:slug>/hosts/", views.mapping_add, name="mapping-add"),
    path("profiles/<slug:slug>/network/", views.profile_network, name="profile-network"),
    path("hosts/<int:pk>/delete/", views.mapping_delete, name="mapping-delete"),
    path("stacks/", views.stack_list, name="stack-list"),
    path("stacks/<int:pk>/", views.stack_detail, name="stack-detail"),
    path("series/", views.series_list, name="series-list"),
    path("series/<int:pk>/", views.series_detail, name="series-detail"),
    path("baselines/", views.baseline_list, name="baseline-list"),
    path("baselines/<int:pk>/", views.baseline_detail, name="baseline-detail"),
    path("runs/<int:run_id>/promote/", views.run_promote, name="run-promote"),
    path("runs/<int:run_id>/comparison/", views.run_comparison, name="run-comparison"),
    path("runs/<int:run_id>/detach/", provenance_views.run_fact_detach, name="run-detach"),
    path(
        "detachments/<int:pk>/reattach/",
        provenance_views.run_fact_reattach,
        name="detachment-reattach",
    ),
    path("repair/", provenance_views.facts_repair_start, name="facts-repair"),
    path("alerts/", views.alert_list, name="alert-list"),
    path("alerts/<int:pk>/", views.alert_detail, name="alert-detail"),
    path("summaries/", views.summary_list, name="summary-list"),
    path("summaries/<int:pk>/", views.summary_detail, name="summary-detail"),
    path("matrix/", views.version_matrix, name="version-matrix"),
    path("matrix/compare/", views.version_compare, name="version-compare"),
    path("subscriptions/", views.subscription_list, name="subscription-list"),
    path("settings/", sweep_views.setting_matrix, name="setting-matrix"),
    path("settings/compare/", sweep_views.setting_compare, name="setting-compare"),
    path("sweeps/", sweep_views.sweep_list, name="sweep-list"),
    path("sweeps/new/", sweep_views.sweep_new, name="sweep-new"),
    path("sweeps/<int:pk>/", sweep_views.sweep_detail, name="sweep-detail"),
]
