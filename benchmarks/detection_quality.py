"""Detection quality of ``baselines.detect`` on a labelled synthetic corpus, side by side.

The corpus imitates nccl-tests busbw series (level 100, 1 % Gaussian noise unless said
otherwise) and is generated from a fixed seed:

* steps of ±2, 3, 5, 10 % at a random position, and series with three steps;
* short regressions: dips of 5-10 points, 3-10 % deep, that recover (start and end labelled);
* single and double spikes of 8-30 % (no change: any alert near them is a *spike alert*);
* slow drift: linear 5-10 % over the series, and a random walk (no change labelled);
* bimodal changes: from one point on the series flips between two levels 4-10 % apart
  (NCCL algorithm/protocol switching), labelled at the first point on the other level (the
  change cannot be seen earlier), and noise that triples (both labelled ``variance``);
* stationary series of 1000 points: Gaussian, Student-t(3) (a harsh heavy-tailed null),
  Gaussian with rare large spikes (1 % of points, 5-30 %).

A second table shows the resolution floor on values rounded to two decimals, as nccl-tests
prints busbw: false alerts on tiny-message series, recall of 3 % steps at 50 GB/s, and
tiny sizes ``compare_curves`` flags, with and without ``resolution=0.01``.

A detection within ±K points (default 5) of a labelled change is a true positive (each label
matches at most one detection); everything else is a false positive. The table gives
precision, recall, F1 and mean localisation error over the whole corpus, recall per
category, false alerts per 1000 stationary points, spike alerts and drift alerts.

Reference tools run in their own interpreter, never imported here (they are not project
dependencies; install them in a throwaway venv):

    /root/.pyenv/versions/3.11.7/bin/python -m venv /tmp/otava
    /tmp/otava/bin/pip install apache-otava asv
    .venv/bin/python benchmarks/detection_quality.py --otava /tmp/otava/bin/python \\
        --asv /tmp/otava/bin/python

Otava runs with its defaults (window 50, p < 0.001, no magnitude floor); asv's
``detect_steps`` with its defaults. Without the options PerfHub's figures print alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from baselines.detect import detect  # noqa: E402

LEVEL = 100.0


@dataclass
class Case:
    category: str
    values: list[float]
    labels: list[tuple[int, str]]  # (index, "step" | "variance")
    spikes: list[int] = field(default_factory=list)
    stationary: bool = False  # counts towards false alerts per 1000 points
    drift: bool = False


def _noise(rng: np.random.Generator, n: int, pct: float = 1.0) -> np.ndarray:
    return LEVEL * (1.0 + pct / 100.0 * rng.normal(size=n))


def build_corpus(seed: int = 20240501, reps: int = 30) -> list[Case]:
    rng = np.random.default_rng(seed)
    cases: list[Case] = []
    n = 400
    for _ in range(reps):
        for size in (2.0, 3.0, 5.0, 10.0):
            for sign in (-1, 1):
                at = int(rng.integers(80, 320))
                y = _noise(rng, n)
                y[at:] *= 1 + sign * size / 100
                cases.append(Case(f"step {size:g}%", y.tolist(), [(at, "step")]))
        # Three steps, 60+ points apart.
        ats = sorted(int(a) for a in rng.choice(np.arange(60, 340, 70), 3, replace=False))
        ats = [a + int(rng.integers(0, 10)) for a in ats]
        y = _noise(rng, n)
        for a in ats:
            y[a:] *= 1 + rng.choice((-1, 1)) * rng.uniform(3, 8) / 100
        cases.append(Case("3 steps 3-8%", y.tolist(), [(a, "step") for a in ats]))
        for depth in (3.0, 5.0, 10.0):
            length = int(rng.integers(5, 11))
            at = int(rng.integers(80, 300))
            y = _noise(rng, n)
            y[at : at + length] *= 1 - depth / 100
            cases.append(Case(f"dip {depth:g}%", y.tolist(), [(at, "step"), (at + length, "step")]))
        for width in (1, 2):
            y = _noise(rng, n)
            spikes = [int(s) for s in rng.choice(np.arange(40, 360, 40), 3, replace=False)]
            for s in spikes:
                y[s : s + width] *= 1 + rng.choice((-1, 1)) * rng.uniform(8, 30) / 100
            cases.append(Case(f"spike x{width}", y.tolist(), [], spikes=spikes))
        for total in (5.0, 10.0):
            y = _noise(rng, n) * np.linspace(1, 1 - total / 100, n)
            cases.append(Case("drift linear", y.tolist(), [], drift=True))
        walk = np.cumsum(rng.normal(0, 0.1, n))  # 0.1 % a step: about 2 % over the series
        cases.append(Case("drift random walk", (_noise(rng, n) + walk).tolist(), [], drift=True))
        for gap, p in ((4.0, 0.5), (6.0, 0.5), (6.0, 0.3), (10.0, 0.3)):
            at = int(rng.integers(120, 280))
            y = _noise(rng, n)
            flips = rng.random(n - at) < p
            y[at:][flips] *= 1 - gap / 100
            # The change can only be seen from the first point on the other level.
            first = at + int(np.argmax(flips))
            cases.append(Case(f"bimodal {gap:g}% p={p:g}", y.tolist(), [(first, "variance")]))
        at = int(rng.integers(120, 280))
        y = _noise(rng, n)
        y[at:] = LEVEL + (y[at:] - LEVEL) * 3
        cases.append(Case("noise x3", y.tolist(), [(at, "variance")]))
    for _ in range(2 * reps):
        m = 1000
        cases.append(Case("stationary gauss", _noise(rng, m).tolist(), [], stationary=True))
        t3 = LEVEL * (1 + 0.01 * rng.standard_t(3, m) / 1.13)
        cases.append(Case("stationary t(3)", t3.tolist(), [], stationary=True))
        y = _noise(rng, m)
        hits = rng.random(m) < 0.01
        y[hits] *= 1 + rng.choice((-1, 1), hits.sum()) * rng.uniform(5, 30, hits.sum()) / 100
        cases.append(Case("stationary spiky", y.tolist(), [], stationary=True))
    return cases


# ------------------------------------------------------------------------------ detectors

Detections = list[list[tuple[int, str]]]


def run_perfhub(cases: list[Case], tuning: dict[str, float]) -> Detections:
    return [[(cp.index, cp.kind) for cp in detect(c.values, **tuning).change_points] for c in cases]


# Executed by the reference tool's interpreter: reads the series as JSON on stdin, writes
# change-point indices (first index of each new segment) as JSON on stdout.
_OTAVA = """
import json, sys
from otava.analysis import compute_change_points
out = []
for s in json.load(sys.stdin):
    cps, _ = compute_change_points(s, window_len=50, max_pvalue=0.001)
    out.append([int(c.index) for c in cps])
