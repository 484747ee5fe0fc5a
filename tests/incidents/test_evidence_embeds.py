"""Post-mortem embeds of a finding and of a trace breakdown: pinned on save, drawn
interactively on the page and statically in exports, unchanged when the evidence changes."""

from __future__ import annotations

import pytest

from artifacts.models import Finding, TraceSummary
from documents.embeds import EMBED_KINDS
from incidents.models import Embed
from incidents.postmortems import postmortem_save, render_postmortem
from incidents.services import IncidentError
from tests.artifacts.fabric.conftest import evaluated, upload

pytestmark = pytest.mark.django_db

IBSTAT_DOWN = "counters/gpud_ibstat_h100_some_ports_down.txt"
TRACE = "torch_profiler/hta_nccl_data_world2_rank0.json.gz"


def test_finding_and_trace_embeds_are_registered():
    assert {"chart", "artifact", "finding", "trace"} <= set(EMBED_KINDS)


def test_a_finding_embed_is_pinned_and_survives_the_finding(incident, editor):
    artifact = evaluated(upload(IBSTAT_DOWN, host="h100-b"))
    finding = Finding.objects.filter(artifact=artifact, rule="port_down").order_by("device")[0]
    saved = postmortem_save(
        incident=incident, body=f"Cause:\n\n{{{{finding id={finding.pk}}}}}\n",
        base_revision=0, by=editor,
    )  # fmt: skip
    embed = Embed.objects.get(kind="finding")
    assert f"{{{{finding id={finding.pk} pin={embed.pk}}}}}" in saved.body
    assert embed.pinned["artifact_sha256"] == artifact.sha256
    assert embed.snapshot["title"] == "Port mlx5_2/1 is DOWN"
    page = str(render_postmortem(saved.body, incident, interactive=True))
    assert f'href="/fabric/findings/{finding.pk}/"' in page and "Port mlx5_2/1 is DOWN" in page
    Finding.objects.all().delete()  # the port came back: the post-mortem still says what it did
    static = str(render_postmortem(saved.body, incident, interactive=False))
    assert "Port mlx5_2/1 is DOWN" in static and "critical" in static
    assert "<a " not in static and "<script" not in static


def test_a_trace_embed_draws_the_breakdown_interactively_and_as_svg(incident, editor):
    artifact = upload(TRACE)
    trace = TraceSummary.objects.get(pk=artifact.pk)
    saved = postmortem_save(
        incident=incident, body=f"{{{{trace id={artifact.pk}}}}}", base_revision=0, by=editor
    )
    embed = Embed.objects.get(kind="trace")
    assert embed.pinned == {
        "artifact_id": artifact.pk, "artifact_sha256": artifact.sha256,
        "parser_version": artifact.parser_version, "window": "trace",
    }  # fmt: skip
    assert embed.snapshot["span_us"] == trace.span_us
    assert embed.snapshot["compute_us"] == trace.compute_us
    page = str(render_postmortem(saved.body, incident, interactive=True))
    assert 'class="chart"' in page and 'type="application/json"' in page and "trace page" in page
    TraceSummary.objects.all().delete()
    static = str(render_postmortem(saved.body, incident, interactive=False))
    assert "<svg" in static and "<script" not in static
    share = 100 * trace.compute_us / trace.span_us
    assert f"compute {share:.1f}%" in static


def test_bad_finding_and_trace_embeds_refuse_the_save(incident, editor):
    with pytest.raises(IncidentError, match="no finding #999"):
        postmortem_save(incident=incident, body="{{finding id=999}}", base_revision=0, by=editor)
    artifact = upload(TRACE)
    with pytest.raises(IncidentError, match="unknown window"):
        postmortem_save(
            incident=incident, body=f"{{{{trace id={artifact.pk} window=x}}}}",
            base_revision=0, by=editor,
        )  # fmt: skip
