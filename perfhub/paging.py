"""Pagination shared by list pages: one page size, junk page numbers mean the nearest page."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db import connections
from django.http import HttpRequest

# Below this many rows an exact COUNT(*) is cheap; above it, an unfiltered list shows the
# planner's estimate ("about 333,000"): counting 333,000 runs costs 40-120 ms on every page
# of the run list, for a number nobody reads to the last digit. Filtered lists stay exact.
ESTIMATE_FROM_ROWS = 100_000


class EstimatingPaginator(Paginator):
    """A Paginator whose ``count`` is PostgreSQL's row estimate for an unfiltered table."""

    estimated = False

    @cached_property
    def count(self) -> int:
        estimate = table_estimate(self.object_list)
        if estimate is not None and estimate >= ESTIMATE_FROM_ROWS:
            self.estimated = True
            return estimate
        return super().count


def table_estimate(rows: Any) -> int | None:
    """The planner's row count of ``rows``'s table when ``rows`` is the whole table (a
    queryset without filters or DISTINCT on PostgreSQL), else None."""
    query = getattr(rows, "query", None)
    if query is None or query.where or query.distinct or query.combinator:
        return None
    connection = connections[rows.db]
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
            [rows.model._meta.db_table],
        )
        found = cursor.fetchone()
    return int(found[0]) if found and found[0] and found[0] > 0 else None


def page_of(request: HttpRequest, rows: Any, *, param: str = "page") -> Page:
    return EstimatingPaginator(rows, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get(param))
