"""Report kind "runs" on real files: values checked by reading the sample logs."""

from __future__ import annotations

import pytest

from artifacts.models import BenchmarkRun, Measurement
from artifacts.runs.demo import demo_files
from reports.kinds import ReportInputError
from reports.models import Report, ReportImmutable
from reports.services import report_create, report_rebuild
from reports.tables import records
from tests.reports.conftest import ingest_bytes

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024
GiB = 1024 * MiB


def rows_of(report, table, **match):
    return [r for r in records(report.table(table)) if all(r[k] == v for k, v in match.items())]


def test_g1_against_g8_compares_each_collective_size_by_size(pair_report):
    report = pair_report
    assert report.status == Report.Status.READY and report.version == 1
    # Values read off the logs' out-of-place busbw column.
    alltoall = rows_of(report, "deltas", collective="alltoall")
    first, last = alltoall[0], alltoall[-1]
    assert (first["size"], first["reference_busbw_gbps"], first["candidate_busbw_gbps"]) == (
        "32 MiB",
        13.08,
        22.76,
    )
    assert first["delta_pct"] == 74.01  # 22.76 / 13.08 - 1
    # one run a side: no noise measured, so baselines.curve_compare's band is the tolerance
    assert (first["low_pct"], first["high_pct"], first["band"]) == (72.01, 76.01, "tolerance")
    assert first["change"] == "improved" and (first["n_reference"], first["n_candidate"]) == (1, 1)
    assert (last["size_bytes"], last["reference_busbw_gbps"], last["candidate_busbw_gbps"]) == (
        16 * GiB,
        13.51,
        23.62,
    )
    assert last["delta_pct"] == 74.83
    sendrecv = rows_of(report, "deltas", collective="sendrecv", size_bytes=32 * MiB)[0]
    assert (sendrecv["reference_busbw_gbps"], sendrecv["candidate_busbw_gbps"]) == (13.35, 14.98)
    assert sendrecv["delta_pct"] == 12.21
    # The sides are named by what tells the files apart: their rank counts and labels.
    assert len(alltoall) == 10 and {r["reference"] for r in alltoall} == {"2 ranks · g1"}
    verdicts = records(report.table("verdicts"))
    assert [(v["collective"], v["verdict"]) for v in verdicts] == [
        ("alltoall", "improved"),
        ("sendrecv", "improved"),
    ]
    alltoall_line, sendrecv_line = report.summary
    # a range says its mean and, where it prints differently, its largest size's change
    assert alltoall_line == (
        "alltoall: 16 ranks · g8 vs 2 ranks · g1: improved: 32 MiB\u201316 GiB +75% mean, "
        "+76% at 64 MiB"
    )
    assert sendrecv_line.startswith(
        "sendrecv: 16 ranks · g8 vs 2 ranks · g1: improved: 32 MiB\u201316 GiB +12%"
    )
    assert "no repeated runs" in verdicts[0]["method"]
    curves = rows_of(report, "curves", collective="alltoall", size_bytes=32 * MiB)
    assert sorted(
        (c["nranks"], c["busbw_gbps"], c["algbw_gbps"], c["time_us"]) for c in curves
    ) == [
        (2, 13.08, 26.15, 1282.93),
        (16, 22.76, 24.27, 1382.27),
    ]


def test_the_report_pins_artifacts_by_hash_and_runs_by_position(pair, pair_report):
    pins = pair_report.inputs
    assert [a["sha256"] for a in pins["artifacts"]] == [a.sha256 for a in pair]
    assert sorted((r["artifact_id"], r["index"]) for r in pins["runs"]) == [
        (pair[0].pk, 0),
        (pair[0].pk, 1),
        (pair[1].pk, 0),
        (pair[1].pk, 1),
    ]
    assert set(pair_report.artifacts.values_list("pk", flat=True)) == {a.pk for a in pair}
    # each file's pin names its side as the report does, and the runs it gave
    assert [(a["side"], len(a["run_ids"])) for a in pins["artifacts"]] == [
        ("2 ranks · g1", 2),
        ("16 ranks · g8", 2),
    ]


def test_the_report_page_names_sides_by_what_differs_and_links_their_runs(
    pair_report, client, viewer
):
    client.force_login(viewer)
    html = client.get(f"/reports/{pair_report.pk}/").content.decode()
    assert "2 ranks · g1" in html and "16 ranks · g8" in html
    for run_id in pair_report.inputs["artifacts"][0]["run_ids"]:
        assert f'href="/runs/{run_id}/"' in html


def test_a_reparse_or_an_edited_measurement_does_not_change_a_saved_report(pair, pair_report):
    from artifacts.parsing import artifact_parse

    tables_before = pair_report.tables
    old_run_ids = set(BenchmarkRun.objects.values_list("pk", flat=True))
    artifact_parse(artifact_id=pair[1].pk)  # re-parse: the runs are deleted and re-created
    assert set(BenchmarkRun.objects.values_list("pk", flat=True)) != old_run_ids
    Measurement.objects.filter(run__artifact=pair[1], size_bytes=32 * MiB).update(
        oop_busbw_gbps=1.0
    )
    saved = Report.objects.get(pk=pair_report.pk)
    assert saved.tables == tables_before

    saved.title = "renamed"
    with pytest.raises(ReportImmutable, match="immutable"):
        saved.save()

    v2 = report_rebuild(report=saved, created_by=None)
    assert (v2.version, v2.lineage, v2.status) == (2, pair_report.lineage, "ready")
    # the rebuild found the re-created runs by (artifact, index) and reads today's numbers
    changed = rows_of(v2, "deltas", collective="alltoall", size_bytes=32 * MiB)[0]
    assert changed["candidate_busbw_gbps"] == 1.0
    assert (
        rows_of(Report.objects.get(pk=pair_report.pk), "deltas", size_bytes=32 * MiB)[0][
            "candidate_busbw_gbps"
        ]
        == 22.76
    )
    v3 = report_rebuild(report=pair_report, created_by=None)
    assert v3.version == 3


