"""The one parser of boolean settings given as text (environment variables).

Why one parser, and why it refuses: a safety switch spelt ``on`` or ``y`` must not read as
"off" because one reader knew fewer spellings than another. Every boolean setting
(``DSH_HERDR_PREVIEW_REQUIRED``, ``HERDR_ORCHESTRATOR_ENABLED``) therefore goes through
:func:`parse_bool`, which accepts the usual spellings, case-insensitively and ignoring
surrounding blanks, and raises :class:`BooleanError` for anything else, so a caller can fail
closed and say which variable is wrong instead of guessing.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Spellings of true and of false (compared after ``strip().lower()``).
TRUE_WORDS: tuple[str, ...] = ("1", "true", "yes", "on", "y")
FALSE_WORDS: tuple[str, ...] = ("0", "false", "no", "off", "n")


class BooleanError(ValueError):
    """A value that is none of the accepted spellings; ``name`` is the setting."""

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self.value = value
        super().__init__(
            f"{name}={value!r} is not a boolean: use one of "
            f"{', '.join(TRUE_WORDS)} (on) or {', '.join(FALSE_WORDS)} (off)"
        )


def parse_bool(name: str, value: str) -> bool:
    """``value`` as a boolean, or :class:`BooleanError` naming ``name``."""
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise BooleanError(name, value)


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """The boolean setting ``name`` of ``env``: unset or empty means off, an unknown
    spelling raises :class:`BooleanError` (never a silent off)."""
    value = env.get(name)
    if value is None or not value.strip():
        return False
    return parse_bool(name, value)


__all__ = ["FALSE_WORDS", "TRUE_WORDS", "BooleanError", "env_flag", "parse_bool"]
