"""A request line is read as Herdr reads it (issue 13, "Request parsing, as serde does it").

Herdr trims the line with Rust's ``str::trim`` and decodes it with
``serde_json::from_str::<Request>`` (herdrdev/herdr ``src/api/server.rs``,
``handle_connection_with_stop``), answering ``invalid request: {serde_json error}``. Its
``Request`` is ``{ id: String, #[serde(flatten)] method: Method }`` and ``Method`` is
adjacently tagged (``tag = "method", content = "params"``, ``src/api/schema.rs``). So: ``id`` is
read where it stands, everything else is buffered as serde ``Content`` and decoded after the
object has been read (serde_derive ``de/struct_.rs``, ``de/enum_adjacently.rs``; serde
``private/de.rs`` ``ContentDeserializer``, ``FlatMapDeserializer``); serde_json's reader gives
the wording and the ``at line L column C`` (serde-rs/json ``src/de.rs``, ``src/read.rs``,
``src/error.rs``). The expected messages below were checked against serde_json and serde
built from their sources (one-off oracle, not part of the suite), except where a docstring
says a newer serde's code was followed.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herdr_sim import Simulator
from herdr_sim import server as herdr_server
from herdr_sim.methods import load_all
from herdr_sim.registry import PROTOCOL_22_METHODS
from herdr_sim.server import Request, RequestError, parse_request
from herdr_sim.wire import request_json
from herdr_sim.wire.request_json import RECURSION_LIMIT, rust_float, rust_trim
from herdr_sim.wire.request_shapes import SHAPES
from orchestrator.client.protocol.kinds import RUST_WHITESPACE
from tests.contract.helpers import raw_exchange
from tests.contract_check import schema_path

METHODS = load_all()


def parse(line: str) -> Request:
    """The server's reading of one line (after its trim)."""
    return parse_request(rust_trim(line), METHODS)


def refusal(line: str) -> str:
    """The serde_json error the server answers for ``line`` (without ``invalid request: ``)."""
    with pytest.raises(RequestError) as refused:
        parse(line)
    return str(refused.value)


# -- duplicate fields ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"id":"a","id":"b","method":"ping","params":{}}',
            "duplicate field `id` at line 1 column 14",
        ),
        (
            '{"id":"1","method":"ping","method":"ping","params":{}}',
            "duplicate field `method` at line 1 column 54",
        ),
        (
            '{"id":"1","params":{},"params":{},"method":"ping"}',
            "duplicate field `params` at line 1 column 50",
        ),
        (
            '{"id":"1","method":"ping","params":{},"params":{}}',
            "duplicate field `params` at line 1 column 50",
        ),
        (
            (
                '{"id":"1","method":"pane.read","params":'
                '{"pane_id":"a","pane_id":"b","source":"visible"}}'
            ),
            "duplicate field `pane_id` at line 1 column 89",
        ),
    ],
)
def test_a_repeated_field_is_a_duplicate_field(line: str, message: str) -> None:
    """serde_derive's ``visit_map`` refuses a field seen twice (``duplicate_field``); ``id`` is
    refused where the second key stands, the others once the object is read."""
    assert refusal(line) == message


def test_a_repeated_map_key_keeps_the_last_value() -> None:
    """``env`` is a ``HashMap``: serde inserts each pair, so a repeated key is no error."""
    line = '{"id":"1","method":"workspace.create","params":{"env":{"A":"1","A":"2"}}}'
    assert parse(line).params["env"] == {"A": "2"}


# -- the first error follows the input ------------------------------------------------------------


def test_the_first_bad_field_in_input_order_is_reported() -> None:
    """Fields are decoded key by key in input order (``visit_map``), so the same two mistakes
    give a different message when their keys swap places."""
    head = '{"id":"1","method":"pane.read","params":'
    source_first = refusal(head + '{"source":"bogus","pane_id":5}}')
    pane_first = refusal(head + '{"pane_id":5,"source":"bogus"}}')
    assert source_first.startswith("unknown variant `bogus`, expected one of `visible`, ")
    assert pane_first == "invalid type: integer `5`, expected a string at line 1 column 71"


def test_missing_fields_are_reported_in_declaration_order_after_the_present_ones() -> None:
    """Missing fields are checked after every present key, in the struct's declaration order
    (``PaneReadParams``: ``pane_id`` before ``source``)."""
    head = '{"id":"1","method":"pane.read","params":'
    assert refusal(head + "{}}") == "missing field `pane_id` at line 1 column 43"
    assert refusal(head + '{"source":5}}').startswith("invalid type: integer `5`")


