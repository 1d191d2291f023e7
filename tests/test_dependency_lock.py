"""The locked dependency sets (``.ci/locks``, written by ``.ci/lock``) agree with
``pyproject.toml``: every requirement of the project, of each extra and of its build backend is
pinned there to a version its range admits, every pin carries hashes, and the runtime set is the
dev set's versions. A dependency edited in ``pyproject.toml`` without ``bash .ci/lock`` fails
here, so the lock and the ranges cannot drift apart.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.locks import LOCKS, pins

ROOT = Path(__file__).resolve().parents[1]


def pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def requirements(*, extras: bool) -> list[Requirement]:
    """The project's requirements (with every extra's when ``extras``) and its build backend's,
    less the project's references to its own extras."""
    data = pyproject()
    own = canonicalize_name(data["project"]["name"])
    texts = list(data["project"]["dependencies"]) + list(data["build-system"]["requires"])
    if extras:
        for group in data["project"].get("optional-dependencies", {}).values():
            texts.extend(group)
    parsed = [Requirement(text) for text in texts]
    return [r for r in parsed if canonicalize_name(r.name) != own]


@pytest.mark.parametrize(("lock", "extras"), [("dev.txt", True), ("runtime.txt", False)])
def test_every_requirement_is_pinned_within_its_range(lock: str, extras: bool) -> None:
    pinned = pins(lock)
    for requirement in requirements(extras=extras):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement} is not in .ci/locks/{lock}: run bash .ci/lock"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f".ci/locks/{lock} pins {name}=={pinned[name]}, outside {requirement}: "
            "run bash .ci/lock"
        )


def test_the_runtime_set_is_the_dev_sets_versions() -> None:
    dev, runtime = pins("dev.txt"), pins("runtime.txt")
    assert set(runtime) <= set(dev), sorted(set(runtime) - set(dev))
    differing = {name: (v, dev[name]) for name, v in runtime.items() if dev[name] != v}
    assert differing == {}


def test_the_runtime_set_holds_no_dev_tool() -> None:
    runtime = pins("runtime.txt")
    for tool in ("ruff", "mypy", "hypothesis", "pytest-xdist", "asyncssh", "trustme"):
        assert tool not in runtime, tool


def test_the_build_input_is_pyprojects_build_backend() -> None:
    listed = [
        line
        for line in (LOCKS / "build.in").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert listed[:-1] == pyproject()["build-system"]["requires"]
    assert listed[-1] == "editables"  # what hatchling's editable build asks for


def test_the_readme_documents_the_refresh_and_the_latest_releases_mode() -> None:
    development = (ROOT / "README.md").read_text().split("## Development", 1)[1]
    assert "bash .ci/lock" in development
    assert "PYTEST_HERDR_LATEST=1 bash .ci/test" in development
    # and the scripts do what it says: the lock is refreshed by uv, the latest mode resolves
    # in a virtualenv of its own, without the lock
    lock = (ROOT / ".ci" / "lock").read_text()
    assert "pip compile" in lock and '"uv==$UV_VERSION"' in lock
    install = (ROOT / ".ci" / "install").read_text()
    assert "--require-hashes --no-deps -r" in install
    assert "--upgrade --upgrade-strategy eager" in install
    assert ".venv-latest" in (ROOT / ".ci" / "venv").read_text()


def test_the_installer_is_the_uv_the_lock_script_pins() -> None:
    """``.ci/install`` installs the sets with uv from ``.ci/locks/uv.txt``: the uv that
    ``.ci/lock`` resolves with, hashed like every other pin."""
    version = re.search(r"^UV_VERSION=(\S+)$", (ROOT / ".ci" / "lock").read_text(), re.MULTILINE)
    assert version is not None
    assert pins("uv.txt") == {"uv": version[1]}
    install = (ROOT / ".ci" / "install").read_text()
    assert "--require-hashes --no-deps --upgrade --target" in install
    assert "-r .ci/locks/uv.txt" in install
