"""/proc/interrupts: per-CPU counts, IRQ spread per NIC function. Values from the samples."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import proc_interrupts
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import any_sample, sample

DESKTOP = "interrupts/frc971_aos_test_fixture_desktop_20cpu_2x_nvidia_proc_interrupts.txt"
GREP_MLX = "interrupts/jordan_100gbe_lab_ryzen9900x_cx5_proc_interrupts_grep_mlx_EXCERPT.txt"


def parse_file(relative: str) -> proc_interrupts.ProcInterruptsResult:
    with sample(relative).open("rb") as f:
        return proc_interrupts.parse(f)


def test_full_file_with_header_arch_rows_and_nvidia_irqs() -> None:
    result = parse_file(DESKTOP)
    assert result.cpus == 20 and len(result.irqs) == 110
    by_irq = {i.irq: i for i in result.irqs}
    nvidia = by_irq["229"]
    assert (nvidia.actions, nvidia.chip, nvidia.hwirq) == ("nvidia", "IR-PCI-MSI", "524288-edge")
    assert (nvidia.total, nvidia.active_cpus, nvidia.busiest_cpu) == (4120250, (16,), 16)
    assert by_irq["16"].actions == "peak_pciefd, peak_pciefd, peak_pciefd, peak_pciefd"
    assert by_irq["LOC"].actions == "Local timer interrupts" and by_irq["LOC"].total == 98612000
    assert by_irq["ERR"].total == 0
    json.dumps(result.to_json())


def test_grep_excerpt_infers_cpus_and_groups_by_nic_function() -> None:
    result = parse_file(GREP_MLX)
    assert (result.host, result.cpus, len(result.irqs)) == ("crow", 12, 15)
    first = result.irqs[0]
    assert (first.irq, first.total, first.busiest_cpu, first.pci) == ("98", 23274, 10,
                                                                       "0000:01:00.0")  # fmt: skip
    port0, port1 = result.devices
    assert (port0.pci, port0.driver, port0.irqs) == ("0000:01:00.0", "mlx5", 13)
    assert port0.serving_cpus == (3, 7, 8, 9, 10, 11)
    assert (port1.pci, port1.irqs, port1.top_cpu, port1.top_cpu_share) == (
        "0000:01:00.1", 2, 11, 1.0
    )  # fmt: skip
    assert result.summary()["devices_on_one_cpu"] == ["0000:01:00.1"]
    rows = {(s.device, s.counter): s.value for s in result.samples}
    assert rows[("98:mlx5_async0@pci:0000:01:00.0", "cpu10")] == 23274
    assert rows[("98:mlx5_async0@pci:0000:01:00.0", "total")] == 23274


def test_two_readings_become_two_snapshots() -> None:
    reading = (
        "           CPU0       CPU1\n"
        " 99:  {a}  {b}  IR-PCI-MSIX-0000:3b:00.0 1-edge mlx5_comp0@pci:0000:3b:00.0\n"
    )
    text = reading.format(a=10, b=0) + reading.format(a=500, b=0)
    result = proc_interrupts.parse(io.BytesIO(text.encode()))
    totals = [(s.snapshot, s.value) for s in result.samples if s.counter == "total"]
    assert totals == [(0, 10), (1, 500)]


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no /proc/interrupts rows"):
        proc_interrupts.parse(io.BytesIO(b"CPU0\nnothing\n"))


AZURE = "interrupts/lkml_azure_centos77_mlx5_hyperv_vf_all_irqs_on_cpu0_proc_interrupts.txt"


def test_kernel_3_10_layout_and_two_mlx5_vfs_on_cpu0() -> None:
    # ../shared/more-samples: CentOS 7.7 prints "PCI-MSI-edge mlx5_comp0@pci:..." (trigger
    # glued to the chip, no hwirq column). Totals summed by hand from the file.
    with any_sample(AZURE).open("rb") as f:
        result = proc_interrupts.parse(f)
    assert result.cpus == 8 and len(result.irqs) == 39
    assert result.parts == ("cpu header", "irq rows", "arch rows")
    by_irq = {i.irq: i for i in result.irqs}
    timer = by_irq["0"]
    assert (timer.chip, timer.hwirq, timer.actions, timer.total) == (
        "IO-APIC-edge", None, "timer", 9881
    )  # fmt: skip
    assert by_irq["3"].actions is None and by_irq["3"].total == 941  # no action name
    comp0 = by_irq["28"]
    assert (comp0.actions, comp0.pci, comp0.active_cpus) == (
        "mlx5_comp0@pci:8b76:00:02.0", "8b76:00:02.0", (0,)
    )  # fmt: skip
    first, second = result.devices
    assert (first.pci, first.driver, first.irqs, first.interrupts) == (
        "83a4:00:02.0", "mlx5", 11, 234853
    )  # fmt: skip
    assert (second.pci, second.irqs, second.interrupts) == ("8b76:00:02.0", 11, 858923)
    assert first.serving_cpus == second.serving_cpus == (0,)
    assert result.summary()["devices_on_one_cpu"] == ["83a4:00:02.0", "8b76:00:02.0"]
    assert by_irq["RES"].total == 59746 + 34162 + 150579 + 45146 + 149421 + 87954 + 149095 + 47137


def test_a_grep_excerpt_says_it_had_no_header() -> None:
    with sample(GREP_MLX).open("rb") as f:
        assert proc_interrupts.parse(f).parts == ("irq rows",)


@pytest.mark.parametrize("relative", [DESKTOP, GREP_MLX, AZURE])
def test_detection(relative: str) -> None:
    path = any_sample(relative)
    assert detect_kind(path.name, path.read_bytes()) == "proc_interrupts"


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(proc_interrupts.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=3190), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = sample(GREP_MLX).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(proc_interrupts.parse(io.BytesIO(blob)).to_json())