def test_a_missing_id_is_reported_before_anything_about_the_method() -> None:
    """``id`` is extracted before the flattened ``Method`` is decoded (serde_derive's
    ``deserialize_map`` with flatten)."""
    assert refusal('{"method":"nope"}') == "missing field `id` at line 1 column 17"


def test_the_method_tag_is_read_before_the_next_key_is_looked_for() -> None:
    """``enum_adjacently.rs``: with ``method`` first, the tag is parsed before serde looks
    for ``params``."""
    assert refusal('{"id":"1","method":"nope"}').startswith(
        "unknown variant `nope`, expected one of `ping`, `server.stop`, "
    )
    assert refusal('{"id":"1","method":"ping"}') == "missing field `params` at line 1 column 26"
    assert refusal('{"id":"1","params":{}}') == "missing field `method` at line 1 column 22"


def test_the_method_list_in_an_unknown_variant_error_is_herdrs_declaration_order() -> None:
    message = refusal('{"id":"1","method":"nope","params":{}}')
    listed = message.split("expected one of ", 1)[1].rsplit(" at line", 1)[0]
    assert listed == ", ".join(f"`{name}`" for name in PROTOCOL_22_METHODS)


# -- the wording for id and params ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("5", "invalid type: integer `5`, expected a string at line 1 column 7"),
        ("-5", "invalid type: integer `-5`, expected a string at line 1 column 8"),
        ("1.5", "invalid type: floating point `1.5`, expected a string at line 1 column 9"),
        ("null", "invalid type: null, expected a string at line 1 column 10"),
        ("true", "invalid type: boolean `true`, expected a string at line 1 column 10"),
        ("false", "invalid type: boolean `false`, expected a string at line 1 column 11"),
        # the first and last digit, and serde's -0 (an f64)
        ("0", "invalid type: integer `0`, expected a string at line 1 column 7"),
        ("9", "invalid type: integer `9`, expected a string at line 1 column 7"),
        ("-0", "invalid type: floating point `-0.0`, expected a string at line 1 column 8"),
        ("[1]", "invalid type: sequence, expected a string at line 1 column 6"),
        ("{}", "invalid type: map, expected a string at line 1 column 6"),
    ],
)
def test_a_non_string_id_gets_serde_jsons_wording(value: str, message: str) -> None:
    """serde_json's ``peek_invalid_type`` with ``JsonUnexpected`` (``null``, not ``unit
    value``), positioned after the value it read (before a container it did not)."""
    assert refusal(f'{{"id":{value},"method":"ping","params":{{}}}}') == message


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("workspace.list", "null", "invalid type: null, expected struct EmptyParams"),
        ("pane.read", "null", "invalid type: null, expected struct PaneReadParams"),
        ("pane.read", "5", "invalid type: integer `5`, expected struct PaneReadParams"),
        ("pane.read", '"x"', 'invalid type: string "x", expected struct PaneReadParams'),
        ("pane.get", "true", "invalid type: boolean `true`, expected struct PaneTarget"),
    ],
)
def test_params_of_the_wrong_type_name_herdrs_struct(
    method: str, params: str, message: str
) -> None:
    """``ContentDeserializer::deserialize_struct`` refuses anything but a map or a sequence,
    naming the params struct (``src/api/schema.rs``'s variant types)."""
    line = f'{{"id":"1","method":"{method}","params":{params}}}'
    assert refusal(line) == f"{message} at line 1 column {len(line)}"


def test_null_is_absent_only_for_option_fields() -> None:
    """``#[serde(default)] focus: bool`` refuses null; ``Option<String>`` reads it as None."""
    head = '{"id":"1","method":"workspace.create","params":'
    assert refusal(head + '{"focus":null}}') == (
        "invalid type: null, expected a boolean at line 1 column 62"
    )
    assert parse(head + '{"cwd":null}}').params["cwd"] is None


def test_enum_wording_follows_serdes_one_of() -> None:
    """Two variants read "expected `a` or `b`", more "expected one of …" (serde ``OneOf``)."""
    line = '{"id":"1","method":"pane.split","params":{"direction":"up"}}'
    assert refusal(line) == "unknown variant `up`, expected `right` or `down` at line 1 column 60"


