"""Which agent runs in a pane, from its foreground process (Herdr's process probe).

Herdr looks at the pane terminal's foreground process group (``tpgid`` of the
pane shell, or ``tcgetpgrp`` on the pty) and names the agent from:

* the ``HERDR_AGENT`` variable in a foreground process's environment (first
  ``HERDR_AGENT=`` record wins; an unknown value gives no hint);
* the process name or ``argv[0]`` (``claude``, ``cursor-agent`` → ``cursor``,
  ``kiro-cli`` → ``kiro``, ``opencode.exe``; case-insensitive; ``.exe``,
  ``.cmd``, ``.bat``, ``.ps1``, ``.js`` stripped);
* for interpreters and shells (``node``, ``bun``, ``python``/``python3.12``,
  ``sh``/``bash``/``zsh``/``fish``): the script they run (``node …/pi``,
  ``python3 …/hermes``, ``bash ./codex``), skipping flags and the values of
  ``-r``/``--require``/``--import``/``-W``/``-X``…, but not ``-e``/``-c``/
  ``-m`` programs; well-known package paths
  (``node_modules/@earendil-works/pi-coding-agent/dist/cli`` → ``pi``); and a
  path argument whose symlink target is an agent.

The probe order is Herdr's: hints and names of the group leader first, then
the whole foreground job (leader hint, leader name, other members' hints,
then the best-scoring member: a renamed wrapper beats a real agent binary,
which beats an interpreter).  :func:`foreground_shell_agent_action` is Herdr's
rule for what a probe without an agent means once one was seen (the agent
exited when the pane's shell is back in the foreground).

Difference from Herdr: zombie processes are not counted as foreground members
(Herdr reads them like live ones until they are reaped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from herdr_sim.host import procfs
from orchestrator.client.protocol import RUST_WHITESPACE, normalized_lookup_name, parse_agent_label

__all__ = [
    "ForegroundJob",
    "ForegroundProcess",
    "ProcessAgent",
    "ProcessProbe",
    "detect_agent_process",
    "foreground_group_leader_job",
    "foreground_job",
    "foreground_process_group_id",
    "foreground_shell_agent_action",
    "identify_agent",
    "identify_agent_in_job",
    "parse_agent_env_hint",
    "probe_foreground_process",
    "process_agent_hint",
]

HintReader = Callable[[int], "str | None"]


@dataclass(frozen=True)
class ForegroundProcess:
    """One foreground process: ``name`` is the kernel ``comm``."""

    pid: int
    name: str
    argv: tuple[str, ...] | None = None
    argv0: str | None = None

    @property
    def cmdline(self) -> str | None:
        """The arguments joined by spaces, as Herdr stores them."""
        return " ".join(self.argv) if self.argv else None


@dataclass(frozen=True)
class ForegroundJob:
    """The members of a foreground process group, sorted by pid."""

    process_group_id: int
    processes: tuple[ForegroundProcess, ...]


@dataclass(frozen=True)
class ProcessProbe:
    """One probe: the foreground group, whether it holds the pane shell, and the agent."""

    process_group_id: int | None
    foreground_is_pane_shell: bool
    agent: str | None
    process_name: str | None


@dataclass(frozen=True)
class ProcessAgent:
    """An agent found in a pane's foreground job."""

    agent: str
    process_name: str
    process_group_id: int
    foreground_is_pane_shell: bool


def identify_agent(process_name: str) -> str | None:
    """The canonical agent label for a process name, or ``None``."""
    return parse_agent_label(process_name)


def _basename(path: str) -> str:
    parts = [part for part in path.replace("\\", "/").split("/") if part]
    return parts[-1] if parts else path


def _is_python_runtime(name: str) -> bool:
    if name == "python":
        return True
    version = name[len("python") :] if name.startswith("python") else ""
    return bool(version) and all(
        part and part.isascii() and part.isdigit() for part in version.split(".")
    )


def _is_generic_runtime_or_shell(name: str) -> bool:
    base = normalized_lookup_name(_basename(name))
    return _is_python_runtime(base) or base in (
        "sh",
        "bash",
        "zsh",
        "fish",
        "tmux",
        "node",
        "bun",
        "cmd",
        "powershell",
        "pwsh",
    )


