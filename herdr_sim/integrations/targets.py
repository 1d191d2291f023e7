"""The 17 integration targets of protocol 22 and where each agent keeps its integration.

Facts from Herdr's ``src/integration/`` (``env.rs`` for the directories and the variables
that move them, ``registry.rs`` for labels, commands and the file whose version marker tells
the state, ``mod.rs`` for install names and versions). Everything resolves against an
environment mapping, never this process's own: the simulator passes its panes' environment
(HOME the fakes' sandbox, herdr_sim/services/agent_home.py), the ``herdr integration`` CLI its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "INTEGRATION_VERSION_MARKER",
    "TARGETS",
    "HomeNotSet",
    "Target",
    "claude_dir",
    "codex_dir",
    "home_dir",
    "opencode_dir",
    "pi_extension_dir",
    "target",
]

Env = Mapping[str, str]

#: the line every integration file carries (after ``#`` or ``//``): ``<marker><version>``
INTEGRATION_VERSION_MARKER = "HERDR_INTEGRATION_VERSION="
#: the hook scripts' name on Unix (Herdr's ``*_HOOK_INSTALL_NAME``)
HOOK_SCRIPT = "herdr-agent-state.sh"


class HomeNotSet(OSError):
    """HOME is unset or empty (Herdr's ``home_dir`` error)."""

    def __init__(self) -> None:
        super().__init__("home directory is not set; cannot locate home directory")


def home_dir(env: Env) -> Path:
    """``$HOME``; an unset or empty HOME is an error, as in Herdr."""
    home = env.get("HOME")
    if not home:
        raise HomeNotSet
    return Path(home)


def _expand_tilde(value: str, env: Env) -> Path:
    if value == "~":
        return home_dir(env)
    for prefix in ("~/", "~"):
        if value.startswith(prefix):
            return home_dir(env) / value[len(prefix) :]
    return Path(value)


def _env_or_home(env: Env, variable: str, *segments: str) -> Path:
    """``$variable`` (``~`` expanded) when set and not empty, else HOME/segments."""
    value = env.get(variable)
    if value:
        return _expand_tilde(value, env)
    return home_dir(env).joinpath(*segments)


def pi_extension_dir(env: Env) -> Path:
    """pi's extensions: ``$PI_CODING_AGENT_DIR/extensions``, else ``~/.pi/agent/extensions``."""
    return _env_or_home(env, "PI_CODING_AGENT_DIR", ".pi", "agent") / "extensions"


def _omp_extension_dir(env: Env) -> Path:
    configured = env.get("PI_CODING_AGENT_DIR")
    if configured:
        return _expand_tilde(configured, env) / "extensions"
    return home_dir(env) / (env.get("PI_CONFIG_DIR") or ".omp") / "agent" / "extensions"


def claude_dir(env: Env) -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    return _env_or_home(env, "CLAUDE_CONFIG_DIR", ".claude")


def codex_dir(env: Env) -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    return _env_or_home(env, "CODEX_HOME", ".codex")


def opencode_dir(env: Env) -> Path:
    """``~/.config/opencode`` (Herdr reads no variable for it)."""
    return home_dir(env) / ".config" / "opencode"


def _devin_dir(env: Env) -> Path:
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return _expand_tilde(xdg, env) / "devin"
    return home_dir(env) / ".config" / "devin"


def _grok_dir(env: Env) -> Path:
    configured = env.get("GROK_CONFIG_DIR")
    if configured:
        return _expand_tilde(configured, env)
    return _env_or_home(env, "GROK_HOME", ".grok")


@dataclass(frozen=True)
class Target:
    """One integration target: its wire name, label, commands and status file."""

    #: the protocol's ``IntegrationTarget`` value
    name: str
    #: what users type and see (``antigravity-cli`` for ``antigravity_cli``)
    label: str
    #: executables whose presence on PATH makes the target ``available``; the first is the
    #: ``command`` of ``integration.list``
    commands: tuple[str, ...]
    #: the integration version Herdr 0.9.2 installs (older markers are ``outdated``)
    version: int
    #: the file whose version marker tells whether the integration is installed
    status_path: Callable[[Env], Path]

    @property
    def command(self) -> str:
        """The agent's command, as ``integration.list`` reports it."""
        return self.commands[0]


def _in(directory: Callable[[Env], Path], *parts: str) -> Callable[[Env], Path]:
    return lambda env: directory(env).joinpath(*parts)


def _home(*parts: str) -> Callable[[Env], Path]:
    return lambda env: home_dir(env).joinpath(*parts)


def _var(variable: str, *segments: str) -> Callable[[Env], Path]:
    return lambda env: _env_or_home(env, variable, *segments)


#: every target in the protocol's order (``IntegrationTarget``)
TARGETS: tuple[Target, ...] = (
    Target("pi", "pi", ("pi",), 8, _in(pi_extension_dir, "herdr-agent-state.ts")),
    Target("omp", "omp", ("omp",), 8, _in(_omp_extension_dir, "herdr-omp-agent-state.ts")),
    Target("claude", "claude", ("claude",), 8, _in(claude_dir, "hooks", HOOK_SCRIPT)),
    Target("codex", "codex", ("codex",), 8, _in(codex_dir, HOOK_SCRIPT)),
    Target(
        "copilot",
        "copilot",
        ("copilot",),
        3,
        _in(_var("COPILOT_HOME", ".copilot"), "hooks", HOOK_SCRIPT),
    ),
    Target("devin", "devin", ("devin",), 2, _in(_devin_dir, HOOK_SCRIPT)),
    Target("droid", "droid", ("droid",), 3, _home(".factory", "hooks", HOOK_SCRIPT)),
    Target(
        "kimi",
        "kimi",
        ("kimi",),
        7,
        _in(_var("KIMI_CODE_HOME", ".kimi-code"), "hooks", HOOK_SCRIPT),
    ),
    Target(
        "opencode",
        "opencode",
        ("opencode",),
        10,
        _in(opencode_dir, "plugins", "herdr-agent-state.js"),
    ),
    Target(
        "kilo",
        "kilo",
        ("kilo", "kilo-code"),
        4,
        _home(".config", "kilo", "plugin", "herdr-agent-state.js"),
    ),
    Target(
        "hermes",
        "hermes",
        ("hermes",),
        5,
        _in(_var("HERMES_HOME", ".hermes"), "plugins", "herdr-agent-state", "__init__.py"),
    ),
    Target(
        "qodercli",
        "qodercli",
        ("qodercli",),
        3,
        _in(_var("QODER_CONFIG_DIR", ".qoder"), "hooks", HOOK_SCRIPT),
    ),
    Target(
        "qwen",
        "qwen",
        ("qwen",),
        1,
        _in(_var("QWEN_HOME", ".qwen"), "hooks", "herdr-agent-session.sh"),
    ),
    Target(
        "cursor",
        "cursor",
        ("cursor-agent",),
        1,
        _in(_var("CURSOR_CONFIG_DIR", ".cursor"), HOOK_SCRIPT),
    ),
    Target(
        "mastracode", "mastracode", ("mastracode",), 2, _home(".mastracode", "hooks", HOOK_SCRIPT)
    ),
    Target(
        "antigravity_cli",
        "antigravity-cli",
        ("agy",),
        2,
        _in(_var("ANTIGRAVITY_CLI_CONFIG_DIR", ".gemini", "config"), "hooks", HOOK_SCRIPT),
    ),
    Target("grok", "grok", ("grok",), 1, _in(_grok_dir, "hooks", HOOK_SCRIPT)),
)

_BY_NAME = {t.name: t for t in TARGETS}


def target(name: str) -> Target:
    """The target a protocol ``IntegrationTarget`` value names."""
    return _BY_NAME[name]