def test_strings_in_messages_are_rust_debug_strings() -> None:
    """serde's ``Unexpected::Str`` is ``{:?}``: Rust escapes, non-ASCII letters as they are."""
    line = '{"id":"1","method":"pane.read","params":{"pane_id":"x","source":"\\u00e9\\n"}}'
    assert refusal(line).startswith("unknown variant `é\n`, expected one of")
    line = '{"id":"1","method":"pane.get","params":{"pane_id":["é"]}}'
    assert refusal(line).startswith("invalid type: sequence, expected a string")
    line = '{"id":"1","method":"pane.read","params":"é\\t"}'
    assert refusal(line).startswith('invalid type: string "é\\t", expected struct')


def test_floats_in_messages_are_printed_as_serde_json_149_prints_them() -> None:
    """serde_json 1.0.149 prints floats with zmij 1.0.21 (``src/error.rs``
    ``JsonUnexpected``); integers beyond 64 bits and ``-0`` are floats to serde_json. Followed
    from that source: the oracle at hand was an older serde_json (ryu, no ``.0``)."""
    head = '{"id":"1","method":"pane.read","params":{"pane_id":"x","source":"visible","lines":'
    assert "floating point `-0.0`, expected u32" in refusal(head + "-0}}")
    assert "floating point `1e+20`, expected u32" in refusal(head + "1e20}}")
    assert "floating point `1e+20`, expected u32" in refusal(head + "99999999999999999999}}")
    assert "invalid value: integer `-1`, expected u32" in refusal(head + "-1}}")
    assert "invalid value: integer `4294967296`, expected u32" in refusal(head + "4294967296}}")


# -- the sequence form of a struct ----------------------------------------------------------------


def test_params_as_a_sequence_fill_the_struct_in_declaration_order() -> None:
    """serde_derive's ``visit_seq``: ``["w1:p1", "visible"]`` is ``pane_id`` and ``source``;
    the ``#[serde(default)]`` fields after them take their defaults."""
    request = parse('{"id":"1","method":"pane.read","params":["w1:p1","visible"]}')
    assert request.params == {
        "pane_id": "w1:p1",
        "source": "visible",
        "lines": None,
        "format": "text",
        "strip_ansi": True,
    }
    assert parse('{"id":"1","method":"workspace.list","params":[]}').params == {}
    full = parse('{"id":"1","method":"pane.read","params":["p","recent",5,"ansi",false]}')
    assert full.params == {
        "pane_id": "p",
        "source": "recent",
        "lines": 5,
        "format": "ansi",
        "strip_ansi": False,
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ('["w1:p1"]', "invalid length 1, expected struct PaneReadParams with 5 elements"),
        ("[]", "invalid length 0, expected struct PaneReadParams with 5 elements"),
        (
            '["w1:p1","visible",5,"ansi",false,1]',
            "invalid length 6, expected 5 elements in sequence",
        ),
        ('[5,"bogus"]', "invalid type: integer `5`, expected a string"),
    ],
)
def test_a_sequence_of_the_wrong_length_is_refused_like_serde(params: str, message: str) -> None:
    line = f'{{"id":"1","method":"pane.read","params":{params}}}'
    assert refusal(line) == f"{message} at line 1 column {len(line)}"


def test_a_sequence_for_an_empty_struct_must_be_empty() -> None:
    line = '{"id":"1","method":"ping","params":[1]}'
    assert refusal(line) == "invalid length 1, expected 0 elements in sequence at line 1 column 39"


