"""Version strings that sort as versions, in Python and in the database.

``version_key("2.23.10")`` is a plain string whose lexicographic order is the version order,
so it can be stored next to the version and used in ``ORDER BY`` on any database:

    "2.21.5" < "2.23.4" < "2.23.10"        "2.23.4rc1" < "2.23.4" < "2.23.4+cuda12.4" < "2.23.5"

Each run of digits becomes ``n`` + its length + the digits (so 10 > 9 without padding), each
run of letters becomes ``a`` + the letters (a pre-release tag such as ``rc`` or ``beta``
sorts *before* the release it precedes), and the key ends with ``b``: shorter versions sort
before longer ones that extend them with numbers ("2.23" < "2.23.1") but after ones that
extend them with a tag ("2.23.4rc1" < "2.23.4"). A local part after ``+`` (NCCL prints
"2.21.5+cuda12.4") sorts right after its release. Other separators (``.``, ``-``, ``_``) only
split tokens. Pure Python: no Django imports.
"""

from __future__ import annotations

import re

KEY_LENGTH = 200
_TOKEN = re.compile(r"\d+|[A-Za-z]+")
_END = "b"


def version_key(version: str) -> str:
    """A string that sorts like the version it encodes; "" for an empty version."""
    text = (version or "").strip()
    if not text:
        return ""
    release, plus, local = text.partition("+")
    key = _encode(release) + (_encode(local) if plus and local else "")
    return key[:KEY_LENGTH]


def _encode(text: str) -> str:
    parts = []
    for token in _TOKEN.findall(text):
        if token.isdigit():
            digits = token.lstrip("0") or "0"
            # two-digit length prefix: numbers of up to 99 digits compare numerically
            parts.append(f"n{min(len(digits), 99):02d}{digits}")
        else:
            parts.append("a" + token.lower())
    return "".join(parts) + _END


def sorted_versions(versions: list[str]) -> list[str]:
    """Versions in version order (ties keep their input order)."""
    return sorted(versions, key=version_key)
