"""The scriptable fake agents: scenarios, the fake pi's screen, session file and reports.

Each fake runs for real in a pty (``PtyProcess.spawn``, output fed to a ``Terminal`` by a
reader thread) and reports to a recording fake Herdr socket (``tests/cli/fake_herdr.py``).
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import LAUNCHER_KINDS, Scenario, ScenarioError, install_fake_agents
from herdr_sim.fake_agent.scenario import DEFAULT_THINK_MS
from herdr_sim.host.pty import PtyProcess
from herdr_sim.terminal import Terminal
from tests.cli.fake_herdr import FakeHerdr
from tests.waits import SCALE, wait_until

EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "reference" / "examples"
ROOT = Path(__file__).resolve().parents[2]
PANE = "w1:p1"

ESC = b"\x1b"
RULE = "─" * 20


class Running:
    """A fake agent in a pty; its screen is kept current by a reader thread."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = PtyProcess.spawn(
            argv, cwd=str(cwd), env=env, cols=100, rows=30, adopt_orphans=False
        )
        self.term = Terminal(100, 30)
        self.lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        fd = self.proc.master_fd
        while not self._done.is_set():
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.term.feed(data)

    def screen(self) -> str:
        with self.lock:
            return self.term.read("visible")[0]

    def title(self) -> str:
        with self.lock:
            return self.term.title or ""

    def wait_screen(self, text: str, timeout: float = 3.0) -> str:
        return wait_until(
            lambda: self.screen() if text in self.screen() else None, timeout, 0.01, text
        )

    def send(self, data: bytes) -> None:
        os.write(self.proc.master_fd, data)

    def prompt(self, text: str) -> None:
        self.send(text.encode())
        self.send(b"\r")

    def wait_exit(self, timeout: float = 3.0) -> int:
        return self.proc._popen.wait(timeout)

    def close(self) -> None:
        # stop the reader before the pty's fd is closed: a closed fd number is soon reused
        # (by a socket, say), and a reader still polling it would read someone else's data
        self._done.set()
        self._thread.join(timeout=2)
        self.proc.terminate_sync(timeout=1.0)


