"""Herdr's agent state engine as pure rules (reference §5, §14, §17.4): no I/O, no asyncio.

Each pane carries an :class:`AgentRecord`: the hook authority (the last accepted lifecycle
report), the per-source ``seq`` high-water marks, the stored official session reference,
the reported resume command, the agent name, and two inputs set from outside — the
*detected* agent label (process detection) and the *screen* state (screen detection).
:func:`effective` derives the pane's agent label and internal state from those;
:meth:`AgentBook.commit` applies a change with Herdr's ``seen`` and ``state_change_seq``
rules and returns an :class:`Update` saying which events the runtime must emit.

Report routing follows §5.3: custom sources become the authority at once; reserved native
pairs (``herdr:claude``/``claude`` …) only record a session reference; session-identity-only
pairs are ignored by ``report_agent``; full-lifecycle pairs (``herdr:pi``/``pi`` …) count
only while their process is detected and the report is anchored to the stored session.

OpenCode (§5.4, §11.4) has two rules of its own. Its server plugin may report events of
other sessions of the same server (an attached client): while the opencode process is
detected and the pane is anchored to a session, a report carrying another session id is
*cross-talk* and ignored outright (not parked, its ``seq`` not counted). Its TUI plugin
reports the session the user selects (``session_start_source: "select"``, unsequenced):
that re-anchors the pane — even after sequenced reports — and drops an OpenCode authority
anchored to the previous session; a selection made before the opencode process is detected
waits for it (:attr:`AgentRecord.held`).

The other full-lifecycle sources (``herdr:pi``, ``herdr:omp``, ``herdr:mastracode``,
``herdr:kilo``, ``herdr:kimi``) follow Herdr's session rules too (``src/terminal/state.rs``):

* a session report that is not anchored to a live process — the process is not detected yet,
  or the pane holds no session of that source — is *held* (it needs a recognised
  ``session_start_source`` and a ``seq``) and stored once the process is detected, together
  with a lifecycle report parked for that same session;
* when the owner replaces its session (``session_start_source`` allowing it, e.g. pi's
  ``new``/``resume``/``fork``), the authority tied to the previous session goes (the state
  falls back to detection until the new session reports) and the previous session becomes
  *stale*: its late reports are ignored outright, until the owner resumes it;
* an agent name belongs to the agent (and session) that held the pane when it was given
  (:class:`NameOwner`); a different agent or session taking the pane clears it, except the
  kind an ``agent.start`` launch is managing (Herdr's ``reconcile_agent_name_owner``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from orchestrator.client.protocol import parse_agent_label

AgentState = Literal["idle", "working", "blocked", "unknown"]
SourceClass = Literal["custom", "native", "session_only", "full"]

_NATIVE = ("claude", "codex", "copilot", "devin", "droid", "qodercli", "qwen", "cursor", "grok")
_SESSION_ONLY = (("herdr:hermes", "hermes"), ("herdr:antigravity_cli", "agy"))
_FULL = ("pi", "omp", "mastracode", "opencode", "kilo", "kimi")
#: Agents whose session reference prefers the path (kind ``path``) over the id.
_PATH_AGENTS = ("pi", "omp")
#: ``session_start_source`` values Herdr keeps (others are dropped).
START_SOURCES = ("startup", "resume", "clear", "compact", "branch", "new", "fork", "select")
#: ``session_start_source`` values that let a full-lifecycle source's held session report count
#: (Herdr's ``session_start_source_is_recognized``: no ``branch``).
_RECOGNIZED = ("startup", "resume", "clear", "compact", "new", "fork", "select")
#: Start sources that let an official owner replace its stored session id (§5.4).
_REPLACES: dict[str, tuple[str, ...]] = {
    "herdr:claude": ("clear", "resume", "compact"),
    "herdr:codex": ("startup", "clear", "resume", "compact"),
    "herdr:mastracode": ("startup",),
    "herdr:hermes": ("startup", "new", "resume"),
    "herdr:opencode": ("select",),
    "herdr:pi": ("new", "resume", "fork"),
    "herdr:omp": ("startup", "new", "resume", "fork"),
    "herdr:qwen": ("startup", "clear", "resume", "compact", "branch"),
}
#: Rollup priority (§5.5).
PRIORITY = {"blocked": 4, "done": 3, "working": 2, "idle": 1, "unknown": 0}

#: Resume-command limits of Herdr 0.9.2 (integration guide).
RESUME_MAX_ARGS = 64
RESUME_MAX_BYTES = 8 * 1024


def known_agent(label: str) -> str | None:
    """The canonical label of a known agent name or alias (case-insensitive), else None."""
    return parse_agent_label(label)


def normalize_label(label: str) -> str | None:
    """A reported label: known agents canonical, others trimmed; blank → None."""
    trimmed = label.strip()
    if not trimmed:
        return None
    return known_agent(trimmed) or trimmed


def classify(source: str, agent: str) -> SourceClass:
    """The §5.3 class of a (source, normalized agent) pair."""
    if (source, agent) in _SESSION_ONLY and agent != "qwen":
        return "session_only"
    if source == f"herdr:{agent}":
        if agent in _NATIVE:
            return "native"
        if agent in _FULL:
            return "full"
        if agent == "hermes":
            return "session_only"
    return "custom"


def is_official(source: str, agent: str) -> bool:
    """Official pairs produce ``agent_session`` references."""
    return classify(source, agent) != "custom"


def public_status(state: AgentState, seen: bool) -> str:
    """``done`` is an idle agent nobody has looked at since it finished."""
    if state == "idle" and not seen:
        return "done"
    return state


def is_completion(
    before: AgentState, after: AgentState, label_before: str | None, label_after: str | None
) -> bool:
    """Herdr's completion transition: working/blocked → idle, or unknown → idle, same agent."""
    if after != "idle":
        return False
    if before in ("working", "blocked"):
        return True
    return before == "unknown" and label_before is not None and label_before == label_after


