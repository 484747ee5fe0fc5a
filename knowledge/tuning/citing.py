"""A sweep as evidence a page cites (kind ``sweep``): a tuning recipe's proof.

Registered from ``KnowledgeConfig.ready``; light on purpose (the sweep's analysis is read
only when a citation is pinned), since every process that sets Django up imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from knowledge.citations import CitationError, Cited, _int, _when, register_kind

if TYPE_CHECKING:
    from knowledge.models import Citation

SWEEP_KIND = "sweep"


class SweepCitations:
    """A sweep cited as a recipe's proof: pinned with its profile, settings and winners."""

    name = SWEEP_KIND
    label = "sweep"

    def pin(self, object_id: str) -> dict[str, Any]:
        from baselines.models import Sweep
        from baselines.sweeps.reads import sweep_view

        sweep = Sweep.objects.select_related("profile").filter(pk=_int(object_id)).first()
        if sweep is None:
            raise CitationError(f"no sweep #{object_id}")
        view = sweep_view(sweep)
        return {
            "id": sweep.pk,
            "title": sweep.name,
            "profile": view.profile.slug if view.profile else None,
            "settings": list(view.analysis.settings),
            "values": list(view.analysis.values),
            "runs": len(view.runs),
            "winners": [f"{v} x{n}" for v, n in view.analysis.win_counts()],
            "at": max((r.measured_at.isoformat() for r in view.runs), default=""),
        }

    def resolve(self, citations: Sequence[Citation]) -> dict[int, Cited]:
        from baselines.models import Sweep

        sweeps = Sweep.objects.in_bulk([_int(c.object_id) for c in citations])
        out = {}
        for c in citations:
            pinned = c.pinned or {}
            sweep = sweeps.get(_int(c.object_id))
            out[c.pk] = Cited(
                kind=SWEEP_KIND,
                object_id=c.object_id,
                title=f"sweep #{c.object_id} {pinned.get('title', '')}".strip(),
                url=sweep.get_absolute_url() if sweep else "",
                summary=(
                    f"{pinned.get('runs', 0)} runs on {pinned.get('profile')}, varying "
                    f"{', '.join(pinned.get('settings') or [])}; wins: "
                    f"{', '.join(pinned.get('winners') or []) or 'none'}"
                ),
                measured_at=_when(pinned.get("at")),
                missing=sweep is None,
                note=c.note,
                citation_id=c.pk,
            )
        return out


def register() -> None:
    register_kind(SweepCitations())
