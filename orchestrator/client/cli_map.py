"""THE one place that knows Herdr's CLI: argv, request ids and output shapes per operation.

An *operation* is one thing the tool layer asks Herdr to do. Each has a socket form (a method
and its wire params) and a CLI form (the ``herdr`` argv). Operation params ARE the socket
method's wire params (``pane_id``, ``workspace_id``, ``timeout_ms`` …); this module derives
the argv from them, so both transports run the same request and the simulator can prove it by
what it received.

Output shapes, as Herdr's CLI prints them:

* ``json`` — the whole response envelope ``{"id":"cli:…","result":{…}}`` on stdout, keys
  sorted (Herdr re-serializes a parsed ``serde_json::Value``);
* ``text`` — reads: the raw ``result.read.text``, no newline added;
* ``quiet`` — ``send_ok_request`` commands: nothing on success;
* ``explain`` — ``agent explain --json``: ``result.explain`` alone;
* errors, whatever the shape — one JSON envelope line on stderr, exit 1 (usage errors: a
  plain message and exit 2).

What Herdr's CLI reads differently from the socket (checked against herdrdev/herdr 1c76079f,
0.8.2; the forms our argv may take are pinned with the function each was read from in
``tests/orchestrator/test_cli_herdr_forms.py``):

* ``main`` takes ``--session``, ``--remote``, ``--remote-keybindings`` (and their ``=``
  forms) and ``--handoff`` out of argv, wherever they stand before a literal ``--``
  (``session::configure_from_args``, ``remote::extract_remote_args``): a text, label, cwd or
  env entry equal to one of them would be swallowed or switch the session;
* ``--help``/``-h`` right after the subcommand prints help and exits 0
  (``cli::spec::print_requested_help``): ``herdr pane get --help`` "succeeds";
* the id parsers read a value starting with ``-`` as an option (``pane read``, ``pane
  wait-output``, ``pane split``, ``agent explain``), and ``agent explain help`` prints usage;
  ``pane run``/``send-text`` and the option values have no ``--`` escape at all.

:func:`cli_refusal` names such a value so the CLI transport refuses it (the socket carries
every one of them intact); :func:`normalise_params` turns whole-number floats into integers
(``--timeout 5000.0`` is a usage error; serde refuses ``5000.0`` for a ``u64``) and a relative
``cwd`` into an absolute one (Herdr would resolve it against the server's directory).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Output = Literal["json", "text", "quiet", "explain"]
Params = Mapping[str, Any]


@dataclass(frozen=True)
class Operation:
    """One Herdr operation in both its forms."""

    name: str
    #: the socket method (``pane.run`` is ``pane.send_input`` with an Enter key)
    method: str
    #: the id Herdr's CLI sends for it (``cli:workspace:create``)
    request_id: str
    output: Output
    #: whether running it twice would do something twice (never retried blindly)
    mutation: bool
    argv: Callable[[Params], list[str]]
    wire: Callable[[Params], dict[str, Any]]

    def cli_argv(self, params: Params) -> list[str]:
        """The arguments after ``herdr`` for these params."""
        return self.argv(params)

    def wire_params(self, params: Params) -> dict[str, Any]:
        """The socket params for these params."""
        return self.wire(params)


def _same(params: Params) -> dict[str, Any]:
    return dict(params)


def _env_flags(params: Params) -> list[str]:
    env = params.get("env") or {}
    return [arg for key, value in env.items() for arg in ("--env", f"{key}={value}")]


def _opt(params: Params, key: str, flag: str) -> list[str]:
    value = params.get(key)
    if value is None:
        return []
    if key in INTEGER_PARAMS:
        return [flag, str(_integer(value))]
    return [flag, str(value)]


#: Params Herdr reads as unsigned integers (``u32``/``u64``), on the wire and as CLI flags.
INTEGER_PARAMS = frozenset({"timeout_ms", "lines"})
#: Params that name a Herdr object (positionals or option values of the CLI).
ID_PARAMS = frozenset({"pane_id", "target_pane_id", "workspace_id", "tab_id", "target", "name"})
#: Global options Herdr's ``main`` removes from argv before a subcommand parses it.
PRESCANNED_OPTIONS = ("--session", "--remote", "--remote-keybindings", "--handoff")


def _integer(value: Any) -> Any:
    """A whole-number float as the int it is (anything else unchanged)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def normalise_params(params: Params) -> dict[str, Any]:
    """Params as Herdr must receive them: integers as ints, ``cwd`` absolute.

    ``5000.0`` (what a JSON client may send for 5000) becomes ``5000`` for every
    :data:`INTEGER_PARAMS` key, also inside ``wait``; a relative ``cwd`` is resolved against
    this process's working directory, which is the caller's, not the Herdr server's.
    """
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key in INTEGER_PARAMS:
            value = _integer(value)
        elif key == "wait" and isinstance(value, Mapping):
            value = normalise_params(value)
        elif key == "cwd" and isinstance(value, str) and value and not Path(value).is_absolute():
            value = str(Path(value).absolute())
        out[key] = value
    return out


