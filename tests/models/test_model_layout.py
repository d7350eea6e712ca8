"""The model layer's shape: no import cycle inside harness/models (imports inside functions count), and
nothing in it reaches the session or case layers (DESIGN.md's dependency direction)."""

from __future__ import annotations

import ast
from pathlib import Path

import harness.models

MODELS = Path(harness.models.__file__).parent
FORBIDDEN = ("harness.session", "harness.cases")


def _module_name(path: Path) -> str:
    parts = path.relative_to(MODELS.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every harness module named by an import anywhere in the file (functions included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.startswith("harness.")}


def _graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in MODELS.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        # A module importing its own package face is how a package reads its parts, not a cycle.
        graph[name] = {t for t in _imports(path) if t in files and t != name and not name.startswith(t + ".")}
    return graph


def test_models_import_neither_session_nor_cases() -> None:
    offenders = sorted(f"{_module_name(path)} imports {name}" for path in MODELS.rglob("*.py")
                       for name in _imports(path) if name.startswith(FORBIDDEN))
    assert offenders == []


def test_no_import_cycle_inside_models() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, "import cycle: " + " -> ".join(trail[trail.index(name):] + (name,))
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, trail + (name,))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())


def test_base_imports_no_adapter() -> None:
    assert _graph()["harness.models.base"] == set()