def test_a_request_with_params_as_a_sequence_is_served(
    sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: Herdr accepts the sequence form, so the simulator answers it. (The
    protocol-22 schema says ``params`` is an object, so the suite's schema tap, which would
    count this accepted request as a violation, is kept off this one exchange.)"""
    monkeypatch.setattr(herdr_server, "WIRE_TAPS", [])
    line = b'{"id":"seq","method":"workspace.create","params":[null,false]}\n'
    reply = json.loads(raw_exchange(sim.socket_path, line))
    assert reply["id"] == "seq"
    assert reply["result"]["type"] == "workspace_created"


def test_an_integer_beyond_pythons_digit_limit_is_answered(sim: Simulator) -> None:
    """More than 4,300 digits: Python's ``int`` refuses it, serde_json reads an infinite f64
    and Herdr answers ``invalid_request`` on the same connection (never a dropped one)."""
    line = ('{"id":"big","method":"ping","params":{"x":' + "7" * 4400 + "}}\n").encode()
    reply = json.loads(raw_exchange(sim.socket_path, line))
    assert reply["error"]["code"] == "invalid_request"
    assert "number out of range" in reply["error"]["message"]


# -- trimming and nesting -------------------------------------------------------------------------


def test_the_line_is_trimmed_with_rusts_whitespace_not_pythons() -> None:
    """``str::trim`` strips Unicode ``White_Space`` (NBSP, em space, ideographic space…) but
    not the ASCII separators U+001C..U+001F that Python's ``str.strip`` also removes."""
    ping = '{"id":"1","method":"ping","params":{}}'
    assert parse("\u3000\u00a0" + ping + "\u2003\u0085").id == "1"
    assert refusal(ping + "\x1f") == "trailing characters at line 1 column 39"
    assert refusal("\x1c" + ping) == "expected value at line 1 column 1"
    assert all(ch.isspace() for ch in RUST_WHITESPACE)


def test_a_line_of_rust_whitespace_only_gets_no_answer(sim: Simulator) -> None:
    """Herdr returns without a word when the trimmed line is empty."""
    assert raw_exchange(sim.socket_path, "\u3000\u2028 \t\n".encode()) == b""
    assert (
        json.loads(raw_exchange(sim.socket_path, b"\x1f\n"))["error"]["code"] == "invalid_request"
    )


def nested(depth: int) -> str:
    """A ping whose ``params`` carries ``depth`` containers in all (the request object
    included)."""
    inner = depth - 2  # the request object and the params object
    return '{"id":"1","method":"ping","params":{"x":' + "[" * inner + "]" * inner + "}}"


def test_nesting_up_to_serde_jsons_limit_is_accepted_and_past_it_refused() -> None:
    """serde_json's ``check_recursion!``: 128 levels; the 128th container is refused at its
    own column (``peek_error``)."""
    assert parse(nested(RECURSION_LIMIT - 1)).method == "ping"
    message = refusal(nested(RECURSION_LIMIT))
    column = len('{"id":"1","method":"ping","params":{"x":') + RECURSION_LIMIT - 2
    assert message == f"recursion limit exceeded at line 1 column {column}"


def test_a_megabyte_of_brackets_is_answered_invalid_request_not_dropped(sim: Simulator) -> None:
    """Before: Python's decoder raised ``RecursionError``, the connection closed unanswered
    and the exception (with the 1 MiB line) stayed in ``handler_errors``."""
    head = b'{"id":"deep","method":"ping","params":{"x":'
    line = head + b"[" * (1024 * 1024 - 64) + b"\n"
    reply = json.loads(raw_exchange(sim.socket_path, line))
    assert reply["id"] == ""
    assert reply["error"]["code"] == "invalid_request"
    column = len(head) + RECURSION_LIMIT - 2  # the request and params objects count too
    assert reply["error"]["message"] == (
        f"invalid request: recursion limit exceeded at line 1 column {column}"
    )
    server = sim.socket_server
    assert server is not None
    assert server.handler_errors == []


def test_the_answer_carries_herdrs_prefix_and_serde_jsons_position(sim: Simulator) -> None:
    line = b'{"id":"q","method":"pane.get","params":{}}'
    reply = json.loads(raw_exchange(sim.socket_path, line + b"\n"))
    assert reply == {
        "id": "",
        "error": {
            "code": "invalid_request",
            "message": f"invalid request: missing field `pane_id` at line 1 column {len(line)}",
        },
    }


# -- syntax errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "expected ident at line 1 column 2"),
        ('["ping"]', "invalid type: sequence, expected struct Request at line 1 column 0"),
        ('"ping"', 'invalid type: string "ping", expected struct Request at line 1 column 6'),
        ("{", "EOF while parsing an object at line 1 column 1"),
        ('{"id":"1",}', "trailing comma at line 1 column 11"),
        ('{"id":"1" "method":"ping"}', "expected `,` or `}` at line 1 column 11"),
        ('{"id":"1",5:1}', "key must be a string at line 1 column 11"),
        ('{"id":"1","x":[1 2]}', "expected `,` or `]` at line 1 column 18"),
        ('{"id":"1","x":01}', "invalid number at line 1 column 16"),
        ('{"id":"1","x":1e400}', "number out of range at line 1 column 19"),
        # an integer of more than 4,300 digits (Python's int limit): serde_json reads it as
        # an f64, which is infinite (src/api/server.rs parses requests with serde_json)
        ('{"id":"1","x":' + "9" * 4400 + "}", "number out of range at line 1 column 4414"),
        ('{"id":"1","x":"\\q"}', "invalid escape at line 1 column 17"),
        ('{"id":"1","x":"\\udc00"}', "lone leading surrogate in hex escape at line 1 column 21"),
        (
            '{"id":"1","x":"a\tb"}',
            "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 17",
        ),
        ('{"id":"1","x":NaN}', "expected value at line 1 column 15"),
        ('{"id":', "EOF while parsing a value at line 1 column 6"),
        ('{"id":"1","x":"\\', "EOF while parsing a string at line 1 column 16"),
        ('{"id":"1","x":"\\u12', "EOF while parsing a string at line 1 column 19"),
        # the four hex digits end one byte before the line: the string closes, the object not
        ('{"id":"1","x":"\\u0041"', "EOF while parsing an object at line 1 column 22"),
        ('{"id":"1","x":"\\u12G4"}', "invalid escape at line 1 column 21"),
        # fewer than four bytes left is EOF before any is looked at; four that are not all
        # hex digits is an invalid escape
        ('{"id":"1","x":"\\u1"', "EOF while parsing a string at line 1 column 19"),
        ('{"id":"1","x":"\\u00"x', "invalid escape at line 1 column 21"),
        # a byte just past the digits ("9" + 1) is no number
        ('{"id"::1}', "expected value at line 1 column 7"),
        # the surrogate ranges at their edges: U+E000 is a character, DFFF a lone low half,
        # DBFF a high half that pairs
        ('{"id":"1","x":"\\ue000",}', "trailing comma at line 1 column 24"),
        ('{"id":"1","x":"\\udfff"}', "lone leading surrogate in hex escape at line 1 column 21"),
        ('{"id":"1","x":"\\udbff\\udc00",}', "trailing comma at line 1 column 30"),
        ('{"id":"1","x":"\\ud7ff",}', "trailing comma at line 1 column 24"),
        ('{"id":"1","x":"\\ud800\\udfff",}', "trailing comma at line 1 column 30"),
        # a high half must be followed by a low one: the line ends, something else, a non-low
        ('{"id":"1","x":"\\ud800', "EOF while parsing a string at line 1 column 21"),
        ('{"id":"1","x":"\\ud800x"}', "unexpected end of hex escape at line 1 column 22"),
        (
            '{"id":"1","x":"\\ud800\\ue000"}',
            "lone leading surrogate in hex escape at line 1 column 27",
        ),
        ('{"id":"1","x":[1', "EOF while parsing a list at line 1 column 16"),
        ('{"id":"1","x":[1,', "EOF while parsing a value at line 1 column 17"),
        ('{"id":"1","x":[1,]}', "trailing comma at line 1 column 18"),
        ('{"id":"1","x":', "EOF while parsing a value at line 1 column 14"),
        ('{"id":"1","x":[1,2],}', "trailing comma at line 1 column 21"),
        (
            '{"id":"1","method":"pane.get","params":{"pane_id":{}}}',
            "invalid type: map, expected a string at line 1 column 54",
        ),
        ('{"id":"1","method":"ping","params":{}} x', "trailing characters at line 1 column 40"),
    ],
)
def test_syntax_errors_have_serde_jsons_wording_and_position(line: str, message: str) -> None:
    assert refusal(line) == message


