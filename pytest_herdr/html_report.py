"""Self-contained HTML pages of a run: one per failing test, one per failing integration
check, and an index of the run.

A failing test's page starts with its failure message and traceback, then draws the panes:
each tab is a section; its area is a grid of character cells and every pane a bordered box
at its layout rectangle (``left``/``top``/``width``/``height`` in cells), captioned with the
pane id, agent and status, the focused pane marked. The protocol tail follows, its error
responses and the requests they refused highlighted, pings left out unless asked for; then
the agent timeline. An integration check's page shows its root cause, every rule's verdict
with evidence, and every report the agent made, refused ones highlighted. All text is
escaped; no scripts, no external assets.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from herdr_sim.conformance.report import IntegrationReport

    from .scene import PaneView, Scene, TabView, TimelineEntry, WireEntry

__all__ = ["render_index", "render_integration", "render_page"]

_CELL_W = "1ch"
_CELL_H = "1.25em"

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; background: #fafafa; }
h1 { font-size: 1.2em; } h2 { font-size: 1.05em; margin-top: 1.5em; }
h3 { font-size: .95em; margin: 1em 0 .3em; color: #444; }
.errors { color: #a00; }
.area { position: relative; font-family: ui-monospace, monospace; font-size: 13px;
        line-height: 1.25em; background: #1e1e1e; color: #ddd; overflow: hidden; }
.pane { position: absolute; box-sizing: border-box; border: 1px solid #666;
        overflow: hidden; }
.pane.focused { border: 2px solid #f5c542; }
.cap { background: #333; color: #fff; font-size: 11px; white-space: nowrap;
       overflow: hidden; text-overflow: ellipsis; padding: 0 .3em; }
.pane.focused .cap { background: #8a6d00; }
.pane pre { margin: 0; padding: 0 .2em; white-space: pre; }
.status-working .cap::after { content: " ⏳"; }
.status-blocked .cap::after { content: " ✋"; }
.unreadable { color: #f88; }
table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 12px; }
td { border-bottom: 1px solid #ddd; padding: 2px 6px; vertical-align: top; }
td.json { white-space: pre-wrap; word-break: break-all; }
tr.error td, tr.refused td { background: #fde2e2; color: #800; }
pre.failure { background: #fff0f0; border-left: 4px solid #c00; padding: .5em;
              white-space: pre-wrap; }
.rule-failed { color: #a00; font-weight: bold; } .rule-passed { color: #070; }
.rule-skipped, .rule-not_judged { color: #777; }
.cause { background: #fff0f0; border-left: 4px solid #c00; padding: .3em .6em; }
.note { color: #666; font-size: .9em; }
"""


def _failure_html(failure: str | None) -> str:
    if not failure:
        return ""
    return f'<h2>failure</h2><pre class="failure">{escape(failure)}</pre>'


def _wire_html(wire: Sequence[WireEntry], pings: bool) -> str:
    """The protocol tail as a table: error responses and the requests they answer
    highlighted; ``pings`` (requests and their answers) left out unless asked for."""
    ping_ids = {str(e.line.get("id")) for e in wire if e.line.get("method") == "ping"}
    error_ids = {str(e.line.get("id")) for e in wire if e.kind == "response" and "error" in e.line}
    shown = [e for e in wire if pings or str(e.line.get("id")) not in ping_ids]
    left_out = len(wire) - len(shown)
    note = f' <span class="note">({left_out} ping lines left out)</span>' if left_out else ""
    rows = [f"<h2>protocol tail ({len(shown)}){note}</h2><table>"]
    for entry in shown:
        arrow = "→" if entry.kind == "request" else "←"
        line = json.dumps(entry.line, ensure_ascii=False)
        request_id = str(entry.line.get("id"))
        css = ""
        if entry.kind == "response" and "error" in entry.line:
            css = ' class="error"'
        elif entry.kind == "request" and request_id in error_ids:
            css = ' class="refused"'
        rows.append(
            f"<tr{css}><td>+{entry.at:.3f}s</td><td>{arrow} {escape(entry.kind)}</td>"
            f'<td class="json">{escape(line)}</td></tr>'
        )
    rows.append("</table>")
    return "\n".join(rows)


