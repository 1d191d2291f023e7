"""The README's main job: an end-to-end tour of the embedded simulator.

It starts a simulator on a private socket, creates a workspace, splits it, runs a real
command in each pane through the simulator's own ``herdr`` CLI and the socket API, waits for
the output, and prints both screens.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from .client import call
from .simulator import Simulator


def _screen(title: str, text: str) -> str:
    lines = text.rstrip("\n").splitlines() or [""]
    width = max(len(title) + 4, *(len(line) for line in lines))
    top = f"┌─ {title} " + "─" * (width - len(title) - 3) + "┐"
    body = [f"│{line.ljust(width)}│" for line in lines]
    return "\n".join([top, *body, "└" + "─" * width + "┘"])


def run_demo() -> int:
    """Run the tour; returns a process exit code."""
    with tempfile.TemporaryDirectory(prefix="herdr-demo-", dir="/tmp") as tmp:
        home = Path(tmp)
        sock = home / "herdr.sock"
        with Simulator(socket_path=sock, cols=100, rows=20) as sim:
            print(f"simulator listening on {sock} (protocol {call(sock, 'ping')['protocol']})")
            created = call(sock, "workspace.create", {"cwd": tmp, "label": "demo", "focus": True})
            left = created["root_pane"]["pane_id"]
            print(f"workspace {created['workspace']['workspace_id']} with pane {left}")
            right = call(sock, "pane.split", {"target_pane_id": left, "direction": "right"})
            right_id = right["pane"]["pane_id"]
            print(f"split {left} → {right_id}")
            herdr = str(sim.cli_path)
            env = {"HERDR_SOCKET_PATH": str(sock), "PATH": "/usr/bin:/bin"}
            subprocess.run(
                [herdr, "pane", "run", left, "echo hello from $HERDR_PANE_ID; uname -s"],
                check=True,
                env=env,
                timeout=30,
            )
            call(
                sock,
                "pane.send_input",
                {"pane_id": right_id, "text": "echo $((1+2+3+4+5))", "keys": ["Enter"]},
            )
            for pane, needle in ((left, "Linux"), (right_id, "15")):
                call(
                    sock,
                    "pane.wait_for_output",
                    {
                        "pane_id": pane,
                        "source": "recent",
                        "match": {"type": "regex", "value": f"^{needle}$"},
                        "timeout_ms": 10_000,
                    },
                )
            listing = subprocess.run(
                [herdr, "pane", "list"],
                check=True,
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
            )
            print(f"`herdr pane list` printed {len(listing.stdout)} bytes of JSON")
            for pane in (left, right_id):
                read = call(sock, "pane.read", {"pane_id": pane, "source": "visible"})["read"]
                print(_screen(pane, read["text"]))
        print("simulator stopped; every pane process was reaped")
    return 0
