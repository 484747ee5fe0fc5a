from typing import Any

from django.http import HttpRequest

from perfhub.roles import can_edit


def roles(request: HttpRequest) -> dict[str, Any]:
    return {"can_edit": can_edit(request.user)}
