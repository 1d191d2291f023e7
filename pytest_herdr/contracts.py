"""Schema contract checks: validate what goes over a Herdr socket and record what was exercised.

One :class:`ContractChecker` holds a schema bundle (the layout of Herdr's
``herdr api schema --json``: ``protocol``, ``schema_version`` and ``schemas`` with the parts
``request``, ``success_response``, ``error_response``, ``event``, ``subscription_event``) and
checks wire lines against it:

* :meth:`ContractChecker.check_request`, :meth:`~ContractChecker.check_response` and
  :meth:`~ContractChecker.check_event` return the :class:`Violation` list of one line;
* :meth:`ContractChecker.observe` (also the checker's ``__call__``, so it is a wire tap) checks
  a line, keeps its violations and records coverage: methods requested, result ``type``\\ s
  answered, error codes, event kinds; :meth:`~ContractChecker.coverage_summary` and
  :meth:`~ContractChecker.coverage_json` report it.

Where the lines come from:

* an in-process simulator: :meth:`ContractChecker.attached` hangs the checker on
  ``herdr_sim.server.WIRE_TAPS`` (every in-process simulator of the process);
* a subprocess simulator: start it with ``$HERDR_SIM_WIRE_LOG`` set to a file and call
  :meth:`ContractChecker.follow_wire_log`;
* a real Herdr, whose wire cannot be tapped: talk to it through
  :class:`pytest_herdr.WireClient` with the checker among its ``observers``; it shows
  them every request it sends and every line it gets back.

Bundles: :meth:`ContractChecker.from_path` (any schema file),
:meth:`ContractChecker.from_binary` (``herdr api schema --json`` of a binary) or, by default,
the simulator's own schema (:func:`herdr_sim.schema.build_schema`: ``request`` from its
registry, with each method's result ``type`` as ``x-herdr-result-type``, and the result and
event parts from Herdr's published bundle when it is found); parts a bundle lacks are
checked for their envelope shape only.

Importing this module starts nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections import Counter, deque
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Self

from jsonschema import Draft202012Validator

from .verdicts import VerdictMemo, ignores

__all__ = [
    "ContractChecker",
    "Coverage",
    "SchemaBundle",
    "Violation",
    "WireTap",
    "classify",
]

Line = dict[str, Any]
#: A wire observer: ``tap(kind, line)`` with kind "request", "response" or "event".
WireTap = Callable[[str, Line], None]

KINDS = ("request", "response", "event")
_LINE_PREVIEW = 400
_MAX_PENDING = 4096


@dataclass(frozen=True)
class Violation:
    """One way a wire line breaks the contract."""

    #: "request", "response" or "event"
    kind: str
    #: the schema part checked ("request", "success_response", …, or "envelope")
    part: str
    message: str
    #: where in the line (JSON path elements)
    location: tuple[str | int, ...]
    line: Line = field(repr=False, compare=False)
    #: the request's method, when known
    method: str | None = None

    def __str__(self) -> str:
        where = "".join(f"[{step!r}]" for step in self.location) or "(line)"
        about = f"{self.kind} {self.method}" if self.method else self.kind
        preview = json.dumps(self.line, ensure_ascii=False)[:_LINE_PREVIEW]
        return f"{about}: {self.part}: {self.message} at {where}\n  line: {preview}"

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready form (the line truncated like the text form)."""
        return {
            "kind": self.kind,
            "part": self.part,
            "method": self.method,
            "message": self.message,
            "location": list(self.location),
            "line": json.dumps(self.line, ensure_ascii=False)[:_LINE_PREVIEW],
        }


def classify(kind: str, line: Mapping[str, Any]) -> str:
    """The schema part a wire line belongs to."""
    if kind == "request":
        return "request"
    if kind == "response":
        return "error_response" if "error" in line else "success_response"
    # Filtered subscription events use dot names (``pane.agent_status_changed``),
    # lifecycle events snake_case kinds.
    return "subscription_event" if "." in str(line.get("event", "")) else "event"


def _pointer(*steps: str | int) -> str:
    return "#/" + "/".join(str(step).replace("~", "~0").replace("/", "~1") for step in steps)


def _variant_key(variant: Any, key: str) -> str | None:
    """The ``const`` a oneOf variant pins ``key`` to, if it does."""
    if not isinstance(variant, dict):
        return None
    prop = variant.get("properties", {}).get(key)
    const = prop.get("const") if isinstance(prop, dict) else None
    return const if isinstance(const, str) else None


