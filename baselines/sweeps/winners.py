"""What a sweep says: per collective and size, each setting value's busbw over its replicates,
the winner where the difference beats the noise, and the sizes where the winner changes. Pure.

How noise is judged (docs/tuning.md), between the best value and every other one at a size:

* the difference must exceed the print step of busbw (0.01 GB/s): below it is rounding;
* with at least two replicates on both sides, Welch's t-test (``stats.welch``, each side's
  spread floored at the rounding noise step/sqrt(12)) must give p < ``ALPHA`` *and* the
  difference must reach ``MIN_EFFECT_PCT``: a sweep tests dozens of sizes, and a 5 % test
  alone names a winner by chance at about one size in twenty;
* with a single run on either side the spread is unknown, so the difference must exceed
  ``TOLERANCE_PCT`` (the default tolerance of a pinned baseline) and the size says so.

A size has a winner only when the best value beats *every* other value that way; otherwise it
reads "within noise". Plain lists: a sweep is a few runs of a few dozen sizes.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from baselines.sweeps import stats

DEFAULT = "(default)"  # the variable is not set: NCCL's own choice
ALPHA = 0.05
TOLERANCE_PCT = 3.0
MIN_EFFECT_PCT = 1.0  # below this a "win" is not worth a recipe (and is often chance)
RESOLUTION = 0.01  # nccl-tests prints busbw with two decimals (GB/s)


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep, as the analysis needs it."""

    run_id: int
    settings: Mapping[str, str]  # every setting the run states (NCCL_* and others)
    collective: str
    nranks: int
    points: Mapping[int, float]  # size in bytes -> busbw GB/s


@dataclass(frozen=True)
class ValueStats:
    value: str
    n: int
    mean: float
    sd: float | None  # None with a single run
    low: float
    high: float
    run_ids: tuple[int, ...]

    @property
    def spread_pct(self) -> float | None:
        """Relative standard deviation over the replicates."""
        if self.sd is None or self.mean <= 0:
            return None
        return self.sd / self.mean * 100.0


@dataclass(frozen=True)
class SizeResult:
    size_bytes: int
    values: tuple[ValueStats, ...]  # in the sweep's value order; values without data left out
    best: str  # highest mean busbw
    winner: str | None  # ``best`` when it beats every other value beyond the noise
    margin_pct: float | None  # best against the runner-up
    p_value: float | None  # Welch, best against the runner-up (None: no replicates)
    verdict: str  # why there is or is not a winner, in words

    def stats_of(self, value: str) -> ValueStats | None:
        return next((v for v in self.values if v.value == value), None)


@dataclass(frozen=True)
class Crossover:
    """The winner changes between two neighbouring decided sizes."""

    below_bytes: int  # the last size ``before`` wins
    above_bytes: int  # the first size ``after`` wins
    before: str
    after: str


@dataclass(frozen=True)
class BenchmarkResult:
    collective: str
    nranks: int
    sizes: tuple[SizeResult, ...]
    crossovers: tuple[Crossover, ...]

    @property
    def label(self) -> str:
        return f"{self.collective} {self.nranks}r" if self.nranks else self.collective

    def winning_ranges(self, value: str) -> list[tuple[int, int]]:
        """[low, high] byte ranges of consecutive sizes that ``value`` wins."""
        ranges: list[tuple[int, int]] = []
        start: int | None = None
        last: int | None = None
        for size in self.sizes:
            if size.winner == value:
                start = size.size_bytes if start is None else start
                last = size.size_bytes
            elif start is not None and last is not None:
                ranges.append((start, last))
                start = last = None
        if start is not None and last is not None:
            ranges.append((start, last))
        return ranges


@dataclass(frozen=True)
class SweepAnalysis:
    settings: tuple[str, ...]  # the settings that differ between the runs
    values: tuple[str, ...]  # each combination of them, as a label
    benchmarks: tuple[BenchmarkResult, ...]
    replicated: bool  # every value has at least two runs of every benchmark it has
    value_settings: dict[str, dict[str, str]] = field(default_factory=dict)  # label -> settings
    runs_per_value: dict[str, int] = field(default_factory=dict)

    def win_counts(self) -> list[tuple[str, int]]:
        """(value, sizes won) of the values that win somewhere, most wins first."""
        counts: dict[str, int] = defaultdict(int)
        for bench in self.benchmarks:
            for size in bench.sizes:
                if size.winner:
                    counts[size.winner] += 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def wins(self) -> dict[str, list[tuple[BenchmarkResult, list[tuple[int, int]]]]]:
        """value -> [(benchmark, ranges it wins)] for the values that win anywhere."""
        out: dict[str, list[tuple[BenchmarkResult, list[tuple[int, int]]]]] = {}
        for value in self.values:
            for bench in self.benchmarks:
                ranges = bench.winning_ranges(value)
                if ranges:
                    out.setdefault(value, []).append((bench, ranges))
        return out


def varied_settings(runs: Sequence[SweepRun]) -> tuple[str, ...]:
    """Names whose value (unset = ``DEFAULT``) is not the same in every run."""
    names = sorted({name for run in runs for name in run.settings})
    return tuple(n for n in names if len({r.settings.get(n, DEFAULT) for r in runs}) > 1)


