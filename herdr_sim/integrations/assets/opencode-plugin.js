// installed by herdr-sim: the Herdr simulator's own opencode integration.
// reinstalling the integration overwrites this file; add your own plugins beside it.
// HERDR_INTEGRATION_ID=opencode
// HERDR_INTEGRATION_VERSION=10
//
// Maps opencode's events to Herdr states (working, blocked, idle) and reports them through
// "$HERDR_BIN_PATH" as Herdr's integration guide describes: only inside Herdr, one report at
// a time with a short timeout, only the newest pending state kept, failures ignored.

import { execFile } from "node:child_process";

const SOURCE = "herdr:opencode";
const bin = process.env.HERDR_BIN_PATH ?? "";
const pane = process.env.HERDR_PANE_ID ?? "";
const inside =
  process.env.HERDR_ENV === "1" && bin !== "" && pane !== "" && !!process.env.HERDR_SOCKET_PATH;

const STATES = {
  "session.idle": "idle",
  "permission.asked": "blocked",
  "question.asked": "blocked",
  "permission.replied": "working",
  "question.replied": "working",
  "question.rejected": "working",
  "tool.execute.before": "working",
  "tool.execute.after": "working",
};

let busy = false;
let waiting = null;
let counter = 0;

function seq() {
  counter = (counter + 1) % 1000;
  return String(Date.now() * 1000 + counter);
}

function send(args) {
  if (!inside) return;
  if (busy) {
    waiting = args;
    return;
  }
  busy = true;
  execFile(bin, args, { timeout: 2000 }, () => {
    busy = false;
    const next = waiting;
    waiting = null;
    if (next) send(next);
  });
}

function stateOf(event) {
  if (event.type === "session.status") {
    return event.properties?.status?.type === "idle" ? "idle" : "working";
  }
  return STATES[event.type];
}

export const HerdrSimAgentState = async () => ({
  event: async ({ event }) => {
    const state = stateOf(event);
    if (!state) return;
    const args = ["pane", "report-agent", pane, "--source", SOURCE, "--agent", "opencode",
      "--state", state, "--seq", seq()];
    const session = event.properties?.sessionID ?? event.properties?.info?.id;
    if (session) args.push("--agent-session-id", String(session));
    send(args);
  },
});
