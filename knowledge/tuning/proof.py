"""Recipes proved by runs: "write a recipe" from a sweep, and later sweeps that disagree.

A recipe written from a sweep holds the chosen value's settings (``env`` items, one note
each saying where it wins), its scope as applicability (the profile's GPU generation, NIC and
fabric, the NCCL versions the sweep ran on) and, in the body, the sizes where it wins and the
crossovers; it cites the sweep (kind ``sweep``, pinned) and the sweep's runs (kind ``run``)
as its proof. Writing again from another sweep updates the same page (a new revision).

A sweep disagrees with a recipe when it varies one of the recipe's settings on the same
profile and, at a size the recipe claims, another value wins or the recipe's value does not;
the recipe then gets a ``RecipeReview`` row (once per sweep) shown on its page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from baselines.models import HardwareProfile, Sweep
from baselines.sweeps.reads import SweepView, sweep_view
from baselines.sweeps.winners import DEFAULT, BenchmarkResult
from baselines.versions import version_key
from knowledge import services
from knowledge.models import Citation, Page, PageStatus, PageType, RecipeReview, Topic
from knowledge.tuning.citing import SWEEP_KIND
from perfhub.units import human_bytes

MAX_CITED_RUNS = 60


@dataclass(frozen=True)
class Claim:
    """Where a value wins, as pinned in the recipe's sweep citation."""

    collective: str
    nranks: int
    low_bytes: int
    high_bytes: int


def winning_values(view: SweepView) -> list[tuple[str, int]]:
    """(value, sizes won) of the values that win somewhere, most wins first."""
    return view.analysis.win_counts()


def claims_of(view: SweepView, value: str) -> list[Claim]:
    return [
        Claim(bench.collective, bench.nranks, low, high)
        for bench in view.analysis.benchmarks
        for low, high in bench.winning_ranges(value)
    ]


def _range_text(claims: Sequence[Claim]) -> str:
    return "; ".join(
        f"{c.collective} {c.nranks}r {human_bytes(c.low_bytes)}-{human_bytes(c.high_bytes)}"
        for c in claims
    )


def applicability_of(profile: HardwareProfile | None, view: SweepView) -> dict[str, Any]:
    """The recipe's scope: hardware generation, NIC, fabric, the NCCL versions swept on."""
    scope: dict[str, Any] = {}
    if profile is not None:
        if profile.gpu_generation or profile.gpu_model:
            scope["gpu"] = [profile.gpu_generation or profile.gpu_model]
        if profile.nic_model:
            scope["nic"] = [profile.nic_model]
        fabric = {"roce_v2": "roce", "infiniband": "infiniband"}.get(profile.fabric)
        if fabric:
            scope["fabric"] = [fabric]
    versions = sorted(
        {r.nccl_version.split("+")[0] for r in view.runs if r.nccl_version}, key=version_key
    )
    if versions:
        scope["nccl"] = versions[0] if len(versions) == 1 else f">={versions[0]}, <={versions[-1]}"
    return scope


def recipe_settings(view: SweepView, value: str) -> list[dict[str, str]]:
    """The value's NCCL_* settings as recipe items; unset (default) variables are left out:
    a recipe cannot say "unset", its body does."""
    chosen = view.analysis.value_settings.get(value, {})
    where = _range_text(claims_of(view, value)) or "no size beyond the noise"
    return [
        {"kind": "env", "name": name, "value": setting,
         "note": f"wins {where} (sweep #{view.sweep.pk})"[:300]}
        for name, setting in sorted(chosen.items())
        if setting != DEFAULT and name.startswith("NCCL_")
    ]  # fmt: skip


def recipe_body(view: SweepView, value: str) -> str:
    analysis = view.analysis
    lines = [
        f"Written from sweep [#{view.sweep.pk} {view.sweep.name}]({view.sweep.get_absolute_url()})"
        f" on **{view.profile.slug if view.profile else 'unknown profile'}**: "
        f"{len(view.runs)} runs varying {', '.join(analysis.settings) or 'nothing'}.",
        "",
        f"## Where {value} wins",
        "",
    ]
    claims = claims_of(view, value)
    lines += [f"- {c}" for c in _range_text(claims).split("; ")] if claims else ["- nowhere"]
    lines += ["", "## The whole sweep", ""]
    for bench in analysis.benchmarks:
        lines.append(f"- **{bench.label}**: " + _bench_text(bench, analysis.values))
    if DEFAULT in analysis.values and value != DEFAULT:
        lines += ["", f"Where {value} does not win, leaving the variable unset is as good."]
    if not analysis.replicated:
        lines += ["", "Some values ran once: their wins rest on the ±3 % tolerance, not noise."]
    return "\n".join(lines) + "\n"


def _bench_text(bench: BenchmarkResult, values: Sequence[str]) -> str:
    parts = [
        f"{v} wins {', '.join(f'{human_bytes(lo)}-{human_bytes(hi)}' for lo, hi in ranges)}"
        for v in values
        if (ranges := bench.winning_ranges(v))
    ]
    crossings = [
        f"{c.before} → {c.after} between {human_bytes(c.below_bytes)} and "
        f"{human_bytes(c.above_bytes)}"
        for c in bench.crossovers
    ]
    text = "; ".join(parts) or "no winner beyond the noise"
    return text + (f" (crossover {', '.join(crossings)})" if crossings else "")


