"""OpenID Connect sign-in against a real provider in a second process.

The provider is django-oauth-toolkit in OIDC mode (tests/oidc_provider/), with its own SQLite
file and an RSA key made here. PerfHub runs in pytest-django's live server; a real HTTP
client walks the whole authorization-code flow with PKCE: PerfHub's button, the provider's
login form, the code back to PerfHub, PerfHub's token and userinfo calls, the session.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.local_servers import free_port, stop, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
CLIENT_ID, CLIENT_SECRET = "perfhub-test", "s3cret-for-tests-only"


@dataclass(frozen=True)
class Provider:
    url: str
    env: dict[str, str]

    @property
    def issuer(self) -> str:
        return f"{self.url}/o"

    def populate(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "tests.oidc_provider.populate", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
        )

    def user(self, name: str, *groups: str) -> None:
        self.populate("user", name, f"pw-{name}", f"{name}@example.org", *groups)


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory, live_server: Any) -> Iterator[Provider]:
    folder = tmp_path_factory.mktemp("oidc-provider")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.oidc_provider.settings",
        "OIDC_PROVIDER_DB": str(folder / "provider.sqlite3"),
        "OIDC_PROVIDER_KEY": str(folder / "key.pem"),
        "PYTHONPATH": str(ROOT),
    }
    subprocess.run(
        [sys.executable, "-m", "django", "migrate", "-v0"], cwd=ROOT, env=env, check=True
    )
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, server)
        found = Provider(url=f"http://127.0.0.1:{port}", env=env)
        found.populate(
            "client",
            CLIENT_ID,
            CLIENT_SECRET,
            f"{live_server.url}/oidc/callback/",
            f"{live_server.url}/login/",
        )
        yield found
    finally:
        stop(server)


@pytest.fixture
def oidc(settings: Any, provider: Provider) -> Provider:
    """PerfHub configured as README's variables would: only the issuer, endpoints discovered."""
    from perfhub.signin_roles import parse_role_map

    settings.PERFHUB_OIDC_ENABLED = True
    settings.PERFHUB_OIDC_CLIENT_ID = settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    settings.PERFHUB_OIDC_ISSUER = provider.issuer
    settings.PERFHUB_OIDC_NAME = "Example SSO"
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.PERFHUB_OIDC_ROLE_MAP = parse_role_map("map", "perf-admins=editor,perf=viewer")
    settings.AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "perfhub.auth_oidc.PerfHubOIDCBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
    return provider


def _sign_in_at_provider(browser: requests.Session, start: str, name: str) -> requests.Response:
    """Follow PerfHub's button to the provider, fill its login form, follow the way back."""
    form = browser.get(start, timeout=30)
    assert "/accounts/login/" in form.url, form.url  # we are on the provider's page
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    nxt = re.search(r'name="next" value="([^"]+)"', form.text)
    assert token and nxt
    return browser.post(
        form.url,
        data={
            "csrfmiddlewaretoken": token.group(1),
            "username": name,
            "password": f"pw-{name}",
            "next": nxt.group(1).replace("&amp;", "&"),
        },
        headers={"Referer": form.url},
        timeout=30,
    )


def _sign_out(browser: requests.Session, base: str, page: str) -> requests.Response:
    """Submit the page's own sign-out form (a POST with its CSRF token)."""
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert csrf and 'action="/logout/"' in page
    return browser.post(f"{base}/logout/", data={"csrfmiddlewaretoken": csrf.group(1)}, timeout=30)


def _roles(name: str) -> set[str]:
    from django.contrib.auth.models import User

    return set(User.objects.get(username=name).groups.values_list("name", flat=True))


def test_the_login_page_offers_the_provider_only_when_configured(client, settings) -> None:  # type: ignore[no-untyped-def]
    assert "Sign in with" not in client.get("/login/").content.decode()
    assert client.get("/oidc/authenticate/").status_code == 404
    settings.PERFHUB_OIDC_ENABLED = True
    settings.PERFHUB_OIDC_NAME = "Example SSO"
    page = client.get("/login/?next=/runs/").content.decode()
    assert "Sign in with Example SSO" in page and 'action="/oidc/authenticate/"' in page
    assert page.count('name="next" value="/runs/"') == 2  # both ways in go back to the page


def test_with_the_provider_down_local_accounts_sign_in_and_the_button_says_so(  # type: ignore[no-untyped-def]
    client, settings, editor
) -> None:
    settings.PERFHUB_OIDC_ENABLED = True
    settings.PERFHUB_OIDC_NAME = "Example SSO"
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.PERFHUB_OIDC_ISSUER = f"http://127.0.0.1:{free_port()}/o"  # nothing listens
    settings.AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "perfhub.auth_oidc.PerfHubOIDCBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
    button = client.get("/oidc/authenticate/")
    assert button.status_code == 302 and button["Location"] == "/login/?signin=unreachable"
    assert "Example SSO could not be reached" in client.get(button["Location"]).content.decode()
    page = client.post(
        "/login/", {"username": editor.username, "password": f"pw-{editor.username}"}
    )
    assert page.status_code == 302 and page["Location"] == "/"


