"""``GET /api/v1/``: every endpoint group of every app, found in the URL configuration.

Each app has its own router, so no router's root view knows the others. This view asks the
resolver instead: every route named ``*-list`` under /api/v1/ (what a router registers for a
collection) is a group, so a new app's endpoints appear here without editing this file.
"""

from __future__ import annotations

from functools import cache

from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, reverse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

PREFIX = "/api/v1/"


def _names(patterns: list[URLPattern | URLResolver]) -> list[str]:
    names: list[str] = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            names += _names(pattern.url_patterns)
        elif isinstance(pattern, URLPattern) and pattern.name:
            names.append(pattern.name)
    return names


@cache
def endpoint_groups() -> dict[str, str]:
    """Group ("artifacts", "alert-summaries", "integrations/calls") -> its path, sorted."""
    groups: dict[str, str] = {}
    for name in set(_names(get_resolver().url_patterns)):
        if not name.endswith("-list"):
            continue
        try:
            path = reverse(name)
        except NoReverseMatch:  # a list route that needs arguments is no group
            continue
        if path.startswith(PREFIX) and path != PREFIX:
            groups[path[len(PREFIX) :].strip("/")] = path
    return dict(sorted(groups.items()))


class ApiRootView(APIView):
    """The API's table of contents (the OpenAPI schema has the operations)."""

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        body = {
            group: request.build_absolute_uri(path) for group, path in endpoint_groups().items()
        }
        body["schema"] = request.build_absolute_uri(reverse("api-schema"))
        body["docs"] = request.build_absolute_uri(reverse("api-docs"))
        return Response(body)
