"""One redaction rule for native agent args and payloads (tools.result.secret_parts), used by
the low-level tools' command and stderr, a spawn's start failure and every AgentResult text."""

from __future__ import annotations

from pathlib import Path

from orchestrator.agent_tools import contract
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.harvest import to_dict
from orchestrator.core.config import Config
from orchestrator.core.result import MIN_SECRET_CHARS, command_text, redact_text, secret_parts

KEY = "sk-live-0123456789abcdef"
TOKEN = "tok-abcdefghijkl"
ARGS = ["--api-key", KEY, f"--token={TOKEN}", "--thinking", "high", "-v", "--x=short", "openai"]


def test_values_are_secrets_flag_names_and_short_words_are_not() -> None:
    assert secret_parts(ARGS) == [KEY, TOKEN]


def test_free_text_keeps_ordinary_words() -> None:
    text = f"pi --api-key {KEY} --token={TOKEN} --thinking high -v openai: thinking high"
    assert redact_text(text, ARGS) == (
        f"pi --api-key <redacted: {len(KEY)} chars> --token=<redacted: {len(TOKEN)} chars> "
        "--thinking high -v openai: thinking high"
    )


def test_a_flag_value_is_hidden_even_where_it_appears_alone() -> None:
    # a pane may show the value apart from its flag (a config echo, an error quoting it)
    assert TOKEN not in redact_text(f"using token {TOKEN}", [f"--token={TOKEN}"])


def test_the_command_hides_every_native_arg_element() -> None:
    argv = ["herdr", "agent", "start", "a", "--", *ARGS]
    line = command_text(argv, ARGS)
    assert KEY not in line and TOKEN not in line
    assert line.startswith("herdr agent start a -- ")


def test_agent_results_use_the_same_rule(tmp_path: Path) -> None:
    ctx = AgentToolsContext.create(
        {}, config=Config(state_dir=tmp_path / "s", artifact_dir=tmp_path / "a")
    )
    result = contract.AgentResult(
        status="completed",
        tool="herdr_get_agent_result",
        final_message=f"done with thinking high; token {TOKEN}; key {KEY}",
    )
    value = to_dict(ctx, result, secrets=tuple(ARGS))
    assert value["finalMessage"] == (
        f"done with thinking high; token <redacted: {len(TOKEN)} chars>; "
        f"key <redacted: {len(KEY)} chars>"
    )


def test_a_secret_of_exactly_the_minimum_length_is_hidden() -> None:
    """The boundary of ``MIN_SECRET_CHARS``: a value of exactly that many characters is a
    secret, one character fewer is an ordinary word. Planted-bug check: ``>=`` turned into
    ``>`` in ``secret_parts`` leaves an 8-character secret readable in stderr,
    ``finalMessage`` and screen text, and fails here."""
    at_limit = "k" * MIN_SECRET_CHARS
    below = "w" * (MIN_SECRET_CHARS - 1)
    flag_value = "t" * MIN_SECRET_CHARS
    args = ["--api-key", at_limit, f"--token={flag_value}", below, f"--x={below}"]
    assert sorted(secret_parts(args)) == [at_limit, flag_value], (
        f"a {MIN_SECRET_CHARS}-character secret must be hidden and a "
        f"{MIN_SECRET_CHARS - 1}-character word kept: got {secret_parts(args)}"
    )
    text = redact_text(f"key {at_limit} token {flag_value} word {below}", args)
    assert at_limit not in text and flag_value not in text, (
        f"a secret of exactly {MIN_SECRET_CHARS} chars shows: {text!r}"
    )
    assert below in text, f"a {MIN_SECRET_CHARS - 1}-character word was hidden: {text!r}"