def _prescanned(token: str) -> bool:
    return token in PRESCANNED_OPTIONS or any(
        token.startswith(f"{option}=") for option in PRESCANNED_OPTIONS
    )


def cli_refusal(op: Operation, params: Params) -> str | None:
    """Why ``params`` cannot travel as ``herdr`` argv (None when they can).

    Herdr's CLI would read such a value as something else (see the module docstring); the
    socket carries it intact, so only the CLI transport refuses it.
    """
    for key in sorted(ID_PARAMS & params.keys()):
        value = params[key]
        help_word = value == "help" and op.name == "agent.explain"
        if isinstance(value, str) and (value.startswith("-") or help_word):
            return (
                f"{key} {value!r} cannot be passed to the herdr CLI: it would be read as an "
                "option or a help request (Herdr ids never start with '-')"
            )
    argv = op.cli_argv(params)
    end = argv.index("--") if "--" in argv else len(argv)
    for token in argv:
        if "\0" in token:
            return "a value contains a NUL byte, which no command line can carry"
    for token in argv[:end]:
        if _prescanned(token):
            return (
                f"the value {token!r} cannot be passed to the herdr CLI: Herdr takes "
                f"{token.partition('=')[0]} out of every command line as its own global option "
                "(use the socket transport to send it)"
            )
    return None


def _workspace_create(p: Params) -> list[str]:
    return [
        "workspace",
        "create",
        *_opt(p, "cwd", "--cwd"),
        *_opt(p, "label", "--label"),
        *_env_flags(p),
        "--focus" if p.get("focus") else "--no-focus",
    ]


def _tab_create(p: Params) -> list[str]:
    return [
        "tab",
        "create",
        *_opt(p, "workspace_id", "--workspace"),
        *_opt(p, "cwd", "--cwd"),
        *_opt(p, "label", "--label"),
        *_env_flags(p),
        "--focus" if p.get("focus") else "--no-focus",
    ]


def _pane_split(p: Params) -> list[str]:
    return [
        "pane",
        "split",
        p["target_pane_id"],
        "--direction",
        p["direction"],
        *_opt(p, "ratio", "--ratio"),
        *_opt(p, "cwd", "--cwd"),
        *_env_flags(p),
        "--focus" if p.get("focus") else "--no-focus",
    ]


_WIRE_SOURCE = {"recent-unwrapped": "recent_unwrapped"}
_CLI_SOURCE = {"recent_unwrapped": "recent-unwrapped"}


def _source(p: Params) -> list[str]:
    source = p.get("source")
    if source is None:
        return []
    return ["--source", _CLI_SOURCE.get(str(source), str(source))]


def _pane_read(p: Params) -> list[str]:
    return ["pane", "read", p["pane_id"], *_source(p), *_opt(p, "lines", "--lines")]


