"""The screen-detection engine on Herdr's unmodified manifests.

Hand-written screens for pi, claude, codex and opencode (idle prompt, working
spinner, approval or question dialog) must classify as the intended state by
the intended rule; Herdr's own detection test cases are ported as facts; the
generic semantics (gates, priority and tie-breaking, regions, visible flags,
fallbacks) use small inline manifests; the explain object and its text form
follow ``herdr agent explain``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from herdr_sim.detection import (
    DEFAULT_KNOWN_AGENT_IDLE_FALLBACK,
    ManifestSet,
    explain_to_json,
    hook_authority_explain,
    load_manifests,
)
from herdr_sim.detection.regions import region_text
from herdr_sim.herdr_cli.commands.agent import explain_text
from tests.contract_check import contracts_dir


@cache
def shared() -> ManifestSet:
    return load_manifests(contracts_dir() / "agent-detection")


def classify(
    agent: str, screen: str, title: str = "", progress: str = ""
) -> tuple[str, str | None]:
    detection = shared().detect(agent, screen, osc_title=title, osc_progress=progress)
    return detection.state, detection.rule_id


def custom(tmp_path: Path, rules: str, agent: str = "codex") -> ManifestSet:
    (tmp_path / f"{agent}.toml").write_text(f'id = "{agent}"\n\n{rules}', encoding="utf-8")
    return load_manifests(tmp_path)


# -- hand-written screens per agent ---------------------------------------------------------------

PI_IDLE = """\
 pi v0.64.0
 escape to interrupt · ctrl+c to clear · / for commands

 > say hello
 Hello! How can I help you today?

────────────────────────────────────────────────────────────────
>
────────────────────────────────────────────────────────────────
~/work (main)                                  claude-sonnet-4-5
"""

PI_WORKING = """\
 > run the tests

⠋ Working...

────────────────────────────────────────────────────────────────
>
────────────────────────────────────────────────────────────────
~/work (main)                                  claude-sonnet-4-5
"""

CLAUDE_IDLE = """\
╭───────────────────────────────────────────────────╮
│ ✻ Welcome to Claude Code!                         │
╰───────────────────────────────────────────────────╯

> summarise the README
⏺ The README describes a terminal multiplexer.

────────────────────────────────────────────────────────────────
❯\u00a0
────────────────────────────────────────────────────────────────
  ? for shortcuts
"""

CLAUDE_WORKING = """\
> fix the failing test
⏺ I'll look at the test first.

✻ Pondering… (3s · ↓ 120 tokens · esc to interrupt)

────────────────────────────────────────────────────────────────
❯\u00a0
────────────────────────────────────────────────────────────────
  ⏵⏵ accept edits on (shift+tab to cycle)
"""

CLAUDE_APPROVAL = """\
> clean the build directory
⏺ Bash(rm -rf build)
────────────────────────────────────────────────────────────────
 Bash command

   rm -rf build
   Remove the build directory

 Do you want to proceed?
 ❯ 1. Yes
   2. No

 Esc to cancel · Tab to amend · ctrl+e to explain
"""

CLAUDE_QUESTION = """\
> plan the migration
⏺ I have a question before I start.
────────────────────────────────────────────────────────────────
 Which database should the migration target?

 ❯ 1. PostgreSQL
   2. SQLite
   3. Type something.

 Enter to select · ↑/↓ to navigate · Esc to cancel
"""

CODEX_IDLE = """\
╭──────────────────────────────────────────────╮
│ >_ OpenAI Codex (v0.121.0)                   │
╰──────────────────────────────────────────────╯

› list the files

• There are three files: a.py, b.py and README.md.

› Use /skills to list available skills

  gpt-5.6 default · ~/work
"""

CODEX_WORKING = """\
› run the test suite

• Running pytest -q

◦ Working (12s • esc to interrupt)

› Use /skills to list available skills

  gpt-5.6 default · ~/work
"""

CODEX_APPROVAL = """\
› delete the build directory

• I need to run a command.

  Allow command?

  $ rm -rf build

  › 1. Yes, proceed (y)
    2. No, and tell Codex what to do differently (esc)

  Press enter to confirm or esc to cancel
