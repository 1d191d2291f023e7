"""Small handles over Herdr's ids for the ``herdr_workspace`` and ``herdr_pane`` fixtures.

They hold ids and a client, never state: every property that can change is read from the
server when asked, so a handle cannot go stale the way a cached tmux pane object does.

Creating a pane takes Herdr's own ``env``: variables for that pane's process only, over the
server's environment (and the test's ``herdr_pane_env``), under Herdr's ``HERDR_*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .client import WireClient
from .waits import HerdrWait

ReadSource = Literal["visible", "recent", "recent_unwrapped", "detection"]
Direction = Literal["right", "down"]


@dataclass(frozen=True)
class Pane:
    """One pane, by id."""

    client: WireClient
    pane_id: str
    workspace_id: str
    tab_id: str

    @property
    def info(self) -> dict[str, Any]:
        """PaneInfo, read now (``pane.get``)."""
        pane: dict[str, Any] = self.client.call("pane.get", pane_id=self.pane_id)["pane"]
        return pane

    def send(self, text: str = "", *keys: str) -> None:
        """Type ``text``, then press ``keys`` (``"Enter"``, ``"C-c"`` …) — ``pane.send_input``."""
        self.client.call("pane.send_input", pane_id=self.pane_id, text=text, keys=list(keys))

    def run(self, command: str) -> None:
        """Type a command line and press Enter (what ``herdr pane run`` does)."""
        self.send(command, "Enter")

    def read(self, source: ReadSource = "recent", lines: int | None = None) -> str:
        """The pane's text from ``source`` (``pane.read``)."""
        params: dict[str, Any] = {"pane_id": self.pane_id, "source": source}
        if lines is not None:
            params["lines"] = lines
        text: str = self.client.call("pane.read", **params)["read"]["text"]
        return text

    def wait_for(
        self, text: str | None = None, *, regex: str | None = None, timeout: float = 10.0
    ) -> str:
        """Wait (server side) until a line of recent output contains ``text`` or matches
        ``regex``; the matched line."""
        __tracebackhide__ = True
        waited = HerdrWait(self.client).for_output(self.pane_id, text, regex=regex, timeout=timeout)
        line: str = waited["matched_line"]
        return line

    def split(
        self,
        direction: Direction = "right",
        *,
        focus: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> Pane:
        """A new pane beside this one (``env``: variables for its process only)."""
        params: dict[str, Any] = {
            "target_pane_id": self.pane_id, "direction": direction, "focus": focus}  # fmt: skip
        if env:
            params["env"] = dict(env)
        info = self.client.call("pane.split", **params)["pane"]
        return Pane.from_info(self.client, info)

    def close(self) -> None:
        """Close the pane (its process tree ends)."""
        self.client.call("pane.close", pane_id=self.pane_id)

    @classmethod
    def from_info(cls, client: WireClient, info: dict[str, Any]) -> Pane:
        """A handle from a PaneInfo object."""
        return cls(client, info["pane_id"], info["workspace_id"], info["tab_id"])


@dataclass(frozen=True)
class Workspace:
    """One workspace, by id, with the pane it was created with."""

    client: WireClient
    workspace_id: str
    tab_id: str
    root: Pane

    @property
    def info(self) -> dict[str, Any]:
        """WorkspaceInfo, read now (``workspace.get``)."""
        workspace: dict[str, Any] = self.client.call(
            "workspace.get", workspace_id=self.workspace_id
        )["workspace"]
        return workspace

    def panes(self) -> list[Pane]:
        """Every pane of the workspace, in Herdr's order (``pane.list``)."""
        listed = self.client.call("pane.list", workspace_id=self.workspace_id)["panes"]
        return [Pane.from_info(self.client, info) for info in listed]

    def new_tab(
        self,
        *,
        focus: bool = False,
        label: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Pane:
        """A new tab; the handle of its root pane (``env``: variables for its process only)."""
        params: dict[str, Any] = {"workspace_id": self.workspace_id, "focus": focus}
        if label is not None:
            params["label"] = label
        if env:
            params["env"] = dict(env)
        return Pane.from_info(self.client, self.client.call("tab.create", **params)["root_pane"])

    @classmethod
    def create(
        cls,
        client: WireClient,
        cwd: str,
        *,
        label: str | None = None,
        focus: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> Workspace:
        """``workspace.create`` and a handle on the result (``env``: variables for the root
        pane's process only)."""
        params: dict[str, Any] = {"cwd": cwd, "focus": focus}
        if label is not None:
            params["label"] = label
        if env:
            params["env"] = dict(env)
        created = client.call("workspace.create", **params)
        root = Pane.from_info(client, created["root_pane"])
        return cls(client, created["workspace"]["workspace_id"], created["tab"]["tab_id"], root)
