"""Management commands: parse, ingest, demo user, demo data, token."""

import json
import os
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


# What `manage.py parse` must not load: the web stack (URLconf, views, DRF's serializers and
# views), the data libraries (pandas, numpy, plotly, kaleido), the PostgreSQL driver and Celery.
# Each one is tens of milliseconds and megabytes before the first byte of the file is read.
HEAVY_FOR_THE_COMMAND_LINE = (
    "pandas",
    "numpy",
    "plotly",
    "kaleido",
    "psycopg",
    "markdown",
    "celery",
    "rest_framework.serializers",
    "rest_framework.views",
    "drf_spectacular.openapi",
    "perfhub.urls",
)


def _imported_modules(*args: str, var: Path | None = None) -> set[str]:
    """Every module `manage.py ARGS` imports, read from Python's own -X importtime log."""
    # On the default SQLite database: with PostgreSQL configured, Django's own start-up
    # loads the driver whatever the command does, and that is not what is measured here.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    if var:
        env["PERFHUB_VAR_DIR"] = str(var)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "manage.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def test_parse_command_imports_neither_the_web_stack_nor_pandas_plotly_drf():
    modules = _imported_modules("parse", str(sample("nccl_tests/xxrjun_pair_N2_G1_ok.log")))
    assert "artifacts.runs.parsers.nccl_tests.text" in modules  # the log was really parsed
    assert sorted(m for m in HEAVY_FOR_THE_COMMAND_LINE if m in modules) == []
    # nor the app registry: manage.py runs `parse` without django.setup() (no model imported)
    assert "artifacts.models" not in modules and "django.contrib.auth.models" not in modules


def test_parse_command_outside_django_setup_keeps_the_command_line_contract(tmp_path):
    log = sample("nccl_tests/xxrjun_pair_N2_G1_ok.log")

    def parse(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", "parse", *args],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    done = parse("--kind", "nccl_tests", "--settings", "perfhub.settings", str(log))
    assert done.returncode == 0 and json.loads(done.stdout)["kind"] == "nccl_tests"
    missing = parse(str(tmp_path / "nothing.log"))
    assert missing.returncode == 2 and "nothing.log: No such file" in missing.stderr
    refused = parse("--kind", "no_such_kind", str(log))
    assert refused.returncode == 2 and "invalid choice" in refused.stderr


def test_ingest_command_loads_the_orm_but_not_the_web_stack(tmp_path):
    """Saving an artifact indexes it for search without building its URL (which would load
    the URL configuration: every view, DRF, pandas) and without importing any parser for
    its kind's label."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["PERFHUB_VAR_DIR"] = str(tmp_path)
    migrate = [sys.executable, "manage.py", "migrate", "-v0"]
    subprocess.run(migrate, cwd=ROOT, env=env, check=True, timeout=300)
    log = tmp_path / "tiny.log"
    log.write_bytes(sample("nccl_tests/xxrjun_pair_N2_G1_ok.log").read_bytes())
    modules = _imported_modules("ingest", str(log), var=tmp_path)
    assert "artifacts.models.core" in modules and "knowledge.indexing" in modules
    heavy = [m for m in HEAVY_FOR_THE_COMMAND_LINE if m not in ("celery", "psycopg")]
    assert sorted(m for m in heavy if m in modules) == []


def test_parse_and_ingest_skip_the_system_checks():
    from artifacts.management.commands import ingest, parse

    assert parse.Command.requires_system_checks == []
    assert ingest.Command.requires_system_checks == []


def test_celery_app_still_found_by_the_worker_and_dispatch():
    """perfhub no longer imports Celery on import; `celery -A perfhub` and `perfhub.celery_app`
    still find the one app (with the tasks of every app and family registered)."""
    code = (
        "import sys, perfhub; assert 'celery' not in sys.modules; "
        "from celery.app.utils import find_app; app = find_app('perfhub'); "
        "assert app is perfhub.celery_app; app.loader.import_default_modules(); "
        "assert {'artifacts.parse', 'baselines.after_parse'} <= set(app.tasks); "
        # a worker starts without the web stack or plotly (loaded by the tasks that draw)
        "assert not {'perfhub.urls', 'plotly', 'rest_framework.views'} & set(sys.modules), "
        "sorted({'perfhub.urls', 'plotly', 'rest_framework.views'} & set(sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.django_db
def test_run_filter_options_are_the_distinct_values_of_the_runs():
    """The run list's drop-downs (a loose index scan on PostgreSQL, DISTINCT elsewhere)."""
    from artifacts.runs.querysets import run_filter_options

    call_command("seed_demo", "--days", "1")
    runs = BenchmarkRun.objects.order_by()
    options = run_filter_options()
    assert options["collectives"] == sorted(
        {c for c in runs.values_list("collective", flat=True) if c}
    )
    assert options["nranks"] == sorted({n for n in runs.values_list("nranks", flat=True) if n})
    assert options["nccl_versions"] == sorted(
        {v for v in runs.values_list("nccl_version", flat=True) if v}
    )
    assert options["labels"] == sorted(
        {v for v in Artifact.objects.values_list("label", flat=True) if v}
    )
    assert len(options["collectives"]) > 1
