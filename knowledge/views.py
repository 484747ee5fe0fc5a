"""Knowledge pages in the browser. Adapters: read a queryset or call a service, then render."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

import pandas as pd
from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from artifacts import exports
from artifacts.models import BenchmarkRun
from charts.figures import bandwidth_curve
from documents.diffs import field_changes, text_diff
from documents.merge import merge3
from knowledge import applicability as appl
from knowledge import recipes
from knowledge.citations import CitationError, backlinks, resolve_all
from knowledge.embeds import has_shortcodes, page_html
from knowledge.forms import CiteForm, ImportForm, PageFilterForm, PageForm, SearchForm, VerifyForm
from knowledge.importexport import (
    PageFileError,
    export_page,
    export_zip,
    markdown_files,
    page_import,
)
from knowledge.models import Page, PageAlias, PageRevision, PageType, Topic
from knowledge.querysets import (
    filter_options,
    known_versions,
    page_freshness,
    pages_citing_page,
    pages_filtered,
    stale_pages_by_owner,
    with_freshness,
)
from knowledge.search import SOURCES, search
from knowledge.services import (
    PageError,
    RevisionConflict,
    citation_add,
    citation_remove,
    page_create,
    page_restore,
    page_set_aliases,
    page_set_symptoms,
    page_update,
    page_verify,
)
from knowledge.versions import VersionRange, newest
from perfhub.roles import can_edit

SEARCH_PAGE_SIZE = 20
EDITOR_ONLY = "Changing the knowledge base needs the editor role."


def _editor_or_redirect(request: HttpRequest, to: Any) -> HttpResponse | None:
    if can_edit(request.user):
        return None
    messages.error(request, EDITOR_ONLY)
    return redirect(to)


# --- lists -----------------------------------------------------------------------------------


def page_list(request: HttpRequest) -> HttpResponse:
    form = PageFilterForm(request.GET, options=filter_options())
    pages = pages_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return _pages_csv(with_freshness(pages))
    paginator = Paginator(pages, settings.PERFHUB_PAGE_SIZE)
    page_obj = paginator.get_page(request.GET.get("page"))
    page_obj.object_list = with_freshness(page_obj.object_list)
    return render(request, "knowledge/page_list.html", {"form": form, "page": page_obj})


def _pages_csv(pages: list[Page]) -> HttpResponse:
    header = [
        "slug", "title", "type", "topic", "status", "owner", "applies_to", "revision",
        "verified_at", "stale", "stale_reasons", "evidence_measurements", "updated_at",
    ]  # fmt: skip
    rows = [
        [
            p.slug,
            p.title,
            p.type,
            p.topic,
            p.status,
            p.owner.get_username() if p.owner else "",
            "; ".join(f"{b.label} {b.text}" for b in p.badges),
            p.revision,
            p.verified_at.isoformat() if p.verified_at else "",
            p.freshness.stale,
            "; ".join(p.freshness.reasons),  # type: ignore[attr-defined]
            p.evidence_count,
            p.updated_at.isoformat(),
        ]
        for p in pages
    ]
    return exports.csv_response("knowledge-pages.csv", header, rows)


def stale_pages(request: HttpRequest) -> HttpResponse:
    groups = stale_pages_by_owner()
    if request.GET.get("format") == "csv":
        rows = [
            [
                owner or "(no owner)",
                p.slug,
                p.title,
                p.verified_at.isoformat() if p.verified_at else "",
                "; ".join(p.freshness.reasons),  # type: ignore[attr-defined]
            ]
            for owner, pages in groups
            for p in pages
        ]
        return exports.csv_response(
            "stale-pages.csv", ["owner", "slug", "title", "verified_at", "reasons"], rows
        )
    return render(request, "knowledge/stale_pages.html", {"groups": groups})


# --- one page --------------------------------------------------------------------------------


def page_detail(request: HttpRequest, slug: str) -> HttpResponse:
    page = Page.objects.select_related("owner", "updated_by").filter(slug=slug).first()
    if page is None:  # an alias (a findings rule's topic, an old slug): go to the page
        alias = get_object_or_404(PageAlias.objects.select_related("page"), slug=slug)
        return redirect(alias.page)
    dims = [d for d in appl.RANGE_DIMENSIONS if (page.applies_to or {}).get(d)]
    known = known_versions(dims)
    cited = resolve_all(list(page.citations.select_related("added_by")))
    return render(
        request,
        "knowledge/page_detail.html",
        {
            "page": page,
            "html": page_html(page.body, page),
            "has_embeds": has_shortcodes(page.body),
            "setting_groups": recipes.grouped(page.parsed_settings),
            "freshness": page_freshness(page, known),
            "evidence": cited,
            "evidence_summary": _evidence_summary(cited),
            "charts": _charts(cited),
            "verifications": page.verifications.select_related("verified_by")[:5],
            "verify_form": VerifyForm(dimensions=dims, initial=_newest_in_range(page, known, dims)),
            "cite_form": CiteForm(),
            "cited_by": pages_citing_page(page),
            "backlinks": backlinks(page),
            "revision_count": page.revisions.count(),
            "aliases": list(page.aliases.values_list("slug", flat=True)),
            "reviews": list(page.reviews.filter(resolved_at__isnull=True)),
        },
    )


def _evidence_summary(cited: list[Any]) -> dict[str, Any]:
    measured = [c for c in cited if c.measurements]
    newest_at = max((c.measured_at for c in measured if c.measured_at), default=None)
    return {
        "measurements": sum(c.measurements for c in measured),
        "newest_at": newest_at,
        "newest_days": (timezone.now() - newest_at).days if newest_at else None,
        "passing": sum(c.measurements for c in measured if c.passing),
    }


def _charts(cited: list[Any]) -> list[dict[str, Any]]:
    """Pinned curves of cited runs, drawn from the pinned rows (not today's rows)."""
    charts = []
    for c in cited:
        if c.kind != "run" or not c.rows:
            continue
        rows = pd.DataFrame(c.rows, columns=["size_bytes", "oop_busbw_gbps", "ip_busbw_gbps"])
        charts.append(
            {
                "id": f"kb-evidence-{c.citation_id}",
                "figure_id": f"kb-evidence-{c.citation_id}-fig",
                "title": c.title,
                "cited": c,
                "figure": bandwidth_curve(rows).to_json(),
            }
        )
    return charts


def _newest_in_range(page: Page, known: list[Any], dims: list[str]) -> dict[str, str]:
    initial = {}
    for dim in dims:
        version_range = VersionRange.parse(page.applies_to[dim])
        candidates = [
            k.version for k in known if k.dimension == dim and version_range.contains(k.version)
        ]
        if found := newest(candidates):
            initial[f"version_{dim}"] = found
    return initial


def page_new(request: HttpRequest) -> HttpResponse:
    if denied := _editor_or_redirect(request, "kb-list"):
        return denied
    form = PageForm(request.POST or None, initial={"owner": request.user.get_username()})
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():  # the page and its aliases, or neither
                page = page_create(
                    by=request.user,
                    owner=form.cleaned_data.get("owner") or None,
                    message=form.cleaned_data.get("message") or "",
                    **form.content(),
                )
                page_set_aliases(page=page, aliases=form.cleaned_data.get("aliases") or "")
                page_set_symptoms(page=page, symptoms=form.cleaned_data.get("symptoms") or "")
        except PageError as exc:
            _add_errors(form, exc)
        else:
            messages.success(request, f"Created '{page.title}' (revision 1).")
            return redirect(page)
    return render(request, "knowledge/page_form.html", {"form": form, "page": None})


def page_edit(request: HttpRequest, slug: str) -> HttpResponse:
    page = get_object_or_404(Page, slug=slug)
    if denied := _editor_or_redirect(request, page):
        return denied
    if request.method != "POST":
        form = PageForm(initial=PageForm.initial_for(page))
        return render(request, "knowledge/page_form.html", {"form": form, "page": page})
    form = PageForm(request.POST)
    if form.is_valid():
        base = form.cleaned_data.get("base_revision")
        if base is None:
            form.add_error(None, "The form lost its base revision; reload the page and edit again.")
        else:
            try:
                with transaction.atomic():  # the page and its aliases, or neither
                    saved = page_update(
                        page=page,
                        base_revision=base,
                        by=request.user,
                        message=form.cleaned_data.get("message") or "",
                        owner=form.cleaned_data.get("owner") or None,
                        **form.content(),
                    )
                    aliases_changed = page_set_aliases(
                        page=saved, aliases=form.cleaned_data.get("aliases") or ""
                    ) | page_set_symptoms(
                        page=saved, symptoms=form.cleaned_data.get("symptoms") or ""
                    )
            except RevisionConflict as exc:
                return _conflict(request, exc, form)
            except PageError as exc:
                _add_errors(form, exc)
            else:
                if saved.revision == base:
                    messages.info(
                        request,
                        "Aliases/symptoms saved; the content is unchanged (no new revision)."
                        if aliases_changed
                        else "Nothing changed; no new revision.",
                    )
                else:
                    messages.success(request, f"Saved revision {saved.revision}.")
                return redirect(saved)
    return render(request, "knowledge/page_form.html", {"form": form, "page": page})


def _conflict(request: HttpRequest, exc: RevisionConflict, form: PageForm) -> HttpResponse:
    """Both versions side by side; the form keeps the user's text, now based on theirs."""
    current = exc.page
    mine = form.content()
    data = request.POST.copy()
    data["base_revision"] = str(current.revision)
    # Edits to different lines merge as in post-mortems; the form then holds the merge.
    base = current.revisions.filter(number=exc.base_revision).values_list("body", flat=True)
    merged = merge3(*map(_lines, (base[0], mine["body"], current.body))).text if base else None
    if merged is not None and merged != _lines(mine["body"]):
        data["body"] = merged
    else:
        merged = None
    retry = PageForm(data)
    retry.is_valid()
    theirs = current.content()
    mine_fields = {**theirs, **{k: v for k, v in mine.items() if k in theirs}}
    return render(
        request,
        "knowledge/page_conflict.html",
        {
            "page": current,
            "base_revision": exc.base_revision,
            "their_html": page_html(current.body, current),
            "their_revision": current.revisions.select_related("author")
            .order_by("-number")
            .first(),
            "mine_body": mine["body"],
            "merged": merged,
            "diff": text_diff(current.body, mine["body"]),
            "changes": field_changes(theirs, _comparable(mine_fields)),
            "form": retry,
        },
        status=409,
    )


def _lines(text: str) -> str:
    """Unix newlines and a final one: the form strips it, stored revisions keep it."""
    text = text.replace("\r\n", "\n")
    return text if text.endswith("\n") or not text else text + "\n"


def _comparable(fields: dict[str, Any]) -> dict[str, Any]:
    try:
        from knowledge.services import clean_content

        return clean_content(fields)
    except PageError:
        return fields


def _add_errors(form: PageForm, exc: PageError) -> None:
    for name, problems in exc.errors.items():
        target = {"applies_to": None, "fields": None}.get(name, name)
        if target is not None and target not in form.fields:
            target = None
        for problem in problems:
            label = "" if target else f"{name.replace('_', ' ')}: "
            form.add_error(target, f"{label}{problem}")


def page_history(request: HttpRequest, slug: str) -> HttpResponse:
    page = get_object_or_404(Page, slug=slug)
    revisions = page.revisions.select_related("author").defer("body")
    return render(request, "knowledge/page_history.html", {"page": page, "revisions": revisions})


def page_revision(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    page = get_object_or_404(Page, slug=slug)
    revision = get_object_or_404(
        PageRevision.objects.select_related("author"), page=page, number=number
    )
    against_number = _int(request.GET.get("against"), number - 1)
    against = PageRevision.objects.filter(page=page, number=against_number).first()
    old = against.content() if against else {}
    return render(
        request,
        "knowledge/revision_detail.html",
        {
            "page": page,
            "revision": revision,
            "against": against,
            "html": page_html(revision.body, page),
            "has_embeds": has_shortcodes(revision.body),
            "diff": text_diff(old.get("body", ""), revision.body),
            "changes": field_changes(old, revision.content()) if against else [],
        },
    )


@require_POST
def page_restore_view(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    page = get_object_or_404(Page, slug=slug)
    if denied := _editor_or_redirect(request, page):
        return denied
    try:
        restored = page_restore(
            page=page,
            number=number,
            base_revision=_int(request.POST.get("base_revision"), -1),
            by=request.user,
        )
    except RevisionConflict as exc:
        messages.error(request, str(exc))
        return redirect("kb-history", slug=page.slug)
    except PageError as exc:
        messages.error(request, str(exc))
        return redirect("kb-history", slug=page.slug)
    messages.success(request, f"Restored revision {number} as revision {restored.revision}.")
    return redirect(restored)


@require_POST
def page_verify_view(request: HttpRequest, slug: str) -> HttpResponse:
    page = get_object_or_404(Page, slug=slug)
    if denied := _editor_or_redirect(request, page):
        return denied
    dims = [d for d in appl.RANGE_DIMENSIONS if (page.applies_to or {}).get(d)]
    form = VerifyForm(request.POST, dimensions=dims)
    if not form.is_valid():
        messages.error(request, "A verification needs a note saying what was checked.")
        return redirect(page)
    day = form.cleaned_data.get("verified_at")
    at = None
    if day and day != timezone.localdate():
        at = timezone.make_aware(datetime.combine(day, time(12, 0)))
    try:
        page_verify(
            page=page,
            by=request.user,
            note=form.cleaned_data["note"],
            versions=form.versions(),
            at=at,
        )
    except PageError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Verification recorded.")
    return redirect(page)


@require_POST
def page_cite(request: HttpRequest, slug: str) -> HttpResponse:
    page = get_object_or_404(Page, slug=slug)
    if denied := _editor_or_redirect(request, page):
        return denied
    form = CiteForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose what to cite and give its id.")
        return redirect(page)
    try:
        citation_add(page=page, by=request.user, **form.cleaned_data)
    except CitationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Evidence cited.")
    return redirect(request.POST.get("next") if _safe_next(request) else page)


@require_POST
def page_uncite(request: HttpRequest, slug: str, citation_id: int) -> HttpResponse:
    page = get_object_or_404(Page, slug=slug)
    if denied := _editor_or_redirect(request, page):
        return denied
    citation_remove(page=page, citation_id=citation_id)
    messages.success(request, "Citation removed.")
    return redirect(page)


@require_POST
def cite_run(request: HttpRequest, pk: int) -> HttpResponse:
    """From a run page: cite this run on a page chosen there."""
    run = get_object_or_404(BenchmarkRun, pk=pk)
    if denied := _editor_or_redirect(request, run):
        return denied
    page = Page.objects.filter(slug=request.POST.get("page", "")).first()
    if page is None:
        messages.error(request, "Choose the knowledge page that should cite this run.")
        return redirect(run)
    citation_add(
        page=page, kind="run", object_id=run.pk, by=request.user, note=request.POST.get("note", "")
    )
    messages.success(request, f"Run #{run.pk} is now evidence on '{page.title}'.")
    return redirect(run)


def _safe_next(request: HttpRequest) -> bool:
    target = request.POST.get("next", "")
    return target.startswith("/") and not target.startswith("//")


def page_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    page = get_object_or_404(Page, slug=slug)
    url = request.build_absolute_uri(page.get_absolute_url())
    header = [page.title, f"from PerfHub {url} (revision {page.revision})"]
    if fmt == "env":
        body, filename, ctype = (
            recipes.env_file(page.parsed_settings, header=header),
            f"{slug}.env",
            "text/plain",
        )
    elif fmt == "sh":
        body, filename, ctype = (
            recipes.shell_script(page.parsed_settings, header=header),
            f"{slug}.sh",
            "text/x-shellscript",
        )
    elif fmt == "md":
        body, filename, ctype = export_page(page), f"{slug}.md", "text/markdown"
    else:
        raise Http404("unknown format")
    response = HttpResponse(body, content_type=f"{ctype}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


# --- import / export -------------------------------------------------------------------------


def kb_import(request: HttpRequest) -> HttpResponse:
    if denied := _editor_or_redirect(request, "kb-list"):
        return denied
    form = ImportForm(request.POST or None, request.FILES or None)
    outcomes = []
    if request.method == "POST" and form.is_valid():
        uploads = request.FILES.getlist("files")
        if not uploads:
            form.add_error(None, "Choose one or more .md files or a .zip.")
        for upload in uploads:
            try:
                files = markdown_files(upload.name, upload.read())
            except PageFileError as exc:
                messages.error(request, str(exc))
                continue
            for name, text in files:
                outcomes.append(
                    page_import(
                        text,
                        by=request.user,
                        mode=form.cleaned_data["mode"],
                        default_slug=name.rsplit(".", 1)[0],
                        origin=name,
                    )
                )
    return render(request, "knowledge/import.html", {"form": form, "outcomes": outcomes})


def kb_export(request: HttpRequest) -> HttpResponse:
    pages = pages_filtered(request.GET).select_related("owner")
    response = HttpResponse(export_zip(pages), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="perfhub-knowledge.zip"'
    return response


@require_POST
def preview(request: HttpRequest) -> JsonResponse:
    """The editor's preview: exactly the sanitized HTML a save would show."""
    page = Page.objects.filter(slug=request.POST.get("slug", "")).first()
    return JsonResponse({"html": str(page_html(request.POST.get("body", ""), page))})


# --- search ----------------------------------------------------------------------------------


def search_page(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET)
    form.is_valid()
    data = form.cleaned_data if form.is_bound else {}
    number = max(1, _int(request.GET.get("page"), 1))
    results = search(
        data.get("q", ""),
        types=data.get("type") or (),
        topic=data.get("topic", ""),
        generation=data.get("generation", ""),
        limit=SEARCH_PAGE_SIZE,
        offset=(number - 1) * SEARCH_PAGE_SIZE,
    )
    pages = max(1, -(-results.total // SEARCH_PAGE_SIZE))
    return render(
        request,
        "knowledge/search.html",
        {
            "form": form,
            "results": results,
            "number": number,
            "pages": pages,
            "previous": number - 1 if number > 1 else None,
            "next": number + 1 if number < pages else None,
            "source_labels": {k: s.label for k, s in SOURCES.items()},
            "topic_labels": dict(Topic.choices),
            "subtype_labels": _subtype_labels(),
            "selected": {
                "type": data.get("type") or [],
                "topic": data.get("topic", ""),
                "generation": data.get("generation", ""),
            },
        },
    )


def _subtype_labels() -> dict[str, str]:
    """Display names of hit subtypes: page types, and what each other source declares."""
    labels: dict[str, str] = {}
    for source in SOURCES.values():
        labels.update(getattr(source, "subtype_labels", {}))
    return {**labels, **dict(PageType.choices)}


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
