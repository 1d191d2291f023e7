"""The distribution a user downloads: the sdist and the wheel build from this tree and pass
``twine check --strict`` (what PyPI checks: metadata, the README rendering); the wheel carries
the three packages, the licence and no tests; the metadata names the licence, the project's
URLs and keywords, and keeps the MCP stack in its ``mcp`` extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-d", str(out)],
        cwd=REPO, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return out


def test_the_sdist_and_the_wheel_pass_twine_check(dist: Path) -> None:
    with (REPO / "pyproject.toml").open("rb") as f:
        version = tomllib.load(f)["project"]["version"]
    built = sorted(p.name for p in dist.iterdir())
    assert built == [f"pytest_herdr-{version}-py3-none-any.whl", f"pytest_herdr-{version}.tar.gz"]
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *sorted(map(str, dist.iterdir()))],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout


def test_the_wheel_holds_the_packages_the_licence_and_the_metadata(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
        licence = archive.read(next(n for n in names if n.endswith("licenses/LICENSE")))
    tops = {name.split("/", 1)[0] for name in names if not name.split("/", 1)[0].endswith("-info")}
    assert tops == {"herdr_sim", "orchestrator", "pytest_herdr"}, tops
    assert b"Apache License" in licence and b"Version 2.0, January 2004" in licence
    assert metadata["License-Expression"] == "Apache-2.0"
    assert "herdr" in (metadata["Keywords"] or "").split(",")
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL") or [])
    assert urls.get("Herdr") == "https://github.com/herdrdev/herdr", urls
    assert "mcp" in (metadata.get_all("Provides-Extra") or [])
    plain = [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert not [r for r in plain if r.split()[0].split("=")[0] in ("mcp", "uvicorn", "anyio")]
    assert (REPO / "LICENSE").read_bytes() == licence
