"""A multi-node run whose network nothing states: reference designs as assumed candidates,
adopting one for the profile, and the network read from an NCCL INFO log of the same hosts.

The run is the 10-node x 8 H100 sample filed on the profile the pipeline creates from its
GPU name (no NICs): 320.54 GB/s all_reduce busbw at 16 GiB.
"""

from __future__ import annotations

import io

import pytest

from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.limits.reads import RunEfficiency, Unavailable, run_efficiency
from baselines.models import RunContext
from hardware.reference import DESIGNS, designs_for
from tests.baselines.limits.test_golden_efficiency import load

pytestmark = pytest.mark.django_db
MULTI = "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log"


def alone_run():  # type: ignore[no-untyped-def]
    run = load(MULTI).runs.get(collective="all_reduce")
    profile = RunContext.objects.get(run=run).profile
    assert profile.nics_per_node is None and profile.nic_speed_gbps is None
    return run, profile


def test_every_design_has_a_source_and_a_known_gpu() -> None:
    from hardware import datasheet as ds

    for design in DESIGNS:
        assert design.source and design.nics_per_node > 0 and design.nic_gbit > 0
        assert all(model in ds.GPUS for model in design.gpu_models), design.key
    # the cloud H100s the issue names, with their published totals
    by_key = {d.key: d for d in designs_for("H100")}
    assert by_key["aws-p5"].network_gbit == 3200
    assert by_key["azure-nd-h100-v5"].network_gbit == 3200
    assert by_key["gcp-a3-mega"].network_gbit == 1600
    assert {d.network_gbit for d in designs_for("A100") if d.key == "dgx-a100"} == {1600}


def test_a_multi_node_run_alone_gets_assumed_candidates() -> None:
    run, _profile = alone_run()
    result = run_efficiency(run)
    assert isinstance(result, Unavailable)
    by_key = {c.assumed.key: c for c in result.candidates}
    assert {"dgx-h100", "aws-p5", "azure-nd-h100-v5", "gcp-a3-mega"} <= set(by_key)
    dgx = by_key["dgx-h100"]
    # 8 x 400 Gb/s / 8 = 400 GB/s per node; the plateau 344.87 GB/s at 1 GiB: 86.2 %
    assert (dgx.peak.peak_busbw_gbps, dgx.peak.bottleneck) == (400.0, "network")
    assert dgx.large.pct_of_peak == 86.2 and dgx.sizes[-1].pct_of_peak == 80.1
    assert dgx.limits.values["nics_per_node"].source.startswith("assumed: NVIDIA DGX H100")
    # GCP A3 Mega: 8 x 200 Gb/s = 200 GB/s: above 100 %, so not that design
    assert by_key["gcp-a3-mega"].peak.peak_busbw_gbps == 200.0
    assert by_key["gcp-a3-mega"].large.pct_of_peak == 172.4


