"""What the Nsight Compute readers (``--csv`` details/raw pages, text details) share: the
per-kernel result, the key metrics picked out of whatever sections were collected, and
numbers written in either locale.

Key metrics are looked up by their section-page name first ("Duration", "Compute (SM)
Throughput", "Achieved Occupancy"...) and by the raw metric name second
(``gpu__time_duration.sum``, ``sm__throughput.avg.pct_of_peak_sustained_elapsed``...), so a
``--section`` run and a ``--metrics`` run both surface them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, ClassVar

from artifacts.parsers.base import ParseResult

MAX_KERNELS = 20_000
MAX_METRICS_PER_KERNEL = 5_000
MAX_RULES_PER_KERNEL = 200

_TIME_UNITS = {
    "nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
    "second": 1e9, "s": 1e9,
}  # fmt: skip
# field -> candidate metric names, first found wins; percentages must be in "%" (an old
# "Memory Throughput" is in byte/second and must not be mistaken for the SOL percentage).
_KEY_METRICS: dict[str, tuple[str, ...]] = {
    "duration_ns": ("Duration", "gpu__time_duration.sum", "gpu__time_duration.avg"),
    "sm_throughput_pct": (
        "Compute (SM) Throughput",
        "Compute (SM) [%]",
        "SM [%]",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    "memory_throughput_pct": (
        "Memory Throughput",
        "Memory [%]",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    "dram_throughput_pct": (
        "DRAM Throughput",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    "achieved_occupancy_pct": (
        "Achieved Occupancy",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
    ),
    "registers_per_thread": ("Registers Per Thread", "launch__registers_per_thread"),
}
_LAUNCH_METRICS = {
    "grid": ("Grid Size", "launch__grid_size"),
    "block": ("Block Size", "launch__block_size"),
}


@dataclasses.dataclass(frozen=True, slots=True)  # slots: a report holds 10^5-10^6 of them
class NcuMetric:
    section: str
    name: str
    unit: str
    value: float | int | str | None  # a number when the text is one, else the text


@dataclasses.dataclass(frozen=True, slots=True)
class NcuRule:
    section: str
    name: str
    type: str  # OPT, WRN, INF, ERR as ncu prints them
    description: str
    speedup_type: str | None = None
    speedup_pct: float | None = None


@dataclasses.dataclass(frozen=True)
class NcuKernel:
    id: int
    name: str
    process_id: str | None = None
    process_name: str | None = None
    host: str | None = None
    device: str | None = None
    cc: str | None = None
    context: str | None = None
    stream: str | None = None
    kernel_time: str | None = None
    nvtx: tuple[str, ...] = ()
    grid: str | None = None
    block: str | None = None
    duration_ns: float | None = None
    sm_throughput_pct: float | None = None
    memory_throughput_pct: float | None = None
    dram_throughput_pct: float | None = None
    achieved_occupancy_pct: float | None = None
    registers_per_thread: float | None = None
    metrics: tuple[NcuMetric, ...] = ()
    rules: tuple[NcuRule, ...] = ()


@dataclasses.dataclass(frozen=True)
class NcuResult(ParseResult):
    """Base of both Nsight Compute kinds; ``page`` says which layout the numbers came from."""

    kind: ClassVar[str] = ""
    page: str = ""  # details | raw | text
    kernels: tuple[NcuKernel, ...] = ()

    def summary(self) -> dict[str, Any]:
        timed = [k for k in self.kernels if k.duration_ns is not None]
        slowest = max(timed, key=lambda k: k.duration_ns or 0) if timed else None
        return {
            "page": self.page,
            "kernels": len(self.kernels),
            "total_duration_us": round(sum(k.duration_ns or 0 for k in timed) / 1e3, 3),
            "slowest_kernel": slowest.name[:120] if slowest else None,
            "rules": sum(len(k.rules) for k in self.kernels),
            "warnings": len(self.warnings),
        }


# --- numbers ----------------------------------------------------------------------------------

_INT = re.compile(r"^[+-]?\d+$")
_US_GROUPED = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")  # 1,234 / 1,234.5
_EU_GROUPED = re.compile(r"^[+-]?\d{1,3}(?:\.\d{3})+(?:,\d+)?$")  # 1.234 / 1.234,5
_DOT_DECIMAL = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?\d+[eE][+-]?\d+$")
_COMMA_DECIMAL = re.compile(r"^[+-]?\d+,\d+$")


class LocaleNumbers:
    """Reads ncu numbers whichever locale wrote them: "5,824" (en thousands), "9,00" (a
    decimal comma), "1.234,56". A value that could be either ("5,824", "1.234") follows what
    the file has shown so far; ``learn`` is fed a kernel's values before they are read, so a
    kernel's own unambiguous values ("6.52" or "9,00") decide for it."""

    def __init__(self) -> None:
        self.decimal_comma: bool | None = None

    def learn(self, text: str) -> None:
        t = _compact(text)
        if not t or _INT.match(t):
            return
        us_grouped, eu_grouped = bool(_US_GROUPED.match(t)), bool(_EU_GROUPED.match(t))
        if (us_grouped and "." in t) or (_DOT_DECIMAL.match(t) and not eu_grouped):
            self.decimal_comma = False  # 1,234.5 or 6.52
        elif (eu_grouped and ("," in t or t.count(".") > 1)) or (
            _COMMA_DECIMAL.match(t) and not us_grouped
        ):
            self.decimal_comma = True  # 1.234,5 or 1.234.567 or 9,00

    def number(self, text: str) -> float | int | None:
        t = _compact(text)
        if not t:
            return None
        try:
            if _INT.match(t):
                return int(t)
            if _US_GROUPED.match(t) and not (
                self.decimal_comma and t.count(",") == 1 and "." not in t
            ):
                return _num(t.replace(",", ""))
            if _EU_GROUPED.match(t) and (self.decimal_comma or "," in t or t.count(".") > 1):
                return _num(t.replace(".", "").replace(",", "."))
            if _COMMA_DECIMAL.match(t):
                return _num(t.replace(",", "."))
            if _DOT_DECIMAL.match(t):
                return _num(t)
        except (ValueError, OverflowError):
            return None
        return None

    def value(self, text: str) -> float | int | str | None:
        """A number when the text is one, else the text itself (None when empty)."""
        number = self.number(text)
        if number is not None:
            return number
        stripped = text.strip()
        return stripped or None


