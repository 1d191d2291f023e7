"""The lazy package face shared by ``orchestrator``, ``orchestrator.client`` and ``pytest_herdr``.

Each of those package roots names its public names in a table (name → submodule) and lets
:func:`lazy_getattr` build its module ``__getattr__``, so importing the package stays cheap
and a name's module loads on first use. Import-free (:mod:`importlib` loads on the first
name) on purpose: the simulator's ``herdr`` CLI runs the ``orchestrator`` root on every start.
"""

from __future__ import annotations

# `typing` costs the simulator's `herdr` CLI its start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``name`` from ``package.<modules[name]>``."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # not cached in globals(): the module's own name stays the one truth (a test runner
        # that drops and re-imports modules, as pytester does, never meets a stale class)
        from importlib import import_module

        return getattr(import_module(f"{package}.{module}"), name)

    return __getattr__
