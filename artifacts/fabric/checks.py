"""The named checks fact rules use: each reads the evidence and yields hit fields.

A hit field dict holds ``host``, ``device``, ``port``, ``evidence`` (numbers shown with the
finding), ``artifact_ids``, ``at`` and whatever the rule's templates name; ``severity``
overrides the rule's when present, ``subject`` tells two hits on one device apart. Pure.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from hardware.evidence import CRITICAL, INFO, WARNING, Evidence, FactRow


def _by_device(facts: Iterable[FactRow]) -> dict[tuple[str, str, int | None], dict[str, FactRow]]:
    out: dict[tuple[str, str, int | None], dict[str, FactRow]] = defaultdict(dict)
    for f in facts:
        out[(f.host, f.device, f.port)][f.name] = f
    return out


@dataclasses.dataclass(frozen=True)
class StateNotIn:
    """A state fact (``port.state``) outside the healthy values."""

    fact: str
    healthy: frozenset[str]
    critical: frozenset[str]

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for (host, device, port), facts in _by_device(ev.facts).items():
            state = facts.get(self.fact)
            if state is None or state.value.upper() in self.healthy:
                continue
            phys = facts.get(self.fact.replace("state", "phys_state"))
            yield {
                "host": host,
                "device": device,
                "port": port,
                "severity": CRITICAL if state.value.upper() in self.critical else WARNING,
                "state": state.value,
                "phys_state": phys.value if phys else "not stated",
                "evidence": {"state": state.value, "phys_state": phys.value if phys else None},
                "artifact_ids": (state.artifact_id,),
                "at": state.at,
            }


@dataclasses.dataclass(frozen=True)
class BelowExpectedRate:
    """An ACTIVE port slower than expected: upload metadata ``expected_rate_gbps``, else the
    fastest ACTIVE port of the same link layer on the same host (a 200G port among 400G
    ports trained down)."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        ports = _by_device(ev.facts)
        expected_meta = _number(ev.context.get("expected_rate_gbps"))
        best: dict[tuple[str, str], float] = {}
        active = []
        for (host, device, port), facts in ports.items():
            state, rate = facts.get("port.state"), facts.get("port.rate_gbps")
            if not state or state.value.upper() != "ACTIVE" or not rate or rate.number is None:
                continue
            layer = facts["port.link_layer"].value if "port.link_layer" in facts else ""
            best[(host, layer)] = max(best.get((host, layer), 0.0), rate.number)
            active.append((host, device, port, layer, rate))
        for host, device, port, layer, rate in active:
            expected = expected_meta or best[(host, layer)]
            if rate.number is not None and rate.number < expected:
                yield {
                    "host": host,
                    "device": device,
                    "port": port,
                    "rate_gbps": rate.number,
                    "expected_gbps": expected,
                    "basis": "upload metadata" if expected_meta else "fastest port on the host",
                    "evidence": {"rate_gbps": rate.number, "expected_gbps": expected},
                    "artifact_ids": (rate.artifact_id,),
                    "at": rate.at,
                }


@dataclasses.dataclass(frozen=True)
class FactCompare:
    """``fact`` compared with a number or with another fact of the same device."""

    fact: str
    below_fact: str = ""
    above: float | None = None
    equals: frozenset[str] = frozenset()
    # a second fact that, when it holds one of these values, downgrades the hit to info
    unless_fact: str = ""
    unless: Callable[[FactRow], bool] | None = None

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for (host, device, port), facts in _by_device(ev.facts).items():
            fact = facts.get(self.fact)
            if fact is None:
                continue
            limit: float | None = None
            if self.below_fact:
                other = facts.get(self.below_fact)
                if other is None or other.number is None or fact.number is None:
                    continue
                if fact.number >= other.number:
                    continue
                limit = other.number
            elif self.above is not None:
                if fact.number is None or fact.number <= self.above:
                    continue
                limit = self.above
            elif self.equals and fact.value.strip().lower() not in self.equals:
                continue
            hit: dict[str, Any] = {
                # the device's other facts by short name, for templates ("recommendation")
                **{name.rsplit(".", 1)[-1]: f.value for name, f in facts.items()},
                "host": host,
                "device": device,
                "port": port,
                "value": fact.value,
                "limit": _fmt(limit) if limit is not None else "",
                "evidence": {self.fact: fact.number if fact.number is not None else fact.value},
                "artifact_ids": (fact.artifact_id,),
                "at": fact.at,
            }
            if self.below_fact:
                hit["evidence"][self.below_fact] = limit
            guard = facts.get(self.unless_fact) if self.unless_fact else None
            if guard is not None and self.unless is not None and self.unless(guard):
                hit["severity"] = INFO
                hit["evidence"][self.unless_fact] = guard.number or guard.value
            yield hit


@dataclasses.dataclass(frozen=True)
class EachFact:
    """Every fact of this name is a hit (the loader only writes it for failures)."""

    fact: str

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for f in ev.facts:
            if f.name == self.fact:
                yield {
                    "host": f.host,
                    "device": f.device,
                    "port": f.port,
                    "value": f.value,
                    "subject": f.value,
                    "evidence": {"failed": f.value, **dict(f.extra)},
                    "artifact_ids": (f.artifact_id,),
                    "at": f.at,
                }