class SchemaBundle:
    """A loaded schema bundle: validators per part, the method and type catalogues."""

    def __init__(self, document: Mapping[str, Any], source: str) -> None:
        if not isinstance(document.get("schemas"), dict):
            raise TypeError(f"{source}: not a Herdr schema bundle (no `schemas` object)")
        self.document: dict[str, Any] = dict(document)
        self.source = source
        self.protocol: Any = document.get("protocol")
        self._validators: dict[str, Draft202012Validator] = {}
        #: verdicts already reached, by instance (a suite sends the same lines again and again)
        self.verdicts = VerdictMemo()
        self._lock = threading.Lock()
        schemas: dict[str, Any] = self.document["schemas"]
        requests = schemas.get("request", {}).get("oneOf", [])
        #: the request variants that cannot tell one line's ``id`` from another's (the
        #: envelope checks the id): their verdicts are remembered without it
        self._id_blind = frozenset(
            _pointer("schemas", "request", "oneOf", index)
            for index, variant in enumerate(requests)
            if ignores(variant, "id")
        )
        #: request variants by method name → their index in ``schemas.request.oneOf``
        self.request_variants: dict[str, int] = {}
        self.result_type_of: dict[str, str] = {}
        for index, variant in enumerate(requests):
            name = _variant_key(variant, "method")
            if name is None:
                continue
            self.request_variants[name] = index
            declared = variant.get("x-herdr-result-type")
            if isinstance(declared, str):
                self.result_type_of[name] = declared
        unsupported = self.document.get("x-herdr-sim-unsupported", {})
        #: methods the bundle lists but the server answers ``not_supported_by_simulator``
        self.unsupported: dict[str, str] = (
            dict(unsupported) if isinstance(unsupported, dict) else {}
        )
        self.methods: tuple[str, ...] = tuple(self.request_variants) + tuple(
            name for name in self.unsupported if name not in self.request_variants
        )
        results = (
            schemas.get("success_response", {})
            .get("$defs", {})
            .get("ResponseResult", {})
            .get("oneOf", [])
        )
        #: result variants by ``type`` → index in ``…/$defs/ResponseResult/oneOf``
        self.result_variants: dict[str, int] = {}
        for index, variant in enumerate(results):
            name = _variant_key(variant, "type")
            if name is not None:
                self.result_variants[name] = index
        known_results = set(self.result_variants) | set(self.result_type_of.values())
        self.result_types: tuple[str, ...] = tuple(sorted(known_results))
        kinds: list[str] = []
        for part, definition in (
            ("event", "EventKind"),
            ("subscription_event", "SubscriptionEventKind"),
        ):
            enum = schemas.get(part, {}).get("$defs", {}).get(definition, {}).get("enum", [])
            kinds.extend(str(kind) for kind in enum)
        self.event_kinds: tuple[str, ...] = tuple(kinds)

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> SchemaBundle:
        """Load a bundle file."""
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(document, str(path))

    def has(self, part: str) -> bool:
        """True when the bundle has this top-level part."""
        return part in self.document["schemas"]

    def validator(self, pointer: str) -> Draft202012Validator:
        """A validator for the schema at ``pointer`` (references resolve in the bundle)."""
        with self._lock:
            found = self._validators.get(pointer)
            if found is None:
                schema = dict(self.document)
                schema["$ref"] = pointer
                found = Draft202012Validator(schema)
                self._validators[pointer] = found
            return found

    def errors(self, pointer: str, instance: Any) -> list[tuple[str, tuple[str | int, ...]]]:
        """(message, location) of every schema error of ``instance`` at ``pointer`` (a
        verdict seen before comes from :attr:`verdicts`)."""
        without = "id" if pointer in self._id_blind else None
        key = self.verdicts.key(pointer, instance, without=without)
        if key is not None and (kept := self.verdicts.get(key)) is not None:
            return list(kept)
        found = [
            (error.message, tuple(error.absolute_path))
            for error in self.validator(pointer).iter_errors(instance)
        ]
        if key is not None:
            self.verdicts.put(key, tuple(found))
        return found


