"""Restore with real fake agents, as the integration guide's verification section describes:
run agents in a named session, ``herdr session stop`` it, start it again, and every agent
that left a resume command is back in the same pane, on the same session, reporting again.

One run of that story (a module fixture, :class:`Story`) drives four agents at once, each
through its own resume path: ``pi`` (full-lifecycle official, Herdr's plan
``pi --session <path>``), the third-party persona ``herdr-sim fake-agent`` (the command it
reported), and ``claude`` / ``codex`` (session-only officials: ``claude --resume <id>``,
``codex resume <id>``). A third start with ``resume_agents_on_restore = false`` gets plain
shells. The fixture only records what it saw; each test asserts one behaviour of it.
Sources: the guide (seeds/004, "Comprobar la integración"), reference §10 and §17.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import call
from herdr_sim.model.session import Session
from herdr_sim.persist import session as persist
from herdr_sim.server import WIRE_TAPS
from pytest_herdr import WaitTimeout
from tests.contract_check import contracts_dir, violations
from tests.waits import SCALE, wait_until

#: the simulator's own seams or settings (herdr_sim.testing): not a real Herdr's
pytestmark = pytest.mark.herdr_sim_only

NAME = "agents"
MANIFESTS = contracts_dir() / "agent-detection"
#: pane → the command line typed into its shell in the first run
COMMANDS = {
    "w1:p1": "pi",
    "w1:p2": "herdr-sim fake-agent",
    "w1:p3": "claude",
    "w1:p4": "codex",
}
#: pane → the agent label Herdr shows for it
AGENTS = {"w1:p1": "pi", "w1:p2": "fake-agent", "w1:p3": "claude", "w1:p4": "codex"}
#: request-id prefixes of each agent's reports (the fakes' reporters)
REPORT_IDS = {
    "w1:p1": "herdr:pi:",
    "w1:p2": "herdr-sim-fake-agent:",
    "w1:p3": "herdr:claude:",
    "w1:p4": "herdr:codex:",
}
QUESTION = "Continue after the restart?"
WAIT = 10.0


def api(sim: Simulator, method: str, **params: Any) -> dict[str, Any]:
    """One request over the socket; the result."""
    return call(sim.socket_path, method, params)


def pane_info(sim: Simulator, pane: str) -> dict[str, Any]:
    """PaneInfo."""
    info: dict[str, Any] = api(sim, "pane.get", pane_id=pane)["pane"]
    return info


def wait_status(sim: Simulator, pane: str, agent: str | None, status: str) -> dict[str, Any]:
    """Wait until the pane shows ``agent`` with ``status``; its PaneInfo."""

    def seen() -> dict[str, Any] | None:
        info = pane_info(sim, pane)
        return info if (info.get("agent"), info["agent_status"]) == (agent, status) else None

    return wait_until(seen, WAIT, what=f"{pane} showing {agent} {status}")


def wait_session(sim: Simulator, pane: str) -> dict[str, Any]:
    """Wait until the pane's agent reported its session; its PaneInfo."""

    def seen() -> dict[str, Any] | None:
        info = pane_info(sim, pane)
        return info if info.get("agent_session") else None

    return wait_until(seen, WAIT, what=f"{pane}'s agent session reported")


def wait_line(sim: Simulator, pane: str, regex: str, source: str = "recent") -> str:
    """Block server-side (bounded) until a line of the pane matches."""
    line: str = api(
        sim,
        "pane.wait_for_output",
        pane_id=pane,
        source=source,
        timeout_ms=int(WAIT * 1000 * SCALE),
        match={"type": "regex", "value": regex},
    )["matched_line"]
    return line


def enter(sim: Simulator, pane: str, text: str) -> None:
    """Type a line into the pane and press Enter."""
    api(sim, "pane.send_input", pane_id=pane, text=text, keys=["Enter"])


def listed(sim: Simulator) -> list[str]:
    """``pane.list`` ids in the server's order."""
    return [pane["pane_id"] for pane in api(sim, "pane.list")["panes"]]