def resume_argv_error(argv: list[str]) -> str | None:
    """Why a reported resume command is rejected (``invalid_resume_argv``), else None."""
    if not argv:
        return "resume_argv must not be empty"
    if len(argv) > RESUME_MAX_ARGS:
        return f"resume_argv must have at most {RESUME_MAX_ARGS} arguments"
    if sum(len(arg.encode()) for arg in argv) > RESUME_MAX_BYTES:
        return f"resume_argv must be at most {RESUME_MAX_BYTES} bytes"
    for arg in argv:
        if "'" in arg:
            return "resume_argv must not contain apostrophes"
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in arg):
            return "resume_argv must not contain control characters"
    first = argv[0]
    if not first or "/" in first or "\\" in first or first.strip() != first or " " in first:
        return "resume_argv must start with a bare command name on PATH"
    return None


def session_ref_error(session_id: str | None, session_path: str | None) -> bool:
    """True when a session reference is unusable (Herdr drops it)."""

    def bad(text: str) -> bool:
        return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)

    if session_id is not None and (not 1 <= len(session_id) <= 512 or bad(session_id)):
        return True
    return session_path is not None and (
        not session_path.startswith("/") or len(session_path) > 4096 or bad(session_path)
    )


@dataclass(frozen=True)
class SessionRef:
    """An official agent session reference (``AgentSessionInfo``)."""

    source: str
    agent: str
    kind: Literal["id", "path"]
    value: str

    def view(self) -> dict[str, str]:
        """The wire object."""
        return {"source": self.source, "agent": self.agent, "kind": self.kind, "value": self.value}


def session_ref(
    source: str, agent: str, session_id: str | None, session_path: str | None
) -> SessionRef | None:
    """The reference an official report carries (custom sources' refs are dropped)."""
    if not is_official(source, agent):
        return None
    if session_ref_error(session_id, session_path):
        session_id = (
            None if session_id is None or session_ref_error(session_id, None) else session_id
        )
        session_path = (
            None if session_path is None or session_ref_error(None, session_path) else session_path
        )
    if agent in _PATH_AGENTS and session_path:
        return SessionRef(source, agent, "path", session_path)
    if session_id:
        return SessionRef(source, agent, "id", session_id)
    return None


