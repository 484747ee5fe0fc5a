"""The hardware-profile page: best large-message efficiency per collective; limits edited
on the profile form and the API are checked."""

from __future__ import annotations

import pytest

from baselines.limits.reads import profile_best_efficiency
from baselines.models import HardwareProfile
from tests.baselines.limits.test_golden_efficiency import load

pytestmark = pytest.mark.django_db


def test_profile_page_shows_the_best_efficiency_per_collective(viewer_client):  # type: ignore[no-untyped-def]
    profile = HardwareProfile.objects.create(slug="h100-box", gpu_model="H100", gpus_per_node=8)
    load("nccl_tests/xxrjun_singlenode_G8_h100.log", metadata={"profile": "h100-box"})
    best = {b.collective: b for b in profile_best_efficiency(profile)}
    # best sizes from 64 MiB, against 18 x 25 = 450 GB/s: all_gather 361.86 (16 GiB) = 80.4 %,
    # all_reduce 482.27 / 450 = 107.2 % (NVLS reduces in the switch)
    assert (best["all_gather"].busbw_gbps, best["all_gather"].pct_of_peak) == (361.86, 80.4)
    assert best["all_reduce"].pct_of_peak == 107.2 and best["all_reduce"].bottleneck == "nvlink"
    page = viewer_client.get(profile.get_absolute_url()).content.decode()
    assert "Against the hardware" in page and "80.4 %" in page and "H100 datasheet" in page


def test_limits_are_validated_on_the_form_and_the_api(editor_client, editor_api):  # type: ignore[no-untyped-def]
    profile = HardwareProfile.objects.create(slug="p1", gpu_model="H100")
    response = editor_client.post(
        f"/baselines/profiles/{profile.slug}/edit/",
        {"slug": "p1", "fabric": "other", "limits": '{"nvlink_gbps": 1}'},
    )
    assert "unknown limit" in response.content.decode()
    response = editor_api.patch(
        f"/api/v1/profiles/{profile.pk}/", {"limits": {"nics_per_node": 8}}, format="json"
    )
    assert response.status_code == 200, response.content
    profile.refresh_from_db()
    assert profile.limits == {"nics_per_node": 8}
    response = editor_api.patch(
        f"/api/v1/profiles/{profile.pk}/", {"limits": {"nics_per_node": -1}}, format="json"
    )
    assert response.status_code == 400


def test_comparison_page_puts_run_and_reference_against_their_peaks(viewer_client):  # type: ignore[no-untyped-def]
    from baselines.services import artifact_evaluate
    from tests.reports.conftest import ingest_bytes
    from tests.samples import sample

    content = sample("nccl_tests/xxrjun_singlenode_G8_h100.log").read_bytes()
    runs = []
    for data in (content, content + b"\n"):
        artifact = ingest_bytes("single.log", data)
        artifact_evaluate(artifact_id=artifact.pk, notify=False)
        runs.append(artifact.runs.get(collective="all_gather"))
    page = viewer_client.get(f"/baselines/runs/{runs[1].pk}/comparison/").content.decode()
    assert "Against the hardware" in page and "this run" in page and "reference" in page
    assert page.count("80.4 %") == 2  # both: 361.86 / 450


def test_version_matrix_can_show_efficiency_cells(viewer_client):  # type: ignore[no-untyped-def]
    HardwareProfile.objects.create(slug="h100-box", gpu_model="H100", gpus_per_node=8)
    load("nccl_tests/xxrjun_singlenode_G8_h100.log", metadata={"profile": "h100-box"})
    url = "/baselines/matrix/"
    params = {"profile": "h100-box", "component": "nccl"}
    delta = viewer_client.get(url, params).content.decode()
    assert "ref" in delta and "80.4%" not in delta
    page = viewer_client.get(url, {**params, "value": "efficiency"}).content.decode()
    # all_gather, >= 256 MiB bucket: best mean 361.86 (16 GiB) / 450 = 80.4 %
    assert "80.4%" in page and "% of this profile" in page
