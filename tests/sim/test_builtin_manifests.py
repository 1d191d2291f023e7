"""The simulator's own detection rules for its fake agents (``herdr_sim/detection/builtin``).

They are written from the fakes' screens (``herdr_sim/fake_agent/personas.py``), not taken
from Herdr: with them, and without Herdr's manifests, the fake ``claude`` and ``codex``
(whose integrations report no state) are seen working and blocked, so ``agent.prompt``
with ``wait`` returns after their turn instead of answering ``agent_prompt_stalled``.

Screens are classified three ways: rendered by the persona into a terminal (every kind,
state and size, against every manifest), drawn live by the fake in a pty (as
``test_fake_agent_screens.py`` does with Herdr's manifests), and end to end in a simulator
started with ``agent_manifests_dir=BUILTIN_MANIFESTS_DIR``.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import RequestFailed, call
from herdr_sim.detection import BUILTIN_MANIFESTS_DIR, ManifestSet, load_manifests
from herdr_sim.fake_agent import Scenario
from herdr_sim.fake_agent.personas import render
from herdr_sim.terminal import Terminal
from tests.contract.helpers import Api
from tests.contract.test_processes import serve, stop
from tests.sim.test_fake_agent import Running, World, world
from tests.waits import wait_until

__all__ = ["world"]

KINDS = ("pi", "claude", "codex", "opencode")
STATES = ("idle", "working", "blocked")
HERDR_MANIFESTS = Path(__file__).resolve().parents[3] / "shared" / "contracts" / "agent-detection"
REPLY = "reply-from-the-fake"

#: What the simulator runs with in the end-to-end tests: only the built-in rules, fast timing.
FAST = {
    "agent_manifests_dir": BUILTIN_MANIFESTS_DIR,
    "agent_start_settle": 0.1,
    "agent_prompt_submit_delay": 0.05,
    "agent_prompt_stall_timeout": 3.0,
    "detection_interval": 0.1,
    "detection_debounce": 0.02,
    "detection_idle_hold": 0.1,
}


@pytest.fixture(scope="module")
def builtin() -> ManifestSet:
    """The built-in manifests, loaded once."""
    return load_manifests(BUILTIN_MANIFESTS_DIR)


def snapshot(
    kind: str,
    state: str,
    *,
    width: int = 100,
    height: int = 30,
    typed: str = "",
    question: str = "Proceed?",
    frame: int = 0,
) -> tuple[str, str]:
    """The detection snapshot and title of one persona frame, drawn as the fake draws it."""
    title, lines = render(
        kind,
        state=state,
        width=width,
        height=height,
        transcript=["> hello", "ok"],
        typed=typed,
        question=question,
        frame=frame,
        elapsed_s=12,
        model="fake-model",
        cwd="/tmp/work",
    )
    term = Terminal(width, height)
    term.feed((f"\x1b]0;{title}\x07\x1b[H\x1b[2J" + "\r\n".join(lines)).encode())
    return term.read("detection")[0], term.title or ""


def rule_of(manifests: ManifestSet, kind: str, screen: str, title: str) -> tuple[str, str | None]:
    """The state and winning rule id of ``kind``'s manifest on a snapshot."""
    explained = manifests.explain(kind, screen, osc_title=title)
    return explained.state, explained.matched_rule.id if explained.matched_rule else None


# -- the files -----------------------------------------------------------------------------------


def test_one_valid_manifest_per_fake_kind(builtin: ManifestSet) -> None:
    assert builtin.errors == {}
    assert sorted(builtin.manifests) == sorted(KINDS)
    assert sorted(path.name for path in BUILTIN_MANIFESTS_DIR.glob("*.toml")) == sorted(
        f"{kind}.toml" for kind in KINDS
    )
    for kind, loaded in builtin.manifests.items():
        assert loaded.manifest.id == kind
        assert {rule.effective_state for rule in loaded.manifest.rules} >= set(STATES)


def test_the_rules_are_ours_not_herdrs(builtin: ManifestSet) -> None:
    if not HERDR_MANIFESTS.is_dir():
        pytest.skip("Herdr's manifests are not at hand")
    herdr = load_manifests(HERDR_MANIFESTS)

    def matchers(manifests: ManifestSet, kind: str) -> set[str]:
        found: set[str] = set()
        for rule in manifests.manifests[kind].manifest.rules:
            found |= {rule.id, *rule.gate.contains, *rule.gate.regex, *rule.gate.line_regex}
        return found

    for kind in KINDS:
        assert matchers(builtin, kind).isdisjoint(matchers(herdr, kind)), kind


