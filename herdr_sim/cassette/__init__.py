"""Record and replay: a run against a real Herdr becomes a fidelity check and an offline test.

``herdr-sim record`` (:mod:`.proxy`) sits in front of a Herdr socket and writes every line
each client connection carried into a *cassette* (:mod:`.format`, JSON Lines, secrets
redacted); ``herdr-sim replay`` (:mod:`.replay`) sends the recorded requests to a fresh
simulator in the recorded order and compares its answers with the recorded ones after
normalising what legitimately varies (:mod:`.normalise`). docs/simulator/record-replay.md
is the user's guide.
"""
