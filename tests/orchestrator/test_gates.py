"""The gates hold on every low-level path (issue 10 §3): the preview gate read with one boolean
parser, ``pane_send_text`` with a line break as R2, the ``env`` policy of creates, and the
configuration's ``enabled`` and ``allowCwd`` on every create and R2 call. Each test proves
that nothing reached Herdr when a gate refused (the simulator's received requests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.booleans import FALSE_WORDS, TRUE_WORDS, BooleanError, parse_bool
from orchestrator.pipeline.registry import run_tool
from orchestrator.tools.env_policy import env_problem
from pytest_herdr.agents import FakeAgents
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import Received, context, received
from tests.results import assert_refused, field
from tests.waits import wait_until

BIN = Path(sys.executable).parent
#: What the test harness itself may send (the plugin's event watcher).
HARNESS = {"ping", "events.subscribe"}
GATE = "DSH_HERDR_PREVIEW_REQUIRED"


def acted(rec: Received) -> list[str]:
    """The methods the orchestrator sent, the harness's own aside."""
    return [m for m in rec.methods(pings=True) if m not in HARNESS]


def workspace(server: HerdrServer, cwd: Path) -> str:
    """A workspace in ``cwd`` made directly on the simulator; its root pane id."""
    assert server.sim is not None
    created = server.sim.call("workspace.create", {"cwd": str(cwd)})["result"]
    pane: str = created["root_pane"]["pane_id"]
    return pane


# -- one boolean parser ------------------------------------------------------------------------


@pytest.mark.parametrize("word", [*TRUE_WORDS, "ON", " Yes ", "Y", "True"])
def test_every_usual_spelling_of_true_is_true(word: str) -> None:
    assert parse_bool("X", word) is True


@pytest.mark.parametrize("word", [*FALSE_WORDS, "OFF", " No ", "N"])
def test_every_usual_spelling_of_false_is_false(word: str) -> None:
    assert parse_bool("X", word) is False


@pytest.mark.parametrize("word", ["maybe", "2", "enable", "onn", "t"])
def test_an_unknown_spelling_is_refused_naming_the_setting(word: str) -> None:
    with pytest.raises(BooleanError, match=rf"^{GATE}='{word}' is not a boolean"):
        parse_bool(GATE, word)


@pytest.mark.parametrize("word", ["on", "y", "Y", "ON", " yes "])
def test_the_preview_gate_spelt_on_or_y_refuses_r2_calls(
    herdr_server: HerdrServer, tmp_path: Path, word: str
) -> None:
    pane = workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", {GATE: word})
    result = run_tool("_dsh_herdr_pane_run", {"pane": pane, "command": "echo hi"}, ctx)
    assert_refused(result, "preview_required")
    assert acted(rec) == []


