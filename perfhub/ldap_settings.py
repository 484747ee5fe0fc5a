"""django-auth-ldap's settings from PerfHub's LDAP variables.

Imported by settings.py only when PERFHUB_LDAP_SERVER_URI is set: it loads python-ldap,
which a deployment without a directory never needs.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from typing import Any

import ldap
from django.core.exceptions import ImproperlyConfigured
from django_auth_ldap.config import (
    GroupOfNamesType,
    GroupOfUniqueNamesType,
    LDAPGroupQuery,
    LDAPSearch,
    PosixGroupType,
)

_GROUP_TYPES = {
    "groupofnames": (GroupOfNamesType, "(objectClass=groupOfNames)"),
    "groupofuniquenames": (GroupOfUniqueNamesType, "(objectClass=groupOfUniqueNames)"),
    "posixgroup": (PosixGroupType, "(objectClass=posixGroup)"),
}


def ldap_settings(
    *,
    bind_dn: str,
    bind_password: str,
    user_base: str,
    user_filter: str,
    group_base: str,
    group_type: str,
    start_tls: bool,
    role_map: Mapping[str, str],
    require_role: bool,
) -> dict[str, Any]:
    """The ``AUTH_LDAP_*`` settings, checked: a missing base fails at start-up."""
    if not user_base:
        raise ImproperlyConfigured("PERFHUB_LDAP_SERVER_URI needs PERFHUB_LDAP_USER_SEARCH_BASE")
    if "%(user)s" not in user_filter:
        raise ImproperlyConfigured("PERFHUB_LDAP_USER_FILTER must contain %(user)s")
    if (role_map or require_role) and not group_base:
        raise ImproperlyConfigured("PERFHUB_LDAP_ROLE_MAP needs PERFHUB_LDAP_GROUP_SEARCH_BASE")
    out: dict[str, Any] = {
        "AUTH_LDAP_BIND_DN": bind_dn,
        "AUTH_LDAP_BIND_PASSWORD": bind_password,
        "AUTH_LDAP_START_TLS": start_tls,
        "AUTH_LDAP_USER_SEARCH": LDAPSearch(user_base, ldap.SCOPE_SUBTREE, user_filter),
        "AUTH_LDAP_USER_ATTR_MAP": {"first_name": "givenName", "last_name": "sn", "email": "mail"},
        # names and addresses follow the directory at every sign-in
        "AUTH_LDAP_ALWAYS_UPDATE_USER": True,
        # an unanswering directory must not hang the sign-in page (then local accounts answer)
        "AUTH_LDAP_CONNECTION_OPTIONS": {ldap.OPT_NETWORK_TIMEOUT: 5, ldap.OPT_TIMEOUT: 10},
    }
    if group_base:
        kind, object_filter = _GROUP_TYPES[group_type]
        out["AUTH_LDAP_GROUP_SEARCH"] = LDAPSearch(group_base, ldap.SCOPE_SUBTREE, object_filter)
        out["AUTH_LDAP_GROUP_TYPE"] = kind()
    if require_role:
        if not role_map:
            raise ImproperlyConfigured("PERFHUB_LDAP_REQUIRE_ROLE needs PERFHUB_LDAP_ROLE_MAP")
        # the directory itself refuses members of no mapped group (AUTH_LDAP_REQUIRE_GROUP)
        out["AUTH_LDAP_REQUIRE_GROUP"] = functools.reduce(
            operator.or_, (LDAPGroupQuery(dn) for dn in role_map)
        )
    return out