_VALUE_OPTIONS = frozenset(
    {
        "-r",
        "--require",
        "--loader",
        "--import",
        "--experimental-loader",
        "--inspect-port",
        "-W",
        "-X",
        "-S",
        "-L",
        "-o",
    }
)

_KNOWN_PACKAGE_PATHS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli"), "pi"),
    (("node_modules", "@qwen-code", "qwen-code", "dist", "index"), "qwen"),
    (("node_modules", "mastracode", "dist", "cli"), "mastracode"),
)


def _flag_matches(arg: str, flags: Iterable[str]) -> bool:
    for flag in flags:
        if arg == flag:
            return True
        short = flag.startswith("-") and not flag.startswith("--")
        if short and arg.startswith(flag) and len(arg) > len(flag):
            return True
        if flag.startswith("--") and arg.startswith(flag + "="):
            return True
    return False


def _agent_from_basename(basename: str) -> str | None:
    return parse_agent_label(basename)


def _agent_from_package_path(path: str) -> str | None:
    components = [
        normalized_lookup_name(part) for part in path.replace("\\", "/").split("/") if part
    ]
    for window, label in _KNOWN_PACKAGE_PATHS:
        size = len(window)
        for start in range(len(components) - size + 1):
            if tuple(components[start : start + size]) == window:
                return label
    return None


def _agent_from_resolved_path(token: str) -> str | None:
    if "/" not in token.rstrip("/"):
        return None
    try:
        resolved = Path(token).resolve(strict=True)
    except OSError:
        return None
    return _agent_from_basename(resolved.name)


def _agent_from_path_token(token: str) -> str | None:
    trimmed = token.strip("\"'")
    if not trimmed or trimmed.startswith("-"):
        return None
    return (
        _agent_from_basename(_basename(trimmed))
        or _agent_from_package_path(trimmed)
        or _agent_from_resolved_path(trimmed)
    )


def _script_arg_agent(
    argv: tuple[str, ...], eval_flags: tuple[str, ...], module_flags: tuple[str, ...]
) -> str | None:
    args = iter(argv[1:])
    for arg in args:
        if arg == "--":
            following = next(args, None)
            return _agent_from_path_token(following) if following is not None else None
        if _flag_matches(arg, eval_flags) or _flag_matches(arg, module_flags):
            return None
        if arg.startswith("-"):
            if arg in _VALUE_OPTIONS:
                next(args, None)
            continue
        return _agent_from_path_token(arg)
    return None


def _parent_and_basename(path: str) -> tuple[str, str] | None:
    split = max(path.rfind("/"), path.rfind("\\"))
    if split < 0:
        return None
    parent = path[:split].rstrip("/\\")
    basename = path[split + 1 :]
    return (parent, basename) if parent and basename else None


def _cursor_from_bundled_node(argv: tuple[str, ...]) -> str | None:
    """Cursor's Windows install: ``…/cursor-agent/versions/<v>/node.exe …/<same dir>/index.js``."""
    if len(argv) < 2:
        return None
    runtime = _parent_and_basename(argv[0])
    script = _parent_and_basename(argv[1])
    if runtime is None or script is None:
        return None
    if (
        runtime[1].lower() != "node.exe"
        or script[1].lower() != "index.js"
        or runtime[0].lower() != script[0].lower()
    ):
        return None
    tail = [part for part in reversed(runtime[0].replace("\\", "/").split("/")) if part]
    if len(tail) < 3:
        return None
    version, versions, package = tail[0], tail[1], tail[2]
    if (
        package.lower() == "cursor-agent"
        and versions.lower() == "versions"
        and version.strip(RUST_WHITESPACE)
    ):
        return "cursor"
    return None


def _wrapped_agent_from_runtime(runtime: str, argv: tuple[str, ...] | None) -> str | None:
    if not argv:
        return None
    name = normalized_lookup_name(_basename(runtime))
    if name == "node":
        return _cursor_from_bundled_node(argv) or _script_arg_agent(
            argv, ("-e", "--eval", "-p", "--print"), ()
        )
    if name == "bun":
        return _script_arg_agent(argv, ("-e", "--eval", "-p", "--print"), ())
    if _is_python_runtime(name):
        return _script_arg_agent(argv, ("-c",), ("-m",))
    if name in ("sh", "bash", "zsh", "fish"):
        return _script_arg_agent(argv, ("-c",), ())
    return None