def test_the_api_answers_assumed_candidates_then_stated_after_adopting(  # type: ignore[no-untyped-def]
    editor_api,
):
    run, profile = alone_run()
    url = f"/api/v1/runs/{run.pk}/efficiency/"
    body = editor_api.get(url).json()
    assert body["assumed"] is True and body["peak_busbw_gbps"] is None
    assert "hardware limits unknown" in body["detail"]
    candidate = next(c for c in body["candidates"] if c["design"]["key"] == "azure-nd-h100-v5")
    assert candidate["assumed"] is True
    assert candidate["large_message"]["pct_of_peak"] == 86.2
    assert "Azure ND H100 v5" in candidate["design"]["source"]

    response = editor_api.post(
        f"/api/v1/profiles/{profile.pk}/network/", {"design": "dgx-h100"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert (response.json()["nics_per_node"], response.json()["nic_speed_gbps"]) == (8, 400)

    stated = editor_api.get(url).json()
    assert stated["assumed"] is False
    assert (stated["peak_busbw_gbps"], stated["large_message"]["pct_of_peak"]) == (400.0, 86.2)
    assert stated["model"]["nics_per_node"]["source"] == f"hardware profile {profile.slug}"


def test_viewers_cannot_adopt(viewer_api) -> None:  # type: ignore[no-untyped-def]
    _run, profile = alone_run()
    response = viewer_api.post(
        f"/api/v1/profiles/{profile.pk}/network/", {"design": "dgx-h100"}, format="json"
    )
    assert response.status_code == 403
    profile.refresh_from_db()
    assert profile.nics_per_node is None


def test_a_bad_design_or_rate_is_refused(editor_api) -> None:  # type: ignore[no-untyped-def]
    _run, profile = alone_run()
    url = f"/api/v1/profiles/{profile.pk}/network/"
    assert editor_api.post(url, {"design": "nope"}, format="json").status_code == 400
    assert editor_api.post(url, {"nics_per_node": 8}, format="json").status_code == 400


def test_the_panel_offers_candidates_and_one_click_adopts(editor_client) -> None:  # type: ignore[no-untyped-def]
    run, profile = alone_run()
    page = editor_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="assumed-candidates"' in page and "assumed" in page
    assert "AWS p5.48xlarge" in page and "86.2 %" in page
    assert f"Adopt for {profile.slug}" in page and 'id="state-network"' in page

    response = editor_client.post(
        f"/baselines/profiles/{profile.slug}/network/",
        {"design": "aws-p5", "next": f"/runs/{run.pk}/"},
    )
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    page = editor_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="assumed-candidates"' not in page
    # 32 x 100 Gb/s / 8 = 400 GB/s, stated by the profile now
    assert "Peak bus bandwidth <strong>400" in page and "80.1 %" in page


def test_the_small_form_states_nics_and_rate(editor_client) -> None:  # type: ignore[no-untyped-def]
    run, profile = alone_run()
    editor_client.post(
        f"/baselines/profiles/{profile.slug}/network/",
        {"nics_per_node": "4", "nic_speed_gbps": "400", "next": f"/runs/{run.pk}/"},
    )
    result = run_efficiency(run)
    assert isinstance(result, RunEfficiency) and result.peak.peak_busbw_gbps == 200.0


def test_viewers_see_candidates_without_buttons(viewer_client) -> None:  # type: ignore[no-untyped-def]
    run, _profile = alone_run()
    page = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="assumed-candidates"' in page and "Adopt for" not in page


# --- the network from an NCCL INFO log of the same hosts ---------------------------------


def nccl_info_log(host: str, devices: int, speed_mbps: int | None) -> bytes:
    lines = [f"{host}:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"]
    using = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(devices))
    lines.append(f"{host}:1234:1234 [0] NCCL INFO NET/IB : Using {using} ; OOB ib0:10.0.0.1<0>")
    if speed_mbps:
        lines += [
            f"{host}:1234:1234 [0] NCCL INFO NET/IB: [{i}] mlx5_{i}:uverbs{i}:1/IB "
            f"provider=Mlx5 speed={speed_mbps} context=0x1 pciPath=/sys/x ar=0"
            for i in range(devices)
        ]
    lines.append(f"{host}:1234:1234 [0] NCCL INFO Using network IB")
    return ("\n".join(lines) + "\n").encode()


def upload_log(body: bytes, at: str) -> None:
    outcome = artifact_ingest(
        stream=io.BytesIO(body), name="nccl-info.log", metadata={"captured_at": at},
        enqueue=False,
    )  # fmt: skip
    artifact = artifact_parse(artifact_id=outcome.artifact.pk)
    assert artifact.kind == "nccl_debug", artifact.kind


def test_nccl_log_devices_and_speed_give_a_stated_peak() -> None:
    run, _profile = alone_run()
    at = run.measured_at.isoformat()
    for host in set(run.ranks.values_list("host", flat=True)):
        upload_log(nccl_info_log(host, 8, 400000), at)
    result = run_efficiency(run)
    assert isinstance(result, RunEfficiency), getattr(result, "reason", "")
    assert result.peak.peak_busbw_gbps == 400.0 and result.assumed is None
    assert "NCCL INFO" in result.limits.values["nics_per_node"].source


def test_nccl_log_devices_without_speed_narrow_the_candidates() -> None:
    run, _profile = alone_run()
    at = run.measured_at.isoformat()
    for host in set(run.ranks.values_list("host", flat=True)):
        upload_log(nccl_info_log(host, 4, None), at)
    result = run_efficiency(run)
    assert isinstance(result, Unavailable) and result.candidates
    dgx = next(c for c in result.candidates if c.assumed.key == "dgx-h100")
    # four NICs from the log at the design's 400 Gb/s: 4 x 400 / 8 = 200 GB/s
    assert dgx.peak.peak_busbw_gbps == 200.0
    assert "NCCL INFO" in dgx.limits.values["nics_per_node"].source


def test_adopting_recomputes_the_below_peak_findings(  # type: ignore[no-untyped-def]
    editor_api, eager_tasks, django_capture_on_commit_callbacks
):
    from artifacts.models import Finding

    run, profile = alone_run()
    sendrecv = run.artifact.runs.get(collective="sendrecv")
    assert not Finding.objects.filter(rule="run_below_peak").exists()  # nothing to be below
    with django_capture_on_commit_callbacks(execute=True):
        editor_api.post(
            f"/api/v1/profiles/{profile.pk}/network/", {"design": "dgx-h100"}, format="json"
        )
    # sendrecv against 8 x 400 Gb/s: 400 / 8 = 50 GB/s per rank pair; best large size 30.5 %
    finding = Finding.objects.get(rule="run_below_peak", device=f"run {sendrecv.index}")
    assert "30.5% of its 50 GB/s peak" in finding.title


def test_the_ofi_plugins_nic_count_narrows_the_candidates() -> None:
    """EFA: "Selected Provider is efa (found 32 nics)" gives the count; p5's 100 Gb/s the rate."""
    run, _profile = alone_run()
    at = run.measured_at.isoformat()
    for host in set(run.ranks.values_list("host", flat=True)):
        body = (
            f"{host}:1:1 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.9.1-aws\n"
            f"{host}:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa (found 32 nics)\n"
            f"{host}:1:1 [0] NCCL INFO Using network AWS Libfabric\n"
        )
        upload_log(body.encode(), at)
    result = run_efficiency(run)
    assert isinstance(result, Unavailable)
    p5 = next(c for c in result.candidates if c.assumed.key == "aws-p5")
    assert p5.limits.values["nics_per_node"].value == 32
    assert p5.peak.peak_busbw_gbps == 400.0  # 32 x 100 Gb/s / 8
