from typing import Any

from django.apps import AppConfig


class BaselinesConfig(AppConfig):
    name = "baselines"

    def ready(self) -> None:
        # Hooks of the evidence layer that only baselines can fill (perfhub/hooks.py). The
        # implementations are imported when first called, so start-up loads none of them.
        from artifacts.metrics.loaders import store_metrics_runs
        from artifacts.runs.hooks import make_sweep, run_limits

        run_limits.provide(_run_limits)
        store_metrics_runs.provide(_store_metrics_runs)
        make_sweep.provide(_make_sweep)


def _run_limits(run: Any) -> Any:
    from baselines.limits.reads import run_page_limits

    return run_page_limits(run)


def _store_metrics_runs(artifact: Any, result: Any) -> None:
    from baselines.evidence_store import load_metrics

    load_metrics(artifact, result)


def _make_sweep(**kwargs: Any) -> Any:
    from baselines.sweeps.services import sweep_create

    return sweep_create(**kwargs)