def foreground(sim: Simulator, pane: str) -> list[tuple[str, list[str]]]:
    """The pane's foreground processes as (name, argv)."""
    info = api(sim, "pane.process_info", pane_id=pane)["process_info"]
    return [(p["name"], p.get("argv") or []) for p in info.get("foreground_processes", [])]


def user_prompts(path: Path) -> list[str]:
    """The user prompts recorded in a pi-format session file, in order."""
    prompts: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        if entry.get("type") == "message" and message.get("role") == "user":
            prompts.extend(part["text"] for part in message["content"] if part["type"] == "text")
    return prompts


def session_header(path: Path) -> dict[str, Any]:
    """The ``session`` header (first line) of a pi-format session file."""
    header: dict[str, Any] = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    return header


def saved_panes(session_json: Path) -> dict[str, dict[str, Any]]:
    """The saved panes of the first tab of the first workspace, by pane number."""
    data = json.loads(session_json.read_text(encoding="utf-8"))
    panes: dict[str, dict[str, Any]] = data["workspaces"][0]["tabs"][0]["panes"]
    return panes


@dataclass
class Run:
    """What one start of the named session showed."""

    pane_ids: list[str] = field(default_factory=list)
    panes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: pane → its foreground processes as (name, argv)
    procs: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    report_ids: list[str] = field(default_factory=list)


@dataclass
class Story:
    """Everything the fixture saw across the three starts of the session."""

    root: Path
    first: Run
    resumed: Run
    plain: Run
    stop_result: subprocess.CompletedProcess[str]
    socket_gone_after_stop: bool
    saved_before: dict[str, dict[str, Any]]
    saved_after: dict[str, dict[str, Any]]
    saved_plain: dict[str, dict[str, Any]]
    pi_file: Path
    fake_file: Path
    pi_prompts_before: list[str]
    fake_prompts_before: list[str]
    pi_header_before: dict[str, Any]
    fake_header_before: dict[str, Any]
    blocked: dict[str, dict[str, Any]]
    pi_prompts_after: list[str]
    fake_prompts_after: list[str]
    plain_text: dict[str, str]
    violations: list[str]


class Wire:
    """A wire tap: ids of the successful responses and any protocol-22 violation."""

    def __init__(self) -> None:
        self.ok_ids: list[str] = []
        self.violations: list[str] = []

    def __call__(self, kind: str, line: dict[str, Any]) -> None:
        self.violations.extend(violations(kind, line))
        if kind == "response" and "result" in line:
            self.ok_ids.append(str(line.get("id", "")))

    def mark(self) -> int:
        """The position to read new response ids from."""
        return len(self.ok_ids)

    def await_report(self, mark: int, pane: str) -> None:
        """Wait (bounded) until ``pane``'s agent has a report accepted since ``mark``.

        A pane shows its agent idle from process and screen detection alone, before the
        agent's own report arrives (claude and codex report only their session, from a
        background thread, once their screen is up), so waiting for idle is no wait for the
        report. A report that never comes is not raised here: the test of that agent's
        reports fails, naming it.
        """
        with contextlib.suppress(WaitTimeout):
            wait_until(
                lambda: any(rid.startswith(REPORT_IDS[pane]) for rid in self.ok_ids[mark:]),
                WAIT,
                what=f"a report of {pane}'s agent",
            )


