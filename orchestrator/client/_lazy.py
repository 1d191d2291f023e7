"""Lazy package faces, written once: a module ``__getattr__`` from a name → module table.

A package root names its public names in a table and lets :func:`lazy_getattr` build its
module ``__getattr__``; where even importing this module at import time is too dear, the
root calls :func:`resolve` from a two-line ``__getattr__`` of its own (``herdr_sim`` and
``herdr_sim.client``: the simulator's ``herdr`` CLI starts in milliseconds and loads only the
light modules of the base layer, ``orchestrator.client``). Importing the package stays cheap and a
name's module loads on first use. Two loaders stay hand-written, each saying why:
``orchestrator.client.protocol`` and ``herdr_sim.herdr_cli``, which the CLI's hot path asks (every
``from . import submodule`` asks the package's ``__getattr__`` first), so they must not import this
module at all.

A table value is the submodule that defines the name, relative to ``base`` (the package
itself unless given); ``"module:other"`` takes the name from ``other`` in that module (a
re-export under another name). ``deprecated`` maps an old public name to the new one: it
still resolves, with a :class:`DeprecationWarning` naming the new one.

Imports nothing at import time: :mod:`importlib` loads on the first name (and :mod:`warnings`
when an old name is used), as the ``herdr`` CLI runs the ``orchestrator`` root on every start.
"""

from __future__ import annotations

# `typing` is not needed at run time here; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_getattr", "resolve"]


def resolve(
    package: str,
    modules: Mapping[str, str],
    name: str,
    *,
    base: str | None = None,
    deprecated: Mapping[str, str] | None = None,
) -> Any:
    """``package``'s public ``name``: loaded from the module its table names; an
    :class:`AttributeError` for a name it does not have."""
    if deprecated and name in deprecated:
        import warnings

        new = deprecated[name]
        warnings.warn(f"{package}.{name} is deprecated: use {package}.{new}", DeprecationWarning, 3)
        name = new
    where = modules.get(name)
    if where is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module, _, attr = where.partition(":")
    # not cached in the package's globals(): the module's own name stays the one truth (a
    # test runner that drops and re-imports modules, as pytester does, never meets a stale
    # class)
    from importlib import import_module  # on first use: the `herdr` CLI never pays for it

    return getattr(import_module(f"{base or package}.{module}"), attr or name)


def lazy_getattr(
    package: str,
    modules: Mapping[str, str],
    *,
    base: str | None = None,
    deprecated: Mapping[str, str] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` over its table (see the module doc)."""

    def __getattr__(name: str) -> Any:
        return resolve(package, modules, name, base=base, deprecated=deprecated)

    return __getattr__