@dataclass(frozen=True)
class Authority:
    """The hook authority: who reported, for which agent, and what state."""

    source: str
    agent: str
    state: AgentState
    message: str | None = None


@dataclass(frozen=True)
class ParkedReport:
    """A full-lifecycle ``pane.report_agent`` waiting for its process or session anchor."""

    source: str
    agent: str
    state: AgentState
    message: str | None
    ref: SessionRef | None
    seq: int | None


@dataclass(frozen=True)
class NameOwner:
    """Who an agent name belongs to: the agent label and, once known, its session."""

    agent: str
    ref: SessionRef | None


@dataclass
class AgentRecord:
    """The agent side of one terminal.

    Setting :attr:`name` records its :attr:`name_owner` from what holds the pane at that
    moment (Herdr's ``set_agent_name``): the authority, else the stored session, else the
    effective agent.
    """

    authority: Authority | None = None
    #: last accepted ``seq`` per source
    seqs: dict[str, int] = field(default_factory=dict)
    session: SessionRef | None = None
    #: the reported resume command and the source it belongs to (0.9.2)
    resume_argv: list[str] | None = None
    resume_source: str | None = None
    #: agent name (``agent.start`` / ``agent.rename``)
    name: str | None = None
    #: seam for process detection: the foreground agent's canonical label
    detected: str | None = None
    #: seam for screen detection: the state the screen shows
    screen_state: AgentState = "unknown"
    #: global ``state_change_seq`` of this terminal's last effective state change
    state_change_seq: int = 0
    #: a full-lifecycle report that arrived before its process was detected or its session
    #: anchored; Herdr keeps the latest one and applies it once it can
    parked: ParkedReport | None = None
    #: the foreground job (process group) a third-party authority reported from; when the
    #: pane's shell is back in the foreground after it, the agent exited without releasing
    exit_job: int | None = None
    #: a newly detected agent process has not reached idle yet; its first idle is not a
    #: completion (Herdr's ``agent_process_acquisition_pending``)
    acquiring: bool = False
    #: a full-lifecycle session report held until its process is detected (an OpenCode
    #: selection, or another source's session start); it anchors the pane once the process
    #: is (Herdr's suppressed replacement session)
    held: SessionRef | None = None
    #: sessions a full-lifecycle source replaced, per source: their reports are ignored
    stale: dict[str, list[SessionRef]] = field(default_factory=dict)
    #: the agent (and session) the agent name belongs to
    name_owner: NameOwner | None = None
    #: seam set by the report handlers: the kind an ``agent.start`` launch manages here
    managed_kind: str | None = None

    def __setattr__(self, key: str, value: object) -> None:
        object.__setattr__(self, key, value)
        if key == "name":
            owner = None if value is None else _owner_now(self)
            object.__setattr__(self, "name_owner", owner)

    @property
    def selection(self) -> SessionRef | None:
        """A held OpenCode selection (the name the OpenCode rules use)."""
        held = self.held
        return held if held is not None and (held.source, held.agent) == _OPENCODE else None

    def accept_seq(self, source: str, seq: int | None) -> bool:
        """§5.4: sequenced reports must grow; unsequenced ones only before any sequenced."""
        if seq is None:
            return source not in self.seqs
        last = self.seqs.get(source)
        if last is not None and seq <= last:
            return False
        self.seqs[source] = seq
        return True

    def authority_live(self) -> bool:
        """A full-lifecycle authority only counts while its process is detected."""
        auth = self.authority
        if auth is None:
            return False
        if classify(auth.source, auth.agent) == "full":
            return self.detected == auth.agent
        return True

    def screen_detection_skipped(self) -> bool:
        """True while a full-lifecycle authority owns the pane's state."""
        auth = self.authority
        return (
            auth is not None
            and classify(auth.source, auth.agent) == "full"
            and (self.authority_live())
        )

    def resume(self) -> list[str] | None:
        """The resume command of the source holding the pane, if any."""
        auth = self.authority
        if auth is None or self.resume_source != auth.source:
            return None
        return self.resume_argv


