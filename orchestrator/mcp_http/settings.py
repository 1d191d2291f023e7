"""The options of ``herdr-orchestrator mcp --http`` and what is refused before we listen.

Why each start-up refusal exists:

* **A non-loopback bind needs TLS and a token.** Anyone who can reach the port can run
  commands and agents (R2 tools) as this user; without a token that is everyone on the
  network, and without TLS the token and every prompt cross the network in clear.
* **The token file must be ours and private** (a regular file, not a link, owned by this user,
  no group or other permission bits): a token another user can read or plant is no secret.
  A file is preferred to the environment, which every child process inherits and ``ps e`` may
  show; a token taken from :data:`ENV_TOKEN` is removed from this process's environment at once,
  so no ``herdr``, git or agent process started later inherits it.
* **An empty token is refused**: comparing against an empty secret would admit anyone who
  sends ``Authorization: Bearer`` with nothing after it.
* **The certificate and key are loaded now** (both or neither), so a wrong path or a key that
  does not match its certificate fails the start with its reason, not the first client.

This module imports nothing beyond the standard library: the CLI parses and checks the options
without loading the web stack.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import stat
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.client.file_trust.ownership import (
    FOREIGN_OWNER,
    OTHERS_ANY,
    WRITABLE,
    open_own_file,
)

if TYPE_CHECKING:
    import ssl

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_HEAD_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_SOCKETS",
    "ENV_TOKEN",
    "MCP_PATH",
    "HttpSettings",
    "SettingsError",
    "add_arguments",
    "is_loopback",
    "parse_bind",
    "read_token_file",
    "settings_from_args",
    "token_from_env",
]

#: The environment variable a token may come from when no ``--token-file`` is given.
ENV_TOKEN = "HERDR_ORCHESTRATOR_HTTP_TOKEN"
#: The one path the MCP endpoint is served on.
MCP_PATH = "/mcp"
#: A request body larger than this is refused (413). Tool calls are small; the largest
#: legitimate one is a prompt or a text to type, far below a MiB.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: Seconds a client has to send a whole request body; a slower one is refused (408).
DEFAULT_BODY_TIMEOUT = 10.0
#: HTTP requests served at once (an open event stream counts); more are refused (503).
DEFAULT_MAX_CONNECTIONS = 128
#: Seconds a new connection (or a kept-alive one that starts its next request) has to finish
#: its TLS handshake and then its request head; a slower one is closed unanswered.
DEFAULT_HEAD_TIMEOUT = 10.0
#: Sockets held open at once, counted from the accept (before TLS, before any header).
DEFAULT_MAX_SOCKETS = 256
#: The longest token file read (a token is a line; anything bigger is not one).
_MAX_TOKEN_FILE = 4096


class SettingsError(ValueError):
    """Options that are refused before anything listens; the message says why and what to do."""


@dataclass(frozen=True)
class HttpSettings:
    """Everything the HTTP transport needs; built by :func:`settings_from_args`."""

    host: str
    port: int
    token: str | None = field(default=None, repr=False)
    tls_cert: Path | None = None
    tls_key: Path | None = None
    allowed_origins: tuple[str, ...] = ()
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    head_timeout: float = DEFAULT_HEAD_TIMEOUT
    max_sockets: int = DEFAULT_MAX_SOCKETS

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert is not None else "http"

    def url(self, port: int | None = None) -> str:
        """The endpoint's URL (``port``: the one actually bound, when 0 was asked for)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port if port is None else port}{MCP_PATH}"

    def ssl_context(self) -> ssl.SSLContext | None:
        """The server's TLS context (TLS 1.2 at least), or None without TLS."""
        if self.tls_cert is None or self.tls_key is None:
            return None
        import ssl  # here, not at the top: the CLI parses its options without loading ssl

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.tls_cert, self.tls_key)
        return context


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def parse_bind(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6) as ``(host, port)``; port 0 picks a free one."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise SettingsError(f"--http wants HOST:PORT (e.g. 127.0.0.1:8765), not {text!r}")
    port = int(port_text)
    if port > 65535:
        raise SettingsError(f"--http port {port} is not a TCP port (0-65535)")
    if host.startswith("["):
        if not host.endswith("]"):
            raise SettingsError(f"--http wants [IPv6]:PORT, not {text!r}")
        host = host[1:-1]
    elif ":" in host:
        raise SettingsError(f"--http: write an IPv6 address in brackets, e.g. [::1]:{port}")
    return host, port


def read_token_file(path: Path) -> str:
    """The token in ``path``: a private regular file of ours, its content stripped, non-empty."""
    try:
        fd = open_own_file(path, _token_file_refusal(path), forbidden=OTHERS_ANY)  # a secret
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SettingsError(f"token file {path} is a symbolic link: not followed") from None
        raise SettingsError(f"token file {path}: {exc.strerror}") from None
    try:
        data = os.read(fd, _MAX_TOKEN_FILE + 1)
    finally:
        os.close(fd)
    if len(data) > _MAX_TOKEN_FILE:
        raise SettingsError(f"token file {path} is larger than {_MAX_TOKEN_FILE} bytes")
    try:
        token = data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise SettingsError(f"token file {path} is not ASCII text") from None
    _check_token(token, f"token file {path}")
    return token


