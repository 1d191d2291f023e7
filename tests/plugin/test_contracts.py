"""pytest_herdr.contracts: schema checks of wire lines, coverage, and where lines come from
(the simulator's wire tap, its wire log, a recording client, a binary's schema)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import RequestFailed, call
from herdr_sim.server import WIRE_TAPS
from pytest_herdr import WireClient
from pytest_herdr.contracts import ContractChecker
from tests.contract.helpers import Api
from tests.contract_check import published_bundle
from tests.waits import SCALE

PONG: dict[str, Any] = {
    "id": "x",
    "result": {"type": "pong", "version": "0.9.2", "protocol": 22, "capabilities": None},
}


@pytest.fixture
def published() -> ContractChecker:
    """A checker against Herdr's published protocol-22 schema."""
    return ContractChecker(published_bundle())


@pytest.fixture
def tapped(sim: Simulator, published: ContractChecker) -> Iterator[ContractChecker]:
    """The published checker on the in-process simulator's wire tap."""
    with published.attached():
        yield published


def test_a_valid_response_has_no_violations(published: ContractChecker) -> None:
    assert published.check_response(PONG, method="ping") == []


def test_a_corrupted_response_is_a_violation_at_its_field(published: ContractChecker) -> None:
    corrupted = {**PONG, "result": {**PONG["result"], "protocol": "22"}}
    (problem,) = published.check_response(corrupted)
    assert (problem.kind, problem.part) == ("response", "success_response")
    assert problem.location == ("result", "protocol")
    assert "'22' is not of type 'integer'" in problem.message


def test_a_result_type_foreign_to_the_method_is_a_violation(published: ContractChecker) -> None:
    (problem,) = published.check_response({"id": "x", "result": {"type": "ok"}}, method="ping")
    assert problem.message == "ping answers result type 'pong', got 'ok'"


def test_an_unknown_result_type_is_a_violation(published: ContractChecker) -> None:
    assert published.check_response({"id": "x", "result": {"type": "nope"}}) != []


def test_a_request_with_a_mistyped_param_is_a_violation(published: ContractChecker) -> None:
    line = {"id": "a", "method": "pane.get", "params": {"pane_id": 5}}
    (problem,) = published.check_request(line)
    assert (problem.method, problem.location) == ("pane.get", ("params", "pane_id"))


def test_a_request_without_params_or_id_is_an_envelope_violation(
    published: ContractChecker,
) -> None:
    (no_params,) = published.check_request({"id": "a", "method": "ping"})
    (no_id,) = published.check_request({"method": "ping", "params": {}})
    assert (no_params.part, no_params.location) == ("envelope", ("params",))
    assert (no_id.part, no_id.location) == ("envelope", ("id",))


def test_an_unknown_method_is_a_violation(published: ContractChecker) -> None:
    (problem,) = published.check_request({"id": "a", "method": "pane.explode", "params": {}})
    assert problem.message == "unknown method 'pane.explode'"


def test_an_event_missing_its_payload_is_a_violation(published: ContractChecker) -> None:
    line = {"event": "pane_created", "data": {"type": "pane_created"}}
    assert published.check_event(line) != []
    assert published.check_event({"id": "e", **line})[0].message == "pushed events carry no `id`"


def test_the_default_schema_is_the_simulators_own(sim: Simulator) -> None:
    checker = ContractChecker()
    assert checker.bundle.protocol == 22
    assert len(checker.bundle.methods) == 102
    # protocol methods the simulator does not implement are valid requests all the same
    assert checker.check_request({"id": "a", "method": "plugin.list", "params": {}}) == []
    assert checker.check_request({"id": "a", "method": "pane.get", "params": {}}) != []
    # its bundle has no response part: responses get the envelope and result-type checks
    assert checker.check_response(PONG, method="ping") == []
    assert checker.check_response({"id": "x", "result": {}}) != []
    assert checker.check_response({"id": "x", "result": {"type": "ok"}}, method="ping") != []


def test_the_simulator_taps_requests_before_their_responses(sim: Simulator, api: Api) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    WIRE_TAPS.append(lambda kind, line: seen.append((kind, line)))
    try:
        api("ping")
    finally:
        WIRE_TAPS.pop()
    assert [kind for kind, _ in seen] == ["request", "response"]
    assert seen[0][1]["method"] == "ping"
    assert seen[0][1]["params"] == {}


