import pytest
from django.core.exceptions import ImproperlyConfigured

from perfhub.env import env_bool, env_choice, env_int, env_list, env_url


def test_env_bool_reads_common_spellings_and_refuses_junk(monkeypatch):
    monkeypatch.setenv("X_FLAG", "Yes")
    assert env_bool("X_FLAG") is True
    monkeypatch.setenv("X_FLAG", "0")
    assert env_bool("X_FLAG", True) is False
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
        env_bool("X_FLAG")


def test_env_int_accepts_underscores_and_refuses_junk(monkeypatch):
    monkeypatch.setenv("X_NUM", "2_147_483_648")
    assert env_int("X_NUM", 1) == 2 * 1024**3
    monkeypatch.delenv("X_NUM")
    assert env_int("X_NUM", 7) == 7
    monkeypatch.setenv("X_NUM", "2GB")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env_int("X_NUM", 1)


def test_env_list_splits_and_trims(monkeypatch):
    monkeypatch.setenv("X_LIST", " a.example, b.example ,,")
    assert env_list("X_LIST") == ["a.example", "b.example"]


def test_env_choice_is_case_insensitive_and_refuses_others(monkeypatch):
    monkeypatch.delenv("X_CHOICE", raising=False)
    assert env_choice("X_CHOICE", ("file", "smtp"), "file") == "file"
    monkeypatch.setenv("X_CHOICE", " SMTP ")
    assert env_choice("X_CHOICE", ("file", "smtp"), "file") == "smtp"
    monkeypatch.setenv("X_CHOICE", "sendmail")
    with pytest.raises(ImproperlyConfigured, match="X_CHOICE='sendmail' is not one of: file, smtp"):
        env_choice("X_CHOICE", ("file", "smtp"), "file")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, "http://127.0.0.1:8000"),
        ("https://perfhub.example/", "https://perfhub.example"),
        ("http://10.0.0.5:8000/perfhub", "http://10.0.0.5:8000/perfhub"),
    ],
)
def test_env_url_strips_the_trailing_slash(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv("X_URL", raising=False)
    else:
        monkeypatch.setenv("X_URL", raw)
    assert env_url("X_URL", "http://127.0.0.1:8000") == expected


@pytest.mark.parametrize("raw", ["perfhub.example", "ftp://host", "https://", "http:///path"])
def test_env_url_refuses_what_is_not_an_absolute_http_url(monkeypatch, raw):
    monkeypatch.setenv("X_URL", raw)
    with pytest.raises(ImproperlyConfigured, match="X_URL"):
        env_url("X_URL", "http://127.0.0.1:8000")


@pytest.mark.parametrize(("rate", "ok"), [("600/min", True), ("5/s", True), ("lots", False)])
def test_the_webhook_rate_is_checked_when_settings_load(rate, ok, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "PERFHUB_WEBHOOK_RATE": rate, "PERFHUB_VAR_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", "import perfhub.settings as s; print(s.REST_FRAMEWORK)"],
        cwd=Path(__file__).resolve().parents[1], env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert (done.returncode == 0) is ok, done.stderr[-500:]
    if ok:
        assert f"'webhooks': '{rate}'" in done.stdout
    else:
        assert "PERFHUB_WEBHOOK_RATE must read like 600/min" in done.stderr
