"""The managed-child pi extension on its own: loaded by the pinned Node (which runs
TypeScript), driven with pi's events by a stand-in ``pi`` object, talking to a recording
stand-in bridge. Shows exactly what the end-to-end tests in ``test_managed_child_pi.py`` see
only through the mailbox: the requests sent to the bridge and their order, how each action
reaches pi, the refusals of ``ask_owner`` and the shell-timeout default."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.managed.extension_install import EXTENSION_SOURCE
from pytest_herdr.real_agents import require_pi

pytestmark = pytest.mark.real_agent

#: steps: ["event", name, payload, idle] | ["tool", name, params] | ["tick"] (poll now)
HARNESS = """
import extension from %(asset)s;
const handlers = {};
const tools = {};
const out = {
  handlers: [], tools: [], sent: [], aborts: 0, toolResults: [], errors: [], payloads: [],
  returns: [],
};
let idle = true;
let editor = "";
const pi = {
  on: (name, handler) => { handlers[name] = handler; out.handlers.push(name); },
  registerTool: (tool) => { tools[tool.name] = tool; out.tools.push(tool.name); },
  sendUserMessage: (text, options) => out.sent.push([text, options?.deliverAs ?? null]),
};
const ctx = {
  cwd: process.env.HARNESS_CWD,
  isIdle: () => idle,
  // pi's terminal UI puts the steers an abort drops into the editor
  abort: () => { out.aborts += 1; editor = "dropped steer"; },
  sessionManager: { getSessionFile: () => "/sessions/s.jsonl", getSessionId: () => "sid-1" },
  ui: {
    notify: (message) => out.errors.push(message),
    getEditorText: () => editor,
    setEditorText: (text) => { editor = text; },
  },
};
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
extension(pi);
for (const step of JSON.parse(process.argv[2])) {
  if (step[0] === "event") {
    idle = step[3];
    const value = handlers[step[1]] ? await handlers[step[1]](step[2], ctx) : undefined;
    out.returns.push(value ?? null);
    out.payloads.push(step[2]);  // as the handlers left it (tool_call mutates its input)
    await pause(30);
  } else if (step[0] === "tool") {
    try {
      const result = await tools[step[1]].execute("id-1", step[2], undefined, undefined, ctx);
      out.toolResults.push(result);
    } catch (error) {
      out.toolResults.push({ thrown: error.message });
    }
  } else if (step[0] === "tick") {
    await pause(400);  // more than one 250 ms poll
  }
}
if (handlers.session_shutdown) handlers.session_shutdown({ reason: "quit" }, ctx);
out.editor = editor;
console.log(JSON.stringify(out));
process.exit(0);
"""

#: a stand-in bridge: records every request line, answers ok (poll: the actions, once, at the
#: first poll after the request STUB_AFTER names: "hello" or an event such as "turn_start")
BRIDGE = """
import json, os, sys
actions = json.loads(os.environ.get("STUB_ACTIONS", "[]"))
ready = False
with open(os.environ["STUB_LOG"], "a") as log:
    for line in sys.stdin:
        request = json.loads(line)
        log.write(line)
        log.flush()
        ready = ready or os.environ["STUB_AFTER"] in (request["op"], request.get("event"))
        answer = {"ok": True}
        if request["op"] == "poll":
            answer["actions"] = actions if ready else []
            actions = actions if not ready else []
        elif request["op"] == "ask" and os.environ.get("STUB_ASK_ERROR"):
            answer = {"ok": False, "error": {"category": "agent_busy",
                                             "message": os.environ["STUB_ASK_ERROR"]}}
        elif request["op"] == "ask":
            answer["askId"] = "ask-1"
        elif request["op"] == "hello":
            answer.update(label="scout", definition="scout", allowedDefinitions=[])
        sys.stdout.write(json.dumps(answer) + "\\n")
        sys.stdout.flush()
