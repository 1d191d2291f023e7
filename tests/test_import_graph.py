"""The import graph of each package, built from the source, has no circle.

An import circle makes every module on it load, and change, with all the others: the agent
engine once sat on a 17-module circle in ``herdr_sim`` (runtime → handler modules → runtime).
The graph is read with :mod:`ast`, so every import counts — module level, inside functions,
and the type-only ones under ``if TYPE_CHECKING:`` (a circle that only mypy follows still
ties the modules together). An edge goes to the module an import names: ``from .a import
b`` is an edge to ``pkg.a.b`` when that is a module, else to ``pkg.a``. Importing a
submodule also runs its parent package's ``__init__``; that implicit edge is not counted
(as in import-linter and pydeps), or every package whose ``__init__`` re-exports a name
would be one circle.

All three packages are held to it: ``herdr_sim``, ``orchestrator`` and ``pytest_herdr``
(whose forensics collector and HTML renderer once imported each other; their shared data
types now live in ``pytest_herdr.scene``).

Every package is also held to it one level up: its subpackages, each taken as one node,
have no circle either (``tools`` ⇄ ``agent_tools`` ⇄ ``managed`` was one, through different
modules each way, so the module graph alone did not show it), and they stack in the layers
docs/architecture.md draws: ``core`` imports no tool family, no family imports the
``pipeline`` that runs them, and the low-level tools import no other family.

Across the packages, imports go one way (:func:`layer_violations`, on the graph of all
three): ``orchestrator.client`` — the Herdr client library, the protocol facts, the socket
paths and the file-trust rules — is the base and imports nothing else of ours; ``herdr_sim``
builds on it and on nothing else of the orchestrator (as a fake server builds on its
client library); the rest of the orchestrator never imports the simulator (its demo
excepted); nothing below imports ``pytest_herdr``, which sits on top; and no simulator code
outside its ``herdr`` CLI imports that CLI package (what both need lives below both).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("herdr_sim", "orchestrator", "pytest_herdr")

#: herdr_sim's core: nothing here may reach a handler module (herdr_sim.methods.*)
CORE = (
    "herdr_sim.services.runtime",
    "herdr_sim.services.agents",
    "herdr_sim.services.launches",
    "herdr_sim.services.lifecycle",
    "herdr_sim.services.events",
    "herdr_sim.services.detection_loop",
    "herdr_sim.server",
    "herdr_sim.persist.session",
    "herdr_sim.services.metadata",
    "herdr_sim.registry",
)


def modules_of(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` (found under ``root``) by dotted name."""
    found: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of ``modules`` (None: outside them)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


@cache
def _statements(path: Path) -> tuple[tuple[int, str, tuple[str, ...]], ...]:
    """Every import of ``path`` as ``(level, module, names)`` (``import a.b`` is
    ``(0, "", ("a.b",))``), read once per run: a dozen tests build graphs from the same files,
    and parsing them all for each took 7 s."""
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.append((0, "", tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or "", tuple(a.name for a in node.names)))
    return tuple(found)


def _imports(module: str, path: Path, modules: dict[str, Path]) -> Iterable[str]:
    is_package = path.name == "__init__.py"
    for level, imported, names in _statements(path):
        if not imported and not level:  # import a, b.c
            for name in names:
                target = _known(name, modules)
                if target is not None:
                    yield target
            continue
        if level:
            base_parts = module.split(".")
            if not is_package:
                base_parts = base_parts[:-1]
            base_parts = base_parts[: len(base_parts) - (level - 1)]
            base = ".".join([*base_parts, *([imported] if imported else [])])
        else:
            base = imported
        for name in names:
            target = _known(f"{base}.{name}", modules) or _known(base, modules)
            if target is not None:
                yield target


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """module → the modules of the same package it imports (any kind of import)."""
    return _graph_of(modules_of(root, package))


def repo_graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """module → the modules of any of ``packages`` it imports: the edges across packages."""
    modules: dict[str, Path] = {}
    for package in packages:
        modules.update(modules_of(root, package))
    return _graph_of(modules)


