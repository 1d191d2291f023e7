"""The managed-agent settings: the ``[managed]`` table of the orchestrator's config file.

Why a table of the one config file (not pi-herdsman's own ``config.json``): the orchestrator
already has one strictly validated configuration (:mod:`orchestrator.core.config`)
with environment overrides; the managed agents' four settings (reference A.15) join it under
``[managed]`` with the reference's names, defaults and ranges, and the same rules: an unknown
key, in the table or in a ``HERDR_ORCHESTRATOR_MANAGED_*`` variable, is an error naming it
(a misspelt ``contextRetirment = false`` silently ignored would leave retirement on).

Precedence, lowest first: the defaults below, the ``[managed]`` table, then one environment
variable per key (``spawnPlacement`` → ``HERDR_ORCHESTRATOR_MANAGED_SPAWN_PLACEMENT``).
``load_config`` keeps the table as read (and leaves these variables alone); this module
depends on the config module, never the reverse (no import circle), so the table and the
variables are checked when :func:`managed_settings` builds the settings — by the managed
tools before they act.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from orchestrator.booleans import BooleanError, parse_bool
from orchestrator.core.config import MANAGED_ENV_PREFIX, Config, ConfigError

__all__ = [
    "LIMIT_RANGE",
    "MANAGED_ENV_PREFIX",
    "ManagedSettings",
    "SpawnPlacement",
    "apply_managed_env",
    "managed_env_name",
    "managed_settings",
    "parse_managed",
]

SpawnPlacement = Literal["tab", "subtree", "split"]
SPAWN_PLACEMENTS: tuple[str, ...] = get_args(SpawnPlacement)
#: the allowed range of both byte limits (reference A.15)
LIMIT_RANGE = (1024, 1 << 20)
TABLE = "managed"


@dataclass(frozen=True)
class ManagedSettings:
    """The effective managed-agent settings (reference A.15 defaults).

    ``spawn_placement``: ``tab`` (one shared agents tab), ``subtree`` (one tab per
    lead-direct agent) or ``split`` (split the caller's pane). ``context_retirement``: a
    session retired under context pressure cannot be continued. The two limits are UTF-8
    bytes: a file is inlined only up to ``inline_attachment_limit_bytes``; a rendered
    message must fit ``mailbox_payload_limit_bytes`` (below the fixed protocol ceiling).
    """

    spawn_placement: SpawnPlacement = "subtree"
    context_retirement: bool = True
    inline_attachment_limit_bytes: int = 131072
    mailbox_payload_limit_bytes: int = 131072


_Parser = Callable[[str, Any], Any]


def _placement(key: str, value: Any) -> str:
    if value not in SPAWN_PLACEMENTS:
        raise ConfigError(key, f"expected one of tab, subtree, split, got {value!r}")
    return str(value)


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, f"expected true or false, got {value!r}")
    return value


def _limit(key: str, value: Any) -> int:
    low, high = LIMIT_RANGE
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(key, f"expected an integer, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(key, f"expected {low}..{high}, got {value}")
    return value


# key in the table -> (attribute, parser of a TOML value)
_KEYS: dict[str, tuple[str, _Parser]] = {
    "spawnPlacement": ("spawn_placement", _placement),
    "contextRetirement": ("context_retirement", _bool),
    "inlineAttachmentLimitBytes": ("inline_attachment_limit_bytes", _limit),
    "mailboxPayloadLimitBytes": ("mailbox_payload_limit_bytes", _limit),
}


def managed_env_name(key: str) -> str:
    """``spawnPlacement`` → ``HERDR_ORCHESTRATOR_MANAGED_SPAWN_PLACEMENT``."""
    snake = "".join(f"_{c}" if c.isupper() else c for c in key).upper()
    return MANAGED_ENV_PREFIX + snake


_ENV_KEYS = {managed_env_name(key): key for key in _KEYS}


def _unknown(key: str, known: list[str], source: str) -> ConfigError:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return ConfigError(key, f"unknown key{hint}", source=source)


def parse_managed(
    data: Any, *, source: str = "", start: ManagedSettings | None = None
) -> ManagedSettings:
    """Apply a ``[managed]`` table to ``start`` (the defaults when None); an unknown key or
    a value of the wrong type or out of range is a :class:`ConfigError` named
    ``managed.<key>``."""
    if not isinstance(data, Mapping):
        raise ConfigError(TABLE, f"expected a table, got {data!r}", source=source)
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _KEYS:
            raise _unknown(f"{TABLE}.{key}", [f"{TABLE}.{k}" for k in _KEYS], source)
        attr, parser = _KEYS[key]
        try:
            changes[attr] = parser(f"{TABLE}.{key}", value)
        except ConfigError as exc:
            raise ConfigError(exc.key, exc.detail, source=source) from None
    return replace(start or ManagedSettings(), **changes)


def _env_value(key: str, name: str, text: str) -> Any:
    """The TOML-typed value of the environment string ``text`` for ``key``."""
    if key == "contextRetirement":
        try:
            return parse_bool(name, text)
        except BooleanError as exc:
            raise ConfigError(f"{TABLE}.{key}", str(exc), source="environment") from None
    if key.endswith("Bytes"):
        try:
            return int(text.strip().replace("_", ""))
        except ValueError:
            return text
    return text.strip()


def apply_managed_env(start: ManagedSettings, env: Mapping[str, str]) -> ManagedSettings:
    """``start`` with every ``HERDR_ORCHESTRATOR_MANAGED_*`` variable of ``env`` applied; an
    unknown variable of that prefix is a :class:`ConfigError` naming it."""
    table: dict[str, Any] = {}
    for name, text in env.items():
        if not name.startswith(MANAGED_ENV_PREFIX):
            continue
        if name not in _ENV_KEYS:
            raise _unknown(name, list(_ENV_KEYS), "environment")
        key = _ENV_KEYS[name]
        table[key] = _env_value(key, name, text)
    if not table:
        return start
    return parse_managed(table, source="environment", start=start)


def managed_settings(config: Config, env: Mapping[str, str] | None = None) -> ManagedSettings:
    """The effective managed settings: the defaults, the loaded config's ``[managed]`` table,
    then the ``HERDR_ORCHESTRATOR_MANAGED_*`` variables of ``env`` (``os.environ`` when
    None). A bad key or value is a :class:`ConfigError` naming it and where it came from."""
    source = str(config.file) if config.file is not None else "config"
    settings = parse_managed(config.managed, source=source)
    return apply_managed_env(settings, os.environ if env is None else env)
