"""The row a document keeps for each embed it pinned (see embeds.py).

Abstract: post-mortems (``incidents.Embed``) and knowledge pages (``knowledge.PageEmbed``)
each keep their own table with a link to their document; the columns are these.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PinnedEmbed(models.Model):
    """What a ``{{kind args}}`` shortcode pinned (see embeds.py); post-mortems and knowledge
    pages each keep their own rows.

    ``snapshot`` holds what is drawn (so a re-parse or a deleted run never changes a
    published text); ``pinned`` says which version of the evidence it was.
    """

    kind = models.CharField(max_length=20)
    params = models.JSONField(default=dict)
    pinned = models.JSONField(default=dict)
    snapshot = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
