"""fabric_manager: fragments without dates and journal lines give their facts (issue 22).

The messages are Fabric Manager's own wording (as in test_fabric_manager.py's TROUBLE);
here their ``[date]`` prefix, or all of it, was removed as a paste or a cleaning step does.
"""

from __future__ import annotations

import io

import pytest

from artifacts.fabric.parsers import fabric_manager
from tests.artifacts.fabric.parsers.test_fabric_manager import TROUBLE


def parse_text(text: str) -> fabric_manager.FabricManagerResult:
    return fabric_manager.parse(io.BytesIO(text.encode()))


def strip_dates(text: str) -> str:
    return "".join(line.split("] ", 1)[1] if line.startswith("[") else line
                   for line in text.splitlines(keepends=True))  # fmt: skip


def strip_prefixes(text: str) -> str:
    """Everything before the message: '[date] [LEVEL] [tid N] '."""
    out = []
    for line in text.splitlines(keepends=True):
        while line.startswith("["):
            line = line.split("] ", 1)[1]
        out.append(line)
    return "".join(out)


@pytest.mark.parametrize("cut", [strip_dates, strip_prefixes])
def test_entries_without_their_date_keep_events_and_facts(cut) -> None:  # type: ignore[no-untyped-def]
    dated = parse_text(TROUBLE)
    undated = parse_text(cut(TROUBLE))
    kinds = [(e.kind, e.details.get("sxid")) for e in dated.events]
    got = [(e.kind, e.details.get("sxid")) for e in undated.events]
    # every NVSwitch and NVL error, the version and the partition are still read
    for event in (("nvswitch_fatal", 20034), ("nvlink_failure", None)):
        assert event in got and event in kinds
    fatal = next(e for e in undated.events if e.kind == "nvswitch_fatal")
    assert fatal.details == {"sxid": 20034, "severity": "fatal", "device": "00000000:86:00.0",
                             "fid": 0, "physical_id": 3, "port": 33}  # fmt: skip
    assert fatal.time is None
    nvl = next(e for e in undated.events if e.kind == "nvlink_failure" and "gpuguid" in e.details)
    assert nvl.details["gpuguid"] == "0xb0cf0e0300e42e00"  # the key : value lines stay joined
    assert undated.version == "535.161.08"
    assert [(p.partition, p.state) for p in undated.partitions] == [(3, "activated")]
    assert "undated" in undated.parts and "entries" not in undated.parts
    assert dated.parts[:2] == ("entries", "version")


def test_journal_lines_of_the_fabric_manager_unit() -> None:
    text = (
        "Feb 27 15:10:02 hgx-07 nv-fabricmanager[2931]: detected NVSwitch non-fatal error 12028 "
        "on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61\n"
        "Feb 27 15:10:03 hgx-07 systemd[1]: Started Session 42 of user root.\n"
    )
    assert fabric_manager.accepts("fm.log", text.encode())
    result = parse_text(text)
    [event] = result.events
    assert (event.kind, event.level, event.details["sxid"], event.details["port"]) == (
        "nvswitch_non_fatal", "ERROR", 12028, 61
    )  # fmt: skip
    assert result.entries == 1 and result.summary()["sxid_codes"] == [12028]


def test_other_text_is_still_refused() -> None:
    with pytest.raises(fabric_manager.ParseError):
        parse_text("Successfully configured all the available NVSwitches?\nno dates here\n")
