// pytest-herdr's Herdr integration for opencode: a server plugin reporting the pane's root
// session and its state (working, blocked, idle) to the Herdr server of the pane it runs in.
// Written for pytest-herdr from Herdr's integration guide; installed where
// `herdr integration install opencode` puts Herdr's plugin, under the same name
// ($XDG_CONFIG_HOME/opencode/plugins/herdr-agent-state.js). Outside a Herdr pane it does
// nothing. Sub-agent (child) sessions never replace the pane's session.
// HERDR_INTEGRATION_ID=opencode
// HERDR_INTEGRATION_VERSION=10
import net from "node:net";

const SOURCE = "herdr:opencode";
const AGENT = "opencode";
// opencode's session status types, as Herdr states
const STATUS_STATES = { idle: "idle", busy: "working", retry: "working" };
const EVENT_STATES = {
  "permission.asked": "blocked",
  "question.asked": "blocked",
  "permission.replied": "working",
  "question.replied": "working",
  "question.rejected": "working",
  "tool.execute.before": "working",
  "session.idle": "idle",
};

function sendLine(socketPath, line, timeoutMs) {
  // one JSON line per connection; any reply counts as delivered
  return new Promise((resolve) => {
    const conn = net.createConnection(socketPath);
    const done = (delivered) => {
      conn.destroy();
      resolve(delivered);
    };
    conn.setTimeout(timeoutMs, () => done(false));
    conn.on("error", () => done(false));
    conn.on("data", () => done(true));
    conn.on("connect", () => conn.write(line));
  });
}

export const HerdrAgentState = async () => {
  const { HERDR_ENV, HERDR_SOCKET_PATH: socketPath, HERDR_PANE_ID: paneId } = process.env;
  if (HERDR_ENV !== "1" || !socketPath || !paneId) {
    return {};
  }
  let seq = Date.now() * 1000;
  let chain = Promise.resolve();
  let rootSession;
  let lastState;
  const children = new Set();

  const report = (method, fields) => {
    seq += 1;
    const params = { pane_id: paneId, source: SOURCE, agent: AGENT, seq, ...fields };
    const line = JSON.stringify({ id: `${SOURCE}:${seq}`, method, params }) + "\n";
    // requests leave in order; no reply within 500 ms: one more try with 1.5 s
    chain = chain.then(async () => {
      if (!(await sendLine(socketPath, line, 500))) {
        await sendLine(socketPath, line, 1500);
      }
    });
    return chain;
  };
  // Herdr stores a full-lifecycle agent's first session only with a recognised start
  // source: "new" for a root session opencode just created here, "select" for one the pane
  // turned to (a session event of another root session)
  const adopt = (sessionID, start = "select") => {
    if (!sessionID || children.has(sessionID) || sessionID === rootSession) {
      return;
    }
    rootSession = sessionID;
    report("pane.report_agent_session", {
      agent_session_id: sessionID,
      session_start_source: start,
    });
  };
  const state = (next, sessionID) => {
    if (sessionID && children.has(sessionID)) {
      return; // a sub-agent's turn: the root session's state stands
    }
    adopt(sessionID);
    if (next === lastState) {
      return;
    }
    lastState = next;
    const fields = { state: next };
    if (rootSession) {
      fields.agent_session_id = rootSession;
    }
    report("pane.report_agent", fields);
  };

  return {
    "chat.message": async ({ sessionID }) => state("working", sessionID),
    event: async ({ event }) => {
      const properties = (event && event.properties) || {};
      const info = properties.info;
      if (info && info.id && info.parentID) {
        children.add(info.id);
      }
      const sessionID = typeof properties.sessionID === "string" ? properties.sessionID : undefined;
      if (event.type === "session.created" || event.type === "session.updated") {
        if (info && info.id && !info.parentID) {
          adopt(info.id, event.type === "session.created" ? "new" : "select");
        }
        return;
      }
      if (event.type === "session.status") {
        const status = properties.status;
        const next = STATUS_STATES[typeof status === "string" ? status : status && status.type];
        if (next) {
          state(next, sessionID);
        }
        return;
      }
      const next = EVENT_STATES[event.type];
      if (next) {
        state(next, sessionID);
      }
    },
  };
};
