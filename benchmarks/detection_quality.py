"""Detection quality of ``baselines.detect``: a labelled synthetic corpus and real, annotated
series, side by side with reference tools.

**Synthetic corpus** (seeded), nccl-tests-like busbw series (level 100, 1 % Gaussian noise
unless said otherwise):

* steps of ±2, 3, 5, 10 % at a random position, and series with three steps;
* short regressions: dips of 5-10 points, 3-10 % deep, that recover (start and end labelled);
* single and double spikes of 8-30 % (no change: any alert near them is a *spike alert*);
* trends: linear drift of 5-10 % over the series (labelled as one drift over the whole
  series), a drift of 6 % over the first half followed by a 5 % step ("drift then step": the
  drift and the step are labelled), and a random walk (no label; a drift reported on it is
  neither right nor wrong and is counted on its own row);
* seasonal: nightly runs with a weekly pattern (two "weekend" points 3 % higher every 7), with
  a 5 % step, and 1000-point stationary ones;
* autocorrelated: AR(1) noise with phi = 0.6 (1 % marginal spread), with a 5 % step, and
  1000-point stationary ones;
* bimodal changes: from one point on the series flips between two levels 4-10 % apart
  (NCCL algorithm/protocol switching), labelled at the first point on the other level (the
  change cannot be seen earlier), and noise that triples (both labelled ``variance``);
* stationary series of 1000 points: Gaussian, Student-t(3) (a harsh heavy-tailed null),
  Gaussian with rare large spikes (1 % of points, 5-30 %), weekly pattern, AR(1).

A detection within ±K points (default 5) of a labelled change is a true positive (each label
matches at most one detection); a reported drift matches a labelled drift when it covers at
least half of it; everything else is a false positive. The table gives precision, recall and
F1 over step and variance labels (as before drift was a kind), F1 with drift labels and drift
reports included, recall per category, false alerts per 1000 stationary points, spike
alerts and step alerts on drifting series.

**Real series**: ``tests/fixtures/detection_real/`` (20 univariate series of TCPD, the Turing
Change Point Dataset, with each annotator's published change points). Scored as TCPD scores
them (van den Burg & Williams 2020): F1 at a margin of 5 points (precision over all
annotators' points, recall averaged over annotators, the start of the series counted as a
change for both) and the covering metric (how well the predicted segments overlap each
annotator's, averaged). PerfHub's change points there are its steps and variance changes
plus the boundaries of its drifts (a drift's start and the point after its end, when inside
the series): where the behaviour changed. "zero" predicts no change at all.

The resolution floor table (values rounded to two decimals, as nccl-tests prints busbw)
follows.

Reference tools run in their own interpreter, never imported here (they are benchmark-only,
not project dependencies; install them in a throwaway venv):

    /root/.pyenv/versions/3.11.7/bin/python -m venv /tmp/cpref
    /tmp/cpref/bin/pip install apache-otava==0.8.0 asv==0.6.6 ruptures==1.1.10
    .venv/bin/python benchmarks/detection_quality.py --refs /tmp/cpref/bin/python

Otava runs with its defaults (window 50, p < 0.001, no magnitude floor); asv's
``detect_steps`` with its defaults; ruptures' PELT and binary segmentation with the L2 cost
on the z-scored series and the MBIC penalty 3·log(n), which is the default of R's
changepoint package that TCPD's published default runs used (ruptures itself has no default
penalty); every point is a candidate on the real series (jump 1), ruptures' default jump 5
on the synthetic corpus (jump 1 there takes hours). Without ``--refs`` PerfHub's figures
print alone. ``--before DIR`` also scores an older PerfHub (a directory holding its
``baselines`` package, e.g. from ``git archive``).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
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
    drift: bool = False  # a drifting series: a step alert on it is a "step alert on drift"
    drifts: list[tuple[int, int]] = field(default_factory=list)  # labelled drifts (first, last)
    free_drift: bool = False  # a drift reported here is neither right nor wrong (random walk)


def _weekly(n: int, rng: np.random.Generator, pct: float = 3.0) -> np.ndarray:
    """A weekly pattern of nightly runs: two points in seven ("weekend") pct % higher."""
    phase = int(rng.integers(0, 7))
    return 1.0 + pct / 100.0 * (((np.arange(n) + phase) % 7) >= 5)


def _ar1(rng: np.random.Generator, n: int, phi: float = 0.6, pct: float = 1.0) -> np.ndarray:
    """Level-100 AR(1) noise with a marginal spread of pct %."""
    e = rng.normal(size=n) * np.sqrt(1.0 - phi * phi)
    z = np.empty(n)
    z[0] = rng.normal()
    for t in range(1, n):
        z[t] = phi * z[t - 1] + e[t]
    return LEVEL * (1.0 + pct / 100.0 * z)


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
            sign = rng.choice((-1, 1))
            y = _noise(rng, n) * np.linspace(1, 1 + sign * total / 100, n)
            cases.append(Case("drift linear", y.tolist(), [], drift=True, drifts=[(0, n - 1)]))
        walk = np.cumsum(rng.normal(0, 0.1, n))  # 0.1 % a step: about 2 % over the series
        cases.append(
            Case("drift random walk", (_noise(rng, n) + walk).tolist(), [], free_drift=True)
        )
        # A fabric that degrades for 200 runs, then a software change that costs 5 %.
        y = _noise(rng, n) * np.r_[np.linspace(1, 0.94, 200), np.full(n - 200, 0.94)]
        at = int(rng.integers(240, 330))
        y[at:] *= 0.95
        cases.append(Case("drift then step", y.tolist(), [(at, "step")], drifts=[(0, 199)]))
        y = _noise(rng, n) * _weekly(n, rng)
        at = int(rng.integers(80, 320))
        y[at:] *= 0.95
        cases.append(Case("weekly + step 5%", y.tolist(), [(at, "step")]))
        y = _ar1(rng, n)
        at = int(rng.integers(80, 320))
        y[at:] *= 0.95
        cases.append(Case("AR(1) 0.6 + step 5%", y.tolist(), [(at, "step")]))
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
        y = _noise(rng, m) * _weekly(m, rng)
        cases.append(Case("stationary weekly", y.tolist(), [], stationary=True))
        cases.append(Case("stationary AR(1) 0.6", _ar1(rng, m).tolist(), [], stationary=True))
    return cases


# ------------------------------------------------------------------------------ detectors

# Per series: (index, kind, last index) - the last index is the drift's end, else the index.
Detections = list[list[tuple[int, str, int]]]


def run_perfhub(values: list[list[float]], tuning: dict[str, float]) -> Detections:
    out = []
    for v in values:
        cps = detect(v, **tuning).change_points
        out.append([(c.index, c.kind, c.end_index if c.kind == "drift" else c.index) for c in cps])
    return out


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


_RUPTURES = """
import json, math, sys
import numpy as np
import ruptures as rpt
out = []
for s in json.load(sys.stdin):
    y = np.asarray(s, float)
    z = ((y - y.mean()) / (y.std() or 1.0)).reshape(-1, 1)
    algo = rpt.%s(model="l2", min_size=2, jump=%d)
    out.append([int(b) for b in algo.fit(z).predict(pen=3 * math.log(len(y))) if b < len(y)])