def test_a_line_that_does_not_parse_is_no_request(sim: Simulator) -> None:
    seen: list[str] = []
    WIRE_TAPS.append(lambda kind, line: seen.append(kind))
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(sim.socket_path))
            sock.sendall(b'{"id":"a","method":"ping"\n')
            assert b"invalid_request" in sock.recv(65536)
    finally:
        WIRE_TAPS.pop()
    assert seen == ["response"]


def test_coverage_counts_methods_result_types_errors_and_events(
    tapped: ContractChecker, api: Api, sim: Simulator
) -> None:
    api("ping")
    api("ping")
    with pytest.raises(RequestFailed):
        api("pane.get", pane_id="w9:p9")
    api("workspace.create", cwd="/tmp")
    sim.check()
    coverage = tapped.coverage
    assert coverage.methods == {"ping": 2, "pane.get": 1, "workspace.create": 1}
    assert coverage.result_types == {"pong": 2, "workspace_created": 1}
    assert coverage.error_codes == {"pane_not_found": 1}
    assert tapped.violations == []


def test_coverage_summary_reads_methods_exercised_out_of_the_schemas(
    tapped: ContractChecker, api: Api
) -> None:
    api("ping")
    summary = tapped.coverage_summary()
    assert "methods exercised: 1/102 (1%): ping ×1" in summary
    assert "result types: 1/64 (2%): pong ×1" in summary
    assert "violations: 0" in summary
    data = tapped.coverage_json()
    assert data["methods"]["covered"] == 1
    assert data["methods"]["known"] == 102
    assert "pane.read" in data["methods"]["never"]
    json.dumps(data)  # JSON-ready


def test_events_are_counted_by_kind(tapped: ContractChecker, api: Api, sim: Simulator) -> None:
    client = WireClient(sim.socket_path)
    with client.subscribe({"type": "workspace.created"}) as sub:
        api("workspace.create", cwd="/tmp")
        assert sub.next(timeout=5)["event"] == "workspace_created"
    assert tapped.coverage.event_kinds["workspace_created"] == 1
    assert tapped.coverage.result_types["subscription_started"] == 1


def test_a_response_is_paired_with_its_request_by_id(published: ContractChecker) -> None:
    published.observe("request", {"id": "q", "method": "ping", "params": {}})
    (problem,) = published.observe("response", {"id": "q", "result": {"type": "ok"}})
    assert problem.method == "ping"
    assert published.violations == [problem]


def test_answers_under_one_id_are_paired_by_their_result_type(
    published: ContractChecker,
) -> None:
    # Herdr's CLI sends agent.start and its agent.get polls under one id; two starts side by
    # side (two connections) can be answered in another order than they were asked
    rid = "cli:agent:start"
    agent = {"pane_id": "w1:p2", "agent_status": "idle"}
    start = {"id": rid, "method": "agent.start", "params": {"name": "a", "kind": "pi"}}
    published.observe("request", start)
    published.observe("request", {"id": rid, "method": "agent.get", "params": {"target": "b"}})
    info = {"type": "agent_info", "agent": agent}
    published.observe("response", {"id": rid, "result": info})
    started = {"type": "agent_started", "agent": agent}
    published.observe("response", {"id": rid, "result": started})
    wrong_type = [v for v in published.violations if "answers result type" in v.message]
    assert wrong_type == [], wrong_type


