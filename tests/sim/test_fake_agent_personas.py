"""The claude, codex and opencode fakes and the third-party persona ``herdr-sim fake-agent``.

Screens are checked against the rules of Herdr's own manifests
(``contracts/agent-detection/<kind>.toml``, read unmodified) that should classify them.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from tests.sim.test_fake_agent import PANE, World, messages, world
from tests.waits import wait_until

__all__ = ["world"]

MANIFESTS = Path(__file__).resolve().parents[3] / "shared" / "contracts" / "agent-detection"


def _python_regex(rust: str) -> re.Pattern[str]:
    """Rust's ``\\x{HHHH}`` escapes in Python's syntax."""
    return re.compile(re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda m: f"\\U{int(m[1], 16):08x}", rust))


def rule(kind: str, rule_id: str) -> dict[str, Any]:
    manifest = tomllib.loads((MANIFESTS / f"{kind}.toml").read_text())
    rules: list[dict[str, Any]] = manifest["rules"]
    return next(r for r in rules if r["id"] == rule_id)


def any_line_matches(pattern: str, text: str) -> bool:
    compiled = _python_regex(pattern)
    return any(compiled.search(line) for line in text.splitlines())


def contains_all(words: list[str], text: str) -> bool:
    lowered = text.lower()
    return all(word.lower() in lowered for word in words)


# -- claude ------------------------------------------------------------------------------------


def test_claude_reports_its_session_once_like_the_session_start_hook(world: World) -> None:
    claude = world.start("claude")
    world.herdr.wait_for("pane.report_agent_session", 3)
    claude.wait_screen("❯")
    claude.prompt("hi")
    claude.wait_screen("ok")
    (report,) = world.reports()
    assert re.fullmatch(r"herdr:claude:\d{13}:\d{6}", report["id"])
    params = report["params"]
    assert set(params) == {
        "pane_id",
        "source",
        "agent",
        "seq",
        "agent_session_id",
        "agent_session_path",
        "session_start_source",
    }
    assert (params["pane_id"], params["source"], params["agent"]) == (
        PANE,
        "herdr:claude",
        "claude",
    )
    assert params["session_start_source"] == "startup"
    assert abs(params["seq"] - time.time_ns()) < 60 * 10**9


def test_claude_keeps_its_transcript_where_real_claude_code_does(world: World) -> None:
    # real Claude Code 2.1 (tests/real_agents/test_claude.py): $CLAUDE_CONFIG_DIR (default
    # ~/.claude)/projects/<cwd, non-alphanumerics as ->/<session id>.jsonl; the fake claude
    # used to report a pi session file under ~/.pi/agent/sessions
    claude = world.start("claude")
    world.herdr.wait_for("pane.report_agent_session", 3)
    claude.wait_screen("❯")
    claude.prompt("hi")
    claude.wait_screen("ok")
    params = world.reports()[0]["params"]
    bucket = re.sub(r"[^A-Za-z0-9]", "-", str(world.cwd))
    expected = world.home / ".claude" / "projects" / bucket / f"{params['agent_session_id']}.jsonl"
    assert params["agent_session_path"] == str(expected)
    # in Claude Code's own format (it used to be pi's): entries linked by uuid/parentUuid
    entries = wait_until(lambda: jsonl(expected) if "assistant" in text_of(expected) else [],
                         5.0, what="the turn in the transcript")  # fmt: skip
    user, answer = (e for e in entries if e["type"] in ("user", "assistant"))
    assert user["message"] == {"role": "user", "content": "hi"}
    assert (user["sessionId"], user["cwd"]) == (params["agent_session_id"], str(world.cwd))
    assert answer["parentUuid"] == user["uuid"]
    assert answer["message"]["content"] == [{"type": "text", "text": "ok"}]
    assert answer["message"]["stop_reason"] == "end_turn"


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text_of(path).splitlines() if line.strip()]


def text_of(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


def test_codex_writes_a_rollout_in_real_codexs_format_and_resumes_it(world: World) -> None:
    # real Codex 0.171's rollout (tests/real_agents/test_codex.py); it used to be pi's format
    codex = world.start("codex")
    world.herdr.wait_for("pane.report_agent_session", 3)
    codex.wait_screen("›")
    codex.prompt("hi")
    codex.wait_screen("ok")
    session_id = world.reports()[0]["params"]["agent_session_id"]
    sessions = world.home / ".codex" / "sessions"
    (path,) = wait_until(lambda: list(sessions.glob(f"*/*/*/rollout-*-{session_id}.jsonl")),
                         5.0, what="the rollout")  # fmt: skip
    entries = wait_until(lambda: jsonl(path) if "task_complete" in text_of(path) else [], 5.0,
                         what="the finished turn")  # fmt: skip
    meta = entries[0]
    assert meta["type"] == "session_meta"
    assert (meta["payload"]["id"], meta["payload"]["cwd"]) == (session_id, str(world.cwd))
    items = [e["payload"] for e in entries if e["type"] == "response_item"]
    assert [(i["role"], i["content"][0]["type"], i["content"][0]["text"]) for i in items] == [
        ("user", "input_text", "hi"), ("assistant", "output_text", "ok")]  # fmt: skip
    complete = entries[-1]["payload"]
    assert (complete["type"], complete["last_agent_message"]) == ("task_complete", "ok")
    assert complete["turn_id"] == entries[1]["payload"]["turn_id"]  # task_started's
    assert [e["ordinal"] for e in entries] == list(range(len(entries)))


def test_codex_keeps_its_rollout_where_real_codex_does(tmp_path: Path) -> None:
    # real Codex 0.171 (tests/real_agents/test_codex.py): $CODEX_HOME (default ~/.codex)/
    # sessions/YYYY/MM/DD/rollout-<local time>-<session id>.jsonl, found again by id on resume
    from herdr_sim.fake_agent.transcripts import transcript_path

    env = {"CODEX_HOME": str(tmp_path / "codex")}
    ms = 1_796_000_000_000
    path = transcript_path("codex", "/w", "01a2-id", ms, env)
    stamp = time.localtime(ms / 1000)
    day = time.strftime("%Y/%m/%d", stamp)
    name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', stamp)}-01a2-id.jsonl"
    assert path == tmp_path / "codex" / "sessions" / day / name
    path.parent.mkdir(parents=True)
    path.write_text("{}\n")
    assert transcript_path("codex", "/w", "01a2-id", ms + 86_400_000, env) == path  # resume


def test_codex_accepts_real_codexs_no_daemon_flag() -> None:
    # the real-agent fixture starts real Codex with --no-daemon (else its app server outlives
    # the pane); the fake codex used to refuse it, and other kinds still do
    from herdr_sim.fake_agent.app import UsageError, parse_args
    from herdr_sim.fake_agent.claude_flags import ClaudeUsageError

    assert parse_args(["--no-daemon", "hello"], "codex").prompt == "hello"
    with pytest.raises(UsageError, match="unknown option"):
        parse_args(["--no-daemon"], "pi")
    with pytest.raises(ClaudeUsageError, match="unknown option"):
        parse_args(["--no-daemon"], "claude")


def test_claude_resume_reports_the_same_session_with_source_resume(world: World) -> None:
    world.start("claude", "--resume", "abc-123")
    world.herdr.wait_for("pane.report_agent_session", 3)
    params = world.reports()[0]["params"]
    assert params["agent_session_id"] == "abc-123"
    assert params["session_start_source"] == "resume"


def test_claude_screens_match_its_manifest(world: World) -> None:
    scenario = Scenario().wait(250).ask("rm -rf build").reply("done")
    claude = world.start("claude", "--scenario", world.scenario(scenario))
    idle = claude.wait_screen("❯")
    assert any_line_matches(rule("claude", "live_prompt_box")["line_regex"][0], idle)
    assert _python_regex(rule("claude", "osc_title_idle")["regex"][0]).search(claude.title())
    claude.prompt("go")
    working = claude.wait_screen("esc to interrupt")
    live = rule("claude", "live_turn_working")["any"][1]["line_regex"][0]
    assert any_line_matches(live, working)
    assert _python_regex(rule("claude", "osc_title_working")["regex"][0]).search(claude.title())
    blocked = claude.wait_screen("Do you want to proceed?")
    bash = rule("claude", "bash_permission_prompt")
    assert contains_all(bash["contains"], blocked)
    assert contains_all(bash["any"][0]["contains"], blocked)
    assert any(any_line_matches(alt["line_regex"][0], blocked) for alt in bash["all"][0]["any"])
    dialog = blocked.rsplit("─" * 20, 1)[1]  # below the last rule (the prompt echo is above)
    assert not any_line_matches(r"^\s*❯", dialog.replace("❯ 1.", "1."))  # no prompt box
    claude.prompt("")
    claude.wait_screen("done")


# -- codex -------------------------------------------------------------------------------------


def test_codex_reports_its_session_once_like_its_hook(world: World) -> None:
    world.start("codex")
    world.herdr.wait_for("pane.report_agent_session", 3)
    (report,) = world.reports()
    assert re.fullmatch(r"herdr:codex:\d{13}:\d{6}", report["id"])
    assert set(report["params"]) == {
        "pane_id",
        "source",
        "agent",
        "seq",
        "agent_session_id",
        "session_start_source",
    }
    assert report["params"]["source"] == "herdr:codex"


def test_codex_titles_match_its_manifest(world: World) -> None:
    scenario = Scenario().wait(250).ask("rm -rf build")
    codex = world.start("codex", "--scenario", world.scenario(scenario))
    codex.wait_screen("›")
    idle = rule("codex", "osc_title_idle")
    assert _python_regex(idle["regex"][0]).search(codex.title())
    assert not _python_regex(idle["not"][0]["regex"][0]).search(codex.title())
    codex.prompt("go")
    codex.wait_screen("esc to interrupt")
    assert _python_regex(rule("codex", "osc_title_working")["regex"][0]).search(codex.title())
    blocked = codex.wait_screen("Allow command?")
    assert codex.title() == "Action Required"
    assert contains_all(["allow command?"], blocked)


# -- opencode ----------------------------------------------------------------------------------


def test_opencode_reports_the_full_lifecycle(world: World) -> None:
    scenario = Scenario().wait(300).ask("Allow edit?").reply("done")
    opencode = world.start("opencode", "--scenario", world.scenario(scenario))
    world.herdr.wait_for("pane.report_agent_session", 3)
    opencode.prompt("go")
    working = opencode.wait_screen("esc interrupt")
    assert any_line_matches(rule("opencode", "progress_bar_working")["regex"][0], working)
    reports = world.wait_states("working", "blocked")
    blocked = opencode.wait_screen("Permission required")
    assert rule("opencode", "permission_required")["any"][0]["contains"][0] in blocked
    opencode.prompt("y")
    reports = world.wait_states("working", "blocked", "working", "idle")
    first = reports[0]
    assert first["method"] == "pane.report_agent_session"
    assert "seq" not in first["params"]
    assert first["params"]["session_start_source"] == "select"
    session = first["params"]["agent_session_id"]
    states = reports[1:]
    assert all(r["params"]["agent_session_id"] == session for r in states)
    assert all(r["params"]["source"] == "herdr:opencode" for r in states)
    assert states[1]["params"]["message"] == "Allow edit?"
    seqs = [r["params"]["seq"] for r in states]
    assert seqs == sorted(seqs) and len(set(seqs)) == 4


def opencode_session(db: Path, session_id: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """A session read back as opencode reads it: its messages by creation time and id, each
    message's parts by id (ids grow with time), ``data`` JSON. Opened read-only: a reader
    never creates the database the agent is about to create."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        messages = connection.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
            (session_id,),
        ).fetchall()
        return [
            (json.loads(data)["role"], [json.loads(p) for (p,) in connection.execute(
                "SELECT data FROM part WHERE message_id = ? ORDER BY id", (message_id,))])
            for message_id, data in messages
        ]  # fmt: skip


