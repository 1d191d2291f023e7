"""``notification.show``: validated like Herdr and recorded so tests can assert on it."""

from __future__ import annotations

from typing import Any

from .. import errors
from ..errors import HerdrError
from ..params import Enum, F, Nullable, Obj
from ..registry import method
from ..runtime import Notification, Runtime
from .specs import OPT_STR, REQ_STR

TITLE_MAX = 80
BODY_MAX = 240


def sanitize(text: str, limit: int) -> str:
    """Newlines and tabs become spaces, other controls go, whitespace collapses, then cut."""
    spaced = "".join(
        " " if ch in "\n\r\t" else ch for ch in text if ch in "\n\r\t" or ch.isprintable()
    )
    return " ".join(spaced.split())[:limit].strip()


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
    # Headless Herdr with no client attached answers exactly this.
    reason = "no_foreground_client"
    rt.notifications.append(Notification(title, body, p["position"], p["sound"], False, reason))
    return {"type": "notification_show", "shown": False, "reason": reason}
