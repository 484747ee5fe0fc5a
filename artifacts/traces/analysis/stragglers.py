"""Stragglers in a multi-rank job: ranks whose numbers are outliers by a robust statistic.

Pure Python (no Django, no pandas): the job page, the API and the benchmark share it.

Three signals per rank, each the median over the steps (or collectives) the ranks share:

* **step time**: ProfilerStep duration on the host;
* **GPU compute per step**: union of compute kernels launched during a step (a slow GPU,
  a throttled clock, more work on one rank);
* **collective arrival lateness**: how late a rank reaches each collective. Ranks of
  different hosts have unrelated clocks (Kineto stamps with the host's monotonic clock), so
  it is inferred from kernel durations, which need no common clock: the ranks of a
  collective leave it together, so a rank that arrives later spends less time in the
  kernel. For a matched call with durations ``d``, rank ``i`` arrived ``max(d) - d[i]``
  after the first one and waited ``d[i] - min(d)`` for the last one (its communication
  wait).

Collectives are matched across ranks by (process group, collective, ordinal): NCCL requires
every rank of a communicator to issue the same collectives in the same order.

A value is an outlier when its modified z-score ``(x - median) / (1.4826 * MAD)`` exceeds
3.5 (Iglewicz & Hoaglin) *and* it is at least 5 % above the median (of the step time, for
lateness), so that microsecond jitter between otherwise identical ranks is not reported.
The scale is at least 1 % of that reference: ranks identical to the microsecond (MAD 0)
would otherwise make any deviation infinitely significant, and the 5 % rule decides. When
the MAD and the floor are both 0 the scale falls back to 1.2533 times the mean absolute
deviation (its consistency constant). Only slow/late outliers are stragglers; at least three
ranks are needed to tell which one is odd.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

K = TypeVar("K")

MODIFIED_Z_THRESHOLD = 3.5
MIN_RELATIVE_DEVIATION = 0.05
SCALE_FLOOR_RELATIVE = 0.01
MIN_RANKS = 3
_MAD_TO_SIGMA = 1.4826
_MEAN_AD_TO_SIGMA = 1.253314

STEP_TIME, STEP_COMPUTE, LATENESS = "step_time", "step_compute", "collective_lateness"
SIGNAL_LABELS = {
    STEP_TIME: "median step time",
    STEP_COMPUTE: "median GPU compute per step",
    LATENESS: "median collective arrival lateness",
}


@dataclass(frozen=True)
class Step:
    number: int | None
    start_us: float
    dur_us: float
    compute_us: float | None = None


@dataclass(frozen=True)
class CollectiveCall:
    group: str  # process group name (or "" when the trace does not say)
    name: str  # collective, e.g. "allreduce"
    start_us: float
    dur_us: float


@dataclass(frozen=True)
class RankInput:
    key: str  # stable identifier (the trace id)
    rank: int | None
    host: str
    steps: Sequence[Step] = ()
    collectives: Sequence[CollectiveCall] = ()

    @property
    def label(self) -> str:
        who = f"rank {self.rank}" if self.rank is not None else f"trace {self.key}"
        return f"{who} on {self.host}" if self.host else who


@dataclass(frozen=True)
class RankStats:
    key: str
    rank: int | None
    host: str
    steps: int
    step_time_us: float | None
    step_compute_us: float | None
    collectives_matched: int
    lateness_us: float | None
    comm_wait_us: float | None
    scores: dict[str, float | None]
    flags: tuple[str, ...]

    @property
    def straggler(self) -> bool:
        return bool(self.flags)


@dataclass(frozen=True)
class Straggler:
    key: str
    rank: int | None
    host: str
    signal: str
    value_us: float
    median_us: float
    deviation_pct: float | None
    score: float
    message: str


@dataclass(frozen=True)
class JobAnalysis:
    ranks: list[RankStats]
    stragglers: list[Straggler]
    common_steps: list[int]
    matched_collectives: int
    notes: list[str] = field(default_factory=list)
    threshold: float = MODIFIED_Z_THRESHOLD
    min_relative: float = MIN_RELATIVE_DEVIATION

    @property
    def straggler_keys(self) -> set[str]:
        return {s.key for s in self.stragglers}


# ---------------------------------------------------------------------------------------
# Robust statistics
# ---------------------------------------------------------------------------------------


def robust_scores(values: Mapping[K, float], *, floor: float = 0.0) -> dict[K, float | None]:
    """Modified z-score of each value against the median and MAD of all of them.

    ``floor``: the smallest scale (robust sigma) used. ``None`` for every value when there
    is no spread at all (all equal, no floor) or no values.
    """
    if not values:
        return {}
    median = statistics.median(values.values())
    deviations = [abs(v - median) for v in values.values()]
    scale = max(_MAD_TO_SIGMA * statistics.median(deviations), floor)
    if scale == 0:
        scale = _MEAN_AD_TO_SIGMA * statistics.fmean(deviations)
    if scale == 0:
        return dict.fromkeys(values, None)
    return {key: (value - median) / scale for key, value in values.items()}


def high_outliers(
    values: Mapping[K, float],
    *,
    threshold: float = MODIFIED_Z_THRESHOLD,
    min_deviation: float = 0.0,
    floor: float = 0.0,
) -> dict[K, float]:
    """Keys whose value is above the median by more than ``threshold`` robust sigmas and by
    more than ``min_deviation`` (same unit as the values); key -> score."""
    if len(values) < MIN_RANKS:
        return {}
    median = statistics.median(values.values())
    return {
        key: score
        for key, score in robust_scores(values, floor=floor).items()
        if score is not None and score > threshold and values[key] - median > min_deviation
    }


# ---------------------------------------------------------------------------------------
# The job
# ---------------------------------------------------------------------------------------


def analyse_job(
    ranks: Sequence[RankInput],
    *,
    threshold: float = MODIFIED_Z_THRESHOLD,
    min_relative: float = MIN_RELATIVE_DEVIATION,
) -> JobAnalysis:
    """Per-rank signals, their robust scores and the stragglers of one job."""
    notes: list[str] = []
    common = _common_steps(ranks, notes)
    steps = {r.key: _shared_steps(r, common) for r in ranks}
    step_time = _medians({k: [s.dur_us for s in v] for k, v in steps.items()})
    compute = _medians(
        {k: [s.compute_us for s in v if s.compute_us is not None] for k, v in steps.items()}
    )
    calls = {r.key: _calls_in_window(r, common) for r in ranks if r.collectives}
    lateness, waits, matched = _collective_signals(calls, notes)
    signals = {STEP_TIME: step_time, STEP_COMPUTE: compute, LATENESS: lateness}

    job_step = statistics.median(step_time.values()) if step_time else None
    typical_call = _median_duration(calls)
    flagged: dict[str, dict[str, float]] = {}
    scores: dict[str, dict[str, float | None]] = {}
    for name, values in signals.items():
        if not values:
            scores[name] = {}
            continue
        reference = abs(statistics.median(values.values()))
        if name == LATENESS:  # lateness is near 0 for everyone: compare with the step
            reference = job_step if job_step else typical_call or 0.0
        floor = SCALE_FLOOR_RELATIVE * reference
        scores[name] = robust_scores(values, floor=floor)
        if len(values) < MIN_RANKS:
            notes.append(
                f"{SIGNAL_LABELS[name]}: {len(values)} rank(s) have it; at least {MIN_RANKS} "
                "are needed to tell which one is the outlier"
            )
            continue
        flagged[name] = high_outliers(
            values, threshold=threshold, min_deviation=min_relative * reference, floor=floor
        )

    by_key = {r.key: r for r in ranks}
    stragglers = [
        _straggler(by_key[key], name, signals[name], score)
        for name in signals
        for key, score in sorted(flagged.get(name, {}).items(), key=lambda kv: -kv[1])
    ]
    rows = [
        RankStats(
            key=r.key,
            rank=r.rank,
            host=r.host,
            steps=len(steps[r.key]),
            step_time_us=step_time.get(r.key),
            step_compute_us=compute.get(r.key),
            collectives_matched=matched if r.key in lateness else 0,
            lateness_us=lateness.get(r.key),
            comm_wait_us=waits.get(r.key),
            scores={name: scores[name].get(r.key) for name in signals},
            flags=tuple(name for name in signals if r.key in flagged.get(name, {})),
        )
        for r in ranks
    ]
    _note_duplicate_ranks(ranks, notes)
    return JobAnalysis(
        ranks=rows,
        stragglers=stragglers,
        common_steps=sorted(common) if common else [],
        matched_collectives=matched,
        notes=notes,
        threshold=threshold,
        min_relative=min_relative,
    )


def _common_steps(ranks: Sequence[RankInput], notes: list[str]) -> set[int] | None:
    """Step numbers every rank with steps has; None when steps need no alignment."""
    numbered = [{s.number for s in r.steps if s.number is not None} for r in ranks if r.steps]
    if not numbered:
        return None
    if all(n == numbered[0] for n in numbered):
        return None  # same steps everywhere: use all of them (and every collective)
    common = set.intersection(*numbered)
    if common:
        notes.append(
            f"the ranks profiled different steps; comparing the {len(common)} they share "
            f"(steps {min(common)} to {max(common)})"
        )
    else:
        notes.append("the ranks share no ProfilerStep number; comparing all steps as they are")
    return common or None


def _shared_steps(rank: RankInput, common: set[int] | None) -> list[Step]:
    if common is None:
        return list(rank.steps)
    return [s for s in rank.steps if s.number in common]


def _calls_in_window(rank: RankInput, common: set[int] | None) -> list[CollectiveCall]:
    """The rank's collectives from the first shared step on, up to the step after the last
    shared one, so that ordinals mean the same call on every rank."""
    if common is None:
        return list(rank.collectives)
    shared = [s for s in rank.steps if s.number in common]
    if not shared:
        return list(rank.collectives)
    begin = min(s.start_us for s in shared)
    last = max(s.start_us for s in shared)
    later = [s.start_us for s in rank.steps if s.start_us > last]
    end = min(later) if later else float("inf")
    return [c for c in rank.collectives if begin <= c.start_us < end]


def _collective_signals(
    calls: Mapping[str, Sequence[CollectiveCall]], notes: list[str]
) -> tuple[dict[str, float], dict[str, float], int]:
    """(median lateness per rank, summed wait per rank, number of matched calls)."""
    if len(calls) < 2:
        return {}, {}, 0
    durations: dict[tuple[str, str, int], dict[str, float]] = defaultdict(dict)
    for key, rank_calls in calls.items():
        ordinal: dict[tuple[str, str], int] = defaultdict(int)
        for call in sorted(rank_calls, key=lambda c: c.start_us):
            group = (call.group, call.name)
            durations[(*group, ordinal[group])][key] = call.dur_us
            ordinal[group] += 1
    everyone = set(calls)
    matched = [d for d in durations.values() if set(d) == everyone]
    if not matched:
        notes.append("no collective could be matched across the ranks (different sequences)")
        return {}, {}, 0
    if len(matched) < len(durations):
        notes.append(
            f"{len(durations) - len(matched)} collective call(s) are not on every rank and "
            "are left out of lateness and wait"
        )
    lateness: dict[str, list[float]] = defaultdict(list)
    waits: dict[str, float] = defaultdict(float)
    for call in matched:
        longest, shortest = max(call.values()), min(call.values())
        for key, dur in call.items():
            lateness[key].append(longest - dur)
            waits[key] += dur - shortest
    medians = {key: round(statistics.median(v), 3) for key, v in lateness.items()}
    return medians, {k: round(v, 3) for k, v in waits.items()}, len(matched)


def _medians(values: Mapping[str, Sequence[float]]) -> dict[str, float]:
    return {key: round(statistics.median(v), 3) for key, v in values.items() if v}


def _median_duration(calls: Mapping[str, Sequence[CollectiveCall]]) -> float | None:
    durations = [c.dur_us for rank_calls in calls.values() for c in rank_calls]
    return statistics.median(durations) if durations else None


def _straggler(
    rank: RankInput, signal: str, values: Mapping[str, float], score: float
) -> Straggler:
    value = values[rank.key]
    median = statistics.median(values.values())
    deviation = round(100.0 * (value - median) / median, 1) if median else None
    if deviation is not None:
        versus = f"{deviation:+.0f} % vs the job median {format_us(median)}"
    else:  # a median of 0 (lateness): say by how much, not by how many percent
        versus = f"{format_us(value - median)} above the job median {format_us(median)}"
    message = (
        f"{rank.label}: {SIGNAL_LABELS[signal]} {format_us(value)} ({versus}, robust z {score:.1f})"
    )
    return Straggler(
        key=rank.key,
        rank=rank.rank,
        host=rank.host,
        signal=signal,
        value_us=value,
        median_us=round(median, 3),
        deviation_pct=deviation,
        score=round(score, 2),
        message=message,
    )


def _note_duplicate_ranks(ranks: Sequence[RankInput], notes: list[str]) -> None:
    seen: dict[int, int] = defaultdict(int)
    for r in ranks:
        if r.rank is not None:
            seen[r.rank] += 1
    twice = sorted(rank for rank, n in seen.items() if n > 1)
    if twice:
        notes.append(
            f"rank(s) {', '.join(map(str, twice[:20]))} appear more than once: the label "
            "probably groups several runs; tag uploads with metadata job=<id> to separate them"
        )


def format_us(value: float) -> str:
    """12.3 µs, 4.56 ms, 1.23 s."""
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:.2f} s"
    if magnitude >= 1e3:
        return f"{value / 1e3:.2f} ms"
    return f"{value:.1f} µs"
