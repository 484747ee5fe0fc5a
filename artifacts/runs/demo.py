"""Deterministic demo data: realistic nccl-tests 2.17.x stdout for three fictional clusters.

Pure Python (no Django, no numpy) so that a management command, a notebook or a test can call
``demo_files()`` and get the same bytes every time for the same arguments.

What the numbers mean
---------------------
Every row comes from a small physical model instead of random numbers, so charts, baselines and
regression detection behave on demo data the way they do on real data:

* ``time(size) = latency + wire * (1 + (knee / size) ** 0.6)`` where ``wire = size / peak_algbw``.
  Small messages are latency bound (tens of µs); the ``knee`` term stands for the protocol and
  pipelining overhead that makes real curves approach their plateau slowly (LL -> LL128 ->
  Simple, too few chunks in flight); large messages reach the profile's plateau.
* ``algbw = size / time`` and ``busbw = algbw * factor`` with nccl-tests' factors:
  all_reduce ``2(n-1)/n``; all_gather, reduce_scatter, alltoall ``(n-1)/n``; broadcast and
  sendrecv ``1``.
* ``count`` follows nccl-tests: the element count per rank for all_gather, reduce_scatter and
  alltoall (``size / (dtype * n)``), the whole buffer otherwise (``size / dtype``).
* Small seeded noise (per row ±1 % at most, per run ±0.8 %); in-place differs slightly from
  out-of-place.

The history (``days`` nightly runs per profile) contains two deliberate events, both fictional:

* NCCL 2.21.5 -> 2.23.4 upgrade half-way through. On ``h200-roce-2x8`` the new version loses
  ~8 % all_reduce busbw from 256 MB upwards (see ``REGRESSION``) - as if the new tuner picked
  fewer channels for large ring all-reduces over RoCE. The other profiles do not change.
* One nightly all_reduce on ``ib-h100-16x8`` dies mid-sweep with an NCCL system error (no
  footer), followed by a successful ``rerun`` the same day.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

FIRST_DAY = date(2025, 11, 3)

# The exponent of the overhead term; 0.6 gives the long, gentle approach to the plateau that
# real nccl-tests curves show (a plain latency + size/bw model saturates far too abruptly).
_KNEE_EXPONENT = 0.6

_DTYPE_BYTES = {"int8": 1, "half": 2, "bfloat16": 2, "float": 4, "int32": 4, "double": 8}


# --------------------------------------------------------------------------------------------
# Profiles
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectiveModel:
    """How one collective performs on one profile."""

    name: str  # nccl-tests naming without "_perf": "all_reduce", "alltoall", ...
    plateau_busbw: float  # GB/s reached at the largest sizes
    latency_us: float  # small-message floor
    knee_bytes: int  # size at which protocol/pipeline overhead equals the wire time


@dataclass(frozen=True)
class HardwareProfile:
    slug: str
    cluster: str
    description: str
    gpu_name: str  # as nvidia-smi / nccl-tests print it
    hosts: tuple[str, ...]
    gpus_per_node: int
    bus_ids: tuple[str, ...]  # PCI bus of each local device, "1b" -> [0000:1b:00]
    dtype: str
    min_bytes: int  # the job script's -b
    max_bytes: int  # the job script's -e
    warmup_iters: int
    iters: int
    nccl_debug: str  # NCCL_DEBUG the cluster's job script sets: "", "VERSION", "WARN", "INFO"
    oob_prefix: str  # first two octets of the out-of-band network, for NCCL INFO lines
    collectives: tuple[CollectiveModel, ...] = field(default_factory=tuple)

    @property
    def nodes(self) -> int:
        return len(self.hosts)

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus_per_node

    def model(self, collective: str) -> CollectiveModel:
        for model in self.collectives:
            if model.name == collective:
                return model
        raise KeyError(f"{self.slug} has no model for {collective}")


H100_NVSWITCH = HardwareProfile(
    slug="h100-nvs-1x8",
    cluster="lab-a",
    description="1 node x 8 H100 SXM, NVLink 4 / NVSwitch (NVLS on)",
    gpu_name="NVIDIA H100 80GB HBM3",
    hosts=("h100-a01",),
    gpus_per_node=8,
    bus_ids=("18", "2a", "3a", "5d", "9a", "ab", "ba", "db"),
    dtype="float",
    min_bytes=8,
    max_bytes=8 * GiB,
    warmup_iters=5,
    iters=20,
    nccl_debug="VERSION",
    oob_prefix="10.20",
    collectives=(
        CollectiveModel("all_reduce", 480.0, 11.0, 3 * MiB),
        CollectiveModel("all_gather", 362.0, 10.0, 3 * MiB),
        CollectiveModel("reduce_scatter", 358.0, 10.5, 3 * MiB),
        CollectiveModel("alltoall", 342.0, 14.0, 4 * MiB),
        CollectiveModel("broadcast", 352.0, 9.5, 2 * MiB),
        CollectiveModel("sendrecv", 368.0, 7.5, 2 * MiB),
    ),
)

H200_ROCE = HardwareProfile(
    slug="h200-roce-2x8",
    cluster="rack-07",
    description="2 nodes x 8 H200, 8x ConnectX-7 400G RoCE v2 per node (NVLS off)",
    gpu_name="NVIDIA H200",
    hosts=("h200-r07n03", "h200-r07n04"),
    gpus_per_node=8,
    bus_ids=("19", "3b", "4c", "5d", "9b", "bb", "cb", "db"),
    dtype="float",
    min_bytes=8,
    max_bytes=8 * GiB,
    warmup_iters=5,
    iters=20,
    nccl_debug="INFO",  # the RoCE fabric was new; its job script still logs the NCCL init
    oob_prefix="10.42",
    collectives=(
        CollectiveModel("all_reduce", 358.0, 27.0, 6 * MiB),
        CollectiveModel("all_gather", 338.0, 22.0, 6 * MiB),
        CollectiveModel("reduce_scatter", 333.0, 23.0, 6 * MiB),
        # alltoall and sendrecv cross the network per peer/pair: NIC bound, not NVLink bound
        CollectiveModel("alltoall", 84.0, 38.0, 8 * MiB),
        CollectiveModel("sendrecv", 45.5, 16.0, 2 * MiB),
    ),
)

IB_H100 = HardwareProfile(
    slug="ib-h100-16x8",
    cluster="ib-pod-1",
    description="16 nodes x 8 H100 SXM, 8x ConnectX-7 NDR 400G InfiniBand per node (no SHARP)",
    gpu_name="NVIDIA H100 80GB HBM3",
    hosts=tuple(f"ib-h100-n{i:03d}" for i in range(1, 17)),
    gpus_per_node=8,
    bus_ids=("1b", "29", "45", "5a", "9c", "ad", "c4", "de"),
    dtype="float",
    min_bytes=1 * MiB,
    max_bytes=8 * GiB,
    warmup_iters=10,
    iters=50,
    nccl_debug="WARN",
    oob_prefix="10.60",
    collectives=(
        CollectiveModel("all_reduce", 392.0, 52.0, 12 * MiB),
        CollectiveModel("all_gather", 356.0, 60.0, 12 * MiB),
        CollectiveModel("reduce_scatter", 351.0, 62.0, 12 * MiB),
        CollectiveModel("alltoall", 41.0, 180.0, 16 * MiB),
    ),
)

PROFILES: tuple[HardwareProfile, ...] = (H100_NVSWITCH, H200_ROCE, IB_H100)


# --------------------------------------------------------------------------------------------
# Software history and the deliberate events in it
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SoftwareStack:
    nccl: str
    cuda: str
    nccl_tests: str

    @property
    def code(self) -> int:
        """NCCL_VERSION_CODE as nccl-tests prints it (2.21.5 -> 22105)."""
        major, minor, patch = (int(part) for part in self.nccl.split("."))
        return major * 10000 + minor * 100 + patch


OLD_STACK = SoftwareStack(nccl="2.21.5", cuda="12.4", nccl_tests="2.17.6")
NEW_STACK = SoftwareStack(nccl="2.23.4", cuda="12.6", nccl_tests="2.17.8")


@dataclass(frozen=True)
class Regression:
    profile: str
    collective: str
    nccl: str  # the version that introduced it
    loss: float  # fraction of bus bandwidth lost at large sizes
    onset_bytes: int  # from this size on the loss is (almost) complete


REGRESSION = Regression(
    profile=H200_ROCE.slug,
    collective="all_reduce",
    nccl=NEW_STACK.nccl,
    loss=0.08,
    onset_bytes=256 * MiB,
)

# The nightly that dies (ib-h100-16x8 all_reduce, two days before the end) stops here.
FAILED_PROFILE = IB_H100.slug
FAILED_COLLECTIVE = "all_reduce"
FAIL_AT_BYTES = 512 * MiB


# --------------------------------------------------------------------------------------------
# What nccl-tests does per collective
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Semantics:
    redop: str
    root: int
    count_per_rank: bool  # count column is per rank (size / (dtype * n))
    in_place_checked: bool  # False: nccl-tests prints N/A for the in-place #wrong
    factor_kind: str  # "allreduce" 2(n-1)/n, "ring" (n-1)/n, "one" 1


SEMANTICS: dict[str, Semantics] = {
    "all_reduce": Semantics("sum", -1, False, True, "allreduce"),
    "all_gather": Semantics("none", -1, True, True, "ring"),
    "reduce_scatter": Semantics("sum", -1, True, True, "ring"),
    "alltoall": Semantics("none", -1, True, False, "ring"),
    "broadcast": Semantics("none", 0, False, True, "one"),
    "sendrecv": Semantics("sum", -1, False, False, "one"),
}


def bus_factor(collective: str, nranks: int) -> float:
    """busbw / algbw, as nccl-tests' GetBw functions define it."""
    kind = SEMANTICS[collective].factor_kind
    if kind == "allreduce":
        return 2.0 * (nranks - 1) / nranks
    if kind == "ring":
        return (nranks - 1) / nranks
    return 1.0