def _graph_of(modules: dict[str, Path]) -> dict[str, set[str]]:
    return {
        module: {target for target in _imports(module, path, modules) if target != module}
        for module, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or not."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


@pytest.mark.parametrize("package", PACKAGES)
def test_package_has_no_import_circle(package: str) -> None:
    graph = import_graph(REPO, package)
    assert len(graph) > 5, f"no modules found for {package}"
    assert cycles(graph) == []


def subpackage_graph(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """The module graph with each subpackage of ``package`` taken as one node (a module
    directly in the package, and the package itself, stay their own nodes)."""

    def node(module: str) -> str:
        parts = module.split(".")
        if len(parts) > 2 or (len(parts) == 2 and (REPO / package / parts[1]).is_dir()):
            return ".".join(parts[:2])
        return module

    collapsed: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = node(module)
        found = collapsed.setdefault(source, set())
        found.update(t for t in map(node, targets) if t != source)
    return collapsed


def test_orchestrator_subpackages_have_no_import_circle() -> None:
    graph = subpackage_graph(import_graph(REPO, "orchestrator"), "orchestrator")
    families = {"orchestrator.tools", "orchestrator.agent_tools", "orchestrator.managed"}
    assert families | {"orchestrator.core", "orchestrator.pipeline"} <= set(graph)
    assert cycles(graph) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_subpackages_have_no_import_circle(package: str) -> None:
    graph = subpackage_graph(import_graph(REPO, package), package)
    assert cycles(graph) == []


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@dataclass(frozen=True)
class Rule:
    """A module within ``importer`` (but none of ``except_importers``) imports nothing within
    ``forbidden`` but what is within ``allowed``."""

    importer: str
    forbidden: str
    allowed: tuple[str, ...] = ()
    except_importers: tuple[str, ...] = ()

    def broken_by(self, module: str, target: str) -> bool:
        return (
            _within(module, self.importer)
            and not any(_within(module, e) for e in self.except_importers)
            and _within(target, self.forbidden)
            and not any(_within(target, a) for a in self.allowed)
        )


#: the layers of docs/architecture.md's picture, across the packages
LAYER_RULES = (
    # the base: the Herdr client library imports nothing else of ours
    Rule("orchestrator.client", "orchestrator", allowed=("orchestrator.client",)),
    Rule("orchestrator.client", "herdr_sim"),
    Rule("orchestrator.client", "pytest_herdr"),
    # the simulator builds on the client library and on nothing else of the orchestrator
    Rule("herdr_sim", "orchestrator", allowed=("orchestrator.client",)),
    Rule("herdr_sim", "pytest_herdr"),
    # the orchestrator never imports the simulator (its demo runs one on purpose)
    Rule("orchestrator", "herdr_sim", except_importers=("orchestrator.demo",)),
    Rule("orchestrator", "pytest_herdr"),
    # simulator code outside its `herdr` CLI never imports that CLI package
    Rule("herdr_sim", "herdr_sim.herdr_cli", except_importers=("herdr_sim.herdr_cli",)),
)


def layer_violations(graph: dict[str, set[str]], rules: Iterable[Rule] = LAYER_RULES) -> list[str]:
    """Every edge of ``graph`` that breaks one of ``rules``, as ``"a -> b"``, sorted."""
    rules = tuple(rules)
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if any(rule.broken_by(module, target) for rule in rules)
    )


def test_imports_go_one_way_across_the_packages() -> None:
    graph = repo_graph(REPO)
    assert {"orchestrator.client.protocol", "herdr_sim.protocol"} <= set(graph)
    assert layer_violations(graph) == []


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        ("orchestrator.core", "orchestrator.tools"),
        ("orchestrator.core", "orchestrator.agent_tools"),
        ("orchestrator.core", "orchestrator.managed"),
        ("orchestrator.core", "orchestrator.pipeline"),
        ("orchestrator.tools", "orchestrator.pipeline"),
        ("orchestrator.agent_tools", "orchestrator.pipeline"),
        ("orchestrator.managed", "orchestrator.pipeline"),
        ("orchestrator.tools", "orchestrator.agent_tools"),
        ("orchestrator.tools", "orchestrator.managed"),
        ("orchestrator.agent_tools", "orchestrator.tools"),
        ("orchestrator.agent_tools", "orchestrator.managed"),
    ],
)
def test_orchestrator_layers_import_downwards_only(lower: str, upper: str) -> None:
    graph = subpackage_graph(import_graph(REPO, "orchestrator"), "orchestrator")
    assert upper not in reachable(graph, lower), f"{lower} reaches {upper}"


