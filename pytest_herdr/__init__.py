"""pytest_herdr: pytest fixtures and checks for Herdr integrations, on the simulator or a real
Herdr (``--herdr-backend``).

The plugin (:mod:`pytest_herdr.plugin`, registered through the ``pytest11`` entry point)
provides the fixtures (``herdr_server``, ``herdr_client``, ``herdr_cli``, ``herdr_fake_agent``,
…; docs/pytest-plugin/fixtures.md), the ``herdr`` marker and the contract checks. The names a
test imports (``__all__``) are the handles the fixtures give (:class:`HerdrServer`,
:class:`Pane`, :class:`Workspace`, :class:`Agent`, :class:`FakeAgents`), the wire client
(:class:`WireClient`, :class:`AsyncWireClient`: ``orchestrator.client``'s, under the same
names), the waits (:func:`wait_until`, :class:`HerdrWait`, :class:`WaitTimeout`), the
contract checker (:class:`ContractChecker`), the event recorder (:class:`EventRecorder`),
the failure forensics (:class:`Forensics`, :class:`WireTail`) and the request log
(:class:`RequestLog`, :class:`LoggedRequest`, :class:`Release`). They resolve on first use.
``HerdrClient`` and ``AsyncHerdrClient``, this package's old names of the wire clients,
still resolve with a DeprecationWarning (``orchestrator.HerdrClient`` is the typed client, a
different class).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.client._lazy import lazy_getattr

if TYPE_CHECKING:
    from .agents import Agent, FakeAgents
    from .backends import HerdrServer
    from .client import AsyncWireClient, WireClient
    from .contracts import ContractChecker
    from .events import EventRecorder, RecordedEvent
    from .forensics import Forensics, WireTail
    from .handles import Pane, Workspace
    from .request_log import LoggedRequest, Release, RequestLog
    from .waits import HerdrWait, WaitTimeout, wait_until

_LAZY = {
    "Agent": "agents",
    "FakeAgents": "agents",
    "HerdrServer": "backends",
    "WireClient": "client",
    "AsyncWireClient": "client",
    "ContractChecker": "contracts",
    "EventRecorder": "events",
    "RecordedEvent": "events",
    "Forensics": "forensics",
    "WireTail": "forensics",
    "Pane": "handles",
    "Workspace": "handles",
    "LoggedRequest": "request_log",
    "Release": "request_log",
    "RequestLog": "request_log",
    "HerdrWait": "waits",
    "WaitTimeout": "waits",
    "wait_until": "waits",
}

#: old public names: they still resolve, with a DeprecationWarning
_DEPRECATED = {"HerdrClient": "WireClient", "AsyncHerdrClient": "AsyncWireClient"}

__all__ = [
    "Agent",
    "AsyncWireClient",
    "ContractChecker",
    "EventRecorder",
    "FakeAgents",
    "Forensics",
    "HerdrServer",
    "HerdrWait",
    "LoggedRequest",
    "Pane",
    "RecordedEvent",
    "Release",
    "RequestLog",
    "WaitTimeout",
    "WireClient",
    "WireTail",
    "Workspace",
    "wait_until",
]

__getattr__ = lazy_getattr(__name__, _LAZY, deprecated=_DEPRECATED)
