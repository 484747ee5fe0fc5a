"""Change-point detection for one benchmark series: the entry point the app and the CLI share.

    detect(values, direction="higher") -> Detection(change_points=(...), outliers=(...))
    python -m baselines.detect FILE.csv [--direction higher|lower]

Pipeline (each stage is one module in ``baselines.methods``):

1. non-finite values are set aside (reported as outliers) and the rest is rescaled by a power
   of two, so any finite input is safe from overflow and the thresholds are scale-free;
2. ``seasonal`` takes out a repeating pattern (the weekly rhythm of nightly runs), found on
   differenced differences so a trend cannot fake one;
3. ``noise`` estimates AR(1)-like correlation of the noise from first differences; its
   long-run factor widens the standard errors of window means and slopes;
4. ``variance_scan`` finds variance-only / bimodal changes and splits the series into noise
   regimes, each with its own sigma; a change must hold regime-wide, not just in the scan's
   windows;
5. ``hampel`` turns isolated 1-2 point spikes into outliers (against the regime's sigma) and
   replaces them by the local median;
6. ``pelt`` proposes step candidates on the cleaned series, weighted by regime;
7. ``step_test`` keeps the candidates that are significant, large, abrupt and a jump rather
   than a bend of a trend;
8. a step that coincides with a variance change and is small next to the new spread is the
   same event (a series that starts flipping between two levels moves its mean too) and is
   reported once, as the variance change;
9. the resolution floor: with ``resolution`` (the absolute step of the printed values, e.g.
   0.01 GB/s for nccl-tests busbw) the noise sigma is never below the rounding noise
   (step/√12), a step whose levels differ by no more than one print step is rounding, and
   so is a variance change whose spreads both stay within one step;
10. ``drift`` cuts the series without its steps into lines and reports each sustained slope
    beyond the (long-run) noise once, with its start, end and rate.

Pure Python + numpy: this module must never import Django.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from typing import Any, Literal

import numpy as np

from baselines.methods import drift, hampel, noise, pelt, seasonal, step_test, variance_scan
from baselines.methods.robust import (
    diff_sigma,
    diff_sigma_q90,
    relative_change_pct,
    sigma_floor,
)

Direction = Literal["higher", "lower"]  # which way is better
ChangeDirection = Literal["regression", "improvement"]
ChangeKind = Literal["step", "variance", "drift"]


@dataclass(frozen=True)
class ChangePoint:
    """One change. ``index`` is the first point of the new regime (0-based, input order).

    ``step``: the level moved; ``magnitude_pct`` is (after - before) / |before| in percent,
    ``before``/``after`` are robust levels of the windows each side.
    ``variance``: the spread moved (noise grew, or the series started or stopped flipping
    between two levels); ``magnitude_pct`` is the relative change of the spread in percent
    (+150 = 2.5x noisier), ``before``/``after`` are the spreads (sigma, in value units).
    ``score`` is the statistic that decided it: the step z, or the variance scan z (normalised
    log ratio of spreads).
    ``end_index`` is set on a step that is undone by a later step within one window (a short
    regression): the index where the level came back.
    ``drift``: the level moved gradually, a sustained slope beyond the noise. ``index`` is the
    first point of the drift and ``end_index`` its last one (always set); ``before``/``after``
    are the fitted levels there, ``magnitude_pct`` the change between them in percent of
    ``before``, ``rate_pct`` that change per ``rate_unit`` ("day" when the points have times,
    "run" otherwise) and ``score`` the slope's t statistic (against the long-run noise).
    """

    index: int
    direction: ChangeDirection
    magnitude_pct: float
    kind: ChangeKind
    before: float = math.nan
    after: float = math.nan
    score: float = 0.0
    end_index: int | None = None
    rate_pct: float | None = None  # drift only: % of ``before`` per rate_unit
    rate_unit: Literal["day", "run"] | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("magnitude_pct", "before", "after", "score", "rate_pct"):
            value = data[key]
            if value is not None:
                data[key] = round(value, 6) if math.isfinite(value) else None
        for key in ("end_index", "rate_pct", "rate_unit"):
            if getattr(self, key) is None:
                del data[key]
        return data


@dataclass(frozen=True)
class Detection:
    change_points: tuple[ChangePoint, ...]
    outliers: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "change_points": [cp.to_json() for cp in self.change_points],
            "outliers": list(self.outliers),
        }


@dataclass(frozen=True)
class Tuning:
    """Every knob of ``detect``; the defaults are what the benchmark measured."""

    min_magnitude_pct: float = 1.5  # smallest step worth an alert, % of the level before
    step_z: float = 5.0  # significance of the windowed step test (in standard errors)
    window: int = 40  # most points each side a step is judged on
    trend_window: int = 80  # points each side the drift check fits its line on
    min_segment: int = 3  # shortest run of points that can be a level of its own
    penalty: float = 2.0  # segmentation penalty per change, x log(n) noise units
    min_abrupt_z: float = 4.0  # the step must stay significant on top of a local trend
    outlier_k: float = 4.0  # Hampel threshold, in local sigmas
    hampel_half_window: int = 5
    max_outlier_run: int = 2  # longer runs of far-out points are a change, not outliers
    variance_window: int = 100  # differences each side of a variance split
    variance_min_window: int = 30  # near the series' ends windows may shrink to this
    variance_z: float = 8.0  # normalised log spread ratio (≈ 1.8x the spread at full windows)
    variance_min_ratio: float = 1.4  # spread ratio between whole regimes, either way
    drift_min_pct: float = 3.0  # smallest drift reported: total change, % of the level
    drift_z: float = 6.0  # slope t statistic, against the long-run (AR(1)-aware) noise
    drift_penalty: float = 3.0  # line segmentation penalty per segment, x log(n) noise units
    drift_min_len: int = 15  # points a drift must span
    season_max_ratio: float = 0.8  # lag-p / lag-1 difference spread that means a pattern
    max_period: int = 24  # longest repeating pattern looked for (0: none), in points

    def __post_init__(self) -> None:
        problems = []
        if self.min_segment < 2:
            problems.append("min_segment must be at least 2")
        if self.window < self.min_segment or self.trend_window < self.min_segment:
            problems.append("window and trend_window must be at least min_segment")
        if not 5 <= self.variance_min_window <= self.variance_window:
            problems.append("need 5 <= variance_min_window <= variance_window")
        if self.hampel_half_window < 1 or self.max_outlier_run < 0:
            problems.append("hampel_half_window must be >= 1 and max_outlier_run >= 0")
        if self.variance_min_ratio < 1.0:
            problems.append("variance_min_ratio must be >= 1")
        if self.drift_min_len < 3 or self.max_period < 0 or not 0 < self.season_max_ratio < 1:
            problems.append("need drift_min_len >= 3, max_period >= 0, 0 < season_max_ratio < 1")
        thresholds = (
            self.min_magnitude_pct,
            self.step_z,
            self.penalty,
            self.min_abrupt_z,
            self.drift_min_pct,
            self.drift_z,
            self.drift_penalty,
        )
        if any(not math.isfinite(t) or t < 0 for t in thresholds) or self.outlier_k <= 0:
            problems.append("thresholds must be finite and non-negative (outlier_k positive)")
        if problems:
            raise ValueError("bad tuning: " + "; ".join(problems))

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any]) -> Tuning:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise TypeError(f"unknown tuning option(s) {unknown}; known: {sorted(known)}")
        return cls(**kwargs)


def _regime_sigmas(x: np.ndarray, bounds: list[int], base: float, scale: float) -> np.ndarray:
    """Per-point noise sigma: one value per variance regime (the larger of two estimates).

    Never below a tenth of the series-wide sigma: a regime that happens to be constant must
    not make every later wiggle infinitely significant.
    """
    sigma = np.empty(x.size)
    for lo, hi in itertools.pairwise(bounds):
        part = x[lo:hi]
        s = base
        if part.size >= 10:
            s = max(diff_sigma(part), diff_sigma_q90(np.diff(part)), 0.1 * base)
        sigma[lo:hi] = sigma_floor(s, scale)
    return sigma


def _drifts(
    cleaned: np.ndarray,
    steps: list[step_test.StepStat],
    breaks: tuple[int, ...],
    base_sigma: float,
    phi: float,
    kappa: float,
    scale: float,
    direction: Direction,
    tune: Tuning,
) -> list[ChangePoint]:
    """Drift change points: the series without its outliers and without the confirmed steps
    (each taken out by its jump), segmented into lines."""
    destepped = cleaned.copy()
    for s in steps:
        destepped[s.index :] -= s.jump
    sigma_lr = noise.marginal_from_diff_sigma(base_sigma, phi) * kappa
    found = []
    for d in drift.find(
        destepped,
        sigma_lr,
        scale,
        kappa=kappa,
        penalty=tune.drift_penalty,
        min_z=tune.drift_z,
        min_pct=tune.drift_min_pct,
        min_len=tune.drift_min_len,
        breaks=breaks,
    ):
        # Levels as they were: the steps before the drift's start and end put back.
        shift_start = sum(s.jump for s in steps if s.index <= d.start)
        shift_end = sum(s.jump for s in steps if s.index <= d.end)
        before, after = d.start_value + shift_start, d.end_value + shift_end
        change = d.end_value - d.start_value
        pct = relative_change_pct(before, before + change, scale)
        found.append(
            ChangePoint(
                index=d.start,
                direction=_step_direction(change, direction),
                magnitude_pct=pct,
                kind="drift",
                before=before,
                after=after,
                score=d.z,
                end_index=d.end,
                rate_pct=pct / max(1, d.end - d.start),
                rate_unit="run",
            )
        )
    return found


def _step_direction(delta: float, direction: Direction) -> ChangeDirection:
    better = delta > 0 if direction == "higher" else delta < 0
    return "improvement" if better else "regression"


def _analyse(
    x: np.ndarray, direction: Direction, tune: Tuning, resolution: float = 0.0
) -> tuple[list[ChangePoint], list[int]]:
    """Change points and outliers of a finite, rescaled series (positions within ``x``);
    ``resolution`` is the print step in the same (rescaled) units."""
    n = x.size
    level = float(np.median(x))
    scale = max(abs(level), float(np.mean(np.abs(x))))
    rounding_sigma = resolution / math.sqrt(12.0)  # sd of a uniform rounding error
    # A repeating pattern (weekly rhythm of nightly runs) is taken out first: every stage
    # after this one sees levels, slopes and noise only.
    if tune.max_period >= 2 and resolution == 0:
        x, _ = seasonal.remove(x, max_period=tune.max_period, max_ratio=tune.season_max_ratio)
    base_sigma = max(sigma_floor(diff_sigma(x), scale), rounding_sigma)
    # AR(1)-like noise: window means and slopes wander more than independent points allow.
    phi = noise.ar1_phi(x)
    kappa = noise.long_run_factor(phi)

    # The scan reads the raw series: cleaning spikes first would also strip the minority level
    # of a series that flips between two levels. Its clipping and threshold absorb spikes.
    variance = variance_scan.scan(
        x,
        window=tune.variance_window,
        min_window=tune.variance_min_window,
        min_z=tune.variance_z,
    )
    # A scan peak is a window-sized view; the change must also hold regime-wide (the spread
    # of everything up to the next change differs enough), or it was a passing fluctuation.
    # That check reads the series without its isolated spikes: a few of them must not make
    # an otherwise quiet regime look noisy.
    _, despiked = hampel.hampel(
        x, np.full(n, base_sigma), half_window=tune.hampel_half_window, k=tune.outlier_k
    )
    while variance:
        bounds = [0, *(v.index for v in variance), n]
        check = _regime_sigmas(despiked, bounds, base_sigma, scale)
        weak = [
            k
            for k, v in enumerate(variance)
            if abs(math.log(check[v.index] / check[v.index - 1]))
            < math.log(tune.variance_min_ratio)
        ]
        if not weak:
            break
        del variance[min(weak, key=lambda k: abs(variance[k].z))]
    sigma = _regime_sigmas(x, [0, *(v.index for v in variance), n], base_sigma, scale)
    sigma = np.maximum(sigma, rounding_sigma)

    # Outliers are judged against each regime's own noise: in a stretch that flips between
    # two levels, the minority level is part of the pattern, not a string of outliers.
    outliers, cleaned = hampel.hampel(
        x,
        sigma,
        half_window=tune.hampel_half_window,
        k=tune.outlier_k,
        max_run=tune.max_outlier_run,
    )
    candidates = pelt.segment(
        cleaned, 1.0 / sigma**2, penalty_factor=tune.penalty, min_size=tune.min_segment
    )
    rules = step_test.StepRules(
        window=tune.window,
        trend_window=tune.trend_window,
        min_size=tune.min_segment,
        min_z=tune.step_z,
        min_pct=tune.min_magnitude_pct,
        min_abrupt_z=tune.min_abrupt_z,
        kappa=kappa,
    )
    steps = step_test.confirm(cleaned, sigma, candidates, rules, scale)

    # A series that starts flipping between two levels also moves its mean; unless the move
    # is large next to the new spread, that step is the variance change seen again.
    near = max(3, tune.variance_window // 4)
    kept = []
    for s in steps:
        spreads = [
            max(sigma[v.index - 1], sigma[v.index])
            for v in variance
            if abs(v.index - s.index) <= near
        ]
        if spreads and abs(s.after - s.before) < 2.0 * max(spreads):
            continue
        if resolution > 0 and abs(s.after - s.before) <= resolution * (1 + 1e-9):
            continue  # one print step: 0.01 -> 0.02 GB/s is rounding, not "+100 %"
        kept.append(s)
    if resolution > 0:
        variance = [
            v for v in variance if max(sigma[v.index - 1], sigma[v.index]) > resolution * (1 + 1e-9)
        ]

    found: list[ChangePoint] = []
    for k, s in enumerate(kept):
        end = None
        nxt = kept[k + 1] if k + 1 < len(kept) else None
        delta = s.after - s.before
        if (
            nxt is not None
            and nxt.index - s.index <= tune.window
            and (nxt.after - nxt.before) * delta < 0
            and abs(nxt.after - s.before) <= 0.5 * abs(delta)
        ):
            end = nxt.index
        found.append(
            ChangePoint(
                index=s.index,
                direction=_step_direction(delta, direction),
                magnitude_pct=s.pct,
                kind="step",
                before=s.before,
                after=s.after,
                score=s.z,
                end_index=end,
            )
        )
    breaks = tuple(sorted({*(s.index for s in kept), *(v.index for v in variance)}))
    found.extend(_drifts(cleaned, kept, breaks, base_sigma, phi, kappa, scale, direction, tune))
    for v in variance:
        before_sigma = float(sigma[v.index - 1])
        after_sigma = float(sigma[v.index])
        found.append(
            ChangePoint(
                index=v.index,
                # More scatter is worse whichever way is better for the level.
                direction="regression" if after_sigma > before_sigma else "improvement",
                magnitude_pct=(after_sigma / before_sigma - 1.0) * 100.0,
                kind="variance",
                before=before_sigma,
                after=after_sigma,
                score=v.z,
            )
        )
    found.sort(key=lambda c: (c.index, c.kind))
    return found, [int(i) for i in outliers]


def detect(
    values: Sequence[float],
    *,
    direction: Direction = "higher",
    resolution: float = 0.0,
    times: Sequence[Any] | None = None,
    **tuning: Any,
) -> Detection:
    """Change points and outliers of a series given in order (oldest first).

    Non-finite values (NaN, ±inf) are not analysed and are listed as outliers; indices always
    refer to positions in ``values``. Fewer than ``2 x min_segment`` finite points give no
    change points. ``resolution`` is the absolute print step of the values (0 = exact; see
    stage 9 of the module docstring). ``times`` (optional, one per value: datetimes, or
    numbers of seconds) turn a drift's rate into percent per day instead of per run.
    ``tuning`` overrides fields of :class:`Tuning`.
    """
    if direction not in ("higher", "lower"):
        raise ValueError(f"direction must be 'higher' or 'lower', not {direction!r}")
    if not (math.isfinite(resolution) and resolution >= 0):
        raise ValueError(f"resolution must be a finite number >= 0, not {resolution!r}")
    tune = Tuning.from_kwargs(tuning)
    arr = np.asarray(values, dtype=float).ravel()
    finite = np.isfinite(arr)
    positions = np.flatnonzero(finite)
    bad = [int(i) for i in np.flatnonzero(~finite)]
    x = arr[finite]
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    if x.size < 2 * tune.min_segment or peak == 0.0:
        return Detection(change_points=(), outliers=tuple(bad))

    # Rescale by a power of two (exact) so squares cannot overflow and thresholds that are
    # relative to the data's magnitude behave the same for 1e-300 and 1e300.
    exponent = int(np.frexp(peak)[1])
    found, outliers = _analyse(
        np.ldexp(x, -exponent), direction, tune, float(np.ldexp(resolution, -exponent))
    )

    def back(v: float) -> float:
        return float(np.ldexp(v, exponent)) if math.isfinite(v) else v

    day_of = _days(times, arr.size)
    change_points = []
    for c in found:
        index = int(positions[c.index])
        end = None if c.end_index is None else int(positions[c.end_index])
        rate, unit = c.rate_pct, c.rate_unit
        if c.kind == "drift" and end is not None:
            # Per day where the points have times (and the drift took time), per run else.
            span = (day_of[end] - day_of[index]) if day_of is not None else 0.0
            rate, unit = (
                (c.magnitude_pct / span, "day")
                if span > 0
                else (c.magnitude_pct / max(1, end - index), "run")
            )
        change_points.append(
            replace(
                c,
                index=index,
                magnitude_pct=float(c.magnitude_pct),
                before=back(c.before),
                after=back(c.after),
                score=float(c.score),
                end_index=end,
                rate_pct=None if rate is None else float(rate),
                rate_unit=unit,
            )
        )
    all_outliers = sorted({*bad, *(int(positions[i]) for i in outliers)})
    return Detection(change_points=tuple(change_points), outliers=tuple(all_outliers))


def _days(times: Sequence[Any] | None, n: int) -> list[float] | None:
    """Each point's time in days (datetimes, or numbers of seconds), or None without times."""
    if times is None:
        return None
    if len(times) != n:
        raise ValueError(f"times has {len(times)} entries for {n} values")
    days = []
    for t in times:
        seconds = t.timestamp() if isinstance(t, datetime) else float(t)
        days.append(seconds / 86400.0)
    return days