def effective(rec: AgentRecord) -> tuple[str | None, AgentState]:
    """The pane's effective agent label and internal state."""
    if rec.authority_live():
        assert rec.authority is not None
        auth = rec.authority
        state = auth.state
        visible_block = rec.detected == auth.agent and rec.screen_state == "blocked"
        if classify(auth.source, auth.agent) != "full" and visible_block:
            state = "blocked"
        return auth.agent, state
    if rec.detected is not None:
        return rec.detected, rec.screen_state
    return None, "unknown"


def is_agent(rec: AgentRecord) -> bool:
    """§5.2: a named pane or one with an effective agent label."""
    return rec.name is not None or effective(rec)[0] is not None


def _authority_ref(rec: AgentRecord) -> SessionRef | None:
    """The session a full-lifecycle authority is anchored to (its reports carry it)."""
    auth, session = rec.authority, rec.session
    if auth is None or session is None or classify(auth.source, auth.agent) != "full":
        return None
    return session if (session.source, session.agent) == (auth.source, auth.agent) else None


def _owner_now(rec: AgentRecord) -> NameOwner | None:
    """Who a name given now belongs to (Herdr's ``set_agent_name``)."""
    if "managed_kind" not in rec.__dict__:
        return None  # still being constructed
    if rec.authority is not None:
        return NameOwner(rec.authority.agent, _authority_ref(rec))
    if rec.session is not None:
        return NameOwner(rec.session.agent, rec.session)
    label = effective(rec)[0]
    return None if label is None else NameOwner(label, None)


def reconcile_name_owner(rec: AgentRecord, agent: str, ref: SessionRef | None) -> None:
    """``agent`` (with session ``ref``) now holds the pane: a name given to a different agent
    or session goes; an unowned name is adopted. The managed launch's kind keeps its name."""
    if rec.name is None:
        return
    managed = rec.managed_kind
    if managed is not None and known_agent(agent) == managed:
        return
    owner = rec.name_owner
    if owner is None and managed is not None:
        owner = NameOwner(managed, None)
    if owner is None:
        rec.name_owner = NameOwner(agent, ref)
    elif owner.agent != agent or (owner.ref is not None and ref is not None and owner.ref != ref):
        rec.name = None
    elif owner.ref is None and ref is not None:
        rec.name_owner = NameOwner(owner.agent, ref)


@dataclass(frozen=True)
class Snapshot:
    """What a pane looked like before a change."""

    label: str | None
    state: AgentState
    seen: bool
    name: str | None
    #: an ``agent.start`` launch was pending: its first idle is not a completion
    launch_pending: bool = False


@dataclass(frozen=True)
class Update:
    """What changed, and so which events to emit (Herdr's ``emit_pane_state_update``)."""

    before: Snapshot
    label: str | None
    state: AgentState
    seen: bool
    name_changed: bool
    released: bool
    state_changed: bool

    @property
    def detected_event(self) -> bool:
        """``pane.agent_detected``: the label changed or the agent was released."""
        return self.before.label != self.label or self.released

    @property
    def event_label(self) -> str | None:
        """On release the event names the previous agent."""
        return self.before.label if self.released else self.label

    @property
    def status(self) -> str:
        """The public status after the change."""
        return public_status(self.state, self.seen)

    @property
    def status_changed(self) -> bool:
        """``pane_agent_status_changed``: the public status changed."""
        return public_status(self.before.state, self.before.seen) != self.status


@dataclass
class AgentBook:
    """The global part of the engine: Herdr's ``next_agent_state_change_seq``."""

    state_change_seq: int = 0

    @staticmethod
    def snapshot(
        rec: AgentRecord, state: AgentState, seen: bool, *, launch_pending: bool = False
    ) -> Snapshot:
        """The pane as it is (``state`` and ``seen`` live on the pane)."""
        return Snapshot(effective(rec)[0], state, seen, rec.name, launch_pending)

    def commit(
        self, rec: AgentRecord, before: Snapshot, *, active_tab: bool, released: bool = False
    ) -> Update:
        """Apply §5.5 to a record changed since ``before``: seen, state_change_seq, events.

        The first idle after an ``agent.start`` launch or after a new agent process was
        detected is the agent becoming ready, not finishing work: it stays seen, so an
        orchestrator does not read a freshly started agent in a background tab as ``done``.
        """
        label, state = effective(rec)
        acquired = rec.acquiring and state == "idle"
        if acquired:
            rec.acquiring = False
        suppressed = state == "idle" and (before.launch_pending or acquired)
        seen = before.seen
        if state != "idle":
            seen = True
        elif not suppressed and is_completion(before.state, state, before.label, label):
            seen = active_tab
        changed = state != before.state
        if changed:
            self.state_change_seq += 1
            rec.state_change_seq = self.state_change_seq
        return Update(before, label, state, seen, rec.name != before.name, released, changed)


