"""Pagination shared by list pages: one page size, junk page numbers mean the nearest page."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.http import HttpRequest


def page_of(request: HttpRequest, rows: Any, *, param: str = "page") -> Page:
    return Paginator(rows, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get(param))
