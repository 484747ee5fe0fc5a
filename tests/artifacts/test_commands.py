"""Management commands: parse, ingest, demo user, demo data, token."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from artifacts.models import Artifact, BenchmarkRun
from tests.samples import sample

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_parse_prints_the_result_json_and_stores_nothing():
    path = sample("nccl_tests/xxrjun_pair_N2_G1_ok.log")
    done = run_manage("parse", str(path))
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["kind"] == "nccl_tests"
    assert [r["collective"] for r in body["runs"]] == ["alltoall", "sendrecv"]


def test_parse_failure_is_one_line_on_stderr_with_exit_2(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing to see\n")
    done = run_manage("parse", str(junk), "--kind", "nccl_tests")
    assert done.returncode == 2
    assert done.stderr.startswith(f"{junk}: ") and done.stderr.count("\n") <= 1
    missing = run_manage("parse", str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and "No such file" in missing.stderr


@pytest.mark.django_db
def test_ingest_command_stores_files_and_reports_duplicates(capsys):
    path = sample("nccl_tests/xxrjun_pair_N2_G1_ok.log")
    call_command("ingest", str(path), "--label", "ci", "--metadata", '{"job": "42"}')
    call_command("ingest", str(path))
    out = capsys.readouterr().out
    assert "stored as artifact" in out and "already uploaded" in out
    artifact = Artifact.objects.get()
    assert (artifact.label, artifact.metadata) == ("ci", {"job": "42"})


@pytest.mark.django_db
def test_ingest_command_refuses_missing_paths_and_bad_metadata():
    with pytest.raises(CommandError, match="no such file"):
        call_command("ingest", "/nonexistent/file.log")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("ingest", __file__, "--metadata", "{")


@pytest.mark.django_db
def test_demo_user_is_created_once(capsys):
    call_command("ensure_demo_user")
    first = capsys.readouterr().out
    call_command("ensure_demo_user")
    second = capsys.readouterr().out
    assert "password:" in first and "already exists" in second
    user = User.objects.get(username="demo")
    assert list(user.groups.values_list("name", flat=True)) == ["editor"]


@pytest.mark.django_db
def test_seed_demo_loads_parsed_runs_through_ingest_and_is_idempotent():
    call_command("seed_demo", "--days", "2")
    artifacts, runs = Artifact.objects.count(), BenchmarkRun.objects.count()
    assert artifacts > 5 and runs >= artifacts
    assert not Artifact.objects.exclude(status="parsed").exists()
    call_command("seed_demo", "--days", "2")
    assert (Artifact.objects.count(), BenchmarkRun.objects.count()) == (artifacts, runs)


@pytest.mark.django_db
def test_drf_create_token_works(editor, capsys):
    call_command("drf_create_token", "eddie")
    assert "Generated token" in capsys.readouterr().out