@cache
def simulator_bundle() -> SchemaBundle:
    """The simulator's own generated protocol-22 schema (what ``herdr api schema --json`` of
    the simulator prints)."""
    from herdr_sim.schema import build_schema

    return SchemaBundle(build_schema(), "herdr-sim (generated protocol-22 schema)")


def _simulator_result_types() -> Mapping[str, str]:
    """Each implemented method's result ``type``, from the simulator's registry."""
    try:
        return simulator_bundle().result_type_of
    except Exception:  # the checker must work without the simulator importable
        return {}


@dataclass
class Coverage:
    """What a session exercised, counted."""

    methods: Counter[str] = field(default_factory=Counter)
    result_types: Counter[str] = field(default_factory=Counter)
    error_codes: Counter[str] = field(default_factory=Counter)
    event_kinds: Counter[str] = field(default_factory=Counter)
    lines: Counter[str] = field(default_factory=Counter)

    def record(self, kind: str, line: Mapping[str, Any]) -> None:
        """Count one wire line."""
        self.lines[kind] += 1
        if kind == "request":
            method = line.get("method")
            if isinstance(method, str):
                self.methods[method] += 1
        elif kind == "response":
            result = line.get("result")
            error = line.get("error")
            if isinstance(result, dict) and isinstance(result.get("type"), str):
                self.result_types[result["type"]] += 1
            elif isinstance(error, dict) and isinstance(error.get("code"), str):
                self.error_codes[error["code"]] += 1
        elif kind == "event":
            event = line.get("event")
            if isinstance(event, str):
                self.event_kinds[event] += 1

    def merge(self, other: Coverage) -> None:
        """Add another coverage (e.g. an xdist worker's) to this one."""
        self.methods.update(other.methods)
        self.result_types.update(other.result_types)
        self.error_codes.update(other.error_codes)
        self.event_kinds.update(other.event_kinds)
        self.lines.update(other.lines)


def _fraction(seen: Iterable[str], known: Sequence[str]) -> str:
    hits = len(set(seen) & set(known))
    if not known:
        return f"{len(set(seen))} (schema lists none)"
    return f"{hits}/{len(known)} ({100 * hits / len(known):.0f}%)"


def _counts(counter: Counter[str], limit: int = 40) -> str:
    items = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    text = ", ".join(f"{name} ×{count}" for name, count in items[:limit])
    if len(items) > limit:
        text += f", … ({len(items) - limit} more)"
    return text or "none"


def _names(names: Iterable[str], limit: int = 40) -> str:
    ordered = list(names)
    text = ", ".join(ordered[:limit])
    if len(ordered) > limit:
        text += f", … ({len(ordered) - limit} more)"
    return text or "none"