def _compact(text: str) -> str:
    # narrow/no-break spaces are thousands separators in some locales
    return text.strip().replace("\u202f", "").replace("\xa0", "").replace("'", "")


def _num(text: str) -> float | int | None:
    if _INT.match(text):
        return int(text)
    number = float(text)
    return number if math.isfinite(number) else None


# --- building one kernel ------------------------------------------------------------------------


class KernelBuilder:
    """Collects one kernel's raw strings; numbers are read when it is complete."""

    def __init__(self, kernel_id: int, identity: dict[str, str | None]) -> None:
        self.id = kernel_id
        self.identity = identity
        self.nvtx: list[str] = []
        self.metrics: list[tuple[str, str, str, str]] = []
        self.rules: list[tuple[str, str, str, str, str, str]] = []
        self.dropped = 0

    def add_metric(self, section: str, name: str, unit: str, text: str) -> None:
        if len(self.metrics) >= MAX_METRICS_PER_KERNEL:
            self.dropped += 1
            return
        self.metrics.append((section, name, unit, text))

    def add_rule(
        self, section: str, name: str, kind: str, text: str, speedup_type: str, speedup: str
    ) -> None:
        entry = (section, name, kind, text, speedup_type, speedup)
        if len(self.rules) < MAX_RULES_PER_KERNEL and entry not in self.rules:
            self.rules.append(entry)

    def build(self, numbers: LocaleNumbers) -> NcuKernel:
        for _s, _n, _u, text in self.metrics:
            numbers.learn(text)
        metrics = tuple(
            NcuMetric(section=s, name=n, unit=u, value=numbers.value(t))
            for s, n, u, t in self.metrics
        )
        rules = tuple(
            NcuRule(
                section=s,
                name=n,
                type=k,
                description=d,
                speedup_type=st or None,
                speedup_pct=_as_float(numbers.number(sp)) if sp else None,
            )
            for s, n, k, d, st, sp in self.rules
        )
        ident = self.identity
        self.metrics = []  # the raw strings are not needed once read
        return NcuKernel(
            id=self.id,
            name=ident.get("name") or "",
            process_id=ident.get("process_id"),
            process_name=ident.get("process_name"),
            host=ident.get("host"),
            device=ident.get("device"),
            cc=ident.get("cc"),
            context=ident.get("context"),
            stream=ident.get("stream"),
            kernel_time=ident.get("kernel_time"),
            nvtx=tuple(self.nvtx),
            grid=ident.get("grid") or _launch(metrics, "grid"),
            block=ident.get("block") or _launch(metrics, "block"),
            metrics=metrics,
            rules=rules,
            **key_metrics(metrics),
        )


def key_metrics(metrics: tuple[NcuMetric, ...]) -> dict[str, float | None]:
    by_name: dict[str, NcuMetric] = {}
    for m in metrics:
        by_name.setdefault(m.name, m)
    out: dict[str, float | None] = {}
    for field, candidates in _KEY_METRICS.items():
        out[field] = None
        for candidate in candidates:
            metric = by_name.get(candidate)
            if metric is None or not isinstance(metric.value, int | float):
                continue
            value = _as_float(metric.value)
            if value is None:
                continue
            if field == "duration_ns":
                scale = _TIME_UNITS.get(metric.unit.strip().lower())
                if scale is None:
                    continue
                out[field] = value * scale
            elif field.endswith("_pct"):
                if metric.unit.strip() not in ("%", ""):
                    continue
                out[field] = value
            else:
                out[field] = value
            break
    return out


def _launch(metrics: tuple[NcuMetric, ...], field: str) -> str | None:
    for candidate in _LAUNCH_METRICS[field]:
        for m in metrics:
            if m.name == candidate and m.value is not None:
                return str(m.value)
    return None


def _as_float(value: float | int | None) -> float | None:
    """``value`` as a float; None for an integer beyond float range (a damaged file's
    hundreds of digits), which no real metric reaches."""
    try:
        return None if value is None else float(value)
    except OverflowError:
        return None
