"""Compare a run's bandwidth curve with a baseline's, message size by message size.

    compare_curves(reference, candidate, tolerance_pct=2.0) -> CurveComparison

Each side is one or several runs: a mapping ``size_bytes -> values`` (one value per run), or
a table with ``size_bytes`` and ``value`` columns and optionally ``run_id`` (a pandas
DataFrame, or any iterable of such rows); with ``run_id`` each run counts once per size
(its values at that size are averaged first).

Per size: delta% of the candidate's mean against the reference's mean, with an uncertainty
band whose source depends on the evidence, and always stated in ``method``:

* **bootstrap**: at least ``min_bootstrap_runs`` runs on each side at that size: percentile
  interval of delta% over ``resamples`` seeded resamples of each side (deterministic);
* **pooled repeats**: fewer runs, but some side has repeats somewhere: delta% +- z x s x
  sqrt(1/n_ref + 1/n_cand), s being the run-to-run relative spread at that size shrunk
  towards the curve-wide spread (two or three repeats say little about one size alone);
* **tolerance**: no repeats at all (one run against one run): the band is +-tolerance and the
  output says the noise level was not measured.

A size changed when its band excludes zero *and* |delta%| reaches ``tolerance_pct`` (the
baseline's tolerance: what is worth reporting). Contiguous changed sizes form ranges
("256 MiB-8 GiB -9%"); the curve verdict is improved / regressed / mixed / unchanged over
ranges of at least ``min_range_sizes`` sizes, so one size out of twenty passing a 95 %
interval by chance does not flip a curve.

**Resolution floor.** Benchmarks print rounded numbers (nccl-tests: busbw with two decimals,
so a tiny message reads 0.01 or 0.02 GB/s): ``resolution`` is the absolute step of the printed
values (one number, or ``size -> step``). Rounding moves each mean by up to half a step, so a
difference of means within one step is rounding, not a change: such a size is unchanged
whatever its Δ% says (0.01 -> 0.02 is "+100 %"), and every band is widened by one step
relative to the reference. Pure Python + numpy; no Django, no pandas needed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

Change = Literal["improved", "regressed", "unchanged"]
Verdict = Literal["improved", "regressed", "mixed", "unchanged"]
Method = Literal["bootstrap", "pooled repeats", "tolerance"]

# Weight (in degrees of freedom) of the curve-wide spread when shrinking a size's own spread.
PRIOR_DF = 4.0


@dataclass(frozen=True)
class SizeComparison:
    size_bytes: int
    reference: float  # mean over reference runs
    candidate: float
    delta_pct: float
    low_pct: float  # uncertainty band of delta_pct
    high_pct: float
    change: Change
    n_reference: int
    n_candidate: int
    method: Method
    resolution: float = 0.0  # absolute print step of the values at this size (0 = exact)
    below_resolution: bool = False  # the means differ by no more than one print step

    def to_json(self) -> dict[str, Any]:
        return {
            "size_bytes": self.size_bytes,
            "reference": _num(self.reference),
            "candidate": _num(self.candidate),
            "delta_pct": _num(self.delta_pct),
            "low_pct": _num(self.low_pct),
            "high_pct": _num(self.high_pct),
            "change": self.change,
            "n_reference": self.n_reference,
            "n_candidate": self.n_candidate,
            "method": self.method,
            "resolution": self.resolution,
            "below_resolution": self.below_resolution,
        }


@dataclass(frozen=True)
class ChangedRange:
    low_bytes: int
    high_bytes: int
    direction: Literal["improved", "regressed"]
    delta_pct: float  # mean delta% over the range's sizes
    sizes: int  # how many sizes the range holds
    label: str  # "256 MiB-8 GiB -9% mean, -11% at 1 GiB" (printed with en dash and minus)
    extreme_pct: float = 0.0  # the range's largest change (its worst size when regressed)
    extreme_bytes: int = 0  # the size it is at

    def to_json(self) -> dict[str, Any]:
        return {
            "low_bytes": self.low_bytes,
            "high_bytes": self.high_bytes,
            "direction": self.direction,
            "delta_pct": _num(self.delta_pct),
            "extreme_pct": _num(self.extreme_pct),
            "extreme_bytes": self.extreme_bytes,
            "sizes": self.sizes,
            "label": self.label,
        }


@dataclass(frozen=True)
class CurveComparison:
    verdict: Verdict
    sizes: tuple[SizeComparison, ...]
    ranges: tuple[ChangedRange, ...]  # ranges that decide the verdict
    isolated: tuple[int, ...]  # changed sizes too few in a row to count for the verdict
    method: str  # how the bands were obtained, in words
    noise_pct: float | None  # curve-wide run-to-run spread (%), None when not measured
    tolerance_pct: float
    confidence: float
    missing_sizes: tuple[int, ...]  # sizes only one side has (not compared)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "summary": self.summary(),
            "method": self.method,
            "noise_pct": None if self.noise_pct is None else _num(self.noise_pct),
            "tolerance_pct": self.tolerance_pct,
            "confidence": self.confidence,
            "sizes": [s.to_json() for s in self.sizes],
            "ranges": [r.to_json() for r in self.ranges],
            "isolated": list(self.isolated),
            "missing_sizes": list(self.missing_sizes),
        }

    def summary(self) -> str:
        """One line: "regressed: 256 MiB-8 GiB -9%" or "unchanged within +-2%"."""
        if not self.ranges:
            return f"{self.verdict} within \u00b1{self.tolerance_pct:g}%"
        return f"{self.verdict}: " + ", ".join(r.label for r in self.ranges)


# ------------------------------------------------------------------------------- inputs


def _num(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def _as_runs(side: Any) -> dict[int, list[float]]:
    """size -> one value per run, from any of the accepted input shapes."""
    if isinstance(side, Mapping):
        out: dict[int, list[float]] = {}
        for size, values in side.items():
            seq = [values] if np.isscalar(values) else list(values)
            out[int(size)] = [float(v) for v in seq]
        return out
    if hasattr(side, "columns"):  # a DataFrame: read columns without needing pandas here
        columns = set(side.columns)
        run_ids = list(side["run_id"]) if "run_id" in columns else None
        rows: Iterable[Mapping[str, Any]] = (
            {
                "size_bytes": size,
                "value": value,
                **({"run_id": run_ids[k]} if run_ids is not None else {}),
            }
            for k, (size, value) in enumerate(zip(side["size_bytes"], side["value"], strict=True))
        )
    else:
        rows = side
    per_run: dict[tuple[Any, int], list[float]] = defaultdict(list)
    loose: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        size = int(row["size_bytes"] if "size_bytes" in row else row["size"])
        value = float(row["value"])
        if row.get("run_id") is not None:
            per_run[(row["run_id"], size)].append(value)
        else:
            loose[size].append(value)
    out = {size: list(values) for size, values in loose.items()}
    for (_, size), values in per_run.items():
        finite = [v for v in values if math.isfinite(v)]
        # A run with in-place and out-of-place numbers at one size is still one run.
        out.setdefault(size, []).append(sum(finite) / len(finite) if finite else math.nan)
    return out


def _resolution_reader(resolution: float | Mapping[int, float]) -> Callable[[int], float]:
    """size -> print step; a mapping may omit sizes (exact values there)."""
    if isinstance(resolution, Mapping):
        steps = {int(k): float(v) for k, v in resolution.items()}
        bad = [v for v in steps.values() if not math.isfinite(v) or v < 0]
        if bad:
            raise ValueError(f"resolution must be finite and >= 0, not {bad[0]}")
        return lambda size: steps.get(int(size), 0.0)
    step = float(resolution)
    if not math.isfinite(step) or step < 0:
        raise ValueError(f"resolution must be finite and >= 0, not {resolution}")
    return lambda size: step


def _clean(values: list[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    return arr[np.isfinite(arr) & (arr > 0)]


# -------------------------------------------------------------------------------- output


def human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _pct_text(delta: float) -> str:
    text = f"{abs(delta):.0f}" if abs(delta) >= 10 else f"{abs(delta):.1f}"
    return ("+" if delta > 0 else "\u2212") + text + "%"


def _range_label(low: int, high: int, mean: float, extreme: float, extreme_bytes: int) -> str:
    """ "32 MiB -11%"; "32 MiB-512 MiB -4.1% mean, -11% at 32 MiB": a range's mean alone
    would hide its worst size."""
    if low == high:
        return f"{human_bytes(low)} {_pct_text(mean)}"
    text = f"{human_bytes(low)}\u2013{human_bytes(high)} {_pct_text(mean)}"
    if _pct_text(extreme) == _pct_text(mean):
        return text
    return f"{text} mean, {_pct_text(extreme)} at {human_bytes(extreme_bytes)}"


# ------------------------------------------------------------------------------- compare


def _relative_spread(values: np.ndarray) -> tuple[float, int]:
    """(sample sd / mean, degrees of freedom); (0, 0) for a single value."""
    if values.size < 2:
        return 0.0, 0
    return float(np.std(values, ddof=1) / np.mean(values)), values.size - 1


def _bootstrap_band(
    ref: np.ndarray, cand: np.ndarray, rng: np.random.Generator, resamples: int, conf: float
) -> tuple[float, float]:
    ref_means = rng.choice(ref, size=(resamples, ref.size), replace=True).mean(axis=1)
    cand_means = rng.choice(cand, size=(resamples, cand.size), replace=True).mean(axis=1)
    deltas = (cand_means / ref_means - 1.0) * 100.0
    tail = (1.0 - conf) / 2.0 * 100.0
    low, high = np.percentile(deltas, [tail, 100.0 - tail])
    return float(low), float(high)


def compare_curves(
    reference: Any,
    candidate: Any,
    *,
    tolerance_pct: float = 2.0,
    direction: Literal["higher", "lower"] = "higher",
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    min_bootstrap_runs: int = 5,
    min_range_sizes: int = 2,
    resolution: float | Mapping[int, float] = 0.0,
) -> CurveComparison:
    """Per-size and whole-curve comparison of ``candidate`` against ``reference``.

    ``resolution``: the absolute step of the printed values (see the module docstring)."""
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0.5 and 1, not {confidence}")
    if tolerance_pct < 0 or not math.isfinite(tolerance_pct):
        raise ValueError(f"tolerance_pct must be a finite number >= 0, not {tolerance_pct}")
    if direction not in ("higher", "lower"):
        raise ValueError(f"direction must be 'higher' or 'lower', not {direction!r}")
    step_of = _resolution_reader(resolution)
    ref_runs = {s: _clean(v) for s, v in _as_runs(reference).items()}
    cand_runs = {s: _clean(v) for s, v in _as_runs(candidate).items()}
    ref_runs = {s: v for s, v in ref_runs.items() if v.size}
    cand_runs = {s: v for s, v in cand_runs.items() if v.size}
    common = sorted(set(ref_runs) & set(cand_runs))
    missing = tuple(sorted(set(ref_runs) ^ set(cand_runs)))

    # Run-to-run spread per size, pooled over both sides, and its curve-wide pool.
    spread: dict[int, tuple[float, int]] = {}
    for size in common:
        pairs = [_relative_spread(ref_runs[size]), _relative_spread(cand_runs[size])]
        df = sum(d for _, d in pairs)
        spread[size] = (math.sqrt(sum(s * s * d for s, d in pairs) / df), df) if df else (0.0, 0)
    total_df = sum(d for _, d in spread.values())
    pooled = math.sqrt(sum(s * s * d for s, d in spread.values()) / total_df) if total_df else None
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    rng = np.random.default_rng(seed)

    results: list[SizeComparison] = []
    used: set[str] = set()
    for size in common:
        ref, cand = ref_runs[size], cand_runs[size]
        ref_mean, cand_mean = float(np.mean(ref)), float(np.mean(cand))
        delta = (cand_mean / ref_mean - 1.0) * 100.0
        method: Method
        if min(ref.size, cand.size) >= min_bootstrap_runs:
            method = "bootstrap"
            low, high = _bootstrap_band(ref, cand, rng, resamples, confidence)
        elif pooled is not None:
            method = "pooled repeats"
            own, df = spread[size]
            s = math.sqrt((own * own * df + pooled * pooled * PRIOR_DF) / (df + PRIOR_DF))
            half = z * s * math.sqrt(1.0 / ref.size + 1.0 / cand.size) * 100.0
            low, high = delta - half, delta + half
        else:
            method = "tolerance"
            low, high = delta - tolerance_pct, delta + tolerance_pct
        used.add(method)
        step = step_of(size)
        floored = step > 0 and abs(cand_mean - ref_mean) <= step * (1 + 1e-9)
        if step > 0:
            rounding = step / ref_mean * 100.0
            low, high = low - rounding, high + rounding
        significant = low > 0 or high < 0
        change: Change = "unchanged"
        if significant and abs(delta) >= tolerance_pct and not floored:
            better = delta > 0 if direction == "higher" else delta < 0
            change = "improved" if better else "regressed"
        results.append(
            SizeComparison(
                size_bytes=size,
                reference=ref_mean,
                candidate=cand_mean,
                delta_pct=delta,
                low_pct=low,
                high_pct=high,
                change=change,
                n_reference=int(ref.size),
                n_candidate=int(cand.size),
                method=method,
                resolution=step,
                below_resolution=floored,
            )
        )

    ranges, isolated = _ranges(results, min_range_sizes, tolerance_pct)
    directions = {r.direction for r in ranges}
    verdict: Verdict = "unchanged"
    if len(directions) > 1:
        verdict = "mixed"
    elif directions == {"regressed"}:
        verdict = "regressed"
    elif directions == {"improved"}:
        verdict = "improved"
    return CurveComparison(
        verdict=verdict,
        sizes=tuple(results),
        ranges=tuple(ranges),
        isolated=tuple(isolated),
        method=_describe(used, pooled, tolerance_pct, confidence, resamples, seed)
        + (
            "; differences within one print step of the values are rounding, not change"
            if any(r.resolution > 0 for r in results)
            else ""
        ),
        noise_pct=None if pooled is None else pooled * 100.0,
        tolerance_pct=tolerance_pct,
        confidence=confidence,
        missing_sizes=missing,
    )


def _ranges(
    results: list[SizeComparison], min_range_sizes: int, tolerance_pct: float
) -> tuple[list[ChangedRange], list[int]]:
    """Contiguous runs of sizes changed the same way and by similar amounts; short runs come
    back as isolated."""
    ranges: list[ChangedRange] = []
    isolated: list[int] = []
    # With very few sizes on the curve, one size is all the evidence there can be.
    needed = min(min_range_sizes, max(1, len(results) // 3))
    k = 0
    while k < len(results):
        change = results[k].change
        end = k
        while end + 1 < len(results) and results[end + 1].change == change:
            end += 1
        if change != "unchanged":
            block = results[k : end + 1]
            if len(block) >= needed:
                ranges += [
                    _changed_range(part, change)
                    for part in _agreeing_parts(block, needed, tolerance_pct)
                ]
            else:
                isolated.extend(s.size_bytes for s in block)
        k = end + 1
    return ranges, isolated


def _agrees(magnitudes: list[float], tolerance_pct: float) -> bool:
    """Sizes agree when the largest change is at most twice the smallest plus the tolerance:
    -9 % and -10 % agree, -11 % and -2.5 % do not (one range would say "-4 %" for both)."""
    return max(magnitudes) <= 2 * min(magnitudes) + tolerance_pct


def _agreeing_parts(
    block: list[SizeComparison], needed: int, tolerance_pct: float
) -> list[list[SizeComparison]]:
    """``block`` (sizes changed the same way) cut where neighbouring sizes disagree, each part
    still long enough to be a range (a short part joins the neighbour closest to it)."""
    parts: list[list[SizeComparison]] = [[block[0]]]
    for size in block[1:]:
        magnitudes = [abs(s.delta_pct) for s in (*parts[-1], size)]
        if _agrees(magnitudes, tolerance_pct):
            parts[-1].append(size)
        else:
            parts.append([size])
    while len(parts) > 1 and (short := next((p for p in parts if len(p) < needed), None)):
        i = parts.index(short)
        mean = float(np.mean([abs(s.delta_pct) for s in short]))
        neighbours = [j for j in (i - 1, i + 1) if 0 <= j < len(parts)]
        j = min(neighbours, key=lambda n: abs(np.mean([abs(s.delta_pct) for s in parts[n]]) - mean))
        low, high = sorted((i, j))
        parts[low : high + 1] = [parts[low] + parts[high]]
    return parts


def _changed_range(part: list[SizeComparison], change: Any) -> ChangedRange:
    mean = float(np.mean([s.delta_pct for s in part]))
    extreme = max(part, key=lambda s: abs(s.delta_pct))
    low, high = part[0].size_bytes, part[-1].size_bytes
    return ChangedRange(
        low_bytes=low,
        high_bytes=high,
        direction=change,
        delta_pct=mean,
        sizes=len(part),
        label=_range_label(low, high, mean, extreme.delta_pct, extreme.size_bytes),
        extreme_pct=extreme.delta_pct,
        extreme_bytes=extreme.size_bytes,
    )


def _describe(
    used: set[str],
    pooled: float | None,
    tolerance_pct: float,
    confidence: float,
    resamples: int,
    seed: int,
) -> str:
    parts = []
    if "bootstrap" in used:
        parts.append(
            f"bootstrap {confidence:.0%} interval ({resamples} resamples per side, seed {seed})"
        )
    if "pooled repeats" in used and pooled is not None:
        parts.append(
            f"{confidence:.0%} band from run-to-run spread of the repeats "
            f"({pooled * 100:.2g}% curve-wide)"
        )
    if "tolerance" in used:
        parts.append(
            f"no repeated runs, noise not measured: band is the \u00b1{tolerance_pct:g}% tolerance"
        )
    parts.append(f"changes under {tolerance_pct:g}% are reported as unchanged")
    return "; ".join(parts)