def test_an_unreadable_preview_gate_refuses_instead_of_reading_off(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    pane = workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", {GATE: "maybe"})
    result = run_tool("_dsh_herdr_pane_run", {"pane": pane, "command": "echo hi"}, ctx)
    assert_refused(result, "config_invalid")
    assert f"{GATE}='maybe' is not a boolean" in field(result, "data", "error", "message")
    assert acted(rec) == []


@pytest.mark.parametrize("word", ["0", "off", "n", ""])
def test_the_preview_gate_spelt_off_lets_r2_calls_run(
    herdr_server: HerdrServer, tmp_path: Path, word: str
) -> None:
    pane = workspace(herdr_server, tmp_path)
    ctx = context(herdr_server, "socket", {GATE: word})
    result = run_tool("_dsh_herdr_pane_run", {"pane": pane, "command": "echo hi"}, ctx)
    assert result["ok"] is True, result


# -- pane_send_text: a line break is R2 ------------------------------------------------------


@pytest.mark.parametrize("text", ["touch x\n", "touch x\r", "a\x0fb", "\x1b[A"])
def test_send_text_that_can_submit_a_line_needs_a_preview_under_the_gate(
    herdr_server: HerdrServer, tmp_path: Path, text: str
) -> None:
    pane = workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", {GATE: "1"})
    result = run_tool("_dsh_herdr_pane_send_text", {"pane": pane, "text": text}, ctx)
    assert_refused(result, "preview_required")
    assert field(result, "data", "target", "submits") is True
    assert acted(rec) == []
    preview = run_tool(
        "_dsh_herdr_pane_send_text", {"pane": pane, "text": text, "preview": True}, ctx
    )
    assert preview["ok"] is True and field(preview, "data", "preview") is True
    assert field(preview, "data", "action") == "pane.send_text"
    assert text not in repr(preview)
    assert acted(rec) == []


def test_send_text_without_a_line_break_stays_r1_under_the_gate(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    pane = workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", {GATE: "1"})
    result = run_tool("_dsh_herdr_pane_send_text", {"pane": pane, "text": "ls\t-la"}, ctx)
    assert result["ok"] is True, result
    assert [c["text"] for c in rec.calls("pane.send_text")] == ["ls\t-la"]


def test_send_text_with_a_line_break_really_executes_so_the_gate_matters(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    # Without the gate the text runs: the reason it counts as R2.
    pane = workspace(herdr_server, tmp_path)
    marker = tmp_path / "ran"
    ctx = context(herdr_server, "socket")
    result = run_tool("_dsh_herdr_pane_send_text", {"pane": pane, "text": f"touch {marker}\n"}, ctx)
    assert result["ok"] is True
    waited = run_tool(
        "_dsh_herdr_pane_run",
        {"pane": pane, "command": f"test -e {marker} && echo EXISTS-OK"},
        ctx,
    )
    assert waited["ok"] is True
    found = run_tool(
        "_dsh_herdr_pane_wait_output", {"pane": pane, "pattern": "EXISTS-OK", "timeout": 20000}, ctx
    )
    assert found["ok"] is True, found


# -- env on creates --------------------------------------------------------------------------

REFUSED_ENV = [
    "BASH_FUNC_ls%%",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "ld_preload",
    "DYLD_INSERT_LIBRARIES",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "ZDOTDIR",
    "HOME",
    "PATH",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "GIT_CONFIG_PARAMETERS",
    "DSH_HERDR_PREVIEW_REQUIRED",
    "HERDR_ORCHESTRATOR_ALLOW_CWD",
    "1BAD",
    "A-B",
]


@pytest.mark.parametrize("name", REFUSED_ENV)
def test_env_policy_refuses_names_that_choose_code(name: str) -> None:
    problem = env_problem({name: "x"})
    assert problem is not None and name in problem


@pytest.mark.parametrize("value", ["a\x00b", "() { :; }; touch /tmp/x"])
def test_env_policy_refuses_nul_and_function_values(value: str) -> None:
    assert env_problem({"FOO": value}) is not None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"BASH_FUNC_x%%": "() { :; }"},
            (
                "env: 'BASH_FUNC_x%%' is not a plain variable name ([A-Za-z_][A-Za-z0-9_]*); "
                "exported shell functions (BASH_FUNC_…%%) and odd names are refused"
            ),
        ),
        (
            {"LD_PRELOAD": "/tmp/x.so"},
            (
                "env: LD_PRELOAD is refused: it can make the new shell or a program started in "
                "it run code (loader, shell startup or prompt hooks, PATH, interpreter options, "
                "our own gates); see docs/orchestrator/security.md"
            ),
        ),
        ({"FOO": "a\x00b"}, "env: the value of FOO contains NUL"),
        (
            {"FOO": "  () { :; }"},
            "env: the value of FOO looks like an exported bash function",
        ),
    ],
)
def test_env_policy_says_why_in_words_a_user_can_act_on(env: dict[str, str], message: str) -> None:
    """The refusal is the caller's only explanation: it names the entry, the rule and where
    the rule is documented. A function body after leading blanks is refused too."""
    assert env_problem(env) == message


def test_env_policy_lets_plain_data_through() -> None:
    assert env_problem({"FOO": "bar", "TASK_ID": "t-1", "LANG": "C.UTF-8", "TERM": "xterm"}) is None


def create_args(tool: str, tmp_path: Path, pane: str, env: dict[str, str]) -> dict[str, Any]:
    if tool == "_dsh_herdr_workspace_create":
        return {"cwd": str(tmp_path), "env": env}
    if tool == "_dsh_herdr_tab_create":
        return {"workspace": pane.split(":")[0], "cwd": str(tmp_path), "env": env}
    return {"pane": pane, "direction": "right", "cwd": str(tmp_path), "env": env}


