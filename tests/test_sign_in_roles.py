"""Company sign-in settings: role maps (PERFHUB_OIDC_ROLE_MAP, PERFHUB_LDAP_ROLE_MAP), the roles
a sign-in sets, and the backends the variables turn on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from hypothesis import given
from hypothesis import strategies as st

from perfhub.signin_roles import parse_role_map, roles_for, sync_roles

ROLES = st.sampled_from(["viewer", "editor", "admin"])
# group names as IdPs send them: no separators, and not ending in "=" (the role follows it)
NAMES = st.text(
    alphabet=st.characters(exclude_characters=",;=\n", exclude_categories=("Cs", "Cc")),
    min_size=1,
    max_size=20,
).filter(lambda s: s.strip() == s and s)
# LDAP DNs: attribute=value pairs joined by commas
DNS = st.lists(
    st.tuples(
        st.sampled_from(["cn", "ou", "dc", "o"]),
        st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True),
    ),
    min_size=1,
    max_size=5,
).map(lambda parts: ",".join(f"{a}={v}" for a, v in parts))


@given(st.dictionaries(NAMES, ROLES, max_size=6), st.sampled_from([",", ";", "\n"]))
def test_a_map_written_out_reads_back(mapping: dict[str, str], sep: str) -> None:
    text = sep.join(f"{group}={role}" for group, role in mapping.items())
    expected: dict[str, str] = {}
    for group, role in mapping.items():
        expected[group.lower()] = role  # later entries win, as they do when read
    assert parse_role_map("X", text) == expected


@given(st.dictionaries(DNS, ROLES, min_size=1, max_size=5))
def test_ldap_dns_with_commas_and_equals_are_keys_when_split_on_semicolons(
    mapping: dict[str, str],
) -> None:
    text = " ; ".join(f"{dn}={role.upper()}" for dn, role in mapping.items())
    parsed = parse_role_map("PERFHUB_LDAP_ROLE_MAP", text, separators=";")
    assert parsed == {dn.lower(): role for dn, role in mapping.items()}
    for dn, role in mapping.items():
        assert roles_for([dn.upper()], parsed) == {role}  # DNs compare without case


@pytest.mark.parametrize(
    "text", ["perf=owner", "perf", "=editor", "perf=editor,ops", "cn=a,dc=b=editor"]
)
def test_junk_fails_at_start_up(text: str) -> None:
    # the last one: split on commas (the OIDC map), the DN falls apart into "dc=b=editor"
    # and "cn=a" and is refused rather than read as a different group
    with pytest.raises(ImproperlyConfigured, match="GROUP=ROLE"):
        parse_role_map("PERFHUB_OIDC_ROLE_MAP", text)


def test_roles_for_ignores_unmapped_and_non_string_groups() -> None:
    role_map = parse_role_map("X", "Perf-Admins=editor,perf=viewer")
    assert roles_for(["perf-admins", "sales", 7, "PERF"], role_map) == {"editor", "viewer"}  # type: ignore[list-item]
    assert roles_for([], role_map) == set()


@pytest.mark.django_db
def test_sync_adds_and_removes_roles_only_and_keeps_other_groups(viewer) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Group

    viewer.groups.add(Group.objects.get_or_create(name="on-call")[0])  # not a role
    role_map = parse_role_map("X", "perf-admins=editor;perf=viewer;root=admin")
    assert sync_roles(viewer, ["perf-admins", "root"], role_map) == {"editor", "admin"}
    names = set(viewer.groups.values_list("name", flat=True))
    assert names == {"editor", "admin", "on-call"}  # viewer taken away, on-call kept
    assert sync_roles(viewer, [], {}) == set()  # no map: roles left alone
    assert set(viewer.groups.values_list("name", flat=True)) == names


ROOT = Path(__file__).resolve().parent.parent


def _settings_in_a_fresh_process(env: dict[str, str]) -> str:
    code = (
        "import sys, django; django.setup(); from django.conf import settings as s; "
        "print(s.AUTHENTICATION_BACKENDS); "
        "print(sorted({m.split('.')[0] for m in sys.modules}"
        " & {'ldap', 'django_auth_ldap', 'mozilla_django_oidc'}))"
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PERFHUB_OIDC_") and not k.startswith("PERFHUB_LDAP_")
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**clean, "DJANGO_SETTINGS_MODULE": "perfhub.settings", **env},
    )
    return done.stdout


def test_with_nothing_configured_no_directory_library_is_loaded() -> None:
    out = _settings_in_a_fresh_process({})
    assert out.splitlines() == [
        "['axes.backends.AxesStandaloneBackend', 'django.contrib.auth.backends.ModelBackend']",
        "[]",
    ]


def test_the_variables_configure_both_with_axes_first() -> None:
    pytest.importorskip("django_auth_ldap", reason="LDAP support not installed ('.[ldap]')")
    out = _settings_in_a_fresh_process(
        {
            "PERFHUB_LDAP_SERVER_URI": "ldap://127.0.0.1:1",
            "PERFHUB_LDAP_USER_SEARCH_BASE": "ou=people,dc=example,dc=org",
            "PERFHUB_LDAP_GROUP_SEARCH_BASE": "ou=groups,dc=example,dc=org",
            "PERFHUB_LDAP_ROLE_MAP": "cn=perf,ou=groups,dc=example,dc=org=editor",
            "PERFHUB_OIDC_CLIENT_ID": "perfhub",
            "PERFHUB_OIDC_ISSUER": "https://sso.example/realms/corp",
        }
    )
    backends = out.splitlines()[0]
    assert backends == str(
        [
            "axes.backends.AxesStandaloneBackend",
            "perfhub.auth_ldap.PerfHubLDAPBackend",
            "perfhub.auth_oidc.PerfHubOIDCBackend",
            "django.contrib.auth.backends.ModelBackend",
        ]
    )