# -- rendered screens ------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(100, 30), (120, 40), (40, 12)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("kind", KINDS)
def test_each_screen_classifies_as_its_state(
    builtin: ManifestSet, kind: str, state: str, size: tuple[int, int]
) -> None:
    width, height = size
    for typed, question, frame in (("", "", 0), ("make it so", "Run rm -rf build?", 5)):
        screen, title = snapshot(
            kind, state, width=width, height=height, typed=typed, question=question, frame=frame
        )
        got, rule = rule_of(builtin, kind, screen, title)
        assert (got, rule is not None) == (state, True), (typed, screen)


@pytest.mark.parametrize("kind", KINDS)
def test_each_state_rule_carries_its_visible_flag(builtin: ManifestSet, kind: str) -> None:
    # visible_idle keeps a finished turn from waiting out the working → plain-idle hold
    flags = {}
    for state in STATES:
        screen, title = snapshot(kind, state)
        detection = builtin.detect(kind, screen, osc_title=title)
        flags[state] = (
            detection.visible_idle,
            detection.visible_working,
            detection.visible_blocker,
        )
    assert flags == {
        "idle": (True, False, False),
        "working": (False, True, False),
        "blocked": (False, False, True),
    }


@pytest.mark.parametrize("kind", KINDS)
def test_another_kinds_screens_match_no_rule(builtin: ManifestSet, kind: str) -> None:
    for other in KINDS:
        if other == kind:
            continue
        for state in STATES:
            screen, title = snapshot(other, state, typed="hi", frame=2)
            assert rule_of(builtin, kind, screen, title) == ("idle", None), (other, state)


SHELL_SCREENS = {
    "prompt": "$ \n",
    "commands": "$ ls\nnotes.txt  src\n$ echo working\nworking\n$ \n",
    "continuation": "$ for x in a b; do\n> echo $x\n> done\na\nb\n$ \n",
    "rule": "$ printf '%.0s─' {1..20}\n" + "─" * 20 + "\n$ \n",
}


@pytest.mark.parametrize("screen", SHELL_SCREENS.values(), ids=SHELL_SCREENS.keys())
@pytest.mark.parametrize("kind", KINDS)
def test_a_shell_screen_matches_no_rule(builtin: ManifestSet, kind: str, screen: str) -> None:
    assert rule_of(builtin, kind, screen, "bash") == ("idle", None)


def test_a_working_title_alone_counts_only_when_the_screen_says_nothing(
    builtin: ManifestSet,
) -> None:
    # a half-drawn frame: the title has changed, the screen is still blank
    assert rule_of(builtin, "claude", "", "⠙ Claude Code") == (
        "working",
        "fake_claude_spinner_title",
    )
    assert rule_of(builtin, "codex", "", "Action Required")[0] == "blocked"
    idle_screen, _ = snapshot("claude", "idle")
    assert rule_of(builtin, "claude", idle_screen, "⠙ Claude Code")[0] == "idle"


# -- screens drawn live in a pty -------------------------------------------------------------------

#: Text that is on screen in each state, per kind (to know when to classify).
MARKERS = {
    "pi": ("─" * 20, "Working...", "? Proceed?"),
    "claude": ("❯", "esc to interrupt", "Do you want to proceed?"),
    "codex": ("›", "esc to interrupt", "Allow command?"),
    "opencode": ("╹▀▀▀", "esc interrupt", "Permission required"),
}


def classify(manifests: ManifestSet, agent: Running, kind: str) -> str:
    """The state the built-in manifest reads from the fake's pty right now."""
    with agent.lock:
        screen = agent.term.read("detection")[0]
        title = agent.term.title or ""
    state: str = manifests.detect(kind, screen, osc_title=title).state
    return state


@pytest.mark.parametrize("kind", KINDS)
def test_live_screens_classify_as_the_intended_state(
    builtin: ManifestSet, world: World, kind: str
) -> None:
    idle, working, blocked = MARKERS[kind]
    scenario = Scenario().wait(250).ask("Proceed?").reply("done")
    agent = world.start(kind, "--scenario", world.scenario(scenario), herdr=False)
    agent.wait_screen(idle)
    assert classify(builtin, agent, kind) == "idle"
    agent.prompt("go")
    agent.wait_screen(working)
    assert classify(builtin, agent, kind) == "working"
    agent.wait_screen(blocked)
    wait_until(lambda: classify(builtin, agent, kind) == "blocked", 1, 0.02, f"{kind} blocked")
    agent.prompt("yes")
    agent.wait_screen("done")
    wait_until(lambda: classify(builtin, agent, kind) == "idle", 1, 0.02, f"{kind} idle again")


# -- end to end in a simulator ---------------------------------------------------------------------


