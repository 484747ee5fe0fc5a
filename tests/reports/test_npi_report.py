"""Report kind "npi": two profiles side by side, absolute and as % of each one's own limit."""

from __future__ import annotations

import pytest

from baselines.models import HardwareProfile
from baselines.services import artifact_evaluate
from reports.kinds import ReportInputError
from reports.services import report_create
from reports.tables import formatted_rows, records
from tests.reports.conftest import ingest_bytes
from tests.samples import sample

pytestmark = pytest.mark.django_db


def test_npi_report_judges_each_profile_against_its_own_limit(editor):  # type: ignore[no-untyped-def]
    a = HardwareProfile.objects.create(slug="h100-a", gpu_model="H100", gpus_per_node=8)
    # The same measurements on a profile whose NVLink is capped at 400 GB/s (limits override).
    b = HardwareProfile.objects.create(
        slug="h100-b", gpu_model="H100", gpus_per_node=8, limits={"nvlink_busbw_gbps": 400}
    )
    content = sample("nccl_tests/xxrjun_singlenode_G8_h100.log").read_bytes()
    for profile, data in ((a, content), (b, content + b"\n")):  # + newline: another file
        artifact = ingest_bytes("single.log", data, metadata={"profile": profile.slug})
        artifact_evaluate(artifact_id=artifact.pk, notify=False)
    report = report_create(
        kind="npi", title="H100 capped vs H100", profile_ids=[a.pk, b.pk], created_by=editor
    )
    assert report.status == "ready", report.error
    rows = {r["collective"]: r for r in records(report.table("efficiency"))}
    gather = rows["all_gather"]
    # all_gather's best size from 64 MiB is its largest: 361.86 GB/s on both.
    # A: 361.86 / 450 = 80.4 %; B: 361.86 / 400 = 90.5 %; B - A = +10.1 points.
    assert (gather["busbw_a"], gather["peak_a"], gather["pct_a"]) == (361.86, 450.0, 80.4)
    assert (gather["busbw_b"], gather["peak_b"], gather["pct_b"]) == (361.86, 400.0, 90.5)
    assert gather["speedup"] == 1.0 and gather["efficiency_pp"] == 10.1
    assert gather["bottleneck_a"] == gather["bottleneck_b"] == "nvlink"
    assert any("all_gather" in line and "80 % of its limit" in line for line in report.summary)


def test_npi_report_needs_two_profiles(editor):  # type: ignore[no-untyped-def]
    a = HardwareProfile.objects.create(slug="only", gpu_model="H100")
    with pytest.raises(ReportInputError):
        report_create(kind="npi", title="x", profile_ids=[a.pk], created_by=editor)


def test_the_builder_offers_the_npi_form(editor_client):  # type: ignore[no-untyped-def]
    HardwareProfile.objects.create(slug="p1", gpu_model="H100")
    page = editor_client.get("/reports/new/", {"kind": "npi"}).content.decode()
    assert "NPI evaluation: efficiency against each profile" in page
    assert 'name="kind" value="npi"' in page


def test_runs_report_has_an_efficiency_table(editor):  # type: ignore[no-untyped-def]
    content = sample("nccl_tests/xxrjun_singlenode_G8_h100.log").read_bytes()
    ids = []
    for data in (content, content + b"\n"):
        artifact = ingest_bytes("single.log", data)
        artifact_evaluate(artifact_id=artifact.pk, notify=False)
        ids.append(artifact.pk)
    report = report_create(kind="runs", title="two", artifact_ids=ids, created_by=editor)
    assert report.status == "ready", report.error
    rows = [r for r in records(report.table("efficiency")) if r["collective"] == "all_gather"]
    # both files: all_gather 361.86 GB/s at 16 GiB against 450 GB/s NVLink = 80.4 %
    assert [(r["busbw_gbps"], r["peak_busbw_gbps"], r["pct_of_peak"]) for r in rows] == [
        (361.86, 450.0, 80.4),
        (361.86, 450.0, 80.4),
    ]
    assert {r["bottleneck"] for r in rows} == {"nvlink"}
    # printed as a share, without a sign
    table = report.table("efficiency")
    column = next(i for i, c in enumerate(table["columns"]) if c["key"] == "pct_of_peak")
    assert {line[column] for line in formatted_rows(table)} >= {"80.4"}