@dataclasses.dataclass(frozen=True)
class ReasonsActive:
    """GPU clock-event (throttle) reasons that are active."""

    critical: frozenset[str]
    warning: frozenset[str]
    info: frozenset[str]

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for f in ev.facts:
            if f.name != "gpu.clock_event_reasons":
                continue
            reasons = set(f.extra.get("reasons") or ())
            levels = ((CRITICAL, self.critical), (WARNING, self.warning), (INFO, self.info))
            level, names = next(((lv, n) for lv, n in levels if reasons & n), (INFO, frozenset()))
            found = sorted(reasons & names)
            if not found:
                continue
            yield {
                "host": f.host,
                "device": f.device,
                "port": None,
                "severity": level,
                "reasons": ", ".join(found),
                "evidence": {"active_reasons": sorted(reasons)},
                "artifact_ids": (f.artifact_id,),
                "at": f.at,
            }


@dataclasses.dataclass(frozen=True)
class DistinctAcrossHosts:
    """One fact with different values on different hosts (this upload and its peers)."""

    fact: str

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        per_host: dict[str, FactRow] = {}
        for f in (*ev.peer_facts, *ev.facts):  # this upload's facts win over the peers'
            if f.name == self.fact and f.host:
                per_host[f.host] = f
        values = Counter(f.value for f in per_host.values())
        if len(values) < 2:
            return
        majority = values.most_common(1)[0][0]
        odd = sorted(h for h, f in per_host.items() if f.value != majority)
        yield {
            "host": odd[0] if len(odd) == 1 else "",
            "device": "",
            "port": None,
            "versions": ", ".join(f"{v} ({n} host{'s' * (n > 1)})" for v, n in values.items()),
            "odd_hosts": ", ".join(odd),
            "majority": majority,
            "evidence": {h: f.value for h, f in sorted(per_host.items())},
            "artifact_ids": tuple(sorted({f.artifact_id for f in per_host.values()})),
            "at": max((f.at for f in per_host.values()), default=ev.default_at),
        }


_IB_TRANSPORTS = ("IB", "AWS Libfabric", "Libfabric", "OFI")
_IB_ENV = ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_IB_SL")


@dataclasses.dataclass(frozen=True)
class SocketFallback:
    """NCCL used sockets on a host. Critical when IB/RoCE was expected there: NCCL_IB_* set,
    NCCL_NET=IB, another host of the log used IB, the host has active RDMA ports
    (``context['rdma_hosts']``) or the upload says ``expected_transport``."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        transports = {f.host: f for f in ev.facts if f.name == "nccl.transports"}
        env = {(f.host, f.name.removeprefix("nccl.env.")): f.value for f in ev.facts}
        rdma_hosts = set(ev.context.get("rdma_hosts") or ())
        wanted = str(ev.context.get("expected_transport") or "").lower() in ("ib", "roce", "rdma")
        ib_hosts = {h for h, f in transports.items() if _uses_ib(f.value)}
        for host, fact in sorted(transports.items()):
            used = [t.strip() for t in fact.value.split(",")]
            if "Socket" not in used or _uses_ib(fact.value):
                continue
            reasons = []
            if wanted:
                reasons.append("the upload says IB/RoCE was expected")
            if any((host, name) in env for name in _IB_ENV):
                reasons.append("NCCL_IB_* variables are set")
            if env.get((host, "NCCL_NET"), "").upper() == "IB":
                reasons.append("NCCL_NET=IB")
            if env.get((host, "NCCL_IB_DISABLE")) == "1":
                reasons = []  # disabled on purpose: nothing to report
                continue
            if ib_hosts:
                reasons.append(f"other hosts used IB ({', '.join(sorted(ib_hosts))})")
            if host in rdma_hosts:
                reasons.append("the host has active RDMA ports")
            yield {
                "host": host,
                "device": "",
                "port": None,
                "severity": CRITICAL if reasons else INFO,
                "why_expected": "; ".join(reasons) or "nothing says RDMA was expected",
                "evidence": {"transports": used, "expected_because": reasons},
                "artifact_ids": (fact.artifact_id,),
                "at": fact.at,
            }


@dataclasses.dataclass(frozen=True)
class GdrOff:
    """NET/IB in use (a transport line or the HCAs NCCL picked) but GPUDirect RDMA off:
    every message is staged through host memory."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        by_host: dict[str, dict[str, FactRow]] = defaultdict(dict)
        for f in ev.facts:
            if f.name in ("nccl.gdr", "nccl.transports", "nccl.ib_devices"):
                by_host[f.host][f.name] = f
        for host, facts in sorted(by_host.items()):
            gdr = facts.get("nccl.gdr")
            transports = facts.get("nccl.transports")
            hcas = facts.get("nccl.ib_devices")
            uses_ib = bool(transports and _uses_ib(transports.value)) or bool(hcas)
            if gdr and gdr.value == "false" and uses_ib:
                yield {
                    "host": host,
                    "device": "",
                    "port": None,
                    "evidence": {
                        "gdr": False,
                        "transports": transports.value if transports else None,
                        "hcas": hcas.value if hcas else None,
                    },
                    "artifact_ids": (gdr.artifact_id,),
                    "at": gdr.at,
                }


def _uses_ib(transports: str) -> bool:
    return any(t.strip() in _IB_TRANSPORTS for t in transports.split(","))


def is_idle(fact: FactRow) -> bool:
    """PCIe links drop their generation at idle P-states to save power: not a fault."""
    return fact.number == 0 if fact.number is not None else False


def _number(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _fmt(value: float) -> str:
    return f"{value:g}"
