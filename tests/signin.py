"""Signing in through the login page in browser tests (test users' password: pw-<name>)."""

from __future__ import annotations

from typing import Any


def sign_in(page: Any, url: str, username: str) -> None:
    """Sign ``username`` in at ``url`` and wait for the home page's drop zone."""
    page.goto(f"{url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"pw-{username}")
    page.click("button[type=submit]")
    page.wait_for_selector("#dropzone")