def test_a_company_user_signs_in_gets_roles_from_groups_and_signs_out(oidc, live_server) -> None:  # type: ignore[no-untyped-def]
    oidc.user("alice", "perf-admins", "perf", "sales")
    browser = requests.Session()
    login = browser.get(f"{live_server.url}/login/", timeout=30)
    assert "Sign in with Example SSO" in login.text
    home = _sign_in_at_provider(
        browser, f"{live_server.url}/oidc/authenticate/?next=/runs/", "alice"
    )
    assert home.status_code == 200 and home.url == f"{live_server.url}/runs/", home.url
    from django.contrib.auth.models import User

    alice = User.objects.get(username="alice")
    assert alice.email == "alice@example.org" and alice.first_name == "Alice"
    assert not alice.has_usable_password()  # the provider holds the password, not PerfHub
    assert _roles("alice") == {"editor", "viewer"}  # "sales" maps to nothing

    # signing out ends the provider's session too: the next sign-in asks for the password
    out = _sign_out(browser, live_server.url, home.text)
    assert out.url == f"{live_server.url}/login/", out.url
    assert browser.get(f"{live_server.url}/runs/", timeout=30).url.startswith(
        f"{live_server.url}/login/"
    )
    again = _sign_in_at_provider(browser, f"{live_server.url}/oidc/authenticate/", "alice")
    assert again.url == f"{live_server.url}/"


def test_without_provider_logout_the_provider_session_outlives_perfhubs(  # type: ignore[no-untyped-def]
    oidc, live_server, settings
) -> None:
    settings.PERFHUB_OIDC_PROVIDER_LOGOUT = False
    oidc.user("dave", "perf")
    browser = requests.Session()
    home = _sign_in_at_provider(browser, f"{live_server.url}/oidc/authenticate/", "dave")
    assert _sign_out(browser, live_server.url, home.text).url == f"{live_server.url}/login/"
    # still signed in at the provider: straight back in, no password asked
    back = browser.get(f"{live_server.url}/oidc/authenticate/", timeout=30)
    assert back.url == f"{live_server.url}/" and "/accounts/login/" not in back.text


def test_roles_follow_the_groups_at_every_sign_in(oidc, live_server) -> None:  # type: ignore[no-untyped-def]
    oidc.user("bob", "perf-admins")
    first = _sign_in_at_provider(requests.Session(), f"{live_server.url}/oidc/authenticate/", "bob")
    assert first.status_code == 200 and _roles("bob") == {"editor"}
    oidc.user("bob", "perf")  # moved out of perf-admins at the company
    from django.contrib.auth.models import Group, User

    User.objects.get(username="bob").groups.add(Group.objects.get_or_create(name="admin")[0])
    _sign_in_at_provider(requests.Session(), f"{live_server.url}/oidc/authenticate/", "bob")
    assert _roles("bob") == {"viewer"}  # editor removed, and the admin role granted by hand too
    assert User.objects.filter(username="bob").count() == 1  # the same account, not a new one


def test_a_user_of_no_mapped_group_is_refused_when_a_role_is_required(
    oidc, live_server, settings
) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    oidc.user("carol", "sales")
    settings.PERFHUB_OIDC_REQUIRE_ROLE = True
    page = _sign_in_at_provider(
        requests.Session(), f"{live_server.url}/oidc/authenticate/", "carol"
    )
    assert page.url == f"{live_server.url}/login/?signin=refused"
    assert "was not let in" in page.text
    assert not User.objects.filter(username="carol").exists()
    settings.PERFHUB_OIDC_REQUIRE_ROLE = False  # without the requirement she reads only
    page = _sign_in_at_provider(
        requests.Session(), f"{live_server.url}/oidc/authenticate/", "carol"
    )
    assert page.url == f"{live_server.url}/" and _roles("carol") == set()


def test_local_accounts_still_sign_in_while_the_provider_is_configured(
    oidc, live_server, editor
) -> None:  # type: ignore[no-untyped-def]
    from django.test import Client

    client = Client()
    page = client.post(
        "/login/", {"username": editor.username, "password": f"pw-{editor.username}"}
    )
    assert page.status_code == 302 and page["Location"] == "/"
    assert (
        client.post("/login/", {"username": editor.username, "password": "wrong"}).status_code
        == 200
    )


GOOD = {"iss": "https://sso.example/o", "aud": "perfhub", "exp": 1_000_000, "sub": "1"}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({}, ""),
        ({"aud": ["perfhub"]}, ""),
        ({"aud": ["perfhub", "other"], "azp": "perfhub"}, ""),
        ({"exp": 1_000_000 - 59}, ""),  # within the clock skew
        ({"iss": "https://sso.example/o/"}, ""),  # a trailing slash is the same issuer
        ({"aud": "other"}, "audience"),
        ({"aud": ["perfhub", "other"]}, "azp"),
        ({"iss": "https://evil.example/o"}, "issuer"),
        ({"exp": 1_000_000 - 61}, "expired"),
        ({"exp": "soon"}, "expired"),
    ],
)
def test_id_tokens_for_another_client_issuer_or_time_are_refused(
    change: dict[str, Any], problem: str
) -> None:
    from perfhub.auth_oidc import id_token_problem

    found = id_token_problem(
        {**GOOD, **change}, client_id="perfhub", issuer="https://sso.example/o", now=1_000_000
    )
    assert (problem in found) if problem else found == ""
    assert bool(found) == bool(problem)


@pytest.mark.browser
def test_in_a_browser_the_button_signs_in_and_the_login_page_passes_axe(  # type: ignore[no-untyped-def]
    oidc, live_server, browser_page
) -> None:
    from tests.test_accessibility import _axe_script, _violations

    oidc.user("gina", "perf")  # before the browser starts (see browser_page)
    page = browser_page
    page.goto(f"{live_server.url}/runs/")  # sent to the login page, ?next=/runs/
    assert not _violations(page, _axe_script())
    page.get_by_role("button", name="Sign in with Example SSO").click()
    page.wait_for_url(f"{oidc.url}/accounts/login/**")
    page.fill("input[name=username]", "gina")
    page.fill("input[name=password]", "pw-gina")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/runs/")
    assert page.get_by_role("button", name="Sign out").is_visible()
    assert _roles("gina") == {"viewer"}