"""

OPENCODE_IDLE = """\
  █▀▀█ █▀▀█ █▀▀ █▀▀▄ █▀▀ █▀▀█ █▀▀▄ █▀▀
  █░░█ █░░█ █▀▀ █░░█ █░░ █░░█ █░░█ █▀▀

  ┃  Ask anything... "Fix a TODO in the codebase"
  ┃
  ┃  Build  Claude Sonnet 4.5 Anthropic

                   tab agents  ctrl+p commands
"""

OPENCODE_WORKING = """\
  ┃  run the tests
  ┃
  ┃  ■■■■⬝⬝⬝⬝  esc interrupt

                   tab agents  ctrl+p commands
"""

OPENCODE_APPROVAL = """\
  △ Permission required
    $ rm -rf build

    Allow once   Allow always   Reject
"""


@pytest.mark.parametrize(
    ("agent", "screen", "state", "rule"),
    [
        ("pi", PI_IDLE, "idle", None),
        ("pi", PI_WORKING, "working", "working_literal"),
        ("claude", CLAUDE_IDLE, "idle", "live_prompt_box"),
        ("claude", CLAUDE_WORKING, "working", "live_turn_working"),
        ("claude", CLAUDE_APPROVAL, "blocked", "bash_permission_prompt"),
        ("claude", CLAUDE_QUESTION, "blocked", "live_blocked_form"),
        ("codex", CODEX_IDLE, "idle", None),
        ("codex", CODEX_WORKING, "working", "screen_working_fallback"),
        ("codex", CODEX_APPROVAL, "blocked", "live_strong_blocker"),
        ("opencode", OPENCODE_IDLE, "idle", None),
        ("opencode", OPENCODE_WORKING, "working", "progress_bar_working"),
        ("opencode", OPENCODE_APPROVAL, "blocked", "permission_required"),
    ],
    ids=lambda value: value if isinstance(value, str) and "\n" not in value else "",
)
def test_hand_written_screens_classify_as_intended(
    agent: str, screen: str, state: str, rule: str | None
) -> None:
    assert classify(agent, screen) == (state, rule)


def test_idle_screens_without_an_idle_rule_use_the_known_agent_fallback() -> None:
    explained = shared().explain("pi", PI_IDLE)
    assert explained.state == "idle"
    assert explained.fallback_reason == DEFAULT_KNOWN_AGENT_IDLE_FALLBACK
    assert not explained.visible_idle
    assert explained.manifest_version == "2026.06.10.1"
    assert len(explained.evaluated_rules) == 1


def test_live_chrome_sets_the_visible_flags() -> None:
    idle = shared().detect("claude", CLAUDE_IDLE)
    working = shared().detect("claude", CLAUDE_WORKING)
    blocked = shared().detect("claude", CLAUDE_APPROVAL)
    assert (idle.visible_idle, idle.visible_working, idle.visible_blocker) == (True, False, False)
    assert (working.visible_working, working.visible_idle) == (True, False)
    assert (blocked.visible_blocker, blocked.visible_working) == (True, False)


def test_codex_osc_title_gives_idle_working_and_blocked() -> None:
    assert classify("codex", CODEX_IDLE, title="work") == ("idle", "osc_title_idle")
    assert classify("codex", CODEX_IDLE, title="⠋ work") == ("working", "osc_title_working")
    assert classify("codex", CODEX_IDLE, title="[ . ] Action Required | work") == (
        "blocked",
        "osc_title_blocked",
    )


def test_opencode_interrupt_hint_outranks_the_progress_bar() -> None:
    screen = OPENCODE_WORKING.replace("esc interrupt", "esc to interrupt")
    assert classify("opencode", screen) == ("working", "interrupt_hint_working")


def test_aliases_select_the_same_manifest() -> None:
    assert classify("claude-code", CLAUDE_WORKING) == ("working", "live_turn_working")
    assert classify("open-code", OPENCODE_APPROVAL) == ("blocked", "permission_required")


# -- Herdr's own detection cases -------------------------------------------------------------------


def test_herdr_devin_cases() -> None:
    rule = "─" * 53
    assert (
        classify(
            "devin",
            f"{rule}\n❭ Ask Devin to build features, fix bugs, or work on\n  your code\n{rule}\n"
            "SWE-1.6               Context: 16k / 200k tokens (7%)",
        )[0]
        == "idle"
    )
    assert classify(
        "devin",
        f"Done.\n\n{'─' * 50} (bypass permissions on) ─\n❭\n{'─' * 76}\n"
        "Claude Opus 4.6 Thinking                                    Context: 38k / 200k tokens",
    ) == ("idle", "live_prompt_footer")
    assert (
        classify(
            "devin",
            "◔ Reading shell 91b655\n  │ Timeout: 35s\n\n⠀⡆ Running tools · 27s (esc to interrupt)"
            f"\n{rule}\n❭ Guide Devin while it works",
        )[0]
        == "working"
    )
    assert (
        classify(
            "devin",
            "⏺ Running command\n  └ $ sleep 30\n\n❭ 1 Yes  (Approve once)\n"
            "· 2 Yes, allow `sleep` commands\n· 3 Yes, always allow `sleep` commands\n· 4 No\n"
            "↑↓ select · ↵ confirm · esc cancel",
        )[0]
        == "blocked"
    )


def test_herdr_claude_osc_cases() -> None:
    assert classify("claude", "", title="⠂ project") == ("working", "osc_title_working")
    for frame in "◐◓◑◒":
        title = f"{frame} Initial conversation with Claude"
        assert classify("claude", "", title=title) == ("working", "osc_title_working")
    assert classify("claude", "", title="✳ Claude Code") == ("idle", "osc_title_idle")
    assert classify("claude", "", progress="4;0;") == ("idle", "osc_progress_idle")
    assert classify("claude", "", progress="4;3;") == ("idle", None)
    blocker = "──────────\n  1. Yes\n  2. No\n\nEnter to select · ↑/↓ to navigate · Esc to cancel\n"
    assert classify("claude", blocker, title="✳ Task title", progress="4;3;")[0] == "blocked"


def test_herdr_codex_screen_cases() -> None:
    trust = (
        "> You are in C:\\Users\\user\\project\n\nDo you trust the contents of this\n"
        "directory? Working with untrusted\ncontents comes with higher risk of\n"
        "prompt injection.\n\n› 1. Yes, continue\n2. No, quit\n\nPress enter to continue\n"
    )
    assert classify("codex", trust, title="project") == ("blocked", "trust_directory")
    transcript = "› > You are in C:\\Users\\user\\project\n\nDo you trust the contents of this\n"
    transcript += "directory? Working with untrusted contents comes with higher risk.\n"
    assert classify("codex", transcript, title="project")[0] == "idle"
    weak = "• Working (4s • esc to interrupt)\ndo you want to continue? [y/n]\n› Use /skills\n"
    assert classify("codex", weak, title="project") == ("blocked", "weak_blocker")
    viewer = (
        "• Working (4s • esc to interrupt)\n› transcript\n↑/↓ to scroll · pgup/pgdn to move"
        " · home/end to jump · q to quit · esc to edit prev\n"
    )
    assert classify("codex", viewer, title="project") == ("unknown", "transcript_viewer")
    stale = "◦ Working (1m 16s • esc to interrupt)\n■ Conversation interrupted\n›\n"
    assert classify("codex", stale, title="project") == ("idle", "osc_title_idle")
    indented = "  ◦ Working (1m 16s • esc to interrupt)\n› Use /skills\ngpt-5.6 · /work\n"
    assert classify("codex", indented, title="project") == ("idle", "osc_title_idle")
    assert classify("codex", "do you want to continue? [y/n]\n", title="⠋ llm-proxy") == (
        "working",
        "osc_title_working",
    )


def test_skip_rules_report_skip_state_update_with_a_reason() -> None:
    viewer = (
        "› transcript\n↑/↓ to scroll · pgup/pgdn to move · home/end to jump · q to quit"
        " · esc to edit prev\n"
    )
    explained = shared().explain("codex", viewer, osc_title="project")
    assert explained.skip_state_update
    assert explained.skipped_update_reason == "matched_rule:transcript_viewer"
    assert not explained.visible_idle


# -- generic semantics ----------------------------------------------------------------------------

SEMANTICS = """
[[rules]]
id = "low_contains"
state = "idle"
priority = 1
contains = ["match"]