def normalized_process_name(process: ForegroundProcess) -> str:
    """The name Herdr identifies a process by (a wrapped script's agent, or argv0/comm)."""
    effective = process.argv0 if process.argv0 is not None else process.name
    lower_effective = effective.lower()
    if _is_generic_runtime_or_shell(lower_effective):
        wrapped = _wrapped_agent_from_runtime(lower_effective, process.argv)
        if wrapped is not None:
            return wrapped
    if identify_agent(effective) is not None:
        return effective
    if process.argv:
        runtime_name = normalized_lookup_name(_basename(process.argv[0]))
        if runtime_name in ("node", "bun"):
            wrapped = _wrapped_agent_from_runtime(process.argv[0], process.argv)
            if wrapped is not None and identify_agent(wrapped) == "qwen":
                return wrapped
    wrapped = None
    if process.argv:
        wrapped = _agent_from_path_token(process.argv[0])
    if wrapped is None and process.cmdline:
        first = process.cmdline.split()
        wrapped = _agent_from_path_token(first[0]) if first else None
    return wrapped if wrapped is not None else effective


def _process_priority(process: ForegroundProcess, normalized: str) -> int:
    lower = normalized.lower()
    if lower != process.name.lower():
        return 3
    if not _is_generic_runtime_or_shell(lower):
        return 2
    return 1


def identify_agent_in_job(job: ForegroundJob) -> tuple[str, str] | None:
    """(agent, process name) for a job: the leader if it is an agent, else the best member."""
    for process in job.processes:
        if process.pid == job.process_group_id:
            candidate = normalized_process_name(process)
            agent = identify_agent(candidate)
            if agent is not None:
                return agent, candidate
    best: tuple[int, str, str] | None = None
    for process in job.processes:
        candidate = normalized_process_name(process)
        agent = identify_agent(candidate)
        if agent is None:
            continue
        score = _process_priority(process, candidate)
        if best is None or score > best[0]:
            best = (score, agent, candidate)
    return (best[1], best[2]) if best else None


def parse_agent_env_hint(environ: bytes) -> str | None:
    """The agent named by the first ``HERDR_AGENT=`` record of a NUL-separated environment."""
    for record in environ.split(b"\0"):
        if record.startswith(b"HERDR_AGENT="):
            try:
                value = record[len(b"HERDR_AGENT=") :].decode("utf-8")
            except UnicodeDecodeError:
                return None
            return parse_agent_label(value)
    return None


def process_agent_hint(pid: int) -> str | None:
    """The ``HERDR_AGENT`` hint in ``/proc/PID/environ`` (``None`` if unreadable)."""
    if pid <= 0:
        return None
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    return parse_agent_env_hint(environ)


def foreground_process_group_id(shell_pid: int) -> int | None:
    """The ``tpgid`` of the pane shell's terminal, from ``/proc/PID/stat``."""
    info = procfs.proc_info(shell_pid)
    if info is None or info.tpgid <= 0:
        return None
    return info.tpgid


def _as_foreground(info: procfs.ProcInfo) -> ForegroundProcess:
    return ForegroundProcess(pid=info.pid, name=info.name, argv=info.argv)


def foreground_group_leader_job(process_group_id: int) -> ForegroundJob | None:
    """The group leader alone, if it is alive and still leads that group."""
    info = procfs.proc_info(process_group_id)
    if info is None or info.pgid != process_group_id or info.state == "Z":
        return None
    return ForegroundJob(process_group_id, (_as_foreground(info),))


def foreground_job(shell_pid: int, process_group_id: int | None = None) -> ForegroundJob | None:
    """Members of the foreground group found from the shell and the group leader.

    Like Herdr, only the process trees under the shell and under the group
    leader are searched, so an unrelated process that joined the group is not
    counted.  ``process_group_id`` defaults to the shell's ``tpgid``.
    """
    pgid = (
        process_group_id if process_group_id is not None else foreground_process_group_id(shell_pid)
    )
    if pgid is None:
        return None
    roots = {pid for pid in (shell_pid, pgid) if pid > 0}
    tree: dict[int, procfs.ProcInfo] = {}
    for root in roots:
        info = procfs.proc_info(root)
        if info is not None:
            tree[root] = info
        for child in procfs.descendants(root):
            tree[child.pid] = child
    members = [
        _as_foreground(info)
        for pid, info in sorted(tree.items())
        if info.pgid == pgid and info.state != "Z"
    ]
    return ForegroundJob(pgid, tuple(members)) if members else None


