"""Small but realistic support bundles, assembled in the test's tmp_path from real samples.

There are no shared samples of whole bundles (they hold a customer's machine), so these
builders lay real tool outputs from ../shared/samples out the way nvidia-bug-report.sh and
sysinfo-snapshot.py do: the bug report's 44-underscore separators, ``*** /path`` + ``*** ls:``
file headers and multi-command blocks; the snapshot's top directory named after the host
and time, with one file per command under ``commands_txt_output/`` and HTML pages beside.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

from tests.samples import sample

SEP = "_" * 44
NVSMI = "counters/gpud_nvidia-smi_q_560.35.03.txt"
NVLINK = "counters/gpud_nvidia-smi_nvlink_status_a100.txt"
DMESG = "counters/gpud_dmesg_with_NVRM_Xid_119.log"
IBSTAT = "counters/gpud_ibstat_h100_all_active.txt"
INTERRUPTS = "interrupts/frc971_aos_test_fixture_desktop_20cpu_2x_nvidia_proc_interrupts.txt"
ETHTOOL = "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt"
MLXLINK = "mlxlink/sigcomm26_bf3_100g_dac_mlxlink_m_c_two_ports_EXCERPT.txt"
MLXCONFIG = "mlxconfig/mailinglist_cx5ex_mcx516a_cda_mlxconfig_q_DEQUOTED.txt"

LSPCI = """\
0000:18:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)
\tSubsystem: NVIDIA Corporation Device [10de:16c1]
\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported
\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x16
\tKernel driver in use: nvidia

0000:1a:00.0 Ethernet controller [0200]: Mellanox Technologies MT2910 [ConnectX-7] [15b3:1021]
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported
\t\tLnkSta:\tSpeed 32GT/s, Width x16
\tKernel driver in use: mlx5_core

0000:00:00.0 Host bridge [0600]: Intel Corporation Device [8086:09a2] (rev 04)
\t\tLnkCap:\tPort #0, Speed 2.5GT/s, Width x1
"""


def text(relative: str) -> str:
    return sample(relative).read_text(errors="replace").rstrip("\n")


def _file(path: str, body: str) -> str:
    ls = f"*** ls: -r--r--r-- 1 root root 0 2025-02-23 16:20:01.000000000 +0000 {path}"
    return f"{SEP}\n\n*** {path}\n{ls}\n{body}\n\n"


def bug_report_text() -> str:
    """An nvidia-bug-report.log of host gpu-node-07 with the sections PerfHub can read."""
    parts = [
        f"{SEP}\n\nStart of NVIDIA bug report log file.  Please include this file, along\n"
        "with a detailed description of your problem, when reporting a graphics\n"
        "driver bug via the NVIDIA Linux forum (see forums.developer.nvidia.com)\n"
        "or by sending email to 'linux-bugs@nvidia.com'.\n\n"
        "nvidia-bug-report.sh Version: 34389467\n\n"
        "Date: Sun Feb 23 16:24:30 UTC 2025\n"
        "uname: Linux gpu-node-07 5.15.0-131-generic #141-Ubuntu SMP Fri Jan 10 21:18:28 UTC "
        "2025 x86_64 x86_64 x86_64 GNU/Linux\ncommand line flags:\n\n",
        _file("/etc/issue", "Ubuntu 22.04.5 LTS \\n \\l"),
        f"{SEP}\n\n*** /var/log/nvidia-installer.log does not exist\n\n",
        f"{SEP}\n\n/usr/bin/lspci -nnDvvvxxxx\n\n{LSPCI}\n",
        f"{SEP}\n\nSkipping: vulkaninfo output\nvulkaninfo not found\n\n",
        f"{SEP}\n\ndmesg:\n\n{text(DMESG)}\n",
        _file(
            "/proc/cmdline",
            "BOOT_IMAGE=/vmlinuz-5.15.0-131-generic root=UUID=0a1b ro iommu=pt pci=realloc=off",
        ),
        _file("/proc/interrupts", text(INTERRUPTS)),
        _file(
            "/proc/version",
            "Linux version 5.15.0-131-generic (buildd@lcy02-amd64-057) (gcc (Ubuntu "
            "11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) "
            "#141-Ubuntu SMP Fri Jan 10 21:18:28 UTC 2025",
        ),
        _file(
            "/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  560.35.03  Fri Aug 16 21:39:15 UTC "
            "2024\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)",
        ),
        # "Key: integer" lines that must not pass for NIC counters
        _file(
            "/proc/driver/nvidia/params",
            "ResmanDebugLevel: 4294967295\nRmLogonRC: 1\nModifyDeviceFiles: 1\n"
            "DeviceFileUID: 0\nDeviceFileGID: 0\nDeviceFileMode: 438\nEnableMSI: 1",
        ),
        _file(
            "/proc/driver/nvidia/gpus/0000:18:00.0/information",
            "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 345\n"
            "GPU UUID: \t GPU-509665ad-b600-ac93-3616-d754b23d636d\n"
            "Video BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nBus Location: \t 0000:18:00.0",
        ),
        f"{SEP}\n\n/usr/bin/nvidia-smi --query\n\n{text(NVSMI)}\n\n"
        f"/usr/bin/nvidia-smi nvlink --status\n\n{text(NVLINK)}\n\n",
        f"{SEP}\n\n/usr/sbin/ibstat\n\n{text(IBSTAT)}\n\n",
        f"{SEP}\n\nEnd of NVIDIA bug report log file.\n",
    ]
    return "".join(parts)


def bug_report_gz(tmp_path: Path) -> Path:
    path = tmp_path / "nvidia-bug-report.log.gz"
    path.write_bytes(gzip.compress(bug_report_text().encode()))
    return path


TOP = "sysinfo-snapshot-v3.7.6-gpu-node-07-20250223-162501"


def sysinfo_members() -> dict[str, bytes]:
    """Member path -> bytes, as sysinfo-snapshot lays them out (real outputs inside)."""
    out = f"{TOP}/commands_txt_output"
    return {
        f"{out}/ethtool_-S_ens1f0np0.txt": (text(ETHTOOL) + "\n").encode(),
        f"{out}/mlxlink_-d_mlx5_0_-m_-c.txt": (text(MLXLINK) + "\n").encode(),
        f"{out}/mlxconfig_-d_mlx5_0_q.txt": (text(MLXCONFIG) + "\n").encode(),
        f"{out}/ibstat.txt": (text(IBSTAT) + "\n").encode(),
        f"{TOP}/gpu-node-07-20250223-162501.html": b"<html><body><h1>sysinfo</h1></body></html>",
        f"{out}/empty_command.txt": b"",
    }


def tar_bytes(
    members: dict[str, bytes], *, extra: list[tarfile.TarInfo] = (), top: bool = True
) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        if top:
            directory = tarfile.TarInfo(TOP)
            directory.type = tarfile.DIRTYPE
            tar.addfile(directory)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra:
            tar.addfile(info)
    return buffer.getvalue()


def sysinfo_tgz(tmp_path: Path, *, extra: list[tarfile.TarInfo] = ()) -> Path:
    path = tmp_path / f"{TOP}.tgz"
    path.write_bytes(gzip.compress(tar_bytes(sysinfo_members(), extra=extra)))
    return path
