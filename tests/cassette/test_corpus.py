"""The committed corpus (``tests/cassette/corpus``) replays clean on the simulator: the
cassettes this project recorded through ``herdr-sim record`` (scripted sessions) and the
plugin's ``--herdr-record`` (contract-suite tests on the stand-in real Herdr). A change to
the simulator that alters an answer, or to the recorder's format, shows up here as a
difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from herdr_sim.cassette.format import load
from herdr_sim.cassette.replay import replay_on_simulator

CORPUS = Path(__file__).parent / "corpus"
CASSETTES = sorted(CORPUS.rglob("*.jsonl"))


def test_the_corpus_has_both_kinds() -> None:
    kinds = {path.parent.name for path in CASSETTES}
    assert kinds == {"sessions", "contract"}, kinds
    assert len(CASSETTES) >= 10


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_a_corpus_cassette_replays_clean(path: Path) -> None:
    """Each cassette on a simulator of its own, at the recorded pace (well under a second
    each when the machine is quiet)."""
    cassette = load(path)
    assert cassette.header.redacted  # nothing in the corpus kept a secret
    report = replay_on_simulator(cassette)
    assert report.ok, "\n".join(d.render() for d in report.differences)
    assert sum(sum(counts) for counts in report.methods.values()) > 0
