"""``herdr-sim``: run the simulator, install its ``herdr`` CLI, print its schema, run the demo,
record a Herdr session into a cassette and replay one."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import SimulatorConfig
    from .host.stop_signals import StopSignals


#: Herdr's timers the simulator models, settable from ``serve`` in milliseconds:
#: (option, SimulatorConfig field, what it is and where Herdr keeps it)
TIMER_OPTIONS = (
    (
        "--settle-ms",
        "agent_start_settle",
        (
            "how long agent.start waits before its agent may be interactive_ready "
            "(Herdr's AGENT_START_SETTLE_DELAY, src/app/agents.rs: 3000)"
        ),
    ),
    (
        "--prompt-submit-delay-ms",
        "agent_prompt_submit_delay",
        (
            "agent.prompt's pause between typing the text and pressing Enter "
            "(AGENT_PROMPT_SUBMIT_DELAY, src/app/api/agents.rs: 300)"
        ),
    ),
    (
        "--prompt-stall-ms",
        "agent_prompt_stall_timeout",
        (
            "how long agent.prompt with wait gives an agent to show it took the prompt before "
            "agent_prompt_stalled (AGENT_PROMPT_EFFECT_TIMEOUT_MS, src/api/wait.rs: 5000)"
        ),
    ),
    (
        "--first-line-timeout-ms",
        "first_line_timeout",
        (
            "how long a client may take to send its request line "
            "(INITIAL_REQUEST_TIMEOUT, src/api/server.rs: 5000)"
        ),
    ),
    (
        "--detection-interval-ms",
        "detection_interval",
        "time between foreground-process checks of every pane (src/pane.rs: 500)",
    ),
    (
        "--idle-hold-ms",
        "detection_idle_hold",
        (
            "how long a working agent's idle screen must persist before it counts as idle "
            "(Herdr's pending-idle hold: 300)"
        ),
    ),
    (
        "--detection-debounce-ms",
        "detection_debounce",
        "the simulator's own coalescing of output bursts before a pane is checked (50)",
    ),
)


def _milliseconds(text: str) -> int:
    """A timer option's value: a whole, non-negative number of milliseconds."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of milliseconds: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


