"""The ``agent.*`` methods over the socket and the ``herdr agent`` CLI (reference §5.7–§5.9,
§4, §12 items 18–20, §17.2).

Agents come from the detection seam (``set_detection``: what process and screen detection
will set) and from lifecycle reports. The prompt delays are shortened per test through the
simulator's config (Herdr's 300 ms / 5 s stay the defaults).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from herdr_sim import Simulator, testing
from herdr_sim.client import RequestFailed
from herdr_sim.config import SimulatorConfig
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    cli_error,
    cli_json,
    detect,
    failure,
    kinds_since,
    reply_after,
    split,
    wait_line,
)
from tests.waits import SCALE, wait_until

#: the shortened Enter delay and stall window these tests run with
SUBMIT_DELAY = 0.05
STALL = 0.3


@pytest.fixture(autouse=True)
def fast_prompts(sim: Simulator) -> None:
    """Short prompt delays (read by the handlers at call time)."""
    sim.config.agent_prompt_submit_delay = SUBMIT_DELAY
    sim.config.agent_prompt_stall_timeout = STALL


# Detection comes from the seam alone: the live detection loop would see the pane's shell
# (not ``pi``) in the foreground and drop the seam's agent.
pytestmark = [pytest.mark.herdr_sim_only, pytest.mark.herdr(agent_detection=False)]


def name_raw(sim: Simulator, pane: str, value: str) -> None:
    """Set an agent name behind the API's back (duplicate names cannot be made otherwise)."""
    testing.set_agent_name(sim, pane, value)


def agent(herdr_client: HerdrClient, target: str) -> dict[str, Any]:
    """``agent.get``'s AgentInfo."""
    info: dict[str, Any] = herdr_client.call("agent.get", target=target)["agent"]
    return info


@pytest.fixture
def pi(sim: Simulator, root: str) -> str:
    """The root pane hosting a detected, idle ``pi``."""
    detect(sim, root, "pi", "idle")
    return root


# -- defaults -----------------------------------------------------------------------------------


def test_prompt_delays_default_to_herdrs() -> None:
    config = SimulatorConfig()
    assert (config.agent_prompt_submit_delay, config.agent_prompt_stall_timeout) == (0.3, 5.0)


# -- agent.list / agent.get and target resolution (§5.9) -----------------------------------------


def test_list_skips_plain_shells(herdr_client: HerdrClient, root: str) -> None:
    assert herdr_client.call("agent.list") == {"type": "agent_list", "agents": []}


def test_list_shows_a_detected_agent(herdr_client: HerdrClient, pi: str) -> None:
    agents = herdr_client.call("agent.list")["agents"]
    assert [(a["pane_id"], a["agent"], a["agent_status"]) for a in agents] == [(pi, "pi", "idle")]


def test_get_by_canonical_pane_id(herdr_client: HerdrClient, pi: str) -> None:
    result = herdr_client.call("agent.get", target=pi)
    assert result["type"] == "agent_info"
    assert (result["agent"]["pane_id"], result["agent"]["agent"]) == (pi, "pi")


def test_get_plain_shell_is_agent_not_found(herdr_client: HerdrClient, root: str) -> None:
    assert failure(herdr_client.call, "agent.get", target=root) == (
        "agent_not_found",
        f"agent target {root} not found",
    )


def test_get_needs_the_exact_canonical_id(herdr_client: HerdrClient, pi: str) -> None:
    assert failure(herdr_client.call, "agent.get", target="w1-1")[0] == "agent_not_found"


def test_kind_label_is_not_a_target(herdr_client: HerdrClient, pi: str) -> None:
    assert failure(herdr_client.call, "agent.get", target="pi") == (
        "agent_not_found",
        "agent target pi not found",
    )


def test_get_by_name(herdr_client: HerdrClient, pi: str) -> None:
    herdr_client.call("agent.rename", target=pi, name="alpha")
    assert agent(herdr_client, "alpha")["pane_id"] == pi