# -- the shapes table agrees with the protocol ----------------------------------------------------


def test_every_method_has_the_params_struct_the_protocol_22_schema_names() -> None:
    """``request_shapes`` was read from Herdr's source; the schema Herdr publishes must agree
    on each struct's name, fields and required fields (required ones in declaration order)."""
    schema = json.loads(schema_path().read_text())["schemas"]["request"]
    assert list(SHAPES) == [variant["properties"]["method"]["const"] for variant in schema["oneOf"]]
    assert list(SHAPES) == list(PROTOCOL_22_METHODS)
    for variant in schema["oneOf"]:
        method = variant["properties"]["method"]["const"]
        name = variant["properties"]["params"]["$ref"].rsplit("/", 1)[1]
        definition = schema["$defs"][name]
        shape = SHAPES[method]
        assert shape.name == name, method
        assert set(shape.fields) == set(definition.get("properties", {})), method
        required = [field for field in shape.fields if shape.required(field)]
        assert required == definition.get("required", []), method


#: fields the simulator reads that the protocol-22 schema does not list: Herdr 0.9.2's resume
#: layer (see docs/simulator/fidelity.md, "Resume layer")
GUIDE_ONLY_FIELDS = {
    ("pane.report_agent", "resume_argv"),
    ("pane.report_agent_session", "resume_argv"),
}


