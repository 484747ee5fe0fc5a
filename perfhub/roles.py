"""The three roles. Viewers read; editors (and admins) also write; admins manage users.

Any signed-in user counts as a viewer, so a new account can look but not change anything
until someone puts it in the editor group.
"""

from __future__ import annotations

from typing import Any

VIEWER, EDITOR, ADMIN = "viewer", "editor", "admin"
GROUPS = (VIEWER, EDITOR, ADMIN)


def can_edit(user: Any) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_superuser:
        return True
    # groups are cached on the user object for the request, so this is one query at most
    names = getattr(user, "_perfhub_groups", None)
    if names is None:
        names = set(user.groups.values_list("name", flat=True))
        user._perfhub_groups = names
    return bool(names & {EDITOR, ADMIN})
