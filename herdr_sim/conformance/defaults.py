"""What :func:`~herdr_sim.conformance.check_integration` drives an agent with unless told
otherwise: the inputs ``herdr-sim fake-agent`` understands. One place, so the function's
signature (what ``help()`` shows) and :class:`~herdr_sim.conformance.driver.CheckOptions`
cannot disagree.
"""

from __future__ import annotations

#: an ordinary prompt
PROMPT = "Say hello to the Herdr integration check"
#: a prompt that makes the agent ask the user a question
QUESTION_PROMPT = "/ask May the Herdr integration check continue?"
#: the answer to that question
ANSWER = "yes"
#: a prompt that makes the agent switch to a new session in the same process
NEW_SESSION_PROMPT = "/new"
#: what exits the agent (Herdr key names, else literal text)
EXIT_KEYS = ("/exit", "Enter")
