"""Model aliases and per-kind capabilities: what ``model`` / ``thinking`` become on a command line.

Why a table and not free text: a model name travels into an agent's argv, and a typo there
costs a whole agent start before it fails (or, worse, silently picks another model). So a
``model`` is either an alias of the kind's table or an explicit ``provider/model``; anything
else is refused before any side effect, with an error naming the field. Why capabilities:
kinds differ in which flags they accept (``agy`` takes no ``--model``), and an unsupported
field is refused rather than dropped, so the caller never believes a setting applied when it
did not. The tables are documented in docs/orchestrator/model-aliases.md; configuration
(``[aliases.<kind>]``) adds or replaces aliases and the per-kind ``default``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from orchestrator.client.protocol import AGENT_LABELS

THINKING_LEVELS = ("low", "medium", "high", "xhigh", "max")
#: The name, inside a kind's alias table, of the alias used when ``model`` is omitted.
DEFAULT_KEY = "default"
_PROVIDER_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:@+-]*")
_ALIAS = re.compile(r"[a-z][a-z0-9._-]{0,31}")


class AliasError(ValueError):
    """A ``model`` / ``thinking`` / kind request that cannot be honoured; ``field`` names it."""

    def __init__(self, code: str, field: str, message: str) -> None:
        self.code = code
        self.field = field
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class Capabilities:
    """How one kind takes first-class settings on its command line (None: not accepted).

    ``native_provider``: kinds whose CLI takes a bare model id (claude, codex, gemini) get
    ``provider/model`` with that provider stripped; another provider is refused. None means
    the kind takes ``provider/model`` verbatim (pi, opencode).
    """

    model_flag: str | None
    thinking_flag: str | None = None
    system_prompt_flag: str | None = None
    native_provider: str | None = None
    default_model: str | None = None


#: Built-in capabilities per Herdr agent kind (the canonical kinds of Herdr 0.9; the others
#: accept only ``agent_args``).
KIND_CAPABILITIES: dict[str, Capabilities] = {
    "pi": Capabilities("--model", "--thinking", "--append-system-prompt", default_model="flash"),
    "omp": Capabilities("--model", "--thinking", "--append-system-prompt"),
    "claude": Capabilities(
        "--model",
        None,
        "--append-system-prompt",
        native_provider="anthropic",
        default_model="sonnet",
    ),
    # No built-in default for codex and gemini: their own default is what their current
    # release accepts, and their model names change faster than we can check them offline.
    "codex": Capabilities("--model", native_provider="openai"),
    "gemini": Capabilities("--model", native_provider="google"),
    "opencode": Capabilities("--model"),
    "cursor": Capabilities("--model", native_provider="cursor"),
    "agy": Capabilities(None),
}
#: Herdr's canonical agent kinds (``agent start --kind``), for error messages and doctor: the
#: one table of them, :mod:`orchestrator.client.protocol`.
HERDR_KINDS: tuple[str, ...] = AGENT_LABELS

#: Built-in aliases per kind: alias -> provider/model. pi's targets are ids of pi 1.6's own
#: catalog (``pi --list-models``): ``deepseek/deepseek-v4-flash`` is not one (pi 1.6 answers
#: "ambiguous across providers": only openrouter and vercel-ai-gateway list that id), the
#: deepseek provider's flash model is ``deepseek-flash``. ``herdr_doctor`` checks the default.
BUILTIN_ALIASES: dict[str, dict[str, str]] = {
    "pi": {
        "flash": "deepseek/deepseek-flash",
        "pro": "deepseek/deepseek-v4-pro",
        "sonnet": "anthropic/claude-sonnet-4-5",
        "opus": "anthropic/claude-opus-4-5",
    },
    "omp": {
        "flash": "deepseek/deepseek-flash",
        "pro": "deepseek/deepseek-v4-pro",
    },
    "claude": {
        "sonnet": "anthropic/claude-sonnet-4-5",
        "opus": "anthropic/claude-opus-4-5",
        "haiku": "anthropic/claude-haiku-4-5",
    },
    "codex": {
        "codex": "openai/gpt-5-codex",
        "gpt-5": "openai/gpt-5",
    },
    "gemini": {
        "gemini-pro": "google/gemini-2.5-pro",
        "gemini-flash": "google/gemini-2.5-flash",
    },
}


def _kind_description() -> str:
    takes_model = [k for k, c in KIND_CAPABILITIES.items() if c.model_flag is not None]
    takes_thinking = [k for k, c in KIND_CAPABILITIES.items() if c.thinking_flag is not None]
    return (
        f"Which coding agent to start: one of {', '.join(HERDR_KINDS)} (default pi). "
        f"model is accepted by {', '.join(takes_model)}; thinking only by "
        f"{' and '.join(takes_thinking)}."
    )


def _model_description() -> str:
    parts: list[str] = []
    for kind, table in BUILTIN_ALIASES.items():
        default = KIND_CAPABILITIES[kind].default_model
        names = [
            f"{name}{'=' + target if kind == 'pi' else ''}{' (default)' if name == default else ''}"
            for name, target in table.items()
        ]
        parts.append(f"{kind}: {', '.join(names)}")
    return (
        "An alias or provider/model (e.g. openrouter/qwen/qwen3-coder). Aliases per kind: "
        + "; ".join(parts)
        + ". Omitted: the kind's default alias, or the agent's "
        "own default. claude, codex, gemini and cursor run their own provider's models only."
    )


#: Parameter descriptions of ``kind``, ``model`` and ``thinking`` (herdr_spawn_agent), built
#: from the tables above so they cannot drift from what :func:`resolve` accepts.
KIND_DESCRIPTION = _kind_description()
MODEL_DESCRIPTION = _model_description()
THINKING_DESCRIPTION = (
    "Reasoning effort: low, medium, high, xhigh or max. Only kinds pi and omp take it; "
    "omitted: the model's own default."
)


@dataclass(frozen=True)
class ResolvedModel:
    """A resolved request: what was asked, what it means, and the argv to append."""

    kind: str
    requested: str | None
    alias: str | None
    model: str | None
    thinking: str | None
    argv: tuple[str, ...]


def alias_table(
    kind: str, overrides: Mapping[str, Mapping[str, str]] | None = None
) -> dict[str, str]:
    """The aliases of ``kind``: built-in ones, then configuration (``default`` included)."""
    table = dict(BUILTIN_ALIASES.get(kind, {}))
    caps = KIND_CAPABILITIES.get(kind)
    if caps is not None and caps.default_model is not None:
        table.setdefault(DEFAULT_KEY, caps.default_model)
    table.update((overrides or {}).get(kind, {}))
    return table


def validate_aliases(overrides: Mapping[str, Mapping[str, str]]) -> None:
    """Refuse configuration aliases that could never resolve (checked when config loads)."""
    for kind, table in overrides.items():
        if kind not in HERDR_KINDS:
            raise AliasError("CONFIG_INVALID", f"aliases.{kind}", "not a Herdr agent kind")
        caps = KIND_CAPABILITIES.get(kind)
        if caps is None or caps.model_flag is None:
            raise AliasError(
                "CONFIG_INVALID", f"aliases.{kind}", f"kind {kind} does not accept a model"
            )
        for name, target in table.items():
            if _ALIAS.fullmatch(name) is None:
                raise AliasError(
                    "CONFIG_INVALID",
                    f"aliases.{kind}.{name}",
                    "alias names match [a-z][a-z0-9._-]*",
                )
            if name != DEFAULT_KEY and _PROVIDER_MODEL.fullmatch(target) is None:
                raise AliasError(
                    "CONFIG_INVALID", f"aliases.{kind}.{name}", f"{target!r} is not provider/model"
                )


def _lookup(kind: str, name: str, table: Mapping[str, str]) -> tuple[str | None, str]:
    """(alias, provider/model) for ``name``; follows ``default`` one step to an alias."""
    if name in table and name != DEFAULT_KEY:
        return name, table[name]
    if _PROVIDER_MODEL.fullmatch(name):
        return None, name
    known = ", ".join(sorted(k for k in table if k != DEFAULT_KEY)) or "none"
    raise AliasError(
        "MODEL_UNKNOWN",
        "model",
        f"{name!r} is neither an alias of kind {kind} (known: {known}) nor provider/model",
    )


def resolve(
    kind: str,
    model: str | None = None,
    thinking: str | None = None,
    *,
    overrides: Mapping[str, Mapping[str, str]] | None = None,
) -> ResolvedModel:
    """Resolve ``model`` / ``thinking`` for ``kind`` into the flags its CLI takes.

    ``model=None`` uses the kind's ``default`` (if any; otherwise the agent's own default).
    Raises :class:`AliasError` naming the field for an unknown alias, a malformed model, a
    thinking level outside ``low|medium|high|xhigh|max``, or a field the kind does not accept.
    """
    if kind not in HERDR_KINDS:
        raise AliasError(
            "KIND_UNKNOWN", "kind", f"{kind!r} is not a Herdr agent kind ({', '.join(HERDR_KINDS)})"
        )
    caps = KIND_CAPABILITIES.get(kind, Capabilities(None))
    table = alias_table(kind, overrides)
    argv: list[str] = []
    alias: str | None = None
    resolved: str | None = None
    if model is not None:
        if caps.model_flag is None:
            raise AliasError(
                "FIELD_UNSUPPORTED",
                "model",
                f"kind {kind} does not accept a model (pass its own flags in agent_args)",
            )
        if not model.strip():
            raise AliasError("MODEL_UNKNOWN", "model", "must not be empty")
        alias, resolved = _lookup(kind, model.strip(), table)
    elif caps.model_flag is not None and DEFAULT_KEY in table:
        default = table[DEFAULT_KEY]
        alias, resolved = _lookup(kind, default, table)
    if resolved is not None and caps.model_flag is not None:
        value = resolved
        if caps.native_provider is not None:
            provider, _, bare = resolved.partition("/")
            if provider != caps.native_provider:
                raise AliasError(
                    "MODEL_UNSUPPORTED",
                    "model",
                    f"kind {kind} runs {caps.native_provider} models only, not {resolved!r}",
                )
            value = bare
        argv += [caps.model_flag, value]
    if thinking is not None:
        if thinking not in THINKING_LEVELS:
            raise AliasError(
                "THINKING_UNKNOWN",
                "thinking",
                f"{thinking!r} is not a thinking level ({', '.join(THINKING_LEVELS)})",
            )
        if caps.thinking_flag is None:
            raise AliasError(
                "FIELD_UNSUPPORTED",
                "thinking",
                f"kind {kind} does not accept a thinking level (pass its own flags in agent_args)",
            )
        argv += [caps.thinking_flag, thinking]
    return ResolvedModel(kind, model, alias, resolved, thinking, tuple(argv))


def system_prompt_argv(kind: str, text: str) -> tuple[str, ...]:
    """The flags carrying an appended system prompt, or an error when the kind has none.

    Herdr refuses newlines in ``agent start`` arguments, so ``text`` must be one line (a long
    envelope goes in a file the prompt points at instead).
    """
    caps = KIND_CAPABILITIES.get(kind, Capabilities(None))
    if caps.system_prompt_flag is None:
        raise AliasError(
            "FIELD_UNSUPPORTED", "system_prompt", f"kind {kind} does not accept a system prompt"
        )
    if "\n" in text or "\r" in text:
        raise AliasError(
            "FIELD_INVALID", "system_prompt", "must be one line (Herdr refuses newlines)"
        )
    return (caps.system_prompt_flag, text)


def alias_rows(
    overrides: Mapping[str, Mapping[str, str]] | None = None,
) -> list[dict[str, str | bool]]:
    """Every alias as ``{kind, alias, model, default}`` rows (``herdr_doctor``'s ``aliases``)."""
    rows: list[dict[str, str | bool]] = []
    kinds = sorted(set(BUILTIN_ALIASES) | set(overrides or {}) | set(KIND_CAPABILITIES))
    for kind in kinds:
        table = alias_table(kind, overrides)
        default = table.get(DEFAULT_KEY)
        rows.extend(
            {"kind": kind, "alias": name, "model": table[name], "default": name == default}
            for name in sorted(k for k in table if k != DEFAULT_KEY)
        )
    return rows
