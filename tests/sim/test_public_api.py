"""The package's public surface: every exported name resolves, and importing is cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import herdr_sim


def test_every_exported_name_resolves() -> None:
    for name in herdr_sim.__all__:
        assert getattr(herdr_sim, name) is not None, name


def test_every_test_seam_resolves_and_is_documented() -> None:
    from herdr_sim import testing

    overview = (
        Path(herdr_sim.__file__).parents[1] / "docs" / "simulator" / "overview.md"
    ).read_text()
    for name in testing.__all__:
        assert callable(getattr(testing, name)), name
        assert f"`{name}" in overview, f"herdr_sim.testing.{name} is not in overview.md"


def test_importing_the_package_starts_and_loads_nothing_heavy() -> None:
    # The `herdr` CLI imports herdr_sim on every command: it must stay lazy.
    code = (
        "import sys, herdr_sim; "
        "heavy = {'asyncio', 'pyte', 'logging', 'herdr_sim.simulator', 'herdr_sim.registry'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(Path(herdr_sim.__file__).parents[1])},
    ).stdout
    assert out.strip() == "[]"
