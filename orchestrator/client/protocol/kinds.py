"""Herdr's agent kinds: canonical labels, aliases and interactive executables (one table).

Kept import-free: the `herdr` CLI, the state engine and detection all read it.

Herdr knows a fixed set of agents.  Each has one canonical label (what the API
reports, e.g. ``agy`` for Antigravity, ``copilot`` for GitHub Copilot), a set
of accepted spellings (process names, manifest aliases, ``HERDR_AGENT``
values) and the executable ``agent.start`` launches.  Twenty of them ship a
screen-detection manifest; ``omp`` and ``mastracode`` are hook-only.
"""

from __future__ import annotations

__all__ = [
    "AGENT_LABELS",
    "RUST_WHITESPACE",
    "SCREEN_MANIFEST_AGENTS",
    "interactive_executable",
    "normalized_lookup_name",
    "parse_agent_label",
    "parse_canonical_agent_label",
]

#: The characters Rust's ``str::trim`` removes (Unicode ``White_Space``); Python's
#: ``str.strip()`` would also remove U+001C..U+001F.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

#: Every agent Herdr knows, in Herdr's declaration order.
AGENT_LABELS: tuple[str, ...] = (
    "pi",
    "claude",
    "codex",
    "gemini",
    "cursor",
    "devin",
    "agy",
    "cline",
    "omp",
    "mastracode",
    "opencode",
    "copilot",
    "kimi",
    "kiro",
    "droid",
    "amp",
    "grok",
    "hermes",
    "kilo",
    "qodercli",
    "qwen",
    "maki",
)

#: The agents that have a screen-detection manifest (all but omp, mastracode).
SCREEN_MANIFEST_AGENTS: tuple[str, ...] = tuple(
    label for label in AGENT_LABELS if label not in ("omp", "mastracode")
)

_EXECUTABLES: dict[str, str] = {label: label for label in AGENT_LABELS}
_EXECUTABLES["cursor"] = "cursor-agent"
_EXECUTABLES["kiro"] = "kiro-cli"

_SPELLINGS: dict[str, tuple[str, ...]] = {
    "pi": ("pi",),
    "claude": ("claude", "claude-code"),
    "codex": ("codex",),
    "gemini": ("gemini",),
    "cursor": ("cursor", "cursor-agent"),
    "devin": ("devin", "devin-cli", "devin cli"),
    "agy": ("agy", "antigravity", "antigravity-cli"),
    "cline": ("cline",),
    "omp": ("omp",),
    "mastracode": ("mastracode", "mastra-code", "mastra code"),
    "opencode": ("opencode", "opencode2", "open-code"),
    "copilot": ("copilot", "github-copilot", "ghcs"),
    "kimi": ("kimi", "kimi-code", "kimi code"),
    "kiro": ("kiro", "kiro-cli"),
    "droid": ("droid",),
    "amp": ("amp", "amp-local"),
    "grok": ("grok", "grok-build"),
    "hermes": ("hermes", "hermes-agent"),
    "kilo": ("kilo", "kilo-code", "kilo code"),
    "qodercli": ("qodercli", "qoderclicn", "qoder", "qodercn"),
    "qwen": ("qwen", "qwen-code", "qwen code"),
    "maki": ("maki",),
}

_LOOKUP: dict[str, str] = {
    spelling: label for label, spellings in _SPELLINGS.items() for spelling in spellings
}

_STRIPPED_SUFFIXES = (".exe", ".cmd", ".bat", ".ps1", ".js")


def normalized_lookup_name(name: str) -> str:
    """Lower-case, trim, and drop one Windows/script suffix (``.exe``, ``.js``, ...)."""
    lowered = name.strip(RUST_WHITESPACE).lower()
    for suffix in _STRIPPED_SUFFIXES:
        if lowered.endswith(suffix):
            return lowered[: -len(suffix)]
    return lowered


def parse_agent_label(name: str) -> str | None:
    """Map an accepted spelling (``Claude``, ``kiro-cli``, ``opencode.exe``) to its label."""
    return _LOOKUP.get(normalized_lookup_name(name))


def parse_canonical_agent_label(label: str) -> str | None:
    """Accept only canonical labels, exactly as spelled (``agy`` yes, ``antigravity`` no)."""
    return label if _LOOKUP.get(label) == label else None


def interactive_executable(label: str) -> str:
    """The executable Herdr launches for a canonical label (``cursor`` → ``cursor-agent``)."""
    return _EXECUTABLES[label]
