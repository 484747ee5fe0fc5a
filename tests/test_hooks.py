"""Hooks: a lower layer calls them, an app above fills them (perfhub/hooks.py)."""

from __future__ import annotations

import pytest

from perfhub.hooks import Hook, HookMissing


def test_a_hook_calls_what_was_provided_and_the_fallback_before() -> None:
    hook: Hook = Hook("double", fallback=lambda x: None)
    assert hook(2) is None and not hook.provided
    hook.provide(lambda x: 2 * x)
    assert hook(2) == 4 and hook.provided


def test_a_hook_without_provider_or_fallback_names_itself() -> None:
    with pytest.raises(HookMissing, match="'store runs'"):
        Hook("store runs")(1)


def test_the_installed_apps_fill_the_evidence_hooks() -> None:
    from artifacts.metrics.loaders import store_metrics_runs
    from artifacts.runs.hooks import run_limits

    assert run_limits.provided and store_metrics_runs.provided
