"""``herdr-sim``: run the simulator, install its ``herdr`` CLI, print its schema, run the demo."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType


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
    serve.add_argument("--cols", type=int, default=120, help="terminal area width (120)")
    serve.add_argument("--rows", type=int, default=40, help="terminal area height (40)")
    serve.add_argument("--shell", help="shell for new panes (default: deterministic bash)")
    serve.add_argument("--user-shell", action="store_true", help="use $SHELL with the user's rc")
    serve.add_argument("--protocol", type=int, help="protocol number ping reports (22)")
    serve.add_argument("--herdr-version", help="version string ping reports")
    serve.add_argument(
        "--agent-manifests",
        type=Path,
        metavar="DIR",
        help="Herdr's screen-detection manifests (*.toml) for agent state detection",
    )
    serve.add_argument(
        "--no-fake-agents",
        action="store_true",
        help="do not put the fake pi/claude/codex/opencode on the panes' PATH",
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
        from .herdr_cli.install import install_cli

        print(install_cli(args.dir))
        return 0
    if args.command == "api":
        from .schema import build_schema

        text = json.dumps(build_schema(), indent=2) + "\n"
        if args.output:
            args.output.write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    if args.command == "docs":
        from .schema import supported_methods_markdown

        sys.stdout.write(supported_methods_markdown())
        return 0
    from .demo import run_demo

    return run_demo()


def serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT or ``herdr server stop``; leave no process behind."""
    from .config import SimulatorConfig
    from .simulator import Simulator, SimulatorError

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
    config.agent_manifests_dir = args.agent_manifests
    config.fake_agents = not args.no_fake_agents
    sim = Simulator(config)
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        sim.start()
    except SimulatorError as exc:
        print(f"herdr-sim: {exc}", file=sys.stderr)
        return 1
    print(f"herdr-sim: listening on {sim.socket_path}", file=sys.stderr, flush=True)

    def watch_stop() -> None:
        sim.wait_stopped()
        done.set()

    threading.Thread(target=watch_stop, daemon=True).start()
    done.wait()
    sim.stop()
    return 0