# --------------------------------------------------------------------------------------------
# Public result
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoFile:
    name: str  # e.g. "2025-11-03_h200-roce-2x8_all_reduce.log"
    content: bytes
    label: str  # "nightly", "sweep" or "rerun"
    host: str  # first host
    metadata: dict[str, str]


@dataclass(frozen=True)
class _RunPlan:
    profile: HardwareProfile
    collective: str
    day: date
    stack: SoftwareStack
    label: str
    fail_at_bytes: int | None = None
    failure: str = "link_flap"  # a key of FAILURES (the lines the failed run ends with)
    # Tuning sweeps (``sweep_files``): the NCCL_* settings on the launch command, what they do
    # to busbw ((low, high, factor) per size range) and which replicate this is.
    env: tuple[tuple[str, str], ...] = ()
    effects: tuple[tuple[int, int, float], ...] = ()
    replicate: int = 0

    @property
    def name(self) -> str:
        suffix = "_rerun" if self.label == "rerun" else ""
        if self.label == TUNING_LABEL:
            setting = "_".join(f"{k}-{v}" for k, v in self.env) or "default"
            suffix = f"_{setting}_r{self.replicate}"
        return f"{self.day.isoformat()}_{self.profile.slug}_{self.collective}{suffix}.log"

    def effect(self, size: int) -> float:
        """busbw factor of this plan's settings at ``size`` (1 = as the default)."""
        factor = 1.0
        for low, high, gain in self.effects:
            if low <= size <= high:
                factor *= gain
        return factor


