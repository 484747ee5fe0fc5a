"""Three-way merge of texts by lines (difflib), for post-mortem save conflicts.

``merge3(base, mine, theirs)`` applies both sides' changes to ``base`` when they touch
different lines. Edits to the same (or adjacent) lines conflict; then no merge is offered
and the user chooses on the conflict page. Never guesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher


@dataclass(frozen=True)
class MergeResult:
    text: str | None  # None: the edits overlap
    conflicts: int


@dataclass(frozen=True)
class _Change:
    start: int  # base line range [start, end) replaced by ``lines``
    end: int
    lines: tuple[str, ...]


def merge3(base: str, mine: str, theirs: str) -> MergeResult:
    if mine == theirs:
        return MergeResult(mine, 0)
    if mine == base:
        return MergeResult(theirs, 0)
    if theirs == base:
        return MergeResult(mine, 0)
    base_lines = base.splitlines(keepends=True)
    ours = _changes(base_lines, mine.splitlines(keepends=True))
    other = _changes(base_lines, theirs.splitlines(keepends=True))
    merged: list[_Change] = []
    conflicts = 0
    for change in sorted([*ours, *other], key=lambda c: (c.start, c.end)):
        if merged and _overlaps(merged[-1], change):
            if merged[-1] == change:  # both sides made the very same edit
                continue
            conflicts += 1
            continue
        merged.append(change)
    if conflicts:
        return MergeResult(None, conflicts)
    out: list[str] = []
    cursor = 0
    for change in merged:
        out.extend(base_lines[cursor : change.start])
        out.extend(change.lines)
        cursor = change.end
    out.extend(base_lines[cursor:])
    return MergeResult("".join(out), 0)


def _changes(base: list[str], other: list[str]) -> list[_Change]:
    matcher = SequenceMatcher(a=base, b=other, autojunk=False)
    return [
        _Change(i1, i2, tuple(other[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _overlaps(a: _Change, b: _Change) -> bool:
    # Touching ranges count as overlapping: two insertions at the same place, or an edit
    # right next to another, have no safe order.
    return b.start <= a.end and a.start <= b.end
