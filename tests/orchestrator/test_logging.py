"""The orchestrator logs its decisions (issue 12c): a NullHandler at the package root, one
logger per module, the task id on every agent-tool record, no secret in any record, and
``herdr-orchestrator mcp --log-level`` logging to stderr only (stdout carries MCP)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

import orchestrator
from herdr_sim.fake_agent import Scenario
from orchestrator import logs
from orchestrator.cli import _parsers
from orchestrator.logs import NO_TASK, bind_task, task_logger, task_scope
from orchestrator.pipeline.registry import run_tool
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.agent_tools.test_spawn import SPAWN, make_ctx, scenario_args
from tests.orchestrator.support import FAST_AGENTS
from tests.results import field

pytestmark = FAST_AGENTS

SECRET_PROMPT = "prompt-secret-7c1e9a"
SECRET_ENV = "env-secret-52bd04"


def test_the_package_root_has_a_null_handler() -> None:
    root = logging.getLogger(orchestrator.__name__)
    assert any(isinstance(h, logging.NullHandler) for h in root.handlers)


def test_a_spawn_logs_its_steps_with_its_task_id_and_no_secret(
    herdr_server: HerdrServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = make_ctx(herdr_server, tmp_path)
    ctx.env = {**ctx.env, "SOME_TOKEN": SECRET_ENV}
    scenario = Scenario().reply("COMPLETE done")
    before = logs.current_task()
    with caplog.at_level(logging.DEBUG, logger="orchestrator"):
        result = run_tool(
            SPAWN,
            {
                "prompt": f"use {SECRET_PROMPT} and {SECRET_ENV}",
                "cwd": str(tmp_path),
                "agent_args": scenario_args(tmp_path, scenario),
            },
            ctx,
        )
    assert field(result, "status") == "completed", result
    task_id = result["taskId"]
    ours = [r for r in caplog.records if r.name.startswith("orchestrator.agent_tools")]
    messages = [r.getMessage() for r in ours]
    # the decisions that matter: the record, the pane, the start, the prompt, the verdict
    for step in ("task recorded", "pane ", "started", "prompt step over", "verdict completed"):
        assert any(step in m for m in messages), (step, messages)
    # every agent-tool record carries the task id (none was made before the task existed)
    assert [r.task_id for r in ours] == [task_id] * len(ours)  # type: ignore[attr-defined]
    # no record anywhere in the orchestrator holds the prompt's or the environment's secret
    for record in caplog.records:
        text = f"{record.getMessage()} {record.args!r}"
        assert SECRET_PROMPT not in text and SECRET_ENV not in text
    # the binding ended with the call
    assert logs.current_task() == before


def test_a_refusal_is_logged_with_its_code_not_its_message(
    herdr_server: HerdrServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = make_ctx(herdr_server, tmp_path, allow_cwd=(tmp_path / "allowed",))
    with caplog.at_level(logging.INFO, logger="orchestrator"):
        result = run_tool(SPAWN, {"prompt": SECRET_PROMPT, "cwd": str(tmp_path)}, ctx)
    assert field(result, "status") == "failed"
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert refused and result["error"]["code"] in refused[0].getMessage()
    assert all(getattr(r, "task_id", None) == NO_TASK for r in refused)
    assert all(SECRET_PROMPT not in r.getMessage() for r in caplog.records)


def test_a_refusal_never_carries_a_task_left_bound_by_earlier_code(
    herdr_server: HerdrServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A task id bound outside any call (a handler called directly, say) must not label the
    records of a later call's refusal: the runner scopes the whole call."""
    ctx = make_ctx(herdr_server, tmp_path, allow_cwd=(tmp_path / "allowed",))
    with task_scope():
        bind_task("t-left-over")
        with caplog.at_level(logging.INFO, logger="orchestrator"):
            run_tool(SPAWN, {"prompt": "p", "cwd": str(tmp_path)}, ctx)
    labelled = {getattr(r, "task_id", None) for r in caplog.records}
    assert labelled == {NO_TASK}, [
        (r.getMessage(), getattr(r, "task_id", None)) for r in caplog.records
    ]


def test_task_scope_and_the_adapter() -> None:
    stream = io.StringIO()
    handler = logs.configure("DEBUG", stream)
    try:
        log = task_logger("orchestrator.agent_tools.example")
        with task_scope():
            with task_scope():
                log.info("before")
                bind_task("t-abc")
                log.info("during")
            log.info("after")
            logging.getLogger("orchestrator.client.example").info("plain")
    finally:
        logging.getLogger("orchestrator").removeHandler(handler)
        logging.getLogger("orchestrator").setLevel(logging.NOTSET)
    lines = stream.getvalue().splitlines()
    assert [line.split("[task ")[1] for line in lines] == [
        "-] before",
        "t-abc] during",
        "-] after",
        "-] plain",
    ]


def test_a_handler_called_directly_leaks_no_binding() -> None:
    from orchestrator.agent_tools.tools import AGENT_TOOLS

    def binds(task_id: str) -> str:
        bind_task(task_id)
        return logs.current_task()

    with task_scope("t-outer"):
        assert logs.scoped(binds)("t-inner") == "t-inner"
        assert logs.current_task() == "t-outer"
    # every agent tool's handler is wrapped so
    assert all(hasattr(tool.handler, "__wrapped__") for tool in AGENT_TOOLS.values())


def test_mcp_takes_a_log_level() -> None:
    parser, _ = _parsers()
    assert parser.parse_args(["mcp", "--log-level", "info"]).log_level == "INFO"
    assert parser.parse_args(["mcp"]).log_level == "WARNING"
    with pytest.raises(SystemExit):
        parser.parse_args(["mcp", "--log-level", "loud"])


def test_configure_writes_to_stderr_by_default() -> None:
    handler = logs.configure("INFO")
    try:
        assert isinstance(handler, logging.StreamHandler)
        import sys

        assert handler.stream is sys.stderr
    finally:
        logging.getLogger("orchestrator").removeHandler(handler)
        logging.getLogger("orchestrator").setLevel(logging.NOTSET)


def test_printable_escapes_every_control_character_and_the_backslash() -> None:
    """What is logged from a request stays on its own line and reads back unambiguously."""
    printable = logs.printable
    assert printable("/mcp\n2026 WARNING forged") == "/mcp\\x0a2026 WARNING forged"
    assert printable("a\rb\x1b[31mc\x7f\x85\u2028d") == "a\\x0db\\x1b[31mc\\x7f\\x85\\u2028d"
    assert printable("C:\\x0a") == "C:\\\\x0a"  # a literal backslash is not an escape
    assert printable("plain é ✓") == "plain é ✓"
