"""Each package's public face (issue 12c): an explicit ``__all__`` at the root whose names all
import, and docs that import only public names from public modules.

A doc that imports a deep path (``orchestrator.client.sync``) makes that path a promise
nobody decided to keep; the docs' examples are the API users copy. docs/architecture.md
lists the public modules; this test holds the docs to that list: the ```` ```python ````
blocks of README.md and docs/, and the example files under docs/ (``docs/**/*.py``).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("herdr_sim", "orchestrator", "pytest_herdr")

#: the modules docs may import from besides the package roots (docs/architecture.md)
PUBLIC_MODULES = frozenset(
    {
        "herdr_sim.client",
        "herdr_sim.conformance",
        "herdr_sim.detection",
        "herdr_sim.fake_agent",
        "herdr_sim.fake_llm",
        "orchestrator.client.protocol",
        "herdr_sim.testing",
        "orchestrator.client",
    }
)

_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def doc_sources() -> list[tuple[str, str]]:
    """``(doc, source)``: each ```python block of the Markdown docs, each example file whole."""
    sources = [
        (str(path.relative_to(REPO)), block)
        for path in doc_files()
        for block in _BLOCK.findall(path.read_text(encoding="utf-8"))
    ]
    sources += [
        (str(path.relative_to(REPO)), path.read_text(encoding="utf-8"))
        for path in sorted((REPO / "docs").rglob("*.py"))
    ]
    return sources


def doc_imports() -> list[tuple[str, str, str | None]]:
    """``(doc, module, name)`` for every import of our packages in the docs' Python."""
    found: list[tuple[str, str, str | None]] = []
    for where, block in doc_sources():
        try:
            tree = ast.parse(block)
        except SyntaxError:  # an excerpt with "..." lines: read its import lines alone
            lines = [
                line.strip()
                for line in block.splitlines()
                if line.strip().startswith(("from ", "import "))
            ]
            tree = ast.parse("\n".join(lines))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.extend((where, node.module, alias.name) for alias in node.names)
            elif isinstance(node, ast.Import):
                found.extend((where, alias.name, None) for alias in node.names)
    return [item for item in found if item[1].split(".")[0] in PACKAGES]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_a_package_root_all_imports(package: str) -> None:
    module = importlib.import_module(package)
    names = module.__all__
    assert names, f"{package} exports nothing"
    assert sorted(set(names)) == sorted(names), "duplicates in __all__"
    for name in names:
        assert getattr(module, name) is not None, name


#: the package faces whose names resolve on first use (orchestrator.client._lazy.lazy_getattr)
LAZY_FACES = ("orchestrator", "orchestrator.client", "pytest_herdr")


@pytest.mark.parametrize("face", LAZY_FACES)
def test_a_lazy_face_exports_exactly_its_table_and_every_name_resolves(face: str) -> None:
    """The interpreter's view of a lazy face: ``__all__`` and the name → submodule table
    (``_LAZY``) name the same things, and each name loads from the submodule it names."""
    module = importlib.import_module(face)
    table: dict[str, str] = module._LAZY
    assert sorted(module.__all__) == sorted(table)
    for name, where in table.items():
        value = getattr(module, name)
        assert value is getattr(importlib.import_module(f"{face}.{where}"), name), name


@pytest.mark.parametrize("face", LAZY_FACES)
def test_a_lazy_face_type_checking_imports_match_its_table(face: str) -> None:
    """mypy's view of a lazy face (the imports under ``if TYPE_CHECKING:``) is the
    interpreter's (``_LAZY``): the same names, each from the same submodule."""
    module = importlib.import_module(face)
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    typed: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
                    typed.update(dict.fromkeys((alias.name for alias in stmt.names), stmt.module))
    assert typed == module._LAZY


def test_the_docs_import_our_packages_somewhere() -> None:
    # the parser itself: it finds the README's import of the simulator, and an example
    # file's import of the plugin's poller
    imports = doc_imports()
    assert ("README.md", "herdr_sim", "Simulator") in imports
    example = "docs/pytest-plugin/examples/agent-author/test_my_agent.py"
    assert (example, "pytest_herdr", "wait_until") in imports


def test_docs_import_only_public_modules() -> None:
    deep = sorted(
        f"{doc}: {module}"
        for doc, module, _ in doc_imports()
        if module not in PACKAGES and module not in PUBLIC_MODULES
    )
    assert deep == []


def test_every_name_the_docs_import_is_importable() -> None:
    missing = []
    for doc, module, name in doc_imports():
        try:
            imported = importlib.import_module(module)
        except ModuleNotFoundError:
            missing.append(f"{doc}: {module}")
            continue
        if name is not None and not hasattr(imported, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ModuleNotFoundError:
                missing.append(f"{doc}: from {module} import {name}")
    assert missing == []


def test_a_package_root_name_is_in_its_all() -> None:
    # what the docs import from a package root is part of its declared face; a public
    # submodule imported from its root (`from herdr_sim import testing`) is a module import
    undeclared = sorted(
        f"{doc}: {module}.{name}"
        for doc, module, name in doc_imports()
        if module in PACKAGES
        and name is not None
        and f"{module}.{name}" not in PUBLIC_MODULES
        and name not in importlib.import_module(module).__all__
    )
    assert undeclared == []


def test_one_name_is_one_class_across_the_package_faces() -> None:
    """A name two faces export is the same object in both (``pytest_herdr.WireClient`` is
    ``orchestrator.client.WireClient``); a different thing gets a different name (the
    simulator's ``HerdrRequestError`` is not the client's ``HerdrError``)."""
    seen: dict[str, tuple[str, object]] = {}
    clashes = []
    for face in (*PACKAGES, "orchestrator.client", "herdr_sim.client"):
        module = importlib.import_module(face)
        for name in module.__all__:
            if name.startswith("__"):
                continue
            value = getattr(module, name)
            first = seen.setdefault(name, (face, value))
            if first[1] is not value:
                clashes.append(f"{first[0]}.{name} is not {face}.{name}")
    assert clashes == []


@pytest.mark.parametrize(
    ("face", "old", "new"),
    [
        ("pytest_herdr", "HerdrClient", "WireClient"),
        ("pytest_herdr", "AsyncHerdrClient", "AsyncWireClient"),
        ("herdr_sim", "HerdrError", "HerdrRequestError"),
    ],
)
def test_an_old_name_still_resolves_with_a_deprecation_warning(
    face: str, old: str, new: str
) -> None:
    module = importlib.import_module(face)
    assert old not in module.__all__
    with pytest.warns(DeprecationWarning, match=rf"{face}\.{old} is deprecated: use {face}\.{new}"):
        value = getattr(module, old)
    assert value is getattr(module, new)
