"""Version lines of NCCL and of its forks, read into (library, version, build, revision).

NCCL prints ``NCCL version 2.21.5+cuda12.4`` (packaged builds: ``2.18.3-1+cuda12.2``); forks
keep NCCL's log format and name themselves: RCCL ``RCCL version : 2.22.3-HEAD:7d8d67c``
(followed by ``HIP version  : ...``, ``ROCm version : ...``, ``Hostname     : ...`` and
``Librccl path : ...`` lines without a header), MSCCL/NCCLX and others ``<NAME> version X``.
The library is named by the word before ``version``; the version is its dotted number, the
build what follows ``+`` (``cuda12.4``, ``hip6.0``), the revision what follows ``-``
(``1``, ``HEAD:7d8d67c``).
"""

from __future__ import annotations

import re

# "<library> version[ :] X.Y[.Z][-revision][+build][ revision]"; the library name ends in CCL
# (NCCL, RCCL, MSCCL, NCCLX, ...) so nccl-tests' "nccl-tests version" banner is not one.
_LIBRARY_VERSION = re.compile(
    r"(?<![\w-])(?P<lib>[A-Z][A-Za-z]{0,10}CCL[A-Za-z]{0,3}) version\s*:?\s*v?"
    r"(?P<v>\d+\.\d+(?:\.\d+)?)"
    r"(?:-(?P<rev>[\w.:\-]+?))?(?:\+(?P<build>[\w.\-]+))?"
    r"(?:[ \t]+(?P<rev2>(?:HEAD|develop|master|main)\S*))?(?=[\s,;)]|$)"
)
# The lines RCCL prints under its version line, ``Key   : value`` with no NCCL header.
_RCCL_DETAIL = re.compile(
    r"(?P<key>HIP version|ROCm version|Hostname|Librccl path)\s*:\s*(?P<value>\S+)"
)
DETAIL_KEYS = {
    "HIP version": "hip",
    "ROCm version": "rocm",
    "Hostname": "hostname",
    "Librccl path": "path",
}


def read_version(text: str) -> tuple[str, str, str | None, str | None, int] | None:
    """(library, version, build, revision, start) of the first version banner in ``text``."""
    m = _LIBRARY_VERSION.search(text)
    if m is None:
        return None
    return m["lib"], m["v"], m["build"], m["rev"] or m["rev2"], m.start()


def read_detail(text: str) -> tuple[str, str] | None:
    """(key, value) of one of the lines RCCL prints under its version line."""
    m = _RCCL_DETAIL.search(text)
    if m is None:
        return None
    return DETAIL_KEYS[m["key"]], m["value"]
