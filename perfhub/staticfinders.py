"""Serves plotly.js from the installed ``plotly`` Python package, so no front-end asset is
committed or fetched from the internet; the version always matches the Python side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = "vendor/plotly.min.js"
_PACKAGE_DATA = Path(plotly.__file__).resolve().parent / "package_data"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(_PACKAGE_DATA))
        self.storage.prefix = "vendor"  # collectstatic puts it under vendor/

    def check(self, **kwargs: Any) -> list[Any]:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        if path != PLOTLY_JS:
            return [] if find_all else None
        match = str(_PACKAGE_DATA / "plotly.min.js")
        return [match] if find_all else match

    def list(self, ignore_patterns: Any) -> Any:
        yield "plotly.min.js", self.storage
