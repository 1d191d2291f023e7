"""What a real Herdr would refuse or read differently from what the simulator let pass.

Each test pins one fact read in Herdr's source (herdrdev/herdr 1c76079f, 0.8.2; the function
is named in the test) and fails on the orchestrator that ignored it: the agent kinds and the
start timeout bound, the ``status server --json`` fields the doctors dropped, the
``agent start`` deadline, whole-number floats, the options Herdr's ``main`` takes out of
every command line, reads of a busy full-screen agent, what a CLI read cannot know, relative
cwds, kind aliases on the socket path, undecodable output and NUL bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Literal

import pytest

from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.doctor_tool import doctor as herdr_doctor
from orchestrator.client import cli_map
from orchestrator.client.errors import ServerNotRunning
from orchestrator.client.protocol import AGENT_LABELS
from orchestrator.client.protocol import startup as agent_start
from orchestrator.client.sync import HerdrClient
from orchestrator.client.transports import WAIT_MARGIN, operation_deadline
from orchestrator.core.aliases import HERDR_KINDS
from orchestrator.core.config import Config
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import TOOLS, run_tool
from orchestrator.tools.low_level import AGENT_KINDS
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import FAST_AGENTS, Kind, client, context, pane_of, received
from tests.results import assert_refused, field

pytestmark = FAST_AGENTS

BOTH: list[Kind] = ["socket", "cli"]


def tool(ctx: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    return run_tool(f"_dsh_herdr_{name}", args, ctx)


def stub_herdr(path: Path, script: str) -> Path:
    """An executable ``herdr`` stand-in (a real Herdr binary of another release, say)."""
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# -- agent start: Herdr's kinds and timeout bounds (src/app/agents.rs, src/detect/mod.rs) -----


def test_agent_kinds_are_herdrs_canonical_labels_in_one_table() -> None:
    schema = TOOLS["_dsh_herdr_agent_start"].input_schema["properties"]["kind"]
    assert tuple(schema["enum"]) == AGENT_KINDS == AGENT_LABELS
    assert AGENT_KINDS is AGENT_LABELS and HERDR_KINDS is AGENT_LABELS
    assert "qwen" in AGENT_KINDS and not {"wen", "ocr"} & set(AGENT_KINDS)


@pytest.mark.parametrize("kind", ["wen", "ocr"])
def test_the_seeds_misspelt_kinds_are_refused_before_herdr(kind: str) -> None:
    args = {"name": "a", "kind": kind, "pane": "w1:p1", "preview": True}
    result = run_tool("_dsh_herdr_agent_start", args, ToolContext(env={}))
    assert field(result, "errorCode") == "invalid_arguments"


def test_qwen_is_a_kind_herdr_starts() -> None:
    args = {"name": "a", "kind": "qwen", "pane": "w1:p1", "preview": True}
    result = run_tool("_dsh_herdr_agent_start", args, ToolContext(env={}))
    assert result["ok"] is True and "--kind qwen" in result["command"]


@pytest.mark.parametrize(("timeout", "accepted"), [(300_000, True), (300_001, False)])
def test_the_start_timeout_stops_at_herdrs_maximum(timeout: int, accepted: bool) -> None:
    args = {"name": "a", "kind": "pi", "pane": "w1:p1", "timeout": timeout, "preview": True}
    result = run_tool("_dsh_herdr_agent_start", args, ToolContext(env={}))
    assert result["ok"] is accepted
    if not accepted:
        assert field(result, "errorCode") == "invalid_arguments"


def test_agent_start_without_a_timeout_outlives_herdrs_own_budget() -> None:
    # herdr agent start waits 30 s (plus up to 2 s of busy-pane retries) when no --timeout is
    # given (src/cli/agent.rs agent_start); a deadline of exactly 30 s kills it before it answers
    op = cli_map.operation("agent.start")
    params = {"name": "a", "kind": "pi", "pane_id": "w1:p1"}
    budget = agent_start.DEFAULT_TIMEOUT_MS / 1000 + agent_start.BUSY_RETRY_WINDOW
    assert operation_deadline(op, params, 30.0) >= budget + WAIT_MARGIN
    with_timeout = {**params, "timeout_ms": 60_000}
    assert operation_deadline(op, with_timeout, 30.0) >= 60 + agent_start.BUSY_RETRY_WINDOW


# -- whole-number floats (cli.rs parse_u64_flag; serde u64) --------------------------------------


@pytest.mark.parametrize("kind", BOTH)
def test_whole_number_floats_reach_herdr_as_integers(
    herdr_server: HerdrServer, tmp_path: Path, kind: Kind
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    rec = received(herdr_server)
    ctx = context(herdr_server, kind)
    assert tool(ctx, "pane_run", pane=pane, command="echo floats-ok")["ok"]
    result = tool(ctx, "pane_wait_output", pane=pane, pattern="floats-ok", timeout=5000.0)
    assert result["ok"] is True, result
    assert "--timeout 5000 " in result["command"] + " "
    (sent,) = rec.calls("pane.wait_for_output")
    assert sent["timeout_ms"] == 5000 and isinstance(sent["timeout_ms"], int)
    read = tool(ctx, "pane_read", pane=pane, lines=3.0)
    assert read["ok"] is True, read
    (sent_read,) = rec.calls("pane.read")
    assert sent_read["lines"] == 3 and isinstance(sent_read["lines"], int)


def test_the_python_api_normalises_integers_too(herdr_server: HerdrServer, tmp_path: Path) -> None:
    pane = pane_of(herdr_server, tmp_path)
    herdr = client(herdr_server, "cli")
    herdr.pane_run(pane, "echo api-floats")
    match = herdr.pane_wait_output(pane, "api-floats", timeout_ms=5000.0)  # type: ignore[arg-type]
    assert match.matched_line.endswith("api-floats")


# -- the doctors read `compatible` and `running` (src/cli/status.rs server_status_json) ---------


def _status_stub(tmp_path: Path, status: str) -> Path:
    log = tmp_path / "calls.log"
    return stub_herdr(
        tmp_path / "herdr",
        f'echo "$*" >> {log}\n'
        'if [ "$1 $2" = "status server" ]; then\n'
        f"  printf '%s\\n' '{status}'\n"
        "  exit 0\n"
        "fi\n"
        'printf \'%s\\n\' \'{"error":{"code":"protocol_mismatch","message":"cli protocol '
        '21, server protocol 22"},"id":"cli"}\' >&2\n'
        "exit 1\n",
    )


INCOMPATIBLE = (
    '{"status":"running","running":true,"version":"0.9.9","protocol":22,'
    '"compatible":false,"socket":"/tmp/x.sock"}'
)
NOT_RUNNING = (
    '{"status":"not_running","running":false,"version":null,"protocol":null,'
    '"compatible":null,"socket":"/tmp/none.sock"}'
)


def _stub_client(tmp_path: Path, status: str) -> tuple[HerdrClient, dict[str, str]]:
    herdr = _status_stub(tmp_path, status)
    env = {"PATH": os.defpath, "HOME": str(tmp_path), "HERDR_SOCKET_PATH": "/tmp/none.sock"}
    return HerdrClient.build("cli", herdr=herdr, env=env), env


def _agent_doctor(tmp_path: Path, herdr: HerdrClient, env: dict[str, str]) -> dict[str, Any]:
    state = tmp_path / "state"
    config = Config(state_dir=state, artifact_dir=state / "artifacts", transport="cli")
    report = herdr_doctor({}, AgentToolsContext.create(env, config=config, client=herdr))
    checks: dict[str, dict[str, Any]] = {check["id"]: check for check in report["checks"]}
    return checks["herdr.server"]


def test_an_incompatible_herdr_executable_fails_both_doctors(tmp_path: Path) -> None:
    herdr, env = _stub_client(tmp_path, INCOMPATIBLE)
    result = run_tool("_dsh_herdr_doctor", {}, ToolContext.with_client(herdr, env))
    assert field(result, "errorCode") == "protocol_mismatch"
    assert field(result, "data", "server", "compatible") is False
    # it stopped at the ping: no command that Herdr would refuse was tried
    assert (tmp_path / "calls.log").read_text().splitlines() == ["status server --json"]
    check = _agent_doctor(tmp_path, herdr, env)
    assert field(check, "status") == "fail" and "does not speak the protocol" in check["detail"]
    with pytest.raises(Exception, match="does not speak the protocol") as caught:
        herdr.ping()
    assert getattr(caught.value, "code", None) == "protocol_mismatch"


def test_no_server_over_the_cli_is_server_not_running(tmp_path: Path) -> None:
    herdr, env = _stub_client(tmp_path, NOT_RUNNING)
    result = run_tool("_dsh_herdr_doctor", {}, ToolContext.with_client(herdr, env))
    assert field(result, "errorCode") == "server_not_running"
    check = _agent_doctor(tmp_path, herdr, env)
    assert "no herdr server is running at /tmp/none.sock" in check["detail"]
    with pytest.raises(ServerNotRunning, match="no herdr server is running"):
        herdr.ping()


def test_no_server_over_the_simulators_cli_is_server_not_running(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    env = {**herdr_server.env, "HERDR_SOCKET_PATH": str(tmp_path / "none.sock")}
    herdr = HerdrClient.build("cli", herdr=herdr_server.cli_path, env=env)
    with pytest.raises(ServerNotRunning):
        herdr.ping()


# -- values Herdr's CLI reads as something else (main, spec::print_requested_help) ------------

PRESCANNED = [
    ("pane_send_text", "text", "--session"),
    ("pane_send_text", "text", "--session=other"),
    ("pane_run", "command", "--remote"),
    ("pane_run", "command", "--handoff"),
]


@pytest.mark.parametrize(("name", "argument", "value"), PRESCANNED)
def test_a_payload_herdr_would_take_as_a_global_option_is_refused_over_the_cli(
    herdr_server: HerdrServer, tmp_path: Path, name: str, argument: str, value: str
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    rec = received(herdr_server)
    result = tool(context(herdr_server, "cli"), name, pane=pane, **{argument: value})
    assert_refused(result, "invalid_cli_argument")
    assert value.partition("=")[0] in field(result, "data", "error", "message")
    assert rec.methods() == []  # nothing reached Herdr


@pytest.mark.parametrize(("name", "field", "value"), PRESCANNED)
def test_the_socket_carries_such_payloads_intact(
    herdr_server: HerdrServer, tmp_path: Path, name: str, field: str, value: str
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    rec = received(herdr_server)
    result = tool(context(herdr_server, "socket"), name, pane=pane, **{field: value})
    assert result["ok"] is True, result
    (sent,) = rec.calls("pane.send_text" if name == "pane_send_text" else "pane.send_input")
    assert sent["text"] == value


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("workspace_create", {"cwd": "/tmp", "label": "--remote-keybindings"}),
        ("pane_get", {"pane": "--help"}),
        ("pane_get", {"pane": "-h"}),
        ("pane_read", {"pane": "-x"}),
        ("agent_explain", {"agent": "help"}),
        ("agent_get", {"agent": "--help"}),
    ],
)
def test_labels_cwds_env_and_ids_that_read_as_options_are_refused_over_the_cli(
    herdr_server: HerdrServer, name: str, args: dict[str, Any]
) -> None:
    rec = received(herdr_server)
    result = tool(context(herdr_server, "cli"), name, **args)
    assert_refused(result, "invalid_cli_argument")
    assert result["exitCode"] == 2
    assert rec.methods() == []


@pytest.mark.parametrize("transport", ["cli", "socket"])
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("pane_split", {"pane": "w1:p1", "direction": "right", "env": {"--remote": "h"}}),
        ("workspace_create", {"cwd": "/tmp", "env": {"--session": "x"}}),
    ],
)
def test_env_names_that_read_as_options_are_no_names_on_any_transport(
    herdr_server: HerdrServer, transport: Literal["cli", "socket"], name: str, args: dict[str, Any]
) -> None:
    # The env entry travels as NAME=VALUE; only a NAME starting with "--" could read as
    # Herdr's global option, and the env policy refuses such a name before any transport.
    rec = received(herdr_server)
    result = tool(context(herdr_server, transport), name, **args)
    assert_refused(result, "invalid_arguments")
    assert rec.methods() == []


def test_an_option_looking_pane_id_is_not_found_over_the_socket(herdr_server: HerdrServer) -> None:
    result = tool(context(herdr_server, "socket"), "pane_get", pane="--help")
    assert_refused(result, "pane_not_found")


def test_patterns_and_native_args_after_the_separator_stay_allowed() -> None:
    # `--match=VALUE` is one token (no pre-scan match) and agent args follow `--`
    wait = cli_map.operation("pane.wait_for_output")
    params = {"pane_id": "w1:p1", "match": {"type": "substring", "value": "--session"}}
    assert cli_map.cli_refusal(wait, params) is None
    start = cli_map.operation("agent.start")
    native = {"name": "a", "kind": "pi", "pane_id": "w1:p1", "args": ["--session", "/x"]}
    assert cli_map.cli_refusal(start, native) is None


# -- reads --------------------------------------------------------------------------------------


@pytest.fixture
def worker(herdr_server: HerdrServer, tmp_path: Path) -> str:
    """A fake pi named ``worker``, ready for prompts."""
    pane = pane_of(herdr_server, tmp_path)
    scenario = tmp_path / "turns.json"
    scenario.write_text('{"turns": []}')
    client(herdr_server, "socket").agent_start(
        "worker", "pi", pane, args=["--scenario", str(scenario)], timeout_ms=20_000
    )
    return "worker"


@pytest.mark.parametrize("kind", BOTH)
def test_a_busy_full_screen_agent_is_read_from_its_visible_screen(
    herdr_server: HerdrServer, herdr_faults: Any, worker: str, kind: Kind
) -> None:
    # src/server/headless.rs agent_read_not_idle_error: "... Wait and retry, or use --source
    # visible"
    message = (
        f"cannot read 40 lines while {worker} is working: its alternate-screen history can "
        "only be captured by scrolling while idle. Wait and retry, or use --source visible"
    )
    rec = received(herdr_server)
    herdr_faults.add("agent.read", error=("agent_not_idle", message), times=1)
    result = tool(context(herdr_server, kind), "agent_read", agent=worker, lines=40)
    assert result["ok"] is True, result
    assert field(result, "data", "fallback") == {"source": "visible", "reason": message}
    assert "--source visible" in result["command"]
    sources = [params["source"] for params in rec.calls("agent.read")]
    assert sources == ["recent_unwrapped", "visible"]


@pytest.mark.parametrize("kind", BOTH)
def test_what_a_cli_read_cannot_know_is_unknown_not_false(
    herdr_server: HerdrServer, tmp_path: Path, kind: Kind
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    read = client(herdr_server, kind).pane_read(pane, "visible")
    if kind == "cli":
        assert (read.truncated, read.revision) == (None, None)
    else:
        assert isinstance(read.truncated, bool) and isinstance(read.revision, int)


# -- schemas say what Herdr does -----------------------------------------------------------------


def test_the_split_ratio_and_regex_schemas_say_what_herdr_does() -> None:
    split = TOOLS["_dsh_herdr_pane_split"].input_schema["properties"]["ratio"]
    assert "clamps" in split["description"] and "0.1-0.9" in split["description"]
    regex = TOOLS["_dsh_herdr_pane_wait_output"].input_schema["properties"]["regex"]
    assert "Rust" in regex["description"]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("pane_send_text", {"pane": "w1:p1", "text": "a\0b"}),
        ("pane_run", {"pane": "w1:p1", "command": "echo \0"}),
        ("agent_prompt", {"agent": "a", "prompt": "x\0", "preview": True}),
        ("workspace_create", {"cwd": "/tmp", "env": {"A": "x\0y"}}),
    ],
)
def test_nul_bytes_are_refused_by_the_schema(name: str, args: dict[str, Any]) -> None:
    result = run_tool(f"_dsh_herdr_{name}", args, ToolContext(env={}))
    assert field(result, "errorCode") == "invalid_arguments", result


def test_a_cwd_named_like_an_option_is_made_absolute_so_the_cli_carries_it() -> None:
    op = cli_map.operation("workspace.create")
    params = cli_map.normalise_params({"cwd": "--session"})
    assert params["cwd"] == str(Path.cwd() / "--session")
    assert cli_map.cli_refusal(op, params) is None


@pytest.mark.parametrize("kind", BOTH)
def test_a_relative_cwd_is_made_absolute_against_the_callers_directory(
    herdr_server: HerdrServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: Kind
) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    rec = received(herdr_server)
    result = tool(context(herdr_server, kind), "workspace_create", cwd="sub")
    assert result["ok"] is True, result
    (sent,) = rec.calls("workspace.create")
    assert sent["cwd"] == str(tmp_path / "sub")


def test_the_socket_start_compares_the_detected_kind_with_the_canonical_label(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    # Herdr's CLI canonicalises --kind before comparing (agent_start: agent_label(parse_agent_
    # label(kind))); an alias such as claude-code is detected as claude
    pane = pane_of(herdr_server, tmp_path)
    scenario = tmp_path / "turns.json"
    scenario.write_text('{"turns": []}')
    started = client(herdr_server, "socket").agent_start(
        "aliased", "claude-code", pane, args=["--scenario", str(scenario)], timeout_ms=20_000
    )
    assert started.agent.agent == "claude"


# -- the CLI's output is UTF-8 whatever the locale --------------------------------------------


def test_undecodable_cli_output_is_replaced_not_a_crash(tmp_path: Path) -> None:
    herdr = stub_herdr(tmp_path / "herdr", "printf 'caf\\303\\251 \\377'\n")
    env = {"PATH": os.defpath, "HOME": str(tmp_path), "LC_ALL": "C"}
    exchange = HerdrClient.build("cli", herdr=herdr, env=env).execute(
        "pane.read", {"pane_id": "w1:p1", "source": "visible"}
    )
    assert exchange.ok and exchange.stdout == "café \ufffd"