def _story(root: Path, wire: Wire) -> Story:
    home, config, work = root / "home", root / "cfg", root / "work"
    home.mkdir()
    work.mkdir()
    scenario = root / "scenario.json"
    scenario.write_text(json.dumps({"default_reply": "answer one"}))
    env = {
        "HOME": str(home),
        # `herdr-sim` (the third-party persona's resume command) must be on the pane PATH
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "HERDR_SIM_CONFIG_DIR": str(config),
        "HERDR_SIM_FAKE_SCENARIO": str(scenario),
    }

    def start(**settings: Any) -> Simulator:
        with pytest.MonkeyPatch.context() as patch:
            # a named session resolves its socket from the environment, as the CLI does
            patch.setenv("HERDR_SIM_CONFIG_DIR", str(config))
            sim = Simulator(
                session_name=NAME, base_env=env, agent_manifests_dir=MANIFESTS, **settings
            )
        return sim.start()

    # -- first run: four agents, two of them with a turn in their session files ------------
    sim = start()
    try:
        first = Run()
        root_pane = api(sim, "workspace.create", cwd=str(work))["root_pane"]["pane_id"]
        right = api(sim, "pane.split", target_pane_id=root_pane, direction="right")["pane"]
        api(sim, "pane.split", target_pane_id=root_pane, direction="down")
        api(sim, "pane.split", target_pane_id=right["pane_id"], direction="down")
        for pane, command in COMMANDS.items():
            wait_line(sim, pane, r"^\$")
            enter(sim, pane, command)
        for pane, agent in AGENTS.items():
            wait_status(sim, pane, agent, "idle")
        for pane in ("w1:p1", "w1:p2"):
            enter(sim, pane, "before the restart")
        for pane in ("w1:p1", "w1:p2"):
            wait_line(sim, pane, "answer one", source="visible")
            first.panes[pane] = wait_status(sim, pane, AGENTS[pane], "idle")
        for pane in ("w1:p3", "w1:p4"):  # idle came from detection; the session, from the report
            first.panes[pane] = wait_session(sim, pane)
        first.pane_ids = listed(sim)
        session_json = sim.socket_path.with_name("session.json")
        saved_before = saved_panes(session_json)
        pi_file = Path(first.panes["w1:p1"]["agent_session"]["value"])
        fake_id = saved_before["2"]["resume"]["argv"][3]
        # the fakes keep their state in the simulator's sandbox HOME (agent-home beside the
        # socket), not in the HOME of base_env
        assert sim.agent_home == sim.socket_path.with_name("agent-home")
        fake_file = sim.agent_home / ".herdr-sim" / "fake-agent" / f"{fake_id}.jsonl"
        wait_until(lambda: "answer one" in fake_file.read_text(), WAIT, what="fake turn saved")
        wait_until(lambda: "answer one" in pi_file.read_text(), WAIT, what="pi turn saved")
        pi_prompts_before, fake_prompts_before = user_prompts(pi_file), user_prompts(fake_file)
        pi_header_before, fake_header_before = session_header(pi_file), session_header(fake_file)
        # the guide's step 2: stop the session by name
        stop_result = subprocess.run(
            [str(sim.cli_path), "session", "stop", NAME],
            env=env,
            capture_output=True,
            text=True,
            timeout=30 * SCALE,
            check=False,
        )
        assert sim.wait_stopped(15 * SCALE)
        socket_gone = not sim.socket_path.exists()
    finally:
        sim.stop()

    # -- second run: the same session again; each agent resumes and reports ---------------
    scenario.write_text(
        json.dumps({"turns": [{"steps": [{"ask": QUESTION}, {"reply": "answer two"}]}]})
    )
    mark = wire.mark()
    sim = start()
    try:
        resumed = Run()
        for pane, agent in AGENTS.items():
            resumed.panes[pane] = wait_status(sim, pane, agent, "idle")
        for pane in AGENTS:
            wire.await_report(mark, pane)
        resumed.pane_ids = listed(sim)
        for pane in AGENTS:
            resumed.procs[pane] = foreground(sim, pane)
        blocked: dict[str, dict[str, Any]] = {}
        for pane in ("w1:p1", "w1:p2"):
            enter(sim, pane, "after the restart")
        for pane in ("w1:p1", "w1:p2"):
            blocked[pane] = wait_status(sim, pane, AGENTS[pane], "blocked")
            enter(sim, pane, "yes")
        for pane in ("w1:p1", "w1:p2"):
            wait_line(sim, pane, "answer two", source="visible")
            wait_status(sim, pane, AGENTS[pane], "idle")
        wait_until(lambda: "answer two" in pi_file.read_text(), WAIT, what="pi turn saved")
        wait_until(lambda: "answer two" in fake_file.read_text(), WAIT, what="fake turn saved")
        resumed.report_ids = wire.ok_ids[mark:]
        api(sim, "server.stop")
        assert sim.wait_stopped(15 * SCALE)
    finally:
        sim.stop()
    saved_after = saved_panes(session_json)

    # -- third run: resume turned off, plain shells ----------------------------------------
    mark = wire.mark()
    sim = start(resume_agents_on_restore=False)
    try:
        plain = Run(pane_ids=listed(sim))
        plain_text: dict[str, str] = {}
        for pane in AGENTS:
            enter(sim, pane, "echo PLAIN-$((6*7))")
            wait_line(sim, pane, "^PLAIN-42$")
        for pane in AGENTS:
            plain.panes[pane] = pane_info(sim, pane)
            plain.procs[pane] = foreground(sim, pane)
            plain_text[pane] = api(sim, "pane.read", pane_id=pane, source="recent")["read"]["text"]
        plain.report_ids = wire.ok_ids[mark:]
    finally:
        sim.stop()
    saved_plain = saved_panes(session_json)

    return Story(
        root=root,
        first=first,
        resumed=resumed,
        plain=plain,
        stop_result=stop_result,
        socket_gone_after_stop=socket_gone,
        saved_before=saved_before,
        saved_after=saved_after,
        saved_plain=saved_plain,
        pi_file=pi_file,
        fake_file=fake_file,
        pi_prompts_before=pi_prompts_before,
        fake_prompts_before=fake_prompts_before,
        pi_header_before=pi_header_before,
        fake_header_before=fake_header_before,
        blocked=blocked,
        pi_prompts_after=user_prompts(pi_file),
        fake_prompts_after=user_prompts(fake_file),
        plain_text=plain_text,
        violations=list(wire.violations),
    )


