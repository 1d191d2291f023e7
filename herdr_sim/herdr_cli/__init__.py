"""A re-implementation of Herdr's `herdr` command-line client, for the simulator.

Real agent integrations shell out to ``herdr pane report-agent ...`` and friends from
inside their panes; the simulator puts this CLI on every pane's ``PATH`` (see
:func:`install_cli`) so those integrations run unmodified. Importing this package loads
nothing but the entry point: the CLI starts once per command, so every command group is
imported only when it runs.
"""

from __future__ import annotations

from .app import main

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from herdr_sim.host.cli_install import install_cli

__all__ = ["install_cli", "main"]


def __getattr__(name: str) -> Any:
    # Hand-written on purpose, not orchestrator.client._lazy's: every `from . import submodule` of
    # the CLI asks this hook first, and the shared loader's package (orchestrator: logging,
    # typing) would cost every CLI start milliseconds (tests/cli/test_startup.py).
    if name == "install_cli":
        from herdr_sim.host.cli_install import install_cli

        return install_cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