json.dump(out, sys.stdout)
"""
# The same PerfHub, as an older checkout has it (--before): drifts when it knows them.
_BEFORE = """
import json, sys
from baselines.detect import detect
out = []
for s in json.load(sys.stdin):
    cps = detect(s).change_points
    out.append([(c.index, c.kind, c.end_index if c.kind == "drift" else c.index) for c in cps])
json.dump(out, sys.stdout)
"""


def run_reference(
    python: str, program: str, values: list[list[float]], path: str | None = None
) -> Detections:
    env = None
    if path:
        # Run from that directory, so its baselines package is the one imported.
        env = {**os.environ, "PYTHONPATH": str(Path(path).resolve())}
    result = subprocess.run(
        [python, "-c", program],
        input=json.dumps(values),
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=path,
    )
    return [
        [tuple(i) if isinstance(i, list) else (i, "step", i) for i in found]  # type: ignore[misc]
        for found in json.loads(result.stdout)
    ]


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
    drift_alerts: int = 0  # step / variance alerts on drifting series
    drift_tp: int = 0  # labelled drifts covered (at least half) by a reported drift
    drift_fn: int = 0
    drift_fp: int = 0  # drifts reported where none is labelled (random walks aside)
    drift_free: int = 0  # drifts reported on random walks
    per_category: dict[str, list[int]] = field(default_factory=dict)  # [found, labelled]
    false_by_category: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def _f1(tp: int, fp: int, fn: int) -> float:
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        return self._f1(self.tp, self.fp, self.fn)

    @property
    def f1_with_drift(self) -> float:
        return self._f1(self.tp + self.drift_tp, self.fp + self.drift_fp, self.fn + self.drift_fn)


def _covers(report: tuple[int, str, int], span: tuple[int, int]) -> bool:
    overlap = min(report[2], span[1]) - max(report[0], span[0]) + 1
    return overlap >= 0.5 * (span[1] - span[0] + 1)


def score(cases: list[Case], found: Detections, tolerance: int) -> Score:
    s = Score()
    for case, detections in zip(cases, found, strict=True):
        cat = s.per_category.setdefault(case.category, [0, 0])
        cat[1] += len(case.labels) + len(case.drifts)
        free = sorted(d for d in detections if d[1] != "drift")
        reports = [d for d in detections if d[1] == "drift"]
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
        for span in case.drifts:
            match = next((r for r in reports if _covers(r, span)), None)
            if match is None:
                s.drift_fn += 1
                continue
            reports.remove(match)
            s.drift_tp += 1
            cat[0] += 1
        if case.free_drift:
            s.drift_free += len(reports)
            reports = []
        s.fp += len(free)
        s.drift_fp += len(reports)
        wrong = len(free) + len(reports)
        s.false_by_category[case.category] = s.false_by_category.get(case.category, 0) + wrong
        if case.stationary:
            s.stationary_alerts += wrong
            s.stationary_points += len(case.values)
        if case.drift or case.drifts or case.free_drift:
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
        ("F1 (steps, variance)", lambda s: f"{s.f1:.3f}"),
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
        ("step alerts on drifting series", lambda s: str(s.drift_alerts)),
        ("kind right (step / variance)", lambda s: f"{s.kind_right}/{s.tp}"),
        ("drifts found (reported once)", lambda s: f"{s.drift_tp}/{s.drift_tp + s.drift_fn}"),
        ("drifts reported where none", lambda s: str(s.drift_fp)),
        ("drifts reported on random walks", lambda s: str(s.drift_free)),
        ("F1 with drift", lambda s: f"{s.f1_with_drift:.3f}"),
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


# ------------------------------------------------------------------------------ real series

REAL = ROOT / "tests" / "fixtures" / "detection_real"


@dataclass
class RealSeries:
    name: str
    values: list[float]
    annotations: dict[str, list[int]]  # annotator -> change points


def load_real() -> list[RealSeries]:
    meta = json.loads((REAL / "labels.json").read_text())["series"]
    out = []
    for name, info in sorted(meta.items()):
        with open(REAL / f"{name}.csv", newline="") as fh:
            values = [float(row["value"]) for row in csv.DictReader(fh)]
        out.append(RealSeries(name, values, info["annotations"]))
    return out


def change_points_of(detections: list[tuple[int, str, int]], n: int) -> list[int]:
    """Where the behaviour changed: steps and variance changes, and drift boundaries (its
    start and the point after its end) inside the series."""
    points = set()
    for index, kind, last in detections:
        if kind != "drift":
            points.add(index)
            continue
        if index > 0:
            points.add(index)
        if last + 1 < n:
            points.add(last + 1)
    return sorted(points)


def _matched(truth: set[int], predicted: set[int], margin: int) -> set[int]:
    """Labels hit by a prediction within the margin, each prediction used once (nearest)."""
    left, hit = set(predicted), set()
    for tau in sorted(truth):
        near = sorted((abs(tau - x), x) for x in left if abs(tau - x) <= margin)
        if near:
            hit.add(tau)
            left.remove(near[0][1])
    return hit


def tcpd_f1(annotations: dict[str, list[int]], predicted: list[int], margin: int = 5) -> float:
    """F1 as TCPD defines it: the series' start counts as a change for every annotator and
    the prediction; precision against the union of all annotators, recall per annotator,
    averaged."""
    per_annotator = [set(points) | {0} for points in annotations.values()]
    guess = set(predicted) | {0}
    union = set().union(*per_annotator)
    precision = len(_matched(union, guess, margin)) / len(guess)
    recall = sum(len(_matched(t, guess, margin)) / len(t) for t in per_annotator) / len(
        per_annotator
    )
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _segments(points: list[int], n: int) -> list[tuple[int, int]]:
    bounds = [0, *sorted({p for p in points if 0 < p < n}), n]
    return list(itertools.pairwise(bounds))


def covering(annotations: dict[str, list[int]], predicted: list[int], n: int) -> float:
    """Covering of each annotator's segmentation by the predicted one (Arbelaez et al.):
    sum over true segments of length x best Jaccard overlap with a predicted segment, / n;
    averaged over annotators."""
    guess = _segments(predicted, n)
    total = 0.0
    for points in annotations.values():
        cover = 0.0
        for lo, hi in _segments(points, n):
            best = max(
                max(0, min(hi, b) - max(lo, a)) / (max(hi, b) - min(lo, a)) for a, b in guess
            )
            cover += (hi - lo) * best
        total += cover / n
    return total / len(annotations)


def real_table(results: dict[str, Detections], series: list[RealSeries]) -> None:
    names = list(results)
    rows = []
    means = {name: [0.0, 0.0, 0] for name in names}
    for k, one in enumerate(series):
        n = len(one.values)
        cells = []
        for name in names:
            points = change_points_of(results[name][k], n)
            f, c = tcpd_f1(one.annotations, points), covering(one.annotations, points, n)
            means[name][0] += f / len(series)
            means[name][1] += c / len(series)
            means[name][2] += len(points)
            cells.append(f"{f:.2f} / {c:.2f} ({len(points)})")
        rows.append((f"{one.name} (n={n})", cells))
    print(f"\nreal series (TCPD, {len(series)} series, F1 at margin 5 / cover, (change points)):")
    width = max(len(r[0]) for r in rows)
    print(f"| {'series'.ljust(width)} | " + " | ".join(names) + " |")
    print(f"|{'-' * (width + 2)}|" + "|".join("-" * (len(n) + 2) for n in names) + "|")
    for label, cells in rows:
        print(
            f"| {label.ljust(width)} | "
            + " | ".join(c.rjust(len(n)) for c, n in zip(cells, names, strict=True))
            + " |"
        )
    print("\n| metric (mean over the real series) | " + " | ".join(names) + " |")
    print("|---|" + "|".join("---" for _ in names) + "|")
    for label, idx in (("F1 (margin 5)", 0), ("cover", 1)):
        print(f"| {label} | " + " | ".join(f"{means[n][idx]:.3f}" for n in names) + " |")
    print("| change points, all series | " + " | ".join(str(means[n][2]) for n in names) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--refs", help="python of a venv with apache-otava, asv and ruptures installed"
    )
    parser.add_argument("--before", help="directory holding an older baselines package")
    parser.add_argument(
        "--reps", type=int, default=30, help="series per corpus cell (2x for stationary)"
    )
    parser.add_argument("--seed", type=int, default=20240501)
    parser.add_argument("--tolerance", type=int, default=5, help="±K points for a match")
    parser.add_argument("--real-only", action="store_true", help="only the real series")
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

    def runners(values: list[list[float]], real: bool) -> dict[str, Callable[[], Detections]]:
        out: dict[str, Callable[[], Detections]] = {"PerfHub": lambda: run_perfhub(values, tuning)}
        if args.before:
            out["PerfHub before"] = lambda: run_reference(
                sys.executable, _BEFORE, values, path=args.before
            )
        if args.refs:
            out["Otava 0.8"] = lambda: run_reference(args.refs, _OTAVA, values)
            out["asv"] = lambda: run_reference(args.refs, _ASV, values)
            # Every point a candidate (jump 1) where that is affordable; on the long synthetic
            # series ruptures' own default (jump 5): its L2 cost is recomputed from the
            # segment at every evaluation, and jump 1 on 1000 points takes hours.
            jump = 1 if real else 5
            out["PELT (MBIC)"] = lambda: run_reference(
                args.refs, _RUPTURES % ("Pelt", jump), values
            )
            out["BinSeg (MBIC)"] = lambda: run_reference(
                args.refs, _RUPTURES % ("Binseg", jump), values
            )
        return out

    def run_all(
        values: list[list[float]], real: bool = False
    ) -> tuple[dict[str, Detections], dict[str, float]]:
        found: dict[str, Detections] = {}
        seconds: dict[str, float] = {}
        for name, run in runners(values, real).items():
            start = time.perf_counter()
            try:
                found[name] = run()
            except (OSError, subprocess.CalledProcessError, json.JSONDecodeError) as exc:
                detail = getattr(exc, "stderr", "") or exc
                print(f"{name}: could not run ({str(detail).strip()[-300:]}); left out")
                continue
            seconds[name] = time.perf_counter() - start
        return found, seconds

    if not args.real_only:
        cases = build_corpus(args.seed, args.reps)
        found, seconds = run_all([c.values for c in cases])
        scores = {name: score(cases, f, args.tolerance) for name, f in found.items()}
        print_table(scores, seconds, cases)
    series = load_real()
    real_found, _ = run_all([s.values for s in series], real=True)
    real_found["zero (no change)"] = [[] for _ in series]
    real_table(real_found, series)
    if not args.real_only:
        timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in time_long_series().items())
        print(f"\nPerfHub on one 10,000-point series (best of 3): {timings}")
        resolution_floor_table()


if __name__ == "__main__":
    main()
