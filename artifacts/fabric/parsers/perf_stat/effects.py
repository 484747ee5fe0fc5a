"""What one line of ``perf stat`` output does, from its text alone: perf's patterns (a
counter row of the table or of ``-x,``, the header, the footer, ``# started on``, a
metric-only line, a shell prompt) and the effect each gives.

An effect is a tuple whose first item is its kind (``FX_*``) and whose other items are what
the line said (a row's cells as printed, the footer's seconds); the reading state in
``__init__.py`` applies it. Since the effect of a line does not depend on what came before, the
effect of a line read once holds for every copy of it: ``templates.py`` keeps a run of lines
with their effects and adds later copies without reading them again (issue 27).
"""

from __future__ import annotations

import re
from typing import Any

from artifacts.fabric.parsers.counters_common import prompt
from artifacts.parsers.textutil import find_timestamp, to_number

_TARGET = re.compile(r"Performance counter stats for (?P<target>.+?):?\s*$")
_STARTED = re.compile(r"^#\s*started on (?P<t>.+?)\s*$")
_INTERVAL_HEADER = re.compile(r"^#\s+time\s+(?:\S+\s+)*counts\b")
# aggregation scopes: socket/die/core, NUMA node, CPU, and --per-thread's "comm-tid"
_SCOPE = r"(?:S\d+(?:-D\d+)?(?:-C\d+)?|N\d+|CPU\d+|C\d+|[A-Za-z_][\w.:]*-\d+)"
_VARIANCE = r"(?:\(\s*\+-\s*(?P<var>\d+(?:\.\d+)?)%\s*\))?"
ROW = re.compile(
    r"^\s*(?:(?P<interval>\d+\.\d+)\s+)?(?:(?P<scope>" + _SCOPE + r")\s+(?:(?P<cpus>\d+)\s+)?)?"
    r"(?P<value>[\d,]+(?:\.\d+)?|<not counted>|<not supported>)\s+"
    r"(?:(?P<unit>msec|ns|us|ms|Joules|MiB|W)\s+)?(?P<event>[\w\-./:=,@\[\]]+?(?:/[^\s]*/)?\w*)"
    r"(?:\s+#\s*(?P<metric>.*?))?\s*" + _VARIANCE + r"\s*(?:\((?P<pct>\d+(?:\.\d+)?)%\))?\s*$"
)
# newer perf prints further metrics of an event on lines of their own: "      #  1.2 insn per cycle"
_METRIC_ONLY = re.compile(r"^\s{8,}#\s+(?P<metric>\S.*?)\s*(?:\((?P<pct>\d+(?:\.\d+)?)%\))?\s*$")
CSV_ROW = re.compile(
    r"^(?:\d+\.\d+,)?(?:" + _SCOPE + r",\d*,)?(?:[\d.]+|<not counted>|<not supported>),[^,]*,"
    r"[A-Za-z][\w\-./:=@]*,"
)
_FOOTER = re.compile(
    r"^\s*(?P<v>\d+(?:\.\d+)?)\s+(?:\+-\s+\d+(?:\.\d+)?\s+)?seconds\s+"
    r"(?P<what>time elapsed|user|sys)\s*" + _VARIANCE + r"\s*$"
)
# perf's own event names: a row without a header is taken only if it looks like perf's
_KNOWN_EVENTS = frozenset(
    {
        "task-clock", "cpu-clock", "cycles", "instructions", "branches", "branch-misses",
        "cache-references", "cache-misses", "context-switches", "cs", "cpu-migrations",
        "migrations", "page-faults", "faults", "minor-faults", "major-faults",
        "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles", "bus-cycles",
        "L1-dcache-loads", "L1-dcache-load-misses", "L1-icache-load-misses", "LLC-loads",
        "LLC-load-misses", "dTLB-loads", "dTLB-load-misses", "iTLB-loads", "iTLB-load-misses",
        "duration_time", "user_time", "system_time", "alignment-faults", "emulation-faults",
    }
)  # fmt: skip


def fragment_row(m: re.Match[str] | None) -> bool:
    """A row read without a header: only when it looks like perf's own."""
    if m is None:
        return False
    event = m["event"]
    return bool(
        m["metric"]
        or m["pct"]
        or m["unit"]
        or m["var"]
        or event in _KNOWN_EVENTS
        or event.split(":", 1)[0] in _KNOWN_EVENTS
        or ("/" in event and event.endswith("/"))  # PMU events: uncore_imc/cas_count_read/
    )


# What a line does, by kind: the first item of its effect.
FX_STARTED = 0  # (kind, ISO time or None): "# started on ..."
FX_PART = 1  # (kind, part): the interval header, which only names a part
FX_METRIC = 2  # (kind, text, effect of the line if no row of the run is there to take it)
FX_HOST = 3  # (kind, host or None): a shell prompt of another command
FX_COMMAND = 4  # (kind, host or None, command): the "$ perf stat ..." prompt
FX_HEADER = 5  # (kind, target): "Performance counter stats for ..."
FX_FOOTER = 6  # (kind, what, seconds, variance % or None)
FX_ROW = 7  # (kind, cells, part, kept without a header, fields or None)
FX_ROWS = 8  # (kind, Rows): consecutive rows of a template, added together