class World:
    """A private HOME, a cwd, the launchers on PATH and a recording Herdr socket."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.cwd = base / "work"
        self.bin = base / "bin"
        for path in (self.home, self.cwd):
            path.mkdir()
        install_fake_agents(self.bin)
        self.herdr = FakeHerdr(base / "h.sock").start()
        self.running: list[Running] = []

    def env(self, herdr: bool = True, **extra: str) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
        }
        if herdr:
            env.update(HERDR_ENV="1", HERDR_SOCKET_PATH=str(self.herdr.path), HERDR_PANE_ID=PANE)
        env.update(extra)
        return env

    def start(self, *argv: str, herdr: bool = True, **extra: str) -> Running:
        if argv[0] == "fake-agent":
            command = [sys.executable, "-m", "herdr_sim", *argv]
            extra.setdefault("PYTHONPATH", str(ROOT))
        else:
            command = [str(self.bin / argv[0]), *argv[1:]]
        agent = Running(command, self.cwd, self.env(herdr, **extra))
        self.running.append(agent)
        return agent

    def scenario(self, scenario: Scenario, name: str = "s.json") -> str:
        return str(scenario.dump(self.base / name))

    def reports(self) -> list[dict[str, Any]]:
        return self.herdr.operations()

    def states(self) -> list[str]:
        return [
            str(r["params"]["state"]) for r in self.reports() if r["method"] == "pane.report_agent"
        ]

    def wait_states(self, *states: str, timeout: float = 3.0) -> list[dict[str, Any]]:
        wait_until(
            lambda: self.states()[: len(states)] == list(states), timeout, 0.01, f"states {states}"
        )
        return self.reports()

    def close(self) -> None:
        for agent in self.running:
            agent.close()
        self.herdr.close()


@pytest.fixture
def world(short_dir: Path) -> Iterator[World]:
    w = World(short_dir)
    try:
        yield w
    finally:
        w.close()


def session_lines(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def messages(path: str | Path) -> list[dict[str, Any]]:
    return [e["message"] for e in session_lines(path) if e["type"] == "message"]


# -- scenarios ---------------------------------------------------------------------------------


def test_scenario_builder_makes_turns_and_round_trips_through_a_file(tmp_path: Path) -> None:
    scenario = (
        Scenario()
        .reply("hi")
        .then()
        .run_tool("bash", "echo hi")
        .write_file("a.txt", "x")
        .ask("Proceed?")
        .fail("boom")
        .type_slowly(5)
        .then()
        .wait(10)
        .hang()
        .then()
        .crash(3)
    )
    loaded = Scenario.load(scenario.dump(tmp_path / "s.json"))
    assert loaded == scenario
    assert [len(t.steps) for t in loaded.turns] == [1, 4, 2, 1]
    assert loaded.turns[1].type_ms == 5
    # past the script: a working phase long enough for Herdr's screen polls, then the reply
    assert [(s.action, s.ms, s.text) for s in loaded.turn(7).steps] == [
        ("wait", DEFAULT_THINK_MS, ""),
        ("reply", 0, "ok"),
    ]


def test_scenario_think_ms_sets_the_default_turns_working_phase(tmp_path: Path) -> None:
    instant = Scenario.from_dict({"think_ms": 0})
    assert [s.action for s in instant.turn(0).steps] == ["reply"]
    slow = Scenario(think_ms=2000)
    assert Scenario.load(slow.dump(tmp_path / "s.json")).turn(0).steps[0].ms == 2000
    assert "think_ms" not in Scenario().to_dict()
    with pytest.raises(ScenarioError, match="think_ms"):
        Scenario.from_dict({"think_ms": -1})


def test_scenario_loads_toml(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        'default_reply = "fine"\n'
        "[[turns]]\n"
        'steps = [{reply = "a"}, {tool = "bash", command = "true"},\n'
        '         {write_file = "f", content = "c"}]\n'
    )
    scenario = Scenario.load(path)
    assert scenario == Scenario(default_reply="fine").reply("a").run_tool(
        "bash", "true"
    ).write_file("f", "c")


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"turns": [{"steps": [{"say": "x"}]}]}, "turn 1, step 1: a step needs exactly one of"),
        ({"turns": [{"steps": [{"reply": 3}]}]}, "turn 1, step 1: 'reply' must be a string"),
        ({"turns": [{"steps": [{"tool": "bash"}]}]}, "turn 1, step 1: 'command' must be a string"),
        ({"turns": [], "extra": 1}, "unknown scenario key(s): extra"),
    ],
)
def test_scenario_rejects_what_it_does_not_understand(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Scenario.from_dict(doc)


def test_a_model_outside_the_catalog_exits_with_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from herdr_sim.fake_agent.app import main

    scenario = Scenario().known_models("fake/fake-model")
    assert Scenario.load(scenario.dump(tmp_path / "s.json")) == scenario
    args = ["--scenario", str(tmp_path / "s.json"), "--model", "fake/other"]
    assert main(args, kind="pi") == 1
    assert 'model "fake/other" not found' in capsys.readouterr().err
    with pytest.raises(ScenarioError, match="'models' must be a list of strings"):
        Scenario.from_dict({"models": "fake/fake-model"})


def test_a_slow_start_round_trips_and_rejects_a_bad_value(tmp_path: Path) -> None:
    # startup_ms: real pi keeps a prompt submitted before its startup ends in the editor
    # (exercised end to end in tests/orchestrator/agent_tools/test_spawn.py)
    scenario = Scenario().start_slowly(1500).reply("hi")
    assert Scenario.load(scenario.dump(tmp_path / "s.json")) == scenario
    assert scenario.to_dict()["startup_ms"] == 1500
    with pytest.raises(ScenarioError, match="'startup_ms' must be a whole number"):
        Scenario.from_dict({"startup_ms": -1})


def test_install_writes_fast_launchers_for_every_kind(tmp_path: Path) -> None:
    paths = install_fake_agents(tmp_path / "bin")
    assert [p.name for p in paths] == list(LAUNCHER_KINDS) == ["pi", "claude", "codex", "opencode"]
    for path in paths:
        assert os.access(path, os.X_OK)
        assert path.read_text().splitlines()[0] == f"#!{sys.executable} -S"


# -- the fake pi -------------------------------------------------------------------------------


def test_pi_starts_to_an_idle_prompt_box(world: World) -> None:
    # how fast the first frame comes is measured by bench/agent_start.py, not here
    pi = world.start("pi", herdr=False)
    screen = pi.wait_screen(RULE, timeout=2)
    assert "Working..." not in screen
    assert "\n>\n" in screen


def test_pi_reports_like_the_official_extension(world: World) -> None:
    pi = world.start("pi", "--session-dir", str(world.base / "sessions"))
    world.wait_states("idle")
    pi.prompt("hello")
    reports = world.wait_states("idle", "working", "idle")
    shapes = [
        (r["method"], r["params"].get("state"), r["params"].get("session_start_source"))
        for r in reports
    ]
    assert shapes == [
        ("pane.report_agent_session", None, "startup"),
        ("pane.report_agent", "idle", None),
        ("pane.report_agent_session", None, None),
        ("pane.report_agent", "working", None),
        ("pane.report_agent", "idle", None),
    ]
    example = [
        json.loads(line)
        for line in (EXAMPLES / "pi-1.6-herdr-extension-socket-requests.jsonl")
        .read_text()
        .splitlines()
    ]
    for got, want in zip(reports, example, strict=True):
        assert set(got["params"]) == set(want["params"])
        assert got["id"].startswith(
            "herdr:pi:session:" if "session" in got["method"] else "herdr:pi:"
        )
        assert got["params"]["source"] == "herdr:pi"
        assert got["params"]["agent"] == "pi"
        assert got["params"]["pane_id"] == PANE
    seqs = [r["params"]["seq"] for r in reports]
    assert seqs == list(range(seqs[0], seqs[0] + 5))
    assert abs(seqs[0] // 1000 - time.time() * 1000) < 60_000
    paths = {r["params"]["agent_session_path"] for r in reports}
    assert len(paths) == 1
    assert Path(paths.pop()).parent == world.base / "sessions"


def test_pi_session_file_has_the_structure_of_pi_1_6(world: World) -> None:
    scenario = (
        Scenario().run_tool("bash", "echo hello-from-tool").reply("Tool said: hello-from-tool")
    )
    pi = world.start("pi", "--scenario", world.scenario(scenario), "--model", "fake/fake-model")
    world.wait_states("idle")
    pi.prompt("Run a TOOL for me")
    world.wait_states("idle", "working", "idle")
    path = world.reports()[0]["params"]["agent_session_path"]
    got = session_lines(path)
    want = [
        json.loads(line)
        for line in (EXAMPLES / "pi-1.6-session-toolcall.jsonl").read_text().splitlines()
    ]
    assert [e["type"] for e in got] == [e["type"] for e in want]
    assert [e.get("message", {}).get("role") for e in got] == [
        e.get("message", {}).get("role") for e in want
    ]
    for mine, theirs in zip(got, want, strict=True):
        assert set(mine) == set(theirs)
        if "message" in mine and mine["message"]["role"] != "system":
            assert set(mine["message"]) == set(theirs["message"])
    header = got[0]
    assert header["version"] == 3
    assert header["cwd"] == str(world.cwd)
    assert Path(path).name.endswith(f"_{header['id']}.jsonl")
    assert [e["parentId"] for e in got[1:]] == [None] + [e["id"] for e in got[1:-1]]
    call, result, final = (e["message"] for e in got[-3:])
    assert call["content"][0] == {
        "type": "toolCall",
        "id": "call_1",
        "name": "bash",
        "arguments": {"command": "echo hello-from-tool"},
    }
    assert call["stopReason"] == "toolUse"
    assert set(call["usage"]) == set(want[-1]["message"]["usage"])
    assert result["toolCallId"] == "call_1"
    assert result["content"] == [{"type": "text", "text": "hello-from-tool\n"}]
    assert result["isError"] is False
    assert isinstance(result["durationMs"], int)
    assert final["content"] == [{"type": "text", "text": "Tool said: hello-from-tool"}]
    assert final["stopReason"] == "stop"


def test_pi_session_goes_under_the_agent_dir_by_cwd(world: World) -> None:
    agent_dir = world.base / "agent"
    pi = world.start("pi", PI_CODING_AGENT_DIR=str(agent_dir))
    world.wait_states("idle")
    path = Path(world.reports()[0]["params"]["agent_session_path"])
    bucket = "--" + str(world.cwd).lstrip("/").replace("/", "-") + "--"
    assert path.parent == agent_dir / "sessions" / bucket
    assert not path.exists()  # created lazily, on the first prompt
    pi.prompt("hi")
    world.wait_states("idle", "working", "idle")
    assert path.exists()


def test_pi_honours_model_thinking_and_appended_system_prompt(world: World) -> None:
    pi = world.start(
        "pi",
        "--model",
        "acme/m-1",
        "--thinking",
        "high",
        "--append-system-prompt",
        "Be brief.",
        "-e",
        "x.ts",
    )
    world.wait_states("idle")
    pi.prompt("hi")
    world.wait_states("idle", "working", "idle")
    entries = session_lines(world.reports()[0]["params"]["agent_session_path"])
    assert entries[1]["provider"] == "acme"
    assert entries[1]["modelId"] == "m-1"
    assert entries[2]["thinkingLevel"] == "high"
    assert entries[3]["message"]["sections"]["append"] == "Be brief."
    assert entries[-1]["message"]["model"] == "m-1"


def test_pi_resumes_a_session_by_appending_to_it(world: World) -> None:
    first = world.start("pi")
    world.wait_states("idle")
    first.prompt("one")
    world.wait_states("idle", "working", "idle")
    path = world.reports()[0]["params"]["agent_session_path"]
    before = session_lines(path)
    first.prompt("/exit")
    assert first.wait_exit() == 0
    session_id = session_lines(path)[0]["id"]
    # real pi 1.6's goodbye, and like it the fake resumes by a full or partial id
    hint = f"To resume this session:pi --session {session_id}"
    wait_until(lambda: hint in first.screen().replace("\n", ""), 3, 0.01, hint)
    count = len(world.reports())
    second = world.start("pi", "--session", session_id[:13])
    wait_until(lambda: len(world.reports()) >= count + 2, 3, 0.01, "startup reports")
    assert world.reports()[count]["params"]["agent_session_path"] == path
    second.prompt("two")
    wait_until(
        lambda: world.states()[-1:] == ["idle"] and len(world.states()) >= 5, 3, 0.01, "idle"
    )
    after = session_lines(path)
    assert after[: len(before)] == before
    added = after[len(before) :]
    assert added[0]["parentId"] == before[-1]["id"]
    assert [e["message"]["role"] for e in added] == ["user", "assistant"]


def test_pi_refuses_a_session_id_it_cannot_find_like_real_pi(world: World) -> None:
    pi = world.start("pi", "--session", "0123abcd-nope")
    assert pi.wait_exit() == 1
    wait_until(
        lambda: "No session found matching '0123abcd-nope'" in pi.screen(), 3, 0.01, "message"
    )


def test_escape_interrupts_a_hanging_turn(world: World) -> None:
    pi = world.start("pi", "--scenario", world.scenario(Scenario().hang()))
    world.wait_states("idle")
    pi.prompt("go")
    world.wait_states("idle", "working")
    assert "Working..." in pi.wait_screen("Working...")
    pi.send(ESC)
    world.wait_states("idle", "working", "idle")
    screen = pi.wait_screen("Operation aborted")
    assert "Working..." not in screen
    last = messages(world.reports()[0]["params"]["agent_session_path"])[-1]
    assert last["stopReason"] == "aborted"


def test_ask_blocks_with_the_question_until_answered(world: World) -> None:
    scenario = Scenario().ask("Proceed?").reply("went ahead")
    pi = world.start("pi", "--scenario", world.scenario(scenario))
    world.wait_states("idle")
    pi.prompt("go")
    reports = world.wait_states("idle", "working", "blocked")
    assert reports[-1]["params"]["message"] == "Proceed?"
    screen = pi.wait_screen("? Proceed?")
    assert "Working..." not in screen
    pi.prompt("yes")
    world.wait_states("idle", "working", "blocked", "working", "idle")
    assert "went ahead" in pi.wait_screen("went ahead")


def test_fail_ends_the_turn_with_stop_reason_error(world: World) -> None:
    pi = world.start("pi", "--scenario", world.scenario(Scenario().reply("trying").fail("boom")))
    world.wait_states("idle")
    pi.prompt("go")
    world.wait_states("idle", "working", "idle")
    last = messages(world.reports()[0]["params"]["agent_session_path"])[-1]
    assert last["stopReason"] == "error"
    assert last["errorMessage"] == "boom"
    assert "Error: boom" in pi.wait_screen("Error: boom")


def test_crash_exits_at_once_without_settling(world: World) -> None:
    pi = world.start("pi", "--scenario", world.scenario(Scenario().crash(7)))
    world.wait_states("idle")
    pi.prompt("go")
    assert pi.wait_exit() == 7
    assert "idle" not in world.states()[1:]
    assert "pane.release_agent" not in world.herdr.methods()


def test_write_file_creates_the_file_and_records_a_write_tool(world: World) -> None:
    pi = world.start("pi", "--scenario", world.scenario(Scenario().write_file("sub/a.txt", "xyz")))
    world.wait_states("idle")
    pi.prompt("write it")
    world.wait_states("idle", "working", "idle")
    assert (world.cwd / "sub" / "a.txt").read_text() == "xyz"
    roles = messages(world.reports()[0]["params"]["agent_session_path"])
    assert roles[-3]["content"][-1]["name"] == "write"
    assert roles[-2]["content"][0]["text"] == "Successfully wrote 3 bytes to sub/a.txt"


def test_type_slowly_spreads_the_reply_over_time(world: World) -> None:
    pi = world.start(
        "pi", "--scenario", world.scenario(Scenario().reply("abcdefghij").type_slowly(30))
    )
    world.wait_states("idle")
    started = time.monotonic()
    pi.prompt("go")
    partial = pi.wait_screen("abc", timeout=2)
    assert "abcdefghij" not in partial
    world.wait_states("idle", "working", "idle")
    assert time.monotonic() - started >= 0.3


def test_reports_never_block_the_screen(world: World) -> None:
    # A socket that accepts connections but never answers: every report times out.
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(world.base / "silent.sock"))
    silent.listen(64)
    try:
        pi = world.start("pi", HERDR_SOCKET_PATH=str(world.base / "silent.sock"))
        pi.wait_screen(RULE)
        started = time.monotonic()
        pi.prompt("hello")
        pi.wait_screen("Working...", timeout=1)
        assert time.monotonic() - started < 0.2 * SCALE
        assert "> hello" in pi.screen()
    finally:
        silent.close()


def test_no_reports_outside_herdr(world: World) -> None:
    pi = world.start("pi", herdr=False)
    pi.wait_screen(RULE)
    pi.prompt("hi")
    pi.wait_screen("ok")
    pi.prompt("/exit")
    assert pi.wait_exit() == 0
    assert world.reports() == []


def test_scenario_can_come_from_the_environment(world: World) -> None:
    path = world.scenario(Scenario().reply("from the env"))
    pi = world.start("pi", herdr=False, HERDR_SIM_FAKE_SCENARIO=path)
    pi.wait_screen(RULE)
    pi.prompt("hi")
    pi.wait_screen("from the env")


def test_ctrl_c_interrupts_a_turn_and_exits_when_idle(world: World) -> None:
    pi = world.start("pi", "--scenario", world.scenario(Scenario().hang()))
    world.wait_states("idle")
    pi.prompt("go")
    pi.wait_screen("Working...")
    pi.send(b"\x03")
    world.wait_states("idle", "working", "idle")
    pi.send(b"\x03")
    assert pi.wait_exit() == 0
    assert "pane.release_agent" not in world.herdr.methods()  # pi's extension never releases


def test_fake_pi_accepts_real_pis_flags_that_change_nothing_it_simulates() -> None:
    # real pi 1.6.0 accepts these (pi --help); the fake pi used to refuse them
    from herdr_sim.fake_agent.app import UsageError, parse_args

    options = parse_args(
        ["--offline", "--api-key", "k", "-t", "read,bash", "-xt=edit", "--no-mcp", "-a",
         "-nc", "--no-skills", "--model", "fake/m", "hello"],
        "pi",
    )  # fmt: skip
    assert (options.model, options.prompt) == ("fake/m", "hello")
    # flags whose effect the fake does not simulate stay refused rather than ignored
    for flag in ("-p", "--no-extensions", "--provider"):
        with pytest.raises(UsageError, match="unknown option"):
            parse_args([flag, "x"], "pi")


def test_fake_pi_takes_a_multi_line_prompt_as_one_prompt_like_real_pi(
    herdr_fake_agent: Any,
) -> None:
    # real pi 1.6 turns bracketed paste on (tests/real_agents/test_pi.py), so Herdr pastes a
    # prompt's newlines instead of typing them as Enter; the fake pi used to split it in two
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("one turn"))
    # (the fixture returns once the fake pi has reported: paste mode is on by then)
    agent.prompt("first line\nsecond line")
    users = [m for m in messages(agent.info["agent_session"]["value"]) if m["role"] == "user"]
    assert [u["content"][0]["text"] for u in users] == ["first line\nsecond line"]
    assert "> first line" in agent.read("visible") and "  second line" in agent.read("visible")
