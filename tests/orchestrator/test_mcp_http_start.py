"""What ``herdr-orchestrator mcp --http`` refuses before anything listens (issue 18): a
non-loopback bind without TLS and a token, a token file that is not a private file of ours, an
empty token, half a TLS configuration or a key that is not the certificate's; and that a token
taken from the environment leaves it, so no child process inherits it."""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.cli import _parsers, main
from orchestrator.mcp_http.settings import (
    ENV_TOKEN,
    HttpSettings,
    SettingsError,
    is_loopback,
    parse_bind,
    settings_from_args,
)
from tests.orchestrator.http_support import Certs, make_certs, write_token
from tests.waits import SCALE


def mcp_args(*argv: str) -> argparse.Namespace:
    return _parsers()[0].parse_args(["mcp", *argv])


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("tls"), "localhost", "myhost.example")


def tls(certs: Certs) -> list[str]:
    return ["--tls-cert", str(certs.cert), "--tls-key", str(certs.key)]


@pytest.mark.parametrize(
    ("text", "bind"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("[::1]:0", ("::1", 0)),
        ("localhost:1", ("localhost", 1)),
    ],
)
def test_parse_bind(text: str, bind: tuple[str, int]) -> None:
    assert parse_bind(text) == bind


@pytest.mark.parametrize("text", ["8765", "::1:80", "host:99999", "host:", ":80", "[::1:80"])
def test_parse_bind_refuses(text: str) -> None:
    with pytest.raises(SettingsError):
        parse_bind(text)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.4.5.6", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.com", False),
        ("localhost.example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "[::]", "myhost.example"])
def test_a_non_loopback_bind_needs_tls_and_a_token(host: str, certs: Certs, tmp_path: Path) -> None:
    token = str(write_token(tmp_path / "token", "t0k"))
    bind = f"{host}:8765"
    for argv in ([], tls(certs), ["--token-file", token]):
        with pytest.raises(SettingsError, match="not a loopback address, without TLS and a token"):
            settings_from_args(mcp_args("--http", bind, *argv), environ={})
    settings = settings_from_args(
        mcp_args("--http", bind, *tls(certs), "--token-file", token), environ={}
    )
    assert settings.token == "t0k" and settings.scheme == "https"
    assert "t0k" not in repr(settings)  # the token never reaches a log through a repr


def test_the_cli_refuses_at_start_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["mcp", "--http", "0.0.0.0:0"])
    assert exited.value.code == 2
    assert "not a loopback address" in capsys.readouterr().err


def _refusal(tmp_path: Path, token_file: Path) -> str:
    args = mcp_args("--http", "127.0.0.1:0", "--token-file", str(token_file))
    with pytest.raises(SettingsError) as refused:
        settings_from_args(args, environ={})
    return str(refused.value)


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    for mode in (0o644, 0o640, 0o604, 0o660):
        path = write_token(tmp_path / f"token-{mode:o}", "secret-value", mode)
        message = _refusal(tmp_path, path)
        assert "chmod 600" in message and "secret-value" not in message


def test_a_token_file_that_is_a_link_a_fifo_missing_or_empty_is_refused(tmp_path: Path) -> None:
    target = write_token(tmp_path / "real", "secret-value")
    (tmp_path / "link").symlink_to(target)
    assert "symbolic link" in _refusal(tmp_path, tmp_path / "link")
    os.mkfifo(tmp_path / "fifo", 0o600)
    assert "not a regular file" in _refusal(tmp_path, tmp_path / "fifo")  # and no hang
    assert "No such file" in _refusal(tmp_path, tmp_path / "missing")
    assert "empty" in _refusal(tmp_path, write_token(tmp_path / "empty", "  "))
    assert "one word" in _refusal(tmp_path, write_token(tmp_path / "two", "a b"))


