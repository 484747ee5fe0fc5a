"""Company groups to PerfHub roles, for sign-ins through OpenID Connect or LDAP.

A role map reads ``GROUP=ROLE`` entries (``perf-admins=editor;perf=viewer``). The role is
what follows the last ``=``, so LDAP group DNs (``cn=perf,ou=groups,dc=example,dc=org``),
which hold ``=`` and ``,`` themselves, can be keys when entries are split on ``;`` only.

Parsing is pure (settings.py calls it, so a bad map fails at start-up); ``sync_roles`` needs
the apps loaded and imports the Group model when called.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from perfhub.roles import GROUPS


def parse_role_map(name: str, text: str, *, separators: str = ",;") -> dict[str, str]:
    """``{group: role}`` from ``GROUP=ROLE`` entries split on any of ``separators``.

    Group names are kept lower-cased: IdPs and directories differ in case (LDAP DNs are
    case-insensitive and django-auth-ldap hands them over lower-cased).
    """
    out: dict[str, str] = {}
    for entry in re.split(f"[{re.escape(separators)}\n]", text):
        entry = entry.strip()
        if not entry:
            continue
        group, sep, role = entry.rpartition("=")
        group, role = group.strip(), role.strip().lower()
        if not sep or not group or role not in GROUPS:
            raise ImproperlyConfigured(
                f"{name}: {entry!r} is not GROUP=ROLE with ROLE one of {', '.join(GROUPS)}"
            )
        out[group.lower()] = role
    return out


def roles_for(groups: Iterable[str], role_map: Mapping[str, str]) -> set[str]:
    """The PerfHub roles that the company groups of one user map to."""
    return {role_map[g.lower()] for g in groups if isinstance(g, str) and g.lower() in role_map}


def sync_roles(user: Any, groups: Iterable[str], role_map: Mapping[str, str]) -> set[str]:
    """Make the user's PerfHub roles exactly those its company groups map to; return them.

    The company directory owns the roles of the people who sign in through it: a role granted
    by hand is taken away at the next sign-in when no group maps to it. With no map
    configured, roles are left to PerfHub's admins. Groups that are not roles are untouched.
    """
    if not role_map:
        return set()
    from django.contrib.auth.models import Group

    wanted = roles_for(groups, role_map)
    current = set(user.groups.filter(name__in=GROUPS).values_list("name", flat=True))
    if add := wanted - current:
        user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in sorted(add)))
    if remove := current - wanted:
        user.groups.remove(*Group.objects.filter(name__in=remove))
    # roles.can_edit caches the names on the user object for the request
    if hasattr(user, "_perfhub_groups"):
        del user._perfhub_groups
    return wanted
