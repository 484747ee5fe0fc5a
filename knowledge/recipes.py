"""Structured settings of a tuning recipe, validated, and rendered as env file / shell script.

Pure. A setting is a small dict (what the API, the forms and front matter carry)::

    {"kind": "env", "name": "NCCL_IB_HCA", "value": "=mlx5_0,mlx5_1", "note": "rails 0-1"}
    {"kind": "sysctl", "name": "net.ipv4.tcp_mtu_probing", "value": "1"}
    {"kind": "boot", "name": "iommu", "value": "pt"}            # kernel command line
    {"kind": "command", "value": "mlnx_qos -i eth2 --trust dscp", "scope": "host"}

Kinds are fixed; ``command`` covers NIC and switch tools (mlnx_qos, ethtool, ip, cma_roce_tos,
mlxconfig ...) and carries a ``scope`` saying where it runs.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

KINDS: dict[str, str] = {
    "env": "Environment variables",
    "sysctl": "sysctl",
    "boot": "Kernel boot parameters",
    "command": "Commands",
}
SCOPES = ("host", "nic", "switch")
_NAME_RULES: dict[str, tuple[re.Pattern[str], str]] = {
    "env": (re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"), "an environment variable name"),
    "sysctl": (
        re.compile(r"^[a-z0-9_][a-z0-9_\-]*([./][a-z0-9_\-*]+)+$"),
        "a sysctl key such as net.core.rmem_max",
    ),
    "boot": (
        re.compile(r"^[a-zA-Z0-9_][a-zA-Z0-9_.\-]{0,63}$"),
        "a kernel parameter such as iommu or default_hugepagesz",
    ),
}
MAX_VALUE = 2000


class RecipeError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Setting:
    kind: str
    name: str = ""
    value: str = ""
    note: str = ""
    scope: str = ""

    def as_dict(self) -> dict[str, str]:
        data = {"kind": self.kind, "name": self.name, "value": self.value}
        if self.note:
            data["note"] = self.note
        if self.scope:
            data["scope"] = self.scope
        if self.kind == "command":
            data.pop("name")
        return data

    @property
    def line(self) -> str:
        """The setting as one would type it (what the copy buttons copy)."""
        if self.kind == "env":
            return f"export {self.name}={shlex.quote(self.value)}"
        if self.kind == "sysctl":
            return f"sysctl -w {self.name}={shlex.quote(self.value)}"
        if self.kind == "boot":
            return boot_param(self)
        return self.value


def boot_param(setting: Setting) -> str:
    return f"{setting.name}={setting.value}" if setting.value else setting.name


def normalize_settings(raw: Any) -> list[dict[str, str]]:
    """Validated, canonical settings (a list of dicts); raises RecipeError with every problem."""
    return [s.as_dict() for s in parse_settings(raw)]


def parse_settings(raw: Any) -> list[Setting]:
    if raw in (None, ""):
        return []
    if not isinstance(raw, list | tuple):
        raise RecipeError(["settings must be a list of objects with kind/name/value"])
    problems: list[str] = []
    settings: list[Setting] = []
    for position, item in enumerate(raw, start=1):
        where = f"setting {position}"
        if not isinstance(item, Mapping):
            problems.append(f"{where}: expected an object with kind/name/value")
            continue
        setting = _setting(item, where, problems)
        if setting:
            settings.append(setting)
    if problems:
        raise RecipeError(problems)
    return settings


def _setting(item: Mapping[str, Any], where: str, problems: list[str]) -> Setting | None:
    kind = str(item.get("kind", "")).strip()
    if kind not in KINDS:
        problems.append(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
        return None
    name = str(item.get("name") or "").strip()
    value = "" if item.get("value") is None else str(item.get("value")).strip()
    note = str(item.get("note") or "").strip()
    scope = str(item.get("scope") or "").strip()
    before = len(problems)
    if kind == "command":
        if not value:
            problems.append(f"{where}: a command needs a value (the command line)")
        if scope and scope not in SCOPES:
            problems.append(f"{where}: scope {scope!r} is not one of {', '.join(SCOPES)}")
        if value.count("\n") >= 20:
            problems.append(f"{where}: a command of more than 20 lines belongs in the body")
    else:
        rule, what = _NAME_RULES[kind]
        if not rule.match(name):
            problems.append(f"{where}: {name!r} is not {what}")
        if "\n" in value or "\r" in value:
            problems.append(f"{where}: the value of {name} must be one line")
        if kind in {"env", "sysctl"} and item.get("value") is None:
            problems.append(f"{where}: {name} needs a value")
    if "\x00" in value or len(value) > MAX_VALUE:
        problems.append(f"{where}: value too long or not text")
    if "\n" in note:
        note = " ".join(note.split())
    if len(problems) > before:
        return None
    return Setting(kind=kind, name=name, value=value, note=note[:300], scope=scope)


def grouped(settings: Iterable[Setting]) -> list[tuple[str, str, list[Setting]]]:
    """``[(kind, label, settings)]`` in the fixed kind order, empty kinds left out."""
    items = list(settings)
    return [
        (kind, label, [s for s in items if s.kind == kind])
        for kind, label in KINDS.items()
        if any(s.kind == kind for s in items)
    ]


def env_file(settings: Iterable[Setting], *, header: Iterable[str] = ()) -> str:
    """``NAME=value`` lines, readable by ``docker --env-file``, systemd ``EnvironmentFile=``
    and ``set -a; . ./file; set +a``. Values are written as is: none of those three agree on
    quoting, and NCCL values (``=mlx5_0:1``, ``^lo,docker0``) need none."""
    lines = [f"# {h}" for h in header]
    for s in settings:
        if s.kind != "env":
            continue
        if s.note:
            lines.append(f"# {s.note}")
        lines.append(f"{s.name}={s.value}")
    return "\n".join(lines) + "\n"


def shell_script(settings: Iterable[Setting], *, header: Iterable[str] = ()) -> str:
    """A reviewable bash script: exports, sysctl -w, commands; boot parameters as comments
    (changing the kernel command line is left to the distribution's tools and a reboot)."""
    items = list(settings)
    out = ["#!/usr/bin/env bash", *[f"# {h}" for h in header]]
    out += ["# Review before running. sysctl and NIC commands need root.", "set -euo pipefail"]
    for kind, label, group in grouped(items):
        out += ["", f"# --- {label} ---"]
        if kind == "boot":
            params = " ".join(boot_param(s) for s in group)
            out += [
                "# Not applied by this script: add to GRUB_CMDLINE_LINUX in /etc/default/grub,",
                "# regenerate the grub configuration (update-grub / grub2-mkconfig) and reboot:",
                f"#   {params}",
            ]
            out += [f"#   {boot_param(s)}: {s.note}" for s in group if s.note]
            continue
        for s in group:
            if s.note:
                out.append(f"# {s.note}")
            if kind == "command" and s.scope == "switch":
                out += [f"# on the switch: {line}" for line in s.value.splitlines()]
            else:
                out.append(s.line)
    return "\n".join(out) + "\n"
