"""OpenAPI operations tagged by area (perfhub/api_areas.py), not all as "api"."""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema

from perfhub.api_areas import area_of


class AreaAutoSchema(AutoSchema):
    def get_tags(self) -> list[str]:
        return [area_of(type(self.view).__module__)]
