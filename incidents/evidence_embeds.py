"""More post-mortem embeds: a fabric/counter finding and a trace's GPU-time breakdown.

``{{finding id=N}}`` and ``{{trace id=N [window=steps]}}`` (N: the trace's artifact id)
follow the ``incidents.embeds.EmbedKind`` protocol: ``pin`` freezes what is shown (the
finding's words and numbers, the breakdown's microseconds) together with the version of the
evidence (artifact sha256, parser version), so a re-evaluation, a re-parse or a deletion
never changes a published post-mortem. Registered by ``IncidentsConfig.ready``.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.html import escape, format_html

from artifacts.models import Finding, TraceSummary
from incidents.embeds import EMBED_KINDS, EmbedError, Pinned, _int_arg, chart_div

# The parts that partition a trace's GPU span, as charts.figures draws them.
TRACE_PARTS = (
    ("compute_us", "compute", "#2563eb"),
    ("exposed_comm_us", "exposed communication", "#f59e0b"),
    ("memory_other_us", "memory / other", "#8b5cf6"),
    ("idle_us", "idle", "#cbd5e1"),
)


class FindingEmbed:
    """``{{finding id=N}}``: severity, title, explanation and the numbers behind a finding."""

    name = "finding"
    example = "{{finding id=5}}"

    def pin(self, args: dict[str, str]) -> Pinned:
        finding_id = _int_arg(args, "id")
        finding = Finding.objects.select_related("artifact").filter(pk=finding_id).first()
        if finding is None:
            raise EmbedError(f"{{{{finding id={finding_id}}}}}: no finding #{finding_id}")
        evidence = finding.evidence or {}
        return Pinned(
            pinned={
                "finding_id": finding.pk,
                "fingerprint": finding.fingerprint,
                "artifact_id": finding.artifact_id,
                "artifact_sha256": finding.artifact.sha256,
                "parser_version": finding.artifact.parser_version,
            },
            snapshot={
                "rule": finding.rule,
                "severity": finding.severity,
                "title": finding.title,
                "explanation": finding.explanation,
                "where": " ".join(
                    filter(None, (finding.host, finding.device, _port(finding.port)))
                ),
                "observed_at": finding.observed_at.isoformat(),
                "measure": {
                    k: evidence.get(k)
                    for k in ("measure", "value", "unit", "threshold")
                    if _scalar(evidence.get(k))
                },
                "artifact_name": finding.artifact.original_name,
            },
        )

    def render(self, pinned: Pinned, *, interactive: bool, dom_id: str) -> str:
        snap, pin = pinned.snapshot, pinned.pinned
        title = escape(snap.get("title", "finding"))
        if interactive and pin.get("finding_id"):
            title = format_html(
                '<a href="{}">{}</a>',
                reverse("finding-detail", args=[pin["finding_id"]]),
                snap.get("title", "finding"),
            )
        measure = snap.get("measure") or {}
        numbers = ""
        if measure.get("value") is not None:
            numbers = format_html(
                "<dt>{}</dt><dd>{} {} (threshold {})</dd>",
                measure.get("measure") or "value",
                _number(measure.get("value")),
                measure.get("unit") or "",
                _number(measure.get("threshold")),
            )
        return (
            f'<figure class="embed embed-finding sev-{escape(snap.get("severity", ""))}" '
            f'id="{escape(dom_id)}"><figcaption><strong>{escape(snap.get("severity", ""))}'
            f"</strong> · {title}</figcaption>"
            f'<p>{escape(snap.get("explanation", ""))}</p><dl class="facts">'
            + format_html(
                "<dt>where</dt><dd>{}</dd><dt>observed</dt><dd>{}</dd><dt>rule</dt><dd>{}</dd>"
                "<dt>evidence</dt><dd>{} (sha256 <code>{}…</code>)</dd>",
                snap.get("where") or "—",
                snap.get("observed_at", ""),
                snap.get("rule", ""),
                snap.get("artifact_name", ""),
                str(pin.get("artifact_sha256", ""))[:12],
            )
            + numbers
            + "</dl></figure>"
        )


class TraceBreakdownEmbed:
    """``{{trace id=N}}``: where a rank's GPU time went (compute, exposed communication,
    memory/other, idle), for the whole trace or HTA's step window (``window=steps``)."""

    name = "trace"
    example = "{{trace id=42}}"

    def pin(self, args: dict[str, str]) -> Pinned:
        artifact_id = _int_arg(args, "id")
        window = args.get("window", "trace")
        trace = TraceSummary.objects.select_related("artifact").filter(pk=artifact_id).first()
        if trace is None:
            raise EmbedError(f"{{{{trace id={artifact_id}}}}}: no trace in artifact #{artifact_id}")
        try:
            breakdown = trace.breakdown(window)
        except ValueError as exc:
            raise EmbedError(f"{{{{trace id={artifact_id}}}}}: {exc}") from None
        keys = ("span_us", *(c for c, *_ in TRACE_PARTS), "overlap_pct")
        return Pinned(
            pinned={
                "artifact_id": trace.artifact_id,
                "artifact_sha256": trace.artifact.sha256,
                "parser_version": trace.artifact.parser_version,
                "window": window,
            },
            snapshot={
                "label": trace.rank_label,
                "gpu": trace.gpu,
                "nccl_version": trace.nccl_version,
                **{k: breakdown.get(k) for k in keys},
            },
        )

    def render(self, pinned: Pinned, *, interactive: bool, dom_id: str) -> str:
        snap, pin = pinned.snapshot, pinned.pinned
        span = snap.get("span_us") or 0
        caption = format_html(
            "GPU time of {} ({} window{}{}), artifact {}…",
            snap.get("label", "trace"),
            pin.get("window", "trace"),
            f", {snap['gpu']}" if snap.get("gpu") else "",
            f", overlap {snap['overlap_pct']:.1f}%" if snap.get("overlap_pct") else "",
            str(pin.get("artifact_sha256", ""))[:12],
        )
        if not span:
            body = "<p class='muted'>The trace has no GPU span to break down.</p>"
        elif interactive:
            # pandas/plotly only when a chart is drawn: this module is loaded at start-up
            import pandas as pd

            from charts.figures import trace_breakdown_bars

            frame = pd.DataFrame([{"label": snap.get("label", "trace"), **snap}])
            body = chart_div(trace_breakdown_bars(frame, height=220).to_json(), dom_id)
        else:
            body = breakdown_svg(snap)
        link = ""
        if interactive and pin.get("artifact_id"):
            link = format_html(
                ' · <a href="{}">trace page</a>', reverse("trace-detail", args=[pin["artifact_id"]])
            )
        return (
            f'<figure class="embed embed-trace">{body}'
            f"<figcaption>{caption}{link}</figcaption></figure>"
        )


