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

    from .config import SimulatorConfig
    from .faults import Fault, FaultPlan
    from .simulator import Simulator, SimulatorError
    from .wire.errors import HerdrRequestError

_LAZY = {
    "Simulator": "simulator",
    "SimulatorError": "simulator",
    "SimulatorConfig": "config",
    "HerdrRequestError": "wire.errors",
    "Fault": "faults",
    "FaultPlan": "faults",
}

__all__ = [
    "HERDR_VERSION",
    "PROTOCOL",
    "Fault",
    "FaultPlan",
    "HerdrRequestError",
    "Simulator",
    "SimulatorConfig",
    "SimulatorError",
    "__version__",
]


#: old public names: they still resolve, with a DeprecationWarning
_DEPRECATED = {"HerdrError": "HerdrRequestError"}


def __getattr__(name: str) -> Any:
    # the shared loader is imported on first use, not here: it lives in the orchestrator
    # package, whose import would cost every `herdr` CLI start milliseconds
    from orchestrator.client._lazy import resolve

    return resolve(__name__, _LAZY, name, deprecated=_DEPRECATED)