[[rules]]
id = "high_nested_gates"
state = "working"
priority = 10
contains = ["match"]
all = [
  { any = [{ regex = ["w[io]n"] }, { contains = ["fallback"] }] },
]
not = [
  { contains = ["blocked"] },
]

[[rules]]
id = "line_regex"
state = "blocked"
priority = 20
line_regex = ["^exact line$"]
"""


def test_gates_priority_and_line_regex_follow_herdr(tmp_path: Path) -> None:
    manifests = custom(tmp_path, SEMANTICS)
    assert manifests.detect("codex", "match win").rule_id == "high_nested_gates"
    assert manifests.detect("codex", "match fallback").rule_id == "high_nested_gates"
    assert manifests.detect("codex", "match win blocked").rule_id == "low_contains"
    assert manifests.detect("codex", "before\nexact line\nafter").state == "blocked"
    assert manifests.detect("codex", "an exact line here").state == "idle"


def test_contains_is_case_insensitive(tmp_path: Path) -> None:
    manifests = custom(tmp_path, SEMANTICS)
    assert manifests.detect("codex", "MATCH win").rule_id == "high_nested_gates"


def test_equal_priority_keeps_the_earlier_rule(tmp_path: Path) -> None:
    rules = (
        '[[rules]]\nid = "first"\nstate = "idle"\npriority = 5\ncontains = ["x"]\n'
        '[[rules]]\nid = "second"\nstate = "working"\npriority = 5\ncontains = ["x"]\n'
    )
    assert custom(tmp_path, rules).detect("codex", "x").rule_id == "first"


def test_visible_flags_count_only_with_the_matching_state(tmp_path: Path) -> None:
    rules = (
        '[[rules]]\nid = "mislabeled"\nstate = "working"\nvisible_idle = true\n'
        'visible_blocker = true\ncontains = ["x"]\n'
    )
    detection = custom(tmp_path, rules).detect("codex", "x")
    assert detection.state == "working"
    assert not (detection.visible_idle or detection.visible_blocker or detection.visible_working)


def test_fallbacks_for_unmatched_unknown_and_missing_agents() -> None:
    no_match = shared().explain("codex", "ordinary prompt text")
    assert (no_match.state, no_match.fallback_reason, no_match.visible_idle) == (
        "idle",
        DEFAULT_KNOWN_AGENT_IDLE_FALLBACK,
        False,
    )
    hook_only = shared().explain("omp", "Working...")
    assert (hook_only.state, hook_only.source, hook_only.fallback_reason) == (
        "idle",
        None,
        DEFAULT_KNOWN_AGENT_IDLE_FALLBACK,
    )
    unknown = shared().explain("vim", "Working...")
    assert (unknown.agent, unknown.state, unknown.fallback_reason) == (
        "vim",
        "unknown",
        "unknown_agent",
    )
    assert shared().detect(None, "Working...").state == "unknown"


# -- regions -------------------------------------------------------------------------------------


def test_bottom_non_empty_lines_uses_the_bottom_occurrence() -> None:
    content = "marker\nold\n\nmiddle\nmarker\nnew\n"
    assert region_text("bottom_non_empty_lines(2)", content) == "marker\nnew\n"
    assert region_text("bottom_lines(3)", content) == "middle\nmarker\nnew\n"


def test_top_non_empty_lines_uses_the_top_occurrence() -> None:
    content = "\nmarker\nold\n\nmiddle\nmarker\nnew\n"
    assert region_text("top_non_empty_lines(2)", content) == "\nmarker\nold\n"


def test_prompt_box_regions() -> None:
    screen = "history\nabove\n────────\n❯ typed\n────────\nfooter\n"
    assert region_text("prompt_box_body", screen) == "❯ typed\n"
    assert region_text("above_prompt_box", screen) == "history\nabove\n"
    assert region_text("last_non_empty_above_prompt_box", screen) == "above"
    assert region_text("after_last_horizontal_rule", screen) == "footer\n"
    assert region_text("prompt_box_body", "no rules here\n") == ""


def test_lines_blank_but_for_separator_controls_are_not_empty() -> None:
    # Rust's trim() keeps U+001C..U+001F, so such a line counts as non-empty.
    assert region_text("bottom_non_empty_lines(1)", "a\n\x1c\n") == "\x1c\n"
    assert region_text("bottom_non_empty_lines(1)", "a\n\u3000\n") == "a\n\u3000\n"


def test_short_labelled_rules_are_not_horizontal_rules() -> None:
    assert region_text("after_last_horizontal_rule", "a\n── label\nb\n") == "a\n── label\nb\n"
    assert region_text("after_last_horizontal_rule", "a\n─── label\nb\n") == "b\n"


def test_codex_prompt_marker_regions() -> None:
    screen = "• old block\n› first\nanswer\n› second\ntail\n"
    assert region_text("after_last_prompt_marker", screen) == "tail\n"
    assert region_text("before_current_prompt_marker", screen) == "• old block\n› first\nanswer\n"
    assert region_text("current_prompt_block_marker", screen) == "• old block"
    assert region_text("whole_recent_without_current_prompt_marker", screen) == ""
    stale = "› prompt\n• new block\n"
    assert region_text("before_current_prompt_marker", stale) == stale
    assert region_text("whole_recent_without_current_prompt_marker", stale) == stale


def test_osc_regions_read_the_osc_strings() -> None:
    assert region_text("osc_title", "screen", "title", "4;1") == "title"
    assert region_text("osc_progress", "screen", "title", "4;1") == "4;1"


# -- explain output -------------------------------------------------------------------------------


def test_explain_json_has_herdr_shape_and_evidence() -> None:
    value = explain_to_json(shared().explain("pi", PI_WORKING))
    assert list(value) == [
        "agent",
        "state",
        "manifest_source",
        "manifest_version",
        "cached_remote_version",
        "local_override_shadowing_remote",
        "remote_update_status",
        "remote_update_error",
        "matched_rule",
        "visible_idle",
        "visible_blocker",
        "visible_working",
        "screen_detection_skipped",
        "skip_state_update",
        "skipped_update_reason",
        "fallback_reason",
        "warning",
        "evaluated_rules",
    ]
    assert value["matched_rule"] == {
        "id": "working_literal",
        "priority": 100,
        "region": "whole_recent",
        "state": "working",
    }
    assert (value["manifest_source"], value["visible_working"]) == ("bundled", True)
    evidence = value["evaluated_rules"][0]["evidence"]
    assert evidence["contains"] == ["Working..."]
    assert evidence["region_bytes"] == len(PI_WORKING.encode())
    assert evidence["region_preview"] == PI_WORKING
    long_screen = "Working... " + "x" * 300
    long_evidence = shared().explain("pi", long_screen).evaluated_rules[0]
    assert long_evidence.region_preview == long_screen[:240] + "..."
    assert long_evidence.region_bytes == 311


def test_explain_text_matches_herdr_cli() -> None:
    value = explain_to_json(shared().explain("pi", "⠋ Working...\n"))
    assert explain_text(value) == (
        "agent: pi\nstate: working\nmanifest: bundled 2026.06.10.1\n"
        "rule: working_literal (region=whole_recent priority=100)\n"
        'evidence: "⠋ Working...\\n"\n'
    )
    verbose = explain_text(value, verbose=True).splitlines()
    assert verbose[5:] == [
        "visible: idle=false blocker=false working=true",
        "cached_remote_version: none",
        "local_override_shadowing_remote: false",
        "evaluated_rules:",
        "  ✓ working_literal priority=100 region=whole_recent state=working",
        (
            '    matchers: contains=Array [String("Working...")] regex=Array [] '
            "line_regex=Array [] all=0 any=0 not=0"
        ),
        '    region: bytes=15 preview="⠋ Working...\\n"',
    ]


def test_explain_text_for_fallback_and_hook_authority() -> None:
    fallback = explain_text(explain_to_json(shared().explain("omp", "")))
    assert fallback == (
        "agent: omp\nstate: idle\nmanifest: none unknown\nrule: none\n"
        "fallback_reason: default_known_agent_idle_fallback\n"
    )
    hook = hook_authority_explain("pi", "working")
    assert hook["screen_detection_skipped"] is True
    assert hook["evaluated_rules"] == []
    assert explain_text(hook).endswith(
        "rule: none\nscreen_detection_skip_reason: full_lifecycle_hook_authority\n"
    )
