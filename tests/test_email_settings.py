"""E-mail settings come from PERFHUB_EMAIL_* variables and fit the running Django.

The settings module is executed afresh per test, as a private module object, with a patched
environment: the defaults and the failures are those a deployment would get at start-up.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import django
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.mail import EmailMessage
from django.utils.module_loading import import_string

SETTINGS_FILE = Path(__file__).resolve().parent.parent / "perfhub" / "settings.py"
_LEGACY = {
    "EMAIL_FILE_PATH": "file_path",
    "EMAIL_HOST": "host",
    "EMAIL_PORT": "port",
    "EMAIL_HOST_USER": "username",
    "EMAIL_HOST_PASSWORD": "password",
    "EMAIL_USE_TLS": "use_tls",
    "EMAIL_USE_SSL": "use_ssl",
    "EMAIL_TIMEOUT": "timeout",
}


def load_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **env: str) -> dict[str, Any]:
    monkeypatch.setenv("PERFHUB_VAR_DIR", str(tmp_path / "var"))
    for name in ("PERFHUB_EMAIL_BACKEND", "PERFHUB_EMAIL_SECURITY", "PERFHUB_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # A fresh module object per call: django.conf.settings is left as it was.
    spec = importlib.util.spec_from_file_location("perfhub.settings_probe", SETTINGS_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


def default_mailer(conf: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(backend path, options) whichever spelling this Django version was given."""
    if django.VERSION >= (6, 1):
        assert not any(name in conf for name in ("EMAIL_BACKEND", *_LEGACY)), "deprecated names"
        mailer = conf["MAILERS"]["default"]
        return mailer["BACKEND"], mailer["OPTIONS"]
    assert "MAILERS" not in conf
    return conf["EMAIL_BACKEND"], {_LEGACY[k]: v for k, v in conf.items() if k in _LEGACY}


def build_backend(backend: str, options: dict[str, Any]) -> Any:
    """The backend as Django would build it; 6.1 refuses options the backend does not take."""
    # With an alias, a 6.1 backend takes its options from the arguments, never EMAIL_*.
    alias = {"alias": "default"} if django.VERSION >= (6, 1) else {}
    return import_string(backend)(**alias, **options)


def test_default_writes_messages_as_files_under_var(monkeypatch, tmp_path):
    conf = load_settings(monkeypatch, tmp_path)
    backend, options = default_mailer(conf)
    assert backend == "django.core.mail.backends.filebased.EmailBackend"
    assert options == {"file_path": str((tmp_path / "var" / "mail").resolve())}
    assert conf["DEFAULT_FROM_EMAIL"] == "PerfHub <perfhub@localhost>"
    assert conf["PERFHUB_BASE_URL"] == "http://127.0.0.1:8000"
    # The options are the backend's own keyword arguments: a real message lands in the folder.
    connection = build_backend(backend, options)
    sent = connection.send_messages([EmailMessage("hello", "alert body", to=["b@example.com"])])
    assert sent == 1
    written = list((tmp_path / "var" / "mail").iterdir())
    assert len(written) == 1 and "alert body" in written[0].read_text()


def test_smtp_with_implicit_tls_gets_its_port_and_a_timeout(monkeypatch, tmp_path):
    conf = load_settings(
        monkeypatch,
        tmp_path,
        PERFHUB_EMAIL_BACKEND="SMTP",
        PERFHUB_EMAIL_SECURITY="ssl",
        PERFHUB_EMAIL_HOST="mx.example",
        PERFHUB_EMAIL_USER="perfhub",
        PERFHUB_EMAIL_PASSWORD="s3cret",
        DEFAULT_FROM_EMAIL="alerts@perfhub.example",
        PERFHUB_BASE_URL="https://perfhub.example/",
    )
    backend, options = default_mailer(conf)
    assert backend == "django.core.mail.backends.smtp.EmailBackend"
    assert options == {
        "host": "mx.example",
        "port": 465,
        "username": "perfhub",
        "password": "s3cret",
        "use_tls": False,
        "use_ssl": True,
        "timeout": 30,
    }
    assert conf["SERVER_EMAIL"] == conf["DEFAULT_FROM_EMAIL"] == "alerts@perfhub.example"
    assert conf["PERFHUB_BASE_URL"] == "https://perfhub.example"  # no double slash in links
    smtp = build_backend(backend, options)  # builds without connecting
    assert (smtp.host, smtp.port, smtp.use_ssl, smtp.timeout) == ("mx.example", 465, True, 30)


def test_smtp_defaults_to_starttls_on_the_submission_port(monkeypatch, tmp_path):
    conf = load_settings(monkeypatch, tmp_path, PERFHUB_EMAIL_BACKEND="smtp")
    _, options = default_mailer(conf)
    assert (options["host"], options["port"], options["use_tls"]) == ("localhost", 587, True)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("PERFHUB_EMAIL_BACKEND", "sendmail", "is not one of: file, console, smtp, dummy"),
        ("PERFHUB_EMAIL_SECURITY", "tls", "is not one of: starttls, ssl, none"),
        ("PERFHUB_EMAIL_PORT", "smtp", "is not an integer"),
        ("PERFHUB_BASE_URL", "perfhub.example", "is not an absolute http"),
    ],
)
def test_junk_values_fail_at_start_up(monkeypatch, tmp_path, name, value, message):
    env = {"PERFHUB_EMAIL_BACKEND": "smtp", name: value}
    with pytest.raises(ImproperlyConfigured, match=message):
        load_settings(monkeypatch, tmp_path, **env)
