"""``sysctl -a`` (or ``sysctl key ...``): kernel settings, one ``key = value`` per line.

Every key is kept (a full dump has a few thousand; the bound is generous). ``notable`` is the
subset that matters on RDMA/GPU training hosts — socket buffers, NUMA balancing, swappiness,
hugepages, zone reclaim, reverse-path filtering and ARP behaviour per interface — so the
loader stores those as host facts and the findings rules read them. ``kernel.hostname`` names
the host when no shell prompt does. ``sysctl: permission denied on key ...`` and similar tool
messages become warnings, not settings. The same settings read from ``/proc/sys`` by a shell
(``grep . /proc/sys/net/core/*mem*`` -> ``path:value``, ``for f in ...; do echo $f $(cat $f)``
-> ``path value``) are keys too: ``/proc/sys/net/core/rmem_max`` is ``net.core.rmem_max``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "sysctl"
VERSION = 1

MAX_KEYS = 50_000  # a dump with hundreds of veth interfaces stays well below
MAX_VALUE = 500
_TOP = ("abi", "crypto", "debug", "dev", "fs", "kernel", "net", "sunrpc", "user", "vm")
_LINE = re.compile(
    rf"^\s*(?P<key>(?:{'|'.join(_TOP)})(?:\.[\w\-:@+*%]+)+)\s*=\s?(?P<value>.*?)\s*$"
)
_PROC_LINE = re.compile(
    rf"^\s*/proc/sys/(?P<path>(?:{'|'.join(_TOP)})(?:/[\w\-@+*%.]+)+?)(?:\s*:\s*|\s+)"
    r"(?P<value>\S.*?)\s*$"
)
_TOOL_MESSAGE = re.compile(r"^\s*sysctl:\s*(?P<msg>.+)$")

# Keys (regular expressions over the whole key) that the loader and the rules care about.
NOTABLE = (
    r"net\.core\.(?:r|w)mem_(?:max|default)",
    r"net\.core\.netdev_max_backlog",
    r"net\.core\.somaxconn",
    r"net\.ipv4\.tcp_(?:r|w)mem",
    r"net\.ipv4\.tcp_mem",
    r"net\.ipv4\.tcp_congestion_control",
    r"net\.ipv4\.tcp_timestamps",
    r"net\.ipv4\.tcp_sack",
    r"net\.ipv4\.tcp_mtu_probing",
    r"net\.ipv4\.conf\.[^.]+\.(?:rp_filter|arp_ignore|arp_announce|arp_filter|accept_local)",
    r"net\.ipv6\.conf\.(?:all|default)\.disable_ipv6",
    r"vm\.swappiness",
    r"vm\.nr_hugepages",
    r"vm\.nr_overcommit_hugepages",
    r"vm\.zone_reclaim_mode",
    r"vm\.overcommit_memory",
    r"vm\.max_map_count",
    r"vm\.min_free_kbytes",
    r"kernel\.numa_balancing",
    r"kernel\.hostname",
    r"kernel\.osrelease",
    r"kernel\.pid_max",
    r"kernel\.nmi_watchdog",
    r"kernel\.shmmax",
    r"kernel\.sched_autogroup_enabled",
    r"fs\.file-max",
    r"fs\.nr_open",
)
_NOTABLE = re.compile("|".join(f"(?:{p})" for p in NOTABLE))


@dataclasses.dataclass(frozen=True)
class SysctlSetting:
    key: str
    value: str
    numbers: tuple[int, ...]  # the integers of the value ("4096 131072 6291456" -> 3 numbers)


@dataclasses.dataclass(frozen=True)
class SysctlResult(ParseResult):
    kind: ClassVar[str] = "sysctl"

    host: str | None = None
    settings: tuple[SysctlSetting, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def notable(self) -> tuple[SysctlSetting, ...]:
        return tuple(s for s in self.settings if is_notable(s.key))

    def get(self, key: str) -> SysctlSetting | None:
        return next((s for s in self.settings if s.key == key), None)

    def summary(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "keys": len(self.settings),
            "notable": len(self.notable),
            "errors": len(self.errors),
            "warnings": len(self.warnings),
        }


def is_notable(key: str) -> bool:
    return _NOTABLE.fullmatch(key) is not None


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if text.count("=") < 3 and text.count("/proc/sys/") < 3:  # one per setting line
        return False
    settings = other = 0
    for line in text.splitlines()[:3000]:
        if not line.strip():
            continue
        if _LINE.match(line) or _PROC_LINE.match(line):
            settings += 1
        elif not _TOOL_MESSAGE.match(line) and prompt(line) is None:
            other += 1
    # mostly "top.level.key = value" lines: a sysctl dump, not a config file that mentions one
    return settings >= 3 and settings >= 4 * other


def parse(stream: BinaryIO) -> SysctlResult:
    reader = LineReader(stream)
    host: str | None = None
    values: dict[str, str] = {}
    errors: list[str] = []
    dropped = 0
    for line in reader:
        if (shell := prompt(line)) is not None:
            host = shell[0] or host
            continue
        if m := _TOOL_MESSAGE.match(line):
            if len(errors) < 1000:
                errors.append(m["msg"][:300])
            continue
        m = _LINE.match(line) or _PROC_LINE.match(line)
        if m is None:
            continue
        key = m["key"] if m.re is _LINE else m["path"].replace("/", ".")
        if key not in values and len(values) >= MAX_KEYS:
            dropped += 1
            continue
        values[key] = m["value"][:MAX_VALUE]  # a key printed twice keeps its last value
    if not values:
        raise ParseError("no sysctl settings found ('key = value' lines such as vm.swappiness)")
    host = values.get("kernel.hostname") or host
    warnings = reader.repair_warnings()
    if errors:
        warnings.append(f"sysctl reported {len(errors)} error(s) (keys it could not read)")
    if dropped:
        warnings.append(f"{dropped} key(s) beyond {MAX_KEYS} were not kept")
    settings = tuple(
        SysctlSetting(
            key, value, tuple(int(n) for n in re.findall(r"(?<![\w.])-?\d+(?![\w.])", value)[:16])
        )
        for key, value in values.items()
    )
    return SysctlResult(
        host=host, settings=settings, errors=tuple(errors), warnings=tuple(warnings)
    )
