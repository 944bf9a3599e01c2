"""The import graph of python/contend has no circles.

Every ``import`` / ``from ... import`` anywhere in a module counts, including
the ones inside functions (a lazy import still ties the two modules together),
and importing ``a.b.c`` counts as importing the packages ``a.b`` and ``a`` too
(their ``__init__`` runs first).  Parsed with :mod:`ast`; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "python"
PACKAGE = "contend"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict:
    """{dotted name: path} of every module under python/contend."""
    return {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base.pop()  # a module's relative imports start at its package
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _closest(name: str, known: dict) -> str | None:
    """The deepest module of ``known`` that ``name`` names or lies in."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _parents(name: str) -> list:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def imports_of(name: str, path: Path, known: dict) -> set:
    """The modules of ``known`` that module ``name`` imports.

    ``from P import x`` imports the module ``P.x`` when there is one, else the
    name ``x`` of ``P`` (so ``P`` itself); either way the packages above are
    run first, except the importer's own packages, which are already running.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    named = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                named.append(sub if sub in known else base)
    direct = {hit for hit in (_closest(n, known) for n in named) if hit}
    above = {p for hit in direct for p in _parents(hit) if p in known}
    own = set(_parents(name))
    return (direct | (above - own)) - {name}


def import_graph() -> dict:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root, targets in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(targets)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_graph_sees_relative_absolute_and_lazy_imports():
    graph = import_graph()
    assert "contend.results" in graph["contend.reports.tables"]  # from ..results import Results
    assert "contend.models.views" in graph["contend.reports.views.model"]  # inside a function
    assert "contend.reports" in graph["contend.cli"]  # a package runs before its module
    assert "contend.reports" not in graph["contend.reports.tables"]  # already running
    assert "contend.cli" in graph["contend.report"]  # python -m contend.report
    # cycles() finds a circle that runs through three modules
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_python_contend_has_no_import_circles():
    found = cycles(import_graph())
    assert not found, "import circles: " + "; ".join(" -> ".join(c) for c in found)
