"""grouping.group_suggestions on plain suggestions: what folds together and what does not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from incidents.grouping import group_suggestions
from incidents.suggestions import Suggestion, log_symptom

T0 = datetime(2025, 3, 1, 10, 0, 0, 250000, tzinfo=UTC)


def suggestion(key: str, at: datetime, symptom: str, **extra) -> Suggestion:
    return Suggestion(
        key=key, at=at, kind="alert", text=key, source=extra.pop("source", "nccl_debug"),
        artifact_id=1, symptom=symptom, symptom_label=extra.pop("label", symptom), **extra,
    )  # fmt: skip


def test_one_symptom_within_the_window_folds_and_a_later_one_does_not():
    found = [
        suggestion("a", T0, "x", host="h1", rank=0),
        suggestion("b", T0 + timedelta(seconds=3), "x", host="h2", rank=5),
        suggestion("c", T0 + timedelta(hours=2), "x", host="h1", rank=0),  # a second hang
        suggestion("d", T0, ""),  # never folded
    ]
    items = group_suggestions(found)
    assert [i.key for i in items if not i.is_group] == ["d", "c"]
    (group,) = [i for i in items if i.is_group]
    assert group.count == 2 and group.hosts == ("h1", "h2") and group.ranks == (0, 5)
    assert "on 2 ranks of 2 hosts" in group.text and "last 3 s later" in group.text
    assert "first at 2025-03-01 10:00:00.250000 UTC" in group.text


def test_rank_lists_are_ranges_and_findings_name_hosts_only():
    ranks = [suggestion(f"r{i}", T0, "x", rank=i, host=f"h{i // 8}") for i in (*range(16), 20)]
    (group,) = group_suggestions(ranks)
    assert "ranks 0-15, 20" in group.text and "on 17 ranks of 3 hosts" in group.text
    hosts = [suggestion(f"f{i}", T0, "finding|port_down|critical", source="finding",
                        host=f"node{i}") for i in range(3)]  # fmt: skip
    (group,) = group_suggestions(hosts)
    assert "on 3 hosts" in group.text and group.key.startswith("group:finding:")


def test_warns_differing_only_in_addresses_are_one_symptom():
    one = log_symptom(
        "nccl_warn",
        {},
        "h1:1:2 [0] NCCL WARN NET/IB : Got completion from peer "
        "10.1.0.1<48221> with error 12, opcode 0, len 0, vendor err 129",
    )
    two = log_symptom(
        "nccl_warn",
        {},
        "h2:7:8 [3] NCCL WARN NET/IB : Got completion from peer "
        "10.1.0.9<50011> with error 12, opcode 0, len 0, vendor err 129",
    )
    other = log_symptom(
        "nccl_warn",
        {},
        "NCCL WARN NET/IB : Got completion from peer "
        "10.1.0.9<50011> with error 5, opcode 0, len 0, vendor err 244",
    )
    assert one[0] == two[0] != other[0]
    timeout = log_symptom("watchdog_timeout", {"collective": "ALLREDUCE", "seq": 7,
                                               "timeout_ms": 600000}, "")  # fmt: skip
    assert timeout == ("watchdog_timeout|ALLREDUCE|7",
                       "NCCL watchdog timeout in ALLREDUCE seq 7", "600 s")  # fmt: skip
