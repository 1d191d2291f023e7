"""The low-level tools' result contract, field by field (``tools.result``, no Herdr needed):
a success, Herdr's refusal, this layer's own failure and an I/O failure each have exactly the
keys and values the tool docs promise, secrets redacted in the command and stderr, and a
read's text shipped once (in ``stdout``, not again in ``data``)."""

from __future__ import annotations

from typing import Any

from orchestrator.client.errors import TransportError
from orchestrator.client.transports import Exchange
from orchestrator.core.result import command_text, failure, from_exchange, from_transport_error

SECRET = "sk-live-0123456789"
ARGV = ("herdr", "pane", "run", "w1:p1", f"echo {SECRET}")


def _exchange(**kw: Any) -> Exchange:
    base: dict[str, Any] = {
        "argv": ARGV,
        "exit_code": 0,
        "printed": None,
        "stderr": "",
        "result": None,
        "error": None,
        "transport": "socket",
    }
    return Exchange(**{**base, **kw})


def test_a_success_has_ok_command_exit_code_transport_and_data() -> None:
    result = from_exchange(_exchange(result={"type": "ok"}), [f"echo {SECRET}"])
    assert result == {
        "ok": True,
        "command": f"herdr pane run w1:p1 '<redacted: {len(SECRET) + 5} chars>'",
        "exitCode": 0,
        "transport": "socket",
        "data": {"type": "ok"},
    }
    assert "data" not in from_exchange(_exchange())  # no result, no data


def test_a_read_ships_its_text_once_in_stdout() -> None:
    read = {"read": {"text": "line 1\nline 2", "source": "visible", "truncated": False}}
    exchange = _exchange(result=read, printed="line 1\nline 2")
    result = from_exchange(exchange, text_output=True)
    assert result["stdout"] == "line 1\nline 2"
    assert result["data"] == {"read": {"source": "visible", "truncated": False}}
    assert read["read"]["text"] == "line 1\nline 2"  # the exchange's own result is untouched
    # without text output the data is Herdr's result as it came, and there is no stdout
    plain = from_exchange(exchange)
    assert plain["data"] == read and "stdout" not in plain
    # a result without a read's text is passed through as it is
    other = {"read": "a text, not an object", "pane": {"pane_id": "w1:p1"}}
    assert from_exchange(_exchange(result=other), text_output=True)["data"] == other
    no_text = {"read": {"source": "visible"}}
    assert from_exchange(_exchange(result=no_text), text_output=True)["data"] == no_text


def test_herdr_s_refusal_keeps_its_error_object_and_redacts_stderr() -> None:
    error = {"code": "pane_not_found", "message": "no pane w1:p9", "maybeApplied": False}
    exchange = _exchange(exit_code=1, error=error, stderr=f"Error: {SECRET} not found")
    result = from_exchange(exchange, [SECRET], text_output=True)
    assert result == {
        "ok": False,
        "command": f"herdr pane run w1:p1 '<redacted: {len(SECRET) + 5} chars>'",
        "exitCode": 1,
        "errorCode": "pane_not_found",
        "data": {
            "error": {"code": "pane_not_found", "message": "no pane w1:p9"},
            "maybeApplied": False,
        },
        "stderr": f"Error: <redacted: {len(SECRET)} chars> not found",
        "transport": "socket",
    }
    # an error without a code is the CLI's own failure
    bare = from_exchange(_exchange(exit_code=2, error={"message": "usage"}))
    assert bare["errorCode"] == "cli_error"
    assert bare["data"] == {"error": {"message": "usage"}}


def test_this_layer_s_failure_has_every_contract_key() -> None:
    assert failure("herdr pane get x", "invalid_arguments", "bad pane", data={"field": "pane"}) == {
        "ok": False,
        "command": "herdr pane get x",
        "exitCode": None,
        "errorCode": "invalid_arguments",
        "data": {"error": {"code": "invalid_arguments", "message": "bad pane"}, "field": "pane"},
        "stderr": "bad pane",
    }
    assert failure("c", "timeout", "late", exit_code=3)["exitCode"] == 3


def test_an_io_failure_says_whether_the_request_may_have_run() -> None:
    sent = from_transport_error(ARGV, TransportError("no answer", maybe_applied=True), [SECRET])
    message = "no answer (the request may have been applied: check with a read before repeating it)"
    assert sent == {
        "ok": False,
        "command": f"herdr pane run w1:p1 '<redacted: {len(SECRET) + 5} chars>'",
        "exitCode": None,
        "errorCode": "transport_error",
        "data": {"error": {"code": "transport_error", "message": message}, "maybeApplied": True},
        "stderr": message,
    }
    unsent = from_transport_error(ARGV, TransportError("refused", maybe_applied=False))
    assert unsent["stderr"] == "refused (the request was not sent)"
    assert unsent["data"]["maybeApplied"] is False


def test_env_values_in_the_command_are_redacted_and_nothing_else() -> None:
    """Each ``--env`` value is hidden (its name stays readable, and only the first ``=``
    splits them); an argument elsewhere that has an ``=`` is left as it is."""
    argv = [
        "herdr",
        "workspace",
        "create",
        "X=1",
        "--env",
        "API_TOKEN=ab=cd",
        "--env",
        "PLAIN",
        "--cwd",
        "/w",
    ]
    assert command_text(argv) == (
        "herdr workspace create X=1 --env 'API_TOKEN=<redacted: 5 chars>' --env PLAIN --cwd /w"
    )