def _head(title: str) -> list[str]:
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
    ]


def render_integration(report: IntegrationReport, title: str, failure: str | None = None) -> str:
    """The page of one integration check: root cause, verdicts with evidence, reports."""
    parts = _head(title)
    parts.append(f"<p>{escape(' '.join(report.command))} · {report.duration:.1f}s</p>")
    parts.append(_failure_html(failure))
    cause = report.root_cause
    if cause is not None:
        owner = f" (rule {cause.rule})" if cause.rule else ""
        parts.append(
            f'<div class="cause"><b>root cause{escape(owner)}:</b> {escape(cause.summary)}'
            + "".join(f"<pre>{escape(e.line())}</pre>" for e in cause.evidence)
            + "</div>"
        )
    parts.append("<h2>rules</h2><table>")
    for rule in report.rules:
        evidence = "".join(
            f"<div>{escape(e.line())}</div>"
            + (f"<pre>{escape(e.screen)}</pre>" if e.screen is not None else "")
            for e in rule.evidence
        )
        parts.append(
            f'<tr data-rule="{escape(rule.id)}"><td class="rule-{rule.status}">'
            f"{escape(rule.status)}</td><td>{escape(rule.id)}</td>"
            f"<td>{escape(rule.summary)}{evidence}</td></tr>"
        )
    parts.append(f"</table><h2>reports ({len(report.reports)})</h2><table>")
    for item in report.reports:
        response = item.get("response")
        refused = isinstance(response, dict) and "error" in response
        css = ' class="refused"' if refused else ""
        answer = "no answer" if response is None else json.dumps(response, ensure_ascii=False)
        parts.append(
            f"<tr{css}><td>+{item.get('t', 0):.3f}s</td><td>{escape(str(item.get('phase')))}"
            f"</td><td>#{item.get('index')} {escape(str(item.get('method')))}</td>"
            f'<td class="json">{escape(json.dumps(item.get("params"), ensure_ascii=False))}'
            f'</td><td class="json">{escape(answer)}</td></tr>'
        )
    parts.append("</table><h2>timeline</h2><table>")
    parts.extend(
        f"<tr><td>{escape(e.line())}</td></tr>"
        + (f"<tr><td><pre>{escape(e.screen)}</pre></td></tr>" if e.screen is not None else "")
        for e in report.timeline
    )
    parts.append("</table></body></html>\n")
    return "\n".join(parts)


def render_index(title: str, pages: Sequence[tuple[str, str, str, str]]) -> str:
    """The run's index: one row per page (test id, outcome, first failure line, file)."""
    parts = _head(title)
    if not pages:
        parts.append("<p>no page was written: no test that used Herdr failed.</p>")
    parts.append("<table>")
    for nodeid, outcome, message, name in pages:
        parts.append(
            f'<tr class="{escape(outcome)}"><td><a href="{escape(name)}">{escape(nodeid)}</a>'
            f"</td><td>{escape(outcome)}</td><td>{escape(message)}</td></tr>"
        )
    parts.append("</table></body></html>\n")
    return "\n".join(parts)