def value_label(settings: Mapping[str, str], names: Sequence[str]) -> str:
    """``Tree`` for a one-setting sweep; ``NCCL_ALGO=Tree, NCCL_PROTO=LL`` for several."""
    if not names:
        return DEFAULT
    if len(names) == 1:
        return settings.get(names[0], DEFAULT)
    return ", ".join(f"{n}={settings.get(n, DEFAULT)}" for n in names)


def analyse(runs: Iterable[SweepRun]) -> SweepAnalysis:
    items = list(runs)
    names = varied_settings(items)
    labels = {r.run_id: value_label(r.settings, names) for r in items}
    # The default first, then as the values first appear: the order people read a sweep in.
    values = tuple(dict.fromkeys(sorted(labels.values(), key=lambda v: v != DEFAULT)))
    value_settings = {
        labels[r.run_id]: {n: r.settings.get(n, DEFAULT) for n in names} for r in items
    }
    grouped: dict[tuple[str, int], dict[int, dict[str, list[tuple[float, int]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for run in items:
        for size, busbw in run.points.items():
            if busbw is None or not math.isfinite(busbw):
                continue
            grouped[(run.collective, run.nranks)][int(size)][labels[run.run_id]].append(
                (float(busbw), run.run_id)
            )
    benchmarks = []
    replicated = bool(grouped)
    for (collective, nranks), by_size in sorted(grouped.items()):
        sizes = []
        for size in sorted(by_size):
            result = _size_result(size, by_size[size], values)
            replicated = replicated and all(v.n >= 2 for v in result.values)
            sizes.append(result)
        benchmarks.append(
            BenchmarkResult(collective, nranks, tuple(sizes), tuple(_crossovers(sizes)))
        )
    runs_per_value = defaultdict(int)
    for label in labels.values():
        runs_per_value[label] += 1
    return SweepAnalysis(
        names, values, tuple(benchmarks), replicated, value_settings, dict(runs_per_value)
    )


def _size_result(
    size: int, by_value: Mapping[str, list[tuple[float, int]]], order: Sequence[str]
) -> SizeResult:
    values = tuple(_stats(value, by_value[value]) for value in order if by_value.get(value))
    ranked = sorted(values, key=lambda v: -v.mean)
    best = ranked[0]
    if len(ranked) == 1:
        return SizeResult(size, values, best.value, None, None, None, "only one value ran")
    runner = ranked[1]
    margin = (best.mean / runner.mean - 1.0) * 100.0 if runner.mean > 0 else None
    samples = {v: [x for x, _ in by_value[v]] for v in by_value}
    first = stats.welch(samples[best.value], samples[runner.value], sd_floor=_ROUNDING_SD)
    beaten = [_beats(best, other, samples) for other in ranked[1:]]
    reasons = [why for ok, why in beaten if not ok]
    winner = best.value if not reasons else None
    verdict = f"{best.value} wins: {beaten[0][1]}" if winner else f"within noise: {reasons[0]}"
    return SizeResult(
        size, values, best.value, winner, margin, first.p_two_sided if first else None, verdict
    )


_ROUNDING_SD = RESOLUTION / math.sqrt(12.0)


def _beats(
    best: ValueStats, other: ValueStats, samples: Mapping[str, list[float]]
) -> tuple[bool, str]:
    """(does ``best`` beat ``other`` beyond the noise, the reason in words)."""
    diff = best.mean - other.mean
    pct = diff / other.mean * 100.0 if other.mean > 0 else math.inf
    if diff <= RESOLUTION:
        return False, f"{best.value} vs {other.value}: {diff:.3f} GB/s, within the print step"
    test = stats.welch(samples[best.value], samples[other.value], sd_floor=_ROUNDING_SD)
    if test is None:
        ok = pct > TOLERANCE_PCT
        word = "above" if ok else "within"
        return ok, (
            f"{best.value} vs {other.value}: {pct:+.1f} %, {word} the ±{TOLERANCE_PCT:g} % "
            "tolerance (no replicates: noise unknown)"
        )
    ok = test.p_two_sided < ALPHA and pct >= MIN_EFFECT_PCT
    small = "" if pct >= MIN_EFFECT_PCT else f", under the {MIN_EFFECT_PCT:g} % floor"
    return ok, (
        f"{best.value} vs {other.value}: {pct:+.1f} %, Welch p = {test.p_two_sided:.3g}{small}"
    )


def _stats(value: str, observations: list[tuple[float, int]]) -> ValueStats:
    numbers = [x for x, _ in observations]
    return ValueStats(
        value=value,
        n=len(numbers),
        mean=stats.mean(numbers),
        sd=stats.sample_sd(numbers),
        low=min(numbers),
        high=max(numbers),
        run_ids=tuple(sorted({run_id for _, run_id in observations})),
    )


def _crossovers(sizes: Sequence[SizeResult]) -> list[Crossover]:
    decided = [(s.size_bytes, s.winner) for s in sizes if s.winner]
    return [
        Crossover(below, above, before, after)
        for (below, before), (above, after) in itertools.pairwise(decided)
        if before != after
    ]