def test_the_simulators_specs_agree_with_herdrs_structs() -> None:
    """A field the simulator checks is a field of Herdr's struct, required exactly when
    Herdr's is (an optional guide-only field aside)."""
    for name, entry in METHODS.items():
        shape = SHAPES[name]
        for field, spec in entry.params.fields.items():
            if (name, field) in GUIDE_ONLY_FIELDS:
                assert not spec.required
                continue
            assert field in shape.fields, (name, field)
            assert spec.required == shape.required(field), (name, field)


# -- properties -----------------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    id_value=_json_values,
    method=st.sampled_from([*PROTOCOL_22_METHODS, "nope"]) | _json_values,
    params=_json_values,
    order=st.permutations(["id", "method", "params"]),
)
def test_any_request_shaped_line_parses_or_is_refused_never_crashes(
    id_value: Any, method: Any, params: Any, order: list[str]
) -> None:
    values = {"id": id_value, "method": method, "params": params}
    line = "{" + ",".join(f"{json.dumps(key)}:{json.dumps(values[key])}" for key in order) + "}"
    try:
        parsed = parse(line)
    except RequestError as exc:
        refused = str(exc)
    else:
        assert parsed.id == id_value
        assert parsed.method in PROTOCOL_22_METHODS
        return
    assert refused.rsplit(" at line 1 column ", 1)[1].isdigit(), refused


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | st.binary(max_size=80).map(lambda b: b.decode("latin-1")))
def test_any_text_parses_or_is_refused_never_crashes(text: str) -> None:
    with contextlib.suppress(RequestError):
        parse(text)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(payload=st.binary(min_size=1, max_size=200).filter(lambda b: b"\n" not in b))
def test_every_line_gets_at_most_one_answer_line_and_the_server_lives(
    sim: Simulator, payload: bytes
) -> None:
    """Whatever arrives, the server writes at most one line (none for an empty or non-UTF-8
    line, as Herdr) and keeps serving; a line that decodes gets exactly one."""
    reply = raw_exchange(sim.socket_path, payload + b"\n")
    assert reply.count(b"\n") <= 1
    try:
        text = rust_trim(payload.decode("utf-8"))
    except UnicodeDecodeError:
        text = ""
    if text:
        assert reply.count(b"\n") == 1 and reply.endswith(b"\n")
        json.loads(reply)
    server = sim.socket_server
    assert server is not None
    assert server.handler_errors == []


@settings(max_examples=300, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.sampled_from(["id", "method", "params", "x", "é"]), _json_values),
        max_size=5,
    ),
    ascii_only=st.booleans(),
)
def test_the_fast_path_reads_what_serde_jsons_reader_reads(
    pairs: list[tuple[str, Any]], ascii_only: bool
) -> None:
    """Python's decoder is only a shortcut: whatever it accepts, the model of serde_json's
    reader reads the same way (same id, same buffered pairs, same end)."""

    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=ascii_only)

    text = "{" + ",".join(f"{dumps(key)}:{dumps(value)}" for key, value in pairs) + "}"
    fast = request_json._fast(text)
    if fast is None:
        return
    slow = request_json._Reader(text.encode("utf-8", "surrogatepass")).request()
    assert (fast.id, fast.end) == (slow.id, slow.end)
    assert [key for key, _ in fast.entries] == [key for key, _ in slow.entries]
    assert json.dumps(fast.entries) == json.dumps(slow.entries)


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (1.0, "1.0"),
        (0.1, "0.1"),
        (123.456, "123.456"),
        (-2.5, "-2.5"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1e-5, "0.00001"),
        (0.001, "0.001"),
        (0.00012, "0.00012"),
        (120.0, "120.0"),
        (1.2345e-5, "0.000012345"),
        (1e-6, "1e-6"),
        (1.5e-7, "1.5e-7"),
        (1e15, "1000000000000000.0"),
        (9.999e15, "9999000000000000.0"),
        (1e16, "1e+16"),
        (1e20, "1e+20"),
        (2.0**60, "1.152921504606847e+18"),
        (5e-324, "5e-324"),
        (float("nan"), "NaN"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
    ],
)
def test_a_float_in_an_error_is_printed_as_serde_prints_it(value: float, printed: str) -> None:
    """serde_json's float in an error message: the shortest round-trip digits, plain for
    decimal exponents -5 to 15, else ``1e+20``/``1.5e-7`` (``rust_float``'s rule, pinned at
    each edge of the plain range)."""
    assert rust_float(value) == printed