"""

Run = Callable[..., tuple[dict[str, Any], list[dict[str, Any]]]]


@pytest.fixture
def run(tmp_path: Path) -> Run:
    node = require_pi().bin_dir / "node"
    harness = tmp_path / "harness.mjs"
    harness.write_text(HARNESS % {"asset": json.dumps(str(EXTENSION_SOURCE))})
    bridge = tmp_path / "bridge.py"
    bridge.write_text(BRIDGE)
    python = tmp_path / "python"  # run as `$PI_HERDSMAN_PYTHON -m orchestrator.managed.child_cli`
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {bridge}\n")
    python.chmod(0o700)

    def drive(
        steps: list[list[Any]],
        *,
        actions: list[dict[str, str]] | None = None,
        after: str = "hello",
        managed: bool = True,
        interpreter: str | None = None,
        ask_error: str = "",
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        log = tmp_path / "bridge.log"
        log.write_text("")
        env = {"PATH": os.environ.get("PATH", ""), "HARNESS_CWD": str(tmp_path),
               "STUB_LOG": str(log), "STUB_ACTIONS": json.dumps(actions or []),
               "STUB_AFTER": after, "STUB_ASK_ERROR": ask_error}  # fmt: skip
        if managed:
            chosen = str(python) if interpreter is None else interpreter
            env |= {"PI_HERDSMAN_MAILBOX": str(tmp_path / "box"), "PI_HERDSMAN_PYTHON": chosen}
        done = subprocess.run(
            [str(node), str(harness), json.dumps(steps)],
            env=env, capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        requests = [json.loads(line) for line in log.read_text().splitlines()]
        return json.loads(done.stdout), [r for r in requests if r["op"] != "poll"]

    return drive


START = ["event", "session_start", {"reason": "startup"}, True]


def assistant(text: str | None = None, tools: int = 0) -> list[Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": f"c{i}", "name": "x"} for i in range(tools)]
    return ["event", "message_end", {"message": {"role": "assistant", "content": content}}, False]


def test_outside_a_managed_child_it_registers_nothing(run: Run) -> None:
    out, requests = run([START], managed=False)
    assert (out["handlers"], out["tools"], requests) == ([], [], [])


def test_without_an_absolute_interpreter_it_says_so_and_never_says_hello(run: Run) -> None:
    for interpreter in ("", "python3"):
        out, requests = run([START, ["tick"]], interpreter=interpreter)
        assert requests == []
        assert out["errors"] == [
            "managed agent: PI_HERDSMAN_PYTHON is not an absolute interpreter path: not managed"
        ]


def test_hello_then_one_turn_reports_in_order_with_the_last_assistant_text(run: Run) -> None:
    out, requests = run([
        START,
        ["event", "agent_start", {}, False],
        assistant("thinking", tools=1),
        ["event", "tool_execution_start", {}, False],
        ["event", "tool_execution_end", {}, False],
        ["event", "agent_start", {}, False],  # a second low-level run of the same operation
        assistant("All done."),
        ["event", "agent_settled", {"aborted": False}, True],
    ])  # fmt: skip
    hello = requests[0]
    assert hello == {"op": "hello", "piSessionId": "sid-1", "piSessionFile": "/sessions/s.jsonl",
                     "cwd": hello["cwd"], "pid": hello["pid"]}  # fmt: skip
    assert Path(hello["cwd"]).is_dir() and isinstance(hello["pid"], int)
    assert [(r["op"], r.get("event")) for r in requests[1:]] == [
        ("event", "turn_start"), ("event", "tool_start"), ("event", "tool_end"),
        ("event", "turn_end"),
    ]  # fmt: skip
    assert requests[-1]["assistantText"] == "All done."
    assert "ask_owner" in out["tools"] and out["errors"] == []


def test_an_operation_pi_aborted_on_its_own_ends_without_a_text(run: Run) -> None:
    _, requests = run([
        START, ["event", "agent_start", {}, False], assistant("half an ans"),
        ["event", "agent_settled", {"aborted": True}, True],
    ])  # fmt: skip
    assert requests[-1] == {"op": "event", "event": "turn_end", "assistantText": None}


def test_actions_reach_pi_as_a_message_a_steer_and_an_abort_then_a_message(run: Run) -> None:
    actions = [{"do": "steer", "text": "focus"}, {"do": "abort_and_start", "text": "stop"}]
    out, requests = run(
        [START, ["event", "agent_start", {}, False], ["tick"],
         ["event", "agent_settled", {"aborted": True}, True]],
        actions=actions, after="turn_start",
    )  # fmt: skip
    assert out["sent"] == [["focus", "steer"], ["stop", None]]
    assert out["aborts"] == 1
    assert out["editor"] == ""  # the dropped steer is not left in pi's editor
    # the aborted operation ends without a text (the bridge posts nothing for it), then the
    # interrupt's turn starts
    assert requests[1:] == [
        {"op": "event", "event": "turn_start"},
        {"op": "event", "event": "turn_end", "assistantText": None},
    ]


def test_a_second_interrupt_before_pi_settled_ends_both_aborted_operations(run: Run) -> None:
    actions = [{"do": "abort_and_start", "text": "first"},
               {"do": "abort_and_start", "text": "second"}]  # fmt: skip
    out, requests = run(
        [START, ["event", "agent_start", {}, False], assistant("partial"), ["tick"],
         ["event", "agent_settled", {"aborted": True}, True]],
        actions=actions, after="turn_start",
    )  # fmt: skip
    assert out["sent"] == [["second", None]]  # the later interrupt supersedes the earlier
    ends = [r for r in requests if r.get("event") == "turn_end"]
    assert ends == [{"op": "event", "event": "turn_end", "assistantText": None}] * 2


MARKER = "__PI_HERDSMAN_AGENT_V4__:"
ID = "0b7f3c52-6a8e-4d3b-9f51-2c4e8a1d7e90"


def test_a_named_control_goes_in_under_the_marker_and_comes_out_as_its_text(run: Run) -> None:
    def marker_input(source: str) -> list[Any]:
        return ["event", "input", {"text": MARKER + ID, "source": source}, True]

    out, _ = run(
        [START, ["tick"], marker_input("interactive"), marker_input("extension"),
         marker_input("extension"), ["event", "input", {"text": "plain", "source": "rpc"}, True]],
        actions=[{"do": "start_turn", "text": "the task", "id": ID}],
    )  # fmt: skip
    assert out["sent"] == [[MARKER + ID, None]]
    assert out["returns"][-4:] == [
        {"action": "handled"},  # a marker typed in the pane is not ours: dropped
        {"action": "transform", "text": "the task"},
        {"action": "handled"},  # used once only
        None,  # other input: untouched
    ]


def test_a_task_while_idle_starts_a_turn(run: Run) -> None:
    out, _ = run([START, ["tick"]], actions=[{"do": "start_turn", "text": "do it"}])
    assert out["sent"] == [["do it", None]]


def test_ask_owner_posts_the_question_and_ends_the_turn(run: Run) -> None:
    ask = ["tool", "ask_owner", {"question": " Which? "}]
    out, requests = run([START, assistant(tools=1), ask])
    assert requests[-1] == {"op": "ask", "question": "Which?"}
    result = out["toolResults"][0]
    assert result["terminate"] is True and result["details"] == {"askId": "ask-1"}


def test_an_ask_the_bridge_refuses_is_a_tool_error_with_its_reason(run: Run) -> None:
    refusal = "Agent cannot ask its owner: already waiting for an owner reply"
    out, _ = run([START, assistant(tools=1), ["tool", "ask_owner", {"question": "Again?"}]],
                 ask_error=refusal)  # fmt: skip
    assert out["toolResults"] == [{"thrown": f"agent_busy: {refusal}"}]


def test_ask_owner_is_refused_beside_another_tool_call_or_blank(run: Run) -> None:
    out, requests = run([
        START, assistant(tools=2), ["tool", "ask_owner", {"question": "Which?"}],
        assistant(tools=1), ["tool", "ask_owner", {"question": "  "}],
        ["tool", "ask_owner", {"question": "Which?", "files": ["missing.txt"]}],
    ])  # fmt: skip
    thrown = [r["thrown"] for r in out["toolResults"]]
    assert thrown[0].startswith("Call ask_owner alone as the final tool call")
    assert "non-empty question" in thrown[1]
    assert thrown[2].startswith("Cannot read file missing.txt")
    assert [r for r in requests if r["op"] == "ask"] == []


def test_ask_owner_files_become_references_with_canonical_paths(run: Run, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("12345")
    files = ["notes.md", str(tmp_path / "notes.md")]  # the same file twice: one reference
    _, requests = run([START, assistant(tools=1),
                       ["tool", "ask_owner", {"question": "See?", "files": files}]])  # fmt: skip
    path = (tmp_path / "notes.md").resolve()
    assert requests[-1]["question"] == f'<file name="{path}" bytes="5" />\n\nSee?'


def test_shell_calls_without_a_timeout_get_600_seconds(run: Run) -> None:
    calls = [("bash", {"command": "ls"}), ("bash", {"command": "ls", "timeout": 5}),
             ("powershell", {"command": "dir"}), ("read", {"path": "x"})]  # fmt: skip
    steps = [START] + [
        ["event", "tool_call", {"toolName": name, "input": value}, False] for name, value in calls
    ]
    out, _ = run(steps)
    assert [p["input"] for p in out["payloads"][1:]] == [
        {"command": "ls", "timeout": 600}, {"command": "ls", "timeout": 5},
        {"command": "dir", "timeout": 600}, {"path": "x"},
    ]  # fmt: skip