CREATES = ["_dsh_herdr_workspace_create", "_dsh_herdr_tab_create", "_dsh_herdr_pane_split"]


@pytest.mark.parametrize("tool", CREATES)
@pytest.mark.parametrize("name", ["BASH_FUNC_ls%%", "LD_PRELOAD", "BASH_ENV", "PROMPT_COMMAND"])
def test_creates_refuse_env_that_runs_code_in_the_new_shell(
    herdr_server: HerdrServer, tmp_path: Path, tool: str, name: str
) -> None:
    pane = workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    marker = tmp_path / "ran"
    args = create_args(tool, tmp_path, pane, {name: f"touch {marker}"})
    result = run_tool(tool, args, context(herdr_server, "socket"))
    assert_refused(result, "invalid_arguments")
    assert name in field(result, "data", "error", "message")
    assert field(result, "data", "field") == "env"
    assert acted(rec) == []


@pytest.mark.parametrize("tool", CREATES)
def test_creates_still_pass_plain_env(herdr_server: HerdrServer, tmp_path: Path, tool: str) -> None:
    pane = workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    args = create_args(tool, tmp_path, pane, {"TASK_NOTE": "hello"})
    result = run_tool(tool, args, context(herdr_server, "socket"))
    assert result["ok"] is True, result
    method = tool.removeprefix("_dsh_herdr_").replace("_", ".")
    assert rec.calls(method)[0]["env"] == {"TASK_NOTE": "hello"}


# -- enabled = false binds every create and every R2 call ------------------------------------


def r2_and_create_calls(pane: str, cwd: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("_dsh_herdr_workspace_create", {"cwd": str(cwd)}),
        ("_dsh_herdr_tab_create", {"workspace": pane.split(":")[0], "cwd": str(cwd)}),
        ("_dsh_herdr_pane_split", {"pane": pane, "direction": "down"}),
        ("_dsh_herdr_pane_run", {"pane": pane, "command": "echo hi"}),
        ("_dsh_herdr_pane_send_text", {"pane": pane, "text": "echo hi\n"}),
        ("_dsh_herdr_agent_start", {"name": "a1", "kind": "pi", "pane": pane}),
        ("_dsh_herdr_agent_prompt", {"agent": "a1", "prompt": "go"}),
    ]


@pytest.mark.parametrize("word", ["false", "off", "n"])
def test_enabled_false_refuses_every_create_and_r2_call(
    herdr_server: HerdrServer, tmp_path: Path, word: str
) -> None:
    pane = workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", {"HERDR_ORCHESTRATOR_ENABLED": word})
    for tool, args in r2_and_create_calls(pane, tmp_path):
        result = run_tool(tool, args, ctx)
        assert_refused(result, "disabled", tool)
    assert acted(rec) == []
    # Reads still work, and so does typing without a line break.
    assert run_tool("_dsh_herdr_pane_list", {}, ctx)["ok"] is True
    assert run_tool("_dsh_herdr_pane_send_text", {"pane": pane, "text": "ls"}, ctx)["ok"] is True


