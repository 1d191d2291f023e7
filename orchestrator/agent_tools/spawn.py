"""``herdr_spawn_agent``: delegate a task to a new agent in its own Herdr pane.

The order is the seed's, and each step exists for a reason:

1. **Gates** (``enabled``, ``machine`` — a remote one needs ``sharedFilesystem`` or an SSH
   target (:mod:`.remote_task`: the task's files then stay on the machine) and an absolute
   ``cwd``, and every Herdr call then goes through ``herdr --machine <label>``, never the
   caller's pane — ``cwd`` inside ``allowCwd`` after resolving symlinks, where it is)
   and argument checks (``name``, alias and kind capabilities, ``agent_args``) refuse a bad
   request before anything exists: a refusal has no task id. Then the R2 preview gate
   (:mod:`.preview`): ``preview: true`` answers what would start, and under
   ``DSH_HERDR_PREVIEW_REQUIRED`` anything else is refused (``PREVIEW_REQUIRED``).
2. **The record before the pane** (status ``starting``): a crash from here on leaves a record a
   later process can inspect. A repeated ``client_task_id`` returns the existing task instead,
   harvested like the first call would (waiting for a spawn still in flight), never written
   over.
3. **The slot**: over ``maxConcurrent`` the call queues up to ``queueTimeoutMs``; a queue
   timeout removes the record again (nothing ran) and names the wait. Once the slot is won,
   ``cwd`` is checked **again** (a symlink swapped while we queued must not move the task out
   of ``allowCwd``): it must still resolve to the very path checked first, and that resolved
   path is what the pane gets. A change removes the record and refuses (``CWD_CHANGED`` /
   ``CWD_NOT_ALLOWED``), as a queue timeout does.
4. **Workspace for the task**: an isolated task gets a git worktree on ``dsh/<taskId>`` and
   runs in the same subdirectory of it that ``cwd`` is of the repository; a plain one in a git
   repository gets a snapshot of its working tree, so the diff later shows only what the agent
   changed. The envelope is written to ``<artifactDir>/task.md`` (on the machine, over
   SSH, for one reached that way).
5. **Topology**: a sibling split of the caller's pane when the caller runs inside Herdr
   (``HERDR_PANE_ID``), else one tab per task in a dedicated workspace.
6. ``agent start`` (Herdr waits until the agent is interactive; :mod:`.start_watch` reports
   an agent whose command ended meanwhile — a bad model, a missing executable — at once,
   with the pane's last lines; for pi it then waits, bounded, for the session report that
   says pi's startup is over and it takes prompts) → ``agent prompt`` with the one line
   pointing at the envelope, waiting until idle/done/blocked, bounded by ``timeout_ms``
   (clamped to 10 s..1 h; a timeout returns ``running``). ``wait: false`` returns at once. A
   failure is reported as determined (``_fail``), and a start that failed closes the pane
   made for the task, so nothing is left behind. A ``name`` already in use is ``NAME_TAKEN``
   before any of this. The record notes the delivery around ``agent prompt`` and stays
   ``starting`` until Herdr accepted the prompt (:mod:`.completion`): a crash before that
   reads ``SPAWN_INTERRUPTED``.
7. **Harvest** (:mod:`.harvest`): ``completed`` only with evidence the prompt was answered,
   waited for within what is left of ``timeout_ms``. A blocked agent is reported to the
   caller, never answered.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.agent_tools import (
    completion,
    envelope,
    remote_task,
    start_watch,
    worktree,
)
from orchestrator.agent_tools.context import AgentToolsContext, agent_context
from orchestrator.agent_tools.contract import Evidence
from orchestrator.agent_tools.control import task_result
from orchestrator.agent_tools.harvest import (
    DEFAULT_LINES,
    error_of,
    harvest,
    refusal,
)
from orchestrator.agent_tools.preview import PREVIEW_SCHEMA, preview_gate
from orchestrator.agent_tools.records import TaskRecord, ensure_private_dir, now_iso
from orchestrator.agent_tools.remote_files import RemoteFiles, task_files
from orchestrator.agent_tools.slots import QueueTimeout, Slot
from orchestrator.client.errors import ClientError, HerdrError, NotFound, TransportError
from orchestrator.client.file_trust import locks
from orchestrator.client.protocol import SETTLED_STATUSES
from orchestrator.client.types import AgentInfo, AgentStarted
from orchestrator.client.untrusted_text import has_control
from orchestrator.core import aliases
from orchestrator.core.config import (
    Config,
    ConfigError,
    GateError,
    check_cwd,
    check_spawn_machine,
)
from orchestrator.core.text_rules import AGENT_NAME, is_agent_name
from orchestrator.core.tool import ToolContext
from orchestrator.logs import bind_task, task_logger

logger = task_logger(__name__)

TOOL = "herdr_spawn_agent"
DEFAULT_TIMEOUT_MS = 900_000
MIN_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 3_600_000
#: Herdr's bounds for ``agent start --timeout`` (exclusive lower, inclusive upper).
START_TIMEOUT_MS = 60_000
#: Label of the workspace holding one tab per task.
WORKSPACE_LABEL = "herdr-agents"
SETTLED = SETTLED_STATUSES
#: ``wait: false``: any status change after the prompt proves it was submitted.
STARTED = ("working", "idle", "done", "blocked")
#: Budget for that proof (over Herdr's 5 s, so a prompt never submitted is reported).
SUBMIT_TIMEOUT_MS = 10_000

SPAWN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["prompt"],
    "properties": {
        "prompt": {
            "type": "string",
            "minLength": 1,
            "description": "Self-contained task: goal, constraints, acceptance criteria, tests.",
        },
        "kind": {
            "type": "string",
            "minLength": 1,
            "default": "pi",
            "description": aliases.KIND_DESCRIPTION,
        },
        "model": {
            "type": "string",
            "minLength": 1,
            "description": aliases.MODEL_DESCRIPTION,
        },
        "thinking": {
            "enum": list(aliases.THINKING_LEVELS),
            "description": aliases.THINKING_DESCRIPTION,
        },
        "name": {
            "type": "string",
            "description": f"Agent name, {AGENT_NAME} (default generated).",
        },
        "cwd": {
            "type": "string",
            "minLength": 1,
            "description": "Absolute working directory of the agent (default: the server's).",
        },
        "role": {
            "enum": ["worker", "reviewer"],
            "default": "worker",
            "description": (
                "worker (default): does the task and may edit files. reviewer: reviews "
                "read-only and writes findings (BLOCKER/MAJOR/MINOR/NIT, path:line) and a "
                "verdict ACCEPT or REJECT to result.md."
            ),
        },
        "wait": {
            "type": "boolean",
            "default": True,
            "description": (
                "true (default): return when the agent settles (completed, blocked, failed). "
                "false: return at once with status running; harvest later with "
                "herdr_get_agent_result."
            ),
        },
        "timeout_ms": {
            "type": "integer",
            "default": DEFAULT_TIMEOUT_MS,
            "minimum": 0,
            "description": "Wait budget, clamped to 10000..3600000 (default 900000).",
        },
        "agent_args": {
            "type": "array",
            "items": {"type": "string"},
            "description": (
                "Extra raw flags appended to the agent's command line, unchecked (e.g. for a "
                "setting model/thinking do not cover). Prefer model and thinking."
            ),
        },
        "client_task_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": (
                "Your idempotency key: a repeat with the same key returns the existing task "
                "instead of starting a second agent. Use one per logical task."
            ),
        },
        "isolated": {
            "type": "boolean",
            "default": False,
            "description": (
                "true: run in a fresh git worktree of cwd's repository on branch "
                "dsh/<taskId>, so parallel tasks do not touch each other's files."
            ),
        },
        "machine": {
            "type": "string",
            "description": (
                "A Herdr --machine label enabled in machines (default: local). A remote "
                "spawn needs sharedFilesystem or machineTargets for it and an absolute cwd "
                "on that machine."
            ),
        },
        "preview": PREVIEW_SCHEMA,
    },
}


#: Herdr's CLI failed talking to its server after sending (``Error: …``, over ``--machine``
#: a dropped SSH link): like a socket I/O failure, the request may have been applied
MAYBE_APPLIED_CODE = "transport_error"


def clamp_timeout(value: int | None) -> int:
    """``timeout_ms`` within 10 s..1 h (default 15 min)."""
    if value is None:
        return DEFAULT_TIMEOUT_MS
    return max(MIN_TIMEOUT_MS, min(MAX_TIMEOUT_MS, int(value)))


def default_name(kind: str, task_id: str) -> str:
    """``<kind>-<12 hex of the task id>``, cut to Herdr's 32 characters."""
    return f"{kind}-{task_id[2:]}"[:32]