def test_bad_requests_say_what_is_wrong_and_save_nothing(pair, editor):
    def create(**kwargs):
        return report_create(kind="runs", title="x", created_by=editor, **kwargs)

    with pytest.raises(ReportInputError, match="no such run: 999"):
        create(run_ids=[999])
    with pytest.raises(ReportInputError, match="no such artifact: 998"):
        create(artifact_ids=[998])
    with pytest.raises(ReportInputError, match="nothing to compare"):
        create(artifact_ids=[pair[0].pk])  # one file: every collective on one side
    with pytest.raises(ReportInputError, match="unknown group_by"):
        create(artifact_ids=[a.pk for a in pair], group_by="moon")
    with pytest.raises(ReportInputError, match="needs a title"):
        report_create(kind="runs", title="  ", artifact_ids=[pair[0].pk])
    with pytest.raises(ReportInputError, match="not a parsed trace"):
        report_create(kind="traces", title="t", artifact_ids=[pair[0].pk])
    with pytest.raises(ReportInputError, match="unknown report kind 'nope'"):
        report_create(kind="nope", title="t")
    assert not Report.objects.exists()


def test_grouping_by_run_compares_runs_of_one_file_with_runs_of_another(pair, editor):
    runs = BenchmarkRun.objects.filter(collective="sendrecv").order_by("pk")
    report = report_create(
        kind="runs", title="by run", run_ids=[r.pk for r in runs], group_by="run", created_by=editor
    )
    assert [(v["reference"], v["candidate"]) for v in records(report.table("verdicts"))] == [
        (f"run #{runs[0].pk}", f"run #{runs[1].pk}")
    ]


def _demo_h200_nightlies() -> list:
    files = [
        f
        for f in demo_files(days=6)
        if "h200-roce-2x8_all_reduce" in f.name and f.label == "nightly"
    ]
    return [ingest_bytes(f.name, f.content, label=f.label, metadata=f.metadata) for f in files]


def test_demo_nccl_upgrade_shows_the_large_message_all_reduce_loss(editor):
    artifacts = _demo_h200_nightlies()
    assert len(artifacts) == 6
    report = report_create(
        kind="runs",
        title="h200 NCCL 2.21.5 -> 2.23.4",
        artifact_ids=[a.pk for a in artifacts],
        group_by="nccl_version",
        created_by=editor,
    )
    deltas = {r["size_bytes"]: r for r in records(report.table("deltas"))}
    assert {r["reference"] for r in deltas.values()} == {"2.21.5"}
    assert {r["candidate"] for r in deltas.values()} == {"2.23.4"}
    # the generator takes ~8 % from 256 MB up, nothing below 16 MB (noise is ±1 %); tiny
    # sizes print busbw 0.00, where a ratio means nothing: those are not compared
    assert 8 not in deltas and 64 * 1024 in deltas
    for size in (256 * MiB, 1 * GiB, 8 * GiB):
        assert -10.0 < deltas[size]["delta_pct"] < -6.0
    for size in (64 * 1024, 1 * MiB, 4 * MiB):
        assert abs(deltas[size]["delta_pct"]) < 2.5
    medians = rows_of(report, "curves", size_bytes=8 * GiB)
    assert len(medians) == 6  # every nightly is drawn


def test_runs_of_different_data_types_are_flagged_not_compared_silently(parsed, editor):
    import re

    from tests.reports.conftest import G1
    from tests.samples import sample

    reference = parsed(G1, label="double")
    # the same run as float: 4-byte elements, so twice the count for each size
    text = sample(G1).read_text()
    as_float = re.sub(
        r"^(\s+)(\d+)(\s+)(\d+)(\s+)double\b",
        lambda m: f"{m[1]}{m[2]}{m[3]}{int(m[2]) // 4}{m[5]} float",
        text,
        flags=re.MULTILINE,
    )
    candidate = ingest_bytes("float.log", as_float.encode(), label="float")
    assert {r.dtype for r in BenchmarkRun.objects.all()} == {"double", "float"}
    report = report_create(
        kind="runs", title="types", artifact_ids=[reference.pk, candidate.pk], created_by=editor
    )
    verdicts = records(report.table("verdicts"))
    assert len(verdicts) >= 1
    assert {v["mismatch"] for v in verdicts} == {"data type differs: float vs double"}
    assert all(line.endswith("(data type differs: float vs double)") for line in report.summary)


def test_runs_of_one_data_type_carry_no_mismatch(pair_report):
    assert {v["mismatch"] for v in records(pair_report.table("verdicts"))} == {""}
