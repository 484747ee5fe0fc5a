"""Post-mortem pages: read, edit (live preview, autosave, conflicts), revisions, diff, restore."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from documents.embeds import EMBED_KINDS, render_with_embeds
from incidents.drafting import draft_from_evidence
from incidents.forms import PostMortemForm
from incidents.models import Incident, PostMortemDraft, PostMortemReview, PostMortemRevision
from incidents.postmortems import (
    PostMortemConflict,
    pins_of,
    postmortem_autosave,
    postmortem_restore,
    postmortem_save,
    postmortem_set_status,
    postmortem_state,
    render_postmortem,
    revision_diff,
)
from incidents.reviews import paragraphs, publish_blockers, review_add, review_mode, review_resolve
from incidents.services import IncidentError
from incidents.views import editor_required

MAX_PREVIEW_CHARS = 500_000


def postmortem_view(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    state = postmortem_state(incident)
    revisions = _revisions(incident)
    if request.GET.get("format") == "md":
        response = HttpResponse(state.body, content_type="text/markdown; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="{incident.reference}-postmortem.md"'
        )
        return response
    return render(
        request,
        "incidents/postmortem.html",
        {
            "incident": incident,
            "state": state,
            "html": render_postmortem(state.body, incident, interactive=True),
            "revisions": revisions,
            "reviews": list(state.postmortem.reviews.select_related("reviewer", "resolved_by"))
            if state.postmortem
            else [],
            "paragraphs": [
                (i, " ".join(p.split())[:80]) for i, p in enumerate(paragraphs(state.body))
            ],
            "blockers": publish_blockers(state.postmortem) if state.postmortem else [],
            "review_mode": review_mode(),
            "verdicts": PostMortemReview.Verdict.choices,
        },
    )


@require_POST
@editor_required
def postmortem_review_add(request: HttpRequest, pk: int) -> HttpResponse:
    """A reviewer's comment, optionally on one paragraph, optionally asking for changes."""
    incident = get_object_or_404(Incident, pk=pk)
    paragraph = request.POST.get("paragraph", "")
    try:
        review_add(
            incident=incident, by=request.user, text=request.POST.get("text", ""),
            verdict=request.POST.get("verdict", PostMortemReview.Verdict.COMMENT),
            paragraph=int(paragraph) if paragraph.isdigit() else None,
        )  # fmt: skip
    except IncidentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Review added.")
    return redirect(reverse("postmortem", args=[pk]) + "#reviews")


@require_POST
@editor_required
def postmortem_review_resolve(request: HttpRequest, pk: int, review_id: int) -> HttpResponse:
    review = get_object_or_404(PostMortemReview, pk=review_id, postmortem__incident_id=pk)
    review_resolve(review=review, by=request.user, reopen=request.POST.get("reopen") == "1")
    messages.success(request, "Review re-opened." if review.is_open else "Review resolved.")
    return redirect(reverse("postmortem", args=[pk]) + "#reviews")


