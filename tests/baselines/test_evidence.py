"""Series from other evidence (metrics uploads, perftest) and facts from other artifacts
(nvidia-smi, NCCL_DEBUG logs) through the real ingest -> parse -> after-parse path."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest

from artifacts.models import Artifact, BenchmarkRun
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.models import Alert, RunContext, Series
from tests.samples import sample

pytestmark = pytest.mark.django_db
PERFTEST = Path(__file__).resolve().parents[1] / "fixtures" / "perftest"


def upload(capture, content: bytes, name: str, **kwargs) -> Artifact:
    with capture(execute=True):
        outcome = artifact_ingest(stream=io.BytesIO(content), name=name, enqueue=False, **kwargs)
        artifact = artifact_parse(artifact_id=outcome.artifact.pk)
    assert artifact.status == Artifact.Status.PARSED, artifact.error
    return artifact


def metrics_doc(night: int, step_ms: float, host: str = "ib-h100-n001") -> bytes:
    return json.dumps(
        {
            "benchmark": "megatron-gpt3",
            "measured_at": f"2025-03-{night + 1:02d}T02:00:00Z",
            "host": host,
            "profile": "ib-h100-16x8",
            "nranks": 16,
            "stack": {"nccl": "2.21.5", "pytorch": "2.4.0"},
            "metrics": [
                {"metric": "step_time", "unit": "ms", "value": step_ms, "better": "lower"},
                {"metric": "tokens_per_s", "unit": "tokens/s", "value": 1e6 / step_ms,
                 "better": "higher"},
            ],
        }
    ).encode()  # fmt: skip


def test_metrics_uploads_become_series_with_their_direction_and_a_slowdown_alerts(
    eager_tasks, django_capture_on_commit_callbacks
):
    wiggle = [0.2, -0.3, 0.1, 0.0, -0.2, 0.3, -0.1, 0.2, -0.2, 0.1, 0.0, -0.1, 0.2, -0.3]
    nights = [800.0 + w for w in wiggle] + [864.0 + w for w in wiggle[:7]]  # +8 % step time
    for night, step in enumerate(nights):
        upload(django_capture_on_commit_callbacks, metrics_doc(night, step), f"m{night}.json")
    runs = BenchmarkRun.objects.filter(benchmark="megatron-gpt3")
    assert runs.count() == 2 * len(nights)  # one run per metric per upload
    step_series = Series.objects.get(benchmark="megatron-gpt3", metric="step_time")
    assert (step_series.direction, step_series.unit, step_series.point_count) == (
        "lower", "ms", len(nights)
    )  # fmt: skip
    assert step_series.profile.slug == "ib-h100-16x8"
    context = RunContext.objects.filter(run__collective="step_time").first()
    assert (context.stack.nccl, context.stack.pytorch) == ("2.21.5", "2.4.0")
    alerts = Alert.objects.filter(series=step_series, kind=Alert.Kind.REGRESSION)
    assert alerts.exists(), "a +8 % step time (lower is better) is a regression"
    assert alerts.first().magnitude_pct == pytest.approx(8.0, abs=1.0)
    tokens = Series.objects.get(benchmark="megatron-gpt3", metric="tokens_per_s")
    assert Alert.objects.filter(series=tokens, kind=Alert.Kind.REGRESSION).exists()
    assert not Alert.objects.filter(kind=Alert.Kind.IMPROVEMENT).exists()


def test_perftest_curves_become_series_per_size_with_direction_and_print_resolution(
    eager_tasks, django_capture_on_commit_callbacks
):
    bw = (PERFTEST / "ib_write_bw_roce_4qp_report_gbits.txt").read_bytes()
    upload(django_capture_on_commit_callbacks, bw, "bw.txt", host="gpu-node-03")
    run = BenchmarkRun.objects.get(benchmark="perftest")
    assert run.collective == "ib_write_bw_4qp"
    series = {s.size_bytes: s for s in Series.objects.filter(benchmark="perftest")}
    assert series[4096].metric == "bw_avg_gbps" and series[4096].direction == "higher"
    assert series[4096].last_value == pytest.approx(194.87)  # the file's BW average column
    assert series[4096].resolution == pytest.approx(0.01)  # printed with two decimals
    lat = (PERFTEST / "ib_send_lat_ib_all_sizes.txt").read_bytes()
    upload(django_capture_on_commit_callbacks, lat, "lat.txt", host="gpu-node-03")
    latency = Series.objects.filter(benchmark="perftest", metric="t_typical_us")
    assert latency.exists() and {s.direction for s in latency} == {"lower"}


def test_nvidia_smi_of_the_host_and_the_nccl_log_of_the_job_fill_the_stack_either_order(
    eager_tasks, django_capture_on_commit_callbacks
):
    smi = sample("counters/gpud_nvidia-smi_q_560.35.03.txt").read_bytes()
    upload(django_capture_on_commit_callbacks, smi, "smi.txt", host="gdr114")
    doc = json.loads(metrics_doc(0, 800.0, host="gdr114"))
    doc["measured_at"] = "2024-10-18T11:00:00Z"  # the nvidia-smi Timestamp is 10:13 that day
    doc["stack"] = {"pytorch": "2.4.0"}
    upload(
        django_capture_on_commit_callbacks,
        json.dumps(doc).encode(),
        "m.json",
        metadata={"job": "slurm-7781"},
    )
    context = RunContext.objects.get(run__collective="step_time")
    # The driver is a host fact: nvidia-smi of the run's host, an hour before, states it.
    assert (context.stack.driver, context.stack.cuda) == ("560.35.03", "12.6")
    assert "nvidia_smi artifact" in context.stack_sources["driver"]
    assert context.stack.nccl == ""  # nothing has said it yet
    log = sample("nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log").read_bytes()
    # An NCCL_DEBUG log of another process on that host: its NCCL_* environment and NCCL
    # version are job facts, and it is not this job.
    other = upload(
        django_capture_on_commit_callbacks,
        log,
        "nccl.log",
        kind="nccl_debug",  # it holds an all_gather run too; the NCCL INFO lines are the point
        metadata={"captured_at": "2024-10-18T10:30:00Z"},
    )
    context = RunContext.objects.select_related("stack").get(run__collective="step_time")
    assert context.stack.nccl == "" and context.stack.nccl_env == {}
    # The log of the job itself (same job id) arrives afterwards: the run is re-filed.
    other.delete()
    upload(
        django_capture_on_commit_callbacks,
        log,
        "nccl.log",
        kind="nccl_debug",
        metadata={"captured_at": "2024-10-18T10:30:00Z", "job": "slurm-7781"},
    )
    context = RunContext.objects.select_related("stack").get(run__collective="step_time")
    assert context.stack.nccl.startswith("2.26.6")
    assert context.stack.nccl_env.get("NCCL_IB_DISABLE") == "0"
    assert context.stack.driver == "560.35.03" and context.stack.pytorch == "2.4.0"
    why = {(e["key"], e["why"]) for e in context.provenance if e["used"]}
    assert ("nccl", f"same job #{context.run.artifact.job_membership.job_id}") in why
    assert ("driver", "same host gdr114") in why


def test_facts_outside_the_window_or_of_other_hosts_do_not_count(
    eager_tasks, django_capture_on_commit_callbacks
):
    smi = sample("counters/gpud_nvidia-smi_q_560.35.03.txt").read_bytes()
    upload(django_capture_on_commit_callbacks, smi, "smi.txt", host="gdr114")
    doc = json.loads(metrics_doc(0, 800.0, host="gdr114"))  # March 2025: months later
    upload(django_capture_on_commit_callbacks, json.dumps(doc).encode(), "m.json")
    other = json.loads(metrics_doc(0, 800.0, host="elsewhere"))
    other["measured_at"] = "2024-10-18T11:00:00Z"
    upload(django_capture_on_commit_callbacks, json.dumps(other).encode(), "o.json")
    assert set(RunContext.objects.values_list("stack__driver", flat=True)) == {""}


def test_a_trace_gives_step_time_and_idle_series_and_its_nccl_and_gpus_to_the_host(
    eager_tasks, django_capture_on_commit_callbacks
):
    from artifacts.models import TraceSummary

    trace_bytes = sample("torch_profiler/hta_nccl_data_world2_rank0.json.gz").read_bytes()
    artifact = upload(
        django_capture_on_commit_callbacks, trace_bytes, "rank0.json.gz", host="trainer-01"
    )
    trace = TraceSummary.objects.get(artifact=artifact)
    runs = {r.collective: r for r in artifact.runs.all()}
    assert set(runs) == {"step_time", "gpu_idle"}
    step = Series.objects.get(benchmark="torch-trace", metric="step_time_ms")
    assert step.direction == "lower" and step.unit == "ms"
    assert step.last_value == pytest.approx(trace.step_mean_us / 1000)
    idle = Series.objects.get(benchmark="torch-trace", metric="gpu_idle_pct")
    assert idle.last_value == pytest.approx(trace.idle_pct) and idle.direction == "lower"
    assert RunContext.objects.get(run=runs["step_time"]).stack.nccl == "2.17.1"
    # a metrics run on that host an hour later, of another process: the GPU model (a host
    # fact) reaches it, the trace's NCCL version (the traced process's) does not
    doc = json.loads(metrics_doc(0, 800.0, host="trainer-01"))
    doc["measured_at"] = (trace.recorded_at + timedelta(hours=1)).isoformat()
    doc.pop("profile")
    doc["stack"] = {}
    upload(django_capture_on_commit_callbacks, json.dumps(doc).encode(), "m.json")
    context = RunContext.objects.select_related("stack", "profile").get(
        run__benchmark="megatron-gpt3", run__collective="step_time"
    )
    assert context.stack.nccl == ""
    assert context.profile.gpu_model == "A100"
    # the same file in the trace's job (a person puts it there): the version reaches it
    from artifacts.jobs.services import job_member_place
    from baselines.services import artifact_evaluate

    metrics = context.run.artifact
    job_member_place(artifact=metrics, job=artifact.job_membership.job, user=None)
    artifact_evaluate(artifact_id=metrics.pk)
    context.refresh_from_db()
    assert context.stack.nccl == "2.17.1"
    assert "torch_trace artifact" in context.stack_sources["nccl"]


def test_ibstat_of_the_host_fills_nic_firmware_and_an_automatic_profile(
    eager_tasks, django_capture_on_commit_callbacks
):
    ibstat = sample("counters/gpud_ibstat_h100_all_active.txt").read_bytes()
    upload(
        django_capture_on_commit_callbacks,
        ibstat,
        "ibstat.txt",
        host="h100-x1",
        metadata={"captured_at": "2025-03-01T01:00:00Z"},
    )
    doc = json.loads(metrics_doc(0, 800.0, host="h100-x1"))  # 2025-03-01T02:00
    doc["profile"] = "new-h100-pod"
    upload(django_capture_on_commit_callbacks, json.dumps(doc).encode(), "m.json")
    context = RunContext.objects.select_related("stack", "profile").get(run__collective="step_time")
    # ibstat: eight 400G MT4129 ports on Ethernet (RoCE), and a 100G MT4125 management NIC
    assert context.stack.nic_firmware == "28.39.1002"
    profile = context.profile
    assert (profile.nic_model, profile.nic_speed_gbps, profile.fabric) == (
        "MT4129", 400, "roce_v2"
    )  # fmt: skip
    assert profile.nics_per_node == 8


ETHTOOL_PAIR = """NIC statistics:
     rx_vport_rdma_unicast_bytes: 1000000000
     tx_vport_rdma_unicast_bytes: 2000000000
     rx_vport_rdma_unicast_packets: 1000000
     np_ecn_marked_roce_packets: 100