# A row's cells as printed, in this order (None where the row has no such cell).
CELLS = ("event", "value", "unit", "scope", "cpus", "interval", "metric", "pct", "var")
INTERVAL_CELL = 5

Effect = tuple[Any, ...]
Cells = tuple[str | None, ...]
Fields = tuple[Any, ...]


def line_effect(line: str) -> Effect | None:
    """What ``line`` does; None for a line perf stat's reading skips."""
    if line.lstrip()[:1] == "#":
        # "#" lines before prompts: "# started on" and "#    time" look like a root's "# cmd"
        if m := _STARTED.match(line):
            stamp = find_timestamp(m["t"])
            return (FX_STARTED, stamp[0] if stamp else None)
        if _INTERVAL_HEADER.match(line):  # "#           time             counts unit events"
            return (FX_PART, "interval_header")
        if m := _METRIC_ONLY.match(line):
            return (FX_METRIC, " ".join(m["metric"].split()), _plain_effect(line))
    return _plain_effect(line)


def _plain_effect(line: str) -> Effect | None:
    """A line that is not perf's own comment: a prompt, the header, the footer or a row."""
    # each pattern only where its words are: most lines are counter rows (issue 27)
    shell = prompt(line) if _maybe_prompt(line) else None
    if shell is not None:
        if "perf" in shell[1] and "stat" in shell[1]:
            return (FX_COMMAND, shell[0], shell[1])
        return (FX_HOST, shell[0])
    if "Performance counter stats for" in line and (m := _TARGET.search(line)):
        return (FX_HEADER, unquoted_target(m["target"]))
    if "seconds" in line and (m := _FOOTER.match(line)):
        variance = float(m["var"]) if m["what"] == "time elapsed" and m["var"] else None
        return (FX_FOOTER, m["what"], float(m["v"]), variance)
    if csv_like(line) and (cells := csv_cells(line)) is not None:
        return (FX_ROW, cells, "csv", True, None)
    m = ROW.match(line)
    if m is None:
        return None
    cells = m.group(*CELLS)
    part = "interval" if m["interval"] else "counters"
    return (FX_ROW, cells, part, bool(m["interval"]) or fragment_row(m), None)


def csv_like(line: str) -> bool:
    """-x, rows have no column padding; "1,234,567   cycles" is the text table."""
    stripped = line.strip()
    return stripped.count(",") >= 3 and "  " not in stripped and stripped[:1] != "#"


def csv_cells(line: str) -> Cells | None:
    """``-x,``: [interval,] [scope, cpus,] value, unit, event, run, pct[, metric, name]."""
    cells = [c.strip() for c in line.rstrip("\n").split(",")]
    interval = None
    if (
        len(cells) > 4
        and re.fullmatch(r"\d+\.\d+", cells[0])
        and (to_number(cells[1]) is not None or cells[1].startswith("<not"))
        and re.search(r"[A-Za-z]", cells[3])
    ):
        interval, cells = cells[0], cells[1:]
    scope = cpus = None
    if re.fullmatch(_SCOPE, cells[0] or ""):
        scope, cells = cells[0], cells[1:]
        if cells and cells[0].isdigit() and len(cells) > 4:
            cpus, cells = cells[0], cells[1:]
    if len(cells) < 3:
        return None
    value, unit, event = cells[0], cells[1] or None, cells[2]
    if not event or (to_number(value) is None and not value.startswith("<not")):
        return None
    pct = cells[4] if len(cells) > 4 else None
    if pct and not _is_float(pct):
        return None  # not perf's run share: nvidia-smi's CSV ("0, 8192 MiB, ..., 200.00 W")
    metric = " ".join(c for c in cells[5:7] if c) or None
    return (event, value, unit, scope, cpus, interval, metric, pct, None)


def event_fields(cells: Cells) -> Fields:
    """A PerfEvent's fields but its run, in its order, from a row's cells. Built only for the
    rows kept: ``int`` of a cell of thousands of digits raises, as it did past the cap."""
    event, value, unit, scope, cpus, interval, metric, pct, variance = cells
    assert event is not None and value is not None
    status = "counted"
    number: float | None = None
    if value.startswith("<not"):
        status = value.strip("<>")
    else:
        parsed = to_number(value)
        number = float(parsed) if parsed is not None else None
    return (
        event,
        number,
        unit,
        scope,
        int(cpus) if cpus else None,
        float(interval) if interval else None,
        " ".join(metric.split()) if metric else None,
        float(pct) if pct not in (None, "") else None,
        status,
        float(variance) if variance else None,
    )


def _maybe_prompt(line: str) -> bool:
    """Could ``prompt`` see a shell prompt here? It needs "user@host" or a line starting
    with "$", "#", ">" or "sh-", "bash-", "zsh-" (counters_common._PROMPT, _BARE_PROMPT)."""
    if "@" in line:
        return True
    start = line.lstrip()
    return start[:1] in ("$", "#", ">") or start.startswith(("sh-", "bash-", "zsh-"))


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def unquoted_target(text: str) -> str:
    """``'system wide'`` -> ``system wide``; ``process id '1884396'`` stays as printed."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1]
    return text
