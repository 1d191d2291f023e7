"""herdr_sim: a faithful simulator of Herdr, the terminal multiplexer for coding agents.

The package import is deliberately lazy: the simulator's ``herdr`` CLI lives in
``herdr_sim.herdr_cli`` and must start in a few milliseconds, so importing this package
must not pull in asyncio, pyte, logging or the method registry. Public names resolve on
first use; the library's NullHandler is installed by :mod:`herdr_sim.simulator`.
"""

from __future__ import annotations

from ._version import HERDR_VERSION, PROTOCOL, __version__

# `typing` costs ~3 ms of every `herdr` CLI start; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from herdr_sim.wire.errors import HerdrError

    from .config import SimulatorConfig
    from .faults import Fault, FaultPlan
    from .simulator import Simulator, SimulatorError

_LAZY = {
    "Simulator": "simulator",
    "SimulatorError": "simulator",
    "SimulatorConfig": "config",
    "HerdrError": "wire.errors",
    "Fault": "faults",
    "FaultPlan": "faults",
}

__all__ = [
    "HERDR_VERSION",
    "PROTOCOL",
    "Fault",
    "FaultPlan",
    "HerdrError",
    "Simulator",
    "SimulatorConfig",
    "SimulatorError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'herdr_sim' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
