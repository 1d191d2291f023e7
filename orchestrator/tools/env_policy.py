"""Which ``env`` entries a workspace, tab or pane create (or split) may give its new shell.

Why a policy at all: creating a pane is R1 (seed 001: it creates an object, it runs nothing).
An ``env`` entry that makes the new shell, the dynamic loader or a program started later run
code of the caller's choosing would turn that R1 call into R2 work done without the preview
gate, and would let a caller redirect what a previewed ``agent_start`` really runs. The rule:

    **An env entry may hand data to the programs in the pane; it may not choose code.**

Refused (case-insensitively, so a near-miss spelling is never the one that slips through):

* **Not a plain name.** Names must match ``[A-Za-z_][A-Za-z0-9_]*``. This refuses bash's
  exported functions (``BASH_FUNC_name%%``, run when bash starts) and any name a shell would
  not treat as a variable. Values must not contain NUL (Herdr and ``execve`` cannot carry it),
  nor start with ``() {`` (how bash before 4.3-p25 imported functions from any variable).
* **The dynamic loader**: every ``LD_*`` (``LD_PRELOAD``, ``LD_LIBRARY_PATH``, ``LD_AUDIT``) and
  ``DYLD_*``; and glibc's ``GCONV_PATH`` (loads shared objects on the first ``iconv``).
* **The shell's own hooks**, which run code at startup or before each prompt: ``BASH_ENV``
  and ``ENV`` (startup files of bash, sh, dash, ksh), ``BASH_FUNC_*``, ``PROMPT_COMMAND``,
  ``PS0``–``PS4`` (bash expands prompts with command substitution; zsh with
  ``PROMPT_SUBST``; telling a safe prompt from ``$(…)`` reliably is not worth the risk),
  ``SHELLOPTS`` and ``BASHOPTS`` (imported at startup: ``xtrace`` with ``PS4``, and others),
  ``BASH_LOADABLES_PATH``, ``FPATH`` (autoloaded functions), ``ZDOTDIR``, ``HOME`` and
  ``XDG_CONFIG_HOME`` (where bash, zsh and fish read their rc files), ``INPUTRC`` (key
  bindings: a binding can type and submit a command), and ``HISTFILE`` (the shell writes its
  history there on exit: a write to any file, e.g. an rc file).
* **Which program runs**: ``PATH``, so the command a previewed ``pane_run`` or ``agent_start``
  names is the one that runs.
* **Interpreter start-up hooks** of the programs agents are and use: ``NODE_OPTIONS`` and
  ``NODE_PATH`` (pi, claude, codex … are Node programs; ``--require`` runs a file),
  ``PYTHONSTARTUP``, ``PYTHONPATH``, ``PYTHONHOME``, ``PYTHONUSERBASE`` (``sitecustomize``),
  ``PERL5OPT``, ``PERL5LIB``, ``PERLLIB``, ``RUBYOPT``, ``RUBYLIB``, ``JAVA_TOOL_OPTIONS``,
  ``_JAVA_OPTIONS``, ``JDK_JAVA_OPTIONS``.
* **Commands other programs run on our behalf**: every ``GIT_*`` (``GIT_CONFIG_*``,
  ``GIT_SSH_COMMAND``, ``GIT_EXTERNAL_DIFF``, ``GIT_DIR`` pointing at a repository with hooks),
  ``EDITOR``, ``VISUAL``, ``PAGER``, ``SSH_ASKPASS``.
* **Our own gates**: every ``DSH_HERDR_*`` and ``HERDR_ORCHESTRATOR_*``, so a pane cannot
  host an orchestrator with ``DSH_HERDR_PREVIEW_REQUIRED=0`` or a wider ``allowCwd``.

This is a deny-list of the mechanisms we know, not a sandbox: a program in the pane can still
read any variable, and a user's own rc files still run. docs/orchestrator/security.md says
what is and is not covered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Refused name prefixes (compared upper-cased).
DENIED_PREFIXES: tuple[str, ...] = (
    "LD_",
    "DYLD_",
    "BASH_FUNC_",
    "GIT_",
    "DSH_HERDR_",
    "HERDR_ORCHESTRATOR_",
)
#: Refused names (compared upper-cased); the module docstring says why each is here.
DENIED_NAMES: frozenset[str] = frozenset(
    {
        "GCONV_PATH",
        # the shell's hooks and startup files
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PS0",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "BASH_LOADABLES_PATH",
        "FPATH",
        "ZDOTDIR",
        "HOME",
        "XDG_CONFIG_HOME",
        "INPUTRC",
        "HISTFILE",
        # which program runs
        "PATH",
        # interpreter start-up hooks
        "NODE_OPTIONS",
        "NODE_PATH",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONUSERBASE",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        # commands other programs run
        "EDITOR",
        "VISUAL",
        "PAGER",
        "SSH_ASKPASS",
    }
)


def env_problem(env: Mapping[str, object] | None) -> str | None:
    """Why ``env`` may not be given to a new shell (naming the first bad entry), or None."""
    for name, value in (env or {}).items():
        if not _NAME.fullmatch(name):
            return (
                f"env: {name!r} is not a plain variable name ([A-Za-z_][A-Za-z0-9_]*); "
                "exported shell functions (BASH_FUNC_…%%) and odd names are refused"
            )
        upper = name.upper()
        if upper in DENIED_NAMES or upper.startswith(DENIED_PREFIXES):
            return (
                f"env: {name} is refused: it can make the new shell or a program started in "
                "it run code (loader, shell startup or prompt hooks, PATH, interpreter "
                "options, our own gates); see docs/orchestrator/security.md"
            )
        text = str(value)
        if "\x00" in text:
            return f"env: the value of {name} contains NUL"
        if text.lstrip().startswith("() {"):
            return f"env: the value of {name} looks like an exported bash function"
    return None


__all__ = ["DENIED_NAMES", "DENIED_PREFIXES", "env_problem"]
