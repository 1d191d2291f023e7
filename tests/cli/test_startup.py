"""What keeps `herdr` fast to start: the modules it loads and the codecs that replace json's.

The timing itself is ``test_install.py::test_pane_list_starts_fast`` (slow-marked, like
``bench/cli_startup.py``). These tests pin its causes deterministically: the commands agent
hooks run must not load :mod:`typing`, :mod:`pathlib`, :mod:`json` and friends, and the
``json``-free encoder and decoder the CLI uses instead must agree with :mod:`json` byte for
byte, errors included.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herdr_sim.herdr_cli.output import dumps_compact
from herdr_sim.herdr_cli.transport import encode_request, loads
from tests.cli.fake_herdr import FakeHerdr

#: Modules that cost a `herdr` start milliseconds and that no hook command needs.
HEAVY_MODULES = frozenset(
    {
        "typing",
        "pathlib",
        "json",
        "re",
        "enum",
        "collections",
        "collections.abc",
        "contextlib",
        "functools",
        "importlib",
        "math",
        "urllib.parse",
        "ipaddress",
        "socket",
        "selectors",
        "herdr_sim.herdr_cli.help",
    }
)


def _modules_loaded(python_exe: str, launcher: Path, args: list[str]) -> tuple[int, set[str]]:
    """Run the launcher's code under ``python -S`` and list ``sys.modules`` at exit."""
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write("
        "'MODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
        f"sys.argv = [{str(launcher)!r}, *{args!r}]\n"
        f"exec(compile(open({str(launcher)!r}).read(), {str(launcher)!r}, 'exec'))\n"
    )
    done = subprocess.run(
        [python_exe, "-S", "-c", probe], capture_output=True, text=True, timeout=30, check=False
    )
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return done.returncode, set(line.split()[1:])


@pytest.mark.parametrize(
    ("args", "method"),
    [
        (["pane", "list"], "pane.list"),
        (
            ["pane", "report-agent", "w1:p1", "--source", "s", "--agent", "a", "--state", "idle"],
            "pane.report_agent",
        ),
        (
            ["pane", "report-metadata", "w1:p1", "--source", "s", "--title", "t", "--seq", "3"],
            "pane.report_metadata",
        ),
        (["agent", "list"], "agent.list"),
        (["notification", "show", "done", "--sound", "done"], "notification.show"),
    ],
    ids=["pane-list", "report-agent", "report-metadata", "agent-list", "notification"],
)
def test_hook_commands_load_no_heavy_modules(
    fake: FakeHerdr, launcher: Path, python_exe: str, args: list[str], method: str
) -> None:
    code, modules = _modules_loaded(python_exe, launcher, args)
    assert code == 0
    assert fake.methods() == ["ping", method]
    assert sorted(modules & HEAVY_MODULES) == []


def test_server_not_running_loads_no_heavy_modules(
    clean_env: Path, launcher: Path, python_exe: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERDR_SOCKET_PATH", str(clean_env / "gone.sock"))
    code, modules = _modules_loaded(python_exe, launcher, ["pane", "list"])
    assert code == 1
    assert sorted(modules & HEAVY_MODULES) == []


# -- the json-free codecs ---------------------------------------------------------------------

#: Any code point, lone surrogates (the CLI's surrogate-escaped arguments) and escapes often.
_CHARACTERS = st.characters(exclude_categories=()) | st.sampled_from(
    ["\udcff", "\ud800", "\x00", "\x1f", "\x7f", "\u2028", '"', "\\", "é"]
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(alphabet=_CHARACTERS, max_size=20)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_dumps_compact_is_json_dumps_without_ascii_escapes(value: Any) -> None:
    assert dumps_compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_request_encoding_is_unchanged() -> None:
    params = {"pane_id": "w1:p1", "ratio": 0.333, "keys": ["Enter"], "text": "é\x1b\udcff"}
    expected = json.dumps(
        {"id": "cli:x", "method": "pane.split", "params": params},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    wire = encode_request("cli:x", "pane.split", params)
    assert wire == (expected + "\n").encode("utf-8", "surrogateescape")


def _outcome(decode: Any, text: str) -> tuple[str, Any]:
    try:
        value = decode(text)
    except ValueError as err:
        return type(err).__name__, (str(err), getattr(err, "pos", None))
    return "ok", json.dumps(value)  # NaN-safe comparison


_WHITESPACE = st.text(alphabet=" \t\r\n", max_size=3)


@settings(max_examples=300, deadline=None)
@given(_VALUES, _WHITESPACE, _WHITESPACE)
def test_loads_decodes_what_json_loads_decodes(value: Any, before: str, after: str) -> None:
    text = before + json.dumps(value, ensure_ascii=False) + after
    assert _outcome(loads, text) == _outcome(json.loads, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+-tfnrulasNIy \t\n\r\\u\ufeffé', max_size=16))
def test_loads_fails_exactly_as_json_loads_fails(text: str) -> None:
    assert _outcome(loads, text) == _outcome(json.loads, text)


@pytest.mark.parametrize(
    "text",
    ["", " ", "{", '{"a":1}x', '{"a":1} {}', "\ufeff{}", '"\\ud800"', "[1,]", "01", "nul"],
)
def test_loads_errors_match_json_on_known_cases(text: str) -> None:
    assert _outcome(loads, text) == _outcome(json.loads, text)
    assert _outcome(loads, text)[0] != "ok" or text == '"\\ud800"'


def test_loads_keeps_json_constants_and_big_numbers() -> None:
    decoded = loads('{"n":NaN,"i":Infinity,"m":-Infinity,"big":123456789012345678901234,"f":1e-7}')
    assert math.isnan(decoded["n"])
    assert (decoded["i"], decoded["m"]) == (math.inf, -math.inf)
    assert decoded["big"] == 123456789012345678901234
    assert decoded["f"] == 1e-7


def test_every_cli_command_module_imports_without_site_packages() -> None:
    """The launcher runs Python with ``-S`` (herdr_cli/install.py): no site-packages. Every
    command module, and what the CLI reads without a server (the plugin registry, agent
    integrations), must import with the standard library alone — `herdr plugin list`
    once died with ``No module named 're2'`` because the manifest reader imported the
    regex engine at module level."""
    from herdr_sim.herdr_cli import commands

    root = Path(commands.__file__).resolve().parents[3]
    names = sorted(p.stem for p in Path(commands.__file__).parent.glob("*.py"))
    modules = [f"herdr_sim.herdr_cli.commands.{name}" for name in names if name != "__init__"]
    modules += ["herdr_sim.herdr_plugins.registry", "herdr_sim.integrations"]
    probe = f"import sys, importlib\nsys.path.insert(0, {str(root)!r})\n" + "".join(
        f"importlib.import_module({name!r})\n" for name in modules
    )
    import sys

    done = subprocess.run(
        [sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
