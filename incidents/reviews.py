"""Post-mortem reviews: a reviewer comments on a paragraph, approves, or asks for changes;
publishing waits for the reviews as ``PERFHUB_POSTMORTEM_REVIEW`` says.

- ``off``: reviews are comments only; anyone with the editor role publishes.
- ``resolved`` (default): no open "changes requested" review may remain.
- ``approved``: as ``resolved``, and at least one approval by someone other than the
  author of the latest revision.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from incidents.models import Incident, PostMortem, PostMortemReview
from incidents.services import IncidentError

MODES = ("off", "resolved", "approved")
_BLANK_LINES = re.compile(r"\n\s*\n")


def paragraphs(body: str) -> list[str]:
    """The post-mortem's paragraphs as reviewers pick them (blank-line separated blocks)."""
    return [p.strip() for p in _BLANK_LINES.split(body.replace("\r\n", "\n")) if p.strip()]


def review_add(
    *, incident: Incident, by: Any, text: str, verdict: str = PostMortemReview.Verdict.COMMENT,
    paragraph: int | None = None,
) -> PostMortemReview:  # fmt: skip
    pm = PostMortem.objects.filter(incident=incident).first()
    if pm is None or pm.revision == 0:
        raise IncidentError("there is no saved post-mortem to review yet")
    if verdict not in PostMortemReview.Verdict.values:
        raise IncidentError(f"verdict must be one of {', '.join(PostMortemReview.Verdict.values)}")
    text = (text or "").strip()
    if not text and verdict != PostMortemReview.Verdict.APPROVED:
        raise IncidentError("a review comment needs a text")
    quote = ""
    if paragraph is not None:
        blocks = paragraphs(pm.body)
        if not 0 <= paragraph < len(blocks):
            raise IncidentError(f"no paragraph {paragraph + 1}: the text has {len(blocks)}")
        quote = blocks[paragraph][:2000]
    return PostMortemReview.objects.create(
        postmortem=pm, reviewer=by if getattr(by, "pk", None) else None, verdict=verdict,
        revision=pm.revision, paragraph=paragraph, quote=quote, text=text,
    )  # fmt: skip


@transaction.atomic
def review_resolve(*, review: PostMortemReview, by: Any, reopen: bool = False) -> PostMortemReview:
    review.resolved_at = None if reopen else timezone.now()
    review.resolved_by = None if reopen or not getattr(by, "pk", None) else by
    review.save(update_fields=["resolved_at", "resolved_by"])
    return review


def publish_blockers(pm: PostMortem | None) -> list[str]:
    """Why the post-mortem cannot be published now (empty: it can)."""
    mode = review_mode()
    if mode == "off" or pm is None:
        return [] if mode != "approved" else ["it needs an approving review"]
    reviews = list(pm.reviews.select_related("reviewer"))
    open_changes = [
        r for r in reviews if r.verdict == PostMortemReview.Verdict.CHANGES and r.is_open
    ]
    blockers = [
        f"changes requested by {r.reviewer or 'a reviewer'}"
        + (f" on paragraph {r.paragraph + 1}" if r.paragraph is not None else "")
        + " are not resolved"
        for r in open_changes
    ]
    if mode == "approved" and not any(
        r.verdict == PostMortemReview.Verdict.APPROVED
        and r.is_open
        and (r.reviewer_id is None or r.reviewer_id != pm.updated_by_id)
        for r in reviews
    ):
        blockers.append("it needs an approving review by someone other than its last author")
    return blockers


def review_mode() -> str:
    mode = getattr(settings, "PERFHUB_POSTMORTEM_REVIEW", "resolved")
    return mode if mode in MODES else "resolved"
