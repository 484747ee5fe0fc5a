"""Pages as Markdown with front matter: round trip, import modes, load_kb idempotency."""

import io
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.importexport import PageFileError, export_page, export_zip, page_import, parse_page
from knowledge.models import Page
from knowledge.services import page_update

pytestmark = pytest.mark.django_db

CONTENT_DIR = Path(__file__).resolve().parents[2] / "knowledge" / "content"

FILE = """---
title: 'NCCL env: H100 over RoCE'
slug: nccl-env-h100-roce
type: tuning_recipe
topic: nccl
status: published
tags: [nccl, roce]
verify_interval_days: 120
applies_to:
  gpu: [H100, H200]
  fabric: [roce]
  nccl: 2.20.*
  cuda: 12.0
settings:
- kind: env
  name: NCCL_IB_GID_INDEX
  value: 3
- kind: sysctl
  name: net.ipv4.tcp_mtu_probing
  value: on
---

# Body

Text with `code`.
"""


def test_parse_keeps_versions_and_values_as_written():
    parsed = parse_page(FILE)
    assert parsed.slug == "nccl-env-h100-roce"
    spec = parsed.content["applies_to"]
    assert spec["nccl"] == ">=2.20, <2.21" and spec["cuda"] == "==12.0"  # 2.20 not read as 2.2
    assert parsed.content["settings"][0]["value"] == "3"
    assert parsed.content["settings"][1]["value"] == "on"  # not True
    assert parsed.content["body"] == "# Body\n\nText with `code`.\n"


def test_round_trip_page_to_file_to_page(make_page, editor):
    page = make_page(
        title="Round: trip — “quotes” & colons",
        body="Line 1\n\n```bash\nexport NCCL_DEBUG=INFO\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        tags=["nccl", "h100"],
        owner="eddie",
        verify_interval_days=30,
        applies_to={
            "gpu": ["H100"],
            "nic": ["ConnectX-7"],
            "nccl": ">=2.19, <2.24",
            "kernel": ">=5.15",
        },
        settings=[
            {"kind": "env", "name": "NCCL_IB_HCA", "value": "=mlx5_0:1", "note": "rail 0"},
            {"kind": "boot", "name": "iommu", "value": "pt"},
            {"kind": "command", "value": "ethtool -S eth2 | grep -i pause", "scope": "nic"},
        ],
    )
    text = export_page(page)
    parsed = parse_page(text)
    assert parsed.slug == page.slug and parsed.owner == "eddie"
    assert parsed.content == page.content()
    assert export_page(page) == text  # deterministic
    # and through the database: import into a fresh page, export again, same bytes
    Page.objects.all().delete()
    outcome = page_import(text, by=editor)
    assert outcome.action == "created"
    assert export_page(Page.objects.get()) == text


def test_import_modes(make_page, editor):
    make_page(slug="nccl-env-h100-roce")
    assert page_import(FILE, by=editor, mode="skip").action == "skipped"
    updated = page_import(FILE, by=editor, mode="update", origin="x.md")
    assert updated.action == "updated" and updated.page.revision == 2
    assert page_import(FILE, by=editor, mode="update").action == "unchanged"
    assert Page.objects.get().revisions.count() == 2


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("# no front matter\n", "does not start with front matter"),
        ("---\ntitle: x\n", "not closed"),
        ("---\n: : :\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "mapping"),
        ("---\ntitle: x\ncolour: red\n---\n", "unknown front matter key"),
        ("---\ntitle: x\ntype: runbook\ntopic: nccl\n---\nbody\n", "no slug"),
        ("---\ntitle: x\ntype: poem\ntopic: nccl\nslug: x\n---\n", "type"),
    ],
)
def test_bad_files_say_what_is_wrong(text, reason):
    with pytest.raises(PageFileError, match=reason):
        parse_page(text)


