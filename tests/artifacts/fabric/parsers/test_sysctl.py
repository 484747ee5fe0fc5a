"""sysctl -a: every key kept, the notable ones picked out, host from kernel.hostname.

No public sample file exists; the fixture is shaped like ``sysctl -a`` on a RoCE host (tab
separated triplets for tcp_rmem, per-interface conf keys, permission-denied messages).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import sysctl
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

DUMP = (
    "abi.vsyscall32 = 1\n"
    "sysctl: permission denied on key 'fs.protected_fifos'\n"
    "fs.file-max = 9223372036854775807\n"
    "kernel.hostname = gpu-node-07\n"
    "kernel.numa_balancing = 1\n"
    "kernel.osrelease = 5.15.0-105-generic\n"
    "kernel.sched_domain.cpu0.domain0.flags = SD_BALANCE_NEWIDLE SD_SHARE_CPUCAPACITY\n"
    "net.core.rmem_max = 212992\n"
    "net.core.wmem_max = 212992\n"
    "net.ipv4.conf.all.arp_announce = 0\n"
    "net.ipv4.conf.all.arp_ignore = 0\n"
    "net.ipv4.conf.all.rp_filter = 0\n"
    "net.ipv4.conf.ens1f0np0.rp_filter = 1\n"
    "net.ipv4.conf.ens1f1np1.rp_filter = 1\n"
    "net.ipv4.tcp_congestion_control = cubic\n"
    "net.ipv4.tcp_rmem = 4096\t131072\t6291456\n"
    "net.ipv4.tcp_wmem = 4096\t16384\t4194304\n"
    "net.ipv6.conf.all.disable_ipv6 = 0\n"
    "vm.nr_hugepages = 0\n"
    "vm.swappiness = 60\n"
    "vm.zone_reclaim_mode = 0\n"
    "kernel.core_pattern = |/usr/share/apport/apport -p%p -s%s -c%c -d%d -P%P -u%u -g%g -- %E\n"
    "kernel.domainname = (none)\n"
    "net.ipv4.conf.lo.rp_filter = \n"
)


def parse(text: str) -> sysctl.SysctlResult:
    return sysctl.parse(io.BytesIO(text.encode()))


def test_settings_notable_keys_and_host() -> None:
    result = parse(DUMP)
    assert result.host == "gpu-node-07"
    assert len(result.settings) == 23
    assert result.get("net.ipv4.tcp_rmem").numbers == (4096, 131072, 6291456)
    assert result.get("net.ipv4.tcp_rmem").value == "4096\t131072\t6291456"
    assert result.get("kernel.numa_balancing").numbers == (1,)
    assert result.get("net.ipv4.conf.lo.rp_filter").value == ""
    assert result.get("kernel.core_pattern").value.startswith("|/usr/share/apport")
    assert result.get("fs.file-max").numbers == (9223372036854775807,)
    notable = {s.key for s in result.notable}
    assert "net.ipv4.conf.ens1f0np0.rp_filter" in notable and "vm.swappiness" in notable
    assert "kernel.sched_domain.cpu0.domain0.flags" not in notable
    assert "abi.vsyscall32" not in notable
    assert result.errors == ("permission denied on key 'fs.protected_fifos'",)
    assert result.summary() == {
        "host": "gpu-node-07", "keys": 23, "notable": 19, "errors": 1, "warnings": 1
    }  # fmt: skip
    json.dumps(result.to_json())


def test_prompt_host_when_no_hostname_key() -> None:
    result = parse("user@node3:~$ sysctl vm.swappiness vm.nr_hugepages\n"
                   "vm.swappiness = 10\nvm.nr_hugepages = 1024\n")  # fmt: skip
    assert result.host == "node3" and result.get("vm.nr_hugepages").numbers == (1024,)


def test_proc_sys_read_by_grep_and_by_a_shell_loop() -> None:
    text = (
        "$ grep . /proc/sys/net/core/rmem_max /proc/sys/net/ipv4/tcp_rmem\n"
        "/proc/sys/net/core/rmem_max:268435456\n"
        "/proc/sys/net/ipv4/tcp_rmem:4096\t131072\t6291456\n"
        "$ for f in /proc/sys/vm/swappiness /proc/sys/kernel/numa_balancing; do\n"
        ">   echo $f $(cat $f); done\n"
        "/proc/sys/vm/swappiness 10\n"
        "/proc/sys/kernel/numa_balancing 0\n"
    )
    assert sysctl.accepts("x", text.encode())
    result = sysctl.parse(io.BytesIO(text.encode()))
    got = {s.key: (s.value, s.numbers) for s in result.settings}
    assert got == {
        "net.core.rmem_max": ("268435456", (268435456,)),
        "net.ipv4.tcp_rmem": ("4096\t131072\t6291456", (4096, 131072, 6291456)),
        "vm.swappiness": ("10", (10,)),
        "kernel.numa_balancing": ("0", (0,)),
    }
    assert {s.key for s in result.notable} >= {"net.core.rmem_max", "vm.swappiness"}


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no sysctl settings"):
        parse("foo = bar\nsysctl: cannot stat /proc/sys/x\n")


def test_detection() -> None:
    assert detect_kind("sysctl-a.txt", DUMP.encode()) == "sysctl"
    # a config file that mentions a key among prose is not a dump
    prose = "We set\nvm.swappiness = 10\nbecause\nthe docs\nsay so\nand more\n"
    assert not sysctl.accepts("notes.txt", prose.encode())


@pytest.mark.parametrize(
    "relative",
    [
        "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt",
        "counters/rdma_statistic_show_roce_mlx5_optional_counters.txt",
        "counters/gpud_sysfs_infiniband_h100_9hca_grep_dump.txt",
        "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
        "numa/amd_affinity_part2_2s_epyc_nps4_8x_mi210_lscpu_snippet.txt",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not sysctl.accepts(path.name, path.read_bytes())
    with path.open("rb") as f, pytest.raises(ParseError):
        sysctl.parse(f)


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(sysctl.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=len(DUMP)), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = DUMP.encode()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(sysctl.parse(io.BytesIO(blob)).to_json())


def test_keys_beyond_the_bound_are_counted_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sysctl, "MAX_KEYS", 3)
    result = parse(DUMP)
    assert len(result.settings) == 3
    assert any("20 key(s) beyond 3 were not kept" in w for w in result.warnings)