def _time_scale(text: str) -> float:
    """``--time-scale``'s value: a finite number > 0."""
    from herdr_sim.timers import check_time_scale

    try:
        return check_time_scale(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number > 0: {text!r}") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="herdr-sim", description=__doc__)
    from ._version import HERDR_VERSION, __version__

    parser.add_argument(
        "--version", action="version", version=f"herdr-sim {__version__} (herdr {HERDR_VERSION})"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run a simulator in the foreground")
    where = serve.add_mutually_exclusive_group()
    where.add_argument("--socket", type=Path, help="socket path (default: like the herdr CLI)")
    where.add_argument("--session", help="named session under the simulator's config dir")
    serve.add_argument(
        "--cols",
        type=int,
        default=120,
        help="headless frame width, sidebar and tab bar included (120)",
    )
    serve.add_argument(
        "--rows", type=int, default=40, help="headless frame height, tab bar included (40)"
    )
    serve.add_argument("--shell", help="shell for new panes (default: deterministic bash)")
    serve.add_argument("--user-shell", action="store_true", help="use $SHELL with the user's rc")
    serve.add_argument("--protocol", type=int, help="protocol number ping reports (22)")
    serve.add_argument("--herdr-version", help="version string ping reports")
    serve.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="what the simulator logs to stderr (warning: handler errors and failed saves)",
    )
    serve.add_argument(
        "--agent-manifests",
        metavar="DIR",
        help="screen-detection manifests (*.toml) for agent state detection: a directory "
        "(Herdr's), `builtin` for the simulator's own rules for its fake agents (./builtin "
        "names a directory), or `none`; default: `builtin` with the fake agents, `none` "
        "with --no-fake-agents",
    )
    # `herdr server` runs serve with it: Herdr's ready and "already running" messages
    serve.add_argument("--herdr-server", action="store_true", help=argparse.SUPPRESS)
    serve.add_argument(
        "--no-fake-agents",
        action="store_true",
        help="do not put the fake pi/claude/codex/opencode on the panes' PATH; the panes "
        "then see your real HOME, as in Herdr",
    )
    serve.add_argument(
        "--agent-home",
        type=Path,
        metavar="DIR",
        help="the panes' sandbox HOME while the fake agents are on (default: agent-home "
        "beside the socket); the fakes keep their sessions there, never in your ~/.pi, "
        "~/.claude or ~/.codex",
    )

    timers = serve.add_argument_group("Herdr's timers (milliseconds; default: Herdr's)")
    for flag, field, text in TIMER_OPTIONS:
        timers.add_argument(flag, type=_milliseconds, dest=field, metavar="MS", help=text)
    timers.add_argument(
        "--time-scale",
        type=_time_scale,
        default=1.0,
        metavar="FACTOR",
        help="run every timer above and agent.start's default deadline at this factor, their "
        "order kept (0.1: ten times faster; default 1: Herdr's real time); the fake agents' "
        "scripted delays follow it, a real agent's own time does not",
    )

    install = sub.add_parser("install-cli", help="write the simulator's `herdr` into DIR")
    install.add_argument("dir", type=Path)

    api = sub.add_parser("api", help="API description")
    api_sub = api.add_subparsers(dest="api_command", required=True)
    schema = api_sub.add_parser("schema", help="print the simulator's API schema (JSON)")
    schema.add_argument("--output", type=Path, help="write to a file instead of stdout")

    docs = sub.add_parser("docs", help="generated documentation")
    docs.add_argument("page", choices=["supported-methods"])

    sub.add_parser("demo", help="end-to-end demo on an embedded simulator")

    fake = sub.add_parser(
        "fake-agent",
        help="run the scriptable fake agent (or --kind pi|claude|codex|opencode)",
        description="[--scenario FILE] [--kind K] [--resume SESSION] [--model M] [--session-dir D]",
    )
    fake.add_argument("args", nargs=argparse.REMAINDER)

    llm = sub.add_parser(
        "fake-llm",
        help="serve a scripted fake LLM (OpenAI chat/Responses, Anthropic) on 127.0.0.1",
        description="Answers every model request from a script (docs/simulator/real-agents.md) "
        "and prints one JSON line per request it received.",
    )
    llm.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    llm.add_argument("--script", type=Path, help="the script: a .json or .toml file")

    agents = sub.add_parser(
        "install-agent",
        help="install a pinned real agent (pi, claude, codex, opencode) with npm into the "
        "agents cache",
        description="Installs the agent (pi with the Node it needs; the native binary of "
        "Claude Code, Codex or opencode) from npm into "
        "~/.cache/pytest-herdr/agents (or $PYTEST_HERDR_AGENTS_DIR) unless already there; "
        "prints the install directory.",
    )
    from .fake_agent.personas import LAUNCHER_KINDS  # the real agents' kinds are the fakes'

    agents.add_argument("kind", choices=LAUNCHER_KINDS)
    agents.add_argument("--cache", type=Path, help="the agents cache directory")

    host = sub.add_parser(
        "machine-host",
        help="serve a second simulator behind a loopback sshd and save it as a Herdr machine "
        "for this simulator's `herdr --machine LABEL`",
    )
    host.add_argument("--label", default="box", help="the machine's label (box)")
    host.add_argument("--session", default="default", help="its remote session (default)")
    host.add_argument("--dir", type=Path, help="where keys and servers live (a new temp dir)")

    record = sub.add_parser(
        "record",
        help="record every line between clients and a Herdr socket into a cassette",
        description="A transparent proxy: clients connect to --socket, each connection is "
        "forwarded to --upstream unchanged, and every line is written to the cassette "
        "(JSON Lines, secrets redacted). SIGINT/SIGTERM finish the cassette.",
    )
    record.add_argument("--upstream", type=Path, required=True, help="the Herdr socket")
    record.add_argument("--socket", type=Path, required=True, help="where clients connect")
    record.add_argument("--out", type=Path, required=True, help="the cassette file")
    record.add_argument(
        "--keep-secrets",
        action="store_true",
        help="write env values and credential-shaped strings as they are (not redacted)",
    )

    replay = sub.add_parser(
        "replay",
        help="replay a cassette against a fresh simulator (or a socket) and print differences",
        description="Exit status: 0 every answer matched, 1 some differed, 2 the cassette "
        "could not be read (or the socket not reached).",
    )
    replay.add_argument("cassette", type=Path)
    replay.add_argument("--socket", type=Path, help="replay against this socket instead")
    replay.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="FIELD_PATH",
        help="do not compare this field (result.workspace.label; * any key, [*] any index; "
        "a name without dots: that field anywhere); repeatable",
    )
    replay.add_argument(
        "--screen",
        choices=["lines", "exact", "ignore"],
        default="lines",
        help="how screen text compares: lines (non-blank lines, prompts removed; default), "
        "exact, or ignore",
    )
    replay.add_argument(
        "--timeout", type=float, default=10.0, help="extra seconds each line may take (10)"
    )
    replay.add_argument(
        "--fast",
        action="store_true",
        help="do not keep the recorded pace: send each request as soon as the one before "
        "was answered (by default nothing is sent earlier than it was in the recording)",
    )
    replay.add_argument("--report", action="store_true", help="end with a per-method table")

    check = sub.add_parser(
        "check-integration",
        help="check an agent's Herdr integration against the guide (exit 1 if a rule fails "
        "or a root cause kept rules from being judged)",
        usage="herdr-sim check-integration [options] -- AGENT_COMMAND...",
    )
    check.add_argument("--json", action="store_true", help="print the JSON report")
    check.add_argument("--verbose", "-v", action="store_true", help="evidence of every rule")
    check.add_argument("--rule", action="append", metavar="ID", help="check only this rule")
    check.add_argument("--cwd", type=Path, help="where the agent runs (default: a temp dir)")
    check.add_argument("--prompt", help="an ordinary prompt")
    check.add_argument("--question-prompt", help="a prompt that makes the agent ask the user")
    check.add_argument("--no-question", action="store_true", help="skip the blocked rule")
    check.add_argument("--answer", help="what to answer the agent's question (yes)")
    check.add_argument("--new-session-prompt", help="input that switches to a new session")
    check.add_argument("--no-new-session", action="store_true", help="no in-process switch")
    check.add_argument(
        "--exit-key",
        action="append",
        metavar="KEY",
        help="what exits the agent, repeatable: a key name (Enter, ctrl+d) or text",
    )
    check.add_argument(
        "--agent-env", action="append", metavar="NAME=VALUE", help="extra agent environment"
    )
    check.add_argument("--timeout", type=float, default=10.0, help="bound of every wait (10)")
    check.add_argument("agent", nargs=argparse.REMAINDER, help="-- then the agent command")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``herdr-sim``."""
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["fake-agent"] and not {"-h", "--help"} & set(words[1:]):
        from .fake_agent.app import main as fake_agent_main

        return fake_agent_main(words[1:], kind="fake-agent")
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return serve(args)
    if args.command == "install-cli":
        from herdr_sim.host.cli_install import install_cli

        print(install_cli(args.dir))
        return 0
    if args.command == "api":
        from herdr_sim.schema import build_schema

        text = json.dumps(build_schema(), indent=2) + "\n"
        if args.output:
            args.output.write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    if args.command == "check-integration":
        return check_integration(args)
    if args.command == "record":
        return record(args)
    if args.command == "replay":
        return replay(args)
    if args.command == "machine-host":
        import tempfile

        from herdr_sim.machines.ssh_servers import serve_machine_host

        directory = args.dir or Path(tempfile.mkdtemp(prefix="herdr-machine-"))
        return serve_machine_host(
            args.label, args.session, directory, dict(os.environ), _stop_signals()
        )
    if args.command == "fake-llm":
        return fake_llm(args)
    if args.command == "install-agent":
        from .real_agents import AgentInstallError, install_agent

        try:
            print(install_agent(args.kind, args.cache).directory)
        except AgentInstallError as exc:
            print(f"herdr-sim install-agent: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.command == "docs":
        from herdr_sim.schema import supported_methods_markdown

        sys.stdout.write(supported_methods_markdown())
        return 0
    from .demo import run_demo

    return run_demo()


def _manifests_dir(value: str | None, fake_agents: bool) -> Path | None:
    """``--agent-manifests``: ``builtin`` is the simulator's own rules, ``none`` no rules,
    anything else a path. Unset, the fakes' own rules when they are on: Herdr always runs
    its bundled manifests, and without rules the fake claude and codex (which report no
    state) would never be seen working, so a prompt to them would stall."""
    if value is None:
        value = "builtin" if fake_agents else "none"
    if value == "none":
        return None
    if value == "builtin":
        from herdr_sim.detection import BUILTIN_MANIFESTS_DIR

        return BUILTIN_MANIFESTS_DIR
    return Path(value)


def configure_logging(level: str) -> None:
    """Log records of ``level`` and above to stderr (``serve``): the library itself only
    installs a NullHandler, so without this a failing handler would go unseen."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("herdr-sim: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level.upper())