NIC statistics:
     rx_vport_rdma_unicast_bytes: 501000000000
     tx_vport_rdma_unicast_bytes: 252000000000
     rx_vport_rdma_unicast_packets: 101000000
     np_ecn_marked_roce_packets: 2000100
"""


def test_counter_rates_of_a_snapshot_pair_become_host_series(
    eager_tasks, django_capture_on_commit_callbacks
):
    upload(
        django_capture_on_commit_callbacks,
        ETHTOOL_PAIR.encode(),
        "ens1f0np0.txt",
        host="h200-r07n03",
        kind="ethtool_stats",
        metadata={"snapshot_interval_s": 10, "captured_at": "2025-03-01T02:00:00Z"},
    )
    series = {s.metric: s for s in Series.objects.filter(benchmark="fabric:h200-r07n03")}
    # 500 GB in 10 s received = 400 Gb/s; 250 GB sent = 200 Gb/s; 2 % of packets ECN-marked
    assert series["rx_rdma_gbps"].last_value == pytest.approx(400.0)
    assert series["tx_rdma_gbps"].last_value == pytest.approx(200.0)
    assert series["rx_rdma_gbps"].direction == "higher"
    assert series["ecn_marked_share_pct"].last_value == pytest.approx(2.0)
    assert series["ecn_marked_share_pct"].direction == "lower"


def test_api_upload_and_the_ingest_command_take_metrics_files(
    editor_api, tmp_path, eager_tasks, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    file = SimpleUploadedFile("nightly.json", metrics_doc(0, 800.0))
    with django_capture_on_commit_callbacks(execute=True):
        response = editor_api.post("/api/v1/artifacts/", {"file": file}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["kind"] == "metrics"  # detected from content
    artifact = Artifact.objects.get(pk=response.json()["id"])
    assert artifact.status == Artifact.Status.PARSED
    assert set(artifact.runs.values_list("collective", flat=True)) == {"step_time", "tokens_per_s"}
    csv_file = tmp_path / "nightly.csv"
    csv_file.write_text("benchmark,metric,unit,better,value\nllama3-8b,mfu,%,higher,38.5\n")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("ingest", str(csv_file), "--label", "nightly")
    run = BenchmarkRun.objects.get(benchmark="llama3-8b")
    assert run.artifact.kind == "metrics" and run.collective == "mfu"
    assert Series.objects.get(benchmark="llama3-8b").last_value == pytest.approx(38.5)


def test_series_of_other_evidence_filter_by_benchmark_in_the_api_and_the_list_page(
    editor_api, client, editor, eager_tasks, django_capture_on_commit_callbacks
):
    bw = (PERFTEST / "ib_write_bw_roce_4qp_report_gbits.txt").read_bytes()
    upload(django_capture_on_commit_callbacks, bw, "bw.txt", host="gpu-node-03")
    upload(django_capture_on_commit_callbacks, metrics_doc(0, 800.0), "m.json")
    body = editor_api.get("/api/v1/series/", {"benchmark": "megatron-gpt3"}).json()
    rows = body["results"] if isinstance(body, dict) else body
    assert {r["metric"] for r in rows} == {"step_time", "tokens_per_s"}
    client.force_login(editor)
    page = client.get("/baselines/series/", {"benchmark": "perftest"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "perftest · ib_write_bw_4qp" in text and "megatron-gpt3" not in text.split("<table")[1]


def test_evidence_runs_have_run_pages_comparisons_and_can_be_promoted(
    editor_api, client, editor, eager_tasks, django_capture_on_commit_callbacks
):
    for night, step in enumerate([800.0, 801.0, 799.5, 860.0]):
        upload(django_capture_on_commit_callbacks, metrics_doc(night, step), f"m{night}.json")
    last = BenchmarkRun.objects.filter(collective="step_time").order_by("-measured_at").first()
    client.force_login(editor)
    assert client.get(last.get_absolute_url()).status_code == 200
    body = editor_api.get(f"/api/v1/runs/{last.pk}/comparison/").json()
    sizes = body["sizes"]
    assert len(sizes) == 1 and sizes[0]["delta_pct"] == pytest.approx(7.5, abs=0.1)
    assert sizes[0]["change"] == "regressed"  # step time: higher is worse
    first = BenchmarkRun.objects.filter(collective="step_time").order_by("measured_at").first()
    response = editor_api.post(
        "/api/v1/baselines/", {"name": "gpt3 step", "runs": [first.pk]}, format="json"
    )
    assert response.status_code == 201, response.content