def test_a_line_only_serde_jsons_reader_reads_keeps_its_id() -> None:
    """An escaped backslash before ``ud800`` looks like a lone surrogate to the fast path's
    screen, so serde_json's reader reads the whole line: the request must be the same."""
    request = parse('{"id":"ab","method":"ping","params":{},"x":"\\\\ud800"}')
    assert (request.id, request.method, request.params) == ("ab", "ping", {})
    assert request.raw["x"] == "\\ud800"


@pytest.mark.parametrize(
    "line",
    [
        '{"id":"1","method":"ping","params":{}}',
        '{"id":"1","method":"pane.read","params":{"pane_id":"w1:1","source":"visible"}}',
        '{"method":"ping","id":"2","params":{"x":[1,2,{"y":null}]}}',
    ],
)
def test_an_ordinary_request_is_read_without_serde_jsons_slow_reader(
    line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The byte-by-byte reader is for lines Python's decoder refuses or reads differently;
    an ordinary request (one id, no deep nesting, no odd number) never pays for it."""

    class NoReader:
        def __init__(self, data: bytes) -> None:
            raise AssertionError(f"the slow reader read an ordinary line: {data!r}")

    monkeypatch.setattr(request_json, "_Reader", NoReader)
    read = request_json.read_request(line)
    assert read.id == json.loads(line)["id"]
    assert read.entries == [(k, v) for k, v in json.loads(line).items() if k != "id"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id":"1","x"::1}', "expected value at line 1 column 15"),
        ('{"id" 1}', "expected `:` at line 1 column 7"),
        ('{"id"', "EOF while parsing an object at line 1 column 5"),
        # a closed container gives its level back: seventy siblings are no deeper than one
        ('{"id":"1","x":[' + "[]," * 70 + "1],}", "trailing comma at line 1 column 229"),
        ('{"id":"1","x":[' + "{}," * 70 + "1],}", "trailing comma at line 1 column 229"),
        # ... and only its own level: the limit still holds after a sibling
        (
            '{"id":"1","a":{},"x":' + "[" * 127 + "]" * 127 + "}",
            "recursion limit exceeded at line 1 column 148",
        ),
        (
            '{"id":"1","a":[],"x":' + "[" * 127 + "]" * 127 + "}",
            "recursion limit exceeded at line 1 column 148",
        ),
        (
            '{"id":"1","a":[],"x":' + "[" * 126 + "]" * 126 + ",}",
            "trailing comma at line 1 column 275",
        ),
    ],
)
def test_serde_jsons_reader_keeps_its_place_and_its_depth(line: str, message: str) -> None:
    assert refusal(line) == message


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("-9223372036854775808", -9_223_372_036_854_775_808),  # i64's least: an integer
        ("-9223372036854775809", -9.223372036854776e18),  # one less: serde reads an f64
        ("18446744073709551615", 18_446_744_073_709_551_615),  # u64's greatest
        ("18446744073709551616", 1.8446744073709552e19),
        ("-0", -0.0),
    ],
)
def test_integers_past_64_bits_are_read_as_floats_on_the_fast_path_too(
    literal: str, value: float
) -> None:
    """Found by the fast-path property test: a 19-digit negative literal below i64's range was
    read as a Python int by the fast path, where serde_json (and the reader) read an f64."""
    read = request_json.read_request(f'{{"id":"1","method":"ping","x":{literal}}}')
    got = dict(read.entries)["x"]
    assert (got, type(got)) == (value, type(value))
    slow = request_json._Reader(f'{{"id":"1","x":{literal}}}'.encode()).request()
    assert (slow.entries[0][1], type(slow.entries[0][1])) == (value, type(value))
