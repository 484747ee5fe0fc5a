"""What apps above artifacts add to a run's page (perfhub/hooks.py).

``make_sweep``: files uploaded together (``manage.py ingest DIR --sweep NAME``) become a tuning
sweep (docs/tuning.md); baselines provides it (``baselines/sweeps/services.py``).

``run_limits``: the run against its hardware's limits, for the "Against the hardware" panel,
the % of peak column and the chart's peak line. The baselines app provides it
(``BaselinesConfig.ready``, ``baselines/limits/reads.py``); without it the page says the
limits are unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from perfhub.hooks import Hook

if TYPE_CHECKING:
    from artifacts.runs.models import BenchmarkRun


@dataclass(frozen=True)
class RunLimits:
    efficiency: Any = None  # what the panel template renders; None when the limits are unknown
    reason: str = ""  # why they are unknown (which input is missing)
    pct_by_size: dict[int, float | None] = field(default_factory=dict)
    peak_gbps: float | None = None
    peak_label: str = ""
    # nothing states a multi-node run's network: the run under each reference design of its
    # GPU (each an ``efficiency`` with ``assumed`` set), and the profile adopting one changes
    candidates: tuple[Any, ...] = ()
    profile_slug: str = ""


def _unknown(run: BenchmarkRun) -> RunLimits:
    return RunLimits(reason="Hardware limits unknown.")


run_limits: Hook[Callable[[BenchmarkRun], RunLimits]] = Hook("run limits", fallback=_unknown)


# make_sweep(name=..., artifact_ids=[...], user=..., notes=...) -> the sweep (a model row with
# ``pk``, ``name`` and ``get_absolute_url``); no fallback: ingest says the option needs it.
make_sweep: Hook[Callable[..., Any]] = Hook("make sweep")
