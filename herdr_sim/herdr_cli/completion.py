"""``herdr completion <shell>``: a completion script, generated from this CLI's command table.

Herdr generates its scripts with ``clap_complete`` from its clap command (``src/cli/
completion.rs``): the same five shells, the same usage and exit codes (no shell or more than
one argument: usage on stderr, exit 2; ``help``: usage, exit 0; an unknown shell:
``unknown shell: X`` and the usage, exit 2). The scripts are ours, written from
:func:`herdr_sim.herdr_cli.help.command_table`: each completes the subcommands of the
command path typed so far and the options its synopsis names.
"""

from __future__ import annotations

import json

from .help import command_table
from .output import write_err, write_out

__all__ = ["SHELLS", "run", "script"]

#: Herdr's ``SUPPORTED_SHELLS``
SHELLS = ("bash", "elvish", "fish", "powershell", "zsh")
_USAGE = f"usage: herdr completion <{'|'.join(SHELLS)}>"


def run(args: list[str]) -> int:
    """Print the script for ``args[0]``; Herdr's usage rules otherwise."""
    if not args:
        write_err(_USAGE)
        return 2
    if args[0] in ("help", "--help", "-h"):
        write_err(_USAGE)
        return 0
    if len(args) != 1:
        write_err(_USAGE)
        return 2
    if args[0] not in SHELLS:
        write_err(f"unknown shell: {args[0]}")
        write_err(_USAGE)
        return 2
    write_out(script(args[0]))
    return 0


def _candidates() -> dict[str, list[str]]:
    """``"workspace create"`` → the words that may follow it (``""`` is ``herdr``)."""
    return {
        " ".join(path): [*words, *options] for path, (words, options) in command_table().items()
    }


def _groups() -> list[str]:
    """Every command path but ``herdr`` itself: a word that names one extends the path."""
    return [" ".join(path) for path in command_table() if path]


def script(shell: str) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`)."""
    return {"bash": _bash, "zsh": _zsh, "fish": _fish, "elvish": _elvish,
            "powershell": _powershell}[shell]()  # fmt: skip


def _sh_word(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _case_arms(arm: str) -> str:
    """One ``case`` arm per command path; ``arm`` formats ``{path}`` and ``{words}``."""
    return "\n".join(
        arm.format(path=_sh_word(path), words=_sh_word(" ".join(words)))
        for path, words in _candidates().items()
    )


def _known_paths() -> str:
    return "|".join(_sh_word(path) for path in _groups() if path) or "''"


def _bash() -> str:
    return f"""# bash completion for herdr (herdr-sim's CLI); source it, or put it in
# ~/.local/share/bash-completion/completions/herdr
_herdr() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" cmdpath="" i w next words=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${{COMP_WORDS[i]}}"
        case "$w" in -*) continue ;; esac
        next="${{cmdpath:+$cmdpath }}$w"
        case "$next" in {_known_paths()}) cmdpath="$next" ;; esac
    done
    case "$cmdpath" in
{_case_arms("        {path}) words={words} ;;")}
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -F _herdr herdr
"""


def _zsh() -> str:
    return f"""#compdef herdr
# zsh completion for herdr (herdr-sim's CLI); put it on $fpath as _herdr
_herdr() {{
    local cmdpath="" i w next
    for ((i = 2; i < CURRENT; i++)); do
        w="${{words[i]}}"
        [[ "$w" == -* ]] && continue
        next="${{cmdpath:+$cmdpath }}$w"
        case "$next" in ({_known_paths()}) cmdpath="$next" ;; esac
    done
    local -a candidates
    case "$cmdpath" in
{_case_arms("        ({path}) candidates=(${{=:-{words}}}) ;;")}
    esac
    compadd -- "${{candidates[@]}}"
}}
if [[ "${{funcstack[1]}}" == "_herdr" ]]; then
    _herdr "$@"
else
    compdef _herdr herdr
fi
"""


def _fish() -> str:
    paths = " ".join(_sh_word(path) for path in _groups() if path)
    lines = [
        "# fish completion for herdr (herdr-sim's CLI); put it in",
        "# ~/.config/fish/completions/herdr.fish",
        "function __herdr_path",
        "    set -l path",
        "    for w in (commandline -opc)[2..-1]",
        "        string match -q -- '-*' $w; and continue",
        "        set -l next (string join ' ' $path $w)",
        f"        if contains -- $next {paths}",
        "            set path $path $w",
        "        end",
        "    end",
        "    test (string join ' ' $path) = \"$argv[1]\"",
        "end",
    ]
    for path, words in _candidates().items():
        joined = _sh_word(" ".join(words))
        lines.append(
            f"complete -c herdr -f -n {_sh_word('__herdr_path ' + _sh_word(path))} -a {joined}"
        )
    return "\n".join(lines) + "\n"


def _elvish() -> str:
    table = " ".join(
        f"&{json.dumps(path)}=[{' '.join(json.dumps(w) for w in words)}]"
        for path, words in _candidates().items()
    )
    groups = " ".join(json.dumps(path) for path in _groups() if path)
    return f"""# elvish completion for herdr (herdr-sim's CLI); eval it in rc.elv
use str
set edit:completion:arg-completer[herdr] = {{|@words|
    var table = [{table}]
    var groups = [{groups}]
    var path = ''
    for w $words[1..-1] {{
        if (str:has-prefix $w -) {{ continue }}
        var next = (if (eq $path '') {{ put $w }} else {{ put $path' '$w }})
        if (has-value $groups $next) {{ set path = $next }}
    }}
    if (has-key $table $path) {{ all $table[$path] }}
}}
"""


def _powershell() -> str:
    table = "\n".join(
        f"        {json.dumps(path)} = @({', '.join(json.dumps(w) for w in words)})"
        for path, words in _candidates().items()
    )
    groups = ", ".join(json.dumps(path) for path in _groups() if path)
    return f"""# PowerShell completion for herdr (herdr-sim's CLI); dot-source it in $PROFILE
Register-ArgumentCompleter -Native -CommandName herdr -ScriptBlock {{
    param($wordToComplete, $commandAst, $cursorPosition)
    $table = @{{
{table}
    }}
    $groups = @({groups})
    $path = ''
    $elements = $commandAst.CommandElements | Select-Object -Skip 1
    foreach ($element in $elements) {{
        $w = $element.ToString()
        if ($w -eq $wordToComplete) {{ break }}
        if ($w.StartsWith('-')) {{ continue }}
        $next = if ($path -eq '') {{ $w }} else {{ "$path $w" }}
        if ($groups -contains $next) {{ $path = $next }}
    }}
    $table[$path] | Where-Object {{ $_ -like "$wordToComplete*" }} |
        ForEach-Object {{ [System.Management.Automation.CompletionResult]::new($_) }}
}}
"""
