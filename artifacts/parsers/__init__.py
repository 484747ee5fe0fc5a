"""Parsing: the registry of kinds (registry.py), detection by score over a cleaned sample
(detection.py, normalize.py), the shared reading path (reading.py) and what every parser
shares (base.py, streams.py, textutil.py). The parsers themselves live in their evidence
family's package (``artifacts/<family>/parsers/``).

Pure Python: nothing here imports Django.
"""

from __future__ import annotations

from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.registry import OTHER, PARSERS, get_parser, kind_choices, kind_label

__all__ = [
    "OTHER",
    "PARSERS",
    "ParseError",
    "ParseResult",
    "detect_kind",
    "get_parser",
    "kind_choices",
    "kind_label",
]


def detect_kind(name: str, head: bytes) -> str:
    """The best-scored kind for a file's name and sample (see detection.py), or OTHER."""
    from artifacts.parsers.detection import detect

    return detect(name, head).kind
