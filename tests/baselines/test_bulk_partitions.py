"""The fleet history's rows carry their run's time and, on PostgreSQL, go straight to their
month's partition: the loader makes the months it spans before the first COPY (issue 27)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import F

from artifacts.models import Measurement
from artifacts.runs import partitions
from baselines.bulk_history import load_fleet
from baselines.demo_history import START

pytestmark = pytest.mark.django_db


def test_fleet_rows_carry_their_runs_time_and_land_in_their_months():
    load_fleet(measurements=7000, profiles=1, log=lambda message: None)  # 8 Jan - 2 Feb
    rows = Measurement.objects.all()
    assert rows.count() >= 7000
    assert not rows.exclude(measured_at=F("run__measured_at")).exists()
    if connection.vendor != "postgresql":
        assert partitions.partitions() == []
        return
    last = rows.order_by("-measured_at").values_list("measured_at", flat=True)[0]
    spanned = {partitions.name_of(month) for month in partitions.months(START, last)}
    assert spanned <= set(partitions.partitions())
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT tableoid::regclass::text, count(*) FROM {partitions.TABLE} GROUP BY 1"
        )
        held = dict(cursor.fetchall())
    assert partitions.DEFAULT not in held  # nothing waits in the default partition
    assert set(held) <= spanned
    assert len(held) >= 2  # January and February
    assert sum(held.values()) == rows.count()


@pytest.mark.django_db(transaction=True)
def test_the_bulk_load_makes_the_partitioned_indexes_again_valid_on_every_partition():
    from baselines.bulk_history import _without_secondary_structures

    def indexes() -> set[tuple[str, bool, int]]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT i.relname, x.indisvalid, (SELECT count(*) FROM pg_inherits h "
                "WHERE h.inhparent = i.oid) FROM pg_index x JOIN pg_class i "
                "ON i.oid = x.indexrelid WHERE x.indrelid = %s::regclass",
                [partitions.TABLE],
            )
            return set(cursor.fetchall())

    if connection.vendor != "postgresql":
        with _without_secondary_structures((Measurement,), lambda message: None):
            pass  # nothing dropped on SQLite: the table keeps its index
        assert Measurement._meta.indexes
        return
    before = indexes()
    with _without_secondary_structures((Measurement,), lambda message: None):
        assert {name for name, *_ in indexes()} == {f"{partitions.TABLE}_pkey"}
    after = indexes()
    assert after == before
    assert all(valid and children == len(partitions.partitions()) for _, valid, children in after)