json.dump(out, sys.stdout)
"""
_ASV = """
import json, sys
from asv.step_detect import detect_steps
out = []
for s in json.load(sys.stdin):
    out.append([int(step[0]) for step in detect_steps(s)[1:]])
json.dump(out, sys.stdout)
"""


def run_reference(python: str, program: str, cases: list[Case]) -> Detections:
    result = subprocess.run(
        [python, "-c", program],
        input=json.dumps([c.values for c in cases]),
        capture_output=True,
        text=True,
        check=True,
    )
    return [[(i, "step") for i in found] for found in json.loads(result.stdout)]


# -------------------------------------------------------------------------------- scoring


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    loc_errors: list[int] = field(default_factory=list)
    kind_right: int = 0
    stationary_alerts: int = 0
    stationary_points: int = 0
    spike_alerts: int = 0
    drift_alerts: int = 0
    per_category: dict[str, list[int]] = field(default_factory=dict)  # [found, labelled]
    false_by_category: dict[str, int] = field(default_factory=dict)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score(cases: list[Case], found: Detections, tolerance: int) -> Score:
    s = Score()
    for case, detections in zip(cases, found, strict=True):
        cat = s.per_category.setdefault(case.category, [0, 0])
        cat[1] += len(case.labels)
        free = sorted(detections)
        for at, kind in case.labels:
            near = [d for d in free if abs(d[0] - at) <= tolerance]
            if not near:
                s.fn += 1
                continue
            best = min(near, key=lambda d: (abs(d[0] - at), d[1] != kind))
            free.remove(best)
            s.tp += 1
            cat[0] += 1
            s.loc_errors.append(abs(best[0] - at))
            s.kind_right += best[1] == kind
        s.fp += len(free)
        s.false_by_category[case.category] = s.false_by_category.get(case.category, 0) + len(free)
        if case.stationary:
            s.stationary_alerts += len(free)
            s.stationary_points += len(case.values)
        if case.drift:
            s.drift_alerts += len(free)
        for spike in case.spikes:
            s.spike_alerts += sum(1 for d in free if abs(d[0] - spike) <= 3)
    return s


def print_table(scores: dict[str, Score], seconds: dict[str, float], cases: list[Case]) -> None:
    names = list(scores)
    points: dict[str, int] = {}
    for c in cases:
        if c.stationary:
            points[c.category] = points.get(c.category, 0) + len(c.values)
    rows: list[tuple[str, Callable[[Score], str]]] = [
        ("precision", lambda s: f"{s.precision:.3f}"),
        ("recall", lambda s: f"{s.recall:.3f}"),
        ("F1", lambda s: f"{s.f1:.3f}"),
        (
            "mean localisation error (points)",
            lambda s: f"{np.mean(s.loc_errors):.2f}" if s.loc_errors else "-",
        ),
        (
            "false alerts / 1000 stationary points",
            lambda s: f"{1000 * s.stationary_alerts / max(1, s.stationary_points):.3f}",
        ),
        *(
            (
                f"  of which {kind}",
                lambda s, k=kind: f"{1000 * s.false_by_category.get(k, 0) / points[k]:.3f}",
            )
            for kind in points
        ),
        ("spike alerts", lambda s: str(s.spike_alerts)),
        ("drift alerts", lambda s: str(s.drift_alerts)),
        ("kind right (step / variance)", lambda s: f"{s.kind_right}/{s.tp}"),
    ]
    categories = list(next(iter(scores.values())).per_category)
    for cat in categories:
        if next(iter(scores.values())).per_category[cat][1]:
            rows.append(
                (
                    f"recall: {cat}",
                    lambda s, c=cat: f"{s.per_category[c][0]}/{s.per_category[c][1]}",
                )
            )
    rows.append(("seconds for the corpus", lambda s: ""))
    width = max(len(r[0]) for r in rows)
    print(f"| {'metric'.ljust(width)} | " + " | ".join(names) + " |")
    print(f"|{'-' * (width + 2)}|" + "|".join("-" * (len(n) + 2) for n in names) + "|")
    for label, fmt in rows:
        if label == "seconds for the corpus":
            cells = [f"{seconds[n]:.2f}" for n in names]
        else:
            cells = [fmt(scores[n]) for n in names]
        print(
            f"| {label.ljust(width)} | "
            + " | ".join(c.rjust(len(n)) for c, n in zip(cells, names, strict=True))
            + " |"
        )
    print(f"\n{len(cases)} series; a detection counts within ±K points of a labelled change.")
    print("false positives by category:")
    for name, sc in scores.items():
        parts = [f"{c} {k}" for c, k in sc.false_by_category.items() if k]
        print(f"  {name}: " + (", ".join(parts) or "none"))


def time_long_series() -> dict[str, float]:
    """Best of three wall times (seconds) of detect() on 10,000-point series."""
    rng = np.random.default_rng(7)
    step = _noise(rng, 10_000)
    step[5000:] *= 0.97
    heavy = LEVEL * (1 + 0.01 * rng.standard_t(3, 10_000) / 1.13)
    flipping = _noise(rng, 10_000)
    flipping[5000:][rng.random(5000) < 0.5] *= 0.94
    times = {}
    for name, y in (("step", step), ("Student-t(3)", heavy), ("bimodal", flipping)):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            detect(y)
            best = min(best, time.perf_counter() - start)
        times[name] = best
    return times


def resolution_floor_table(seed: int = 11, reps: int = 40) -> None:
    """What the resolution floor does to values printed with two decimals (nccl-tests busbw).

    Tiny-message series (true level 0.008-0.04 GB/s, 5 % noise, then rounded like nccl-tests
    prints them) are stationary: every alert on them is false. Large-message series (level
    50 GB/s, 1 % noise, rounded) carry one 3 % step: the floor must not cost recall there.
    Curves: one tiny-message size per curve of two runs against two, no change at all.
    """
    from baselines.curve_compare import compare_curves

    rng = np.random.default_rng(seed)
    tiny = []
    for _ in range(reps):
        level = rng.uniform(0.008, 0.04)
        tiny.append(np.round(level * (1 + 0.05 * rng.normal(size=300)), 2).tolist())
    steps = []
    for _ in range(reps):
        at = int(rng.integers(80, 220))
        y = 50 * (1 + 0.01 * rng.normal(size=300))
        y[at:] *= 0.97
        steps.append((at, np.round(y, 2).tolist()))
    rows = []
    for floor in (0.0, 0.01):
        false_tiny = sum(len(detect(v, resolution=floor).change_points) for v in tiny)
        found = 0
        for at, values in steps:
            hits = detect(values, resolution=floor).change_points
            found += any(abs(c.index - at) <= 5 and c.kind == "step" for c in hits)
        flagged = 0
        for _ in range(reps * 5):
            level = rng.uniform(0.008, 0.04)
            ref = np.round(level * (1 + 0.05 * rng.normal(size=2)), 2)
            cand = np.round(level * (1 + 0.05 * rng.normal(size=2)), 2)
            result = compare_curves({8: ref.tolist()}, {8: cand.tolist()}, resolution=floor)
            flagged += result.sizes[0].change != "unchanged" if result.sizes else 0
        rows.append((floor, false_tiny, found, flagged))
    print("\nresolution floor (values rounded to 0.01, as nccl-tests prints busbw):")
    print(
        "| resolution | false alerts, tiny-message series | recall, 3 % steps at 50 GB/s "
        "| tiny sizes flagged by compare_curves |"
    )
    print("|---|---|---|---|")
    for floor, false_tiny, found, flagged in rows:
        print(
            f"| {floor:g} | {false_tiny} in {reps} x 300 points | {found}/{reps} "
            f"| {flagged}/{reps * 5} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--otava", help="python of a venv with apache-otava installed")
    parser.add_argument("--asv", help="python of a venv with asv installed")
    parser.add_argument(
        "--reps", type=int, default=30, help="series per corpus cell (2x for stationary)"
    )
    parser.add_argument("--seed", type=int, default=20240501)
    parser.add_argument("--tolerance", type=int, default=5, help="±K points for a match")
    parser.add_argument(
        "--tune",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a baselines.detect.Tuning field (repeatable), e.g. --tune step_z=4.5",
    )
    args = parser.parse_args()
    tuning: dict[str, float] = {}
    for item in args.tune:
        name, _, value = item.partition("=")
        tuning[name] = int(value) if value.isdigit() else float(value)

    cases = build_corpus(args.seed, args.reps)
    runners: dict[str, Callable[[], Detections]] = {"PerfHub": lambda: run_perfhub(cases, tuning)}
    if args.otava:
        runners["Otava 0.8 (defaults)"] = lambda: run_reference(args.otava, _OTAVA, cases)
    if args.asv:
        runners["asv detect_steps"] = lambda: run_reference(args.asv, _ASV, cases)
    scores: dict[str, Score] = {}
    seconds: dict[str, float] = {}
    for name, run in runners.items():
        start = time.perf_counter()
        try:
            found = run()
        except (OSError, subprocess.CalledProcessError, json.JSONDecodeError) as exc:
            detail = getattr(exc, "stderr", "") or exc
            print(f"{name}: could not run ({str(detail).strip()[-300:]}); left out")
            continue
        seconds[name] = time.perf_counter() - start
        scores[name] = score(cases, found, args.tolerance)
    print_table(scores, seconds, cases)
    timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in time_long_series().items())
    print(f"PerfHub on one 10,000-point series (best of 3): {timings}")
    resolution_floor_table()


if __name__ == "__main__":
    main()
