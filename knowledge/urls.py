from django.urls import path

from knowledge import views
from knowledge.tuning import views as tuning_views

urlpatterns = [
    path("kb/", views.page_list, name="kb-list"),
    path("kb/new/", views.page_new, name="kb-new"),
    path("kb/stale/", views.stale_pages, name="kb-stale"),
    path("kb/import/", views.kb_import, name="kb-import"),
    path("kb/export/", views.kb_export, name="kb-export"),
    path("kb/preview/", views.preview, name="kb-preview"),
    path("kb/cite-run/<int:pk>/", views.cite_run, name="kb-cite-run"),
    path("kb/sweeps/<int:pk>/recipe/", tuning_views.write_recipe, name="kb-write-recipe"),
    path("kb/<slug:slug>/", views.page_detail, name="kb-page"),
    path("kb/<slug:slug>/edit/", views.page_edit, name="kb-edit"),
    path("kb/<slug:slug>/history/", views.page_history, name="kb-history"),
    path("kb/<slug:slug>/revisions/<int:number>/", views.page_revision, name="kb-revision"),
    path(
        "kb/<slug:slug>/revisions/<int:number>/restore/",
        views.page_restore_view,
        name="kb-restore",
    ),
    path("kb/<slug:slug>/verify/", views.page_verify_view, name="kb-verify"),
    path("kb/<slug:slug>/hosts/", tuning_views.recipe_hosts, name="kb-recipe-hosts"),
    path("kb/<slug:slug>/cite/", views.page_cite, name="kb-cite"),
    path("kb/<slug:slug>/cite/<int:citation_id>/remove/", views.page_uncite, name="kb-uncite"),
    path("kb/<slug:slug>/download.<str:fmt>", views.page_download, name="kb-download"),
    path("search/", views.search_page, name="search"),
]
