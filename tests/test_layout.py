"""The layout DESIGN.md asks for, checked on the source: no import cycle in harness/ (imports inside functions
and under TYPE_CHECKING count: they are dependencies all the same), no module over 400 lines unless its
docstring says why, and the dependency direction between packages.

The import graph has one node per module (`harness/x/__init__.py` is the node `harness.x`, the package face).
`import a.b` and `from a import b` make an edge to `a.b` when that is a module, and `from a import b` also to
`a` (its face runs first). Relative imports are resolved against the importing module's package. An import of
one's own package face (or of any enclosing package) is not an edge: Python has already started running that
face when the submodule runs, and the face re-exporting its submodules is the layout DESIGN.md wants.

The checks are written against the rules, not against today's tree: the synthetic packages at the end show
that each one can fail and pass.
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "harness"
MAX_LINES = 400


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    path: Path  # the importing file
    line: int
    function: str | None  # the enclosing function when the import runs only when it is called

    def where(self) -> str:
        inside = f" inside {self.function}()" if self.function else ""
        return f"{self.path}:{self.line}{inside}"


@dataclass(frozen=True)
class ImportGraph:
    root: Path  # the folder holding the package (file names are shown relative to it)
    modules: dict[str, Path]  # dotted name -> file
    edges: tuple[Edge, ...]

    def targets(self, source: str) -> set[str]:
        return {e.target for e in self.edges if e.source == source}

    def edge(self, source: str, target: str) -> Edge:
        return next(e for e in self.edges if e.source == source and e.target == target)


def module_names(package_dir: Path) -> dict[str, Path]:
    base = package_dir.parent
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(base).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Every dotted name an import statement loads (modules or not; the caller keeps the modules)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = _package_of(module, path).split(".")
        anchor = package[: len(package) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def _imports_with_function(tree: ast.AST):
    """(import node, enclosing function name or None) for every import anywhere in the tree."""
    todo: list[tuple[ast.AST, str | None]] = [(tree, None)]
    while todo:
        node, function = todo.pop()
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, function
            todo.append((child, inner))


def import_graph(package_dir: Path) -> ImportGraph:
    modules = module_names(package_dir)
    edges: dict[tuple[str, str], Edge] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, function in _imports_with_function(tree):
            for target in _imported(module, path, node):
                own_face = target == module or module.startswith(target + ".")
                if target in modules and not own_face:
                    edge = Edge(module, target, path.relative_to(package_dir.parent), node.lineno, function)
                    known = edges.get((module, target))
                    if known is None or edge.line < known.line:
                        edges[(module, target)] = edge
    return ImportGraph(package_dir.parent, modules, tuple(sorted(edges.values(), key=lambda e: (e.source, e.line, e.target))))


# ---------------------------------------------------------------------------------------------
# cycles


def strongly_connected(graph: ImportGraph) -> list[list[str]]:
    """Groups of modules that import each other, directly or around a circle (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    successors = {m: sorted(graph.targets(m)) for m in graph.modules}
    for root in graph.modules:
        if root in index:
            continue
        work = [(root, iter(successors[root]))]
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
                    work.append((child, iter(successors[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def shortest_cycle(graph: ImportGraph, group: list[str]) -> list[Edge]:
    """One concrete circle through the first module of a group, as the import statements that make it."""
    start, members = group[0], set(group)
    came_from: dict[str, Edge] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph.targets(node) & members):
            if target == start:
                path = [graph.edge(node, start)]
                while node != start:
                    path.append(came_from[node])
                    node = came_from[node].source
                return list(reversed(path))
            if target not in came_from:
                came_from[target] = graph.edge(node, target)
                queue.append(target)
    raise AssertionError(f"no circle through {start} in {group}")


def cycle_problems(graph: ImportGraph) -> list[str]:
    problems = []
    for group in strongly_connected(graph):
        circle = shortest_cycle(graph, group)
        steps = " -> ".join(f"{e.source} ({e.where()})" for e in circle) + f" -> {circle[0].source}"
        problems.append(f"import cycle among {', '.join(group)}: {steps}")
    return problems


# ---------------------------------------------------------------------------------------------
# long modules


def says_why_long(docstring: str) -> bool:
    """A sentence of the docstring names its length (`long`, `lines`) and a reason (`because`, `why`)."""
    for sentence in docstring.lower().replace("\n", " ").split("."):
        if ("long" in sentence or "lines" in sentence) and ("because" in sentence or "why" in sentence):
            return True
    return False


def long_module_problems(graph: ImportGraph) -> list[str]:
    problems = []
    for module, path in graph.modules.items():
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_LINES and not says_why_long(ast.get_docstring(ast.parse(text)) or ""):
            problems.append(f"{path} ({module}) has {lines} lines, over {MAX_LINES}, and its docstring does not say "
                            f"why (split it by concept, or say why it is long)")
    return problems


# ---------------------------------------------------------------------------------------------
# dependency direction (DESIGN.md)


@dataclass(frozen=True)
class Rule:
    """Modules inside one of `sources` never import a module inside one of `forbidden`."""

    sources: tuple[str, ...]
    forbidden: tuple[str, ...]
    reason: str
    allowed: tuple[str, ...] = ()  # importing modules the rule does not apply to

    def covers(self, module: str, packages: tuple[str, ...]) -> bool:
        return any(module == p or module.startswith(p + ".") for p in packages)


RULES = (
    Rule(("harness.policy",), ("harness.models",), "policy is pure and never imports models"),
    Rule(("harness.models",), ("harness.session", "harness.cases", "harness.compaction", "harness.run"),
         "models never imports session, cases, compaction or run"),
    Rule(("harness.studies", "harness.run"), ("harness.render", "harness.cli"),
         "studies and run compute; they never import the renderer or the CLI"),
    Rule(("harness.render",), ("harness.cli", "harness.run"),
         "render reads results only: it imports nothing from cli/ or run/"),
    Rule(("harness",), ("harness.cli",), "nothing imports the CLI except harness.__main__",
         allowed=("harness.cli", "harness.__main__")),
)


def rule_problems(graph: ImportGraph, rule: Rule) -> list[str]:
    broken = [e for e in graph.edges if not rule.covers(e.source, rule.allowed)
              and rule.covers(e.source, rule.sources) and rule.covers(e.target, rule.forbidden)]
    # `from harness.cli import options` loads the face and the submodule: name the submodule only
    named = [e for e in broken if not any(o.source == e.source and o.line == e.line
                                          and o.target.startswith(e.target + ".") for o in broken)]
    return [f"{e.source} imports {e.target} ({e.where()}): {rule.reason}" for e in named]


def _module_level_functions(graph: ImportGraph, module: str, seen: frozenset[str] = frozenset()) -> dict[str, str]:
    """Name -> defining module of every function a module defines or re-exports from its own package."""
    path = graph.modules[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {n.name: module for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = _imported(module, path, node)[0]
            if source in graph.modules and source not in seen and source.startswith("harness.studies"):
                found = _module_level_functions(graph, source, seen | {module})
                for alias in node.names:
                    if alias.name in found:
                        functions[alias.asname or alias.name] = found[alias.name]
    return functions


def render_study_problems(graph: ImportGraph) -> list[str]:
    """render may use the studies' data types by name, never the functions that run a study (nor a study
    module as a whole, which would hand it those functions)."""
    problems = []
    for module, path in graph.modules.items():
        if not (module == "harness.render" or module.startswith("harness.render.")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        shown = path.relative_to(graph.root)
        for node, function in _imports_with_function(tree):
            where = f"{shown}:{node.lineno}" + (f" inside {function}()" if function else "")
            loaded = _imported(module, path, node)
            if isinstance(node, ast.Import):
                modules, base, names = [m for m in loaded if _is_study(m)], None, []
            else:
                base, names = loaded[0], [alias.name for alias in node.names]
                modules = [m for m in loaded[1:] if _is_study(m) and m in graph.modules]
            for target in modules:
                problems.append(f"{module} imports the study module {target} ({where}): render may import the "
                                f"studies' data types by name, not a module holding their running functions")
            if base is None or not _is_study(base) or base not in graph.modules:
                continue
            functions = _module_level_functions(graph, base)
            for name in names:
                if name in functions:
                    problems.append(f"{module} imports the function {functions[name]}.{name} ({where}): render takes "
                                    f"the studies' data types, never their functions (move a shared helper to render/)")
    return problems


def _is_study(module: str) -> bool:
    return module == "harness.studies" or module.startswith("harness.studies.")


def direction_problems(graph: ImportGraph) -> list[str]:
    return [p for rule in RULES for p in rule_problems(graph, rule)] + render_study_problems(graph)


# ---------------------------------------------------------------------------------------------
# the checks on harness/


@pytest.fixture(scope="module")
def harness_graph() -> ImportGraph:
    return import_graph(HARNESS)


def test_no_import_cycle(harness_graph):
    problems = cycle_problems(harness_graph)
    assert not problems, "\n".join(problems)


def test_no_module_over_400_lines_without_a_reason(harness_graph):
    problems = long_module_problems(harness_graph)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.reason.split(":")[0].split(";")[0])
def test_dependency_direction(harness_graph, rule):
    problems = rule_problems(harness_graph, rule)
    assert not problems, "\n".join(problems)


def test_render_never_imports_a_running_study_function(harness_graph):
    problems = render_study_problems(harness_graph)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------------------------
# the checks themselves, on synthetic packages


def make_package(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (path under root -> source) and an empty __init__.py in every folder; returns root/harness."""
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    for folder in [p for p in root.rglob("*") if p.is_dir()] + [root / "harness"]:
        (folder / "__init__.py").touch(exist_ok=True)
    return root / "harness"


def test_a_top_level_cycle_is_found_and_named(tmp_path):
    graph = import_graph(make_package(tmp_path, {
        "harness/a.py": "from harness.b import B\n",
        "harness/b.py": "import harness.c\n",
        "harness/c.py": "from harness import a\n",
    }))
    problems = cycle_problems(graph)
    assert len(problems) == 1
    assert problems[0].startswith("import cycle among harness.a, harness.b, harness.c: harness.a (")
    assert "harness/a.py:1) -> harness.b (" in problems[0] and problems[0].endswith("-> harness.a")


def test_an_import_inside_a_function_counts(tmp_path):
    graph = import_graph(make_package(tmp_path, {
        "harness/models/base.py": "def open_client():\n    from .openai import OpenAIClient\n    return OpenAIClient\n",
        "harness/models/openai.py": "from harness.models.base import open_client\n",
    }))
    problems = cycle_problems(graph)
    assert len(problems) == 1
    assert "harness.models.base, harness.models.openai" in problems[0]
    assert "base.py:2 inside open_client()" in problems[0]


def test_a_relative_import_is_resolved(tmp_path):
    graph = import_graph(make_package(tmp_path, {
        "harness/policy/base.py": "from ..session import Turn\nfrom . import default\n",
        "harness/policy/default.py": "",
        "harness/session.py": "",
    }))
    assert graph.targets("harness.policy.base") == {"harness.session", "harness.policy.default"}


def test_importing_the_own_package_face_is_not_a_cycle(tmp_path):
    graph = import_graph(make_package(tmp_path, {
        "harness/cases/__init__.py": "from harness.cases.schema import Case\n",
        "harness/cases/schema.py": "import harness.cases\nfrom harness.cases import drafts\n",
        "harness/cases/drafts.py": "",
    }))
    assert cycle_problems(graph) == []
    assert graph.targets("harness.cases.schema") == {"harness.cases.drafts"}


def test_a_forbidden_edge_is_named_with_its_rule(tmp_path):
    graph = import_graph(make_package(tmp_path, {
        "harness/policy/default.py": "def plan():\n    import harness.models.base\n",
        "harness/models/base.py": "",
        "harness/studies/gate.py": "from harness.render.gate import table\nclass GateVerdict: ...\ndef run_gate(): ...\n",
        "harness/render/gate.py": "from harness.studies.gate import GateVerdict, run_gate\n",
        "harness/studies/__init__.py": "",
        "harness/cli/__init__.py": "",
        "harness/__main__.py": "from harness.cli import main\n",
        "harness/run/matrix.py": "from harness.cli import options\n",
        "harness/cli/options.py": "",
    }))
    problems = direction_problems(graph)
    assert any(p.startswith("harness.policy.default imports harness.models.base (") and "inside plan()" in p
               and p.endswith("policy is pure and never imports models") for p in problems)
    assert any(p.startswith("harness.studies.gate imports harness.render.gate") and "never import the renderer" in p
               for p in problems)
    assert any(p.startswith("harness.run.matrix imports harness.cli.options") and "except harness.__main__" in p
               for p in problems)
    assert any(p.startswith("harness.render.gate imports the function harness.studies.gate.run_gate") for p in problems)
    assert not any("GateVerdict" in p for p in problems)
    assert not any(p.startswith("harness.__main__") for p in problems)
    assert len(problems) == 5  # the four above, and run.matrix -> cli under the studies/run rule


def test_a_clean_package_passes_every_check(tmp_path):
    graph = import_graph(make_package(tmp_path, {
        "harness/session.py": "",
        "harness/policy/base.py": "from harness.session import Turn\n",
        "harness/models/base.py": "from harness.tokens import counter\n",
        "harness/tokens.py": "",
        "harness/studies/gate.py": "class GateVerdict: ...\ndef run_gate(): ...\n",
        "harness/render/gate.py": "from harness.studies.gate import GateVerdict\n",
        "harness/cli/gate.py": "from harness.render.gate import render\nfrom harness.studies.gate import run_gate\n",
        "harness/__main__.py": "from harness.cli import main\n",
    }))
    assert cycle_problems(graph) == [] and direction_problems(graph) == [] and long_module_problems(graph) == []


def test_a_long_module_needs_a_reason_in_its_docstring(tmp_path):
    body = "x = 1\n" * (MAX_LINES + 1)
    graph = import_graph(make_package(tmp_path, {
        "harness/plain.py": '"""Numbers."""\n' + body,
        "harness/explained.py": '"""Numbers. It is long because one table of prices reads best in one place."""\n' + body,
        "harness/short.py": "x = 1\n" * MAX_LINES,
    }))
    problems = long_module_problems(graph)
    assert len(problems) == 1
    assert "plain.py (harness.plain) has 402 lines, over 400" in problems[0]