def test_zip_export_and_browser_import(editor_client, make_page):
    make_page(title="One")
    make_page(title="Two")
    archive = editor_client.get("/kb/export/")
    assert archive["Content-Type"] == "application/zip"
    names = sorted(zipfile.ZipFile(io.BytesIO(archive.content)).namelist())
    assert names == ["one.md", "two.md"]
    Page.objects.all().delete()
    upload = io.BytesIO(archive.content)
    upload.name = "kb.zip"
    response = editor_client.post("/kb/import/", {"files": upload, "mode": "update"})
    assert response.status_code == 200 and "created" in response.content.decode()
    assert sorted(Page.objects.values_list("slug", flat=True)) == ["one", "two"]
    assert zipfile.ZipFile(io.BytesIO(export_zip(Page.objects.order_by("slug")))).namelist() == [
        "one.md",
        "two.md",
    ]


def test_load_kb_is_idempotent_and_respects_edits(db, editor, tmp_path):
    out = io.StringIO()
    call_command("load_kb", stdout=out)
    count = Page.objects.count()
    assert count >= 15 and f"{count} created" in out.getvalue()
    call_command("load_kb", stdout=(again := io.StringIO()))
    assert f"{count} unchanged" in again.getvalue() and Page.objects.count() == count
    assert all(p.revision == 1 for p in Page.objects.all())
    # an edit made in PerfHub is never overwritten by a later load
    page = Page.objects.order_by("slug").first()
    page_update(page=page, base_revision=1, by=editor, body="Edited in PerfHub.\n")
    folder = tmp_path / "content"
    folder.mkdir()
    source = CONTENT_DIR / f"{page.slug}.md"
    (folder / source.name).write_text(
        source.read_text().replace("\n---\n", "\n---\n\nNew upstream text.\n", 1)
    )
    call_command("load_kb", "--dir", str(folder), stdout=(third := io.StringIO()))
    assert "not overwritten" in third.getvalue()
    page.refresh_from_db()
    assert page.body == "Edited in PerfHub.\n"
    call_command("load_kb", "--dir", str(folder), "--force", stdout=io.StringIO())
    page.refresh_from_db()
    assert page.body.startswith("New upstream text.") and page.revision == 3


def test_loaded_starter_pages_are_fresh_and_owned_by_the_loading_team(db, editor):
    from knowledge.models import Verification
    from knowledge.querysets import stale_page_ids, with_freshness

    call_command("load_kb", "--owner", editor.username, stdout=io.StringIO())
    pages = with_freshness(Page.objects.filter(status="published"))
    assert pages and not stale_page_ids()
    assert {p.freshness.state for p in pages} == {"fresh"}
    assert {p.owner for p in Page.objects.all()} == {editor}
    note = Verification.objects.filter(page=pages[0]).get().note
    assert note.startswith(f"Loaded from {pages[0].slug}.md by load_kb")
    # loading again changes nothing: no second verification for unchanged content
    call_command("load_kb", "--owner", editor.username, stdout=io.StringIO())
    assert Verification.objects.count() == Page.objects.count()
    with pytest.raises(CommandError, match="no such user"):
        call_command("load_kb", "--owner", "nobody", stdout=io.StringIO())


def test_load_kb_updates_pages_it_loaded_itself(db, tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "nccl-env-h100-roce.md").write_text(FILE)
    call_command("load_kb", "--dir", str(folder), stdout=io.StringIO())
    (folder / "nccl-env-h100-roce.md").write_text(FILE.replace("Text with", "Better text with"))
    call_command("load_kb", "--dir", str(folder), stdout=(out := io.StringIO()))
    assert "1 updated" in out.getvalue()
    assert Page.objects.get().revision == 2


def test_load_kb_fails_loudly_on_a_bad_file(db, tmp_path):
    (tmp_path / "bad.md").write_text("no front matter\n")
    with pytest.raises(CommandError, match="could not be loaded"):
        call_command("load_kb", "--dir", str(tmp_path), stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError, match="not a folder"):
        call_command("load_kb", "--dir", str(tmp_path / "missing"))
