"""The kinds nearest to a file no parser took, and why each declined it.

Detection only says that no sniffer accepted the file. A person choosing "parse as" wants
to know which kinds came closest: here each kind is ranked by the words of the file its
parser's own source knows (string constants of its module: the labels, keys and markers
it looks for, each word weighted by how few kinds know it), backed by the file's name; the
best few are then asked to read the file's head, and their refusal (the ParseError message)
is the reason given. Nothing is imported for ranking: the sources are read with ``ast``.

Pure Python, no Django.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import math
import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from artifacts.parsers.base import ParseError
from artifacts.parsers.detection import NAME_HINTS
from artifacts.parsers.normalize import View
from artifacts.parsers.reading import parse_as
from artifacts.parsers.registry import MAY_BE, PARSERS, kind_label

TRIED = 12  # kinds asked to read the head (a few ms each)
SHOWN = 8  # kinds listed
TRY_BYTES = 256 * 1024
NAME_BONUS = 0.1
PROSE_SPACES = 3
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
# Words of every parser's code and of prose: no evidence of a kind.
_COMMON_TEXT = (
    "the and for with not none true false self return str int float from this that are was "
    "has have its into per all any one two name value values line lines file files text "
    "found output error errors warning warnings kind version "
    "total count time type data info list size start end read reads which only but can "
    "some their were note using via number optional"
)
_COMMON = frozenset(_COMMON_TEXT.split())


def nearest_kinds(
    name: str, head: bytes, *, skip: Collection[str] = (), tried: int = TRIED
) -> list[dict[str, Any]]:
    """The nearest kinds for a file's cleaned ``head``, best first: kind, label, score,
    the words it shares, whether its parser reads the head, and the reasons."""
    words = _words(head.decode("utf-8", errors="replace"))
    weights = _weights()
    known = sum(weights.get(w, 0.0) for w in words)
    lowered = name.lower()
    ranked = []
    for kind in PARSERS:
        if kind in skip:
            continue
        vocabulary = _vocabulary(kind)
        shared = sorted(words & vocabulary, key=lambda w: -weights.get(w, 0.0))
        score = sum(weights.get(w, 0.0) for w in shared) / known if known else 0.0
        hint = next((w for w in NAME_HINTS.get(kind, ()) if w in lowered), None)
        if hint:
            score += NAME_BONUS
        if score > 0:
            ranked.append((score, kind, shared, hint))
    ranked.sort(key=lambda item: -item[0])
    out = []
    order: dict[str, int] = {}
    for index, (score, kind, shared, hint) in enumerate(ranked[:SHOWN]):
        order[kind] = index
        reasons = ["its sniffer found none of its markers in the file"]
        if shared:
            listed = ", ".join(shared[:8])
            reasons.append(f"the file shares {len(shared)} of the words its parser knows: {listed}")
        if hint:
            reasons.append(f"the file name mentions {hint!r}")
        reads, said = _try(name, head, kind) if index < tried else (False, "")
        if said:
            reasons.append(said)
        out.append(
            {
                "kind": kind,
                "label": kind_label(kind),
                "score": round(min(score, 1.0), 3),
                "shared": shared[:12],
                "reads": reads,
                "reasons": reasons,
            }
        )
    # a kind whose reader takes the file first, then by nearness (name hints break ties)
    out.sort(key=lambda item: (not item["reads"], order[item["kind"]]))
    return out


def _try(name: str, head: bytes, kind: str) -> tuple[bool, str]:
    """(whether the kind's parser reads the head, what it said)."""
    if kind in MAY_BE and not MAY_BE[kind](head):
        return False, f"not read as {kind}: the file does not have its shape"

    @contextmanager
    def opened() -> Iterator[BinaryIO]:
        yield io.BytesIO(head[:TRY_BYTES])

    try:
        result = parse_as(opened, name, kind, View(needed=False))
    except ParseError as exc:
        return False, f"read as {kind}: {exc.message}"
    except Exception as exc:  # a parser's bug must not cost the file its reading
        return False, f"read as {kind}: its parser stopped ({type(exc).__name__})"
    facts = {
        k: v
        for k, v in result.summary().items()
        if k != "warnings" and v not in (0, None, "", [], {})
    }
    if not facts:
        return False, f"read as {kind}: its parser finds nothing of its kind"
    shown = ", ".join(f"{k}={v}" for k, v in list(facts.items())[:4])
    return True, f"read as {kind}, the file's start gives {shown}: try parse as {kind}"


def _words(text: str) -> set[str]:
    """Lower-case words of 3+ characters; ``gpu_mem_used`` gives itself and its parts."""
    words = set()
    for word in _WORD.findall(text):
        word = word.lower()
        words.add(word)
        if "_" in word:
            words.update(part for part in word.split("_") if len(part) >= 3)
    return words - _COMMON


@cache
def _vocabulary(kind: str) -> frozenset[str]:
    """The words of a kind's parser: its label, name hints and string constants (not its
    docstrings or messages), read from its source files without importing them."""
    words = _words(kind_label(kind)) | {
        w for hint in NAME_HINTS.get(kind, ()) for w in _words(hint)
    }
    for path in _sources(PARSERS[kind].module):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        docstrings = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }
        formatted = {
            id(part)
            for node in ast.walk(tree)
            if isinstance(node, ast.JoinedStr)
            for part in node.values
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or id(node) in docstrings | formatted:
                continue
            value = node.value
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            # a sentence is a message to people (a ParseError's), not what the parser reads
            if isinstance(value, str) and value.count(" ") <= PROSE_SPACES:
                words |= _words(value)
    return frozenset(words)


def _sources(module: str) -> list[Path]:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return []
    origin = Path(spec.origin)
    if origin.name == "__init__.py":  # a package: every module of it
        return sorted(origin.parent.glob("*.py"))
    return [origin]


@cache
def _weights() -> dict[str, float]:
    """Each word's weight: rare among the kinds' vocabularies means telling."""
    frequency: dict[str, int] = {}
    for kind in PARSERS:
        for word in _vocabulary(kind):
            frequency[word] = frequency.get(word, 0) + 1
    total = len(PARSERS)
    return {word: math.log(1 + total / n) for word, n in frequency.items()}