# ---------------------------------------------------------------------------------------- CLI


class CsvError(ValueError):
    """The input file is not a usable ``x,value`` CSV; the message says where and why."""


def read_series(lines: Sequence[str] | Any) -> tuple[list[str], list[float]]:
    """(x labels, values) from CSV text with a header naming a ``value`` column.

    Blank lines are skipped; a value that is not a finite number is an error naming the line.
    """
    reader = csv.reader(lines)
    header: list[str] | None = None
    xs: list[str] = []
    values: list[float] = []
    value_col = x_col = -1
    for line_no, row in enumerate(reader, start=1):
        if not row or all(not cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            if "value" not in header:
                raise CsvError(f"line {line_no}: header must name a 'value' column, got {row}")
            value_col = header.index("value")
            x_col = header.index("x") if "x" in header else -1
            continue
        if value_col >= len(row):
            raise CsvError(f"line {line_no}: no 'value' column in {row}")
        raw = row[value_col].strip()
        try:
            value = float(raw)
        except ValueError:
            raise CsvError(f"line {line_no}: value {raw!r} is not a number") from None
        if not math.isfinite(value):
            raise CsvError(f"line {line_no}: value {raw!r} is not a finite number")
        values.append(value)
        xs.append(row[x_col].strip() if 0 <= x_col < len(row) else str(len(xs)))
    if header is None:
        raise CsvError("empty file: expected a header 'x,value' and one row per point")
    return xs, values


def _times_of(xs: Sequence[str]) -> list[datetime] | None:
    """The x labels as datetimes when every one is an ISO date or date-time (so a drift's
    rate can be per day), else None (versions, run numbers: rates per run)."""
    if not all("-" in x for x in xs):
        return None  # "20240101" may be a run number; ISO dates here are written with dashes
    try:
        times = [datetime.fromisoformat(x) for x in xs]
    except ValueError:
        return None
    if any(t.tzinfo is None for t in times) and any(t.tzinfo is not None for t in times):
        return None  # naive and aware times cannot be subtracted
    return times or None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m baselines.detect",
        description="Change points and outliers of one series (CSV columns x,value, in order).",
    )
    parser.add_argument("file", help="CSV file with a header row naming x and value; - = stdin")
    parser.add_argument(
        "--direction",
        choices=("higher", "lower"),
        default="higher",
        help="which way is better (busbw: higher, latency: lower)",
    )
    parser.add_argument(
        "--min-magnitude-pct",
        type=float,
        default=Tuning.min_magnitude_pct,
        help="smallest step reported, percent of the level before (default %(default)s)",
    )
    parser.add_argument(
        "--resolution",
        type=float,
        default=0.0,
        help="absolute print step of the values (nccl-tests busbw: 0.01); changes within "
        "one step are rounding (default %(default)s: exact values)",
    )
    args = parser.parse_args(argv)
    if not (math.isfinite(args.resolution) and args.resolution >= 0):
        print(
            f"error: --resolution must be a finite number >= 0, not {args.resolution}",
            file=sys.stderr,
        )
        return 2
    try:
        if args.file == "-":
            xs, values = read_series(sys.stdin)
        else:
            with open(args.file, newline="", encoding="utf-8-sig") as fh:
                xs, values = read_series(fh)
    except (OSError, UnicodeDecodeError, CsvError, csv.Error) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 2
    result = detect(
        values,
        direction=args.direction,
        resolution=args.resolution,
        times=_times_of(xs),
        min_magnitude_pct=args.min_magnitude_pct,
    )
    out = result.to_json()
    # The x label of each change makes the output readable without the file at hand.
    for cp in out["change_points"]:
        cp["x"] = xs[cp["index"]]
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
