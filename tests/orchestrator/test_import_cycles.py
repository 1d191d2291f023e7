"""The agent tools import each other without a cycle, type-only and function-level imports
included: a cycle makes import order matter and hides which module a concept lives in
(completion ↔ context ↔ fleet ↔ harvest was one)."""

from __future__ import annotations

import ast
from pathlib import Path

import orchestrator.agent_tools

PACKAGE = "orchestrator.agent_tools"
ROOT = Path(orchestrator.agent_tools.__file__).parent


def _imports() -> dict[str, set[str]]:
    modules = {f"{PACKAGE}.{path.stem}": path for path in ROOT.glob("*.py")}
    modules[PACKAGE] = modules.pop(f"{PACKAGE}.__init__")
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph[node]):
            found = visit(nxt, [*path, node])
            if found is not None:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found is not None:
            return found
    return None


def test_the_agent_tools_have_no_import_cycle() -> None:
    graph = _imports()
    assert f"{PACKAGE}.completion" in graph and graph[f"{PACKAGE}.harvest"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