# -- reports ------------------------------------------------------------------------------------


def _store_session(rec: AgentRecord, ref: SessionRef | None, start: str | None) -> bool:
    """Record an official session ref by §5.4's replacement rules; True if stored.

    The agent taking the pane with that session is reconciled with the agent name's owner.
    """
    if ref is None:
        return False
    current = rec.session
    stored = False
    if current is None or current == ref:
        stored = True
    elif current.source == ref.source:
        allowed = start is not None and start in _REPLACES.get(ref.source, ())
        stored = allowed or ref.source == "herdr:antigravity_cli"
    elif rec.detected == ref.agent and start is not None and start != "branch":
        stored = True
    if stored:
        reconcile_name_owner(rec, ref.agent, ref)
        rec.session = ref
    return stored


def _is_stale(rec: AgentRecord, source: str, ref: SessionRef | None) -> bool:
    """A report for a session its owner replaced (Herdr ignores it outright)."""
    return ref is not None and ref in rec.stale.get(source, ())


def _remember_stale(rec: AgentRecord, ref: SessionRef) -> None:
    sessions = rec.stale.setdefault(ref.source, [])
    if ref not in sessions:
        sessions.append(ref)


def _forget_stale(rec: AgentRecord, ref: SessionRef) -> None:
    sessions = rec.stale.get(ref.source)
    if sessions is not None and ref in sessions:
        sessions.remove(ref)
        if not sessions:
            del rec.stale[ref.source]


def _fresh_after_stale(rec: AgentRecord, source: str, ref: SessionRef | None) -> bool:
    """A report carrying a session while its source has stale ones (the caller has already
    dropped reports *for* a stale session): Herdr re-anchors the source's ``seq`` on it
    (the new session's numbering)."""
    return bool(rec.stale.get(source)) and ref is not None


def report_agent(
    rec: AgentRecord,
    *,
    source: str,
    agent: str,
    state: AgentState,
    message: str | None,
    ref: SessionRef | None,
    seq: int | None,
    replayed: bool = False,
) -> bool:
    """``pane.report_agent``; True when the report became the hook authority.

    ``replayed`` marks a parked report being applied: its ``seq`` was checked when it was
    parked and becomes the source's high-water mark now.
    """
    kind = classify(source, agent)
    if kind == "session_only":
        return False
    if kind == "native":
        if rec.accept_seq(source, seq):
            _store_session(rec, ref, None)
        return False
    if kind == "full":
        if _is_stale(rec, source, ref) or _opencode_cross_talk(rec, source, agent, ref):
            return False
        anchored = rec.session is not None and rec.session.source == source
        if ref is not None and anchored:
            assert rec.session is not None
            anchored = rec.session.value == ref.value
        if rec.detected != agent or not anchored:
            # Parked, not dropped: an integration may report before Herdr has seen its
            # process or stored its session; the report applies with that session. Only
            # a report carrying its session and a seq can wait; the newest one waits.
            parked = rec.parked
            newer = (
                seq is not None
                and seq > rec.seqs.get(source, -1)
                and (parked is None or parked.source != source or parked.seq is None
                     or seq > parked.seq)
            )  # fmt: skip
            if replayed or (ref is not None and newer):
                rec.parked = ParkedReport(source, agent, state, message, ref, seq)
            return False
        if not replayed and _fresh_after_stale(rec, source, ref):
            rec.seqs.pop(source, None)
    elif known_agent(agent) is not None and rec.detected not in (None, agent):
        return False
    if replayed:
        if seq is not None:
            rec.seqs[source] = max(seq, rec.seqs.get(source, seq))
    elif not rec.accept_seq(source, seq):
        return False
    reconcile_name_owner(rec, agent, ref if kind == "full" else None)
    previous = rec.authority
    if previous is not None and previous.source != source and rec.resume_source != source:
        rec.resume_argv, rec.resume_source = None, None
    rec.authority = Authority(source, agent, state, message)
    if rec.parked is not None and rec.parked.source == source:
        rec.parked = None  # an older parked report must never override this one
    return True


