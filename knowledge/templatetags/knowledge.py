"""Template tags other apps' pages use to show the knowledge that applies to them.

{% load knowledge %}
{% pages_for_facts facts %}            {# facts: {"gpu": "H100", "nccl": "2.23.4", ...} #}
{% run_facts run as facts %}            {# the facts of an artifacts.BenchmarkRun #}
{% applicability_badges page %}
{% applicable_pages subject %}          {# a run, hardware profile or incident: one card #}
{% symptom_pages subject %}             {# incident, finding, run, alert: pages by symptom #}
"""

from __future__ import annotations

from typing import Any

from django import template

from artifacts.models import BenchmarkRun
from knowledge import symptoms
from knowledge.models import Page, PageStatus
from knowledge.querysets import pages_citing_run, subject_facts
from knowledge.querysets import pages_for_facts as _pages_for_facts
from knowledge.querysets import run_facts as _run_facts
from perfhub.roles import can_edit

register = template.Library()


@register.inclusion_tag("knowledge/_pages_for_facts.html", takes_context=True)
def pages_for_facts(
    context: template.Context, facts: dict[str, Any], limit: int = 12
) -> dict[str, Any]:
    return {"applicable": _pages_for_facts(facts or {}, limit=limit), "facts": facts or {},
            "request": context.get("request")}  # fmt: skip


@register.simple_tag
def run_facts(run: BenchmarkRun) -> dict[str, str]:
    return _run_facts(run)


@register.inclusion_tag("knowledge/_run_knowledge.html", takes_context=True)
def run_knowledge(context: template.Context, run: BenchmarkRun) -> dict[str, Any]:
    """Everything the run page shows: applicable pages, citing pages, a cite form."""
    request = context.get("request")
    user = getattr(request, "user", None)
    editable = can_edit(user)
    return {
        "run": run,
        "facts": _run_facts(run),
        "citing": list(pages_citing_run(run)),
        "can_edit": editable,
        "cite_targets": list(
            Page.objects.exclude(status=PageStatus.DEPRECATED)
            .order_by("title")
            .values_list("slug", "title")
        )
        if editable
        else [],
        "request": request,
    }


@register.inclusion_tag("knowledge/_applicable_card.html", takes_context=True)
def applicable_pages(context: template.Context, subject: Any, limit: int = 12) -> dict[str, Any]:
    """The "pages that apply to this profile" card for a hardware-profile, run or incident
    page (a run also gets its citing pages and the cite form, see ``run_knowledge``)."""
    if isinstance(subject, BenchmarkRun):
        return {"run_card": run_knowledge(context, subject)}
    facts = subject_facts(subject)
    label = getattr(getattr(subject, "_meta", None), "label", "")
    return {
        "symptom_subject": subject if label == "incidents.Incident" else None,
        "facts": facts,
        "applicable": _pages_for_facts(facts, limit=limit) if facts else [],
        "request": context.get("request"),
    }


@register.inclusion_tag("knowledge/_symptom_pages.html", takes_context=True)
def symptom_pages(context: template.Context, subject: Any, limit: int = 12) -> dict[str, Any]:
    """ "Pages for these symptoms": the known issues and runbooks whose declared symptoms
    (finding rules, log events and texts, Xids, alert kinds) an incident, finding, run or
    baseline alert shows."""
    observed = symptoms.observed_for(subject)
    return {
        "matched": [
            (page, [symptoms.label(h) for h in hits])
            for page, hits in symptoms.pages_for_symptoms(observed, limit=limit)
        ],
        "observed": bool(observed),
        "request": context.get("request"),
    }


@register.inclusion_tag("knowledge/_badges.html")
def applicability_badges(page: Page, link: bool = True) -> dict[str, Any]:
    return {"badges": page.badges, "link": link}


@register.filter
def get_item(mapping: dict[str, Any], key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None
