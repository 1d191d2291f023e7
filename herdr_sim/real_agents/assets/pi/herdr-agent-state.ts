// HERDR_INTEGRATION_ID=pi
// HERDR_INTEGRATION_VERSION=8
/**
 * pytest-herdr's Herdr integration for pi: tells the Herdr server that owns this pane
 * (a real Herdr or herdr-sim) what pi is doing, through the server's Unix socket.
 *
 * Installed as `$PI_CODING_AGENT_DIR/extensions/herdr-agent-state.ts`, the file name Herdr's
 * own integration uses, so one replaces the other and a pane never gets two reporters.
 * It does nothing unless pi runs in a Herdr pane (HERDR_ENV=1, HERDR_SOCKET_PATH and
 * HERDR_PANE_ID set) in its interactive terminal mode.
 *
 * What it reports (Herdr's socket protocol, source `herdr:pi`, agent `pi`):
 * - `pane.report_agent_session` with the session file when a session starts (with why:
 *   startup, new, resume, fork) and whenever the session file changes;
 * - `pane.report_agent` `working` when a run starts, `idle` once pi has settled (no retry or
 *   queued message left), `blocked` while a dialog waits for the user.
 * Every request is one JSON line on a fresh connection; any reply counts as delivered; a
 * request that gets no reply in 500 ms is tried once more with 1.5 s. Requests leave in the
 * order they were made, each with a larger `seq` (microseconds since the epoch at load,
 * then +1), and a state that is superseded before it was sent is never sent.
 */
import { createConnection } from "node:net";

type State = "idle" | "working" | "blocked";
type Params = Record<string, unknown>;

interface SessionManagerLike {
  getSessionFile(): string | undefined;
  getSessionId(): string | undefined;
}
interface ContextLike {
  mode?: string;
  isIdle(): boolean;
  sessionManager: SessionManagerLike;
}
interface PiLike {
  on(event: string, handler: (event: any, ctx: ContextLike) => unknown): void;
}

const SOURCE = "herdr:pi";
const AGENT = "pi";
const ATTEMPTS_MS = [500, 1500];
/** the session start reasons Herdr understands (pi's "reload" is not one) */
const START_REASONS = new Set(["startup", "new", "resume", "fork"]);

function paneTarget(): { socketPath: string; paneId: string } | undefined {
  const env = process.env;
  if (env.HERDR_ENV !== "1" || !env.HERDR_SOCKET_PATH || !env.HERDR_PANE_ID) return undefined;
  return { socketPath: env.HERDR_SOCKET_PATH, paneId: env.HERDR_PANE_ID };
}

/** One attempt: true once the server answered anything. */
function attempt(socketPath: string, line: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let finished = false;
    const connection = createConnection(socketPath);
    const end = (answered: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      connection.destroy();
      resolve(answered);
    };
    const timer = setTimeout(() => end(false), timeoutMs);
    connection.on("connect", () => connection.write(line));
    connection.on("data", () => end(true));
    connection.on("error", () => end(false));
    connection.on("close", () => end(false));
  });
}

export default function herdrAgentState(pi: PiLike): void {
  const target = paneTarget();
  if (target === undefined) return;

  let seq = Date.now() * 1000;
  let requestNumber = 0;
  let enabled = false;
  let sessionRef: Params = {};
  let reportedRef = "";
  let lastState: State | undefined;
  let blockers = 0;
  let blockedMessage = "";
  // queued requests; a queued state request is rewritten in place by a newer state
  const queue: Array<{ method: string; params: Params; state?: State }> = [];
  let draining = false;

  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0) {
        const next = queue.shift()!;
        requestNumber += 1;
        seq += 1;
        const request = {
          id: `pytest-herdr:pi:${Date.now()}:${requestNumber}`,
          method: next.method,
          params: { pane_id: target!.paneId, source: SOURCE, agent: AGENT, seq, ...next.params },
        };
        const line = JSON.stringify(request) + "\n";
        for (const timeoutMs of ATTEMPTS_MS) {
          if (await attempt(target!.socketPath, line, timeoutMs)) break;
        }
      }
    } finally {
      draining = false;
    }
  }

  function readSession(ctx: ContextLike): void {
    const file = ctx.sessionManager.getSessionFile();
    if (typeof file === "string" && file.startsWith("/")) {
      sessionRef = { agent_session_path: file };
      return;
    }
    const id = ctx.sessionManager.getSessionId();
    sessionRef = typeof id === "string" && id !== "" ? { agent_session_id: id } : {};
  }

  function reportSession(reason?: string): void {
    const key = JSON.stringify(sessionRef);
    if (key === "{}" || (reason === undefined && key === reportedRef)) return;
    reportedRef = key;
    const params: Params = { ...sessionRef };
    if (reason !== undefined && START_REASONS.has(reason)) params.session_start_source = reason;
    queue.push({ method: "pane.report_agent_session", params });
    void drain();
  }

  function reportState(state: State, force = false): void {
    if (!force && state === lastState) return;
    lastState = state;
    const params: Params = { state, ...sessionRef };
    if (state === "blocked" && blockedMessage !== "") params.message = blockedMessage;
    const pending = queue.find((item) => item.state !== undefined);
    if (pending !== undefined) {
      pending.state = state;
      pending.params = params;
    } else {
      queue.push({ method: "pane.report_agent", params, state });
    }
    void drain();
  }

  function settledState(ctx: ContextLike): State {
    if (blockers > 0) return "blocked";
    return ctx.isIdle() ? "idle" : "working";
  }

  pi.on("session_start", (event, ctx) => {
    enabled = ctx.mode === "tui";
    if (!enabled) return;
    readSession(ctx);
    reportSession(typeof event?.reason === "string" ? event.reason : "startup");
    reportState(settledState(ctx), true);
  });

  pi.on("agent_start", (_event, ctx) => {
    if (!enabled) return;
    readSession(ctx);
    reportSession();
    reportState(blockers > 0 ? "blocked" : "working");
  });

  pi.on("agent_settled", (_event, ctx) => {
    if (!enabled) return;
    reportState(settledState(ctx));
  });

  pi.on("ui_prompt_start", (event, ctx) => {
    if (!enabled) return;
    blockers += 1;
    blockedMessage = typeof event?.title === "string" ? event.title : "";
    reportState("blocked");
  });

  pi.on("ui_prompt_end", (_event, ctx) => {
    if (!enabled) return;
    blockers = Math.max(0, blockers - 1);
    if (blockers === 0) reportState(settledState(ctx));
  });
}