def serve_config(args: argparse.Namespace) -> SimulatorConfig:
    """The simulator settings of a ``serve`` command line."""
    from .config import SimulatorConfig

    config = SimulatorConfig(
        socket_path=args.socket,
        session_name=args.session,
        cols=args.cols,
        rows=args.rows,
        shell=args.shell,
        user_shell=args.user_shell,
    )
    if args.protocol is not None:
        config.protocol = args.protocol
    if args.herdr_version is not None:
        config.version = args.herdr_version
    config.fake_agents = not args.no_fake_agents
    config.agent_manifests_dir = _manifests_dir(args.agent_manifests, config.fake_agents)
    config.agent_home = args.agent_home
    for _flag, field, _text in TIMER_OPTIONS:
        value = getattr(args, field)
        if value is not None:
            setattr(config, field, value / 1000)
    config.time_scale = args.time_scale
    return config


def _import_simulator() -> None:
    """Import the simulator with the cyclic collector paused, then freeze what it made.

    The import builds a few hundred thousand long-lived objects (classes, functions, tables)
    and the collector, triggered by their count, would scan them over and over while they
    are built, finding nothing to free: about 30 of the import's 230 ms, paid by every
    ``serve`` (a test suite starts hundreds). Frozen, later collections skip them as well.
    """
    gc.disable()
    try:
        import herdr_sim.simulator  # noqa: F401
    finally:
        gc.enable()
    gc.freeze()


def serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT or ``herdr server stop``; leave no process behind."""
    _import_simulator()
    from .simulator import Simulator, SimulatorError

    configure_logging(args.log_level)
    sim = Simulator(serve_config(args))
    wire_log = os.environ.get("HERDR_SIM_WIRE_LOG")
    if wire_log:  # the contract checks of the test run that started this server
        from herdr_sim.persist.wire_log import WireLog

        try:
            sim.wire_taps.append(WireLog(Path(wire_log)))
        except OSError as exc:  # a symlink, FIFO or someone else's file at that path
            print(f"herdr-sim: cannot open HERDR_SIM_WIRE_LOG: {exc}", file=sys.stderr)
            return 1
    done = _stop_signals()
    try:
        sim.start()
    except SimulatorError as exc:
        if args.herdr_server and "already running" in str(exc):
            # Herdr's headless server (src/server/headless.rs run_server), exit 1
            print("error: herdr server is already running", file=sys.stderr)
            print(f"api socket: {sim.socket_path}", file=sys.stderr, flush=True)
            return 1
        print(f"herdr-sim: {exc}", file=sys.stderr)
        return 1
    if args.herdr_server:
        _herdr_ready_message(sim.socket_path)
    print(f"herdr-sim: listening on {sim.socket_path}", file=sys.stderr, flush=True)
    if sim.agent_home is not None:
        print(
            f"herdr-sim: panes' HOME (the fake agents' sandbox) is {sim.agent_home}",
            file=sys.stderr,
            flush=True,
        )

    def watch_stop() -> None:
        sim.wait_stopped()
        done.set()

    threading.Thread(target=watch_stop, daemon=True).start()
    done.wait()
    sim.stop()
    return 0


def _herdr_ready_message(socket_path: Path) -> None:
    """What Herdr's headless server prints once it listens (``print_ready_message``)."""
    client = socket_path.with_name(
        "herdr-client.sock"
        if socket_path.name == "herdr.sock"
        else f"{socket_path.stem}-client.sock"
    )
    print(
        "herdr server running; you can use any herdr CLI command in another terminal.\n"
        f"api socket: {socket_path}\n"
        f"client socket: {client} (not served by the simulator)",
        file=sys.stderr,
        flush=True,
    )


def _stop_signals() -> StopSignals:
    """What SIGTERM, SIGINT and SIGHUP set (Herdr's server stops on the three): a foreground
    command waits on it in its main thread, then stops (host/stop_signals.py says why this
    is no plain ``threading.Event``)."""
    from .host.stop_signals import StopSignals

    return StopSignals()


def record(args: argparse.Namespace) -> int:
    """``record``: proxy and record until SIGINT/SIGTERM; 1 when it cannot start."""
    from .cassette.proxy import run_recorder

    done = _stop_signals()
    try:
        run_recorder(
            args.upstream,
            args.socket,
            args.out,
            done,
            keep_secrets=args.keep_secrets,
            ready=lambda: print(
                f"herdr-sim record: {args.socket} -> {args.upstream}, writing {args.out}",
                file=sys.stderr,
                flush=True,
            ),
        )
    except (OSError, RuntimeError) as exc:  # no upstream, a planted cassette, a busy socket
        print(f"herdr-sim record: {exc}", file=sys.stderr)
        return 1
    print(f"herdr-sim record: finished {args.out}", file=sys.stderr)
    return 0