def opencode_turns_so_far(db: Path, session_id: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """:func:`opencode_session` for a wait's probe: while the agent creates or writes the
    database, opening or reading it can fail (no file yet, locked); that answers "not yet"."""
    try:
        return opencode_session(db, session_id)
    except sqlite3.OperationalError:
        return []


def test_opencode_keeps_its_session_in_opencode_db_like_opencode_1_18(world: World) -> None:
    # real opencode 1.18.33 (tests/real_agents/test_opencode.py) keeps sessions in
    # $XDG_DATA_HOME/opencode/opencode.db with ses_/msg_/prt_ ids; the fake opencode used to
    # write a pi session file under ~/.pi and report a UUID
    scenario = Scenario().run_tool("bash", "echo herdr-$((6*7))").reply("It printed 42.")
    opencode = world.start("opencode", "--scenario", world.scenario(scenario))
    world.herdr.wait_for("pane.report_agent_session", 3)
    opencode.prompt("run it")
    world.wait_states("working", "idle")
    session_id = world.reports()[0]["params"]["agent_session_id"]
    assert re.fullmatch(r"ses_[0-9a-f]{12}[A-Za-z0-9]{14}", session_id)
    db = world.home / ".local" / "share" / "opencode" / "opencode.db"
    with contextlib.closing(sqlite3.connect(db)) as connection:
        row = connection.execute(
            "SELECT project_id, directory, version, agent, model FROM session WHERE id = ?",
            (session_id,),
        ).fetchone()
    assert row[:4] == ("global", str(world.cwd), "1.18.33", "build")
    assert json.loads(row[4]) == {"id": "fake-model", "providerID": "fake"}
    (user, (prompt,)), (step1, parts1), (step2, parts2) = opencode_session(db, session_id)
    assert (user, prompt) == ("user", {"type": "text", "text": "run it"})
    assert (step1, [p["type"] for p in parts1]) == (
        "assistant", ["step-start", "tool", "step-finish"])  # fmt: skip
    tool = parts1[1]
    assert (tool["tool"], tool["state"]["status"], tool["state"]["input"]) == (
        "bash", "completed", {"command": "echo herdr-$((6*7))"})  # fmt: skip
    assert tool["state"]["output"] == "herdr-42\n" and parts1[2]["reason"] == "tool-calls"
    assert (step2, [p["type"] for p in parts2]) == (
        "assistant",
        ["step-start", "text", "step-finish"],
    )
    assert (parts2[1]["text"], parts2[2]["reason"]) == ("It printed 42.", "stop")
    assert not (world.home / ".pi").exists()


def test_opencode_continues_a_session_by_id(world: World) -> None:
    # Herdr resumes opencode as `opencode --session <id>` (src/agent_resume.rs)
    first = world.start("opencode")
    world.herdr.wait_for("pane.report_agent_session", 3)
    first.prompt("one")
    first.wait_screen("ok")
    session_id = world.reports()[0]["params"]["agent_session_id"]
    db = world.home / ".local" / "share" / "opencode" / "opencode.db"
    # the answer is on screen a moment before it is in the database
    wait_until(lambda: len(opencode_turns_so_far(db, session_id)) == 2, 3, 0.02, "the first turn")
    first.close()
    again = world.start("opencode", "--session", session_id)

    def sessions() -> list[dict[str, Any]]:
        return [r for r in world.reports() if r["method"] == "pane.report_agent_session"]

    resumed = wait_until(lambda: sessions()[1:], 3, 0.01, "the resumed session's report")
    assert resumed[0]["params"]["agent_session_id"] == session_id
    again.wait_screen("╹▀")
    again.prompt("two")

    def both_turns() -> list[tuple[str, list[dict[str, Any]]]]:
        turns = opencode_turns_so_far(db, session_id)
        return turns if len(turns) == 4 else []

    turns = wait_until(both_turns, 3, 0.02, "the second turn")
    assert [parts[0]["text"] for role, parts in turns if role == "user"] == ["one", "two"]


def test_opencode_input_box_ends_in_the_real_bottom_border(world: World) -> None:
    # opencode 1.18.33's bottom rows (captured from the real one): the input box is a ┃ rail
    # whose last row names the agent and model, closed by ╹▀▀▀…, the status row below;
    # screen-scraping clients find the input region by that border
    opencode = world.start("opencode")
    idle = opencode.wait_screen("╹▀")
    rows = [line.rstrip() for line in idle.splitlines() if line.strip()]
    border = next(i for i, line in enumerate(rows) if line.lstrip().startswith("╹▀"))
    assert re.fullmatch(r"  ╹▀{20,}", rows[border])
    assert rows[border - 1] == "  ┃  Build · fake-model fake"
    assert rows[border - 3].startswith("  ┃  Ask anything...")  # the empty box's placeholder
    assert "ctrl+p commands" in rows[border + 1] and border + 1 == len(rows) - 1
    opencode.send(b"typed words")
    assert "  ┃  typed words" in opencode.wait_screen("typed words")


# -- the third-party persona -------------------------------------------------------------------


def third_party_run(world: World, *argv: str) -> list[dict[str, Any]]:
    count = len(world.reports())
    agent = world.start("fake-agent", "--session-dir", str(world.base / "fa"), *argv)
    agent.wait_screen("fake-agent>")
    wait_until(lambda: len(world.reports()) > count, 3, 0.01, "startup report")
    agent.prompt("hi")
    agent.wait_screen("ok")
    agent.prompt("/exit")
    assert agent.wait_exit() == 0
    return world.reports()


def test_third_party_persona_integrates_as_the_guide_says(world: World) -> None:
    reports = third_party_run(world)
    shapes = [(r["method"], r["params"].get("state")) for r in reports]
    assert shapes == [
        ("pane.report_agent", "idle"),
        ("pane.report_agent", "working"),
        ("pane.report_agent", "idle"),
        ("pane.release_agent", None),
    ]
    for report in reports:
        assert report["params"]["source"] == "herdr-sim-fake-agent"
        assert not report["params"]["source"].startswith("herdr:")
        assert report["params"]["agent"] == "fake-agent"
        assert report["params"]["pane_id"] == PANE
    seqs = [r["params"]["seq"] for r in reports]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    first = reports[0]["params"]
    session = first["agent_session_id"]
    assert first["resume_argv"] == [
        "herdr-sim",
        "fake-agent",
        "--resume",
        session,
        "--session-dir",
        str(world.base / "fa"),
    ]
    assert "resume_argv" not in reports[1]["params"]


def test_third_party_resume_continues_the_session_with_a_higher_seq(world: World) -> None:
    first = third_party_run(world)
    argv = first[0]["params"]["resume_argv"]
    assert argv[:2] == ["herdr-sim", "fake-agent"]
    second = third_party_run(world, *argv[2:])[len(first) :]
    session = first[0]["params"]["agent_session_id"]
    assert second[0]["params"]["agent_session_id"] == session
    assert second[0]["params"]["seq"] > first[-1]["params"]["seq"]
    roles = [m["role"] for m in messages(world.base / "fa" / f"{session}.jsonl")]
    assert roles == ["system", "user", "assistant", "user", "assistant"]


def test_fake_agent_command_runs_any_kind(world: World) -> None:
    agent = world.start("fake-agent", "--kind", "pi")
    world.wait_states("idle")
    assert world.reports()[0]["params"]["source"] == "herdr:pi"
    agent.prompt("/exit")
    assert agent.wait_exit() == 0


@pytest.mark.parametrize("argv", [["--bogus"], ["--kind", "gemini"]])
def test_fake_agent_rejects_bad_usage(world: World, argv: list[str]) -> None:
    agent = world.start("fake-agent", *argv)
    assert agent.wait_exit() == 2
