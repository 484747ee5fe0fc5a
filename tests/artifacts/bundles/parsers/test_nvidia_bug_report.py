"""nvidia-bug-report logs: sections with line ranges, kinds per section, the bundle's own facts.

The bundle is assembled from real samples (tests/artifacts/bundles/factory.py); the expected
line numbers were read off the assembled text.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.bundles.parsers import nvidia_bug_report
from artifacts.bundles.parsers.common import Limits
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from artifacts.parsers.streams import open_decompressed
from tests.artifacts.bundles import factory as bf


def parsed() -> nvidia_bug_report.NvidiaBugReportResult:
    return nvidia_bug_report.parse(io.BytesIO(bf.bug_report_text().encode()))


def test_prologue_versions_and_host() -> None:
    r = parsed()
    assert (r.host, r.script_version) == ("gpu-node-07", "34389467")
    assert r.captured_at == "2025-02-23T16:24:30+00:00"
    assert r.kernel_release == "5.15.0-131-generic"
    assert r.kernel_version.startswith("Linux version 5.15.0-131-generic (buildd@lcy02")
    assert r.driver_version == "560.35.03"  # /proc/driver/nvidia/version
    assert r.kernel_cmdline.endswith("iommu=pt pci=realloc=off")
    assert r.warnings == ()
    json.dumps(r.to_json())


def test_sections_have_kinds_and_line_ranges() -> None:
    parts = {p.title: p for p in parsed().parts}
    assert parts["dmesg"].kind == "dmesg" and parts["dmesg"].stored
    assert (parts["dmesg"].line_start, parts["dmesg"].line_end) == (50, 94)
    assert parts["/proc/interrupts"].kind == "proc_interrupts"
    assert (parts["/proc/interrupts"].line_start, parts["/proc/interrupts"].line_end) == (103, 215)
    # the nvidia-smi block holds two commands: each is its own part
    smi = parts["/usr/bin/nvidia-smi --query"]
    nvlink = parts["/usr/bin/nvidia-smi nvlink --status"]
    assert (smi.kind, smi.line_start, smi.line_end, smi.name) == (
        "nvidia_smi", 255, 506, "nvidia-smi_--query.txt"
    )  # fmt: skip
    assert (nvlink.kind, nvlink.line_start) == ("nvidia_smi", 508)
    assert parts["/usr/sbin/ibstat"].kind == "ib_status"
    stored = sorted(p.kind for p in parsed().parts if p.stored)
    assert stored == ["dmesg", "ib_status", "nvidia_smi", "nvidia_smi", "proc_interrupts"]


def test_sections_without_a_parser_are_listed_not_stored() -> None:
    parts = {p.title: p for p in parsed().parts}
    # "Key: integer" lines of the driver's params must not pass for NIC counters
    params = parts["/proc/driver/nvidia/params"]
    assert (params.kind, params.stored) == ("other", False)
    assert parts["/var/log/nvidia-installer.log"].note == "does not exist"
    assert parts["Skipping: vulkaninfo output"].note == "skipped by nvidia-bug-report.sh"
    assert parts["/usr/bin/lspci -nnDvvvxxxx"].kind == "other"
    assert parts["prologue"].line_start == 3


def test_gpu_information_and_lspci_links() -> None:
    r = parsed()
    (gpu,) = r.gpus
    assert (gpu.bus, gpu.model, gpu.vbios) == ("0000:18:00.0", "NVIDIA H100 80GB HBM3",
                                               "96.00.99.00.01")  # fmt: skip
    links = {link.bdf: link for link in r.pci_links}
    assert set(links) == {"0000:18:00.0", "0000:1a:00.0"}  # the Intel bridge is not kept
    h100 = links["0000:18:00.0"]
    assert (h100.vendor, h100.gen_max, h100.gen_current, h100.width_current) == ("nvidia", 5, 4,
                                                                                  16)  # fmt: skip
    assert h100.status_note == "downgraded"
    assert links["0000:1a:00.0"].gen_current == 5


def test_iter_parts_hands_over_each_stored_section_text() -> None:
    raw = gzip.compress(bf.bug_report_text().encode())
    stream = open_decompressed(io.BytesIO(raw), compressed_size=len(raw))
    bodies = {p.title: body.read() for p, body in nvidia_bug_report.iter_parts(stream) if body}
    assert set(bodies) == {
        "dmesg", "/proc/interrupts", "/usr/bin/nvidia-smi --query",
        "/usr/bin/nvidia-smi nvlink --status", "/usr/sbin/ibstat",
    }  # fmt: skip
    assert bodies["/usr/bin/nvidia-smi --query"].startswith(b"==============NVSMI LOG")
    assert bodies["/usr/sbin/ibstat"] == (bf.text(bf.IBSTAT) + "\n").encode()
    assert b"*** ls:" not in bodies["/proc/interrupts"]


def test_part_size_limit_lists_but_does_not_store() -> None:
    limits = Limits(max_part_bytes=6000)
    parts = {p.title: (p, b) for p, b in nvidia_bug_report.iter_parts(
        io.BytesIO(bf.bug_report_text().encode()), limits)}  # fmt: skip
    smi, body = parts["/usr/bin/nvidia-smi --query"]
    assert body is None and not smi.stored and "larger than 6000" in smi.note
    assert parts["dmesg"][1] is not None  # 5403 bytes: under the limit


def test_part_count_limit_warns() -> None:
    limits = Limits(max_parts=3)
    parts = list(nvidia_bug_report.iter_parts(io.BytesIO(bf.bug_report_text().encode()), limits))
    assert len(parts) == 3


def test_detection() -> None:
    head = bf.bug_report_text().encode()[:65536]
    assert detect_kind("nvidia-bug-report.log", head) == "nvidia_bug_report"
    assert detect_kind("renamed.txt", head) == "nvidia_bug_report"  # the banner is enough
    assert not nvidia_bug_report.accepts("x.log", bf.text(bf.NVSMI).encode())
    assert not nvidia_bug_report.accepts("dmesg.log", bf.text(bf.DMESG).encode())


def test_refuses_other_text() -> None:
    with pytest.raises(ParseError, match="not an nvidia-bug-report log"):
        nvidia_bug_report.parse(io.BytesIO(bf.text(bf.NVSMI).encode()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            [
                bf.SEP,
                "",
                "*** /proc/cmdline",
                "*** ls: -r--r--r-- 1 root",
                "dmesg:",
                "/usr/bin/nvidia-smi --query",
                "==============NVSMI LOG==============",
                "Start of NVIDIA bug report log file.",
                "uname: Linux",
                "Date: junk",
                "0000:18:00.0 3D controller: NVIDIA",
                "\t\tLnkSta:\tSpeed 99GT/s, Width x99",
                "NVRM version: 1.2",
                "[  1.0] NVRM: Xid (PCI:0000:9b:00): 79",
                "\x00\xff",
            ]
        ),
        max_size=60,
    ),
    st.binary(max_size=200),
)
def test_fuzz_only_parse_error(lines: list[str], junk: bytes) -> None:
    data = "\n".join(lines).encode() + junk
    with contextlib.suppress(ParseError):
        nvidia_bug_report.parse(io.BytesIO(data))
    for _part, _body in nvidia_bug_report.iter_parts(io.BytesIO(data)):
        pass
