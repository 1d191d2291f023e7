"""The declarative option parser (:mod:`herdr_sim.herdr_cli.options`) and the argument
precedence rules of Herdr's parsers that it reproduces, pinned through the CLI."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from herdr_sim.herdr_cli.errors import FatalError, UsageError
from herdr_sim.herdr_cli.options import (
    CALLER,
    CALLER_IF_ANY,
    U64,
    U64_FATAL,
    Append,
    Flag,
    Help,
    Lead,
    Pairs,
    Positional,
    Spec,
    Tail,
    Value,
    choice,
    finite_f32,
    pick,
    switch,
)
from herdr_sim.herdr_cli.output import CliExit
from tests.cli.fake_herdr import FakeHerdr

if TYPE_CHECKING:
    from tests.cli.conftest import Run


def _pair(raw: str) -> tuple[str, str]:
    key, _, value = raw.partition("=")
    return key, value


_DEMO = Spec(
    Positional("pane_id", required=True),
    Value("--count", convert=U64),
    *switch("--focus", "--no-focus"),
    Append("--tag"),
    Pairs("--env", convert=_pair),
    Flag("--raw", format="ansi", strip_ansi=False),
    defaults={"focus": False, "format": "text", "strip_ansi": True},
    usage="usage: demo <pane_id>",
    equals=("--count",),
)


def _usage_error(spec: Spec, args: list[str], caller: str | None = None) -> str:
    with pytest.raises(UsageError) as err:
        spec.parse(args, caller)
    return err.value.message


# -- the parser ------------------------------------------------------------------------------


def test_params_follow_declaration_order_not_argv_order() -> None:
    params = _DEMO.request(["--raw", "--env", "B=2", "--count=3", "--focus", "p1", "--tag", "x"])
    assert list(params.items()) == [
        ("pane_id", "p1"),
        ("count", 3),
        ("focus", True),
        ("tag", ["x"]),
        ("env", {"B": "2"}),
        ("format", "ansi"),
        ("strip_ansi", False),
    ]


def test_params_skip_none_and_empty_containers_but_keep_false_zero_and_empty_text() -> None:
    assert _DEMO.request(["p1"]) == {
        "pane_id": "p1", "focus": False, "format": "text", "strip_ansi": True,
    }  # fmt: skip
    assert pick({"a": False, "b": 0, "c": "", "d": None, "e": [], "f": {}}, *"abcdef") == {
        "a": False, "b": 0, "c": "",
    }  # fmt: skip


def test_last_value_wins_and_repeatables_accumulate_in_order() -> None:
    values = _DEMO.parse(
        ["p1", "--count", "1", "--count", "2", "--focus", "--no-focus", "--tag", "a", "--tag",
         "b", "--env", "A=1", "--env", "B=2", "--env", "A=3"]
    )  # fmt: skip
    assert values["count"] == 2
    assert values["focus"] is False
    assert values["tag"] == ["a", "b"]
    assert list(values["env"].items()) == [("A", "3"), ("B", "2")]


def test_repeatable_defaults_are_fresh_per_parse() -> None:
    _DEMO.parse(["p1", "--tag", "a"])
    assert _DEMO.parse(["p1"])["tag"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["p1", "--count"], "missing value for --count"),
        (["p1", "--bogus"], "unknown option: --bogus"),
        (["p1", "-"], "unknown option: -"),
        (["p1", "p2"], "unexpected argument: p2"),
        (["--focus"], "usage: demo <pane_id>"),
        (["p1", "--count", "x"], "invalid value for --count: x"),
        (["p1", "--count=x"], "invalid value for --count: x"),
        (["p1", "--focus=1"], "unknown option: --focus=1"),
        (["p1", "--tag=x"], "unknown option: --tag=x"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    assert _usage_error(_DEMO, args) == message


def test_first_bad_argument_is_reported_and_required_checks_come_last() -> None:
    spec = Spec(
        Value("--a", convert=U64, required=True),
        Value("--b", required="need b"),
        usage="u",
    )
    assert _usage_error(spec, ["--a", "x", "--bogus"]) == "invalid value for --a: x"
    assert _usage_error(spec, ["--b", "1", "--bogus"]) == "unknown option: --bogus"
    assert _usage_error(spec, []) == "missing required --a"
    assert _usage_error(spec, ["--a", "1"]) == "need b"


def test_fatal_converters_raise_rust_errors() -> None:
    spec = Spec(
        Value("--seq", convert=U64_FATAL),
        Value("--state", convert=choice(("idle",), "bad state: {value}", fatal=True)),
    )
    with pytest.raises(FatalError) as seq:
        spec.parse(["--seq", "-1"])
    assert seq.value.display == "invalid value for --seq: -1"
    with pytest.raises(FatalError) as state:
        spec.parse(["--state", "done"])
    assert state.value.debug == 'Custom { kind: Other, error: "bad state: done" }'


def test_choice_mappings_translate_to_wire_values() -> None:
    spec = Spec(Value("--sound", convert=choice({"none": None, "done": "done"}, "bad {value}")))
    assert spec.request(["--sound", "done", "--sound", "none"]) == {}
    assert _usage_error(spec, ["--sound", "{value}"]) == "bad {value}"


def test_finite_f32_rounds_like_rust_and_rejects_non_finite() -> None:
    spec = Spec(Value("--ratio", convert=finite_f32("ratio")))
    assert spec.request(["--ratio", "0.333"]) == {"ratio": 0.333}
    assert _usage_error(spec, ["--ratio", "inf"]) == "invalid ratio: inf"


def test_leads_are_taken_before_options_whatever_they_look_like() -> None:
    spec = Spec(Lead("name"), Lead("text", missing="needs text"), Value("--x"), usage="u")
    assert spec.request(["--x", "--y", "--x", "1"]) == {"name": "--x", "text": "--y", "x": "1"}
    assert _usage_error(spec, []) == "u"
    assert _usage_error(spec, ["n"]) == "needs text"
    assert _usage_error(spec, ["n", "t", "extra"]) == "unknown option: extra"


def test_optional_lead_is_taken_unless_it_starts_with_two_dashes() -> None:
    spec = Spec(Lead("pane_id", optional=True), Flag("--on"))
    assert spec.request(["-x", "--on"]) == {"pane_id": "-x", "on": True}
    assert spec.request(["--on"]) == {"on": True}
    assert _usage_error(spec, ["--on", "p1"]) == "unknown option: p1"


def test_tail_stops_options_at_the_first_double_dash() -> None:
    spec = Spec(Lead("name"), Value("--pane"), Tail("args"), usage="u")
    assert spec.request(["n", "--pane", "p", "--", "--pane", "--"]) == {
        "name": "n", "pane": "p", "args": ["--pane", "--"],
    }  # fmt: skip
    assert _usage_error(spec, ["n", "--pane", "--", "p"]) == "missing value for --pane"
    # A leading `--` is the name, and also where the options end.
    assert spec.request(["--", "--pane", "p"]) == {"name": "--", "args": ["--pane", "p"]}
    strict = Spec(Positional("id"), Tail("resume", missing="nothing after --"))
    assert _usage_error(strict, ["--bogus", "--"]) == "nothing after --"


def test_equals_split_is_a_pre_pass_over_the_options() -> None:
    spec = Spec(Positional("id"), Value("--source"), Value("--lines"), equals=True)
    # `--lines=5` is split before parsing, so `--source` takes `--lines` as its value.
    assert spec.request(["--source", "--lines=5"]) == {"id": "5", "source": "--lines"}
    assert spec.request(["--source=a=b", "x=y"]) == {"id": "x=y", "source": "a=b"}


def test_once_is_checked_after_the_value_and_if_set_before_it() -> None:
    once = Spec(Value("--match", "m", once="one"), Value("--regex", "m", once="one"))
    assert _usage_error(once, ["--match", "a", "--regex"]) == "missing value for --regex"
    assert _usage_error(once, ["--match", "a", "--regex", "b"]) == "one"
    guarded = Spec(Positional("pane_id"), Value("--pane", "pane_id", if_set="only one"))
    assert _usage_error(guarded, ["p1", "--pane"]) == "only one"
    assert _usage_error(guarded, ["--pane", "p1", "p2"]) == "unexpected argument: p2"


def test_caller_values_resolve_when_read() -> None:
    spec = Spec(Value("--pane", "pane_id"), Flag("--current", pane_id=CALLER), Flag("--x"))
    assert spec.request(["--current"], caller="w1:p3") == {"pane_id": "w1:p3"}
    assert _usage_error(spec, ["--current", "--bogus"]) == "--current requires HERDR_PANE_ID"
    lenient = Spec(
        Value("--pane", "caller"), Flag("--current", caller=CALLER_IF_ANY),
        defaults={"caller": CALLER_IF_ANY},
    )  # fmt: skip
    assert lenient.request([], caller="w1:p3") == {"caller": "w1:p3"}
    assert lenient.request(["--pane", "p", "--current"]) == {}


def test_help_words_among_the_options_print_usage_and_exit_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = Spec(Lead("target"), Value("--until"), Help("usage: a", "usage: b"), usage="u")
    with pytest.raises(CliExit) as exit_:
        spec.parse(["t", "--until", "x", "help", "--bogus"])
    assert exit_.value.code == 0
    assert capsys.readouterr().err == "usage: a\nusage: b\n"
    assert _usage_error(spec, ["t", "--bogus", "-h"]) == "unknown option: --bogus"


# -- Herdr's precedence rules, through the CLI -------------------------------------------------

USAGE_ERRORS: list[tuple[list[str], str]] = [
    (["pane", "input", "w1:p1", "--pane"], "provide only one pane selector"),
    (["pane", "wait-output", "w1:p1", "--match", "a", "--regex"], "missing value for --regex"),
    (["pane", "read", "--source", "--lines=5", "w1:p1"], "invalid read source: --lines"),
    (["pane", "split", "--direction=right"], "unknown option: --direction=right"),
    (["pane", "read", "w1:p1", "--raw=1"], "unknown option: --raw=1"),
    (["agent", "start", "--", "--kind", "pi", "--pane", "w1:p1"], "missing required --kind"),
    (["pane", "report-agent", "w1:p1", "--source", "s", "--agent", "a", "--state", "idle",
      "--"], "missing resume command after --"),
    (["pane", "report-agent", "--bogus", "--"], "missing resume command after --"),
    (["pane", "release-agent", "w1:p1", "extra"], "unknown option: extra"),
    (["pane", "layout", "--current", "--bogus"], "--current requires HERDR_PANE_ID"),
    (["pane", "neighbor", "--direction", "north", "--bogus"],
     "invalid pane direction: north (expected left, right, up, or down)"),
    (["pane", "resize", "--bogus", "--direction", "north"], "unknown option: --bogus"),
    (["pane", "resize", "--amount", "1"], ("usage: herdr pane resize --direction "
     "left|right|up|down [--amount FLOAT] [--pane ID|--current]")),
    (["pane", "focus", "--pane"],
     "usage: herdr pane focus --direction left|right|up|down [--pane ID|--current]"),
    (["pane", "focus", "--pane", "w1:p1"],
     "usage: herdr pane focus --direction left|right|up|down [--pane ID|--current]"),
    (["pane", "neighbor", "--current"],
     "usage: herdr pane neighbor --direction left|right|up|down [--pane ID|--current]"),
    (["pane", "swap", "--source-pane", "w1:p1"],
     ("usage: herdr pane swap --direction left|right|up|down [--pane ID|--current]\n"
      "       herdr pane swap --source-pane ID --target-pane ID")),
    (["pane", "zoom", "w1:p1", "w1:p2"], "unknown option: w1:p2"),
    (["pane", "move", "-p", "--new-tab"], ("usage: herdr pane move <pane_id> --tab <tab_id> "
     "--split right|down [--target-pane ID] [--ratio FLOAT] [--focus|--no-focus]\n"
     "       herdr pane move <pane_id> --new-tab [--workspace ID] [--label TEXT] "
     "[--focus|--no-focus]\n       herdr pane move <pane_id> --new-workspace [--label TEXT] "
     "[--tab-label TEXT] [--focus|--no-focus]")),
    (["pane", "report-metadata", "w1:p1", "--source", "s", "--applies-to-source", " ",
      "--title", "t"], "missing value for --applies-to-source"),
    (["workspace", "close", "w1", "--bogus"],
     "usage: herdr workspace close <workspace_id> [--group]"),
    (["workspace", "report-metadata", "w1", "--source", " ", "--token", "a=b"],
     "missing required --source"),
    (["agent", "explain", "a", "b"], "usage: herdr agent explain <target> [--json]"),
    (["agent", "explain", "a", "--format", "yaml"],
     "invalid --format: yaml (expected text or json)"),
    (["agent", "prompt", "r", "hi", "--until", "idle", "--timeout", "5"],
     "--until requires --wait"),
    (["agent", "attach", "r", "--takeover", "x"], "unknown option: x"),
    (["notification", "show", "help"], ("usage: herdr notification show <title> [--body TEXT] "
     "[--position top-left|top-right|bottom-left|bottom-right] [--sound none|done|request]")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"), USAGE_ERRORS, ids=[" ".join(case[0]) for case in USAGE_ERRORS]
)
def test_precedence_of_usage_errors(
    fake: FakeHerdr, cli: Callable[..., Run], argv: list[str], message: str
) -> None:
    run = cli(*argv)
    assert (run.code, run.out, run.err) == (2, "", message + "\n")
    assert fake.requests == []


REQUESTS: list[tuple[list[str], str, dict[str, Any]]] = [
    (["pane", "zoom", "-x"], "pane.zoom", {"pane_id": "-x", "mode": "toggle"}),
    (["pane", "neighbor", "--current", "--pane", "w1:p2", "--direction", "up"], "pane.neighbor",
     {"pane_id": "w1:p2", "direction": "up"}),
    (["pane", "split", "w1:p1", "--direction", "down", "--env", "A=1", "--env", "B=2", "--env",
      "A=3", "--right-click=pane", "--focus", "--no-focus"], "pane.split",
     {"target_pane_id": "w1:p1", "direction": "down", "focus": False, "right_click": "pane",
      "env": {"A": "3", "B": "2"}}),
    (["pane", "report-metadata", "w1:p1", "--clear-token", "a", "--token", "b=c", "--source",
      " s ", "--clear-title", "--seq", "0"], "pane.report_metadata",
     {"pane_id": "w1:p1", "source": "s", "tokens": {"a": None, "b": "c"}, "clear_title": True,
      "clear_display_agent": False, "clear_state_labels": False, "seq": 0}),
    (["pane", "report-agent-session", "--seq=2", "w1:p1", "--agent", "", "--source", "x", "--",
      "pi", "--session=s"], "pane.report_agent_session",
     {"pane_id": "w1:p1", "source": "x", "agent": "", "seq": 2, "resume_argv": ["pi",
      "--session=s"]}),
    (["pane", "move", "w1:p1", "--new-tab", "--workspace", "w2", "--label", "", "--no-focus"],
     "pane.move", {"pane_id": "w1:p1", "destination": {"type": "new_tab", "workspace_id": "w2",
     "label": ""}, "focus": False}),
    (["pane", "wait-output", "--lines=0", "w1:p1", "--regex=a=b", "--raw"],
     "pane.wait_for_output", {"pane_id": "w1:p1", "source": "recent", "lines": 0,
     "match": {"type": "regex", "value": "a=b"}, "strip_ansi": False}),
    (["agent", "prompt", "r", "hi", "--timeout", "5", "--wait", "--until", "idle", "--until",
      "done"], "agent.prompt", {"target": "r", "text": "hi", "wait": {"until": ["idle", "done"],
     "timeout_ms": 5}}),
    (["agent", "read", "r", "--ansi", "--format", "text"], "agent.read",
     {"target": "r", "source": "recent", "format": "text", "strip_ansi": True}),
    (["notification", "show", "T", "--sound", "done", "--sound", "none"], "notification.show",
     {"title": "T"}),
    (["workspace", "report-metadata", "w1", "--source", " s ", "--clear-token", "a"],
     "workspace.report_metadata", {"workspace_id": "w1", "source": " s ",
     "tokens": {"a": None}}),
    (["tab", "create", "--env", "A=", "--cwd", "/x", "--workspace", "w1"], "tab.create",
     {"workspace_id": "w1", "cwd": "/x", "focus": False, "env": {"A": ""}}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "method", "params"), REQUESTS, ids=[" ".join(case[0]) for case in REQUESTS]
)
def test_argv_edge_cases_map_to_exact_params(
    fake: FakeHerdr, cli: Callable[..., Run], argv: list[str], method: str, params: dict[str, Any]
) -> None:
    run = cli(*argv)
    assert run.code == 0, run.err
    operation = fake.only_operation()
    assert operation["method"] == method
    assert operation["params"] == params
    assert list(operation["params"]) == list(params)


def test_current_inside_a_pane_conflicts_with_another_selector(
    fake: FakeHerdr, cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERDR_PANE_ID", "w1:p3")
    run = cli("pane", "input", "--current", "--current", "--right-click", "pane")
    assert (run.code, run.err) == (2, "provide only one pane selector\n")
    assert fake.requests == []


def test_help_word_after_the_target_prints_the_usage_once_options_parse(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    helped = cli("agent", "wait", "r", "--until", "idle", "help")
    assert (helped.code, helped.out) == (0, "")
    assert helped.err == "usage: herdr agent wait <target> [--until STATUS]... [--timeout MS]\n"
    bad_first = cli("agent", "wait", "r", "--until", "later", "-h")
    assert bad_first.code == 2
    assert bad_first.err.startswith("invalid agent status: later")
    assert fake.requests == []
