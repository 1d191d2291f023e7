"""orchestrator.client.protocol is the one home of Herdr's protocol facts: nothing copies them.

Issue 12: the kind list existed three times (the low-level tool's schema copied seed 001's
``wen``/``ocr`` typo and refused ``qwen``), ``PROTOCOL = 22`` twice, the agent-name rule
three times and the ``agent start`` loop twice. These tests fail when a copy comes back,
and check the shared ``agent start`` algorithm over a scripted ``send()``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import herdr_sim
from herdr_sim.wire import errors as sim_errors
from orchestrator.client import errors as client_errors
from orchestrator.client import protocol, sync
from orchestrator.client.protocol import startup
from orchestrator.pipeline.registry import TOOLS
from tests.fresh_python import fresh_python

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("herdr_sim", "orchestrator", "pytest_herdr")


def _sources() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


@pytest.mark.parametrize(
    ("needle", "why"),
    [
        (re.compile(r"^PROTOCOL\s*(:[^=]*)?=\s*\d", re.MULTILINE), "the protocol number"),
        (re.compile(r"\[a-z\]\[a-z0-9_-\]\{0,31\}"), "the agent-name rule"),
        (re.compile(r'"kilo",\s*"qodercli",\s*"qwen",\s*"maki"'), "the agent-kind list"),
        (re.compile(r"def _wait_for_named_agent|def _poll\(|BUSY_RETRY_WINDOW = "), "agent start"),
        (re.compile(r'"pane\.wait_for_output", "integration\.list"'), "the method list"),
    ],
)
def test_a_protocol_fact_is_written_once(needle: re.Pattern[str], why: str) -> None:
    homes = [
        path.relative_to(ROOT).as_posix()
        for path in _sources()
        if needle.search(path.read_text(encoding="utf-8"))
    ]
    assert len(homes) == 1, f"{why} is written in {homes}"
    assert homes[0].startswith("orchestrator/client/protocol/"), homes


def test_the_orchestrator_and_the_plugin_copy_no_status_list() -> None:
    """Statuses come from orchestrator.client.protocol (the simulator's params specs, a declarative
    table of its own, may spell them out)."""
    needle = re.compile(
        r"""\(\s*["']idle["'],\s*["']done["'],\s*["']blocked["']\s*\)"""
        r"""|\[\s*["']idle["'],\s*["']working["'],\s*["']blocked["'],\s*["']done["']"""
        r"""|\(\s*["']idle["'],\s*["']working["'],\s*["']blocked["'],\s*["']done["']"""
    )
    copies = [
        path.relative_to(ROOT).as_posix()
        for path in _sources()
        if not path.is_relative_to(ROOT / "herdr_sim")
        and not path.is_relative_to(ROOT / "orchestrator" / "client" / "protocol")
        and needle.search(path.read_text(encoding="utf-8"))
    ]
    assert copies == []


def test_every_package_reads_the_same_protocol_number() -> None:
    assert herdr_sim.PROTOCOL == protocol.PROTOCOL == 22
    assert sync.incompatible_message(21, "x").startswith("client protocol 22 ")


def test_the_agent_start_tool_accepts_every_herdr_kind_and_no_seed_typo() -> None:
    schema = TOOLS["_dsh_herdr_agent_start"].input_schema
    kinds = schema["properties"]["kind"]["enum"]
    assert kinds == list(protocol.AGENT_LABELS)
    assert "qwen" in kinds and "wen" not in kinds and "ocr" not in kinds


@pytest.mark.parametrize(
    "name",
    ["a", "pi", "agent-1", "a_b", "z" * 32, "z" * 33, "", "A", "1a", "-a", "a b", "a\n", "é", "aé"],
)
def test_the_name_rule_is_herdrs_pattern_matched_whole(name: str) -> None:
    expected = re.fullmatch(protocol.AGENT_NAME_PATTERN, name) is not None
    assert protocol.is_agent_name(name) is expected


#: the exceptions whose first argument is an error code a client receives
_CODE_RAISERS = ("HerdrError", "PluginError")


def _raised_codes() -> dict[str, set[str]]:
    """Every code herdr_sim raises, by where: a string literal or a module-level constant
    given as the first argument of :data:`_CODE_RAISERS` (so a code written at its raise site
    is judged like one in ``errors.py``)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "herdr_sim").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants: dict[str, str] = {}
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) else None
            if isinstance(node, ast.AnnAssign):
                target = node.target
            value = getattr(node, "value", None)
            text = value.value if isinstance(value, ast.Constant) else None
            if isinstance(target, ast.Name) and isinstance(text, str):
                constants[target.id] = text
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call) or not call.args:
                continue
            name = getattr(call.func, "id", getattr(call.func, "attr", None))
            if name not in _CODE_RAISERS:
                continue
            first = call.args[0]
            code = first.value if isinstance(first, ast.Constant) else None
            if isinstance(first, ast.Name):  # a constant of the module, or one of errors.py
                code = constants.get(first.id, getattr(sim_errors, first.id, None))
            if isinstance(first, ast.Attribute) and first.attr.isupper():
                code = getattr(sim_errors, first.attr, None)
            if isinstance(code, str):
                found.setdefault(code, set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_every_error_code_of_the_simulator_and_the_client_is_a_herdr_code() -> None:
    """Every code the simulator answers is Herdr's, or one of its own listed in
    ``errors.SIMULATOR_OWN_CODES`` and explained in fidelity.md: the codes in ``errors.py``
    and those written at raise sites alike."""
    herdr_codes = protocol.SERVER_ERROR_CODES | protocol.CLI_ERROR_CODES
    own = sim_errors.SIMULATOR_OWN_CODES
    sim_codes = {
        value
        for name, value in vars(sim_errors).items()
        if name.isupper() and isinstance(value, str)
    }
    assert sim_codes <= herdr_codes | own, sim_codes - herdr_codes - own
    raised = _raised_codes()
    assert "plugin_disabled" in raised and "invalid_plugin_id" in raised  # the scan sees sites
    stray = {code: sorted(where) for code, where in raised.items() if code not in herdr_codes}
    assert set(stray) <= own, {c: w for c, w in stray.items() if c not in own}
    assert not own & herdr_codes
    fidelity = (ROOT / "docs" / "simulator" / "fidelity.md").read_text(encoding="utf-8")
    assert all(f"`{code}`" in fidelity for code in own), own
    # the client's own: the CLI's usage errors and the refusal of a value the CLI misreads
    client_own = {"usage_error", "invalid_cli_argument"}
    family_codes = {code for family in client_errors._FAMILIES for code in family.codes}
    assert family_codes <= herdr_codes | client_own, family_codes - herdr_codes - client_own


def test_read_sources_and_statuses_agree_with_the_cli_spellings() -> None:
    assert set(protocol.CLI_READ_SOURCES.values()) == set(protocol.READ_SOURCES)
    assert set(protocol.REPORTABLE_STATES) < set(protocol.AGENT_STATUSES)
    assert set(protocol.SETTLED_STATUSES) < set(protocol.AGENT_STATUSES)


# -- the agent start algorithm over a scripted send() ----------------------------------------

Reply = Callable[[str, dict[str, Any]], Any]


class Script:
    """A ``send`` that answers from per-method callables and records every request."""

    def __init__(self, replies: dict[str, Reply]) -> None:
        self.replies = replies
        self.sent: list[tuple[str, str, dict[str, Any], bool]] = []

    def __call__(self, rid: str, method: str, params: dict[str, Any], checked: bool) -> Any:
        self.sent.append((rid, method, params, checked))
        return self.replies[method](method, params)


def _agent(**fields: Any) -> dict[str, Any]:
    agent = {
        "name": "worker",
        "terminal_id": "t1",
        "agent": "pi",
        "agent_status": "idle",
        "interactive_ready": True,
        "launch_pending": False,
    }
    agent.update(fields)
    return {"id": startup.START_ID, "result": {"agent": agent}}


def _pane(method: str, params: dict[str, Any]) -> Any:
    return {"result": {"pane": {"terminal_id": "t1"}}}


PARAMS = {"name": "worker", "kind": "pi", "pane_id": "w1-1", "args": [], "timeout_ms": 4_000}


def test_start_agent_polls_until_the_agent_is_interactive() -> None:
    polls = iter([_agent(agent_status="unknown", interactive_ready=False, launch_pending=True)])
    send = Script(
        {
            "pane.get": _pane,
            "agent.start": lambda m, p: _agent(launch_pending=True, interactive_ready=False),
            "agent.get": lambda m, p: next(polls, _agent()),
        }
    )
    envelope = startup.start_agent(send, dict(PARAMS), "pi")
    assert envelope["result"]["agent"]["interactive_ready"] is True
    methods = [method for _, method, _, _ in send.sent]
    assert methods == ["pane.get", "agent.start", "agent.get", "agent.get"]
    # Herdr's CLI guards the first poll only; the later polls go unchecked
    assert [checked for _, m, _, checked in send.sent if m == "agent.get"] == [True, False]


@pytest.mark.parametrize(
    ("agent", "code"),
    [
        (_agent(agent="claude"), "agent_kind_mismatch"),
        (_agent(agent_status="blocked"), "agent_not_ready"),
        (_agent(terminal_id="t2"), "agent_name_not_found"),
        (_agent(interactive_ready=False, launch_pending=False), "agent_start_failed"),
    ],
)
def test_start_agent_synthesizes_herdrs_cli_errors(agent: dict[str, Any], code: str) -> None:
    send = Script(
        {
            "pane.get": _pane,
            "agent.start": lambda m, p: _agent(launch_pending=True, interactive_ready=False),
            "agent.get": lambda m, p: agent,
        }
    )
    envelope = startup.start_agent(send, dict(PARAMS), "pi")
    assert envelope["error"]["code"] == code
    assert envelope["id"] == startup.START_ID


def test_start_agent_passes_a_refusal_through_without_polling() -> None:
    refusal = {"id": startup.START_ID, "error": {"code": "agent_name_taken", "message": "taken"}}
    send = Script({"pane.get": _pane, "agent.start": lambda m, p: refusal})
    assert startup.start_agent(send, dict(PARAMS), "pi") is refusal
    assert [method for _, method, _, _ in send.sent] == ["pane.get", "agent.start"]


def test_the_facts_cost_the_herdr_cli_nothing_it_does_not_use() -> None:
    """Every `herdr` start imports orchestrator.client.protocol (the version, the statuses): the
    kind table and the start loop load only when a command asks for them."""
    code = (
        "import sys, orchestrator.client.protocol as p\n"
        "names = ('typing', 're', 'json', 'orchestrator.client.protocol.kinds',"
        " 'orchestrator.client.protocol.startup')\n"
        "print(sorted(m for m in names if m in sys.modules))\n"
        "p.parse_agent_label\n"
        "print('orchestrator.client.protocol.kinds' in sys.modules)\n"
    )
    assert fresh_python(code) == ["[]", "True"]
