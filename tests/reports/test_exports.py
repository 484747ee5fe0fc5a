"""Exports: self-contained HTML, CSV equal to the page, JSON, Markdown, images."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from html.parser import HTMLParser

import pytest

from reports import exports
from reports.tables import records

pytestmark = pytest.mark.django_db

URL = re.compile(r"https?://", re.IGNORECASE)


def test_html_export_inlines_plotly_and_references_nothing_outside_the_file(pair_report):
    html = exports.report_html(pair_report).decode()
    bundle = exports.plotly_js()
    assert "</script" not in bundle.lower()  # safe to inline as is
    assert bundle in html  # plotly.js itself is inside the file
    # plotly.js carries URL strings of its own (SVG namespaces, map tile servers for map
    # traces we never draw); everything *we* wrote must carry none.
    ours = html.replace(bundle, "")
    assert not URL.search(ours), URL.search(ours)
    assert not re.search(r"<(script|img|link|iframe)[^>]+(src|href)=", html, re.IGNORECASE)
    assert "@import" not in ours and "url(" not in ours
    assert html.count('class="report-chart"') == 4  # curves and Δ for alltoall and sendrecv
    assert "G1 vs G8" in html and pair_report.inputs["artifacts"][0]["sha256"][:16] in html


class _TableCells(HTMLParser):
    """Text of every <td> of one table (by id) in a page."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id, self.inside, self.depth = table_id, False, 0
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table" and dict(attrs).get("id") == self.table_id:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag == "td":
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False
        elif tag == "td" and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def page_table(html: str, table_id: str) -> list[list[str]]:
    parser = _TableCells(table_id)
    parser.feed(html)
    return [row for row in parser.rows if row]


@pytest.mark.parametrize("table", ["deltas", "curves", "verdicts"])
def test_csv_numbers_are_the_numbers_on_the_page(editor_client, pair_report, table):
    page = editor_client.get(f"/reports/{pair_report.pk}/").content.decode()
    on_page = page_table(page, f"table-{table}")
    response = editor_client.get(
        f"/reports/{pair_report.pk}/export/", {"format": "csv", "table": table}
    )
    assert response["Content-Disposition"].startswith("attachment;")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == [c["key"] for c in pair_report.table(table)["columns"]]
    assert rows[1:] == on_page and len(on_page) == len(pair_report.table(table)["rows"])
    # and the same in the offline HTML file
    assert page_table(exports.report_html(pair_report).decode(), f"table-{table}") == on_page


def test_csv_zip_holds_every_table_and_json_holds_the_stored_rows(editor_client, pair_report):
    response = editor_client.get(f"/reports/{pair_report.pk}/export/", {"format": "csv"})
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert sorted(archive.namelist()) == [
        "curves.csv",
        "deltas.csv",
        "efficiency.csv",
        "runs.csv",
        "summary.txt",
        "verdicts.csv",
    ]
    assert archive.read("summary.txt").decode().splitlines() == pair_report.summary
    data = json.loads(
        editor_client.get(f"/reports/{pair_report.pk}/export/", {"format": "json"}).content
    )
    assert data["tables"]["deltas"]["rows"] == records(pair_report.table("deltas"))
    assert data["inputs"] == pair_report.inputs and data["version"] == 1


def test_markdown_export_is_a_pasteable_pipe_table(pair_report):
    text = exports.report_markdown(pair_report).decode()
    assert text.startswith("# G1 vs G8 (report")
    assert "| collective | reference | candidate | size | size (B) |" in text
    assert (
        "| alltoall | 2 ranks · g1 | 16 ranks · g8 |" in text
        and "| 32 MiB | 33554432 | 13.08 | 22.76 | 1 | 1 | +74.01 | +72.01 | +76.01 | improved |"
        in text
    )


def test_chart_images_render_offline_as_png_and_svg(editor_client, pair_report):
    chart = exports.report_charts(pair_report)[0].name
    png = editor_client.get(f"/reports/{pair_report.pk}/export/", {"format": "png", "chart": chart})
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG\r\n\x1a\n")
    svg = editor_client.get(f"/reports/{pair_report.pk}/export/", {"format": "svg", "chart": chart})
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content[:200]


def test_without_an_image_renderer_the_export_says_so(editor_client, pair_report, monkeypatch):
    monkeypatch.setattr(exports, "images_unavailable", lambda: "no kaleido here")
    chart = exports.report_charts(pair_report)[0].name
    response = editor_client.get(
        f"/reports/{pair_report.pk}/export/", {"format": "png", "chart": chart}
    )
    assert response.status_code == 503 and b"no kaleido here" in response.content
    page = editor_client.get(f"/reports/{pair_report.pk}/").content.decode()
    assert "images unavailable" in page


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ({"format": "pdf"}, 400, "format must be one of"),
        ({"format": "csv", "table": "nope"}, 400, "has no table 'nope'"),
        ({"format": "png"}, 400, "needs chart=<name>"),
        ({"format": "svg", "chart": "nope"}, 400, "has no chart 'nope'"),
    ],
)
def test_bad_export_requests_get_a_clear_answer(editor_client, pair_report, query, status, message):
    response = editor_client.get(f"/reports/{pair_report.pk}/export/", query)
    assert response.status_code == status and message in response.content.decode()
