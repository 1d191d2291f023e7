"""Configuration of the agent tools: one TOML file, environment overrides, strict validation.

Why strict: a misspelt key (``allowCWD``) silently ignored would turn a safety gate off, so
every unknown key, in the file or in a ``HERDR_ORCHESTRATOR_*`` variable, is an error that
names it. Why resolve symlinks in :func:`check_cwd`: ``allowCwd`` is a containment rule, and a
link inside an allowed root pointing outside it must not smuggle an agent out of the root.

Precedence, lowest first: built-in defaults, the file (``HERDR_ORCHESTRATOR_CONFIG`` or
``$XDG_CONFIG_HOME/herdr-orchestrator/config.toml``; a missing default file is fine, a missing
named file is an error), then one environment variable per key. The format is documented in
docs/orchestrator/configuration.md.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from orchestrator.booleans import BooleanError, parse_bool

CONFIG_ENV = "HERDR_ORCHESTRATOR_CONFIG"
ENV_PREFIX = "HERDR_ORCHESTRATOR_"
#: ``machine`` values meaning "this machine" (Herdr's default target, no ``--machine``).
LOCAL_MACHINES = ("", "local")
#: the name a task record and a result give the local machine
LOCAL_MACHINE = "local"

Transport = Literal["auto", "socket", "cli"]
TRANSPORTS: tuple[Transport, ...] = ("auto", "socket", "cli")

DEFAULT_MAX_CONCURRENT = 4
DEFAULT_QUEUE_TIMEOUT_MS = 120_000
DEFAULT_MAX_RESULT_CHARS = 40_000
DEFAULT_MAX_DIFF_BYTES = 512 * 1024
DEFAULT_AUDIT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_TARGET_LOCK_TIMEOUT_MS = 600_000
#: what a glob (``disableTools``, ``agentKinds``, ``agentNames``, ``passEnv``) may hold:
#: name characters and fnmatch's ``*``, ``?`` and ``[…]`` (``!`` negates a class)
_GLOB_CHARS = re.compile(r"[A-Za-z0-9_.:@*?\[\]!-]+")


class ConfigError(ValueError):
    """A configuration that cannot be used; ``key`` names the offending key."""

    code = "CONFIG_INVALID"

    def __init__(self, key: str, message: str, *, source: str = "") -> None:
        self.key = key
        self.detail = message
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{key}: {message}")


class GateError(ValueError):
    """A request refused by a configuration gate (cwd, machine, enabled)."""

    def __init__(self, code: str, message: str, *, field: str = "") -> None:
        self.code = code
        self.field = field
        super().__init__(message)


@dataclass(frozen=True)
class Config:
    """The effective configuration (see the module docstring for where values come from)."""

    enabled: bool = True
    allow_cwd: tuple[Path, ...] = ()
    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    queue_timeout_ms: int = DEFAULT_QUEUE_TIMEOUT_MS
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    max_diff_bytes: int = DEFAULT_MAX_DIFF_BYTES
    transport: Transport = "auto"
    machines: tuple[str, ...] = ()
    machine_targets: Mapping[str, str] = field(default_factory=dict)
    shared_filesystem: tuple[str, ...] = ()
    #: the OpenSSH client configuration ``machineTargets`` are reached with (``ssh -F``)
    ssh_config: Path | None = None
    #: per SSH machine, the absolute directory there that holds its tasks' artifact dirs
    machine_artifact_dirs: Mapping[str, str] = field(default_factory=dict)
    state_dir: Path = Path("~/.local/state/herdr-orchestrator")
    artifact_dir: Path = Path("~/.local/state/herdr-orchestrator/artifacts")
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: The ``[managed]`` table as read; :mod:`orchestrator.managed.settings` validates it
    #: (with its ``HERDR_ORCHESTRATOR_MANAGED_*`` variables) into ``ManagedSettings``.
    managed: Mapping[str, Any] = field(default_factory=dict)
    # -- the policy (read by :mod:`orchestrator.core.policy`, the one place that decides)
    read_only: bool = False
    disable_tools: tuple[str, ...] = ()
    #: allowlists (globs); None: every kind / name
    agent_kinds: tuple[str, ...] | None = None
    agent_names: tuple[str, ...] | None = None
    #: None: the caller's default (on for the CLI, off for MCP)
    allow_agent_args: bool | None = None
    #: names (globs) of secret-looking variables passed on to child processes anyway
    pass_env: tuple[str, ...] = ()
    audit_max_bytes: int = DEFAULT_AUDIT_MAX_BYTES
    target_lock_timeout_ms: int = DEFAULT_TARGET_LOCK_TIMEOUT_MS
    #: Where the values came from: the file read (or None) and the variables applied.
    file: Path | None = None
    env_keys: tuple[str, ...] = ()

    @property
    def tasks_dir(self) -> Path:
        """One JSON record per task (see :mod:`orchestrator.agent_tools.records`)."""
        return self.state_dir / "tasks"

    @property
    def slots_dir(self) -> Path:
        """Slot and queue files of the concurrency cap (:mod:`.slots`)."""
        return self.state_dir / "slots"


# key in the file -> (attribute, env suffix, parser of a TOML value, parser of an env string)
_Parser = Callable[[str, Any, Path], Any]


def _bool(key: str, value: Any, base: Path) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, f"expected true or false, got {value!r}")
    return value


def _int_in(low: int, high: int) -> _Parser:
    def parse(key: str, value: Any, base: Path) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(key, f"expected an integer, got {value!r}")
        if not low <= value <= high:
            raise ConfigError(key, f"expected {low}..{high}, got {value}")
        return value

    return parse


def _path(key: str, value: Any, base: Path) -> Path:
    if not isinstance(value, str) or not value:
        raise ConfigError(key, f"expected a path, got {value!r}")
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def _paths(key: str, value: Any, base: Path) -> tuple[Path, ...]:
    if not isinstance(value, list):
        raise ConfigError(key, f"expected a list of paths, got {value!r}")
    if not value:
        # An empty list set on purpose (``allowCwd = []``, ``HERDR_ORCHESTRATOR_ALLOW_CWD=``)
        # reads like "nothing allowed", while no setting at all means "everywhere": refuse it
        # rather than guess, so a gate meant to be on is never silently off.
        raise ConfigError(
            key,
            "an empty list is refused: list the allowed directories, or remove the setting "
            "to allow every directory",
        )
    return tuple(_path(f"{key}[{i}]", item, base) for i, item in enumerate(value))


def _labels(key: str, value: Any, base: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(key, f"expected a list of machine labels, got {value!r}")
    for i, label in enumerate(value):
        problem = label_problem(label)
        if problem is not None:
            raise ConfigError(f"{key}[{i}]", f"bad machine label {label!r}: {problem}")
    return tuple(value)


def label_problem(label: str) -> str | None:
    """Why ``label`` cannot name a saved machine in ``herdr --machine <label>``, or None
    (Herdr's own rules: at most 128 bytes, no control characters; not starting with ``-``,
    which Herdr refuses, and which must never read as an option)."""
    if label != label.strip() or not label:
        return "a label has no leading or trailing spaces"
    if label.startswith("-"):
        return "a label cannot start with '-'"
    if len(label.encode("utf-8")) > 128 or any(ord(c) < 32 or ord(c) == 127 for c in label):
        return "a label is at most 128 bytes, without control characters"
    return None


def glob_problem(glob: str) -> str | None:
    """Why ``glob`` is not a usable name glob, or None."""
    if not _GLOB_CHARS.fullmatch(glob):
        return "a glob holds letters, digits, _ . : @ - and the wildcards * ? [...]"
    depth = 0
    for char in glob:
        if char == "[":
            if depth:
                return "a [ inside [...]"
            depth = 1
        elif char == "]":
            if not depth:
                return "a ] without its ["
            depth = 0
    if depth:
        return "a [ without its ]"
    if "[]" in glob or "[!]" in glob:
        return "an empty [...] class"
    return None


def _globs(key: str, value: Any, base: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(key, f"expected a list of name globs, got {value!r}")
    for i, glob in enumerate(value):
        problem = glob_problem(glob)
        if problem is not None:
            raise ConfigError(f"{key}[{i}]", f"bad glob {glob!r}: {problem}")
    return tuple(value)


def _allowlist(key: str, value: Any, base: Path) -> tuple[str, ...]:
    if isinstance(value, list) and not value:
        # like allowCwd: an empty allowlist reads as "nothing", no setting as "everything"
        raise ConfigError(
            key, "an empty list is refused: list the allowed globs, or remove the setting"
        )
    return _globs(key, value, base)


def _transport(key: str, value: Any, base: Path) -> str:
    if value not in TRANSPORTS:
        raise ConfigError(key, f"expected one of auto, socket, cli, got {value!r}")
    return str(value)


def check_ssh_target(target: str) -> str | None:
    """Why ``target`` cannot be handed to ``ssh`` as a destination, or None."""
    if not target or target != target.strip():
        return "it is empty or has surrounding spaces"
    if target.startswith("-"):
        return "it starts with '-' (ssh would take it for an option)"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in target):
        return "it contains whitespace or control characters"
    return None


def _targets(key: str, value: Any, base: Path) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) and v for v in value.values()):
        raise ConfigError(key, f'expected a table of label = "ssh target", got {value!r}')
    for label, target in value.items():
        problem = check_ssh_target(str(target))
        if problem:
            raise ConfigError(
                f"{key}.{label}",
                f"bad SSH target {target!r}: {problem}; write it as [user@]host or a Host "
                "alias of sshConfig",
            )
    return {str(k): str(v) for k, v in value.items()}


def _remote_dirs(key: str, value: Any, base: Path) -> dict[str, str]:
    """Directories on remote machines: absolute POSIX paths (there is no directory of ours
    on the machine to resolve a relative one against), no ``..``, no control characters."""
    if not isinstance(value, dict) or not all(isinstance(v, str) and v for v in value.values()):
        raise ConfigError(key, f'expected a table of label = "/absolute/path", got {value!r}')
    for label, path in value.items():
        text = str(path)
        if (
            not text.startswith("/")
            or ".." in text.split("/")
            or any(ord(ch) < 32 or ord(ch) == 127 for ch in text)
        ):
            raise ConfigError(
                f"{key}.{label}",
                f"bad directory {text!r}: write an absolute path on that machine, without "
                "'..' or control characters (e.g. /home/me/.local/state/herdr-agents)",
            )
    return {str(k): str(v).rstrip("/") or "/" for k, v in value.items()}


def _aliases(key: str, value: Any, base: Path) -> dict[str, dict[str, str]]:
    if not isinstance(value, dict):
        raise ConfigError(key, f"expected a table of kinds, got {value!r}")
    out: dict[str, dict[str, str]] = {}
    for kind, table in value.items():
        if not isinstance(table, dict) or not all(isinstance(v, str) and v for v in table.values()):
            raise ConfigError(
                f"{key}.{kind}", f'expected a table of alias = "model", got {table!r}'
            )
        out[str(kind)] = {str(k): str(v) for k, v in table.items()}
    from orchestrator.core.aliases import AliasError, validate_aliases

    try:
        validate_aliases(out)
    except AliasError as exc:
        raise ConfigError(exc.field, str(exc).split(": ", 1)[1]) from None
    return out


def _table(key: str, value: Any, base: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(key, f"expected a table, got {value!r}")
    return dict(value)


_KEYS: dict[str, tuple[str, _Parser]] = {
    "enabled": ("enabled", _bool),
    "allowCwd": ("allow_cwd", _paths),
    "maxConcurrent": ("max_concurrent", _int_in(1, 256)),
    "queueTimeoutMs": ("queue_timeout_ms", _int_in(0, 24 * 3600 * 1000)),
    "maxResultChars": ("max_result_chars", _int_in(1_000, 10_000_000)),
    "maxDiffBytes": ("max_diff_bytes", _int_in(1_024, 256 * 1024 * 1024)),
    "transport": ("transport", _transport),
    "machines": ("machines", _labels),
    "machineTargets": ("machine_targets", _targets),
    "sharedFilesystem": ("shared_filesystem", _labels),
    "sshConfig": ("ssh_config", _path),
    "machineArtifactDirs": ("machine_artifact_dirs", _remote_dirs),
    "stateDir": ("state_dir", _path),
    "artifactDir": ("artifact_dir", _path),
    "aliases": ("aliases", _aliases),
    "managed": ("managed", _table),
    "readOnly": ("read_only", _bool),
    "disableTools": ("disable_tools", _globs),
    "agentKinds": ("agent_kinds", _allowlist),
    "agentNames": ("agent_names", _allowlist),
    "allowAgentArgs": ("allow_agent_args", _bool),
    "passEnv": ("pass_env", _globs),
    "auditMaxBytes": ("audit_max_bytes", _int_in(4_096, 1024 * 1024 * 1024)),
    "targetLockTimeoutMs": ("target_lock_timeout_ms", _int_in(1, 24 * 3600 * 1000)),
}
#: keys whose environment value is a boolean, an integer, a comma-separated list
_ENV_BOOLS = ("enabled", "readOnly", "allowAgentArgs")
_ENV_INTS = (
    "maxConcurrent",
    "queueTimeoutMs",
    "maxResultChars",
    "maxDiffBytes",
    "auditMaxBytes",
    "targetLockTimeoutMs",
)
_ENV_LISTS = (
    "machines",
    "sharedFilesystem",
    "disableTools",
    "agentKinds",
    "agentNames",
    "passEnv",
)


def env_name(key: str) -> str:
    """``queueTimeoutMs`` → ``HERDR_ORCHESTRATOR_QUEUE_TIMEOUT_MS``."""
    snake = "".join(f"_{c}" if c.isupper() else c for c in key).upper()
    return ENV_PREFIX + snake


#: ``[managed]`` has one variable per key of its own, read by orchestrator.managed.settings.
MANAGED_ENV_PREFIX = ENV_PREFIX + "MANAGED_"
_ENV_KEYS = {env_name(key): key for key in _KEYS if key != "managed"}


def _env_value(key: str, text: str) -> Any:
    """The TOML-typed value of an environment string for ``key`` (documented per key)."""
    if key in _ENV_BOOLS:
        try:
            return parse_bool(env_name(key), text)
        except BooleanError as exc:
            raise ConfigError(key, str(exc), source="environment") from None
    if key in _ENV_INTS:
        try:
            return int(text.strip().replace("_", ""))
        except ValueError:
            return text
    if key == "allowCwd":
        return [p for p in text.split(os.pathsep) if p]
    if key in _ENV_LISTS:
        return [p.strip() for p in text.split(",") if p.strip()]
    if key in ("machineTargets", "machineArtifactDirs"):
        pairs = [p.strip() for p in text.split(",") if p.strip()]
        if not all("=" in p for p in pairs):
            return text
        return {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in pairs)}
    if key == "aliases":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(key, f"expected a JSON object: {exc}", source=env_name(key)) from None
    return text


def _unknown(key: str, known: list[str], source: str) -> ConfigError:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return ConfigError(key, f"unknown key{hint}", source=source)


def default_config_path(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/herdr-orchestrator/config.toml`` (``~/.config`` when unset)."""
    home = Path(env.get("HOME") or Path.home())
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return base / "herdr-orchestrator" / "config.toml"