def _probe(job: ForegroundJob, shell_pid: int, agent: str, name: str) -> ProcessProbe:
    return ProcessProbe(
        process_group_id=job.process_group_id,
        foreground_is_pane_shell=any(p.pid == shell_pid for p in job.processes),
        agent=agent,
        process_name=name,
    )


def probe_foreground_process(
    shell_pid: int,
    foreground_pgid: int | None = None,
    *,
    read_hint: HintReader = process_agent_hint,
) -> ProcessProbe:
    """Herdr's process probe for a pane shell and its terminal's foreground group."""
    pgid = (
        foreground_pgid if foreground_pgid is not None else foreground_process_group_id(shell_pid)
    )
    leader_job = foreground_group_leader_job(pgid) if pgid is not None else None
    if leader_job is not None:
        for process in leader_job.processes:
            hinted = read_hint(process.pid)
            if hinted is not None:
                return _probe(leader_job, shell_pid, hinted, hinted)
        identified = identify_agent_in_job(leader_job)
        if identified is not None:
            return _probe(leader_job, shell_pid, *identified)
    job = foreground_job(shell_pid, pgid)
    if job is None:
        return ProcessProbe(pgid, False, None, None)
    hinted = read_hint(job.process_group_id)
    if hinted is not None:
        return _probe(job, shell_pid, hinted, hinted)
    leader = [p for p in job.processes if p.pid == job.process_group_id]
    if leader:
        identified = identify_agent_in_job(ForegroundJob(job.process_group_id, tuple(leader)))
        if identified is not None:
            return _probe(job, shell_pid, *identified)
    for process in job.processes:
        if process.pid != job.process_group_id:
            hinted = read_hint(process.pid)
            if hinted is not None:
                return _probe(job, shell_pid, hinted, hinted)
    identified = identify_agent_in_job(job)
    return ProcessProbe(
        process_group_id=job.process_group_id,
        foreground_is_pane_shell=any(p.pid == shell_pid for p in job.processes),
        agent=identified[0] if identified else None,
        process_name=identified[1] if identified else None,
    )


def detect_agent_process(
    pane_pgid: int | None, shell_pid: int, *, read_hint: HintReader = process_agent_hint
) -> ProcessAgent | None:
    """The agent in a pane's foreground, or ``None`` (shell, other program, or gone).

    ``pane_pgid`` is the pty's foreground group (``PtyProcess.foreground_pgid()``);
    ``None`` falls back to the shell's ``tpgid``.
    """
    probe = probe_foreground_process(shell_pid, pane_pgid, read_hint=read_hint)
    if probe.agent is None or probe.process_group_id is None:
        return None
    return ProcessAgent(
        agent=probe.agent,
        process_name=probe.process_name or probe.agent,
        process_group_id=probe.process_group_id,
        foreground_is_pane_shell=probe.foreground_is_pane_shell,
    )


def foreground_shell_agent_action(
    previous_agent: str | None,
    new_agent: str | None,
    foreground_is_pane_shell: bool,
    process_exit_reported: bool,
) -> str:
    """Herdr's decision after a probe, given the agent seen before.

    Returns ``observe_probe`` (take the probe as is), ``report_process_exit``
    (the agent is gone and the shell is back in the foreground: publish an
    idle transition for the previous agent first), ``clear_agent`` (after the
    exit was reported: forget the agent) or ``report_replacement_process``
    (the same agent kind came back after the exit report).
    """
    if previous_agent is None:
        return "observe_probe"
    if process_exit_reported:
        if new_agent == previous_agent:
            return "report_replacement_process"
        if new_agent is None:
            return "clear_agent"
        return "observe_probe"
    if new_agent is not None:
        return "observe_probe"
    if foreground_is_pane_shell:
        return "report_process_exit"
    return "observe_probe"
