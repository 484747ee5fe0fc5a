"""The package layout stays findable: small folders, no prefix families, no import cycles,
pure parsers, and layers whose imports all point down (docs/architecture.md, "Layers").

Imports are read with ``ast`` from the source, so a cycle hidden behind a function-level
import ("keep the cycle lazy") fails too.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The layers, bottom first. A module imports only its own package and packages of lower
# layers; packages that share a layer import each other neither. What a lower app needs from a
# higher one it gets through a hook, a registry or a template tag the higher app fills.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("perfhub",),  # wiring and helpers (settings, urls by name, units, paging, roles, hooks)
    ("charts", "hardware", "documents"),  # shared: figures, the hardware model, documents
    ("artifacts",),  # evidence: uploads, parsers, families
    ("baselines",),  # profiles, stacks, series, regressions, hardware limits of runs
    ("reports", "knowledge"),  # comparison reports; the knowledge base
    ("incidents",),  # incidents and post-mortems cite everything below
)
APPS = tuple(package for layer in LAYERS for package in layer)
LAYER_OF = {package: depth for depth, layer in enumerate(LAYERS) for package in layer}
MAX_MODULES = 30


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, *, top_level_only: bool = False) -> Iterator[tuple[str, int]]:
    """(imported name, line) of every import in a module, relative ones made absolute."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full if full in MODULES else base), node.lineno


def _graph() -> dict[str, set[str]]:
    return {
        name: {target for target, _ in _imports(name) if target in MODULES and target != name}
        for name in MODULES
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_between_modules() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (enqueue tasks through perfhub.dispatch): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def _folders() -> Iterator[Path]:
    for app in APPS:
        for folder in [ROOT / app, *(ROOT / app).rglob("*")]:
            if folder.is_dir() and not {"migrations", "__pycache__"} & set(folder.parts):
                yield folder


def test_no_folder_holds_too_many_modules_or_a_prefix_family() -> None:
    problems = []
    for folder in _folders():
        stems = [p.stem for p in folder.glob("*.py") if p.stem != "__init__"]
        if len(stems) > MAX_MODULES:
            problems.append(f"{folder.relative_to(ROOT)}: {len(stems)} modules")
        # trace_views, trace_api, traces... share "trace": that family wants a folder
        families = Counter(stem.split("_")[0].rstrip("s") for stem in stems)
        problems += [
            f"{folder.relative_to(ROOT)}: {n} modules named {prefix}_*"
            for prefix, n in families.items()
            if n >= 3
        ]
    assert not problems, problems


def _parser_modules() -> list[str]:
    return [name for name in MODULES if ".parsers" in name or name.endswith(".analysis")]


def test_parsers_import_no_django_and_no_app_code() -> None:
    assert "artifacts.runs.parsers.nccl_tests.text" in _parser_modules()
    bad = []
    for name in _parser_modules():
        for target, line in _imports(name):
            top = target.split(".")[0]
            pure_app_module = ".parsers" in target or ".analysis" in target
            if top in {"django", "rest_framework", "celery"} or (
                top in APPS and not pure_app_module
            ):
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}")
    assert not bad, bad


def _against_the_layers(
    imports: dict[str, list[tuple[str, int]]], layer_of: dict[str, int]
) -> list[tuple[str, int, str]]:
    """(module, line, target) of every import of a package above the module's or beside it."""
    bad = []
    for name, targets in imports.items():
        own = name.split(".")[0]
        for target, line in targets:
            top = target.split(".")[0]
            if top in layer_of and top != own and layer_of[top] >= layer_of[own]:
                bad.append((name, line, target))
    return bad


def test_the_layer_rule_finds_imports_that_point_up_or_across() -> None:
    layer_of = {"low": 0, "mid": 1, "peer": 1, "high": 2}
    imports = {
        "mid.a": [("low.x", 1), ("mid.b", 2)],  # down, and within its own package: fine
        "mid.b": [("high.y", 3)],  # up
        "peer.c": [("mid.a", 4)],  # across
        "low.x": [("os", 5), ("django.db", 6)],  # outside the project
    }
    assert _against_the_layers(imports, layer_of) == [
        ("mid.b", 3, "high.y"),
        ("peer.c", 4, "mid.a"),
    ]


def test_every_import_points_down_the_layers() -> None:
    imports = {name: list(_imports(name)) for name in MODULES}
    bad = [
        f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}: "
        f"{target.split('.')[0]} does not stand below {name.split('.')[0]}"
        for name, line, target in _against_the_layers(imports, LAYER_OF)
    ]
    assert not bad, "use a hook (perfhub/hooks.py), a registry or a template tag: " + "; ".join(bad)


def test_every_package_has_a_layer() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages == set(APPS), "add the package to LAYERS (and docs/architecture.md)"


def test_the_hardware_model_is_pure() -> None:
    bad = [
        f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
        for name in MODULES
        if name.split(".")[0] == "hardware"
        for target, line in _imports(name)
        if target.split(".")[0] in {"django", "rest_framework", "celery", "pandas", "plotly"}
    ]
    assert not bad, bad


def test_every_registered_parser_lives_in_a_family_parsers_package() -> None:
    from artifacts.parsers import PARSERS

    for kind, (dotted, _label) in PARSERS.items():
        assert dotted in MODULES, f"{kind}: {dotted} is not a module"
        assert dotted.startswith("artifacts.") and ".parsers." in dotted, (kind, dotted)
