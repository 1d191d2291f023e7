"""What a tool is: a name, a risk level, a schema for its arguments and a handler.

Kept apart from the registry so the tool definitions (:mod:`.low_level`) and the registry that
lists them do not import each other.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from orchestrator.client.sync import HerdrClient

#: R0 reads, R1 creates objects or types into a terminal, R2 runs commands or starts agents.
Risk = Literal["R0", "R1", "R2"]

#: The environment variable that forbids R2 calls without ``preview: true``.
PREVIEW_REQUIRED_ENV = "DSH_HERDR_PREVIEW_REQUIRED"


@dataclass
class ToolContext:
    """Everything a handler needs: the Herdr client and the environment it was built from.

    The client is created on first use (from ``env``: transport, socket path, ``herdr`` path),
    so listing tools or returning a preview never touches Herdr.
    """

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    client_factory: Callable[[Mapping[str, str]], HerdrClient] | None = None
    _client: HerdrClient | None = field(default=None, repr=False)
    #: what a tool family derives from this context and keeps across calls, by family
    #: (the agent tools keep their :class:`~orchestrator.agent_tools.context.AgentToolsContext`
    #: here, so a server's one context serves every call without rebuilding it)
    derived: dict[str, object] = field(default_factory=dict, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ToolContext:
        """A context configured from ``env`` (default: this process's environment)."""
        return cls(env=dict(os.environ if env is None else env))

    @classmethod
    def with_client(cls, client: HerdrClient, env: Mapping[str, str] | None = None) -> ToolContext:
        """A context around an existing client (tests, embedding)."""
        ctx = cls(env=dict(os.environ if env is None else env))
        ctx._client = client
        return ctx

    @property
    def client(self) -> HerdrClient:
        """The client, built on first use."""
        if self._client is None:
            if self.client_factory is not None:
                self._client = self.client_factory(self.env)
            else:
                from orchestrator.client.sync import HerdrClient

                self._client = HerdrClient.from_env(self.env)
        return self._client

    @property
    def preview_required(self) -> bool:
        """Whether R2 calls must be previews (``DSH_HERDR_PREVIEW_REQUIRED`` on).

        Unset or empty is off; the usual spellings are read by
        :func:`orchestrator.booleans.parse_bool`; any other value raises
        :class:`~orchestrator.booleans.BooleanError`, which the gates turn into a refusal
        (never a silent off).
        """
        from orchestrator.booleans import env_flag

        return env_flag(self.env, PREVIEW_REQUIRED_ENV)


Handler = Callable[[Mapping[str, Any], ToolContext], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    """One tool as a model sees it, plus the function that runs it.

    ``input_schema`` is a JSON Schema (draft 2020-12) object schema with
    ``additionalProperties: false``; ``run_tool`` validates arguments against it before the
    handler sees them, so handlers may index required fields directly.
    """

    name: str
    risk: Risk
    description: str
    input_schema: Mapping[str, Any]
    handler: Handler
