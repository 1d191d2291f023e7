"""pytest_herdr: pytest fixtures and checks for Herdr integrations, on the simulator or a real
Herdr (``--herdr-backend``).

The plugin (:mod:`pytest_herdr.plugin`, registered through the ``pytest11`` entry point)
provides the fixtures (``herdr_server``, ``herdr_client``, ``herdr_cli``, ``herdr_fake_agent``,
…; docs/pytest-plugin/fixtures.md), the ``herdr`` marker and the contract checks. The names a
test imports (``__all__``) are the handles the fixtures give (:class:`HerdrServer`,
:class:`Pane`, :class:`Workspace`, :class:`Agent`, :class:`FakeAgents`), the client
(:class:`HerdrClient`, :class:`AsyncHerdrClient`, the orchestrator's wire client), the
contract checker (:class:`ContractChecker`), the event recorder (:class:`EventRecorder`) and
the failure forensics (:class:`Forensics`, :class:`WireTail`) and the request log
(:class:`RequestLog`, :class:`LoggedRequest`, :class:`Release`). They resolve on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.client._lazy import lazy_getattr

if TYPE_CHECKING:
    from .agents import Agent, FakeAgents
    from .backends import HerdrServer
    from .client import AsyncHerdrClient, HerdrClient
    from .contracts import ContractChecker
    from .events import EventRecorder, RecordedEvent
    from .forensics import Forensics, WireTail
    from .handles import Pane, Workspace
    from .request_log import LoggedRequest, Release, RequestLog

_LAZY = {
    "Agent": "agents",
    "FakeAgents": "agents",
    "HerdrServer": "backends",
    "HerdrClient": "client",
    "AsyncHerdrClient": "client",
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
}

__all__ = [
    "Agent",
    "AsyncHerdrClient",
    "ContractChecker",
    "EventRecorder",
    "FakeAgents",
    "Forensics",
    "HerdrClient",
    "HerdrServer",
    "LoggedRequest",
    "Pane",
    "RecordedEvent",
    "Release",
    "RequestLog",
    "WireTail",
    "Workspace",
]

__getattr__ = lazy_getattr(__name__, _LAZY)
