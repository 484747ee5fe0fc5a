"""Tiny typed readers for environment variables. They fail loudly on junk values
so a typo in a deployment shows up at start-up, not as a strange behaviour later."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw.strip().replace("_", ""))
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices`` (case-insensitive); anything else fails at start-up."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} is not one of: {', '.join(choices)}")
    return value


def env_url(name: str, default: str) -> str:
    """An absolute http(s) URL without a trailing slash (links are built as URL + path)."""
    raw = os.environ.get(name)
    value = (default if raw is None or raw.strip() == "" else raw).strip().rstrip("/")
    scheme, _, rest = value.partition("://")
    if scheme.lower() not in ("http", "https") or not rest or rest.startswith("/"):
        raise ImproperlyConfigured(f"{name}={raw!r} is not an absolute http(s):// URL")
    return value