def demo_files(*, days: int = 6, seed: int = 7) -> list[DemoFile]:
    """The demo history: ``days`` nightly all_reduce runs per profile, full collective sweeps
    on the first and the last day, the NCCL upgrade half-way and one failed nightly.

    Same arguments -> byte-identical files (the defaults give 43 files of 5-15 KB).
    """
    if days < 1:
        raise ValueError("days must be >= 1")
    return [_render_file(plan, seed) for plan in _plans(days)]


TUNING_LABEL = "tuning-sweep"


def sweep_files(
    *,
    values: dict[str, tuple[tuple[int, int, float], ...]],
    setting: str = "NCCL_ALGO",
    profile: HardwareProfile | None = None,
    collective: str = "all_reduce",
    replicates: int = 3,
    seed: int = 7,
    day: date = FIRST_DAY,
) -> list[DemoFile]:
    """A tuning sweep: ``replicates`` runs per value of ``setting`` on one profile, each with
    the run-to-run noise of the history (±0.8 % per run, up to ±1 % per row).

    ``values`` maps a value ("" = the variable unset, NCCL's default) to its effect on busbw:
    ``(low_bytes, high_bytes, factor)`` ranges, e.g. ``{"": (), "Tree": ((0, 1 << 20, 1.3),)}``
    (Tree 30 % faster up to 1 MiB). The value is on the launch command, where the parser
    reads it. Same arguments -> the same bytes.
    """
    chosen = profile or PROFILES[1]
    plans = [
        _RunPlan(
            chosen,
            collective,
            day,
            NEW_STACK,
            TUNING_LABEL,
            env=((setting, value),) if value else (),
            effects=effects,
            replicate=replicate + index * replicates,
        )
        for index, (value, effects) in enumerate(values.items())
        for replicate in range(replicates)
    ]
    return [_render_file(plan, seed) for plan in plans]


