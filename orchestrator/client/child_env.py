"""The environment every child process we start gets: ours, minus the secrets.

Why: the orchestrator runs inside a user's session (or an MCP host's), whose environment holds
API keys and tokens. The programs we start ourselves — the ``herdr`` CLI, ``git``, an agent's
own checks (``pi --list-models``) — need none of them to do what we ask, and each is one more
place a secret can leak from (a crash report, a verbose log, a hook). So every ``subprocess``
call in the package builds its environment here (:func:`child_env`), and a variable whose
*name* says it is a secret is left out unless the configuration's ``passEnv`` names it (globs):

* names containing ``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD``, ``PASSPHRASE``,
  ``CREDENTIAL``, ``API_KEY``, ``APIKEY``, ``ACCESS_KEY``, ``PRIVATE_KEY``;
* names ending in ``_KEY``, ``_PAT`` or ``_AUTH`` (``NPM_CONFIG__AUTH``).

Matching is on upper-cased names. ``SSH_AUTH_SOCK`` (a socket path, which git over ssh needs)
is not a secret by these rules. The rule reads names, not values: a secret in a variable
named like anything else passes (docs/orchestrator/security.md says so).

Agents Herdr starts in panes inherit Herdr's environment, not ours: this module does not
reach them, and they keep the keys they need.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping

#: name fragments that mark a secret (upper case)
SECRET_PARTS: tuple[str, ...] = (
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
)
#: name endings that mark a secret (upper case)
SECRET_SUFFIXES: tuple[str, ...] = ("_KEY", "_PAT", "_AUTH")


def is_secret_name(name: str) -> bool:
    """Whether a variable named ``name`` is taken for a secret."""
    upper = name.upper()
    return any(part in upper for part in SECRET_PARTS) or upper.endswith(SECRET_SUFFIXES)


def child_env(env: Mapping[str, str], pass_env: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without its secrets, except the names ``pass_env`` (globs) lets through."""
    passed = tuple(pass_env)
    return {
        name: value
        for name, value in env.items()
        if not is_secret_name(name) or any(fnmatch.fnmatchcase(name, g) for g in passed)
    }


__all__ = ["SECRET_PARTS", "SECRET_SUFFIXES", "child_env", "is_secret_name"]
