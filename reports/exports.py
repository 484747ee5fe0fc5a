"""A saved report as files: self-contained HTML, CSV (one table or a zip of all), JSON,
Markdown tables, and PNG/SVG images of its charts.

Everything is rendered from the report's stored tables, so every export of one version shows
the same numbers as its page, whenever it is made.
"""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
import zipfile
from functools import cache
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from reports.kinds import get_kind
from reports.kinds.base import Chart
from reports.models import Report
from reports.tables import DECIMAL_FORMATS, formatted_rows, records

FORMATS = ("html", "csv", "json", "md", "png", "svg")
IMAGE_FORMATS = ("png", "svg")
IMAGE_SIZE = {"width": 1000, "height": 480}


class ExportError(Exception):
    """The export cannot be made (unknown table or chart, images unavailable); says why.

    ``status``: the HTTP status an adapter should answer with (400 for a bad request, 409 for
    a report that is not built, 503 when this server cannot draw images).
    """

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


_CONTENT_TYPES = {
    "html": "text/html; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "zip": "application/zip",
    "json": "application/json",
    "md": "text/markdown; charset=utf-8",
    "png": "image/png",
    "svg": "image/svg+xml",
}


def export_file(
    report: Report, fmt: str, *, table: str = "", chart: str = "", url: str = ""
) -> tuple[bytes, str, str]:
    """``(content, content_type, filename)`` of one export; ExportError says why not."""
    if fmt not in FORMATS:
        raise ExportError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if not report.is_ready:
        raise ExportError(
            f"report {report.pk} is {report.status}; exports exist once it is built", 409
        )
    if fmt == "html":
        return report_html(report, url=url), _CONTENT_TYPES["html"], filename(report, "html")
    if fmt == "json":
        return report_json(report, url=url), _CONTENT_TYPES["json"], filename(report, "json")
    if fmt == "md":
        return report_markdown(report), _CONTENT_TYPES["md"], filename(report, "md")
    if fmt == "csv":
        if table:
            return table_csv(report, table), _CONTENT_TYPES["csv"], filename(report, "csv", table)
        return tables_zip(report), _CONTENT_TYPES["zip"], filename(report, "zip", "tables")
    if not chart:
        names = ", ".join(c.name for c in report_charts(report)) or "none"
        raise ExportError(f"an image export needs chart=<name>; this report's charts: {names}")
    return chart_image(report, chart, fmt), _CONTENT_TYPES[fmt], filename(report, fmt, chart)


def report_charts(report: Report) -> list[Chart]:
    if not report.is_ready:
        return []
    return get_kind(report.kind, require_available=False).charts(report.tables)


def filename(report: Report, extension: str, suffix: str = "") -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", report.title).strip("-").lower()[:60] or "report"
    extra = f"-{re.sub(r'[^A-Za-z0-9_.-]+', '-', suffix)}" if suffix else ""
    return f"report-{report.pk}-v{report.version}-{slug}{extra}.{extension}"


# ------------------------------------------------------------------------------------------
# JSON and tables
# ------------------------------------------------------------------------------------------


def report_payload(report: Report, *, url: str = "") -> dict[str, Any]:
    """The report as data: what ``GET /api/v1/reports/{id}/`` and the JSON export return."""
    return {
        "id": report.pk,
        "url": url,
        "title": report.title,
        "kind": report.kind,
        "version": report.version,
        "lineage": str(report.lineage),
        "status": report.status,
        "error": report.error,
        "created_at": report.created_at.isoformat() if report.created_at else None,
        "built_at": report.built_at.isoformat() if report.built_at else None,
        "created_by": report.created_by.username if report.created_by else None,
        "request": report.request,
        "inputs": report.inputs,
        "summary": report.summary,
        "tables": {
            t["name"]: {
                "title": t["title"],
                "note": t.get("note", ""),
                "columns": t["columns"],
                "rows": records(t),
            }
            for t in report.tables
        },
    }


def report_json(report: Report, *, url: str = "") -> bytes:
    return json.dumps(report_payload(report, url=url), indent=2, ensure_ascii=False).encode()


def table_csv(report: Report, name: str) -> bytes:
    table = report.table(name)
    if table is None:
        known = ", ".join(t["name"] for t in report.tables) or "none"
        raise ExportError(f"report {report.pk} has no table {name!r}; its tables: {known}")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([c["key"] for c in table["columns"]])
    writer.writerows(formatted_rows(table))
    return buffer.getvalue().encode()