# --------------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------------


def _stack_for(day_index: int, days: int) -> SoftwareStack:
    # With a single day there is no history to upgrade in; otherwise switch half-way so both
    # versions have a few nights for baselines.
    upgrade_day = max(1, days // 2)
    return OLD_STACK if day_index < upgrade_day else NEW_STACK


def _plans(days: int) -> list[_RunPlan]:
    sweep_days = {0, days - 1}
    failed_day = max(0, days - 2)
    plans: list[_RunPlan] = []
    for index in range(days):
        day = FIRST_DAY + timedelta(days=index)
        stack = _stack_for(index, days)
        for profile in PROFILES:
            failing = index == failed_day and profile.slug == FAILED_PROFILE
            plans.append(
                _RunPlan(
                    profile,
                    "all_reduce",
                    day,
                    stack,
                    "nightly",
                    fail_at_bytes=FAIL_AT_BYTES if failing else None,
                )
            )
            if failing:
                plans.append(_RunPlan(profile, "all_reduce", day, stack, "rerun"))
            if index in sweep_days:
                plans.extend(
                    _RunPlan(profile, model.name, day, stack, "sweep")
                    for model in profile.collectives
                    if model.name != "all_reduce"
                )
    return plans


def _run_rng(plan: _RunPlan, seed: int) -> random.Random:
    # A string seed is hashed with SHA-512 by random.Random: stable across processes and
    # PYTHONHASHSEED, and independent per run so adding a run never shifts the others.
    key = f"{seed}|{plan.profile.slug}|{plan.day.isoformat()}|{plan.collective}|{plan.label}"
    if plan.label == TUNING_LABEL:  # the history's keys stay as they were: same bytes
        key += f"|{plan.env}|{plan.replicate}"
    return random.Random(key)


# --------------------------------------------------------------------------------------------
# Physics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Measure:
    time_us: float
    algbw: float
    busbw: float
    checked: bool  # whether #wrong is reported (else N/A)


@dataclass(frozen=True)
class _Row:
    size: int
    count: int
    out_of_place: _Measure
    in_place: _Measure


def _sizes(profile: HardwareProfile, collective: str) -> list[int]:
    """-b .. -e by factor 2. Per-rank collectives need at least one element per rank (smaller
    sizes print as 0 bytes in nccl-tests), so the job script raises -b for them."""
    minimum = profile.min_bytes
    if SEMANTICS[collective].count_per_rank:
        minimum = max(minimum, _DTYPE_BYTES[profile.dtype] * profile.ranks)
    sizes = []
    size = minimum
    while size <= profile.max_bytes:
        sizes.append(size)
        size *= 2
    return sizes


def _regression_share(plan: _RunPlan, size: int) -> float:
    """Fraction of bandwidth lost to the deliberate regression at this size (0 elsewhere)."""
    if (plan.profile.slug, plan.collective, plan.stack.nccl) != (
        REGRESSION.profile,
        REGRESSION.collective,
        REGRESSION.nccl,
    ):
        return 0.0
    # A smooth logistic in log2(size), centred one step below the onset: ~5 % of the loss at
    # 64 MB, half at 128 MB, ~95 % at 256 MB and all of it beyond.
    centre = math.log2(REGRESSION.onset_bytes) - 1
    weight = 1.0 / (1.0 + math.exp(-3.0 * (math.log2(size) - centre)))
    return REGRESSION.loss * weight


def _model_time_us(model: CollectiveModel, size: int, factor: float, loss: float) -> float:
    peak_algbw = model.plateau_busbw / factor * (1.0 - loss)  # GB/s
    wire_us = size / (peak_algbw * 1e3)  # bytes / (GB/s) = ns; / 1e3 -> µs
    overhead = (model.knee_bytes / size) ** _KNEE_EXPONENT
    return model.latency_us + wire_us * (1.0 + overhead)


def _jitter(rng: random.Random, size: int) -> float:
    # Small messages are noisier (launch and polling jitter); never more than ±1 %.
    sigma = 0.006 if size < MiB else 0.003
    return max(-0.01, min(0.01, rng.gauss(0.0, sigma)))


def _measure(size: int, time_us: float, factor: float, checked: bool) -> _Measure:
    algbw = size / (time_us * 1e3)  # GB/s, GB = 1e9 as in nccl-tests
    return _Measure(time_us, algbw, algbw * factor, checked)


def _rows(plan: _RunPlan, rng: random.Random) -> list[_Row]:
    profile, collective = plan.profile, plan.collective
    semantics = SEMANTICS[collective]
    model = profile.model(collective)
    factor = bus_factor(collective, profile.ranks)
    dtype_bytes = _DTYPE_BYTES[profile.dtype]
    run_drift = rng.uniform(-0.008, 0.008)  # this night's node/fabric condition
    in_place_bias = rng.uniform(-0.003, 0.005)  # in-place touches one buffer: a bit different
    rows = []
    for size in _sizes(profile, collective):
        base = _model_time_us(model, size, factor, _regression_share(plan, size))
        base *= 1.0 + run_drift
        base /= plan.effect(size)
        oop_time = base * (1.0 + _jitter(rng, size))
        ip_time = base * (1.0 + in_place_bias) * (1.0 + _jitter(rng, size))
        count = size // dtype_bytes
        if semantics.count_per_rank:
            count //= profile.ranks
        rows.append(
            _Row(
                size,
                count,
                _measure(size, oop_time, factor, checked=True),
                _measure(size, ip_time, factor, checked=semantics.in_place_checked),
            )
        )
    return rows


def avg_bus_bandwidth(rows: list[_Row]) -> float:
    """What nccl-tests prints as "Avg bus bandwidth".

    nccl-tests adds busBw to one accumulator in BenchTime, which runs for the out-of-place
    *and* the in-place pass of every size, and divides by the number of passes: the mean over
    both columns, of the unrounded values. (Checked against real 2.17 outputs, where the mean
    of the printed out-of-place column alone is visibly off.) We do the same.
    """
    values = [m.busbw for row in rows for m in (row.out_of_place, row.in_place)]
    return sum(values) / len(values)


# --------------------------------------------------------------------------------------------
# Formatting, following nccl-tests' printf formats
# --------------------------------------------------------------------------------------------

_ROW_PREFIX = "# %10s  %12s  %8s  %6s  %6s"
_COLUMNS = _ROW_PREFIX + "  %7s  %6s  %6s  %6s" * 2 + " "


def _column_header() -> list[str]:
    empty = ("",) * 5
    return [
        (_ROW_PREFIX % empty) + "           out-of-place                       in-place          ",
        _COLUMNS
        % ("size", "count", "type", "redop", "root", *("time", "algbw", "busbw", "#wrong") * 2),
        _COLUMNS % ("(B)", "(elements)", "", "", "", *("(us)", "(GB/s)", "(GB/s)", "") * 2),
    ]


def _fit(value: float, width: int) -> str:
    """nccl-tests' getFloatStr: as many of 2, 1, 0 decimals as fit in ``width``."""
    for decimals in (2, 1, 0):
        text = f"{value:{width}.{decimals}f}"
        if len(text) <= width:
            return text
    return f"{value:{width}.1e}" if width >= 7 else f"{value:{width}.0e}"


def _format_measure(measure: _Measure) -> str:
    # "  %6g" of the wrong-element count, or the literal "    N/A" (one column narrower)
    wrong = f"  {0.0:6g}" if measure.checked else "    N/A"
    timing = f"  {_fit(measure.time_us, 7)}  {_fit(measure.algbw, 6)}  {_fit(measure.busbw, 6)}"
    return timing + wrong


def _format_row(row: _Row, dtype: str, redop: str, root: int) -> str:
    return (
        f"{row.size:12d}  {row.count:12d}  {dtype:>8}  {redop:>6}  {root:6d}"
        + _format_measure(row.out_of_place)
        + _format_measure(row.in_place)
    )


# --------------------------------------------------------------------------------------------
# Rendering one file
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rank:
    rank: int
    host: str
    local: int  # device index on the host
    pid: int
    comm: str  # the ncclComm_t address NCCL INFO lines print


def _ranks(profile: HardwareProfile, rng: random.Random) -> list[_Rank]:
    ranks = []
    for node, host in enumerate(profile.hosts):
        # mpirun starts one process per GPU almost back to back: consecutive pids, rare gaps
        pid = rng.randrange(20_000, 3_900_000)
        for local in range(profile.gpus_per_node):
            rank = node * profile.gpus_per_node + local
            ranks.append(_Rank(rank, host, local, pid, _pointer(rng)))
            pid += 2 if rng.random() < 0.15 else 1
    return ranks


def _device_line(profile: HardwareProfile, rank: _Rank) -> str:
    bus = profile.bus_ids[rank.local]
    return (
        f"#  Rank {rank.rank:2d} Group  0 Pid {rank.pid:6d} on {rank.host:>10} "
        f"device {rank.local:2d} [0000:{bus}:00] {profile.gpu_name}"
    )


def _preamble(plan: _RunPlan, ranks: list[_Rank], sizes: list[int]) -> list[str]:
    profile, stack = plan.profile, plan.stack
    return [
        f"# nccl-tests version {stack.nccl_tests} nccl-headers={stack.code} "
        f"nccl-library={stack.code}",
        f"# Collective test starting: {plan.collective}_perf",
        f"# nThread 1 nGpus 1 minBytes {sizes[0]} maxBytes {profile.max_bytes} step: 2(factor) "
        f"warmup iters: {profile.warmup_iters} iters: {profile.iters} agg iters: 1 "
        "validation: 1 graph: 0",
        "#",
        "# Using devices",
        *(_device_line(profile, rank) for rank in ranks),
    ]


def _ip(profile: HardwareProfile, node: int) -> str:
    return f"{profile.oob_prefix}.{7 + node // 200}.{11 + node % 200}"


def _pointer(rng: random.Random) -> str:
    # glibc heap addresses of a PIE process: 0x55.. - 0x5f.., 16-byte aligned
    return f"0x{rng.randrange(0x550000000000, 0x600000000000) & ~0xF:x}"


def _info_init(plan: _RunPlan, ranks: list[_Rank], rng: random.Random) -> list[str]:
    """A few NCCL INFO lines of the init, from rank 0 and the first rank of each other node,
    interleaved the way mpirun merges the processes' stdout."""
    profile, stack = plan.profile, plan.stack
    leaders = [r for r in ranks if r.local == 0][:3]
    nics = " ".join(f"[{i}]mlx5_{i}:1/RoCE" for i in range(profile.gpus_per_node))
    lines: list[str] = []

    def info(rank: _Rank, text: str, thread: int = 0) -> None:
        tid = rank.pid + thread
        lines.append(f"{rank.host}:{rank.pid}:{tid} [{rank.local}] NCCL INFO {text}")

    for node, rank in enumerate(leaders):
        info(rank, f"Bootstrap : Using bond0:{_ip(profile, node)}<0>")
    info(leaders[0], f"NCCL version {stack.nccl}+cuda{stack.cuda}")
    for node, rank in enumerate(leaders):
        proxy = 9 + rng.randrange(4)
        info(rank, f"NET/IB : Using {nics} [RO]; OOB bond0:{_ip(profile, node)}<0>", proxy)
        info(rank, "Using network IB", proxy)
    for rank in leaders:
        info(
            rank,
            f"comm {rank.comm} rank {rank.rank} nRanks {profile.ranks} nNodes "
            f"{profile.nodes} localRanks {profile.gpus_per_node} localRank 0 MNNVL 0",
            9,
        )
    info(leaders[0], "Connected all rings", 9)
    comm_id = f"0x{rng.getrandbits(64):016x}"
    for rank in leaders:
        info(
            rank,
            f"ncclCommInitRank comm {rank.comm} rank {rank.rank} nranks {profile.ranks} "
            f"cudaDev 0 nvmlDev 0 busId {profile.bus_ids[0]}000 commId {comm_id} - Init COMPLETE",
            9,
        )
    return lines


def _info_destroy(plan: _RunPlan, ranks: list[_Rank]) -> list[str]:
    """NCCL frees the communicators before nccl-tests prints its footer."""
    profile = plan.profile
    return [
        f"{rank.host}:{rank.pid}:{rank.pid} [{rank.local}] NCCL INFO comm {rank.comm} "
        f"rank {rank.rank} nranks {profile.ranks} cudaDev {rank.local} "
        f"busId {profile.bus_ids[rank.local]}000 - Destroy COMPLETE"
        for rank in ranks[:: profile.gpus_per_node][:2]
    ]


def _failure(plan: _RunPlan, ranks: list[_Rank], rng: random.Random) -> list[str]:
    """How the failed run ends: the NCCL WARNs of its ``failure`` kind on one rank, then
    nccl-tests' failure trace and mpirun's abort notice (truncated: nothing at all)."""
    victim = ranks[rng.randrange(len(ranks) // 2, len(ranks))]
    if plan.failure == "truncated":
        return []  # the job hung and was killed: the output just stops
    warn_prefix = f"{victim.host}:{victim.pid}:{victim.pid + 11} [{victim.local}] NCCL WARN"
    warns, result, where = FAILURES[plan.failure](victim, ranks)
    lines = [f"{warn_prefix} {w}" for w in warns]
    if where == "cuda":  # nccl-tests' own CUDACHECK, no NCCL result
        lines.append(f"{victim.host}: Test CUDA failure common.cu:891 '{result}'")
    else:
        lines.append(f"{victim.host}: Test NCCL failure {where} '{result}'")
    return [
        *lines,
        f" .. {victim.host} pid {victim.pid}: Test failure common.cu:1152",
        f" .. {victim.host} pid {victim.pid}: Test failure all_reduce.cu:90",
        f" .. {victim.host} pid {victim.pid}: Test failure common.cu:1178",
        f" .. {victim.host} pid {victim.pid}: Test failure common.cu:1391",
        "-" * 74,
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        "-" * 74,
    ]


_Failure = Callable[["_Rank", list["_Rank"]], tuple[list[str], str, str]]
_SYSTEM = "unhandled system error (run with NCCL_DEBUG=INFO for details)"
_REMOTE = "remote process exited or there was a network error"


def _peer(victim: _Rank, ranks: list[_Rank]) -> _Rank:
    return next((r for r in ranks if r.host != victim.host), victim)


def _peer_ip(victim: _Rank, ranks: list[_Rank]) -> str:
    return f"10.60.7.{11 + ranks.index(_peer(victim, ranks)) // 8}"


# The failure signatures the generator writes (fictional runs, real message shapes: NCCL's
# net_ib.cc, transport and alloc warnings, nccl-tests' common.cu). Each returns the WARN
# lines, the ncclResult_t text nccl-tests quotes, and where nccl-tests caught it.
FAILURES: dict[str, _Failure] = {
    "link_flap": lambda v, r: (
        [f"NET/IB : mlx5_{v.local}:1 Got async event : port error",
         "Call to ibv_post_send failed with error Network is down"],
        f"{_SYSTEM} / Call to ibv_post_send failed with error Network is down",
        "common.cu:1005",
    ),
    "ib_completion": lambda v, r: (
        [f"NET/IB : Got completion from peer {_peer_ip(v, r)}<52344> with status=12 opcode=0 "
         f"len=0 vendor err 129 (Recv) localGid ::ffff:10.60.7.{11 + r.index(v) // 8} "
         f"remoteGids::ffff:{_peer_ip(v, r)} hca mlx5_{v.local}",
         "transport/net.cc:1298 -> 6"],
        f"{_REMOTE} / ", "common.cu:1005",
    ),
    "remote_error": lambda v, r: (
        [f"NET/IB : peer {_peer(v, r).host} closed the connection (remote process exited?)"],
        f"{_REMOTE} / ", "common.cu:1279",
    ),
    "ibv_reg_mr": lambda v, r: (
        ["Call to ibv_reg_mr failed with error Cannot allocate memory",
         "NET/IB : Failed to register memory (ulimit -l ?)"],
        _SYSTEM, "common.cu:1012",
    ),
    "unhandled_cuda": lambda v, r: (
        ["Cuda failure 'an illegal memory access was encountered'"],
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "common.cu:1012",
    ),
    "cuda_oom": lambda v, r: ([], "out of memory", "cuda"),
    "internal": lambda v, r: (
        ["Trees/Rings mismatch between ranks: the communicator topology differs"],
        "internal error - please report this issue to the NCCL developers", "common.cu:1012",
    ),
    "invalid_usage": lambda v, r: (
        ["Invalid config blocking attribute value -2147483648"],
        "invalid usage (run with NCCL_DEBUG=WARN for details)", "common.cu:1012",
    ),
}  # fmt: skip
FAILURE_KINDS = (*FAILURES, "truncated", "out_of_bounds")


def failure_file(kind: str, *, seed: int = 7) -> DemoFile:
    """One nightly all_reduce of the 16-node InfiniBand demo profile that fails with the
    given signature (``FAILURE_KINDS``): the tests' fixtures for failures no shared sample
    shows, made the way the demo's own failed nightly is."""
    if kind not in FAILURE_KINDS:
        raise ValueError(f"unknown failure {kind!r}; known: {', '.join(FAILURE_KINDS)}")
    if kind == "out_of_bounds":
        plan = _RunPlan(IB_H100, "all_reduce", FIRST_DAY, NEW_STACK, f"failure-{kind}")
        rng = _run_rng(plan, seed)
        text = "\n".join(_render_lines(plan, rng)) + "\n"
        # validation failed on the largest sizes: #wrong counted, the footer says so
        text = text.replace("# Out of bounds values : 0 OK", "# Out of bounds values : 24 FAILED")
        return _as_file(plan, text)
    plan = _RunPlan(
        IB_H100, "all_reduce", FIRST_DAY, NEW_STACK, f"failure-{kind}",
        fail_at_bytes=FAIL_AT_BYTES, failure=kind,
    )  # fmt: skip
    return _as_file(plan, "\n".join(_render_lines(plan, _run_rng(plan, seed))) + "\n")


def _footer(plan: _RunPlan, rows: list[_Row]) -> list[str]:
    return [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {avg_bus_bandwidth(rows):g} ",
        "#",
        f"# Collective test concluded: {plan.collective}_perf",
        "#",
    ]


def _render_lines(plan: _RunPlan, rng: random.Random) -> list[str]:
    profile = plan.profile
    semantics = SEMANTICS[plan.collective]
    ranks = _ranks(profile, rng)
    rows = _rows(plan, rng)
    verbose = profile.nccl_debug == "INFO"
    lines = _preamble(plan, ranks, [row.size for row in rows])
    if plan.label == TUNING_LABEL:
        lines.insert(0, _launch_command(plan, [row.size for row in rows]))
    if verbose:
        lines += _info_init(plan, ranks, rng)
    elif profile.nccl_debug == "VERSION" and rng.random() < 0.5:
        # Only some of this cluster's job templates export NCCL_DEBUG=VERSION.
        lines.append(f"NCCL version {plan.stack.nccl}+cuda{plan.stack.cuda}")
    lines += ["#", *_column_header()]
    for row in rows:
        if plan.fail_at_bytes is not None and row.size >= plan.fail_at_bytes:
            return [*lines, *_failure(plan, ranks, rng)]
        lines.append(_format_row(row, profile.dtype, semantics.redop, semantics.root))
    if verbose:
        lines += _info_destroy(plan, ranks)
    return lines + _footer(plan, rows)


def _launch_command(plan: _RunPlan, sizes: list[int]) -> str:
    """How a tuning sweep's job starts each run: the settings before the launcher, as
    engineers type them (``NCCL_ALGO=Tree mpirun ...``)."""
    profile = plan.profile
    env = " ".join(f"{k}={v}" for k, v in plan.env)
    return (
        f"$ {env + ' ' if env else ''}mpirun -np {profile.ranks} ./build/{plan.collective}_perf "
        f"-b {sizes[0]} -e {profile.max_bytes} -f 2 -g 1"
    ).replace("$  ", "$ ")


def _render_file(plan: _RunPlan, seed: int) -> DemoFile:
    rng = _run_rng(plan, seed)
    return _as_file(plan, "\n".join(_render_lines(plan, rng)) + "\n")


def _as_file(plan: _RunPlan, text: str) -> DemoFile:
    profile = plan.profile
    return DemoFile(
        name=plan.name,
        content=text.encode("ascii"),
        label=plan.label,
        host=profile.hosts[0],
        metadata={
            "profile": profile.slug,
            "cluster": profile.cluster,
            "collective": plan.collective,
            "nccl": plan.stack.nccl,
            "cuda": plan.stack.cuda,
            "nccl_tests": plan.stack.nccl_tests,
            "day": plan.day.isoformat(),
            # when the run happened (nightly jobs start at 02:00 UTC): the run's time axis
            "captured_at": f"{plan.day.isoformat()}T02:{plan.replicate % 60:02d}:00+00:00",
            "nodes": str(profile.nodes),
            "gpus": str(profile.ranks),
        },
    )