def test_duplicate_names_are_ambiguous(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    other = split(herdr_client, pi)
    detect(sim, other, "claude", "working")
    name_raw(sim, pi, "twin")
    name_raw(sim, other, "twin")
    code, message = failure(herdr_client.call, "agent.get", target="twin")
    assert code == "agent_target_ambiguous"
    first = agent(herdr_client, pi)
    assert message.startswith(
        f"agent target twin is ambiguous; candidates: terminal_id={first['terminal_id']} "
        f"pane_id={pi} workspace_id=w1 tab_id=w1:t1 cwd=/tmp status=Idle; terminal_id="
    )
    assert message.endswith(f"pane_id={other} workspace_id=w1 tab_id=w1:t1 cwd=/tmp status=Working")


# -- agent.read --------------------------------------------------------------------------------


def test_read_is_the_pane_read(herdr_client: HerdrClient, pi: str) -> None:
    wait_line(herdr_client, pi, r"^\$")
    read = herdr_client.call("agent.read", target=pi, source="visible")
    assert read == herdr_client.call("pane.read", pane_id=pi, source="visible")
    assert read["type"] == "pane_read"


def test_cli_agent_read_equals_pane_read(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, pi: str
) -> None:
    wait_line(herdr_client, pi, r"^\$")
    agent_read = herdr_cli("agent", "read", pi, "--source", "visible")
    assert agent_read.code == 0
    assert agent_read.stdout == herdr_cli("pane", "read", pi, "--source", "visible").stdout


def test_cli_agent_read_missing(herdr_cli: HerdrCli, root: str) -> None:
    error = cli_error(herdr_cli("agent", "read", "missing"))
    assert error["error"] == {
        "code": "agent_not_found",
        "message": "agent target missing not found",
    }


# -- agent.rename ------------------------------------------------------------------------------


def test_rename_sets_the_name_and_emits_pane_updated(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    mark = len(sim.events)
    result = herdr_client.call("agent.rename", target=pi, name="alpha_1")
    assert (result["type"], result["agent"]["name"]) == ("agent_info", "alpha_1")
    assert "pane_updated" in kinds_since(sim, mark)


def test_rename_without_name_clears_it(herdr_client: HerdrClient, pi: str) -> None:
    herdr_client.call("agent.rename", target=pi, name="alpha")
    assert "name" not in herdr_client.call("agent.rename", target="alpha")["agent"]


@pytest.mark.parametrize("bad", ["Alpha", "1abc", "a" * 33, "a b", ""])
def test_rename_checks_the_name_grammar(herdr_client: HerdrClient, pi: str, bad: str) -> None:
    assert failure(herdr_client.call, "agent.rename", target=pi, name=bad) == (
        "invalid_agent_name",
        (
            "agent name must start with a lowercase letter and contain only lowercase letters, "
            "digits, '-' or '_' (1-32 characters)"
        ),
    )


def test_rename_to_a_taken_name(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    other = split(herdr_client, pi)
    detect(sim, other, "claude", "idle")
    herdr_client.call("agent.rename", target=other, name="taken")
    code, message = failure(herdr_client.call, "agent.rename", target=pi, name="taken")
    assert code == "agent_name_taken"
    assert message.startswith("agent name taken is already used; candidates: terminal_id=")
    assert f"pane_id={other} " in message


def test_rename_of_a_named_pane_without_agent(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    name_raw(sim, root, "ghost")
    assert failure(herdr_client.call, "agent.rename", target="ghost", name="other") == (
        "agent_not_found",
        "agent target does not currently host an agent",
    )


# -- agent.focus -------------------------------------------------------------------------------


def test_focus_switches_to_the_agent_and_marks_it_seen(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    background = herdr_client.call("tab.create")["root_pane"]["pane_id"]
    detect(sim, background, "pi", "idle")  # the process's first idle is readiness
    detect(sim, background, "pi", "working")
    detect(sim, background, "pi", "idle")
    assert agent(herdr_client, background)["agent_status"] == "done"
    result = herdr_client.call("agent.focus", target=background)
    assert result["type"] == "agent_info"
    assert (result["agent"]["focused"], result["agent"]["agent_status"]) == (True, "idle")
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == background


# -- agent.send_keys ---------------------------------------------------------------------------


def test_send_keys_reach_the_agent(herdr_client: HerdrClient, pi: str) -> None:
    wait_line(herdr_client, pi, r"^\$")
    herdr_client.call("pane.send_text", pane_id=pi, text="echo keys$((2+3))")
    assert herdr_client.call("agent.send_keys", target=pi, keys=["Enter"]) == {"type": "ok"}
    wait_line(herdr_client, pi, r"^keys5$")


def test_send_keys_to_a_reported_agent_without_its_process(
    herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="pi", state="idle"
    )
    assert failure(herdr_client.call, "agent.send_keys", target=root, keys=["Enter"]) == (
        "agent_not_ready",
        f"agent {root} is not an active named agent",
    )


def test_send_keys_to_an_unknown_agent_kind(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="my-bot", state="idle"
    )
    assert (
        failure(herdr_client.call, "agent.send_keys", target=root, keys=["Enter"])[0]
        == "agent_not_ready"
    )


def test_send_keys_invalid_key(herdr_client: HerdrClient, pi: str) -> None:
    assert failure(herdr_client.call, "agent.send_keys", target=pi, keys=["Nope"]) == (
        "invalid_key",
        "unsupported key Nope",
    )


# -- agent.prompt ------------------------------------------------------------------------------


def test_prompt_types_then_presses_enter_later(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    sim.config.agent_prompt_submit_delay = 0.3
    wait_line(herdr_client, pi, r"^\$")
    started = time.monotonic()
    result = herdr_client.call("agent.prompt", target=pi, text="echo pr$((1+1))")
    assert (result["type"], result["agent"]["pane_id"]) == ("agent_prompted", pi)
    wait_line(herdr_client, pi, r"^pr2$")
    assert time.monotonic() - started >= 0.3


def test_empty_prompt_is_checked_first(herdr_client: HerdrClient, root: str) -> None:
    assert failure(herdr_client.call, "agent.prompt", target="nobody", text="") == (
        "empty_agent_prompt",
        "agent prompt must not be empty",
    )


def test_prompt_unknown_target(herdr_client: HerdrClient, root: str) -> None:
    assert (
        failure(herdr_client.call, "agent.prompt", target="nobody", text="hi")[0]
        == "agent_not_found"
    )


def test_prompt_blocked_agent(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    detect(sim, pi, "pi", "blocked")
    assert failure(herdr_client.call, "agent.prompt", target=pi, text="hi") == (
        "agent_blocked",
        f"agent {pi} is blocked and requires interactive input",
    )


def test_prompt_reported_agent_without_its_process(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="pi", state="idle"
    )
    assert failure(herdr_client.call, "agent.prompt", target=root, text="hi") == (
        "agent_not_ready",
        f"agent {root} is no longer the pane foreground process",
    )


def test_prompt_unknown_agent_kind(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="my-bot", state="idle"
    )
    assert failure(herdr_client.call, "agent.prompt", target=root, text="hi") == (
        "agent_not_ready",
        f"agent {root} is not an active named agent",
    )


def answer(herdr_client: HerdrClient, method: str, **params: Any) -> dict[str, Any]:
    """The result, or ``{"error": {"code": …, "message": …}}``."""
    try:
        return herdr_client.call(method, **params)
    except RequestFailed as failed:
        return {"error": {"code": failed.code, "message": failed.message}}


NOT_RUNNING = {
    "code": "agent_not_running",
    "message": "agent is no longer running in the target pane",
}


def prompt_wait(
    herdr_client: HerdrClient, target: str, **wait: Any
) -> Callable[[], dict[str, Any]]:
    """A sender for ``reply_after``: ``agent.prompt`` with ``wait`` (result or error)."""

    def send() -> dict[str, Any]:
        return answer(herdr_client, "agent.prompt", target=target, text="hello", wait=wait)

    return send


def test_prompt_wait_sees_the_turn_through(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    baseline = agent(herdr_client, pi)["state_change_seq"]

    def turn() -> None:
        detect(sim, pi, "pi", "working")
        detect(sim, pi, "pi", "idle")

    result = reply_after(sim, prompt_wait(herdr_client, pi), turn)
    assert result["type"] == "agent_prompted"
    assert result["agent"]["agent_status"] == "idle"
    assert result["agent"]["state_change_seq"] > baseline


def test_prompt_wait_stalls_without_a_state_change(herdr_client: HerdrClient, pi: str) -> None:
    seq = agent(herdr_client, pi)["state_change_seq"]
    code, message = failure(herdr_client.call, "agent.prompt", target=pi, text="hello", wait={})
    assert code == "agent_prompt_stalled"
    assert message == (
        f"agent prompt produced no observed state change within {int(STALL * 1000)} ms; "
        f"status is idle and state_change_seq remained {seq}"
    )


def test_prompt_wait_needs_working_or_blocked(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    # §17.2 (0.9): a state change that is neither working nor blocked does not show the
    # prompt took effect (0.8.2 accepted any change).
    seq = agent(herdr_client, pi)["state_change_seq"]
    result = reply_after(
        sim, prompt_wait(herdr_client, pi), lambda: detect(sim, pi, "pi", "unknown")
    )
    assert result["error"] == {
        "code": "agent_prompt_stalled",
        "message": f"agent prompt produced no observed state change within {int(STALL * 1000)} "
        f"ms; status is unknown and state_change_seq remained {seq}",
    }


def test_prompt_wait_short_timeout_is_a_plain_timeout(herdr_client: HerdrClient, pi: str) -> None:
    assert failure(
        herdr_client.call, "agent.prompt", target=pi, text="hello", wait={"timeout_ms": 100}
    ) == (
        "timeout",
        "timed out waiting for agent status",
    )


def test_prompt_wait_on_a_working_agent_waits_for_settling(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    detect(sim, pi, "pi", "working")
    result = reply_after(
        sim, prompt_wait(herdr_client, pi, until=["idle"]), lambda: detect(sim, pi, "pi", "idle")
    )
    assert result["agent"]["agent_status"] == "idle"


def test_prompt_wait_until_working_matches_the_effect(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    result = reply_after(
        sim,
        prompt_wait(herdr_client, pi, until=["working"]),
        lambda: detect(sim, pi, "pi", "working"),
    )
    assert result["agent"]["agent_status"] == "working"


def test_prompt_wait_blocked_after_the_prompt(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    result = reply_after(
        sim, prompt_wait(herdr_client, pi), lambda: detect(sim, pi, "pi", "blocked")
    )
    assert result["agent"]["agent_status"] == "blocked"


def test_prompt_wait_agent_exits(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    result = reply_after(sim, prompt_wait(herdr_client, pi), lambda: detect(sim, pi, None))
    assert result["error"] == NOT_RUNNING


# -- agent.wait (§5.8) -------------------------------------------------------------------------


def wait_for(herdr_client: HerdrClient, target: str, **params: Any) -> Callable[[], dict[str, Any]]:
    """A sender for ``reply_after``: ``agent.wait`` (result or error)."""

    def send() -> dict[str, Any]:
        return answer(herdr_client, "agent.wait", target=target, **params)

    return send


def test_wait_returns_at_once_when_the_status_matches(herdr_client: HerdrClient, pi: str) -> None:
    result = herdr_client.call("agent.wait", target=pi, timeout_ms=0)
    assert (result["type"], result["agent"]["agent_status"]) == ("agent_info", "idle")


def test_wait_explicit_until_replaces_the_default(herdr_client: HerdrClient, pi: str) -> None:
    assert failure(
        herdr_client.call, "agent.wait", target=pi, until=["working"], timeout_ms=50
    ) == (
        "timeout",
        "timed out waiting for agent status",
    )


def test_wait_unknown_must_be_explicit(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "pi", "unknown")
    assert failure(herdr_client.call, "agent.wait", target=root, timeout_ms=30)[0] == "timeout"
    assert (
        herdr_client.call("agent.wait", target=root, until=["unknown"])["agent"]["agent_status"]
        == "unknown"
    )


def test_wait_follows_a_transition(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    detect(sim, pi, "pi", "working")
    result = reply_after(sim, wait_for(herdr_client, pi), lambda: detect(sim, pi, "pi", "idle"))
    assert result["agent"]["agent_status"] == "idle"


def test_wait_counts_a_transient_status(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    detect(sim, pi, "pi", "working")

    def flicker() -> None:
        testing.set_detection(sim, pi, ("pi", "idle"), ("pi", "working"))

    result = reply_after(sim, wait_for(herdr_client, pi), flicker)
    assert result["agent"]["agent_status"] == "idle"
    assert agent(herdr_client, pi)["agent_status"] == "working"


def test_status_between_list_and_wait_is_not_missed(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    detect(sim, pi, "pi", "working")
    listed = herdr_client.call("agent.list")["agents"]
    assert listed[0]["agent_status"] == "working"
    detect(sim, pi, "pi", "idle")  # the turn ends before the client asks to wait
    result = herdr_client.call("agent.wait", target=pi, timeout_ms=1000)
    assert result["agent"]["agent_status"] == "idle"


def test_wait_pane_closed(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    detect(sim, pi, "pi", "working")
    result = reply_after(
        sim, wait_for(herdr_client, pi), lambda: herdr_client.call("pane.close", pane_id=pi)
    )
    assert result["error"] == NOT_RUNNING


def test_wait_pane_moved(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    other = split(herdr_client, pi)
    detect(sim, other, "pi", "working")
    result = reply_after(
        sim,
        wait_for(herdr_client, other),
        lambda: herdr_client.call("pane.move", pane_id=other, destination={"type": "new_tab"}),
    )
    assert result["error"] == NOT_RUNNING


def test_wait_agent_replaced(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    detect(sim, pi, "pi", "working")
    result = reply_after(
        sim, wait_for(herdr_client, pi), lambda: detect(sim, pi, "claude", "working")
    )
    assert result["error"] == NOT_RUNNING


def test_wait_release_with_matching_final_status(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="my-bot", state="working"
    )
    result = reply_after(
        sim,
        wait_for(herdr_client, root, until=["unknown"]),
        lambda: herdr_client.call(
            "pane.release_agent", pane_id=root, source="custom:x", agent="my-bot"
        ),
    )
    assert (result["agent"]["agent_status"], result["agent"]["pane_id"]) == ("unknown", root)


def test_wait_release_without_matching_final_status(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="my-bot", state="working"
    )
    result = reply_after(
        sim,
        wait_for(herdr_client, root),
        lambda: herdr_client.call(
            "pane.release_agent", pane_id=root, source="custom:x", agent="my-bot"
        ),
    )
    assert result["error"] == NOT_RUNNING


def test_wait_by_name_pins_the_name(sim: Simulator, herdr_client: HerdrClient, pi: str) -> None:
    detect(sim, pi, "pi", "working")
    herdr_client.call("agent.rename", target=pi, name="alpha")
    result = reply_after(
        sim,
        wait_for(herdr_client, "alpha"),
        lambda: herdr_client.call("agent.rename", target=pi, name="beta"),
    )
    assert result["error"] == NOT_RUNNING


# -- the CLI (§12 items 18–20) -----------------------------------------------------------------


def test_cli_wait_immediate(herdr_cli: HerdrCli, pi: str) -> None:
    result = cli_json(herdr_cli("agent", "wait", pi), "cli:agent:wait")
    assert result["agent"]["agent_status"] == "idle"


def test_cli_wait_timeout(sim: Simulator, herdr_cli: HerdrCli, pi: str) -> None:
    detect(sim, pi, "pi", "working")
    error = cli_error(herdr_cli("agent", "wait", pi, "--timeout", "100"))
    assert error["error"] == {"code": "timeout", "message": "timed out waiting for agent status"}


def test_cli_prompt_and_send_keys_not_ready(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="pi", state="idle"
    )
    assert cli_error(herdr_cli("agent", "prompt", root, "hi"))["error"]["code"] == "agent_not_ready"
    keys = cli_error(herdr_cli("agent", "send-keys", root, "Enter"))
    assert keys["error"]["code"] == "agent_not_ready"


def test_cli_rename_and_focus(herdr_client: HerdrClient, herdr_cli: HerdrCli, pi: str) -> None:
    renamed = cli_json(herdr_cli("agent", "rename", pi, "alpha"), "cli:agent:rename")
    assert renamed["agent"]["name"] == "alpha"
    focused = cli_json(herdr_cli("agent", "focus", "alpha"), "cli:agent:focus")
    assert focused["agent"]["focused"] is True
    cleared = cli_json(herdr_cli("agent", "rename", pi, "--clear"), "cli:agent:rename")
    assert "name" not in cleared["agent"]


def test_cli_list_and_get(herdr_cli: HerdrCli, pi: str) -> None:
    listed = cli_json(herdr_cli("agent", "list"), "cli:agent:list")
    assert [a["pane_id"] for a in listed["agents"]] == [pi]
    assert cli_json(herdr_cli("agent", "get", pi), "cli:agent:get")["agent"]["agent"] == "pi"


def listeners(sim: Simulator) -> int:
    """How many hub listeners there are (a waiting prompt or wait adds one)."""
    return testing.event_listeners(sim)


def test_cli_prompt_wait_until_idle(sim: Simulator, herdr_cli: HerdrCli, pi: str) -> None:
    # The CLI pings before its request, so "a request is in flight" is not enough here.
    idle = listeners(sim)
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(
            herdr_cli, "agent", "prompt", pi, "hello", "--wait", "--until", "idle"
        )
        wait_until(lambda: listeners(sim) > idle, what="the prompt to be waiting")
        detect(sim, pi, "pi", "working")
        detect(sim, pi, "pi", "idle")
        result = running.result(timeout=10 * SCALE)
    assert result.code == 0, result.stderr
    assert result.json["result"]["type"] == "agent_prompted"
    assert result.json["result"]["agent"]["agent_status"] == "idle"