def tables_zip(report: Report) -> bytes:
    """Every table as ``<name>.csv`` plus ``summary.txt`` (the verdict lines)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for table in report.tables:
            archive.writestr(f"{table['name']}.csv", table_csv(report, table["name"]))
        archive.writestr("summary.txt", "\n".join(report.summary) + "\n")
    return buffer.getvalue()


def report_markdown(report: Report) -> bytes:
    """Verdict lines and tables as Markdown pipe tables: ready to paste into a KB page."""
    out = [f"# {report.title} (report {report.pk}, version {report.version})", ""]
    out += [f"- {line}" for line in report.summary]
    for table in report.tables:
        out += ["", f"## {table['title']}", ""]
        out.append("| " + " | ".join(c["label"] for c in table["columns"]) + " |")
        out.append("|" + "|".join("---:" if _numeric(c) else "---" for c in table["columns"]) + "|")
        out += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in formatted_rows(table)]
    return ("\n".join(out) + "\n").encode()


def _numeric(column: dict[str, Any]) -> bool:
    return column.get("format") in ("int", *DECIMAL_FORMATS)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ------------------------------------------------------------------------------------------
# Self-contained HTML
# ------------------------------------------------------------------------------------------


@cache
def plotly_js() -> str:
    """plotly.js from the installed ``plotly`` package (the same file the pages serve)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def report_html(report: Report, *, url: str = "") -> bytes:
    """One HTML file that opens from disk with no network: CSS, plotly.js, figures and
    tables are all inside it."""
    import plotly

    context = render_context(report)
    html = render_to_string(
        "reports/export.html",
        {
            **context,
            "url": url,
            "links": False,  # no links back into PerfHub: the file lives outside it
            "css": mark_safe(_stylesheet()),
            # plotly.min.js has no "</script" in it (checked by a test), so it can be inlined
            "plotly_js": mark_safe(plotly_js()),
            "plotly_version": plotly.__version__,
        },
    )
    return html.encode()


def render_context(report: Report) -> dict[str, Any]:
    """What the report page, the HTML export and embeds draw: charts and formatted tables."""
    verdicts = report.table("verdicts")
    return {
        "report": report,
        "verdicts": records(verdicts) if verdicts else [],
        "tables": [table_context(t) for t in report.tables],
        "charts": [
            {
                "name": c.name,
                "title": c.title,
                "script_id": f"figure-{i}",
                # a JSON string (plotly's encoder knows numpy); the page's script parses it
                "figure": c.figure.to_json(),
            }
            for i, c in enumerate(report_charts(report), start=1)
        ],
    }


def table_context(table: dict[str, Any]) -> dict[str, Any]:
    """A stored table with every cell formatted once; rows carry their "change" as a class."""
    columns = table["columns"]
    keys = [c["key"] for c in columns]
    change = keys.index("change") if "change" in keys else None
    rows = []
    for text, raw in zip(formatted_rows(table), table["rows"], strict=True):
        cls = raw[change] if change is not None and raw[change] in ("regressed", "improved") else ""
        rows.append({"cells": list(zip(text, columns, strict=True)), "cls": cls})
    return {
        "name": table["name"],
        "title": table["title"],
        "note": table.get("note", ""),
        "columns": columns,
        "rows": rows,
    }


@cache
def _stylesheet() -> str:
    from django.contrib.staticfiles import finders

    path = finders.find("css/perfhub.css")
    if not path:
        return ""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


# ------------------------------------------------------------------------------------------
# Images
# ------------------------------------------------------------------------------------------


def images_unavailable() -> str | None:
    """Why chart images cannot be rendered here, or None when they can."""
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return (
            "chart images need the 'kaleido' package (0.2.x ships its own headless browser); "
            "install the project's dependencies, or use the HTML export, which draws the "
            "charts in any browser"
        )
    return None


def chart_image(report: Report, chart: str, fmt: str) -> bytes:
    if fmt not in IMAGE_FORMATS:
        raise ExportError(f"image format must be one of {', '.join(IMAGE_FORMATS)}")
    charts = {c.name: c for c in report_charts(report)}
    if not charts:
        raise ExportError(f"report {report.pk} has no charts")
    if chart not in charts:
        raise ExportError(
            f"report {report.pk} has no chart {chart!r}; its charts: {', '.join(charts)}"
        )
    if reason := images_unavailable():
        raise ExportError(reason, 503)
    return render_image(charts[chart].figure, fmt)


def render_image(figure: Any, fmt: str) -> bytes:
    """PNG/SVG of a chart alone: without the buttons and sliders the page draws with it."""
    from charts.figures import static_figure

    try:
        with warnings.catch_warnings():
            # kaleido 0.2 starts its browser thread with the deprecated setDaemon()
            warnings.filterwarnings("ignore", category=DeprecationWarning, module="kaleido")
            return _image_scope().transform(static_figure(figure), format=fmt, **IMAGE_SIZE)
    except Exception as exc:  # kaleido's browser could not start (sandbox, missing libs)
        raise ExportError(f"the chart image could not be rendered here: {exc}", 503) from exc


@cache
def _image_scope() -> Any:
    """kaleido 0.2's scope, told explicitly to use the plotly.js of the installed ``plotly``
    package and no MathJax: plotly's own default points MathJax at a CDN, which an
    air-gapped cluster cannot reach. The headless browser starts once and is reused."""
    from pathlib import Path

    import plotly
    from kaleido.scopes.plotly import PlotlyScope

    bundle = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
    return PlotlyScope(plotlyjs=str(bundle), mathjax=False)
