#!/bin/sh
# pytest-herdr's Herdr integration for @AGENT@: a SessionStart hook reporting the agent's
# session (its id, how it started and, for Claude Code, its transcript path) to the Herdr
# server of the pane it runs in.
# Written for pytest-herdr from Herdr's integration guide; installed where
# `herdr integration install @AGENT@` puts Herdr's hook, under the same name.
# Usage (as the agent's hook command): bash herdr-agent-state.sh session  < hook-event.json
# Outside a Herdr pane, or for any other action, it reads its input and does nothing.
# HERDR_INTEGRATION_ID=@AGENT@
# HERDR_INTEGRATION_VERSION=8

if [ "${1:-}" != "session" ] || [ "${HERDR_ENV:-}" != "1" ] \
    || [ -z "${HERDR_SOCKET_PATH:-}" ] || [ -z "${HERDR_PANE_ID:-}" ] \
    || ! command -v python3 >/dev/null 2>&1; then
  cat >/dev/null 2>&1
  exit 0
fi

exec python3 -c '
import json, os, socket, sys, time

agent = sys.argv[1]
try:
    event = json.loads(sys.stdin.read() or "{}")
except ValueError:
    sys.exit(0)
# a subagent runs the hooks too; only the pane'"'"'s own agent reports
if not isinstance(event, dict) or event.get("agent_id"):
    sys.exit(0)
session_id = event.get("session_id")
if not isinstance(session_id, str) or not session_id:
    sys.exit(0)
path = event.get("transcript_path")
has_path = isinstance(path, str) and bool(path.strip())
if agent == "codex":
    # a Codex session without a rollout file is not one to resume; a thread this Codex
    # started for a subagent (CODEX_THREAD_ID names the parent) is not the pane'"'"'s own
    parent = os.environ.get("CODEX_THREAD_ID")
    if not has_path or (parent and parent != session_id):
        sys.exit(0)
params = {
    "pane_id": os.environ["HERDR_PANE_ID"],
    "source": "herdr:" + agent,
    "agent": agent,
    "seq": time.time_ns(),
    "agent_session_id": session_id,
}
if has_path and agent == "claude":  # Codex is resumed by id, Claude Code by its transcript
    params["agent_session_path"] = path
started = event.get("source")
if event.get("hook_event_name") == "SessionStart" and isinstance(started, str) and started:
    params["session_start_source"] = started
request = {
    "id": "herdr:%s:%d" % (agent, time.time_ns()),
    "method": "pane.report_agent_session",
    "params": params,
}
line = (json.dumps(request) + "\n").encode()
for timeout in (0.5, 1.5):  # any reply counts as delivered; one more try after a silence
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(os.environ["HERDR_SOCKET_PATH"])
            conn.sendall(line)
            if conn.recv(65536):
                break
    except OSError:
        continue
' "@AGENT@"
