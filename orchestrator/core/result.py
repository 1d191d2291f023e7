"""The result contract every tool returns (seed 001, 通用规则).

Always: ``ok`` (bool), ``command`` (str), ``exitCode`` (int, or None when no Herdr command
ran: a preview, a refused preview-less R2 call, invalid arguments). As needed: ``errorCode``
(Herdr's error code, or one of this layer's: ``invalid_arguments``, ``preview_required``,
``transport_error``, ``unknown_tool``, ``internal_error``, and the configuration gates'
``disabled``, ``cwd_not_found``, ``cwd_not_allowed``, ``cwd_unknown``, ``config_invalid``),
``data`` (the parsed result; on a
Herdr failure the parsed stderr envelope, so ``data.error.code`` reads as the seed promises),
``stdout`` (reads: the pane text, sent once: ``data.read`` keeps the read's other fields
but not the text) and ``stderr`` (the CLI's error line).

``command`` is the CLI form of what ran (``herdr pane split w1:p1 --direction right
--no-focus``), whichever transport ran it, with payloads redacted: the text of
``pane run`` / ``pane send-text``, prompts, native agent args and ``--env`` values are replaced
by ``<redacted: N chars>``. Reports and logs may then copy ``command`` freely (seed 001,
错误处理 rule 6).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from orchestrator.client.errors import TransportError
from orchestrator.client.transports import Exchange


def redacted(value: str) -> str:
    """The placeholder standing for a payload in ``command`` and previews."""
    return f"<redacted: {len(value)} chars>"


#: Values shorter than this are flags or ordinary words (``-p``, ``high``, ``openai``), not
#: credentials: replacing every occurrence of them would corrupt the text they appear in.
MIN_SECRET_CHARS = 8
#: A native argument that is a flag: ``-x``, ``--flag``, ``--flag=value``.
_FLAG = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9_.-]*(=.*)?", re.DOTALL)


def secret_parts(secrets: Iterable[str]) -> list[str]:
    """What of each secret (a native agent arg, a payload) is hidden in free text — the one
    redaction rule of both tool families.

    A flag's name is not a secret (``--api-key`` stays readable); the value of a
    ``--flag=value`` is, and so is every other argument (``sk-…`` after ``--api-key``), when
    it has at least :data:`MIN_SECRET_CHARS` characters. Longest first, so a secret holding
    another is replaced whole.
    """
    parts: set[str] = set()
    for secret in secrets:
        flag = _FLAG.fullmatch(secret)
        value = (flag.group(1) or "=")[1:] if flag else secret
        if len(value) >= MIN_SECRET_CHARS:
            parts.add(value)
    return sorted(parts, key=len, reverse=True)


def command_text(argv: Sequence[str], secrets: Iterable[str] = ()) -> str:
    """``argv`` as one shell-quoted line, every secret element (or element holding a secret's
    part, :func:`secret_parts`) and ``--env`` value redacted."""
    given = list(secrets)
    hidden = {s for s in given if s}
    parts_hidden = secret_parts(given)
    parts: list[str] = []
    after_env = False
    for arg in argv:
        if after_env and "=" in arg:
            key, _, value = arg.partition("=")
            parts.append(shlex.quote(f"{key}={redacted(value)}"))
        elif arg in hidden or any(part in arg for part in parts_hidden):
            parts.append(shlex.quote(redacted(arg)))
        else:
            parts.append(shlex.quote(arg))
        after_env = arg == "--env"
    return " ".join(parts)


def failure(
    command: str,
    error_code: str,
    message: str,
    *,
    exit_code: int | None = None,
    data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A failure produced by this layer (no Herdr answer to report)."""
    payload: dict[str, Any] = {"error": {"code": error_code, "message": message}}
    if data:
        payload.update(data)
    return {
        "ok": False,
        "command": command,
        "exitCode": exit_code,
        "errorCode": error_code,
        "data": payload,
        "stderr": message,
    }


def from_exchange(
    exchange: Exchange, secrets: Iterable[str] = (), *, text_output: bool = False
) -> dict[str, Any]:
    """The tool result for one exchange (success or Herdr's refusal)."""
    command = command_text(exchange.argv, secrets)
    if exchange.error is not None:
        code = str(exchange.error.get("code", "cli_error"))
        result: dict[str, Any] = {
            "ok": False,
            "command": command,
            "exitCode": exchange.exit_code,
            "errorCode": code,
            "data": _error_data(exchange.error),
            "stderr": redact_text(exchange.stderr, secrets),
            "transport": exchange.transport,
        }
        return result
    result = {
        "ok": True,
        "command": command,
        "exitCode": exchange.exit_code,
        "transport": exchange.transport,
    }
    if text_output:
        result["stdout"] = exchange.stdout
    if exchange.result is not None:
        result["data"] = _without_read_text(exchange.result) if text_output else exchange.result
    return result


def _without_read_text(data: Mapping[str, Any]) -> dict[str, Any]:
    """A read's ``data`` without ``read.text``: the text is in ``stdout`` already.

    A pane or agent read can be thousands of lines; shipping it twice (``stdout`` and
    ``data.read.text``) doubled what a model pays for every read. ``stdout`` is where seed 001
    puts a read's text, so the copy inside ``data`` goes; the rest of ``read`` (source,
    truncated, revision, …) stays.
    """
    read = data.get("read")
    if not isinstance(read, Mapping) or "text" not in read:
        return dict(data)
    return {**data, "read": {k: v for k, v in read.items() if k != "text"}}


def from_transport_error(
    argv: Sequence[str], exc: TransportError, secrets: Iterable[str] = ()
) -> dict[str, Any]:
    """An I/O failure: reported once, with whether the operation may have run anyway."""
    hint = (
        "the request may have been applied: check with a read before repeating it"
        if exc.maybe_applied
        else "the request was not sent"
    )
    return failure(
        command_text(argv, secrets),
        "transport_error",
        f"{exc.message} ({hint})",
        data={"maybeApplied": exc.maybe_applied},
    )


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret's part (:func:`secret_parts`: native
    agent args, payloads) replaced by :func:`redacted`."""
    for part in secret_parts(secrets):
        text = text.replace(part, redacted(part))
    return text


def _error_data(error: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` for a refusal: the error object, and ``maybeApplied`` for an I/O failure."""
    data: dict[str, Any] = {"error": {k: v for k, v in error.items() if k != "maybeApplied"}}
    if "maybeApplied" in error:
        data["maybeApplied"] = error["maybeApplied"]
    return data