class _Refused(Exception):
    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


def _utf8_cwd(path: str) -> str:
    """``path`` if it is UTF-8; a name with other bytes (decoded by Python with surrogate
    escapes) cannot travel to Herdr, into the envelope or into the record, which all carry
    UTF-8 text."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        shown = path.encode("utf-8", "backslashreplace").decode("ascii", "replace")
        raise _Refused(
            "FIELD_INVALID",
            f"cwd {shown!r} is not valid UTF-8; Herdr and the task files need UTF-8 paths "
            "(rename the directory or use a UTF-8 path to it)",
            "cwd",
        ) from None
    return path


def name_taken_message(name: str, holder: AgentInfo | None = None) -> str:
    """Why a ``name`` cannot be used: a live agent already has it."""
    where = f" ({holder.agent or 'agent'} in pane {holder.pane_id})" if holder else ""
    return f"name {name!r} is already used by a live agent{where}; choose another name"


def _check_name_free(actx: AgentToolsContext, name: str) -> None:
    """``NAME_TAKEN`` before anything exists when a live agent already has ``name`` (Herdr
    would refuse the start; a race with another start is caught there too)."""
    try:
        holder = actx.client.agent_get(name)
    except ClientError:
        return  # free (agent_not_found), or Herdr unreachable: the later steps say so
    if holder.name == name:
        raise _Refused("NAME_TAKEN", name_taken_message(name, holder), "name")


def _check(args: Mapping[str, Any], actx: AgentToolsContext) -> tuple[Path, aliases.ResolvedModel]:
    """Gates and argument checks; raises :class:`_Refused`."""
    try:
        config = actx.config  # the kill switch ran before, in the runner
        machine = check_spawn_machine(config, args.get("machine"), args.get("cwd"))
        actx.select_machine(machine)
        given = _utf8_cwd(str(args.get("cwd") or Path.cwd()))
        if remote_task.over_ssh(config, machine):
            # its cwd is a path there, resolved there (remote_task)
            files = remote_task.ssh_files(config, machine)
            cwd = Path(remote_task.resolve_cwd(config, files, given))
        else:
            cwd = check_cwd(config, given)
        _utf8_cwd(str(cwd))  # a link may resolve to a path that is not UTF-8
    except ConfigError as exc:
        raise _Refused(exc.code, str(exc), exc.key) from None
    except GateError as exc:
        raise _Refused(exc.code, str(exc), exc.field or None) from None
    name = args.get("name")
    if name is not None and not is_agent_name(name):
        raise _Refused("FIELD_INVALID", f"name {name!r} must match {AGENT_NAME}", "name")
    try:
        str(args.get("prompt", "")).encode("utf-8")
    except UnicodeEncodeError:
        raise _Refused(
            "FIELD_INVALID", "prompt is not valid Unicode text (it holds lone surrogates)", "prompt"
        ) from None
    for arg in args.get("agent_args") or ():
        if has_control(str(arg)):
            raise _Refused(
                "FIELD_INVALID",
                "agent_args must not contain control characters (Herdr refuses them)",
                "agent_args",
            )
    kind = str(args.get("kind") or "pi")
    try:
        resolved = aliases.resolve(
            kind, args.get("model"), args.get("thinking"), overrides=config.aliases
        )
    except aliases.AliasError as exc:
        raise _Refused(exc.code, str(exc).split(": ", 1)[-1], exc.field) from None
    if args.get("isolated") and remote_task.over_ssh(config, machine):
        raise _Refused(
            "MACHINE_ISOLATED_NOT_SUPPORTED",
            f"isolated is not supported on machine {machine!r}, reached over SSH (its git "
            "worktree would be made there and never removed by this host): spawn without "
            "isolated, or list the machine in sharedFilesystem if it sees this host's paths",
            "isolated",
        )
    if args.get("isolated"):
        try:
            worktree.repo_root(cwd)
        except worktree.WorktreeError as exc:
            raise _Refused(
                "NOT_A_REPOSITORY", f"isolated needs a git repository: {exc}", "cwd"
            ) from None
    return cwd, resolved


def _target(args: Mapping[str, Any], cwd: Path, resolved: aliases.ResolvedModel) -> dict[str, Any]:
    """What a spawn would start, payloads redacted (the preview's ``target``)."""
    prompt = str(args["prompt"])
    agent_args = list(args.get("agent_args") or ())
    return {
        "kind": resolved.kind,
        "model": resolved.model,
        "name": args.get("name"),
        "cwd": str(cwd),
        "role": str(args.get("role") or "worker"),
        "isolated": bool(args.get("isolated", False)),
        "wait": bool(args.get("wait", True)),
        "prompt": f"<redacted: {len(prompt)} chars>",
        "agent_args": f"<redacted: {len(agent_args)} args>",
    }


def _recheck_cwd(config: Config, cwd: Path, machine: str = "local") -> None:
    """After the queue wait: ``cwd`` (already resolved) must resolve to itself and still be
    allowed (on the machine, for one over SSH); raises :class:`_Refused` otherwise (see step
    3 of the module docstring)."""
    try:
        if remote_task.over_ssh(config, machine):
            files = remote_task.ssh_files(config, machine)
            again = Path(remote_task.resolve_cwd(config, files, str(cwd)))
        else:
            again = check_cwd(config, cwd)
    except GateError as exc:
        raise _Refused(exc.code, f"after waiting for a slot: {exc}", exc.field or None) from None
    if again != cwd:
        raise _Refused(
            "CWD_CHANGED",
            f"cwd {str(cwd)!r} resolves to {str(again)!r} after waiting for a slot (a "
            "symlink changed); nothing was started",
            "cwd",
        )


def _fail(
    actx: AgentToolsContext,
    record: TaskRecord,
    code: str,
    message: str,
    *,
    herdr: str | None = None,
    slot: Slot | None = None,
    began: float,
    field: str | None = None,
    close_pane: bool = False,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """Record and report the failure this spawn determined (never re-derived from Herdr: an
    idle agent whose prompt failed is not ``completed``). ``close_pane`` closes the pane this
    spawn created for the task (and with it a tab or workspace it was alone in), so a task
    that never ran leaves nothing behind; the record then has no pane."""
    error = error_of(code, message, field=field, herdr=herdr)
    logger.warning("spawn failed: %s (herdr %s)", code, herdr)  # not the message: pane text
    evidence = [Evidence("record", f"the spawn failed: {code}", at=now_iso())]
    changes: dict[str, Any] = {"status": "failed", "error": error.to_dict()}
    if close_pane and record.pane_id is not None:
        closed = _close_own_pane(actx, record.pane_id)
        evidence.append(Evidence("herdr", closed, at=now_iso()))
        changes.update(pane_id=None, workspace_id=None, tab_id=None, terminal_id=None)
    record = actx.store.update(record.task_id, **changes)
    if slot is not None:
        slot.release()
    return task_result(
        actx,
        TOOL,
        record,
        "failed",
        next_action="retry" if field else "inspect",
        evidence=evidence,
        error=error,
        warnings=warnings,
        started=began,
    )


def _close_own_pane(actx: AgentToolsContext, pane_id: str) -> str:
    """Close the pane this spawn created (under the placement lock: closing the last tab of
    the agents workspace closes the workspace, which a concurrent placement must not find
    half gone). Returns the evidence line."""
    with _placement_lock(actx.config.state_dir):
        try:
            actx.client.pane_close(pane_id)
        except NotFound:
            return f"pane {pane_id} (created for this task) was already gone"
        except ClientError as exc:
            return f"pane {pane_id} (created for this task) could not be closed: {exc}"
    return f"pane {pane_id} (created for this task) closed: nothing was left running"


def _place(actx: AgentToolsContext, cwd: str, label: str) -> tuple[str, str, str, list[str]]:
    """Create the task's pane: ``(pane_id, workspace_id, tab_id, warnings)``."""
    client = actx.client
    notes: list[str] = []
    caller = actx.caller_pane
    if caller is not None:
        try:
            pane = client.pane_split(caller, "right", cwd=cwd, focus=False)
            return pane.pane_id, pane.workspace_id, pane.tab_id, notes
        except HerdrError as exc:
            notes.append(
                f"could not split the caller's pane {caller} ({exc.code}); "
                f"used the {WORKSPACE_LABEL} workspace instead"
            )
    # The workspace exists (a fleet's steady state): add the tab without the lock, so racing
    # spawns do not queue behind each other's requests (issue 17). A workspace closed between
    # the listing and the tab (its last task pane closed meanwhile) answers not found:
    # nothing was made, and the locked find-or-create below runs instead.
    existing = _agents_workspace(actx)
    if existing is not None:
        try:
            root = client.tab_create(existing, cwd, label=label, focus=False).root_pane
            return root.pane_id, root.workspace_id, root.tab_id, notes
        except NotFound:
            pass
    # Find-or-create under a lock: spawns racing each other (threads or processes) must not
    # each create their own workspace.
    with _placement_lock(actx.config.state_dir):
        existing = _agents_workspace(actx)
        if existing is not None:
            root = client.tab_create(existing, cwd, label=label, focus=False).root_pane
            return root.pane_id, root.workspace_id, root.tab_id, notes
        made = client.workspace_create(cwd, label=WORKSPACE_LABEL, focus=False)
        root = made.root_pane
        return root.pane_id, root.workspace_id, root.tab_id, notes


def _agents_workspace(actx: AgentToolsContext) -> str | None:
    """The id of the dedicated agents workspace, if one is open."""
    for workspace in actx.client.workspace_list():
        if workspace.label == WORKSPACE_LABEL:
            return workspace.workspace_id
    return None


@contextlib.contextmanager
def _placement_lock(state_dir: Path) -> Iterator[None]:
    """An exclusive lock on ``<state_dir>/placement.lock`` (released when the fd closes)."""
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with locks.held(state_dir / "placement.lock"):
        yield


def handle_spawn(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """``herdr_spawn_agent`` (see the module docstring)."""
    began = time.monotonic()
    actx = agent_context(ctx)
    try:
        cwd, resolved = _check(args, actx)
    except _Refused as exc:
        return refusal(TOOL, exc.code, exc.message, exc.field)
    target = _target(args, cwd, resolved)
    gated = preview_gate(TOOL, actx, args, "start and prompt an agent", target, started=began)
    if gated is not None:
        return gated
    config = actx.config
    prompt = str(args["prompt"])
    kind = resolved.kind
    role = str(args.get("role") or "worker")
    wait = bool(args.get("wait", True))
    timeout_ms = clamp_timeout(args.get("timeout_ms"))
    isolated = bool(args.get("isolated", False))
    agent_args = tuple(str(a) for a in args.get("agent_args") or ())
    client_task_id = args.get("client_task_id")
    try:  # ours, or refused: never another user's, never chmodded (safe_fs)
        ensure_private_dir(config.state_dir)
        ensure_private_dir(config.artifact_dir)
    except OSError as exc:
        return refusal(TOOL, "STATE_DIR_UNSAFE", exc.strerror or str(exc), "stateDir")

    record, created = actx.store.create(
        kind=kind,
        cwd=str(cwd),
        prompt=prompt,
        client_task_id=client_task_id,
        role=role,
        name=args.get("name"),
        model=resolved.model,
        thinking=resolved.thinking,
        isolated=isolated,
        timeout_ms=timeout_ms,
        agent_args=agent_args,
        machine=actx.machine,
    )
    bind_task(record.task_id)
    logger.info("task recorded (kind %s, created %s)", kind, created)
    if not created:
        # Idempotent retry: never start the task again, never write over it. Report it as
        # the evidence says — waiting for it like the first call would (a spawn still in
        # flight in another process reads ``running`` until it delivered its prompt).
        return harvest(
            actx,
            record,
            tool=TOOL,
            wait=wait,
            timeout_ms=timeout_ms,
            started=began,
            warnings=[f"client_task_id {client_task_id!r} already names task {record.task_id}"],
        )
    if record.name is not None:
        # After the idempotency check: a repeat names its own (live) agent.
        try:
            _check_name_free(actx, record.name)
        except _Refused as exc:
            actx.store.remove(record.task_id)
            return refusal(TOOL, exc.code, exc.message, exc.field)
    name = record.name or default_name(kind, record.task_id)
    if remote_task.over_ssh(config, record.machine):
        # on the machine: made (0700) by the envelope's write there
        artifact_dir = Path(remote_task.task_artifact_dir(config, record.machine, record.task_id))
    else:
        artifact_dir = ensure_private_dir(config.artifact_dir / record.task_id)
    record = actx.store.update(record.task_id, name=name, artifact_dir=str(artifact_dir))

    try:
        slot = actx.slots.acquire(record.task_id, timeout_ms=config.queue_timeout_ms)
    except QueueTimeout as exc:
        logger.info("no slot within the queue timeout")
        actx.store.remove(record.task_id)
        return refusal(TOOL, exc.code, str(exc), None)
    logger.debug("slot acquired")
    try:
        _recheck_cwd(config, cwd, record.machine)
    except _Refused as exc:
        slot.release()
        actx.store.remove(record.task_id)
        return refusal(TOOL, exc.code, exc.message, exc.field)

    try:
        return _launch(
            actx, record, slot, cwd=cwd, resolved=resolved, prompt=prompt, role=role,
            wait=wait, timeout_ms=timeout_ms, isolated=isolated, agent_args=agent_args,
            began=began,
        )  # fmt: skip
    except BaseException as exc:
        # An unexpected failure must not keep the slot, nor leave the record "starting".
        slot.release()
        with contextlib.suppress(Exception):
            error = error_of("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}")
            actx.store.update(record.task_id, status="failed", error=error.to_dict())
        raise


@dataclass
class _Launch:
    """One spawn's launch as its steps go: the task, its slot, the agent's kind and name,
    and what each step found (the pane, the warnings)."""

    actx: AgentToolsContext
    record: TaskRecord
    slot: Slot
    began: float
    kind: str
    name: str
    wait: bool
    timeout_ms: int
    #: the agent's extra arguments (redacted by the one rule: tools.result.secret_parts)
    secrets: list[str]
    #: where the task's files are (this host, or the machine over SSH)
    files: RemoteFiles
    work_cwd: str = ""
    pane_id: str = ""
    notes: list[str] = field(default_factory=list)
    #: the agent as the session wait last saw it, just before the prompt (None: not asked)
    seen: AgentInfo | None = None

    def fail(self, code: str, message: str, **kwargs: Any) -> dict[str, Any]:
        """:func:`_fail` for this task (its record, slot and start time)."""
        return _fail(
            self.actx, self.record, code, message, slot=self.slot, began=self.began, **kwargs
        )


def _launch(
    actx: AgentToolsContext,
    record: TaskRecord,
    slot: Slot,
    *,
    cwd: Path,
    resolved: aliases.ResolvedModel,
    prompt: str,
    role: str,
    wait: bool,
    timeout_ms: int,
    isolated: bool,
    agent_args: tuple[str, ...],
    began: float,
) -> dict[str, Any]:
    """Everything after the slot: working tree, envelope, pane, agent, prompt, harvest."""
    run = _Launch(
        actx=actx,
        record=record,
        slot=slot,
        began=began,
        kind=resolved.kind,
        name=record.name or default_name(resolved.kind, record.task_id),
        wait=wait,
        timeout_ms=timeout_ms,
        secrets=list(agent_args),
        files=task_files(actx.config, record.machine),
    )
    snapshot: _Snapshot | None = None
    if isolated:
        failed = _prepare_worktree(run, cwd)
        if failed is not None:
            return failed
    else:
        # The snapshot (git, here or over SSH) and the pane (Herdr) need nothing of each
        # other: the snapshot is taken while the envelope is written and the pane placed.
        run.work_cwd = str(cwd)
        snapshot = _Snapshot(run.files, cwd)
    task = _write_envelope(run, prompt, role, isolated)
    if isinstance(task, dict):
        if snapshot is not None:
            snapshot.settle()
        return task
    failed = _place_pane(run, snapshot)
    if failed is not None:
        return failed
    started = _start_agent(run, task, (*resolved.argv, *agent_args))
    if isinstance(started, dict):
        return started
    sent = _send_kickoff(run, started, task)
    if isinstance(sent, dict):
        return sent
    info, timed_out = sent
    return _after_prompt(run, info, timed_out)


def _prepare_worktree(run: _Launch, cwd: Path) -> dict[str, Any] | None:
    """The isolated task's working tree: a fresh worktree, recorded."""
    actx, record = run.actx, run.record
    try:
        tree = worktree.create_worktree(
            cwd, record.task_id, actx.config.state_dir / "worktrees" / record.task_id
        )
        record = actx.store.update(
            record.task_id,
            worktree_path=tree.path,
            base_commit=tree.base_commit,
            branch=tree.branch,
        )
    except (worktree.WorktreeError, OSError) as exc:
        return run.fail("WORKTREE_FAILED", str(exc))
    run.record = record
    run.work_cwd = _same_subdirectory(cwd, tree.path)
    return None


class _Snapshot:
    """A non-isolated task's baseline (:func:`worktree.snapshot`), taken on a thread of its
    own while the spawn goes on: twenty spawns at once each spent ~60 ms in git before
    their pane was asked for (docs/benchmarks.md). A cwd outside git has no baseline (no
    diff); any other failure is raised by :meth:`settle`, in the spawn's thread."""

    def __init__(self, files: RemoteFiles, cwd: Path) -> None:
        self._baseline: worktree.Baseline | None = None
        self._error: BaseException | None = None
        context = contextvars.copy_context()  # the task's log binding goes along
        self._thread = threading.Thread(
            target=context.run, args=(self._take, files, cwd), name="spawn-snapshot", daemon=True
        )
        self._thread.start()

    def _take(self, files: RemoteFiles, cwd: Path) -> None:
        try:
            self._baseline = worktree.snapshot(cwd, files=files)
        except worktree.WorktreeError:
            self._baseline = None  # not a git repository: no diff
        except BaseException as exc:  # handed to the spawn's thread
            self._error = exc

    def settle(self) -> worktree.Baseline | None:
        """The baseline once taken (git's own timeouts bound the wait), or its failure."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._baseline


def _write_envelope(
    run: _Launch, prompt: str, role: str, isolated: bool
) -> envelope.TaskEnvelope | dict[str, Any]:
    """The task envelope (goal, result and inbox paths) written where the task runs."""
    record = run.record
    assert record.artifact_dir is not None
    task = envelope.TaskEnvelope(
        task_id=record.task_id,
        goal=prompt,
        artifact_dir=Path(record.artifact_dir),
        cwd=run.work_cwd,
        role="reviewer" if role == "reviewer" else "worker",
        name=run.name,
        branch=record.branch,
        base_commit=record.base_commit if isolated else None,
    )
    try:
        task.write(run.files)
    except OSError as exc:  # RemoteUnavailable too: no agent exists yet, nothing to resend
        return run.fail(
            "ARTIFACT_WRITE_FAILED",
            f"the task envelope {task.task_path} could not be written: {exc}",
        )
    return task


def _place_pane(run: _Launch, snapshot: _Snapshot | None) -> dict[str, Any] | None:
    """The task's pane, recorded with the baseline ``snapshot`` took meanwhile (the
    placement's warnings kept for the result)."""
    actx = run.actx
    try:
        pane_id, workspace_id, tab_id, run.notes = _place(actx, run.work_cwd, run.name)
    except ClientError as exc:
        code = exc.code if isinstance(exc, HerdrError) else None
        if snapshot is not None:
            with contextlib.suppress(Exception):  # the pane's failure is the one to report
                snapshot.settle()
        return run.fail("PANE_CREATE_FAILED", str(exc), herdr=code)
    run.pane_id = pane_id
    changes: dict[str, Any] = {"pane_id": pane_id, "workspace_id": workspace_id, "tab_id": tab_id}
    try:
        baseline = None if snapshot is None else snapshot.settle()
    except OSError as exc:
        run.record = actx.store.update(run.record.task_id, **changes)
        return run.fail("WORKTREE_FAILED", str(exc), close_pane=True, warnings=run.notes)
    if baseline is not None:
        extra = {**run.record.extra, "baseline": baseline.to_json()}
        changes.update(base_commit=baseline.commit, extra=extra)
    run.record = actx.store.update(run.record.task_id, **changes)
    logger.info("pane %s placed", pane_id)
    return None


def _start_agent(
    run: _Launch, task: envelope.TaskEnvelope, argv: tuple[str, ...]
) -> AgentStarted | dict[str, Any]:
    """The agent started in the pane (Herdr's ``agent.start``), up to its session report;
    a start that failed, or that stopped at a question, is answered instead."""
    actx, client, pane_id, notes = run.actx, run.actx.client, run.pane_id, run.notes
    secrets = run.secrets
    try:
        started = start_watch.start_agent(
            client,
            run.name,
            run.kind,
            pane_id,
            args=argv,
            timeout_ms=min(START_TIMEOUT_MS, run.timeout_ms),
            secrets=secrets,
        )
    except start_watch.ExitedDuringStart as exc:
        return run.fail("AGENT_START_FAILED", str(exc), close_pane=True, warnings=notes)
    except HerdrError as exc:
        if exc.code == "agent_not_ready":
            # Blocked while starting (a trust or login dialog): the user decides, not us.
            logger.info("the agent asked a question while starting: held, not prompted")
            record = actx.store.update(
                run.record.task_id, status="blocked", delivery=completion.held()
            )
            run.slot.detach()
            notes.append(
                "the agent asked a question while starting; the task envelope has NOT been "
                f"sent yet (it is in {task.task_path})"
            )
            return harvest(actx, record, tool=TOOL, wait=False, started=run.began, warnings=notes)
        if exc.code == "agent_name_taken":
            # Another start took the name after our check: nothing of ours ran.
            return run.fail(
                "NAME_TAKEN", name_taken_message(run.name), herdr=exc.code,
                field="name", close_pane=True, warnings=notes,
            )  # fmt: skip
        return run.fail(
            "AGENT_START_FAILED",
            _with_tail(exc.message, start_watch.pane_tail(client, pane_id, secrets)),
            herdr=exc.code, close_pane=True, warnings=notes,
        )  # fmt: skip
    except ClientError as exc:
        return run.fail(
            "AGENT_START_FAILED",
            _with_tail(str(exc), start_watch.pane_tail(client, pane_id, secrets)),
            close_pane=True, warnings=notes,
        )  # fmt: skip
    # Interactive is not yet taking prompts (real pi): wait for the session report first.
    left_ms = max(0, run.timeout_ms - int((time.monotonic() - run.began) * 1000))
    run.seen, late = start_watch.wait_for_session(client, pane_id, run.kind, left_ms)
    if late is not None:
        notes.append(late)
    logger.info("agent %s started", run.name)
    return started


def _send_kickoff(
    run: _Launch, started: AgentStarted, task: envelope.TaskEnvelope
) -> tuple[AgentInfo | None, bool] | dict[str, Any]:
    """The task's kickoff prompt delivered (completion.py's delivery record around it):
    Herdr's answer to the prompt and whether the wait ran out, or the failure answered."""
    actx, client, record = run.actx, run.actx.client, run.record
    # Delivery (completion.py): the record stays "starting" until Herdr accepted the prompt;
    # first it notes the agent and Herdr's state counter the prompt goes to, so a harvest
    # after a crash can tell "prompt never sent" from "sent, and answered". The session
    # wait's last look is that fresh: it is not asked for again.
    before = run.seen or _fresh(actx, run.pane_id) or started.agent
    session = completion.session_path_of(before) or completion.session_path_of(started.agent)
    sending = completion.sending(before)
    record = actx.store.update(
        record.task_id,
        **sending,
        **({"session_path": session} if session else {}),
    )
    run.record = record
    kickoff = task.kickoff_prompt()
    info: AgentInfo | None = None
    timed_out = False
    try:
        if run.wait:
            info = client.agent_prompt(
                run.name, kickoff, wait=True, until=SETTLED, timeout_ms=run.timeout_ms
            )
        else:
            # Return once the prompt was seen to land (the first status change after it),
            # so the handle never reports a turn that has not started yet as finished.
            info = client.agent_prompt(
                run.name, kickoff, wait=True, until=STARTED, timeout_ms=SUBMIT_TIMEOUT_MS
            )
        run.record = actx.store.update(
            record.task_id, status="running", delivery=completion.sent(record, info)
        )
    except HerdrError as exc:
        if exc.code == "timeout":
            # Herdr saw the prompt land (a stall is agent_prompt_stalled), the turn runs on.
            timed_out = True
            run.record = actx.store.update(
                record.task_id, status="running", delivery=completion.sent(record, None)
            )
        else:
            failed = _prompt_refused(run, exc)
            if failed is not None:
                return failed
    except TransportError as exc:
        if not exc.maybe_applied:
            return run.fail("PROMPT_FAILED", str(exc))
        run.record = _prompt_unconfirmed(actx, record, str(exc), run.notes)
    except ClientError as exc:
        return run.fail("PROMPT_FAILED", str(exc))
    return info, timed_out


def _prompt_refused(run: _Launch, exc: HerdrError) -> dict[str, Any] | None:
    """Herdr's error to the kickoff prompt (other than its wait running out): the failure
    answered, or ``None`` when the task runs on (its record updated)."""
    actx, record = run.actx, run.record
    if exc.code == "agent_not_running":
        # Gone while Herdr waited on the turn it was given: the harvest reports how.
        run.record = actx.store.update(record.task_id, status="running")
        return None
    if exc.code == "agent_not_found":
        # Gone before the prompt reached it (Herdr found no such agent to prompt): Herdr
        # saw it start, then it exited (a bad model, a crash at start-up). The task never
        # began: a start failure with the pane's last lines (redacted), as when it exits
        # while Herdr still waits for it to come up.
        tail = start_watch.pane_tail(actx.client, run.pane_id, run.secrets)
        return run.fail(
            "AGENT_START_FAILED",
            _with_tail(f"the {run.kind} agent exited before its prompt was delivered", tail),
            herdr=exc.code, close_pane=True, warnings=run.notes,
        )  # fmt: skip
    if exc.code == "agent_prompt_stalled":
        return run.fail("PROMPT_NOT_SUBMITTED", exc.message, herdr=exc.code)
    if exc.code == MAYBE_APPLIED_CODE:
        run.record = _prompt_unconfirmed(actx, record, exc.message, run.notes)
        return None
    return run.fail("PROMPT_FAILED", exc.message, herdr=exc.code)


def _after_prompt(run: _Launch, info: AgentInfo | None, timed_out: bool) -> dict[str, Any]:
    """The spawn's answer: at once without ``wait``; with it, the harvest of the turn
    (which waits on for the evidence within what is left of ``timeout_ms``)."""
    actx, record, slot = run.actx, run.record, run.slot
    logger.info("prompt step over: record %s%s", record.status, ", wait ran out" * timed_out)
    if not run.wait:
        slot.detach()
        return harvest(
            actx, record, tool=TOOL, wait=False, started=run.began, warnings=run.notes,
            info=_fresh(actx, run.pane_id),
        )  # fmt: skip
    # Herdr's "settled" is not yet the answer (a transient done; pi's session not written):
    # the harvest waits on for the evidence within what is left of timeout_ms.
    left = max(0, run.timeout_ms - int((time.monotonic() - run.began) * 1000))
    result = harvest(
        actx,
        record,
        tool=TOOL,
        wait=True,
        timeout_ms=run.timeout_ms if timed_out else left,
        lines=DEFAULT_LINES,
        started=run.began,
        warnings=run.notes,
        info=info,
        timed_out=timed_out,
    )
    if result["status"] in ("running", "blocked"):
        slot.detach()
    else:
        slot.release()
    return result


def _same_subdirectory(cwd: Path, tree_path: str) -> str:
    """The directory of the worktree at ``tree_path`` that ``cwd`` is of its repository (an
    isolated task asked for in ``repo/pkg`` runs in ``<worktree>/pkg``, not at the top)."""
    top = worktree.repo_root(cwd).resolve()
    relative = cwd.resolve().relative_to(top)
    root = Path(tree_path).resolve()
    target = (root / relative).resolve()
    if not target.is_dir():
        raise worktree.WorktreeError(
            "CWD_NOT_IN_WORKTREE",
            f"cwd {str(cwd)!r} is {str(relative)!r} of the repository, which does not exist at "
            "the base commit (untracked or ignored?): spawn from a tracked directory",
        )
    if not target.is_relative_to(root):
        # A path that is a directory here may be a committed symlink at the base commit.
        raise worktree.WorktreeError(
            "CWD_NOT_IN_WORKTREE",
            f"{str(relative)!r} leads out of the worktree at the base commit (a symlink "
            f"to {str(target)!r}); nothing was started",
        )
    return str(target)


def _prompt_unconfirmed(
    actx: AgentToolsContext, record: TaskRecord, message: str, notes: list[str]
) -> TaskRecord:
    """The record after ``agent prompt`` lost its connection to Herdr (over SSH: the link
    to a remote machine dropped). That does not prove the prompt was not delivered, so it is
    never sent again: the evidence decides (:func:`completion.prompt_landed`, from a fresh
    look at the agent when Herdr answers, and pi's session file). Either way the task reads
    ``running`` — its agent exists — and ``completed`` still needs an answer to our prompt;
    only a prompt seen to land is marked sent."""
    logger.warning("agent prompt lost its connection: the prompt may have been delivered")
    info = _fresh(actx, record.pane_id) if record.pane_id else None
    session = record.session_path or completion.session_path_of(info)
    try:
        landed = completion.prompt_landed(
            record, info, session, actx.config.artifact_dir,
            files=task_files(actx.config, record.machine),
        )  # fmt: skip
    except OSError:  # the machine's files cannot be read now: not known yet
        landed = False
    changes: dict[str, Any] = {"status": "running"}
    if landed:
        changes["delivery"] = completion.sent(record, None)
    notes.append(
        f"the connection to Herdr failed while the task prompt was sent ({message}); "
        + (
            "the prompt was seen to reach the agent"
            if landed
            else "whether it reached the agent is not known yet"
        )
        + ": it was not sent again. herdr_get_agent_result looks again; "
        "herdr_read_agent shows the transcript"
    )
    return actx.store.update(record.task_id, **changes)


def _with_tail(message: str, tail: str) -> str:
    """Herdr's failure message, with the pane's last lines when there are any."""
    return f"{message}. Last lines of the pane:\n{tail}" if tail else message


def _fresh(actx: AgentToolsContext, pane_id: str) -> AgentInfo | None:
    try:
        return actx.client.agent_get(pane_id)
    except ClientError:
        return None


__all__ = ["SPAWN_SCHEMA", "TOOL", "clamp_timeout", "default_name", "handle_spawn"]
