"""show_gids: GID rows, per-port summary (the RoCE v2 IPv4 index), refusal and fuzzing.

No public sample file exists; the fixtures follow the script's documented output (tab
separated, IPv4 column empty for link-local GIDs, ``n_gids_found=N`` footer).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import show_gids
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

TWO_RAILS = (
    "root@gpu-node-07:~# show_gids\n"
    "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
    "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n"
    "mlx5_0\t1\t0\tfe80:0000:0000:0000:0ac0:ebff:fe3d:ca54\t\t\tv1\tens1f0np0\n"
    "mlx5_0\t1\t1\tfe80:0000:0000:0000:0ac0:ebff:fe3d:ca54\t\t\tv2\tens1f0np0\n"
    "mlx5_0\t1\t2\t0000:0000:0000:0000:0000:ffff:0a6e:0021\t10.110.0.33  \tv1\tens1f0np0\n"
    "mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a6e:0021\t10.110.0.33  \tv2\tens1f0np0\n"
    "mlx5_1\t1\t0\tfe80:0000:0000:0000:0ac0:ebff:fe3d:ca55\t\t\tv1\tens1f1np1\n"
    "mlx5_1\t1\t1\t0000:0000:0000:0000:0000:ffff:0a6f:0021\t10.111.0.33  \tv1\tens1f1np1\n"
    "mlx5_2\t1\t0\tfe80:0000:0000:0000:b83f:d203:00a1:2b3c\t\t\tv1\t\n"
    "n_gids_found=7\n"
)


def parse(text: str) -> show_gids.ShowGidsResult:
    return show_gids.parse(io.BytesIO(text.encode()))


def test_rows_and_per_port_summary() -> None:
    result = parse(TWO_RAILS)
    assert len(result.gids) == 7 and result.reported_count == 7 and result.warnings == ()
    first = result.gids[3]
    assert (first.host, first.device, first.port, first.index) == ("gpu-node-07", "mlx5_0", 1, 3)
    assert (first.ipv4, first.version, first.netdev, first.scope) == (
        "10.110.0.33", "v2", "ens1f0np0", "ipv4"
    )  # fmt: skip
    assert result.gids[0].scope == "link-local" and result.gids[0].ipv4 is None
    rail0, rail1, ib = result.ports
    assert (rail0.v1, rail0.v2, rail0.v2_ipv4_index, rail0.v2_ipv4) == (2, 2, 3, "10.110.0.33")
    assert rail0.v2_indexes == (1, 3)
    # the second rail was set to RoCE v1 only: no v2 GID at all
    assert (rail1.device, rail1.v2, rail1.v2_ipv4_index) == ("mlx5_1", 0, None)
    # an InfiniBand port has no netdev
    assert (ib.device, ib.netdev, ib.gids) == ("mlx5_2", None, 1)
    assert result.summary() == {
        "gids": 7, "ports": 3, "roce_ports": 2, "ports_without_v2": 1,
        "ports_without_v2_ipv4": 1, "warnings": 0,
    }  # fmt: skip
    json.dumps(result.to_json())


def test_ipv4_is_read_from_a_mapped_gid_when_the_column_is_empty() -> None:
    text = "mlx5_4 1 3 0000:0000:0000:0000:0000:ffff:c0a8:0a05 v2 eth4\n" * 2
    result = parse(text)
    assert result.gids[0].ipv4 == "192.168.10.5"
    assert result.ports[0].v2_ipv4_index == 3


def test_a_count_that_does_not_match_is_a_warning() -> None:
    text = TWO_RAILS.replace("n_gids_found=7", "n_gids_found=9")
    assert any("n_gids_found says 9" in w for w in parse(text).warnings)


def test_the_tab_separated_table_of_one_roce_port() -> None:
    path = more_sample("counters/show_gids_mlx5_roce_v1v2_tabs.txt")
    assert detect_kind(path.name, path.read_bytes()) == "show_gids"
    result = show_gids.parse(path.open("rb"))
    assert [(g.index, g.version, g.ipv4, g.scope) for g in result.gids] == [
        (0, "v1", None, "link-local"),
        (1, "v2", None, "link-local"),
        (2, "v1", "192.168.211.242", "ipv4"),
        (3, "v2", "192.168.211.242", "ipv4"),
    ]
    [port] = result.ports
    assert (port.device, port.port, port.netdev, port.v2_ipv4_index) == ("mlx5_0", 1, "rdma0", 3)
    assert result.reported_count == 4 and result.warnings == ()


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no show_gids rows"):
        parse("DEV\tPORT\tINDEX\tGID\tIPv4\tVER\tDEV\n---\n")


def test_detection() -> None:
    assert detect_kind("gids.txt", TWO_RAILS.encode()) == "show_gids"


@pytest.mark.parametrize(
    "relative",
    [
        "counters/gpud_ibstat_h100_all_active.txt",
        "counters/gpud_ibstatus_a100_all_active.txt",
        "counters/ibv_devinfo_cx6_ib_single_hca.txt",
        "counters/gpud_sysfs_infiniband_h100_9hca_grep_dump.txt",
        "counters/gpud_nvidia_fabricmanager.log",
        "mlxconfig/mailinglist_cx5ex_mcx516a_cda_mlxconfig_q_DEQUOTED.txt",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not show_gids.accepts(path.name, path.read_bytes())
    with path.open("rb") as f, pytest.raises(ParseError):
        show_gids.parse(f)


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(show_gids.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=len(TWO_RAILS)), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = TWO_RAILS.encode()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(show_gids.parse(io.BytesIO(blob)).to_json())
