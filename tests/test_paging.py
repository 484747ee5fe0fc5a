"""List paging: exact counts, except PostgreSQL's estimate for a whole big table."""

import pytest
from django.test import RequestFactory

from artifacts.models import BenchmarkRun
from perfhub import paging

pytestmark = pytest.mark.django_db


def test_filtered_or_small_lists_count_exactly(monkeypatch):
    request = RequestFactory().get("/runs/")
    page = paging.page_of(request, BenchmarkRun.objects.all())
    assert page.paginator.count == 0 and not page.paginator.estimated
    # a filtered queryset is never estimated, whatever the table's size
    assert paging.table_estimate(BenchmarkRun.objects.filter(collective="all_reduce")) is None


def test_a_whole_big_table_shows_the_planner_estimate(monkeypatch):
    monkeypatch.setattr(paging, "table_estimate", lambda rows: 333_000)
    page = paging.page_of(RequestFactory().get("/runs/"), BenchmarkRun.objects.all())
    assert page.paginator.count == 333_000 and page.paginator.estimated
    assert page.paginator.num_pages == -(-333_000 // page.paginator.per_page)