class ContractChecker:
    """Checks wire lines against a schema bundle and records coverage.

    Thread-safe: the simulator's taps run on its loop thread, clients on test threads.
    """

    def __init__(
        self,
        bundle: SchemaBundle | Mapping[str, Any] | None = None,
        *,
        strict_requests: bool = False,
    ) -> None:
        if bundle is None:
            bundle = simulator_bundle()
        elif not isinstance(bundle, SchemaBundle):
            bundle = SchemaBundle(bundle, "<in-memory bundle>")
        self.bundle = bundle
        self.coverage = Coverage()
        #: every violation observed (``observe``), in order
        self.violations: list[Violation] = []
        self._lock = threading.Lock()
        #: violations of requests the server answered with an error (not counted as
        #: violations unless ``strict_requests``: tests of error paths send them on purpose)
        self.rejected: list[Violation] = []
        self.strict_requests = strict_requests
        self._pending: dict[str, deque[tuple[str, list[Violation]]]] = {}
        self._pending_order: deque[str] = deque()
        self._log_offsets: dict[str, int] = {}

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> Self:
        """Check against the bundle in a file (e.g. Herdr's published protocol-22 schema)."""
        return cls(SchemaBundle.from_path(path))

    @classmethod
    def from_binary(
        cls,
        binary: str | os.PathLike[str],
        *,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> Self:
        """Check against what ``BINARY api schema --json`` prints (a real ``herdr`` or the
        simulator's installed CLI). Raises ``RuntimeError`` when the command fails."""
        argv = [os.fspath(binary), "api", "schema", "--json"]
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=dict(env) if env is not None else None,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"cannot run {' '.join(argv)}: {exc}") from exc
        if proc.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()[:500]}"
            )
        try:
            document = json.loads(proc.stdout)
        except ValueError as exc:
            raise RuntimeError(f"{' '.join(argv)} printed no JSON schema: {exc}") from exc
        return cls(SchemaBundle(document, " ".join(argv)))

    # -- single-line checks -------------------------------------------------------------------

    def check_request(self, line: Line) -> list[Violation]:
        """Violations of one request object."""
        method = line.get("method") if isinstance(line, dict) else None
        name = method if isinstance(method, str) else None
        problems = self._envelope("request", line, name)
        if problems or name is None or not self.bundle.has("request"):
            return problems
        index = self.bundle.request_variants.get(name)
        if index is None:
            if name in self.bundle.unsupported:
                return []  # a protocol method the simulator answers not_supported_by_simulator
            return [
                Violation("request", "request", f"unknown method {name!r}", ("method",), line, name)
            ]
        pointer = _pointer("schemas", "request", "oneOf", index)
        problems.extend(
            Violation("request", "request", message, where, line, name)
            for message, where in self.bundle.errors(pointer, line)
        )
        return problems

    def check_response(self, line: Line, method: str | None = None) -> list[Violation]:
        """Violations of one response envelope; with ``method``, also whether its result
        ``type`` is the one that method answers."""
        part = classify("response", line) if isinstance(line, dict) else "success_response"
        problems = self._envelope("response", line, method)
        if problems:
            return problems
        if self.bundle.has(part):
            problems.extend(self._schema_errors(part, line, method))
        result = line.get("result")
        if method is not None and isinstance(result, dict):
            expected = self._expected_type(method)
            if expected is not None and result.get("type") != expected:
                problems.append(
                    Violation(
                        "response",
                        part,
                        f"{method} answers result type {expected!r}, got {result.get('type')!r}",
                        ("result", "type"),
                        line,
                        method,
                    )
                )
        return problems

    def check_event(self, line: Line) -> list[Violation]:
        """Violations of one pushed event line."""
        problems = self._envelope("event", line, None)
        if problems:
            return problems
        part = classify("event", line)
        if self.bundle.has(part):
            problems.extend(self._schema_errors(part, line, None))
        return problems

    def check(self, kind: str, line: Line, method: str | None = None) -> list[Violation]:
        """Dispatch on ``kind`` ("request", "response", "event")."""
        if kind == "request":
            return self.check_request(line)
        if kind == "response":
            return self.check_response(line, method)
        if kind == "event":
            return self.check_event(line)
        raise ValueError(f"unknown wire line kind {kind!r} (expected one of {KINDS})")

    def _schema_errors(self, part: str, line: Line, method: str | None) -> list[Violation]:
        kind = "response" if part.endswith("_response") else "event"
        result = line.get("result")
        index = None
        if part == "success_response" and isinstance(result, dict):
            index = self.bundle.result_variants.get(str(result.get("type")))
        if index is not None:
            # Validate against the one variant the ``type`` names: precise messages, and
            # far cheaper than the whole oneOf. The envelope was checked already.
            pointer = _pointer(
                "schemas", "success_response", "$defs", "ResponseResult", "oneOf", index
            )
            return [
                Violation(kind, part, message, ("result", *where), line, method)
                for message, where in self.bundle.errors(pointer, result)
            ]
        return [
            Violation(kind, part, message, where, line, method)
            for message, where in self.bundle.errors(_pointer("schemas", part), line)
        ]

    @staticmethod
    def _envelope(kind: str, line: Any, method: str | None) -> list[Violation]:
        """Shape checks that need no schema (and keep the schema checks meaningful)."""

        def bad(message: str, *where: str | int) -> list[Violation]:
            return [
                Violation(
                    kind,
                    "envelope",
                    message,
                    where,
                    line if isinstance(line, dict) else {"line": line},
                    method,
                )
            ]

        if not isinstance(line, dict):
            return bad(f"a {kind} line must be a JSON object")
        if kind == "request":
            if not isinstance(line.get("id"), str):
                return bad("request has no string `id`", "id")
            if not isinstance(line.get("method"), str):
                return bad("request has no string `method`", "method")
            if not isinstance(line.get("params"), dict):
                return bad("request has no `params` object", "params")
            return []
        if kind == "response":
            if not isinstance(line.get("id"), str):
                return bad("response has no string `id`", "id")
            if ("result" in line) == ("error" in line):
                return bad("response must have exactly one of `result` and `error`")
            if "result" in line:
                result = line["result"]
                if not isinstance(result, dict) or not isinstance(result.get("type"), str):
                    return bad("`result` must be an object with a string `type`", "result")
                return []
            error = line["error"]
            if not isinstance(error, dict):
                return bad("`error` must be an object", "error")
            for name in ("code", "message"):
                if not isinstance(error.get(name), str):
                    return bad(f"`error.{name}` must be a string", "error", name)
            return []
        if not isinstance(line.get("event"), str):
            return bad("event has no string `event`", "event")
        if not isinstance(line.get("data"), dict):
            return bad("event has no `data` object", "data")
        if "id" in line:
            return bad("pushed events carry no `id`", "id")
        return []

    # -- observing a session ------------------------------------------------------------------

    def observe(self, kind: str, line: Line, method: str | None = None) -> list[Violation]:
        """Check one wire line, keep its violations and count it for coverage; returns the
        line's violations.

        Responses are paired with their request by id (a request seen earlier with the same
        id, or one whose id prefixes the response's), which tells their method. Unless the
        checker is ``strict_requests``, a request's violations wait for its answer: the
        server accepting a request the schema forbids is a violation; the server rejecting
        it (an error response: a test of an error path) files them under ``rejected``.
        """
        with self._lock:
            paired = None
            if kind == "response" and isinstance(line, dict):
                result = line.get("result")
                answered = result.get("type") if isinstance(result, dict) else None
                paired = self._pair(str(line.get("id", "")), answered)
                if paired is not None and method is None:
                    method = paired[0]
            found = self.check(kind, line, method)
            if isinstance(line, dict):
                self.coverage.record(kind, line)
            if kind == "request" and isinstance(line, dict) and self._remember(line, found):
                return found  # parked until the answer comes
            if paired is not None:
                # the request's parked violations: the server accepted it, or rejected it
                (self.rejected if "error" in line else self.violations).extend(paired[1])
            self.violations.extend(found)
        return found

    def __call__(self, kind: str, line: Line) -> None:
        """A wire tap (``herdr_sim.server.WIRE_TAPS``, a ``WireClient`` observer)."""
        self.observe(kind, line)

    @property
    def unanswered(self) -> list[Violation]:
        """Violations of requests still waiting for their answer (non-strict checkers)."""
        with self._lock:
            return [
                problem
                for queue in self._pending.values()
                for _, found in queue
                for problem in found
            ]

    def _remember(self, line: Line, found: list[Violation]) -> bool:
        """Note a request for pairing; True when its violations were parked."""
        request_id, method = line.get("id"), line.get("method")
        if not isinstance(request_id, str) or not isinstance(method, str):
            return False
        park = bool(found) and not self.strict_requests
        self._pending.setdefault(request_id, deque()).append((method, found if park else []))
        self._pending_order.append(request_id)
        while len(self._pending_order) > _MAX_PENDING:
            evicted = self._take(self._pending_order.popleft())
            if evicted is not None:
                self.violations.extend(evicted[1])  # never answered: counted after all
        return park

    def _expected_type(self, method: str) -> str | None:
        return self.bundle.result_type_of.get(method) or _simulator_result_types().get(method)

    def _take(
        self, request_id: str, answered: str | None = None
    ) -> tuple[str, list[Violation]] | None:
        """The oldest request waiting under ``request_id``. Ids repeat across connections
        (Herdr's CLI sends ``agent.start`` and its ``agent.get`` polls under one id, and
        clients run side by side), and their answers can come in another order: a success
        whose result type (``answered``) fits one of the waiting methods takes that one."""
        queue = self._pending.get(request_id)
        if not queue:
            return None
        index = 0
        if answered is not None and len(queue) > 1:
            fitting = (i for i, (m, _) in enumerate(queue) if self._expected_type(m) == answered)
            index = next(fitting, 0)
        entry = queue[index]
        del queue[index]
        if not queue:
            del self._pending[request_id]
        return entry

    def _pair(
        self, response_id: str, answered: str | None = None
    ) -> tuple[str, list[Violation]] | None:
        if response_id in self._pending:
            return self._take(response_id, answered)
        # Herdr answers an events.subscribe probe under a derived id (`ID:sub:0:probe`).
        prefixes = [rid for rid in self._pending if rid and response_id.startswith(rid + ":")]
        return self._take(max(prefixes, key=len)) if prefixes else None

    @contextmanager
    def attached(self) -> Iterator[Self]:
        """Observe every in-process simulator's wire while the block runs."""
        from herdr_sim.server import WIRE_TAPS

        WIRE_TAPS.append(self)
        try:
            yield self
        finally:
            WIRE_TAPS.remove(self)

    def follow_wire_log(
        self, path: str | os.PathLike[str], *, skip_pids: Container[int] = ()
    ) -> int:
        """Observe the lines a subprocess simulator appended to its ``$HERDR_SIM_WIRE_LOG``
        since the last call; returns how many it observed. A missing file reads as empty; a
        partial last line waits for the next call. ``skip_pids``: servers whose lines were
        seen already (``skip_pids={os.getpid()}`` when in-process simulators are tapped too
        and share the log)."""
        key = os.fspath(path)
        offset = self._log_offsets.get(key, 0)
        try:
            with Path(key).open("rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except FileNotFoundError:
            return 0
        complete = data.rfind(b"\n") + 1
        self._log_offsets[key] = offset + complete
        count = 0
        for raw in data[:complete].splitlines():
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
                kind, line = entry["kind"], entry["line"]
            except (ValueError, KeyError, TypeError):
                continue  # not a wire-log entry
            if entry.get("pid") in skip_pids:
                continue
            self.observe(str(kind), line)
            count += 1
        return count

    # -- reports ------------------------------------------------------------------------------

    def coverage_json(self) -> dict[str, Any]:
        """Coverage and violations as JSON-ready data."""
        bundle = self.bundle
        with self._lock:
            cov = self.coverage
            return {
                "schema": {"source": bundle.source, "protocol": bundle.protocol},
                "lines": dict(cov.lines),
                "methods": {
                    "exercised": dict(sorted(cov.methods.items())),
                    "known": len(bundle.methods),
                    "covered": len(set(cov.methods) & set(bundle.methods)),
                    "never": [name for name in bundle.methods if name not in cov.methods],
                    "unknown": sorted(set(cov.methods) - set(bundle.methods)),
                },
                "result_types": {
                    "answered": dict(sorted(cov.result_types.items())),
                    "known": len(bundle.result_types),
                    "covered": len(set(cov.result_types) & set(bundle.result_types)),
                    "never": [name for name in bundle.result_types if name not in cov.result_types],
                },
                "error_codes": dict(sorted(cov.error_codes.items())),
                "event_kinds": {
                    "seen": dict(sorted(cov.event_kinds.items())),
                    "known": len(bundle.event_kinds),
                    "covered": len(set(cov.event_kinds) & set(bundle.event_kinds)),
                },
                "violations": [violation.as_json() for violation in self.violations],
            }

    def coverage_summary(self) -> str:
        """Readable coverage for the end of a session."""
        bundle = self.bundle
        with self._lock:
            cov = self.coverage
            never = [name for name in bundle.methods if name not in cov.methods]
            lines = [
                f"herdr contract checks against {bundle.source} (protocol {bundle.protocol})",
                (
                    f"lines checked: {cov.lines['request']} requests, "
                    f"{cov.lines['response']} responses, {cov.lines['event']} events; "
                    f"violations: {len(self.violations)}"
                ),
                (
                    f"methods exercised: {_fraction(cov.methods, bundle.methods)}: "
                    f"{_counts(cov.methods)}"
                ),
                f"methods never exercised: {_names(never)}",
                (
                    f"result types: {_fraction(cov.result_types, bundle.result_types)}: "
                    f"{_counts(cov.result_types)}"
                ),
                f"error codes: {_counts(cov.error_codes)}",
            ]
            if bundle.event_kinds:
                lines.append(
                    f"event kinds: {_fraction(cov.event_kinds, bundle.event_kinds)}: "
                    f"{_counts(cov.event_kinds)}"
                )
            else:
                lines.append(f"event kinds: {_counts(cov.event_kinds)}")
            missing = [
                part
                for part in ("success_response", "error_response", "event")
                if not bundle.has(part)
            ]
            if missing:
                lines.append(
                    f"note: this schema has no {', '.join(missing)} part: those lines were "
                    "checked for their envelope only"
                )
            return "\n".join(lines)