def _token_file_refusal(path: Path) -> Callable[[str, os.stat_result], SettingsError]:
    def refuse(problem: str, info: os.stat_result) -> SettingsError:
        if problem == FOREIGN_OWNER:
            return SettingsError(f"token file {path} is not owned by this user")
        if problem == WRITABLE:
            return SettingsError(
                f"token file {path} can be read or written by others "
                f"(mode {stat.S_IMODE(info.st_mode):o}): chmod 600 {path}"
            )
        return SettingsError(f"token file {path} is {problem}")

    return refuse


def _check_token(token: str, source: str) -> None:
    if not token:
        raise SettingsError(f"{source} is empty: a token must not be empty")
    if any(ch.isspace() or not ch.isprintable() for ch in token):
        raise SettingsError(f"{source}: a token is one word of printable characters")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The HTTP options of ``herdr-orchestrator mcp``."""
    group = parser.add_argument_group("Streamable HTTP (instead of stdio)")
    group.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve over Streamable HTTP at http(s)://HOST:PORT/mcp instead of stdio; any "
        "HOST but loopback needs --tls-cert/--tls-key and a token",
    )
    group.add_argument(
        "--token-file",
        type=Path,
        help=f"the bearer token clients must send (a file of yours, mode 600); else ${ENV_TOKEN}",
    )
    group.add_argument("--tls-cert", type=Path, help="the server's certificate chain (PEM)")
    group.add_argument("--tls-key", type=Path, help="the certificate's private key (PEM)")
    group.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser Origin allowed to call (e.g. https://app.example:8443); repeatable. "
        "Default: loopback origins on a loopback bind, none otherwise",
    )
    group.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        help=f"largest request body accepted (default {DEFAULT_MAX_BODY_BYTES})",
    )
    group.add_argument(
        "--body-timeout",
        type=float,
        default=DEFAULT_BODY_TIMEOUT,
        help=f"seconds a client has to send a request body (default {DEFAULT_BODY_TIMEOUT:g})",
    )
    group.add_argument(
        "--max-connections",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS,
        help=f"requests served at once, streams included (default {DEFAULT_MAX_CONNECTIONS})",
    )
    group.add_argument(
        "--head-timeout",
        type=float,
        default=DEFAULT_HEAD_TIMEOUT,
        help="seconds a connection has to complete its TLS handshake and then its request "
        f"head (default {DEFAULT_HEAD_TIMEOUT:g})",
    )
    group.add_argument(
        "--max-sockets",
        type=int,
        default=DEFAULT_MAX_SOCKETS,
        help=f"client sockets held open at once, counted from the accept (default "
        f"{DEFAULT_MAX_SOCKETS})",
    )


def _origin(text: str) -> str:
    """``text`` as an exact origin (``scheme://host[:port]``, no path), lower-cased."""
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or "/" in rest:
        raise SettingsError(f"--allow-origin wants scheme://host[:port], not {text!r}")
    return f"{scheme.lower()}://{rest.lower()}"


def settings_from_args(
    args: argparse.Namespace, environ: MutableMapping[str, str] | None = None
) -> HttpSettings:
    """The settings ``args`` ask for, refused (:class:`SettingsError`) when unsafe or wrong.

    A token read from :data:`ENV_TOKEN` is removed from ``environ`` (default ``os.environ``).
    """
    env: MutableMapping[str, str] = os.environ if environ is None else environ
    host, port = parse_bind(args.http)
    token: str | None
    if args.token_file is not None:
        token = read_token_file(args.token_file)
        env.pop(ENV_TOKEN, None)
    elif ENV_TOKEN in env:
        token = env.pop(ENV_TOKEN).strip()
        _check_token(token, f"${ENV_TOKEN}")
    else:
        token = None
    if (args.tls_cert is None) != (args.tls_key is None):
        raise SettingsError("TLS needs both --tls-cert and --tls-key")
    if (
        args.max_body_bytes <= 0
        or args.max_connections <= 0
        or args.max_sockets <= 0
        or not args.body_timeout > 0
        or not args.head_timeout > 0
    ):
        raise SettingsError(
            "--max-body-bytes, --max-connections, --max-sockets, --body-timeout and "
            "--head-timeout must be positive"
        )
    settings = HttpSettings(
        host=host,
        port=port,
        token=token,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        allowed_origins=tuple(_origin(o) for o in args.allow_origin),
        max_body_bytes=args.max_body_bytes,
        body_timeout=args.body_timeout,
        max_connections=args.max_connections,
        head_timeout=args.head_timeout,
        max_sockets=args.max_sockets,
    )
    if not settings.loopback and (settings.tls_cert is None or token is None):
        raise SettingsError(
            f"refusing to serve on {host}, which is not a loopback address, without TLS and a "
            f"token: anyone who reaches it could run commands and agents. Give --tls-cert, "
            f"--tls-key and --token-file (or ${ENV_TOKEN}), or bind 127.0.0.1"
        )
    try:
        settings.ssl_context()
    except OSError as exc:  # ssl.SSLError is one
        raise SettingsError(f"cannot load --tls-cert/--tls-key: {exc}") from None
    return settings


def token_from_env(environ: Mapping[str, str]) -> str | None:
    """The token in ``environ`` (for clients such as ``check``), stripped; None when unset."""
    value = environ.get(ENV_TOKEN)
    return value.strip() if value is not None else None
