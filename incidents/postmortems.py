"""Post-mortem writes: save a revision (never over someone else's), restore, autosave, diff.

Every save names the revision it was based on. If that is not the current revision the save
is refused with ``PostMortemConflict`` carrying the current text and, when the two sets of
edits touch different lines, a three-way merge the user may accept. Nothing is overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.safestring import SafeString

from documents.diffs import text_diff
from documents.embeds import EmbedError, Pinned, pin_shortcodes, render_with_embeds
from documents.merge import merge3
from incidents.models import Embed, Incident, PostMortem, PostMortemDraft, PostMortemRevision
from incidents.reviews import publish_blockers
from incidents.services import IncidentError

TEMPLATE = """\
## Summary

What happened, in two or three sentences.

## Impact

Who or what was affected, for how long, how much (MFU, step time, busbw, jobs lost).

## Timeline

Key events are on the incident page; summarise the turning points here.

## Root cause

## Trigger

## Contributing factors

## Detection

How we found out, and how we could have found out sooner.

## Resolution

## What went well

## What went badly

## Where we got lucky

## Action items

See the action items on the incident page.

## Evidence

Embed charts of runs with `{{chart run=RUN_ID}}` and artifacts with `{{artifact id=ID}}`.
"""


class PostMortemConflict(Exception):
    """The save was based on an old revision; ``current`` is what is stored now."""

    def __init__(self, current: PostMortem, *, mine: str, merged: str | None) -> None:
        super().__init__(
            f"revision {current.revision} was saved since your edit started; nothing was "
            "overwritten"
        )
        self.current = current
        self.mine = mine
        self.merged = merged


@dataclass(frozen=True)
class PostMortemState:
    """What readers and the editor start from (revision 0: nothing saved yet, the template)."""

    body: str
    revision: int
    status: str
    postmortem: PostMortem | None


def postmortem_state(incident: Incident) -> PostMortemState:
    pm = PostMortem.objects.filter(incident=incident).first()
    if pm is None:
        return PostMortemState(TEMPLATE, 0, PostMortem.Status.DRAFT, None)
    return PostMortemState(pm.body, pm.revision, pm.status, pm)


def postmortem_save(
    *,
    incident: Incident,
    body: str,
    base_revision: int,
    by: Any,
    message: str = "",
    status: str | None = None,
    restored_from: int | None = None,
) -> PostMortemRevision:
    """Store ``body`` as the next revision if ``base_revision`` is still the latest."""
    if status is not None and status not in PostMortem.Status.values:
        raise IncidentError(f"status must be one of {', '.join(PostMortem.Status.values)}")
    try:
        with transaction.atomic():
            pm, _ = PostMortem.objects.select_for_update().get_or_create(incident=incident)
            if pm.revision != base_revision:
                raise _conflict(pm, base_revision=base_revision, mine=body)
            publishing = status == PostMortem.Status.PUBLISHED != pm.status
            if publishing and (blockers := publish_blockers(pm)):
                raise IncidentError("cannot publish yet: " + "; ".join(blockers))
            try:
                pinned_body = pin_shortcodes(
                    body.replace("\r\n", "\n"), create=_embed_creator(incident, by)
                )
            except EmbedError as exc:
                raise IncidentError(str(exc)) from exc
            pm.revision += 1
            pm.body = pinned_body
            pm.updated_by = by if getattr(by, "pk", None) else None
            if status:
                pm.status = status
            if pm.status == PostMortem.Status.PUBLISHED and pm.published_at is None:
                pm.published_at = timezone.now()
            pm.save()
            revision = PostMortemRevision.objects.create(
                postmortem=pm, number=pm.revision, body=pinned_body, status=pm.status,
                message=(message or "").strip()[:300], author=pm.updated_by,
                restored_from=restored_from,
            )  # fmt: skip
            PostMortemDraft.objects.filter(incident=incident, user=pm.updated_by).delete()
    except IntegrityError:
        # Two first saves raced to create the post-mortem row: the loser is a conflict.
        raise _conflict(
            PostMortem.objects.get(incident=incident), base_revision=base_revision, mine=body
        ) from None
    return revision


def postmortem_restore(
    *, incident: Incident, number: int, base_revision: int, by: Any
) -> PostMortemRevision:
    """Restore an old revision's text as a new revision (history is never rewritten)."""
    old = PostMortemRevision.objects.filter(postmortem__incident=incident, number=number).first()
    if old is None:
        raise IncidentError(f"no revision {number}")
    return postmortem_save(
        incident=incident, body=old.body, base_revision=base_revision, by=by,
        message=f"Restore revision {number}", restored_from=number,
    )  # fmt: skip


def postmortem_set_status(
    *, incident: Incident, status: str, base_revision: int, by: Any
) -> PostMortemRevision:
    """Change draft / in review / published: a revision too, so history shows who did it."""
    state = postmortem_state(incident)
    label = dict(PostMortem.Status.choices).get(status, status)
    return postmortem_save(
        incident=incident, body=state.body, base_revision=base_revision, by=by,
        message=f"Status: {label}", status=status,
    )  # fmt: skip


def postmortem_autosave(*, incident: Incident, user: Any, body: str, base_revision: int) -> Any:
    """Keep one user's unsaved text (no revision, invisible to others, survives a crash)."""
    draft, _ = PostMortemDraft.objects.update_or_create(
        incident=incident, user=user, defaults={"body": body, "base_revision": base_revision}
    )
    return draft


def revision_diff(old: str, new: str, *, context: int = 3) -> list[tuple[str, str]]:
    """Unified diff as (css class, line) pairs: 'add', 'del', 'hunk' or 'same'."""
    marks = {"add": "+", "del": "-", "ctx": " ", "hunk": ""}
    return [
        ("same" if line.op == "ctx" else line.op, marks[line.op] + line.text)
        for line in text_diff(old, new, context=context)
    ]


def render_postmortem(body: str, incident: Incident, *, interactive: bool) -> SafeString:
    return render_with_embeds(body, pins=pins_of(incident), interactive=interactive)


def pins_of(incident: Incident) -> dict[int, Pinned]:
    return {e.pk: Pinned(e.pinned, e.snapshot) for e in Embed.objects.filter(incident=incident)}


def _embed_creator(incident: Incident, by: Any) -> Any:
    def create(kind: str, args: dict[str, str], pinned: Pinned) -> int:
        embed = Embed.objects.create(
            incident=incident, kind=kind, params=args, pinned=pinned.pinned,
            snapshot=pinned.snapshot, created_by=by if getattr(by, "pk", None) else None,
        )  # fmt: skip
        return embed.pk

    return create


def _conflict(pm: PostMortem, *, base_revision: int, mine: str) -> PostMortemConflict:
    base = (
        PostMortemRevision.objects.filter(postmortem=pm, number=base_revision)
        .values_list("body", flat=True)
        .first()
    )
    if base is None:
        base = TEMPLATE if base_revision == 0 else None
    merged = merge3(base, mine.replace("\r\n", "\n"), pm.body).text if base is not None else None
    return PostMortemConflict(pm, mine=mine, merged=merged)
