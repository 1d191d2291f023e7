"""The README's main job (``herdr-orchestrator demo``): the tools driving a Herdr, end to end.

It starts the embedded simulator (the same protocol and CLI as Herdr 0.9.2), then calls
the low-level tools exactly as a model would through MCP — create a workspace, split a
pane, start a fake pi with a scripted task, prompt it and wait for its turn, read what it
did, check its work from the other pane — and prints one readable line per step, then the
agent's screen.

Then the full loop, in one call: ``herdr_spawn_agent`` delegates a small task in a fresh git
repository to a new fake pi (its own tab in the ``herdr-agents`` workspace, the task
envelope in its artifact directory), waits until the agent settles, and the demo prints the
AgentResult as a model reads it (header, evidence, diff summary, final message) and the
patch. The agent tools are configured through ``HERDR_ORCHESTRATOR_*`` variables, with their
state under the demo's temporary directory.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from orchestrator.client.child_env import child_env

#: seconds Herdr waits after an agent is ready before `agent start` returns (Herdr: 3 s)
SETTLE = 0.5


def _summary(name: str, result: dict[str, Any]) -> str:
    """One line: what the step did, from the tool's own result."""
    data = result.get("data") or {}
    payload = data.get("result", data) if isinstance(data, dict) else {}
    if name.endswith("workspace_create"):
        workspace, root = payload["workspace"], payload["root_pane"]
        return f"workspace {workspace['workspace_id']}, root pane {root['pane_id']}"
    if name.endswith("pane_split"):
        return f"new pane {payload['pane']['pane_id']} (focus stays put)"
    if "agent" in payload and isinstance(payload["agent"], dict):
        agent = payload["agent"]
        extra = " interactive_ready" if agent.get("interactive_ready") else ""
        where = f"agent {agent.get('name')} in {agent.get('pane_id')}"
        return f"{where}: {agent.get('agent_status')}{extra}"
    if name.endswith("pane_wait_output"):
        return f"matched {payload.get('matched_line')!r}"
    stdout = str(result.get("stdout") or "").strip().splitlines()
    return stdout[-1] if stdout else "done"


#: the file the delegated task changes, before and after
GREET_BEFORE = 'echo "Hello, world!"\n'
GREET_AFTER = 'echo "Hello, ${1:-world}!"\n'


def _git_repo(path: Path) -> Path:
    """A git repository at ``path`` with ``greet.sh`` committed (identity given per command)."""
    path.mkdir()
    (path / "greet.sh").write_text(GREET_BEFORE)
    ident = ["-c", "user.name=demo", "-c", "user.email=demo@example.invalid"]
    for argv in (["init", "-q", "-b", "main"], ["add", "greet.sh"], ["commit", "-q", "-m", "init"]):
        subprocess.run(
            ["git", *ident, *argv],
            cwd=path,
            check=True,
            capture_output=True,
            env=child_env(os.environ),
        )
    return path


def _report_command(artifact_dir: Path) -> str:
    """The fake pi's last tool call: write result.md where its task envelope says."""
    envelope = f"{artifact_dir}/t-*/task.md"
    return (
        f"report=$(sed -n 's/^- Your report: `\\(.*\\)`$/\\1/p' {envelope}) && "
        "printf '%s\\n' '# Report' '- greet.sh greets the name given as $1 (default world)' "
        "'- checked: sh greet.sh Ada -> Hello, Ada!' > \"$report\""
    )


def _full_loop(root: Path, env: dict[str, str]) -> int:
    """Delegate one task with ``herdr_spawn_agent`` and print its AgentResult."""
    from herdr_sim.fake_agent import Scenario

    from .agent_tools.contract import render
    from .core.tool import ToolContext
    from .pipeline.registry import run_tool

    repo = _git_repo(root / "repo")
    state = Path(env["HERDR_ORCHESTRATOR_STATE_DIR"])
    env = {**env, "HERDR_ORCHESTRATOR_ALLOW_CWD": str(repo)}
    scenario = (
        Scenario()
        .write_file("greet.sh", GREET_AFTER)
        .run_tool("bash", "sh greet.sh Ada")
        .run_tool("bash", _report_command(state / "artifacts"))
        .reply("COMPLETE result.md\ngreet.sh now greets by name; sh greet.sh Ada says Hello, Ada!")
        .dump(root / "spawn-task.json")
    )
    arguments: dict[str, Any] = {
        "prompt": "Make greet.sh greet the name given as its first argument (default: world).",
        "cwd": str(repo),
        "name": "greeter",
        "agent_args": ["--scenario", str(scenario)],
        "timeout_ms": 60_000,
    }
    print("\nthe full loop: one call delegates a task and returns its AgentResult")
    print(f"    repository {repo} (greet.sh committed), state in {state}")
    result = run_tool("herdr_spawn_agent", arguments, ToolContext.from_env(env))
    ok = result.get("status") == "completed"
    print(f"8. [{'ok ' if ok else 'FAIL'}] herdr_spawn_agent")
    if "header" not in result:  # not an AgentResult: the call itself failed
        print(f"      → {result.get('errorCode')}: {result.get('error')}")
        return 1
    for line in render(result).splitlines():
        print(f"    │ {line}")
    if result.get("resultText"):
        print("\nresult.md, as the agent wrote it where its task envelope said:")
        for line in str(result["resultText"]).rstrip().splitlines():
            print(f"    │ {line}")
    patch = str((result.get("diff") or {}).get("patch") or "")
    if patch:
        print("\nthe patch (diff.patch):")
        for line in patch.rstrip().splitlines():
            print(f"    │ {line}")
    return 0 if ok else 1


