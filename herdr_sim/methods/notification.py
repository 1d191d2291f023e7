"""``notification.show``: validated like Herdr and recorded so tests can assert on it."""

from __future__ import annotations

from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Notification, Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Enum, F, Nullable, Obj
from orchestrator.client.untrusted_text import CONTROL

from .specs import OPT_STR, REQ_STR

TITLE_MAX = 80
BODY_MAX = 240


def sanitize(text: str, limit: int) -> str:
    """Herdr's notification text rule, character by character.

    Newline, CR and tab become spaces, other control characters (category Cc) are dropped,
    runs of whitespace collapse to one space, the text stops once it holds ``limit``
    characters (a leading space counts), and the result is trimmed.
    """
    out: list[str] = []
    previous_space = False
    for ch in text:
        if ch in "\n\r\t":
            ch = " "
        elif ch in CONTROL:
            continue
        if ch.isspace():
            if previous_space:
                continue
            previous_space = True
            out.append(" ")
        else:
            previous_space = False
            out.append(ch)
        if len(out) >= limit:
            break
    return "".join(out).strip()


@method(
    "notification.show",
    Obj(
        fields={
            "title": REQ_STR,
            "body": OPT_STR,
            "position": F(
                Nullable(Enum(values=("top-left", "top-right", "bottom-left", "bottom-right")))
            ),
            "sound": F(Enum(values=("none", "done", "request")), default="none"),
        }
    ),
    result="notification_show",
    mutates=False,
)
async def show(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """A toast for attached clients; the simulator has none, so it is never shown."""
    title = sanitize(p["title"], TITLE_MAX)
    if not title:
        raise HerdrError(errors.INVALID_PARAMS, "notification title is empty")
    body = None if p["body"] is None else sanitize(p["body"], BODY_MAX) or None
    # Herdr's default config has toast delivery off (`ui.toast.delivery = "off"`), and the
    # simulator has no config to turn it on, so the answer is Herdr's default one.
    reason = "disabled"
    rt.notifications.append(Notification(title, body, p["position"], p["sound"], False, reason))
    return {"type": "notification_show", "shown": False, "reason": reason}
