"""What the sweep page shows from the app above baselines (perfhub/hooks.py): knowledge fills
``sweep_recipes`` from its ``AppConfig.ready`` (the recipes a sweep proves or disputes, and
"write a recipe"), called with the sweep and the request (its forms need the CSRF token).
Kept apart from the views so that providing it loads no view code."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from perfhub.hooks import Hook

if TYPE_CHECKING:
    from baselines.models import Sweep


def _no_recipes(sweep: Sweep, request: Any) -> dict[str, Any]:
    return {}


sweep_recipes: Hook[Callable[[Sweep, Any], dict[str, Any]]] = Hook(
    "sweep recipes", fallback=_no_recipes
)