def run_demo() -> int:
    """Run the tour; a process exit code (1 when a step failed)."""
    from herdr_sim import Simulator
    from herdr_sim.fake_agent import Scenario

    from .core.tool import ToolContext
    from .pipeline.registry import run_tool

    with tempfile.TemporaryDirectory(prefix="herdr-orch-demo-", dir="/tmp") as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        # the fake pi's task: it writes a file with a tool call, checks it, then replies
        scenario = (
            Scenario()
            .write_file("hello.txt", "hello from a fake pi\n")
            .run_tool("bash", "wc -c hello.txt")
            .reply("Wrote hello.txt (21 bytes).")  # fits the 44-column agent pane
            .dump(root / "task.json")
        )
        home = root / "home"  # the fake pis write their sessions here, not in the user's HOME
        home.mkdir()
        with Simulator(
            socket_path=root / "herdr.sock", persist=False, cols=100, rows=24,
            agent_start_settle=SETTLE, base_env={**child_env(os.environ), "HOME": str(home)},
        ) as sim:  # fmt: skip
            env = {
                "HERDR_SOCKET_PATH": str(sim.socket_path),
                "HERDR_BIN_PATH": str(sim.cli_path),
                "PATH": "/usr/bin:/bin",
                # the tools' state (audit log, target locks, task records) and configuration
                # stay in the demo's directory: nothing read from or written to the user's HOME
                "HOME": str(home),
                "XDG_CONFIG_HOME": str(root / "config"),
                "HERDR_ORCHESTRATOR_STATE_DIR": str(root / "state"),
            }
            ctx = ToolContext.from_env(env)
            print(f"simulated Herdr on {sim.socket_path} (settle delay {SETTLE} s)\n")
            steps = 0

            def step(tool: str, **arguments: Any) -> dict[str, Any]:
                nonlocal steps
                steps += 1
                name = f"_dsh_herdr_{tool}"
                result = run_tool(name, arguments, ctx)
                mark = "ok " if result["ok"] else "FAIL"
                print(f"{steps}. [{mark}] {name}")
                print(f"      $ {result.get('command')}")
                detail = _summary(name, result) if result["ok"] else result.get("errorCode")
                print(f"      → {detail}")
                if not result["ok"]:
                    raise SystemExit(1)
                data: dict[str, Any] = result.get("data") or {}
                payload: dict[str, Any] = data.get("result", data)
                return payload

            created = step("workspace_create", cwd=str(work), label="demo")
            left = created["root_pane"]["pane_id"]
            right = step("pane_split", pane=left, direction="right")["pane"]["pane_id"]
            step("agent_start", name="worker", kind="pi", pane=right,
                 args=["--scenario", str(scenario)])  # fmt: skip
            step("agent_prompt", agent="worker", prompt="Write hello.txt and check it.")
            step("agent_wait", agent="worker", until=["idle", "done"])
            step("pane_run", pane=left, command="cat hello.txt")
            step("pane_wait_output", pane=left, pattern="^hello from a fake pi$", regex=True)
            screen = run_tool("_dsh_herdr_agent_read", {"agent": "worker", "lines": 40}, ctx)
            print("\nthe agent's pane, as `agent read` shows it (blank runs folded):")
            previous = ""
            for line in str(screen.get("stdout", "")).rstrip().splitlines():
                if line.strip() or previous.strip():
                    print(f"    │ {line}")
                previous = line
            code = _full_loop(root, env)
        print("\nsimulator stopped; every pane process was reaped")
    return code


if __name__ == "__main__":
    raise SystemExit(run_demo())