def _pane_wait(p: Params) -> list[str]:
    match = p["match"]
    flag = "--regex" if match["type"] == "regex" else "--match"
    return [
        "pane",
        "wait-output",
        p["pane_id"],
        f"{flag}={match['value']}",
        *_source(p),
        *_opt(p, "lines", "--lines"),
        *_opt(p, "timeout_ms", "--timeout"),
    ]


def _pane_run_wire(p: Params) -> dict[str, Any]:
    return {"pane_id": p["pane_id"], "text": p["command"], "keys": ["Enter"]}


def _agent_read(p: Params) -> list[str]:
    return ["agent", "read", p["target"], *_source(p), *_opt(p, "lines", "--lines")]


def _until(values: Any) -> list[str]:
    return [arg for status in values or [] for arg in ("--until", status)]


def _agent_wait(p: Params) -> list[str]:
    return [
        "agent",
        "wait",
        p["target"],
        *_until(p.get("until")),
        *_opt(p, "timeout_ms", "--timeout"),
    ]


def _agent_prompt(p: Params) -> list[str]:
    argv = ["agent", "prompt", p["target"], p["text"]]
    wait = p.get("wait")
    if wait is not None:
        argv += ["--wait", *_until(wait.get("until")), *_opt(wait, "timeout_ms", "--timeout")]
    return argv


def _agent_start(p: Params) -> list[str]:
    argv = ["agent", "start", p["name"], "--kind", p["kind"], "--pane", p["pane_id"]]
    argv += _opt(p, "timeout_ms", "--timeout")
    args = list(p.get("args") or [])
    return [*argv, "--", *args] if args else argv


def _op(
    name: str,
    request_id: str,
    output: Output,
    argv: Callable[[Params], list[str]],
    *,
    method: str | None = None,
    mutation: bool = False,
    wire: Callable[[Params], dict[str, Any]] = _same,
) -> Operation:
    return Operation(name, method or name, request_id, output, mutation, argv, wire)


def _read_wire(p: Params) -> dict[str, Any]:
    wire = dict(p)
    if "source" in wire:
        wire["source"] = _WIRE_SOURCE.get(wire["source"], wire["source"])
    return wire


OPERATIONS: Mapping[str, Operation] = {
    op.name: op
    for op in (
        _op("ping", "api-client:status", "json", lambda p: ["status", "server", "--json"]),
        _op("workspace.list", "cli:workspace:list", "json", lambda p: ["workspace", "list"]),
        _op(
            "workspace.get",
            "cli:workspace:get",
            "json",
            lambda p: ["workspace", "get", p["workspace_id"]],
        ),
        _op("workspace.create", "cli:workspace:create", "json", _workspace_create, mutation=True),
        _op(
            "tab.list",
            "cli:tab:list",
            "json",
            lambda p: ["tab", "list", *_opt(p, "workspace_id", "--workspace")],
        ),
        _op("tab.get", "cli:tab:get", "json", lambda p: ["tab", "get", p["tab_id"]]),
        _op("tab.create", "cli:tab:create", "json", _tab_create, mutation=True),
        _op(
            "pane.list",
            "cli:pane:list",
            "json",
            lambda p: ["pane", "list", *_opt(p, "workspace_id", "--workspace")],
        ),
        _op("pane.get", "cli:pane:get", "json", lambda p: ["pane", "get", p["pane_id"]]),
        _op(
            "pane.layout",
            "cli:pane:layout",
            "json",
            lambda p: ["pane", "layout", "--pane", p["pane_id"]],
        ),
        _op(
            "pane.process_info",
            "cli:pane:process_info",
            "json",
            lambda p: ["pane", "process-info", "--pane", p["pane_id"]],
        ),
        _op(
            "pane.edges",
            "cli:pane:edges",
            "json",
            lambda p: ["pane", "edges", "--pane", p["pane_id"]],
        ),
        _op("pane.read", "cli:pane:read", "text", _pane_read, wire=_read_wire),
        _op("pane.split", "cli:pane:split", "json", _pane_split, mutation=True),
        _op(
            "pane.run",
            "cli:request",
            "quiet",
            lambda p: ["pane", "run", p["pane_id"], p["command"]],
            method="pane.send_input",
            mutation=True,
            wire=_pane_run_wire,
        ),
        _op(
            "pane.wait_for_output",
            "cli:pane:wait-output",
            "json",
            _pane_wait,
            wire=_read_wire,
        ),
        _op(
            "pane.send_text",
            "cli:request",
            "quiet",
            lambda p: ["pane", "send-text", p["pane_id"], p["text"]],
            mutation=True,
        ),
        _op("agent.list", "cli:agent:list", "json", lambda p: ["agent", "list"]),
        _op("agent.get", "cli:agent:get", "json", lambda p: ["agent", "get", p["target"]]),
        _op("agent.read", "cli:agent:read", "text", _agent_read, wire=_read_wire),
        _op("agent.start", "cli:agent:start", "json", _agent_start, mutation=True),
        _op("agent.wait", "cli:agent:wait", "json", _agent_wait),
        _op("agent.prompt", "cli:agent:prompt", "json", _agent_prompt, mutation=True),
        _op(
            "agent.send_keys",
            "cli:agent:send-keys",
            "json",
            lambda p: ["agent", "send-keys", p["target"], *p["keys"]],
            mutation=True,
        ),
        _op(
            "pane.close",
            "cli:pane:close",
            "json",
            lambda p: ["pane", "close", p["pane_id"]],
            mutation=True,
        ),
        _op(
            "agent.explain",
            "cli:agent:explain",
            "explain",
            lambda p: ["agent", "explain", p["target"], "--json"],
        ),
    )
}