def _cells(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def _pane_html(pane: PaneView, origin_x: int, origin_y: int) -> str:
    rect = pane.rect or {}
    x, y = _cells(rect.get("x")) - origin_x, _cells(rect.get("y")) - origin_y
    w, h = _cells(rect.get("width")), _cells(rect.get("height"))
    style = (
        f"left:calc({x} * {_CELL_W});top:calc({y} * {_CELL_H});"
        f"width:calc({w} * {_CELL_W});height:calc({h} * {_CELL_H})"
    )
    status = escape(str(pane.info.get("agent_status", "unknown")))
    classes = f"pane status-{status}" + (" focused" if pane.focused else "")
    if pane.screen is None:
        body = (
            f'<pre class="unreadable">screen not readable: {escape(pane.screen_error or "")}</pre>'
        )
    else:
        body = f"<pre>{escape(pane.screen)}</pre>"
    return (
        f'<div class="{classes}" data-pane-id="{escape(pane.pane_id)}" '
        f'data-rect="{x},{y},{w},{h}" style="{style}">'
        f'<div class="cap">{escape(pane.caption())}</div>{body}</div>'
    )


def _tab_html(tab: TabView) -> str:
    layout = tab.layout or {}
    area = layout.get("area") or {}
    placed = [pane for pane in tab.panes if pane.rect]
    width = _cells(area.get("width")) or max(
        (_cells(p.rect.get("x")) + _cells(p.rect.get("width")) for p in placed if p.rect),
        default=80,
    )
    height = _cells(area.get("height")) or max(
        (_cells(p.rect.get("y")) + _cells(p.rect.get("height")) for p in placed if p.rect),
        default=24,
    )
    origin_x, origin_y = _cells(area.get("x")), _cells(area.get("y"))
    title = (
        f"tab {tab.info.get('tab_id')} {tab.info.get('label', '')!r}"
        f"{' (active)' if tab.info.get('focused') else ''}"
        f"{' · zoomed' if layout.get('zoomed') else ''} · {width}x{height}"
    )
    panes = "".join(_pane_html(pane, origin_x, origin_y) for pane in placed)
    loose = [pane for pane in tab.panes if not pane.rect]
    extra = "".join(
        f"<h3>{escape(pane.caption())} (no layout rectangle)</h3>"
        f"<pre>{escape(pane.screen or pane.screen_error or '')}</pre>"
        for pane in loose
    )
    style = f"width:calc({width} * {_CELL_W});height:calc({height} * {_CELL_H})"
    return (
        f'<section class="tab" data-tab-id="{escape(str(tab.info.get("tab_id")))}">'
        f"<h3>{escape(title)}</h3>"
        f'<div class="area" style="{style}">{panes}</div>{extra}</section>'
    )


def render_page(
    title: str,
    scene: Scene,
    wire: Sequence[WireEntry],
    timeline: Sequence[TimelineEntry],
    timeline_errors: Sequence[str] = (),
    *,
    failure: str | None = None,
    pings: bool = False,
) -> str:
    """The whole page as a string (``failure``: the test's failure message and traceback;
    ``pings``: keep ping requests in the protocol tail)."""
    parts = [*_head(title), _failure_html(failure), "<h2>panes</h2>"]
    if scene.errors:
        parts.append(
            '<ul class="errors">'
            + "".join(f"<li>{escape(error)}</li>" for error in scene.errors)
            + "</ul>"
        )
    for ws in scene.workspaces:
        info = ws.info
        workspace_id = escape(str(info.get("workspace_id")))
        parts.append(
            f'<section class="workspace" data-workspace-id="{workspace_id}">'
            f"<h2>workspace {workspace_id} "
            f"{escape(repr(info.get('label', '')))}"
            f"{' (focused)' if info.get('focused') else ''}</h2>"
        )
        parts.extend(_tab_html(tab) for tab in ws.tabs)
        parts.append("</section>")
    parts.append(_wire_html(wire, pings))
    parts.append("<h2>agent timeline</h2><table>")
    parts.extend(
        f"<tr><td>+{item.at:.3f}s</td><td>{escape(item.pane_id)}</td>"
        f"<td>{escape(item.what)}</td><td>{escape(item.agent or '')}</td>"
        f"<td>{escape(item.status or '')}</td><td>{escape(item.detail)}</td></tr>"
        for item in timeline
    )
    parts.append("</table>")
    if timeline_errors:
        parts.append(
            '<ul class="errors">'
            + "".join(f"<li>{escape(error)}</li>" for error in timeline_errors)
            + "</ul>"
        )
    parts.append("</body></html>\n")
    return "\n".join(parts)
