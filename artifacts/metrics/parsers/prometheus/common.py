"""What the two Prometheus kinds share: from a metric name + labels to a counter sample row.

A Prometheus series is ``name{label="value",...}``. PerfHub's counter rows are (host, device,
port, counter): the host comes from ``Hostname`` (dcgm-exporter), ``hostname``/``host``/
``node``/``nodename`` or ``instance`` (without ``:port``); the device from ``gpu`` (as
``GPU <n>``, like dcgmi and nvidia-smi), ``device``/``interface``/``hca``, or ``cpu`` (as
``cpu<n>``); the port from ``port``. Descriptive labels become host/device facts
(``UUID``, ``modelName``, ``DCGM_FI_DRIVER_VERSION``, ``pci_bus_id``, dcgm-exporter's
``device="nvidia0"``), the scrape's ``job``/``instance`` become host facts and the workload
labels (``pod``, ``namespace``, ``container``: the Kubernetes pod a GPU served) device facts;
an info metric (``node_dmi_info``, ``node_os_info``, ``nvidia_smi_gpu_info``: value 1, the
facts in its labels) gives every label as a fact. Every other label stays in the counter
name (``node_cpu_seconds_total{mode="idle"}``) so distinct series never merge.
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
# labels of the scrape (host facts) and of the workload a device served (device facts)
SCRAPE_LABELS = {"job": "prometheus.job", "instance": "prometheus.instance"}
WORKLOAD_LABELS = {
    "pod": "k8s.pod", "namespace": "k8s.namespace", "container": "k8s.container",
    "exported_pod": "k8s.pod", "exported_namespace": "k8s.namespace",
    "exported_container": "k8s.container",
}  # fmt: skip
# info metrics' labels that are facts PerfHub already names (others: "<metric>.<label>")
INFO_ALIASES = {
    ("node_dmi_info", "product_name"): "hardware.name",
    ("node_dmi_info", "sys_vendor"): "hardware.vendor",
    ("node_dmi_info", "bios_version"): "bios.version",
    ("node_os_info", "pretty_name"): "os.name",
    ("node_uname_info", "release"): "kernel.version",
    ("node_uname_info", "machine"): "cpu.arch",
    ("nvidia_smi_gpu_info", "name"): "gpu.name",
    ("nvidia_smi_gpu_info", "uuid"): "gpu.uuid",
    ("nvidia_smi_gpu_info", "driver_version"): "gpu.driver_version",
    ("nvidia_smi_gpu_info", "vbios_version"): "gpu.vbios_version",
}
MAX_INFO_LABELS = 40  # facts one info series may give
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
    facts = _label_facts(name, labels, host, device, used)
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


def _label_facts(
    name: str, labels: dict[str, str], host: str | None, device: str | None, used: set[str]
) -> tuple[LabelFact, ...]:
    out = [
        LabelFact(host, device, fact, labels[k]) for k, fact in FACT_LABELS.items() if labels.get(k)
    ]
    if device and device.startswith("GPU ") and labels.get("device"):  # dcgm-exporter: nvidia0
        out.append(LabelFact(host, device, "gpu.device_file", labels["device"]))
    out += [
        LabelFact(host, None, fact, labels[k]) for k, fact in SCRAPE_LABELS.items() if labels.get(k)
    ]
    if device is not None:
        out += [
            LabelFact(host, device, fact, labels[k])
            for k, fact in WORKLOAD_LABELS.items()
            if labels.get(k)
        ]
    if name.endswith("_info"):
        skip = used | set(HOST_LABELS) | set(FACT_LABELS) | set(SCRAPE_LABELS) | {"__name__"}
        info = [(k, v) for k, v in sorted(labels.items()) if k not in skip and v]
        out += [
            LabelFact(host, device, INFO_ALIASES.get((name, k), f"{name}.{k}"), v)
            for k, v in info[:MAX_INFO_LABELS]
        ]
    return tuple(out)


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