def replay_parked(rec: AgentRecord) -> bool:
    """Store a held session report once its process is detected; True when a parked
    report applied with it.

    Herdr keeps a parked report waiting until a held session of its source is stored: it
    applies then if it is for that session, else it is dropped.
    """
    held = rec.held
    if held is None or rec.detected != held.agent:
        return False
    rec.held = None
    if (held.source, held.agent) == _OPENCODE:
        _select(rec, held)
    else:
        _forget_stale(rec, held)
        reconcile_name_owner(rec, held.agent, held)
        rec.session = held
    parked = rec.parked
    if parked is None or parked.source != held.source:
        return False
    rec.parked = None
    if parked.ref != held:
        return False
    return report_agent(
        rec,
        source=parked.source,
        agent=parked.agent,
        state=parked.state,
        message=parked.message,
        ref=parked.ref,
        seq=parked.seq,
        replayed=True,
    )


def report_session(
    rec: AgentRecord,
    *,
    source: str,
    ref: SessionRef | None,
    start: str | None,
    seq: int | None,
) -> bool:
    """``pane.report_agent_session``; True if the stored session changed."""
    if ref is not None and (ref.source, ref.agent) == _OPENCODE and start == "select":
        return _report_selection(rec, ref, seq)
    if ref is not None and classify(ref.source, ref.agent) == "full":
        return _report_full_session(rec, ref, start, seq)
    if not rec.accept_seq(source, seq):
        return False
    before = rec.session
    _store_session(rec, ref, start)
    return rec.session != before


def _report_full_session(
    rec: AgentRecord, ref: SessionRef, start: str | None, seq: int | None
) -> bool:
    """A full-lifecycle source's session report (Herdr's ``set_agent_session_ref``).

    Unless its process is detected and the pane already holds a session of that source, the
    report is held (a recognised start source and a ``seq`` are required) and stored when
    the process is detected — at once if it already is. Otherwise it is the owner changing
    its session: allowed by the start source, the authority tied to the previous session
    goes and that session turns stale; not allowed, a different session is ignored.
    """
    source = ref.source
    current = rec.session
    present = rec.detected == ref.agent
    anchored = current is not None and (current.source, current.agent) == (source, ref.agent)
    if not present or not anchored:
        if start not in _RECOGNIZED or seq is None or seq <= rec.seqs.get(source, -1):
            return False
        if rec.held != ref:
            parked = rec.parked
            if parked is not None and parked.source == source and parked.ref != ref:
                rec.parked = None
            rec.held = ref
        rec.seqs[source] = seq
        before = rec.session
        replay_parked(rec)
        return rec.session != before
    assert current is not None
    if not rec.accept_seq(source, seq):
        return False
    allowed = start is not None and start in _REPLACES.get(source, ())
    if current != ref and current.kind == ref.kind == "id" and not allowed:
        return False
    replaced = _authority_ref(rec) not in (None, ref)
    if replaced and not allowed:
        return False
    if allowed:
        _forget_stale(rec, ref)
    if replaced:
        _remember_stale(rec, current)
        rec.authority = None
    reconcile_name_owner(rec, ref.agent, ref)
    rec.session = ref
    return current != ref


# -- OpenCode ------------------------------------------------------------------------------------

_OPENCODE = ("herdr:opencode", "opencode")


def _opencode_cross_talk(rec: AgentRecord, source: str, agent: str, ref: SessionRef | None) -> bool:
    """An OpenCode report for another session than the one the pane is anchored to, while
    the opencode process is detected: another client's event, ignored (Herdr's
    ``opencode_cross_talk``)."""
    anchored = rec.session
    return (
        (source, agent) == _OPENCODE
        and rec.detected == agent
        and anchored is not None
        and (anchored.source, anchored.agent) == _OPENCODE
        and ref is not None
        and ref != anchored
    )