def test_an_invalid_configuration_refuses_creates_loudly(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", {"HERDR_ORCHESTRATOR_ENABLED": "perhaps"})
    result = run_tool("_dsh_herdr_workspace_create", {"cwd": str(tmp_path)}, ctx)
    assert_refused(result, "config_invalid")
    assert "perhaps" in field(result, "data", "error", "message")
    assert acted(rec) == []


# -- allowCwd binds every create and every R2 call -------------------------------------------


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    allowed = (tmp_path / "allowed").resolve()
    outside = (tmp_path / "outside").resolve()
    allowed.mkdir()
    outside.mkdir()
    return allowed, outside


def allow(allowed: Path) -> dict[str, str]:
    return {"HERDR_ORCHESTRATOR_ALLOW_CWD": str(allowed)}


@pytest.mark.parametrize("tool", CREATES)
def test_creates_outside_allow_cwd_are_refused(
    herdr_server: HerdrServer, roots: tuple[Path, Path], tool: str
) -> None:
    allowed, outside = roots
    pane = workspace(herdr_server, allowed)
    rec = received(herdr_server)
    args = create_args(tool, outside, pane, {})
    args.pop("env")
    result = run_tool(tool, args, context(herdr_server, "socket", allow(allowed)))
    assert_refused(result, "cwd_not_allowed")
    assert acted(rec) == []


@pytest.mark.parametrize("tool", CREATES)
def test_a_create_gets_the_resolved_path_that_was_checked(
    herdr_server: HerdrServer, roots: tuple[Path, Path], tool: str
) -> None:
    allowed, _ = roots
    (allowed / "real").mkdir()
    (allowed / "link").symlink_to(allowed / "real")
    pane = workspace(herdr_server, allowed)
    rec = received(herdr_server)
    args = create_args(tool, allowed / "link", pane, {})
    args.pop("env")
    result = run_tool(tool, args, context(herdr_server, "socket", allow(allowed)))
    assert result["ok"] is True, result
    method = tool.removeprefix("_dsh_herdr_").replace("_", ".")
    assert rec.calls(method)[0]["cwd"] == str(allowed / "real")


def test_a_symlink_out_of_allow_cwd_is_refused_on_create(
    herdr_server: HerdrServer, roots: tuple[Path, Path]
) -> None:
    allowed, outside = roots
    (allowed / "escape").symlink_to(outside)
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", allow(allowed))
    result = run_tool("_dsh_herdr_workspace_create", {"cwd": str(allowed / "escape")}, ctx)
    assert_refused(result, "cwd_not_allowed")
    assert acted(rec) == []


def test_a_split_without_cwd_checks_the_directory_it_inherits(
    herdr_server: HerdrServer, roots: tuple[Path, Path]
) -> None:
    allowed, outside = roots
    outside_pane = workspace(herdr_server, outside)
    inside_pane = workspace(herdr_server, allowed)
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", allow(allowed))
    args = {"pane": outside_pane, "direction": "right"}
    result = run_tool("_dsh_herdr_pane_split", args, ctx)
    assert_refused(result, "cwd_not_allowed")
    assert rec.calls("pane.split") == []
    result = run_tool("_dsh_herdr_pane_split", {"pane": inside_pane, "direction": "right"}, ctx)
    assert result["ok"] is True, result
    assert rec.calls("pane.split")[0]["cwd"] == str(allowed)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("_dsh_herdr_pane_run", {"command": "echo hi"}),
        ("_dsh_herdr_pane_send_text", {"text": "echo hi\n"}),
        ("_dsh_herdr_agent_start", {"name": "a1", "kind": "pi"}),
    ],
)
def test_r2_calls_in_a_pane_outside_allow_cwd_are_refused(
    herdr_server: HerdrServer, roots: tuple[Path, Path], tool: str, args: dict[str, Any]
) -> None:
    allowed, outside = roots
    pane = workspace(herdr_server, outside)
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", allow(allowed))
    result = run_tool(tool, {**args, "pane": pane}, ctx)
    assert_refused(result, "cwd_not_allowed")
    assert "outside allowCwd" in field(result, "data", "error", "message")
    assert acted(rec) == ["pane.get"]  # read, never acted
    inside = workspace(herdr_server, allowed)
    if tool != "_dsh_herdr_agent_start":
        assert run_tool(tool, {**args, "pane": inside}, ctx)["ok"] is True


def test_r2_calls_are_refused_when_the_foreground_job_works_outside_allow_cwd(
    herdr_server: HerdrServer, roots: tuple[Path, Path]
) -> None:
    """The pane's shell is inside ``allowCwd`` but the job in its foreground runs outside:
    a command typed now would reach that job, so the R2 call is refused all the same.
    Planted-bug check: ``pane_cwd_allowed`` reading only the shell's directory (not
    ``foreground_cwd``) lets the call through and fails here."""
    assert herdr_server.sim is not None
    allowed, outside = roots
    pane = workspace(herdr_server, allowed)
    herdr_server.sim.call(
        "pane.send_text", {"pane_id": pane, "text": f"(cd {outside} && exec sleep 100)\r"}
    )

    def foreground_outside() -> dict[str, Any] | None:
        assert herdr_server.sim is not None
        info: dict[str, Any] = herdr_server.sim.call("pane.get", {"pane_id": pane})["result"]
        found = info.get("pane", info)
        return found if found.get("foreground_cwd") == str(outside) else None

    seen = wait_until(foreground_outside, what="the foreground job's cwd outside allowCwd")
    assert seen["cwd"] == str(allowed), "the shell itself must stay inside allowCwd"
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", allow(allowed))
    result = run_tool("_dsh_herdr_pane_run", {"pane": pane, "command": "echo hi"}, ctx)
    assert (result["ok"], result.get("errorCode")) == (False, "cwd_not_allowed"), (
        "a pane whose foreground job works outside allowCwd must refuse R2 calls "
        f"(pane_cwd_allowed checks foreground_cwd too): {result}"
    )
    assert acted(rec) == ["pane.get"], "refused after reading the pane, nothing typed"