@editor_required
def postmortem_edit(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    state = postmortem_state(incident)
    conflict: PostMortemConflict | None = None
    if request.method == "POST":
        form = PostMortemForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                revision = postmortem_save(
                    incident=incident, body=data["body"], base_revision=data["revision"],
                    by=request.user, message=data["message"], status=data["status"],
                )  # fmt: skip
            except PostMortemConflict as exc:
                conflict = exc
            except IncidentError as exc:
                form.add_error("body", str(exc))
            else:
                messages.success(request, f"Saved as revision {revision.number}.")
                return redirect("postmortem", pk=incident.pk)
        if conflict is not None:
            current = conflict.current
            # The form keeps *your* text; its base is now the current revision, so pressing
            # save again is a deliberate choice made while both versions are on screen.
            form = PostMortemForm(
                initial={
                    "body": conflict.mine,
                    "revision": current.revision,
                    "message": request.POST.get("message", ""),
                    "status": request.POST.get("status") or current.status,
                }
            )
            state = postmortem_state(incident)
    elif request.GET.get("from") == "evidence":
        # Offered, not saved: the editor reads the draft, writes the narrative, then saves.
        form = PostMortemForm(
            initial={"body": draft_from_evidence(incident), "revision": state.revision,
                     "status": state.status, "message": "Started from the evidence"}
        )  # fmt: skip
        messages.info(
            request,
            "The template is filled from the evidence (timeline, scope, lifecycle, evidence "
            "with sha256, charts). Nothing is saved until you press Save.",
        )
    else:
        form = PostMortemForm(
            initial={"body": state.body, "revision": state.revision, "status": state.status}
        )
    draft = PostMortemDraft.objects.filter(incident=incident, user=request.user).first()
    if draft and draft.body == state.body:
        draft = None
    context = {
        "incident": incident,
        "state": state,
        "form": form,
        "draft": draft,
        "conflict": conflict,
        "embed_kinds": EMBED_KINDS.values(),
        "revisions": _revisions(incident)[:10],
    }
    if conflict is not None:
        context["conflict_diff"] = revision_diff(conflict.current.body, conflict.mine)
        context["theirs_author"] = conflict.current.updated_by
    status = 409 if conflict is not None else 200
    return render(request, "incidents/postmortem_edit.html", context, status=status)


@require_POST
@editor_required
def postmortem_preview(request: HttpRequest, pk: int) -> JsonResponse:
    """Sanitized HTML of unsaved text, embeds drawn live (pinned only when saved)."""
    incident = get_object_or_404(Incident, pk=pk)
    body = _json_body(request).get("body", "")
    if not isinstance(body, str) or len(body) > MAX_PREVIEW_CHARS:
        return JsonResponse(
            {"detail": "body must be text of at most 500,000 characters"}, status=400
        )
    html = render_with_embeds(body, pins=pins_of(incident), interactive=True)
    return JsonResponse({"html": str(html)})


@require_POST
@editor_required
def postmortem_autosave_view(request: HttpRequest, pk: int) -> JsonResponse:
    incident = get_object_or_404(Incident, pk=pk)
    data = _json_body(request)
    body, base = data.get("body"), data.get("revision")
    if not isinstance(body, str) or not isinstance(base, int):
        return JsonResponse({"detail": "send {body: text, revision: number}"}, status=400)
    draft = postmortem_autosave(incident=incident, user=request.user, body=body, base_revision=base)
    current = postmortem_state(incident).revision
    return JsonResponse(
        {
            "saved_at": draft.saved_at.isoformat(),
            "current_revision": current,
            "stale": current != base,
        }
    )


@require_POST
@editor_required
def postmortem_discard_draft(request: HttpRequest, pk: int) -> HttpResponse:
    PostMortemDraft.objects.filter(incident_id=pk, user=request.user).delete()
    return redirect("postmortem-edit", pk=pk)


@require_POST
@editor_required
def postmortem_status(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    try:
        postmortem_set_status(
            incident=incident, status=request.POST.get("status", ""),
            base_revision=int(request.POST.get("revision", "-1")), by=request.user,
        )  # fmt: skip
    except PostMortemConflict:
        messages.error(request, "Someone saved a newer revision; reload and try again.")
    except (IncidentError, ValueError) as exc:
        messages.error(request, str(exc))
    return redirect("postmortem", pk=pk)


@require_POST
@editor_required
def postmortem_restore_view(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    try:
        revision = postmortem_restore(
            incident=incident, number=number,
            base_revision=int(request.POST.get("revision", "-1")), by=request.user,
        )  # fmt: skip
    except PostMortemConflict:
        messages.error(request, "Someone saved a newer revision meanwhile; nothing restored.")
    except (IncidentError, ValueError) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Revision {number} restored as revision {revision.number}.")
    return redirect("postmortem", pk=pk)


def postmortem_diff(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    revisions = {r.number: r for r in _revisions(incident)}
    if not revisions:
        messages.info(request, "No revisions yet.")
        return redirect("postmortem", pk=pk)
    latest = max(revisions)
    new = _int(request.GET.get("b"), latest)
    old = _int(request.GET.get("a"), new - 1)
    if (old not in revisions and old != 0) or new not in revisions:
        messages.error(request, f"No such revisions: {old}, {new}.")
        return redirect("postmortem", pk=pk)
    old_body = revisions[old].body if old in revisions else ""
    return render(
        request,
        "incidents/postmortem_diff.html",
        {
            "incident": incident,
            "old": revisions.get(old),
            "old_number": old,
            "new": revisions[new],
            "lines": revision_diff(old_body, revisions[new].body),
            "revisions": sorted(revisions.values(), key=lambda r: -r.number),
            "current": latest,
        },
    )


def _revisions(incident: Incident) -> list[PostMortemRevision]:
    return list(
        PostMortemRevision.objects.filter(postmortem__incident=incident).select_related("author")
    )


def _json_body(request: HttpRequest) -> dict:
    try:
        data = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return default