@pytest.fixture(scope="module")
def story() -> Iterator[Story]:
    """Run the guide's verification once for the module (three starts of one session)."""
    root = Path(tempfile.mkdtemp(prefix="hsr-", dir="/tmp"))
    wire = Wire()
    WIRE_TAPS.append(wire)
    try:
        yield _story(root, wire)
    finally:
        WIRE_TAPS.remove(wire)
        shutil.rmtree(root, ignore_errors=True)


def reports(run: Run, pane: str) -> list[str]:
    """The ids of the accepted requests of ``pane``'s agent during ``run``."""
    return [rid for rid in run.report_ids if rid.startswith(REPORT_IDS[pane])]


def agent_command(run: Run, pane: str) -> tuple[str, list[str]]:
    """The pane's one foreground process in ``run``: its process name, and the command line
    as typed (a fake agent is a script: ``python [-S] /path/to/NAME ARGS`` → ``NAME ARGS``)."""
    assert len(run.procs[pane]) == 1, run.procs[pane]
    name, argv = run.procs[pane][0]
    script = argv[2:] if argv[1:2] == ["-S"] else argv[1:]
    return name, [Path(script[0]).name, *script[1:]]


# -- the guide's verification: stop, start again, resumed and reporting -------------------------


def test_everything_the_simulator_sent_matches_protocol_22(story: Story) -> None:
    assert story.violations == []


def test_session_stop_by_name_stops_the_server_and_removes_its_socket(story: Story) -> None:
    assert story.stop_result.returncode == 0, story.stop_result.stderr
    assert story.stop_result.stdout == f"stopped session {NAME}\n"
    assert story.socket_gone_after_stop


def test_agents_come_back_in_the_same_panes(story: Story) -> None:
    assert sorted(story.first.pane_ids) == sorted(AGENTS)
    assert story.resumed.pane_ids == story.first.pane_ids
    for pane, agent in AGENTS.items():
        before, after = story.first.panes[pane], story.resumed.panes[pane]
        assert (after["pane_id"], after["agent"]) == (pane, agent)
        assert after["terminal_id"] != before["terminal_id"]
        assert after["cwd"] == before["cwd"] == str(story.root / "work")


def test_pi_runs_herdrs_resume_plan_with_its_session_file(story: Story) -> None:
    # the process is named after the kind, so process detection sees pi again
    assert agent_command(story.resumed, "w1:p1") == ("pi", ["pi", "--session", str(story.pi_file)])