@transaction.atomic
def recipe_write(*, sweep: Sweep, value: str, by: Any, page: Page | None = None) -> Page:
    """Create (or update ``page``, or the recipe already citing this sweep) from the sweep."""
    view = sweep_view(sweep)
    if value not in view.analysis.values:
        raise services.PageError({"value": [f"{value!r} is not a value of this sweep"]})
    settings = recipe_settings(view, value)
    if not settings:
        raise services.PageError(
            {"value": ["that value sets nothing (the default): a recipe needs a setting"]}
        )
    if page is None:
        page = _recipe_citing(sweep)
    title = (
        ", ".join(f"{s['name']}={s['value']}" for s in settings)
        + f" on {view.profile.slug if view.profile else 'this hardware'}"
    )[:200]
    content = {
        "body": recipe_body(view, value),
        "applies_to": applicability_of(view.profile, view),
        "settings": _merged(page.settings if page else [], settings),
    }
    if page is None:
        page = services.page_create(
            by=by, title=title, type=PageType.TUNING_RECIPE, topic=Topic.NCCL,
            status=PageStatus.DRAFT, tags=["sweep"], message=f"Written from sweep #{sweep.pk}",
            **content,
        )  # fmt: skip
    else:
        page = services.page_update(
            page=page, base_revision=page.revision, by=by,
            message=f"Updated from sweep #{sweep.pk}", **content,
        )  # fmt: skip
    services.citation_add(
        page=page, kind=SWEEP_KIND, object_id=sweep.pk, by=by,
        note=f"proof: {value} ({_range_text(claims_of(view, value))})"[:300],
    )  # fmt: skip
    for run in view.runs[:MAX_CITED_RUNS]:
        services.citation_add(page=page, kind="run", object_id=run.pk, by=by, note="sweep run")
    pin = Citation.objects.get(page=page, kind=SWEEP_KIND, object_id=str(sweep.pk))
    claims = [c.__dict__ for c in claims_of(view, value)]
    pin.pinned = {**pin.pinned, "value": value, "claims": claims}
    pin.save(update_fields=["pinned"])
    RecipeReview.objects.filter(page=page, sweep=sweep).delete()  # its own proof agrees
    return page


def _merged(existing: list[dict[str, str]], new: list[dict[str, str]]) -> list[dict[str, str]]:
    """The page's settings with the sweep's replacing those of the same kind and name."""
    names = {(s["kind"], s.get("name", "")) for s in new}
    kept = [s for s in existing if (s.get("kind"), s.get("name", "")) not in names]
    return [*kept, *new]


def _recipe_citing(sweep: Sweep) -> Page | None:
    citation = (
        Citation.objects.filter(kind=SWEEP_KIND, object_id=str(sweep.pk))
        .select_related("page")
        .first()
    )
    return citation.page if citation else None


# ------------------------------------------------------------------------- disagreement


def disagreements(view: SweepView) -> list[tuple[Page, str]]:
    """(recipe, why) for each recipe proved by another sweep on this profile that this sweep
    contradicts: at a size it claims, its value does not win here."""
    if view.profile is None or not view.analysis.settings:
        return []
    found = []
    citations = Citation.objects.filter(kind=SWEEP_KIND).exclude(object_id=str(view.sweep.pk))
    for citation in citations.select_related("page"):
        pinned = citation.pinned or {}
        if pinned.get("profile") != view.profile.slug:
            continue
        recipe_env = {
            s.get("name"): s.get("value")
            for s in citation.page.settings or []
            if s.get("kind") == "env"
        }
        swept = [n for n in view.analysis.settings if n in recipe_env]
        if not swept:
            continue
        why = _contradiction(view, recipe_env, swept, pinned.get("claims") or [])
        if why:
            found.append((citation.page, why))
    return found


def _contradiction(
    view: SweepView, recipe_env: dict[str, Any], swept: list[str], claims: list[dict[str, Any]]
) -> str:
    analysis = view.analysis
    for bench in analysis.benchmarks:
        for claim in claims:
            if (claim.get("collective"), claim.get("nranks")) != (bench.collective, bench.nranks):
                continue
            for size in bench.sizes:
                if not claim["low_bytes"] <= size.size_bytes <= claim["high_bytes"]:
                    continue
                if size.winner is None:
                    continue
                chosen = analysis.value_settings.get(size.winner, {})
                if any(chosen.get(n, DEFAULT) != recipe_env[n] for n in swept):
                    settings = ", ".join(f"{n}={chosen.get(n, DEFAULT)}" for n in swept)
                    return (
                        f"sweep #{view.sweep.pk}: {settings} wins {bench.label} at "
                        f"{human_bytes(size.size_bytes)}, where the recipe says "
                        + ", ".join(f"{n}={recipe_env[n]}" for n in swept)
                    )[:500]
    return ""


def reviews_record(view: SweepView) -> list[RecipeReview]:
    """Mark each recipe this sweep disagrees with for review (once per sweep)."""
    made = []
    for page, why in disagreements(view):
        try:
            with transaction.atomic():
                review, _ = RecipeReview.objects.get_or_create(
                    page=page, sweep=view.sweep, defaults={"reason": why}
                )
        except IntegrityError:  # recorded by a concurrent request a moment ago
            review = RecipeReview.objects.get(page=page, sweep=view.sweep)
        made.append(review)
    return made
