"""Failed password sign-ins are throttled per user name and address (django-axes)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def _sign_in(client, username: str, password: str):  # type: ignore[no-untyped-def]
    return client.post("/login/", {"username": username, "password": password})


def test_the_sixth_wrong_password_is_locked_out_and_then_even_the_right_one(client, editor):
    for _ in range(4):
        page = _sign_in(client, editor.username, "wrong")
        assert page.status_code == 200 and "didn" in page.content.decode()
    locked = _sign_in(client, editor.username, "wrong")  # the fifth failure reaches the limit
    assert locked.status_code == 429 and "Too many failed sign-ins" in locked.content.decode()
    again = _sign_in(client, editor.username, f"pw-{editor.username}")
    assert again.status_code == 429  # locked for the cool-off, even with the right password


def test_a_success_resets_the_count_and_other_users_are_not_affected(client, editor, viewer):
    for _ in range(4):
        _sign_in(client, editor.username, "wrong")
    assert _sign_in(client, editor.username, f"pw-{editor.username}").status_code == 302
    client.logout()
    for _ in range(4):  # counted from zero again
        assert _sign_in(client, editor.username, "wrong").status_code == 200
    assert _sign_in(client, viewer.username, f"pw-{viewer.username}").status_code == 302


def test_api_tokens_are_not_password_sign_ins(editor):  # type: ignore[no-untyped-def]
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    token = Token.objects.create(user=editor)
    api = APIClient()
    for _ in range(8):
        assert api.get("/api/v1/", HTTP_AUTHORIZATION="Token wrong").status_code == 401
    assert api.get("/api/v1/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200
