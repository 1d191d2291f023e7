"""Scripts: loading (with errors that say where) and which turn answers which request."""

from __future__ import annotations

from pathlib import Path

import pytest

from herdr_sim.fake_llm import Match, Script, ScriptError, ToolCall, Turn

TOML = """
[[turns]]
when = { user_contains = "hello" }
text = "Hi there."

[[turns]]
when = { user_regex = "run (echo|ls)" }
tool_calls = [{ name = "bash", arguments = { command = "echo hi" } }]

[[turns]]
when = { tool_result = true }
text = "It printed hi."
delay = 0.1

[[turns]]
error = { status = 429, message = "slow down" }
repeat = true
"""


def test_a_toml_script_loads_every_field(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(TOML)
    script = Script.load(path)
    assert script.turns == [
        Turn(text="Hi there.", when=Match(user_contains="hello")),
        Turn(
            tool_calls=(ToolCall("bash", {"command": "echo hi"}),),
            when=Match(user_regex="run (echo|ls)"),
        ),
        Turn(text="It printed hi.", when=Match(tool_result=True), delay=0.1),
        Turn(error=(429, "slow down"), repeat=True),
    ]


def test_a_json_script_loads_the_same_as_python(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"turns": [{"text": "a"}], "fallback": {"text": "b", "repeat": true}}')
    script = Script.load(path)
    assert script.turns == [Turn(text="a")]
    assert script.fallback == Turn(text="b", repeat=True)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"turns": [{"txt": "a"}]}', "turns[0]: unknown key(s) txt"),
        ('{"turns": [{}]}', "turns[0]: a turn needs text, tool_calls or an error"),
        ('{"turns": [{"text": 3}]}', "turns[0].text: must be a string"),
        ('{"turns": [{"text": "a", "error": {"status": 500}}]}', "no text or tool_calls"),
        ('{"turns": [{"error": {"status": 200}}]}', "status 200 is not an HTTP error"),
        ('{"turns": [{"text": "a", "when": {"user_regex": "("}}]}', "turns[0].when: user_regex"),
        ('{"turns": [{"text": "a", "when": {"tool_result": "yes"}}]}', "tool_result: must be"),
        ('{"turns": [{"tool_calls": [{"arguments": {}}]}]}', "tool_calls[0].name: must be"),
        ('{"turns": [{"text": "a", "delay": -1}]}', "delay -1.0 is negative"),
        ('{"turns": {"text": "a"}}', "`turns` must be a list"),
        ('{"turn": []}', "script: unknown key(s) turn"),
        ("{not json", "not valid JSON"),
    ],
)
def test_a_bad_script_fails_at_load_time_saying_where(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ScriptError) as caught:
        Script.load(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_a_missing_script_file_is_a_script_error(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="No such file"):
        Script.load(tmp_path / "absent.toml")


def test_match_conditions_all_hold() -> None:
    match = Match(user_contains="run", tool_result=False)
    assert match.fits("please run it", ())
    assert not match.fits("please run it", ("output",))
    assert not match.fits("walk", ())
    assert Match(tool_result_contains="hi").fits("x", ("first", "hi there"))
    assert not Match(tool_result_contains="hi").fits("x", ("hi", "last"))
    assert not Match(tool_result_contains="hi").fits("x", ())
    assert Match().fits("", ())
