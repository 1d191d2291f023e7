"""The README's shell examples run as written: "Run a simulator" (serve, install the simulated
``herdr``, create a workspace with it) and "Serve the tools over MCP" (the stdio server ends
cleanly when its client goes away; ``call`` answers). The blocks are read from the README and
run with its paths moved into the test's directory: ``/tmp/herdr-sim`` and ``~/bin`` there,
``.venv/bin/`` the running interpreter's."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.waits import wait_until

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def readme_block(heading: str) -> list[str]:
    """The command lines of the first ```sh block under ``### heading``, comments dropped."""
    section = (ROOT / "README.md").read_text().split(f"### {heading}\n", 1)[1]
    block = re.search(r"^```sh\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    assert block is not None, heading
    lines = [line.split("  #", 1)[0].strip() for line in block[1].splitlines()]
    return [line for line in lines if line]


def moved(line: str, tmp: Path) -> list[str]:
    """A README line as argv with its paths moved into ``tmp`` (``VAR=value`` prefixes kept as
    ``env`` arguments)."""
    line = line.replace("/tmp/herdr-sim", str(tmp / "herdr-sim")).replace("~/bin", str(tmp / "bin"))
    line = line.replace(".venv/bin/", f"{BIN}/")
    return ["env", *shlex.split(line)]


def test_run_a_simulator_as_the_readme_says(tmp_path: Path) -> None:
    serve, install, create = readme_block("Run a simulator")
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(moved(serve, tmp_path), env=env, stdout=log, stderr=log)
    try:
        socket = tmp_path / "herdr-sim" / "herdr.sock"
        wait_until(socket.exists, 30, what="the README's simulator to listen")
        (tmp_path / "bin").mkdir()
        subprocess.run(moved(install, tmp_path), env=env, check=True, timeout=60)
        created = subprocess.run(
            moved(create, tmp_path), env=env, capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        assert json.loads(created.stdout)["result"]["workspace"]["label"] == "demo"

        exported, mcp, call = readme_block("Serve the tools over MCP")
        assert exported.startswith("export HERDR_SOCKET_PATH=")
        env["HERDR_SOCKET_PATH"] = str(socket)
        stdio = subprocess.run(
            moved(mcp, tmp_path), env=env, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=60, check=False,
        )  # fmt: skip
        assert stdio.returncode == 0, stdio.stderr  # its client (here none) closed stdin
        listed = subprocess.run(
            moved(call, tmp_path), env=env, capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert json.loads(listed.stdout)["ok"] is True
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
