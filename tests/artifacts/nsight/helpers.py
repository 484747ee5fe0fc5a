"""Shared by the Nsight page/API/loader tests: ingest and parse a file, read page tables."""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from artifacts.models import Artifact
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from tests.samples import sample

RTX3060 = "nsys/p4arth_nsys2025.5_schema3.24.0_rtx3060.sqlite"
NO_CUDA = "nsys/stella_nsys2024.6_schema3.16.1_no_cuda_activity.sqlite"
STATS_TORCH = "nsys/yktian_nsys_profile_stats_true_torch_gcn.txt"
STATS_PADDLE = "nsys/yktian_nsys_profile_stats_true_paddle_gcn.txt"
REP = "nsys/p4arth_my_vector_add_report.nsys-rep"
NCU_TORCH = "ncu/yktian_ncu_csv_details_nvtx_torch_gcn.txt"
NCU_TEXT = "ncu/yktian_ncu_text_details_torch_gcn.txt"


def parsed_path(path: Path, name: str | None = None, **kwargs: Any) -> Artifact:
    with path.open("rb") as stream:
        artifact = artifact_ingest(
            stream=stream, name=name or path.name, enqueue=False, **kwargs
        ).artifact
    return artifact_parse(artifact_id=artifact.pk)


def parsed(relative: str, **kwargs: Any) -> Artifact:
    return parsed_path(sample(relative), **kwargs)


def parsed_bytes(data: bytes, name: str, tmp_path: Path, **kwargs: Any) -> Artifact:
    path = tmp_path / name
    path.write_bytes(data)
    return parsed_path(path, **kwargs)


class _Rows(HTMLParser):
    """Cell texts of the <tr data-row> rows of one table (detail rows are skipped)."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id = table_id
        self.depth = 0  # nesting inside the wanted table
        self.rows: list[list[str]] = []
        self._row = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "table":
            if self.depth or values.get("id") == self.table_id:
                self.depth += 1
        elif self.depth == 1 and tag == "tr":
            self._row = "data-row" in values
            if self._row:
                self.rows.append([])
        elif self.depth == 1 and tag == "td" and self._row:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self.depth:
            self.depth -= 1
        elif tag == "td" and self._cell is not None and self.depth == 1:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def page_rows(html: str, table_id: str) -> list[list[str]]:
    parser = _Rows(table_id)
    parser.feed(html)
    return parser.rows


def csv_rows(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode())))
