"""Post-mortems: revisions, conflicts (service and page, two sessions), embeds, restore."""

import pytest
from django.test import Client

from incidents.models import Embed, PostMortem, PostMortemDraft
from incidents.postmortems import (
    TEMPLATE,
    PostMortemConflict,
    postmortem_restore,
    postmortem_save,
    postmortem_state,
    render_postmortem,
    revision_diff,
)
from incidents.services import IncidentError

pytestmark = pytest.mark.django_db


def test_a_new_post_mortem_starts_from_the_template_at_revision_zero(incident):
    state = postmortem_state(incident)
    assert (state.revision, state.status, state.postmortem) == (0, "draft", None)
    for section in ("## Root cause", "## Trigger", "## Where we got lucky", "## Action items"):
        assert section in state.body


def test_each_save_is_a_revision_with_author_and_message(incident, editor):
    first = postmortem_save(incident=incident, body="v1", base_revision=0, by=editor, message="a")
    second = postmortem_save(
        incident=incident, body="v2", base_revision=1, by=editor, message="b", status="published"
    )
    assert (first.number, second.number) == (1, 2)
    pm = PostMortem.objects.get(incident=incident)
    assert (pm.body, pm.revision, pm.status) == ("v2", 2, "published") and pm.published_at
    assert [(r.number, r.author, r.message) for r in pm.revisions.all()] == [
        (2, editor, "b"),
        (1, editor, "a"),
    ]


def test_a_stale_save_is_refused_and_nothing_is_overwritten(incident, editor):
    postmortem_save(
        incident=incident,
        body=TEMPLATE.replace("## Trigger", "## Trigger\nX"),
        base_revision=0,
        by=editor,
    )
    mine = TEMPLATE.replace("## Detection", "## Detection\nthe alert fired")
    with pytest.raises(PostMortemConflict) as caught:
        postmortem_save(incident=incident, body=mine, base_revision=0, by=editor)
    conflict = caught.value
    assert conflict.current.revision == 1 and "## Trigger\nX" in conflict.current.body
    # different sections: a merge is offered that keeps both edits
    assert "## Trigger\nX" in conflict.merged and "the alert fired" in conflict.merged
    assert PostMortem.objects.get(incident=incident).revision == 1


def test_restore_makes_a_new_revision_and_diff_shows_lines(incident, editor):
    postmortem_save(incident=incident, body="one\ntwo\n", base_revision=0, by=editor)
    postmortem_save(incident=incident, body="one\nthree\n", base_revision=1, by=editor)
    restored = postmortem_restore(incident=incident, number=1, base_revision=2, by=editor)
    assert (restored.number, restored.body, restored.restored_from) == (3, "one\ntwo\n", 1)
    assert ("del", "-three") in revision_diff("one\nthree\n", "one\ntwo\n")
    with pytest.raises(IncidentError, match="no revision 9"):
        postmortem_restore(incident=incident, number=9, base_revision=3, by=editor)


def test_chart_embeds_are_pinned_when_saved(incident, editor, ok_artifact):
    run = ok_artifact.runs.get(collective="sendrecv")
    saved = postmortem_save(
        incident=incident,
        body=f"Before:\n\n{{{{chart run={run.pk}}}}}\n",
        base_revision=0,
        by=editor,
    )
    embed = Embed.objects.get()
    assert f"{{{{chart run={run.pk} pin={embed.pk}}}}}" in saved.body
    assert embed.pinned["artifact_sha256"] == ok_artifact.sha256
    assert embed.pinned["run_index"] == run.index and len(embed.snapshot["rows"]) == 10
    html = str(render_postmortem(saved.body, incident, interactive=True))
    assert 'class="chart"' in html and "busbw out-of-place" in html
    # the evidence goes away: the post-mortem still shows what it showed
    ok_artifact.runs.all().delete()
    static = str(render_postmortem(saved.body, incident, interactive=False))
    assert "<svg" in static and "<script" not in static and "sendrecv" in static


def test_a_shortcode_that_cannot_be_pinned_refuses_the_save(incident, editor):
    with pytest.raises(IncidentError, match="no run #999"):
        postmortem_save(incident=incident, body="{{chart run=999}}", base_revision=0, by=editor)
    with pytest.raises(IncidentError, match="unknown embed"):
        postmortem_save(incident=incident, body="{{video id=1}}", base_revision=0, by=editor)
    assert not PostMortem.objects.filter(incident=incident, revision__gt=0).exists()