def _report_selection(rec: AgentRecord, ref: SessionRef, seq: int | None) -> bool:
    """OpenCode's ``select`` session report; True if the stored session changed.

    Unsequenced (the TUI plugin) it ignores the seq rule. While the opencode process is not
    detected it is held (a sequenced one counts its ``seq``), dropping a report parked for
    the previous session.
    """
    if seq is not None and not rec.accept_seq(ref.source, seq):
        return False
    if rec.detected != ref.agent:
        rec.held = ref
        if rec.parked is not None and rec.parked.source == ref.source:
            rec.parked = None
        return False
    rec.held = None
    return _select(rec, ref)


def _select(rec: AgentRecord, ref: SessionRef) -> bool:
    """Anchor the pane to a selected OpenCode session; an OpenCode authority anchored to the
    previous one is dropped until the selected session reports (screen detection applies
    meanwhile) and that session turns stale. True if the stored session changed."""
    before = rec.session
    anchored = _authority_ref(rec)
    if not _store_session(rec, ref, "select") or before == ref:
        return False
    _forget_stale(rec, ref)
    auth = rec.authority
    if before is not None and auth is not None and (auth.source, auth.agent) == _OPENCODE:
        rec.authority = None
        if anchored is not None:
            _remember_stale(rec, anchored)
    return True


def holds(rec: AgentRecord, source: str) -> bool:
    """Whether ``source`` holds the pane (its report is the authority)."""
    return rec.authority is not None and rec.authority.source == source


def release(rec: AgentRecord, *, source: str, agent: str, seq: int | None) -> bool | None:
    """``pane.release_agent``: None when ignored; else whether the agent was released.

    When the agent's process is still detected only the authority goes (no release event);
    otherwise the detected label, fallback state and agent name go too.
    """
    auth = rec.authority
    if is_official(source, agent):
        return None
    if auth is not None and (auth.source != source or auth.agent != agent):
        return None
    label, _ = effective(rec)
    owns_session = rec.session is not None and (rec.session.source, rec.session.agent) == (
        source,
        agent,
    )
    if label != agent and not owns_session:
        return None
    if not rec.accept_seq(source, seq):
        return None
    rec.authority = None
    rec.resume_argv, rec.resume_source = None, None
    if owns_session:
        rec.session = None
    if rec.detected == agent:
        return False
    rec.detected = None
    rec.screen_state = "unknown"
    rec.name = None
    return True


def clear_authority(rec: AgentRecord, *, source: str | None, seq: int | None) -> bool:
    """``pane.clear_agent_authority``; True when an authority was cleared."""
    auth = rec.authority
    if auth is None or (source is not None and source != auth.source):
        return False
    if not rec.accept_seq(auth.source, seq):
        return False
    rec.authority = None
    rec.session = None
    rec.resume_argv, rec.resume_source = None, None
    return True


def abandoned(rec: AgentRecord) -> bool:
    """The 0.9.2 guide's safety net: a third-party agent whose job ended without releasing.

    Clears its authority, name, detected label and resume command at once, like a release;
    True when there was such an agent. Official sources are left to process detection.
    """
    auth, job = rec.authority, rec.exit_job
    rec.exit_job = None
    if job is None or auth is None or classify(auth.source, auth.agent) != "custom":
        return False
    rec.authority = None
    rec.resume_argv, rec.resume_source = None, None
    if rec.detected == auth.agent:
        rec.detected = None
        rec.screen_state = "unknown"
    rec.name = None
    return True


def process_exited(rec: AgentRecord) -> bool:
    """The detected agent process ended: clear its authority, name and session (§5.4)."""
    agent = rec.detected
    rec.parked = None
    if agent is None:
        return False
    rec.detected = None
    rec.screen_state = "unknown"
    auth = rec.authority
    if auth is not None and auth.agent == agent:
        rec.authority = None
        rec.resume_argv, rec.resume_source = None, None
    if rec.session is not None and rec.session.agent == agent:
        rec.session = None
    rec.name = None
    return True