def test_pi_is_detected_as_pi_again_with_the_same_session(story: Story) -> None:
    after = story.resumed.panes["w1:p1"]
    assert after["agent"] == "pi"
    assert after["agent_session"] == story.first.panes["w1:p1"]["agent_session"]
    assert after["agent_session"] == {
        "source": "herdr:pi",
        "agent": "pi",
        "kind": "path",
        "value": str(story.pi_file),
    }


def test_pi_reports_again_after_the_restart(story: Story) -> None:
    assert reports(story.resumed, "w1:p1")
    # pi's manifest has no blocked rule: a blocked pane can only come from pi's own report
    blocked = story.blocked["w1:p1"]
    assert (blocked["agent"], blocked["agent_status"]) == ("pi", "blocked")


def test_pi_continues_the_same_session_file(story: Story) -> None:
    assert story.pi_prompts_before == ["before the restart"]
    assert story.pi_prompts_after == ["before the restart", "after the restart"]
    assert session_header(story.pi_file) == story.pi_header_before


def test_third_party_agent_runs_the_resume_command_it_reported(story: Story) -> None:
    reported = story.saved_before["2"]["resume"]
    assert reported["source"] == "herdr-sim-fake-agent"
    assert reported["agent"] == "fake-agent"
    session_id = story.fake_header_before["id"]
    assert reported["argv"] == ["herdr-sim", "fake-agent", "--resume", session_id]
    _, command = agent_command(story.resumed, "w1:p2")
    assert command == reported["argv"]


def test_third_party_agent_reports_again_with_the_same_session(story: Story) -> None:
    assert reports(story.resumed, "w1:p2")
    # the process is `herdr-sim` (no agent kind): only its reports make the pane an agent
    assert story.resumed.panes["w1:p2"]["agent"] == "fake-agent"
    assert story.blocked["w1:p2"]["agent_status"] == "blocked"
    # its new reports carried the same resume command, which the session saved again
    assert story.saved_after["2"]["resume"] == story.saved_before["2"]["resume"]


def test_third_party_agent_continues_the_same_session_file(story: Story) -> None:
    assert story.fake_prompts_before == ["before the restart"]
    assert story.fake_prompts_after == ["before the restart", "after the restart"]
    assert session_header(story.fake_file) == story.fake_header_before


@pytest.mark.parametrize(
    ("pane", "words"),
    [("w1:p3", ["claude", "--resume"]), ("w1:p4", ["codex", "resume"])],
)
def test_session_only_agents_resume_by_their_session_id(
    story: Story, pane: str, words: list[str]
) -> None:
    session_id = story.first.panes[pane]["agent_session"]["value"]
    assert agent_command(story.resumed, pane) == (words[0], [*words, session_id])
    after = story.resumed.panes[pane]
    assert after["agent"] == words[0]
    assert after["agent_session"] == story.first.panes[pane]["agent_session"]
    assert reports(story.resumed, pane)


# -- resume_agents_on_restore = false ---------------------------------------------------------


def test_resume_turned_off_restores_plain_shells(story: Story) -> None:
    for pane in AGENTS:
        info = story.plain.panes[pane]
        assert info["pane_id"] == pane
        assert info.get("agent") is None
        assert info["agent_status"] == "unknown"
        # only the pane's shell is in the foreground
        assert [name for name, _ in story.plain.procs[pane]] == ["bash"]


def test_resume_turned_off_runs_no_resume_command_and_no_agent_reports(story: Story) -> None:
    assert not [rid for rid in story.plain.report_ids if rid.startswith(tuple(REPORT_IDS.values()))]
    for pane in AGENTS:
        text = story.plain_text[pane]
        assert "--resume" not in text
        assert "--session" not in text
        assert "codex resume" not in text


def test_resume_turned_off_keeps_the_stored_sessions_for_a_later_start(story: Story) -> None:
    # the official reference stays on the pane and in the file; so does the third-party
    # agent's command, although no agent reported from the plain shells
    assert (
        story.plain.panes["w1:p1"]["agent_session"] == story.first.panes["w1:p1"]["agent_session"]
    )
    assert story.saved_plain["1"]["agent_session"] == story.saved_before["1"]["agent_session"]
    assert story.saved_plain["2"]["resume"]["argv"] == story.saved_before["2"]["resume"]["argv"]
    assert story.saved_plain["2"]["resume"]["source"] == "herdr-sim-fake-agent"