@pytest.fixture
def scenario(short_dir: Path) -> Path:
    """One turn that works 300 ms (long enough to be seen on screen), then replies."""
    path = short_dir / "turn.json"
    path.write_text(json.dumps({"turns": [{"steps": [{"wait": 300}, {"reply": REPLY}]}]}))
    return path


def started(api: Api, kind: str, scenario: Path) -> str:
    """A shell pane with the fake ``kind`` started in it as agent ``a1``, interactive."""
    pane: str = api("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    api(
        "pane.wait_for_output",
        pane_id=pane,
        source="recent",
        match={"type": "regex", "value": r"^\$"},
        timeout_ms=5000,
    )
    api("agent.start", name="a1", kind=kind, pane_id=pane, args=["--scenario", str(scenario)])
    wait_until(
        lambda: api("agent.get", target="a1")["agent"].get("interactive_ready"),
        5,
        what=f"{kind} interactive",
    )
    return pane


def statuses_since(sim: Simulator, mark: int, pane: str) -> list[str]:
    """The pane's ``agent_status`` in every ``pane_agent_status_changed`` after ``mark``."""
    return [
        env["data"]["agent_status"]
        for env in sim.events[mark:]
        if env["event"] == "pane_agent_status_changed" and env["data"]["pane_id"] == pane
    ]


@pytest.mark.sim_settings(**FAST)
@pytest.mark.parametrize("kind", KINDS)
def test_prompt_wait_sees_the_turn_with_the_builtin_rules(
    sim: Simulator, api: Api, scenario: Path, kind: str
) -> None:
    pane = started(api, kind, scenario)
    mark = len(sim.events)
    prompted = api("agent.prompt", target="a1", text="hello", wait={})
    assert prompted["agent"]["agent_status"] in ("idle", "done")
    assert "working" in statuses_since(sim, mark, pane)
    assert REPLY in api("pane.read", pane_id=pane, source="recent")["read"]["text"]


@pytest.mark.sim_settings(**FAST)
@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_a_question_on_screen_is_blocked_until_answered(
    sim: Simulator, api: Api, scenario: Path, kind: str
) -> None:
    # claude and codex report no state: blocked can only come from their screen
    pane = started(api, kind, scenario)
    api("agent.prompt", target="a1", text="/ask Deploy now?")
    blocked = api("agent.wait", target="a1", until=["blocked"], timeout_ms=5000)
    assert blocked["agent"]["agent_status"] == "blocked"
    explained = api("agent.explain", target="a1")["explain"]
    assert explained["matched_rule"]["id"] == f"fake_{kind}_" + (
        "proceed_dialog" if kind == "claude" else "allow_dialog"
    )
    api("pane.send_input", pane_id=pane, text="yes", keys=["Enter"])
    after = api("agent.wait", target="a1", until=["idle", "done"], timeout_ms=5000)
    assert after["agent"]["agent_status"] in ("idle", "done")


@pytest.mark.sim_settings(
    **{**FAST, "agent_manifests_dir": None, "agent_prompt_stall_timeout": 0.5}
)
def test_without_rules_a_prompted_claude_stalls(api: Api, scenario: Path) -> None:
    # the problem the built-in rules solve: no screen rules, no reports, no working seen
    started(api, "claude", scenario)
    with pytest.raises(RequestFailed) as failed:
        api("agent.prompt", target="a1", text="hello", wait={})
    assert failed.value.code == "agent_prompt_stalled"


@pytest.mark.parametrize("flags", [("--agent-manifests", "builtin"), ()], ids=["named", "default"])
def test_serve_builtin_loads_the_builtin_rules(short_dir: Path, flags: tuple[str, ...]) -> None:
    # the default too, while the fakes are on: a plain serve must see a fake claude work
    by_agent = {item["agent"]: item for item in served_manifests(short_dir, *flags)}
    assert sorted(by_agent) == sorted(KINDS)
    assert {item["active_version"] for item in by_agent.values()} == {"0.1.0"}


@pytest.mark.parametrize(
    "flags", [("--agent-manifests", "none"), ("--no-fake-agents",)], ids=["none", "no-fakes"]
)
def test_serve_without_rules_when_asked_or_without_the_fakes(
    short_dir: Path, flags: tuple[str, ...]
) -> None:
    assert served_manifests(short_dir, *flags) == []


def served_manifests(short_dir: Path, *flags: str) -> list[dict[str, Any]]:
    """``server.agent_manifests`` of a ``herdr-sim serve`` started with ``flags``."""
    socket = short_dir / "serve.sock"
    proc = serve(short_dir, "--socket", str(socket), *flags)
    try:
        status = call(socket, "server.agent_manifests", {})
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        stop(proc)
    manifests: list[dict[str, Any]] = status["manifests"]
    return manifests
