"""Bounds on what one file may add to the result, and on the block reading's memos, so that
memory stays flat on huge logs.

They are read as ``limits.NAME`` where they are used (not imported by name), so that tests
can lower them for the whole reading with one ``monkeypatch.setattr(limits, ...)``.
"""

from __future__ import annotations

MAX_EVENTS = 10_000
MAX_ITEMS = 50_000
MAX_ENV = 2_000
# Bounds on the block reading's memos (plain headers, lines that change nothing, INFO kinds).
MAX_MEMO = 4_096
