"""How each fake agent kind looks (screen and terminal title) and reports to Herdr.

The screens are drawn so that Herdr's own detection manifest for the kind
(``contracts/agent-detection/<kind>.toml``) classifies them as the intended state:

* pi: the working line holds ``Working...`` (rule ``working_literal``); idle and blocked
  screens never do, so they fall back to the known-agent idle state. pi's blocked state
  comes from its socket report, not from the screen (its manifest has no blocked rule).
* claude: ``❯`` in the prompt box (``live_prompt_box``), ``✻ Thinking… (Ns · esc to
  interrupt)`` (``live_turn_working``), a Bash permission dialog without prompt box
  (``bash_permission_prompt``, ``generic_permission_prompt``); titles ``✳ Claude Code`` /
  ``⠋ Claude Code`` (``osc_title_idle`` / ``osc_title_working``).
* codex: the title alone: ``codex`` (idle), ``⠋ codex`` (working), ``Action Required``
  (blocked), plus matching screen text.
* opencode: opencode 1.18.33's layout (captured bottom rows of the real one): the input box
  is a ``┃`` rail closed by the bottom border ``╹▀▀▀…`` that screen-scraping clients look
  for, its last row ``Build · <model> <provider>``; below it the status row, which while
  working starts with the ■/⬝ progress bar and ``esc interrupt`` (``progress_bar_working``);
  a permission request replaces the box with ``△ Permission required`` in the rail
  (``permission_required``).

Reports (``Reporter`` params) follow each kind's official integration: pi and opencode
report the whole lifecycle, claude and codex only their session at start, and the
third-party persona ``fake-agent`` integrates as the guide tells a third-party author.
"""

from __future__ import annotations

__all__ = ["ANSWER_MARKS", "KINDS", "LAUNCHER_KINDS", "PERSONA_SOURCES", "PROMPT_ECHOES", "render"]

#: The agent kinds the project fakes, each a launcher of its name: the one list of them (the
#: launchers, the simulator's own integrations, the real agents and the plugin's fake-agent
#: fixtures all take theirs from here).
LAUNCHER_KINDS = ("pi", "claude", "codex", "opencode")
#: The kinds a launcher can be installed as, plus the third-party persona.
KINDS = (*LAUNCHER_KINDS, "fake-agent")

#: The report ``source`` (and request id prefix) of each kind; None: this kind never reports.
PERSONA_SOURCES = {
    "pi": "herdr:pi",
    "claude": "herdr:claude",
    "codex": "herdr:codex",
    "opencode": "herdr:opencode",
    "fake-agent": "herdr-sim-fake-agent",
}

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: how a kind echoes the user's prompt in its transcript (default ``> ``) and marks the
#: first line of an answer (continuation lines are indented as wide): as real Claude Code
#: 2.1.332 (``❯ say hi``, ``● Hello there.``) and Codex 0.171 (``› say hi``, ``• Hello
#: there.``) draw them (tests/real_agents/test_fake_screens.py)
PROMPT_ECHOES = {"claude": "❯ ", "codex": "› "}
ANSWER_MARKS = {"claude": "● ", "codex": "• "}
#: what opencode's empty input box shows
OPENCODE_PLACEHOLDER = 'Ask anything... "Fix a TODO in the codebase"'


def _rule(width: int) -> str:
    return "─" * max(1, width)


def render(
    kind: str,
    *,
    state: str,
    width: int,
    height: int,
    transcript: list[str],
    typed: str,
    question: str,
    frame: int,
    elapsed_s: int,
    model: str,
    cwd: str,
    provider: str = "fake",
) -> tuple[str, list[str]]:
    """The terminal title and the screen lines for ``kind`` in ``state``."""
    spin = SPINNER[frame % len(SPINNER)]
    footer: list[str]
    title: str
    if kind == "pi":
        title = "pi"
        if state == "blocked":
            footer = [
                _rule(width),
                f" ? {question}",
                f" > {typed}",
                " enter to submit · esc to cancel",
            ]
        else:
            # real pi 1.6: the editor between two rules, then the cwd and the usage rows
            usage = " 0.0%/128k (auto)"
            footer = [_rule(width), f"> {typed}", _rule(width), f" {cwd}",
                      usage + model.rjust(max(1, width - len(usage) - 1))]  # fmt: skip
            if state == "working":
                footer.insert(0, f"{spin} Working... (esc to interrupt)")
    elif kind == "claude":
        title = f"{spin} Claude Code" if state == "working" else "✳ Claude Code"
        if state == "blocked":
            footer = [
                _rule(width),
                " Bash command",
                f"   {question}",
                " Do you want to proceed?",
                " ❯ 1. Yes",
                "   2. No",
                " Esc to cancel",
            ]
        else:
            footer = [_rule(width), f"❯ {typed}", _rule(width), "  ? for shortcuts"]
            if state == "working":
                footer.insert(0, f"✻ Thinking… ({elapsed_s}s · esc to interrupt)")
    elif kind == "codex":
        title = {"working": f"{spin} codex", "blocked": "Action Required"}.get(state, "codex")
        if state == "blocked":
            footer = [
                f"› {typed}",
                " Allow command?",
                f"   {question}",
                " › 1. Yes (y)",
                "   2. No (esc)",
                " Press enter to confirm or esc to cancel",
            ]
        else:
            # real Codex 0.171: the input row, a blank row, the model row, the hints row
            footer = [f"› {typed}", "", f"  {model} · {cwd}", "  ? for shortcuts"]
            if state == "working":
                footer.insert(0, f"• Working ({elapsed_s}s • esc to interrupt)")
    elif kind == "opencode":
        title = "OpenCode"
        if state == "blocked":
            footer = [
                "  ┃",
                "  ┃  △ Permission required",
                f"  ┃    ← {question}",
                "  ┃",
                "  ┃   Allow once   Allow always   Reject      ⇆ select  enter confirm",
                "  ┃",
            ]
        else:
            footer = [
                "  ┃",
                f"  ┃  {typed or OPENCODE_PLACEHOLDER}",
                "  ┃",
                f"  ┃  Build · {model} {provider}",
                "  ╹" + "▀" * max(1, width - 4),
            ]
            if state == "working":
                bar = "".join("■" if (i - frame) % 8 < 4 else "⬝" for i in range(8))
                footer.append(f"   {bar}  esc interrupt    tab agents  ctrl+p commands")
            else:
                footer.append(f"   {cwd}    tab agents  ctrl+p commands")
    else:
        title = "fake-agent"
        if state == "blocked":
            footer = [f"? {question}", f"answer> {typed}"]
        else:
            footer = [f"fake-agent> {typed}"]
            if state == "working":
                footer.insert(0, f"{spin} working (esc to interrupt)")
    header = [f" {kind} (herdr-sim fake agent)", ""]
    room = max(0, height - len(header) - len(footer) - 1)
    body = transcript[-room:] if room else []
    lines = header + body + [""] * (room - len(body)) + [""] + footer
    return title, [line[:width] for line in lines[:height]]