def test_an_empty_allow_cwd_variable_is_refused_not_read_as_anywhere(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", {"HERDR_ORCHESTRATOR_ALLOW_CWD": ""})
    result = run_tool("_dsh_herdr_workspace_create", {"cwd": str(tmp_path)}, ctx)
    assert_refused(result, "config_invalid")
    assert "empty" in field(result, "data", "error", "message")
    assert acted(rec) == []


# -- over `herdr-orchestrator call` ----------------------------------------------------------


def cli_call(server: HerdrServer, tool: str, args: dict[str, Any], **env: str) -> tuple[int, Any]:
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HERDR_", "DSH_HERDR_"))},
        **server.env,
        "HERDR_BIN_PATH": str(server.cli_path),
        **env,
    }
    done = subprocess.run(
        [str(BIN / "herdr-orchestrator"), "call", tool, json.dumps(args)],
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, json.loads(done.stdout)


def test_cli_send_text_with_a_newline_under_the_gate_spelt_on(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    pane = workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    code, result = cli_call(
        herdr_server,
        "_dsh_herdr_pane_send_text",
        {"pane": pane, "text": "rm -rf x\n"},
        **{GATE: "on"},
    )
    assert code == 1
    assert field(result, "errorCode") == "preview_required"
    assert acted(rec) == []


def test_cli_create_refuses_ld_preload(herdr_server: HerdrServer, tmp_path: Path) -> None:
    rec = received(herdr_server)
    args = {"cwd": str(tmp_path), "env": {"LD_PRELOAD": "/tmp/evil.so"}}
    code, result = cli_call(herdr_server, "_dsh_herdr_workspace_create", args)
    assert (code, field(result, "errorCode")) == (1, "invalid_arguments")
    assert "LD_PRELOAD" in field(result, "data", "error", "message")
    assert acted(rec) == []


def test_cli_enabled_off_and_allow_cwd_bind_low_level_tools(
    herdr_server: HerdrServer, roots: tuple[Path, Path]
) -> None:
    allowed, outside = roots
    rec = received(herdr_server)
    code, result = cli_call(
        herdr_server,
        "_dsh_herdr_workspace_create",
        {"cwd": str(outside)},
        HERDR_ORCHESTRATOR_ALLOW_CWD=str(allowed),
    )
    assert (code, field(result, "errorCode")) == (1, "cwd_not_allowed")
    code, result = cli_call(
        herdr_server,
        "_dsh_herdr_workspace_create",
        {"cwd": str(allowed)},
        HERDR_ORCHESTRATOR_ENABLED="off",
    )
    assert (code, field(result, "errorCode")) == (1, "disabled")
    assert acted(rec) == []


@pytest.mark.herdr(agent_start_settle=0.1, detection_interval=0.1, detection_idle_hold=0.1)
def test_agent_prompt_to_an_agent_outside_allow_cwd_is_refused(
    herdr_server: HerdrServer, roots: tuple[Path, Path], herdr_fake_agent: FakeAgents
) -> None:
    allowed, _ = roots
    herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("ok"), name="ext")
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket", allow(allowed))
    result = run_tool("_dsh_herdr_agent_prompt", {"agent": "ext", "prompt": "go"}, ctx)
    assert_refused(result, "cwd_not_allowed")
    assert "agent.prompt" not in acted(rec)
    missing = run_tool("_dsh_herdr_agent_prompt", {"agent": "ghost", "prompt": "go"}, ctx)
    assert_refused(missing, "cwd_unknown")
    assert "agent.prompt" not in acted(rec)