def test_the_wire_log_of_a_server_is_checked(
    short_dir: Path, contract_checked: Path, published: ContractChecker
) -> None:
    # The suite points $HERDR_SIM_WIRE_LOG at `contract_checked`'s file: a subprocess
    # `herdr-sim serve` appends the lines the in-process tap would have shown.
    socket_path = short_dir / "serve.sock"
    env = dict(os.environ, HOME=str(short_dir), HERDR_SIM_CONFIG_DIR=str(short_dir / "cfg"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "herdr_sim", "serve", "--socket", str(socket_path)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert "listening on" in proc.stderr.readline()
        call(socket_path, "ping", {})
    finally:
        proc.terminate()
        assert proc.wait(15 * SCALE) == 0
        if proc.stderr is not None:
            proc.stderr.close()
    assert published.follow_wire_log(contract_checked) == 2
    assert published.coverage.methods == {"ping": 1}
    assert published.follow_wire_log(contract_checked) == 0  # only new lines
    assert published.follow_wire_log(contract_checked, skip_pids={proc.pid}) == 0


def test_an_in_process_server_writes_no_wire_log(
    api: Api, contract_checked: Path, published: ContractChecker
) -> None:
    # its lines reach the checkers through the wire tap; a file would only repeat them
    api("ping")
    assert published.follow_wire_log(contract_checked) == 0
    assert not contract_checked.exists()


def test_a_corrupted_wire_log_line_is_a_violation(
    tmp_path: Path, published: ContractChecker
) -> None:
    log = tmp_path / "wire.jsonl"
    bad = {"id": "x", "result": {"type": "pong", "version": "0.9.2"}}
    log.write_text(json.dumps({"kind": "response", "line": bad, "pid": 1}) + "\n{partial")
    assert published.follow_wire_log(log) == 1
    assert "'protocol' is a required property" in published.violations[0].message
    with log.open("a") as handle:
        handle.write("\n")  # the partial line completes: not an entry, skipped
    assert published.follow_wire_log(log) == 0
    assert published.follow_wire_log(tmp_path / "missing.jsonl") == 0


def test_from_binary_reads_herdr_api_schema_json(sim: Simulator) -> None:
    checker = ContractChecker.from_binary(sim.cli_path)
    assert checker.bundle.source == f"{sim.cli_path} api schema --json"
    assert checker.bundle.protocol == 22
    assert set(checker.bundle.methods) == set(published_bundle().methods)
    assert checker.check_request({"id": "a", "method": "pane.get", "params": {}}) != []


def test_from_binary_says_why_a_binary_gave_no_schema(tmp_path: Path) -> None:
    fake = tmp_path / "herdr"
    fake.write_text("#!/bin/sh\necho boom >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(RuntimeError, match=r"exited 3: boom"):
        ContractChecker.from_binary(fake)


def test_a_client_with_the_checker_as_observer_checks_what_it_sends_and_gets(
    sim: Simulator, published: ContractChecker
) -> None:
    lines: list[tuple[str, str]] = []
    client = WireClient(
        sim.socket_path,
        observers=[published, lambda kind, line: lines.append((kind, str(line)))],
    )
    assert client.call("ping")["type"] == "pong"
    with pytest.raises(RequestFailed) as failed:
        client.call("pane.get", pane_id="w9:p9")
    assert failed.value.code == "pane_not_found"
    assert [kind for kind, _ in lines] == ["request", "response", "request", "response"]
    assert published.coverage.methods == {"ping": 1, "pane.get": 1}
    assert published.coverage.error_codes == {"pane_not_found": 1}


def test_a_client_observer_reports_a_server_answer_that_breaks_the_schema(
    short_dir: Path, published: ContractChecker
) -> None:
    # A stand-in server answering one malformed line: what a real Herdr's bug would look like.
    path = short_dir / "bad.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    try:

        def answer() -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b'{"id":"r","result":{"type":"pong","version":7,"protocol":22}}\n')

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        WireClient(path, observers=[published], timeout=5).request("ping", request_id="r")
        thread.join(5)
    finally:
        server.close()
    (problem,) = published.violations
    assert (problem.method, problem.location) == ("ping", ("result", "version"))


def test_a_forbidden_request_the_server_rejects_is_filed_as_rejected(
    published: ContractChecker,
) -> None:
    bad = {
        "id": "m",
        "method": "pane.report_metadata",
        "params": {"pane_id": "w1:p1", "source": "s", "ttl_ms": 0},
    }
    assert published.observe("request", bad) != []
    assert published.unanswered != []
    published.observe(
        "response", {"id": "m", "error": {"code": "invalid_metadata_ttl", "message": "x"}}
    )
    assert published.violations == []
    assert [problem.location for problem in published.rejected] == [("params", "ttl_ms")]
    assert published.unanswered == []


def test_a_forbidden_request_the_server_accepts_is_a_violation(
    published: ContractChecker,
) -> None:
    published.observe("request", {"id": "m", "method": "pane.get", "params": {"pane_id": 1}})
    published.observe("response", {"id": "m", "result": {"type": "pane_info", "pane": {}}})
    assert ("params", "pane_id") in [problem.location for problem in published.violations]
    assert published.rejected == []


def test_a_strict_checker_counts_every_forbidden_request(published: ContractChecker) -> None:
    strict = ContractChecker(published.bundle, strict_requests=True)
    strict.observe("request", {"id": "m", "method": "pane.get", "params": {"pane_id": 1}})
    assert len(strict.violations) == 1