def operation(name: str) -> Operation:
    """The operation called ``name``; KeyError for an unknown one."""
    return OPERATIONS[name]


def render_json(value: Any) -> str:
    """Compact JSON with sorted keys, as Herdr's CLI prints a parsed response."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def render_stdout(op: Operation, params: Params, result: dict[str, Any]) -> str:
    """What the CLI prints on stdout for a successful socket result."""
    if op.output == "quiet":
        return ""
    if op.output == "text":
        read = result.get("read")
        text = read.get("text") if isinstance(read, dict) else None
        return text if isinstance(text, str) else ""
    if op.output == "explain":
        return render_json(result.get("explain")) + "\n"
    return render_json({"id": op.request_id, "result": result}) + "\n"


def render_error(request_id: str, code: str, message: str) -> str:
    """The one stderr line the CLI prints for an error envelope."""
    return render_json({"error": {"code": code, "message": message}, "id": request_id}) + "\n"


def parse_stdout(op: Operation, params: Params, stdout: str) -> dict[str, Any] | None:
    """The result behind a successful CLI run's stdout (None when it cannot be read back).

    Reads print only their text: the result is rebuilt around it (``read.text`` and what the
    request said); what the CLI does not print is unknown, so ``truncated`` and ``revision``
    are ``None``, never a guessed ``false``. ``quiet`` commands print nothing: their result
    is ``{"type":"ok"}``.
    """
    if op.output == "quiet":
        return {"type": "ok"}
    if op.output == "text":
        wire = op.wire_params(params)
        read: dict[str, Any] = {
            "text": stdout,
            "source": wire.get("source", "recent"),
            "truncated": None,
            "revision": None,
        }
        if "pane_id" in wire:
            read["pane_id"] = wire["pane_id"]
        return {"type": "pane_read", "read": read}
    try:
        value = json.loads(stdout)
    except ValueError:
        return None
    if op.output == "explain":
        return {"type": "agent_explain", "explain": value}
    if isinstance(value, dict) and isinstance(value.get("result"), dict):
        result: dict[str, Any] = value["result"]
        return result
    return None


def parse_stderr(stderr: str) -> dict[str, Any] | None:
    """Herdr's error envelope from a failed CLI run's stderr (None for plain-text errors).

    The envelope is the last line that parses as a JSON object with an ``error`` object.
    """
    for line in reversed(stderr.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("error"), dict):
            return value
    return None