def test_hostile_markdown_around_embeds_is_sanitized(incident, editor, ok_artifact):
    run = ok_artifact.runs.first()
    body = f"<script>alert(1)</script>\n\n{{{{chart run={run.pk}}}}}\n\n[x](javascript:alert(2))"
    saved = postmortem_save(incident=incident, body=body, base_revision=0, by=editor)
    html = str(render_postmortem(saved.body, incident, interactive=True))
    assert "alert(1)" not in html and "javascript:" not in html
    assert html.count("<script") == 1 and 'type="application/json"' in html  # the chart data


# --- the editor page, two sessions ---------------------------------------------------------


def login(user):
    client = Client()
    client.force_login(user)
    return client


def test_two_sessions_editing_get_a_conflict_page_not_a_silent_overwrite(incident, editor):
    from django.contrib.auth.models import Group, User

    other = User.objects.create_user("olga", password="pw-olga")
    other.groups.add(Group.objects.get(name="editor"))
    url = f"/incidents/{incident.pk}/postmortem/edit/"
    eddie, olga = login(editor), login(other)
    assert eddie.get(url).status_code == olga.get(url).status_code == 200  # both read r0
    body = TEMPLATE
    saved = olga.post(
        url,
        {
            "body": body.replace("## Trigger", "## Trigger\nDriver 550 upgrade"),
            "revision": 0,
            "status": "draft",
            "message": "trigger",
        },
    )
    assert saved.status_code == 302
    page = eddie.post(
        url,
        {
            "body": body.replace("## Trigger", "## Trigger\nNCCL 2.21"),
            "revision": 0,
            "status": "draft",
            "message": "mine",
        },
    )
    assert page.status_code == 409
    html = page.content.decode()
    assert 'id="conflict"' in html and "Driver 550 upgrade" in html and "NCCL 2.21" in html
    assert "The edits overlap" in html  # same line: no automatic merge offered
    pm = PostMortem.objects.get(incident=incident)
    assert pm.revision == 1 and "Driver 550 upgrade" in pm.body and "NCCL 2.21" not in pm.body


def test_preview_and_autosave_endpoints(incident, editor_client, editor):
    base = f"/incidents/{incident.pk}/postmortem/"
    preview = editor_client.post(
        base + "preview/", {"body": "**bold** <script>x</script>"}, content_type="application/json"
    )
    assert preview.json()["html"] == "<p><strong>bold</strong> </p>"
    saved = editor_client.post(
        base + "autosave/", {"body": "draft text", "revision": 0}, content_type="application/json"
    )
    assert saved.json()["stale"] is False
    assert PostMortemDraft.objects.get(user=editor).body == "draft text"
    page = editor_client.get(base + "edit/").content.decode()
    assert 'id="draft-banner"' in page
    postmortem_save(incident=incident, body="real", base_revision=0, by=editor)
    assert not PostMortemDraft.objects.filter(user=editor).exists()  # a save clears the draft


def test_viewers_read_the_post_mortem_but_cannot_edit(incident, editor, viewer_client):
    postmortem_save(incident=incident, body="# Findings", base_revision=0, by=editor)
    page = viewer_client.get(f"/incidents/{incident.pk}/postmortem/")
    assert page.status_code == 200 and "<h1>Findings</h1>" in page.content.decode()
    assert 'id="edit-postmortem"' not in page.content.decode()
    assert viewer_client.get(f"/incidents/{incident.pk}/postmortem/edit/").status_code == 403
    assert (
        viewer_client.post(
            f"/incidents/{incident.pk}/postmortem/preview/", {}, content_type="application/json"
        ).status_code
        == 403
    )


def test_publish_restore_and_diff_pages(incident, editor, editor_client):
    postmortem_save(incident=incident, body="a\n", base_revision=0, by=editor)
    postmortem_save(incident=incident, body="b\n", base_revision=1, by=editor)
    base = f"/incidents/{incident.pk}/postmortem/"
    editor_client.post(base + "status/", {"status": "published", "revision": 2})
    assert PostMortem.objects.get().status == "published"
    diff = editor_client.get(base + "diff/", {"a": 1, "b": 2}).content.decode()
    assert '<div class="del">-a</div>' in diff and '<div class="add">+b</div>' in diff
    editor_client.post(base + "restore/1/", {"revision": 2})  # stale base: refused
    assert PostMortem.objects.get().revision == 3
    editor_client.post(base + "restore/1/", {"revision": 3})
    assert PostMortem.objects.get().body == "a\n"