def test_the_core_never_reaches_a_handler_module() -> None:
    graph = import_graph(REPO, "herdr_sim")
    for module in CORE:
        assert module in graph, module
        handlers = sorted(m for m in reachable(graph, module) if m.startswith("herdr_sim.methods"))
        assert handlers == [], f"{module} reaches {handlers}"


def test_type_only_and_function_level_imports_make_edges(tmp_path: Path) -> None:
    # the checker itself: a circle closed only under TYPE_CHECKING or inside a function counts
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .c import C\n")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n"
    )
    (package / "b.py").write_text("def f():\n    from pkg import a\n")
    (package / "sub" / "c.py").write_text("from .. import a\nimport pkg.b\nC = 1\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.a"}
    assert graph["pkg.sub"] == {"pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a", "pkg.b"}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    assert reachable(graph, "pkg.sub") == {"pkg.sub.c", "pkg.a", "pkg.b"}


def test_a_circle_through_two_subpackages_shows_only_one_level_up() -> None:
    # sub1.a -> sub2.b and sub2.c -> sub1.d: no module circle, one subpackage circle
    graph = {
        "orchestrator.tools.a": {"orchestrator.managed.b"},
        "orchestrator.managed.b": set(),
        "orchestrator.managed.c": {"orchestrator.tools.d"},
        "orchestrator.tools.d": set(),
    }
    assert cycles(graph) == []
    collapsed = subpackage_graph(graph, "orchestrator")
    assert cycles(collapsed) == [["orchestrator.managed", "orchestrator.tools"]]


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("orchestrator.client.sync", "orchestrator.core.policy"),
        ("orchestrator.client.wire", "herdr_sim.errors"),
        ("orchestrator.client.wire", "pytest_herdr.client"),
        ("herdr_sim.server", "orchestrator.managed.child"),
        ("herdr_sim.fake_agent.app", "orchestrator.core.safe_fs"),
        ("herdr_sim.server", "pytest_herdr.fixtures"),
        ("orchestrator.core.policy", "herdr_sim.protocol"),
        ("orchestrator.tools.low_level", "pytest_herdr.client"),
        ("herdr_sim.wire.request_json", "herdr_sim.herdr_cli.output"),
    ],
)
def test_each_layer_rule_catches_an_import_that_breaks_it(module: str, target: str) -> None:
    # the checker itself, on a synthetic graph: one violating edge beside allowed ones
    allowed = {
        "herdr_sim.server": {"orchestrator.client.protocol", "herdr_sim.wire.errors"},
        "herdr_sim.herdr_cli.app": {"herdr_sim.herdr_cli.output", "orchestrator.client.wire"},
        "orchestrator.demo": {"herdr_sim"},
        "orchestrator.client.sync": {"orchestrator.client.protocol"},
        "pytest_herdr.fixtures": {"herdr_sim.simulator", "orchestrator.managed.child"},
    }
    assert layer_violations(allowed) == []
    graph = {**allowed, module: allowed.get(module, set()) | {target}}
    assert layer_violations(graph) == [f"{module} -> {target}"]


def test_a_subpackage_circle_in_any_package_is_found() -> None:
    # the simulator's rooms: services -> host and host -> services is a circle one level up
    graph = {
        "herdr_sim.services.runtime": {"herdr_sim.host.pty"},
        "herdr_sim.host.pty": set(),
        "herdr_sim.host.gitrepo": {"herdr_sim.services.places"},
        "herdr_sim.services.places": set(),
    }
    assert cycles(graph) == []
    collapsed = subpackage_graph(graph, "herdr_sim")
    assert cycles(collapsed) == [["herdr_sim.host", "herdr_sim.services"]]