def default_state_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_STATE_HOME/herdr-orchestrator`` (``~/.local/state`` when unset)."""
    home = Path(env.get("HOME") or Path.home())
    base = Path(env["XDG_STATE_HOME"]) if env.get("XDG_STATE_HOME") else home / ".local" / "state"
    return base / "herdr-orchestrator"


def _defaults(env: Mapping[str, str]) -> Config:
    state = default_state_dir(env)
    return Config(state_dir=state, artifact_dir=state / "artifacts")


def parse_config(
    data: Mapping[str, Any], *, base: Path, source: str = "", start: Config | None = None
) -> Config:
    """Apply a TOML table to ``start`` (defaults when None); unknown keys are errors."""
    config = start or Config()
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _KEYS:
            raise _unknown(key, list(_KEYS), source)
        attr, parser = _KEYS[key]
        try:
            changes[attr] = parser(key, value, base)
        except ConfigError as exc:
            raise ConfigError(exc.key, exc.detail, source=source) from None
    # The artifact directory follows a moved state directory unless set itself.
    if (
        "state_dir" in changes
        and "artifact_dir" not in changes
        and config.artifact_dir == config.state_dir / "artifacts"
    ):
        changes["artifact_dir"] = changes["state_dir"] / "artifacts"
    return replace(config, **changes)


def _check_machines(config: Config, source: str) -> None:
    for key, labels in (
        ("machineTargets", tuple(config.machine_targets)),
        ("machineArtifactDirs", tuple(config.machine_artifact_dirs)),
        ("sharedFilesystem", config.shared_filesystem),
    ):
        for label in labels:
            if label not in config.machines:
                raise ConfigError(
                    key, f"machine {label!r} is not listed in machines", source=source
                )


def load_config(env: Mapping[str, str] | None = None, path: Path | str | None = None) -> Config:
    """The effective configuration: defaults, then the file, then the environment."""
    environ = dict(os.environ if env is None else env)
    config = _defaults(environ)
    named = path if path is not None else environ.get(CONFIG_ENV) or None
    file = Path(named).expanduser() if named is not None else default_config_path(environ)
    if file.exists():
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("(file)", f"not valid TOML: {exc}", source=str(file)) from None
        config = parse_config(data, base=file.parent, source=str(file), start=config)
        config = replace(config, file=file)
    elif named is not None:
        raise ConfigError(CONFIG_ENV, f"no such file: {file}")
    overrides: dict[str, Any] = {}
    for name, text in environ.items():
        if not name.startswith(ENV_PREFIX) or name == CONFIG_ENV:
            continue
        if name.startswith(MANAGED_ENV_PREFIX):
            continue  # checked by orchestrator.managed.settings
        if name not in _ENV_KEYS:
            raise _unknown(name, [*_ENV_KEYS, CONFIG_ENV], "environment")
        key = _ENV_KEYS[name]
        overrides[key] = _env_value(key, text)
    if overrides:
        config = parse_config(overrides, base=Path.cwd(), source="environment", start=config)
        config = replace(config, env_keys=tuple(sorted(env_name(k) for k in overrides)))
    _check_machines(config, str(config.file or "environment"))
    return config


# -- gates ------------------------------------------------------------------------------------


def check_enabled(config: Config) -> None:
    """Refuse every spawn when ``enabled = false`` (the kill switch)."""
    if not config.enabled:
        raise GateError(
            "DISABLED",
            "agent tools are disabled by configuration (enabled = false"
            f"{' in ' + str(config.file) if config.file else ''})",
        )


def check_cwd(config: Config, cwd: str | Path) -> Path:
    """The resolved ``cwd`` if it exists, is a directory and lies inside ``allowCwd``.

    Both sides are resolved (symlinks followed) before comparing, so a link inside an allowed
    root that points outside it is refused, and a root given through a link still matches.
    No ``allowCwd`` setting (the default) allows every directory; an empty list is refused
    when the configuration is read.
    """
    given = Path(cwd).expanduser()
    try:
        resolved = given.resolve(strict=True)
    except (FileNotFoundError, RuntimeError):
        raise GateError(
            "CWD_NOT_FOUND", f"cwd {str(given)!r} does not exist", field="cwd"
        ) from None
    if not resolved.is_dir():
        raise GateError("CWD_NOT_FOUND", f"cwd {str(given)!r} is not a directory", field="cwd")
    if not config.allow_cwd:
        return resolved
    roots = [root.expanduser().resolve() for root in config.allow_cwd]
    if any(resolved == root or resolved.is_relative_to(root) for root in roots):
        return resolved
    via = f" (resolves to {str(resolved)!r})" if resolved != given.absolute() else ""
    allowed = ", ".join(str(root) for root in roots)
    raise GateError(
        "CWD_NOT_ALLOWED",
        f"cwd {str(given)!r}{via} is outside allowCwd ({allowed})",
        field="cwd",
    )


def check_machine(config: Config, machine: str | None) -> str:
    """``"local"`` for the local machine, else ``machine`` when ``machines`` enables it.

    Enough for what only needs Herdr's API (list, message, an external target's result):
    the call goes through ``herdr --machine <label>``. Herdr itself then refuses a label its
    catalog does not know or has disabled (:func:`machine_hint` names the fix).
    """
    if machine is None or machine in LOCAL_MACHINES:
        return LOCAL_MACHINE
    if machine in config.machines:
        return machine
    enabled = ", ".join(config.machines) or "none"
    raise GateError(
        "MACHINE_NOT_ENABLED",
        f"machine {machine!r} is not enabled in machines (enabled: {enabled}); add its Herdr "
        "label to machines in the configuration (after `herdr machine add`)",
        field="machine",
    )


def check_spawn_machine(config: Config, machine: str | None, cwd: str | None) -> str:
    """:func:`check_machine`, plus what a spawn on a remote machine needs.

    A remote spawn needs an explicit absolute ``cwd`` (a path on that machine: the caller's
    own directory means nothing there) and file access to the machine, since the task's
    envelope, ``result.md``, inbox, pi session and diff are files: ``sharedFilesystem`` (the
    machine sees the same paths through a shared mount) or ``machineTargets`` (they are
    read and written over SSH, :mod:`.remote_task` checks what that needs).
    """
    label = check_machine(config, machine)
    if label == LOCAL_MACHINE:
        return label
    if not cwd or not cwd.startswith("/"):
        raise GateError(
            "CWD_NOT_ABSOLUTE",
            f"a spawn on machine {label!r} needs cwd as an absolute path on that machine "
            f"(got {cwd!r})",
            field="cwd",
        )
    if label in config.shared_filesystem or label in config.machine_targets:
        return label
    raise GateError(
        "MACHINE_NO_FILE_ACCESS",
        f"a spawn on machine {label!r} needs file access to it: list it in sharedFilesystem "
        "(it sees the same paths through a shared mount) or give it an SSH target in "
        "machineTargets",
        field="machine",
    )


def files_reachable(config: Config, machine: str) -> bool:
    """Whether a path Herdr reports for ``machine`` (a pi session file) can be read: here
    (the local machine, one listed in ``sharedFilesystem``) or over SSH (``machineTargets``
    with ``sshConfig``: :func:`.remote_files.files_for`)."""
    if machine == LOCAL_MACHINE or machine in config.shared_filesystem:
        return True
    return machine in config.machine_targets and config.ssh_config is not None


#: Herdr's ``--machine`` refusals (src/cli/target.rs) → the fix to name with them
_MACHINE_FIXES = (
    (" is disabled", "enable it with `herdr machine enable <id>` (see `herdr machine list`)"),
    ("unknown machine ", "save it with `herdr machine add <ssh-target> --label <label>`"),
    (" is ambiguous", "use its profile id (see `herdr machine list`)"),
)


def machine_hint(machine: str, message: str) -> str | None:
    """The fix for Herdr's refusal ``message`` of ``--machine <machine>``, or None."""
    if machine == LOCAL_MACHINE:
        return None
    for needle, fix in _MACHINE_FIXES:
        if needle in message:
            return f"machine {machine!r}: {fix}"
    return None
