from django.urls import path

from incidents import integration_views, postmortem_views, ticket_views, views
from incidents.bundles import views as bundle_views

urlpatterns = [
    path("incidents/", views.incident_list, name="incident-list"),
    path("incidents/new/", views.incident_create_view, name="incident-create"),
    path("incidents/metrics/", views.incident_metrics, name="incident-metrics"),
    path("incidents/integrations/", integration_views.integrations, name="incident-integrations"),
    path(
        "incidents/integrations/calls/<int:pk>/replay/",
        integration_views.call_replay,
        name="incident-integration-replay",
    ),
    path("incidents/<int:pk>/", views.incident_detail, name="incident-detail"),
    path("incidents/<int:pk>/edit/", views.incident_edit, name="incident-edit"),
    path("incidents/<int:pk>/status/", views.incident_status, name="incident-status"),
    path("incidents/<int:pk>/milestone/", views.incident_milestone, name="incident-milestone"),
    path("incidents/<int:pk>/evidence/", views.evidence_attach, name="incident-attach"),
    path(
        "incidents/<int:pk>/evidence/<int:artifact_id>/detach/",
        views.evidence_detach,
        name="incident-detach",
    ),
    path(
        "incidents/<int:pk>/suggestions/<str:decision>/",
        views.suggestion_decide,
        name="incident-suggestion",
    ),
    path("incidents/<int:pk>/facts/", views.fact_accept, name="incident-fact-accept"),
    path("incidents/<int:pk>/events/", views.event_add, name="incident-event-add"),
    path(
        "incidents/<int:pk>/events/<int:event_id>/",
        views.event_change,
        name="incident-event-change",
    ),
    path("incidents/<int:pk>/action-items/", views.action_item_add, name="incident-item-add"),
    path("action-items/", views.action_item_list, name="action-item-list"),
    path("action-items/<int:item_id>/", views.action_item_close, name="action-item-close"),
    # post-mortem
    path("incidents/<int:pk>/postmortem/", postmortem_views.postmortem_view, name="postmortem"),
    path(
        "incidents/<int:pk>/postmortem/edit/",
        postmortem_views.postmortem_edit,
        name="postmortem-edit",
    ),
    path(
        "incidents/<int:pk>/postmortem/preview/",
        postmortem_views.postmortem_preview,
        name="postmortem-preview",
    ),
    path(
        "incidents/<int:pk>/postmortem/autosave/",
        postmortem_views.postmortem_autosave_view,
        name="postmortem-autosave",
    ),
    path(
        "incidents/<int:pk>/postmortem/draft/discard/",
        postmortem_views.postmortem_discard_draft,
        name="postmortem-discard-draft",
    ),
    path(
        "incidents/<int:pk>/postmortem/status/",
        postmortem_views.postmortem_status,
        name="postmortem-status",
    ),
    path(
        "incidents/<int:pk>/postmortem/reviews/",
        postmortem_views.postmortem_review_add,
        name="postmortem-review-add",
    ),
    path(
        "incidents/<int:pk>/postmortem/reviews/<int:review_id>/resolve/",
        postmortem_views.postmortem_review_resolve,
        name="postmortem-review-resolve",
    ),
    path(
        "incidents/<int:pk>/postmortem/diff/",
        postmortem_views.postmortem_diff,
        name="postmortem-diff",
    ),
    path(
        "incidents/<int:pk>/postmortem/restore/<int:number>/",
        postmortem_views.postmortem_restore_view,
        name="postmortem-restore",
    ),
    # vendor tickets
    path("vendor-tickets/", ticket_views.ticket_list, name="ticket-list"),
    path("vendor-tickets/new/", ticket_views.ticket_create_view, name="ticket-create"),
    path("vendor-tickets/<int:pk>/", ticket_views.ticket_detail, name="ticket-detail"),
    path("vendor-tickets/<int:pk>/edit/", ticket_views.ticket_edit, name="ticket-edit"),
    path(
        "vendor-tickets/<int:pk>/correspondence/",
        ticket_views.correspondence_add_view,
        name="ticket-correspondence",
    ),
    # bundles, built from an incident or from a vendor ticket
    path(
        "incidents/<int:pk>/bundles/",
        bundle_views.bundle_build_view,
        {"kind": "incident"},
        name="incident-bundle-build",
    ),
    path(
        "incidents/<int:pk>/bundles/preview/",
        bundle_views.bundle_preview_view,
        {"kind": "incident"},
        name="incident-bundle-preview",
    ),
    path(
        "vendor-tickets/<int:pk>/bundles/",
        bundle_views.bundle_build_view,
        {"kind": "ticket"},
        name="ticket-bundle-build",
    ),
    path(
        "vendor-tickets/<int:pk>/bundles/preview/",
        bundle_views.bundle_preview_view,
        {"kind": "ticket"},
        name="ticket-bundle-preview",
    ),
    path("bundles/<int:pk>/", bundle_views.bundle_detail, name="bundle-detail"),
    path("bundles/<int:pk>/download/", bundle_views.bundle_download, name="bundle-download"),
]
