"""LDAP sign-in (django-auth-ldap), used only when PERFHUB_LDAP_SERVER_URI is set.

The user's group DNs in the directory set their PerfHub roles at every sign-in
(``PERFHUB_LDAP_ROLE_MAP``, ``perfhub.signin_roles``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django_auth_ldap.backend import LDAPBackend

from perfhub.signin_roles import sync_roles


class PerfHubLDAPBackend(LDAPBackend):
    def authenticate_ldap_user(self, ldap_user: Any, password: str) -> Any:
        user = super().authenticate_ldap_user(ldap_user, password)
        # group_dns asks the directory: only when a map will use the answer
        if user is not None and settings.PERFHUB_LDAP_ROLE_MAP:
            sync_roles(user, ldap_user.group_dns, settings.PERFHUB_LDAP_ROLE_MAP)
        return user