def test_a_token_from_the_environment_leaves_it() -> None:
    environ = {ENV_TOKEN: " from-env \n", "OTHER": "x"}
    settings = settings_from_args(mcp_args("--http", "127.0.0.1:0"), environ=environ)
    assert settings.token == "from-env"
    assert environ == {"OTHER": "x"}  # nothing started later inherits it
    with pytest.raises(SettingsError, match="empty"):
        settings_from_args(mcp_args("--http", "127.0.0.1:0"), environ={ENV_TOKEN: ""})


def test_a_token_file_wins_and_the_environment_token_still_leaves(tmp_path: Path) -> None:
    environ = {ENV_TOKEN: "from-env"}
    token = write_token(tmp_path / "token", "from-file")
    args = mcp_args("--http", "127.0.0.1:0", "--token-file", str(token))
    assert settings_from_args(args, environ=environ).token == "from-file"
    assert environ == {}


def test_tls_needs_a_certificate_and_its_own_key(certs: Certs, tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="both"):
        settings_from_args(mcp_args("--http", "127.0.0.1:0", "--tls-cert", str(certs.cert)), {})
    other = make_certs(tmp_path, "localhost")
    mixed = ["--tls-cert", str(certs.cert), "--tls-key", str(other.key)]
    with pytest.raises(SettingsError, match="cannot load"):
        settings_from_args(mcp_args("--http", "127.0.0.1:0", *mixed), {})
    missing = ["--tls-cert", str(tmp_path / "nope.pem"), "--tls-key", str(certs.key)]
    with pytest.raises(SettingsError, match="cannot load"):
        settings_from_args(mcp_args("--http", "127.0.0.1:0", *missing), {})


@pytest.mark.parametrize(
    "argv",
    [
        ["--max-body-bytes", "0"],
        ["--max-connections", "0"],
        ["--body-timeout", "0"],
        ["--max-sockets", "0"],
        ["--head-timeout", "0"],
        ["--head-timeout", "nan"],
        ["--allow-origin", "evil.example"],
        ["--allow-origin", "https://a.example/path"],
    ],
)
def test_bad_limits_and_origins_are_refused(argv: list[str]) -> None:
    with pytest.raises(SettingsError):
        settings_from_args(mcp_args("--http", "127.0.0.1:0", *argv), {})


def test_the_url_names_the_bound_port() -> None:
    assert HttpSettings(host="::1", port=0).url(4321) == "http://[::1]:4321/mcp"


def test_accepted_connections_have_nagle_off() -> None:
    """The listener names ``IPPROTO_TCP``, so asyncio sets ``TCP_NODELAY`` on every accepted
    connection; with Nagle on, each small TLS record waited for the client's delayed ACK
    (a call took about 50 ms instead of 6 in bench/mcp_http.py)."""
    from orchestrator.mcp_http.serve import bind

    listener = bind(HttpSettings(host="127.0.0.1", port=0))
    nodelay: list[int] = []

    async def accept_one() -> None:
        accepted = asyncio.Event()

        async def on_connect(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            nodelay.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()
            accepted.set()

        server = await asyncio.start_server(on_connect, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection(*listener.getsockname())
            await asyncio.wait_for(accepted.wait(), 5 * SCALE)
            writer.close()

    asyncio.run(accept_one())
    assert nodelay == [1]


def test_parsing_the_command_line_loads_no_web_stack_and_no_sdk() -> None:
    """``tools`` and ``call`` start fast: building the parser (with the ``mcp --http`` and
    ``check`` options) imports neither the MCP SDK nor uvicorn, starlette or ssl."""
    code = (
        "import sys, orchestrator.cli\n"
        "orchestrator.cli._parsers()\n"
        "heavy = ('mcp', 'mcp_types', 'uvicorn', 'starlette', 'httpx2', 'ssl')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_an_address_in_use_fails_the_start_with_its_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["mcp", "--http", f"127.0.0.1:{port}"]) == 1
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in capsys.readouterr().err
