"""The method registry against Herdr's published schema and our fidelity document."""

from __future__ import annotations

from pathlib import Path

from herdr_sim.methods import load_all
from herdr_sim.registry import PROTOCOL_22_METHODS, UNSUPPORTED
from herdr_sim.schema import build_schema, supported_methods_markdown
from tests.contract_check import REPO, schema_bundle

DOCS = REPO / "docs" / "simulator"


def schema_methods() -> list[str]:
    """Method names of the protocol-22 schema, in its order."""
    variants = schema_bundle()["schemas"]["request"]["oneOf"]
    return [variant["properties"]["method"]["const"] for variant in variants]


def test_protocol_method_list_matches_the_schema() -> None:
    assert list(PROTOCOL_22_METHODS) == schema_methods()


def test_every_protocol_method_is_implemented_or_declared_unsupported() -> None:
    implemented = set(load_all())
    assert implemented.isdisjoint(UNSUPPORTED)
    assert implemented | set(UNSUPPORTED) == set(schema_methods())


def test_fidelity_document_accounts_for_every_unsupported_method() -> None:
    text = (DOCS / "fidelity.md").read_text()
    missing = [name for name in UNSUPPORTED if f"`{name}`" not in text]
    assert not missing, f"fidelity.md does not mention: {missing}"


def test_supported_methods_page_is_generated_from_the_registry() -> None:
    page = (DOCS / "supported-methods.md").read_text()
    assert page == supported_methods_markdown(), (
        "regenerate with: .venv/bin/python -m herdr_sim docs supported-methods "
        "> docs/simulator/supported-methods.md"
    )


def test_generated_schema_lists_every_method_and_marks_the_implemented_ones() -> None:
    schema = build_schema()
    variants = schema["schemas"]["request"]["oneOf"]
    assert [variant["title"] for variant in variants] == list(PROTOCOL_22_METHODS)
    implemented = {v["title"] for v in variants if "x-herdr-result-type" in v}
    assert implemented == set(load_all())
    assert {v["title"] for v in variants if "x-herdr-sim-unsupported" in v} == set(UNSUPPORTED)
    assert schema["protocol"] == 22


def test_docs_exist() -> None:
    for name in ("overview.md", "cli.md", "supported-methods.md", "fidelity.md"):
        assert (DOCS / name).is_file(), name
    assert isinstance(Path, type)