def replay(args: argparse.Namespace) -> int:
    """``replay``: 0 no difference, 1 differences, 2 an unreadable cassette or socket."""
    from orchestrator.client.wire import connect

    from .cassette.format import CassetteError, load
    from .cassette.normalise import FieldPattern, Rules
    from .cassette.replay import replay as replay_cassette
    from .cassette.replay import replay_on_simulator

    try:
        cassette = load(args.cassette)
    except CassetteError as exc:
        print(f"herdr-sim replay: {args.cassette}: {exc}", file=sys.stderr)
        return 2
    rules = Rules(screen=args.screen, ignore=tuple(FieldPattern(p) for p in args.ignore))
    if args.socket is not None:
        try:
            connect(args.socket, 5.0).close()
        except OSError as exc:
            print(f"herdr-sim replay: cannot connect to {args.socket}: {exc}", file=sys.stderr)
            return 2
        report = replay_cassette(
            cassette,
            args.socket,
            rules=rules,
            replay_dirs=(str(args.socket.resolve().parent), str(Path.home())),
            timeout=args.timeout,
            pace=not args.fast,
        )
    else:
        report = replay_on_simulator(
            cassette, rules=rules, timeout=args.timeout, pace=not args.fast
        )
    for difference in report.differences:
        print(difference.render())
    compared = sum(sum(counts) for counts in report.methods.values())
    print(
        f"herdr-sim replay: {compared} answers compared, {len(report.differences)} differences",
        file=sys.stderr,
    )
    if args.report:
        print()
        print(report.table())
    return 0 if report.ok else 1


def fake_llm(args: argparse.Namespace) -> int:
    """``fake-llm``: serve until SIGTERM/SIGINT; 2 when the script cannot be loaded."""
    from .fake_llm import FakeLLM, RecordedRequest, Script, ScriptError

    try:
        script = Script.load(args.script) if args.script is not None else Script()
    except ScriptError as exc:
        print(f"herdr-sim fake-llm: {exc}", file=sys.stderr)
        return 2
    done = _stop_signals()

    def show(request: RecordedRequest) -> None:
        print(json.dumps(request.summary()), flush=True)

    server = FakeLLM(script, port=args.port)
    server.on_request = show
    try:
        server.start()
    except OSError as exc:
        print(f"herdr-sim fake-llm: cannot listen on port {args.port}: {exc}", file=sys.stderr)
        return 1
    print(f"herdr-sim fake-llm: listening on {server.url}", file=sys.stderr, flush=True)
    done.wait()
    server.stop()
    return 0


def check_integration(args: argparse.Namespace) -> int:
    """``check-integration``: 0 when no rule failed, 1 when one did, 2 on usage errors."""
    from .conformance import RULE_IDS
    from .conformance import check_integration as run_check

    agent = list(args.agent)
    if agent[:1] == ["--"]:
        agent = agent[1:]
    problems = []
    if not agent:
        problems.append("no agent command (give it after --)")
    unknown = sorted(set(args.rule or ()) - set(RULE_IDS))
    if unknown:
        problems.append(f"unknown rule(s) {', '.join(unknown)}; rules: {', '.join(RULE_IDS)}")
    env: dict[str, str] = {}
    for item in args.agent_env or ():
        name, eq, value = item.partition("=")
        if not eq or not name:
            problems.append(f"--agent-env wants NAME=VALUE, not {item!r}")
        env[name] = value
    if args.question_prompt is not None and args.no_question:
        problems.append("--question-prompt and --no-question exclude each other")
    if args.new_session_prompt is not None and args.no_new_session:
        problems.append("--new-session-prompt and --no-new-session exclude each other")
    if problems:
        for problem in problems:
            print(f"herdr-sim check-integration: {problem}", file=sys.stderr)
        return 2
    options: dict[str, object] = {}
    if args.prompt is not None:
        options["prompt"] = args.prompt
    if args.no_question or args.question_prompt is not None:
        options["question_prompt"] = None if args.no_question else args.question_prompt
    if args.answer is not None:
        options["answer"] = args.answer
    if args.no_new_session or args.new_session_prompt is not None:
        options["new_session_prompt"] = None if args.no_new_session else args.new_session_prompt
    if args.exit_key:
        options["exit_keys"] = args.exit_key
    report = run_check(
        agent,
        cwd=args.cwd,
        agent_env=env,
        timeout=args.timeout,
        rules=args.rule,
        **options,  # type: ignore[arg-type]
    )
    sys.stdout.write(report.dumps() + "\n" if args.json else report.render(verbose=args.verbose))
    return 0 if report.passed else 1
