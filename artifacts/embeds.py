"""The embed kinds that show evidence: ``{{chart run=N}}``, ``{{artifact id=N}}``,
``{{finding id=N}}`` and ``{{trace id=N [window=steps]}}`` (N: the trace's artifact id).

Each follows the ``documents.embeds.EmbedKind`` protocol: ``pin`` freezes what is shown (the
run's rows, the finding's words and numbers, the breakdown's microseconds) together with the
version of the evidence (artifact sha256, parser version), so a re-evaluation, a re-parse or
a deletion never changes a published post-mortem or knowledge page. Registered by
``ArtifactsConfig.ready``.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.html import escape, format_html

from artifacts.generic import artifact_excerpt
from artifacts.models import Artifact, BenchmarkRun, Finding, TraceSummary
from artifacts.runs import exports
from charts.palette import TRACE_PARTS
from documents.embeds import EmbedError, Pinned, chart_div, int_arg, register

QUOTED_CHARS = 500  # of a cited line


class RunChartEmbed:
    """``{{chart run=ID}}``: the run's busbw/algbw curve (charts.figures.bandwidth_curve)."""

    name = "chart"
    example = "{{chart run=123}}"

    def pin(self, args: dict[str, str]) -> Pinned:
        run_id = int_arg(args, "run")
        run = BenchmarkRun.objects.select_related("artifact").filter(pk=run_id).first()
        if run is None:
            raise EmbedError(f"{{{{chart run={run_id}}}}}: no run #{run_id}")
        rows = exports.run_measurement_rows(run)
        return Pinned(
            pinned={
                "run_id": run.pk,
                "run_index": run.index,
                "artifact_id": run.artifact_id,
                "artifact_sha256": run.artifact.sha256,
                "parser_version": run.artifact.parser_version,
            },
            snapshot={
                "title": f"{run.collective or run.benchmark} · {run.nranks or '?'} ranks",
                "gpu": run.gpu,
                "nccl_version": run.nccl_version,
                "avg_busbw_gbps": run.avg_busbw_gbps,
                "columns": list(exports.MEASUREMENT_COLUMNS),
                "rows": [list(r) for r in rows],
            },
        )

    def render(self, pinned: Pinned, *, interactive: bool, dom_id: str) -> str:
        # pandas and plotly are imported when a chart is drawn, not when the registry is
        # (every process, the command line included, loads it at start-up).
        import pandas as pd

        from charts.figures import bandwidth_curve
        from charts.svg import busbw_svg

        snap, pin = pinned.snapshot, pinned.pinned
        frame = pd.DataFrame(snap.get("rows", []), columns=snap.get("columns"))
        caption = format_html(
            "{} — run #{} of artifact {}… ({} sizes{})",
            snap.get("title", "run"),
            pin.get("run_id", "?"),
            str(pin.get("artifact_sha256", ""))[:12],
            len(frame),
            f", avg busbw {snap['avg_busbw_gbps']:.2f} GB/s" if snap.get("avg_busbw_gbps") else "",
        )
        if frame.empty:
            body = "<p class='muted'>The run had no data rows.</p>"
        elif interactive:
            body = chart_div(bandwidth_curve(frame).to_json(), dom_id)
        else:
            body = busbw_svg(frame)
        link = ""
        if interactive and pin.get("run_id"):
            link = format_html(
                ' · <a href="{}">run page</a>', reverse("run-detail", args=[pin["run_id"]])
            )
        return (
            f'<figure class="embed embed-chart" data-pin="{escape(pin.get("run_id", ""))}">'
            f"{body}<figcaption>{caption}{link}</figcaption></figure>"
        )


class ArtifactEmbed:
    """``{{artifact id=ID [line=N]}}``: a card with the artifact's name, kind, hash and headline
    facts; ``line=N`` quotes that line of the file as uploaded (pinned with the hash), linked
    to it (how a generic reading's items, and any line of evidence, are cited)."""

    name = "artifact"
    example = "{{artifact id=12}}"

    def pin(self, args: dict[str, str]) -> Pinned:
        artifact_id = int_arg(args, "id")
        artifact = Artifact.objects.filter(pk=artifact_id).first()
        if artifact is None:
            raise EmbedError(f"{{{{artifact id={artifact_id}}}}}: no artifact #{artifact_id}")
        snapshot = {
            "name": artifact.original_name,
            "kind": artifact.kind,
            "size": artifact.size,
            "summary": {k: v for k, v in artifact.summary.items() if _scalar_or_list(v)},
        }
        if "line" in args:
            line = int_arg(args, "line")
            quoted = artifact_excerpt(artifact, line, line)
            if not quoted:
                raise EmbedError(f"{{{{artifact id={artifact_id} line={line}}}}}: no such line")
            snapshot.update(line=line, line_text=quoted[0][1][:QUOTED_CHARS])
        return Pinned(
            pinned={
                "artifact_id": artifact.pk,
                "artifact_sha256": artifact.sha256,
                "parser_version": artifact.parser_version,
            },
            snapshot=snapshot,
        )

    def render(self, pinned: Pinned, *, interactive: bool, dom_id: str) -> str:
        snap, pin = pinned.snapshot, pinned.pinned
        facts = "".join(
            format_html(
                "<dt>{}</dt><dd>{}</dd>", k, ", ".join(map(str, v)) if isinstance(v, list) else v
            )
            for k, v in sorted(snap.get("summary", {}).items())
        )
        name = escape(snap.get("name", "artifact"))
        if interactive and pin.get("artifact_id"):
            name = format_html(
                '<a href="{}">{}</a>',
                reverse("artifact-detail", args=[pin["artifact_id"]]),
                snap.get("name", "artifact"),
            )
        quote = ""
        if snap.get("line"):
            where = format_html("line {}", snap["line"])
            if interactive and pin.get("artifact_id"):
                url = reverse("artifact-lines", args=[pin["artifact_id"]])
                where = format_html(
                    '<a href="{}?line={}#L{}">line {}</a>', url, *[snap["line"]] * 3
                )
            quote = format_html(
                "<blockquote><code>{}</code> ({})</blockquote>", snap.get("line_text", ""), where
            )
        return (
            f'<figure class="embed embed-artifact" id="{escape(dom_id)}"><figcaption>{name} '
            f"({escape(snap.get('kind', ''))}, sha256 "
            f"<code>{escape(str(pin.get('artifact_sha256', ''))[:16])}…</code>)</figcaption>"
            f'{quote}<dl class="facts">{facts}</dl></figure>'
        )


class FindingEmbed:
    """``{{finding id=N}}``: severity, title, explanation and the numbers behind a finding."""

    name = "finding"
    example = "{{finding id=5}}"

    def pin(self, args: dict[str, str]) -> Pinned:
        finding_id = int_arg(args, "id")
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
        artifact_id = int_arg(args, "id")
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
            from charts.svg import breakdown_svg  # pandas: only when drawn

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


def register_evidence_embeds() -> None:
    """Called by ``ArtifactsConfig.ready``, after every app's models are loaded."""
    register(RunChartEmbed(), ArtifactEmbed(), FindingEmbed(), TraceBreakdownEmbed())


def _port(port: int | None) -> str:
    return f"port {port}" if port is not None else ""


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}"
    return "—" if value is None else str(value)


def _scalar_or_list(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(v, str | int | float | bool) for v in value) and len(value) <= 20
    return isinstance(value, str | int | float | bool) or value is None
