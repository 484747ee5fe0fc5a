"""What the two Prometheus kinds share: from a metric name + labels to a counter sample row.

A Prometheus series is ``name{label="value",...}``. PerfHub's counter rows are (host, device,
port, counter): the host comes from ``Hostname`` (dcgm-exporter), ``hostname``/``host``/
``node``/``nodename`` or ``instance`` (without ``:port``); the device from ``gpu`` (as
``GPU <n>``, like dcgmi and nvidia-smi), ``device``/``interface``/``hca``, or ``cpu`` (as
``cpu<n>``); the port from ``port``. Descriptive labels become host/device facts
(``UUID``, ``modelName``, ``DCGM_FI_DRIVER_VERSION``, ``pci_bus_id``) and scheduling labels
(``job``, ``pod``, ``namespace``, ``container``...) are dropped; every other label stays in
the counter name (``node_cpu_seconds_total{mode="idle"}``) so distinct series never merge.
node_exporter's ethtool collector prefixes NIC statistics with ``node_ethtool_``; the prefix
is removed so that ``rx_prio3_pause`` is the same counter whether ethtool or a scrape read it
and the findings rules apply to both.
"""

from __future__ import annotations

import dataclasses
import re

from artifacts.fabric.parsers.counters_common import CounterSample, counter_unit

HOST_LABELS = ("Hostname", "hostname", "host", "node", "nodename", "instance")
DROPPED_LABELS = frozenset(
    {
        "job", "instance", "Hostname", "hostname", "host", "node", "nodename", "pod",
        "namespace", "container", "endpoint", "service", "prometheus", "prometheus_replica",
        "exported_pod", "exported_namespace", "exported_container", "err_code", "err_msg",
        "__name__",
    }
)  # fmt: skip
FACT_LABELS = {
    "UUID": "gpu.uuid",
    "modelName": "gpu.name",
    "DCGM_FI_DRIVER_VERSION": "gpu.driver_version",
    "pci_bus_id": "gpu.bus_id",
}
_DEVICE_LABELS = ("device", "interface", "ifname", "hca", "ib_device", "netdev")
_PREFIXES = ("node_ethtool_",)
_DCGM_UNITS = (
    ("_TEMP", "C"), ("_POWER_USAGE", "W"), ("_ENERGY_CONSUMPTION", "mJ"), ("_CLOCK", "MHz"),
    ("_UTIL", "%"), ("_BYTES", "bytes"), ("_FB_", "MiB"),
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class LabelFact:
    host: str | None
    device: str | None
    name: str
    value: str


@dataclasses.dataclass(frozen=True)
class Placed:
    host: str | None
    device: str | None
    port: int | None
    counter: str
    unit: str
    facts: tuple[LabelFact, ...]

    def sample(self, value: float, captured_at: str | None, snapshot: int) -> CounterSample:
        """One reading of this series (whole numbers kept as ints, as counters are)."""
        return CounterSample(
            host=self.host,
            device=self.device,
            port=self.port,
            counter=self.counter,
            value=int(value) if value.is_integer() and abs(value) < 2**63 else value,
            unit=self.unit,
            captured_at=captured_at,
            snapshot=snapshot,
        )


def place(name: str, labels: dict[str, str]) -> Placed:
    """Where one series belongs: host, device, port, counter name, unit, label facts."""
    host = next((labels[k] for k in HOST_LABELS if labels.get(k)), None)
    if host and host == labels.get("instance"):
        host = _without_port(host)
    used: set[str] = set()
    device = None
    if labels.get("gpu", "") != "":
        device = f"GPU {labels['gpu']}"
        used.update({"gpu", "device"})  # dcgm-exporter's device="nvidia0" says the same
    else:
        for key in _DEVICE_LABELS:
            if labels.get(key):
                device = labels[key]
                used.add(key)
                break
        if device is None and labels.get("cpu", "") != "":
            device = f"cpu{labels['cpu']}"
            used.add("cpu")
    port = None
    if labels.get("port", "").isdigit():
        port = int(labels["port"])
        used.add("port")
    facts = tuple(
        LabelFact(host, device, fact, labels[key])
        for key, fact in FACT_LABELS.items()
        if labels.get(key)
    )
    rest = sorted(
        (k, v) for k, v in labels.items() if k not in used and k not in DROPPED_LABELS
        and k not in FACT_LABELS
    )  # fmt: skip
    base = name
    for prefix in _PREFIXES:
        if base.startswith(prefix) and len(base) > len(prefix):
            base = base[len(prefix) :]
    counter = base + ("{" + ",".join(f'{k}="{v}"' for k, v in rest) + "}" if rest else "")
    return Placed(host, device, port, counter[:200], unit_for(base), facts)


def unit_for(name: str) -> str:
    if name.startswith("DCGM_FI_"):
        for marker, unit in _DCGM_UNITS:
            if marker in name:
                return unit
        return "count"
    stem = name.removesuffix("_total")
    for suffix, unit in (("_bytes", "bytes"), ("_seconds", "s"), ("_celsius", "C"),
                         ("_watts", "W"), ("_joules", "J"), ("_ratio", "ratio"),
                         ("_hertz", "Hz"), ("_packets", "packets")):  # fmt: skip
        if stem.endswith(suffix):
            return unit
    return counter_unit(stem)


def _without_port(instance: str) -> str:
    if instance.startswith("["):  # [ipv6]:port
        return instance[1:].split("]", 1)[0]
    return re.sub(r":\d+$", "", instance)
