"""Support bundles' own facts (script version, kernel, driver, lspci links) into HostFacts.

Runs inside the parse transaction; the parts of a bundle are unpacked afterwards
(artifacts/bundles/services.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from artifacts.fabric.loaders import FactBuffer, clear_fabric_rows, observed_at
from artifacts.models.core import Artifact
from artifacts.times import aware_datetime


def _adopt_host_and_time(artifact: Artifact, host: str | None, captured: str | None) -> None:
    """The bundle names its host and time; fill them in when the upload did not say."""
    if host and not artifact.host:
        artifact.host = host[:255]
    if captured and not artifact.captured_at:
        with contextlib.suppress(ValueError):  # an odd date loses the time, not the bundle
            artifact.captured_at = aware_datetime(captured)


def load_nvidia_bug_report(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    _adopt_host_and_time(artifact, result.host, result.captured_at)
    facts = FactBuffer(artifact, observed_at(artifact, result.captured_at))
    host = result.host
    facts.add("bug_report.script_version", result.script_version, host=host)
    facts.add("kernel.version", result.kernel_release, host=host)
    facts.add("kernel.proc_version", result.kernel_version, host=host)
    facts.add("kernel.cmdline", result.kernel_cmdline, host=host)
    facts.add("gpu.driver_version", result.driver_version, host=host)
    for gpu in result.gpus:
        where = {"host": host, "device": gpu.bus}
        facts.add("gpu.name", gpu.model, **where)
        facts.add("gpu.uuid", gpu.uuid, **where)
        facts.add("gpu.vbios", gpu.vbios, **where)
    for link in result.pci_links:
        where = {"host": host, "device": link.bdf}
        extra = {"vendor": link.vendor, "description": link.description, "from": "lspci"}
        facts.add("pcie.link_gen_max", link.gen_max, **where, extra=extra)
        facts.add("pcie.link_gen_current", link.gen_current, **where, extra=extra)
        facts.add("pcie.link_width_max", link.width_max, **where, extra=extra)
        facts.add("pcie.link_width_current", link.width_current, **where, extra=extra)
        facts.add("pcie.link_status_note", link.status_note, **where, extra=extra)
    facts.save()


def load_sysinfo_snapshot(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    _adopt_host_and_time(artifact, result.host, result.captured_at)
    facts = FactBuffer(artifact, observed_at(artifact, result.captured_at))
    facts.add("sysinfo_snapshot.version", result.version, host=result.host)
    facts.save()


def load_trace_archive(artifact: Artifact, result: Any) -> None:
    # the archive states no fact of its own: each trace is its own artifact (unpacked after
    # the parse), where its rank, job and devices are read
    clear_fabric_rows(artifact)


BUNDLE_LOADERS: dict[str, Callable[[Artifact, Any], None]] = {
    "nvidia_bug_report": load_nvidia_bug_report,
    "sysinfo_snapshot": load_sysinfo_snapshot,
    "trace_archive": load_trace_archive,
}