def breakdown_svg(snap: dict[str, Any], width: int = 640) -> str:
    """A static stacked bar of the breakdown with a legend (exports load no JavaScript)."""
    span = float(snap.get("span_us") or 0)
    x, bar_w, parts = 10.0, width - 20, []
    for index, (column, label, colour) in enumerate(TRACE_PARTS):
        share = max(0.0, float(snap.get(column) or 0)) / span if span else 0.0
        w = share * bar_w
        parts.append(
            f'<rect x="{x:.1f}" y="10" width="{w:.1f}" height="28" fill="{colour}">'
            f"<title>{escape(label)}: {100 * share:.1f}%</title></rect>"
        )
        x += w
        legend_x = 10 + index * 155
        parts.append(
            f'<rect x="{legend_x}" y="50" width="10" height="10" fill="{colour}"/>'
            f'<text x="{legend_x + 14}" y="59" font-size="11">{escape(label)} '
            f"{100 * share:.1f}%</text>"
        )
    return (
        f'<svg viewBox="0 0 {width} 70" width="{width}" height="70" role="img" '
        f'aria-label="GPU time breakdown">{"".join(parts)}</svg>'
    )


def register() -> None:
    for kind in (FindingEmbed(), TraceBreakdownEmbed()):
        EMBED_KINDS.setdefault(kind.name, kind)


def _port(port: int | None) -> str:
    return f"port {port}" if port is not None else ""


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}"
    return "—" if value is None else str(value)