# -- which stored sessions are resumed ------------------------------------------------------------


def test_a_session_stored_in_two_panes_resumes_only_in_the_first(short_dir: Path) -> None:
    home = short_dir / "home"
    home.mkdir()
    settings: dict[str, Any] = {
        "socket_path": short_dir / "herdr.sock",
        "base_env": {"HOME": str(home), "PATH": "/usr/bin:/bin"},
    }
    sim = Simulator(**settings).start()
    try:
        first = api(sim, "workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
        second = api(sim, "pane.split", target_pane_id=first, direction="right")["pane"]["pane_id"]
        for pane in (first, second):
            api(
                sim,
                "pane.report_agent_session",
                pane_id=pane,
                source="herdr:claude",
                agent="claude",
                seq=1,
                agent_session_id="sess-twice",
            )
    finally:
        sim.stop()
    sim = Simulator(**settings).start()
    try:
        wait_status(sim, first, "claude", "idle")
        assert agent_command(Run(procs={first: foreground(sim, first)}), first) == (
            "claude",
            ["claude", "--resume", "sess-twice"],
        )
        assert pane_info(sim, first)["agent_session"]["value"] == "sess-twice"
        enter(sim, second, "echo PLAIN-$((6*7))")
        wait_line(sim, second, "^PLAIN-42$")
        assert [name for name, _ in foreground(sim, second)] == ["bash"]
        assert "agent_session" not in pane_info(sim, second)
    finally:
        sim.stop()


def _saved_pane(pane: dict[str, Any]) -> dict[str, Any]:
    """A session file with one workspace whose one pane is ``pane``."""
    return {
        "format": persist.FORMAT,
        "version": persist.VERSION,
        "next_workspace_number": 2,
        "active": 0,
        "workspaces": [
            {
                "number": 1,
                "identity_cwd": "/tmp",
                "next_tab_number": 2,
                "next_pane_number": 2,
                "tabs": [{"number": 1, "layout": {"pane": 1}, "focused": 1, "panes": {"1": pane}}],
            }
        ],
    }


@pytest.mark.parametrize(
    ("ref", "command"),
    [
        (("herdr:pi", "pi", "path", "/s/a.jsonl"), ["pi", "--session", "/s/a.jsonl"]),
        (("herdr:pi", "pi", "id", "abc"), ["pi", "--session", "abc"]),
        (("herdr:omp", "omp", "path", "/s/b.jsonl"), ["omp", "--resume=/s/b.jsonl"]),
        (("herdr:codex", "codex", "id", "c1"), ["codex", "resume", "c1"]),
        (("herdr:cursor", "cursor", "id", "c2"), ["cursor-agent", "--resume", "c2"]),
        (("herdr:antigravity_cli", "agy", "id", "c3"), ["agy", "--conversation", "c3"]),
        # references Herdr would not have stored are dropped on restore: no plan, no session
        (("herdr:claude", "claude", "path", "/s/c.jsonl"), None),
        (("herdr:pi", "pi", "path", "relative.jsonl"), None),
        (("acme:agent", "acme", "id", "x"), None),
        (("herdr:claude", "codex", "id", "x"), None),
        (("herdr:codex", "codex", "id", "bad\tid"), None),
    ],
)
def test_restore_plans_follow_herdrs_rules_for_stored_references(
    ref: tuple[str, str, str, str], command: list[str] | None
) -> None:
    source, agent, kind, value = ref
    stored = {"source": source, "agent": agent, "kind": kind, "value": value}
    saved: dict[str, Any] = {"cwd": "/tmp", "agent_session": stored}
    session = Session()
    [(key, resume)] = persist.restore(session, _saved_pane(saved)).resumes
    assert resume == command
    restored = session.panes[key].agent_rec.session
    assert (restored is not None) == (command is not None)
    cold = persist.restore(Session(), _saved_pane(saved), resume_agents=False)
    assert cold.resumes == [(key, None)]
