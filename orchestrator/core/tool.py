"""What a tool is: a name, a risk level, a schema, a handler, and its declaration.

Kept below the three tool families so each family defines its tools here and the runner
(:mod:`orchestrator.pipeline`) reads them, with no family importing another.

The declaration (:class:`Traits`) says, once per tool, what the runner's gates need to know:
its family (which renderer answers a refusal), what the call does (reads, creates a pane,
runs a command, starts, prompts or ends an agent) and which of its fields name a working
directory, an agent kind, an agent name or label, an addressed agent, a machine, a preview
request or the target it types into. The runner applies every gate from this, so a handler
never checks one and a new tool cannot skip one. A tool built without a declaration (a
test's, an embedder's) gets one inferred from its schema's parameter names
(:meth:`Traits.inferred`), so the same rules still bind it.
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

#: Which contract a tool answers in: the low-level tools (``{ok, command, exitCode, data}``),
#: the agent tools (AgentResult) or the managed-agent tools (``{ok, action, error}``).
Family = Literal["low_level", "agent", "managed"]
#: What a call does, as the kill switch and the preview gate see it: ``read`` (observes),
#: ``create`` (a workspace, tab or pane), ``type`` (text without a line break), ``run`` (a
#: command, or typed text that submits a line), ``start``/``prompt``/``end`` an agent.
Effect = Literal["read", "create", "type", "run", "start", "prompt", "end"]
#: The effects the kill switch (``enabled = false``) refuses: nothing new starts or runs.
#: ``end`` stays allowed so the switch never keeps a user from stopping a runaway agent.
STARTING_EFFECTS: frozenset[str] = frozenset({"create", "run", "start", "prompt"})
#: words in a tool's name that mean it ends or removes something (what a tool without a
#: declaration is taken to do, and its MCP hints)
ENDING_WORDS: tuple[str, ...] = ("close", "interrupt", "kill", "remove", "delete", "stop")
#: Resolves, from a call's validated arguments, what the child of a launch will get (its
#: working directory, its label); None when it cannot be told before the handler runs.
Resolver = Callable[[Mapping[str, Any], "ToolContext"], "str | None"]


@dataclass(frozen=True)
class Traits:
    """A tool's declaration for the runner's gates (see the module docstring).

    Field names are the tool's own parameters; ``None``/empty means the tool has none.
    """

    family: Family = "low_level"
    effect: Effect = "read"
    #: the effect for given arguments when it depends on them (a text with a line break runs)
    effect_of: Callable[[Mapping[str, Any]], Effect] | None = None
    #: a directory a new shell or agent starts in (checked against ``allowCwd``, replaced by
    #: the resolved path that was checked)
    cwd: str | None = None
    #: a pane whose directory a new pane inherits when ``cwd`` is absent (read and checked)
    inherits_cwd_of: str | None = None
    #: an existing pane the call types or starts in: its directories are checked
    pane: str | None = None
    #: an existing agent (by name or pane) the call types into: its pane's directories are
    #: checked
    agent_pane: str | None = None
    #: the working directory the child of a launch gets, when no field names it
    launch_cwd: Resolver | None = None
    #: the field naming the agent kind, or the one kind the tool starts
    kind: str | None = None
    fixed_kind: str | None = None
    #: the field naming a new agent's name or label (under ``agentNames`` a start without
    #: one is refused: a generated name cannot be checked in advance)
    name: str | None = None
    #: the label a launch inherits when no field names it (continuing a saved session)
    launch_name: Resolver | None = None
    #: fields addressing an existing agent (by name; under ``agentNames`` nothing else)
    targets: tuple[str, ...] = ()
    #: the field naming the machine a call acts on (a refusal names it back)
    machine: str | None = None
    #: the field asking for a preview (``preview: true`` runs nothing)
    preview: str | None = None
    #: fields naming the target the call types into (one writer at a time), first given wins
    lock: tuple[str, ...] = ()
    #: native agent arguments a model must not choose (``allowAgentArgs``)
    agent_args: tuple[str, ...] = ()
    #: the tool that ends what this one starts: a policy that refuses it refuses the start
    #: too (nothing starts that could not be closed)
    closed_by: str | None = None

    def effect_for(self, arguments: Mapping[str, Any]) -> Effect:
        """What a call with ``arguments`` does."""
        return self.effect_of(arguments) if self.effect_of is not None else self.effect

    @property
    def starts_agents(self) -> bool:
        """Whether the tool starts agents (so ``agentKinds`` binds it)."""
        return self.kind is not None or self.fixed_kind is not None

    @classmethod
    def inferred(cls, name: str, risk: Risk, schema: Mapping[str, Any]) -> Traits:
        """The declaration a tool without one gets from its risk, name and schema's
        parameter names: a ``kind`` naming agent kinds starts agents (with its ``name``),
        ``agent``/``target`` address one, ``cwd`` is a directory, ``preview`` a preview; an
        R1 tool whose name says it ends something (:data:`ENDING_WORDS`) ends, other R1
        tools create or type, R2 tools run; a tool that is not R0 and whose name says it
        types locks its first ``agent``/``target``/``pane``."""
        from orchestrator.client.protocol import AGENT_LABELS

        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        kind = props.get("kind")
        starts = isinstance(kind, Mapping) and (
            kind.get("enum") is None or set(kind.get("enum") or ()) <= set(AGENT_LABELS)
        )
        types = risk != "R0" and any(
            word in name for word in ("prompt", "send_text", "send_keys", "message", "pane_run")
        )
        effect: Effect = "read"
        if risk == "R2":
            effect = "start" if starts else "run"
        elif risk == "R1" and any(word in name.lower().split("_") for word in ENDING_WORDS):
            effect = "end"
        elif risk == "R1":
            effect = "type" if types else "create"
        args = ("agent_args", "args") if starts else ("agent_args",)
        return cls(
            effect=effect,
            cwd="cwd" if "cwd" in props and risk != "R0" else None,
            kind="kind" if starts else None,
            name="name" if starts and "name" in props else None,
            targets=tuple(p for p in ("agent", "target") if p in props),
            machine="machine" if "machine" in props else None,
            preview="preview" if "preview" in props else None,
            lock=tuple(p for p in ("agent", "target", "pane") if p in props) if types else (),
            agent_args=tuple(p for p in args if p in props),
        )


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
    #: the declaration the runner's gates read (inferred from the schema when not given)
    traits: Traits | None = None

    def __post_init__(self) -> None:
        if self.traits is None:
            inferred = Traits.inferred(self.name, self.risk, self.input_schema)
            object.__setattr__(self, "traits", inferred)

    @property
    def declared(self) -> Traits:
        """The tool's declaration (always set after construction)."""
        assert self.traits is not None
        return self.traits
