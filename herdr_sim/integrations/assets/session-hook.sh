#!/bin/sh
# installed by herdr-sim: the Herdr simulator's own @AGENT@ integration.
# reinstalling the integration overwrites this file; add your own hooks beside it.
# HERDR_INTEGRATION_ID=@AGENT@
# HERDR_INTEGRATION_VERSION=@VERSION@
#
# @AGENT@ runs this hook with its event as JSON on stdin (`session` on SessionStart).
# As Herdr's integration guide asks, it reports the agent's session to the pane's Herdr
# through "$HERDR_BIN_PATH" only inside Herdr (HERDR_ENV=1 and the pane's variables set),
# with a short timeout, and ignores every failure: Herdr never slows the agent down.

if [ "${1:-}" != session ] || [ "${HERDR_ENV:-}" != 1 ] || [ -z "${HERDR_PANE_ID:-}" ] \
  || [ -z "${HERDR_BIN_PATH:-}" ] || [ -z "${HERDR_SOCKET_PATH:-}" ] \
  || ! command -v python3 >/dev/null 2>&1; then
  cat >/dev/null 2>&1
  exit 0
fi

exec python3 -c '
import json, os, subprocess, sys, time

agent = sys.argv[1]
try:
    event = json.loads(sys.stdin.read() or "{}")
except ValueError:
    sys.exit(0)
# a subagent shares the pane with its parent: only the main session is reported
if not isinstance(event, dict) or event.get("agent_id"):
    sys.exit(0)
session = event.get("session_id")
if not isinstance(session, str) or not session:
    sys.exit(0)
argv = [
    os.environ["HERDR_BIN_PATH"], "pane", "report-agent-session", os.environ["HERDR_PANE_ID"],
    "--source", "herdr:" + agent, "--agent", agent, "--seq", str(time.time_ns()),
    "--agent-session-id", session,
]
transcript = event.get("transcript_path")
if agent == "claude" and isinstance(transcript, str) and transcript:
    argv += ["--agent-session-path", transcript]
started = event.get("source")
if event.get("hook_event_name") == "SessionStart" and isinstance(started, str) and started:
    argv += ["--session-start-source", started]
try:
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=2)
except (OSError, subprocess.SubprocessError):
    pass
' @AGENT@
