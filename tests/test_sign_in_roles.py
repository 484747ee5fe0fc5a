"""Role maps (PERFHUB_OIDC_ROLE_MAP, PERFHUB_LDAP_ROLE_MAP) and the roles a sign-in sets."""

from __future__ import annotations

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
