// installed by herdr-sim: the Herdr simulator's own pi integration.
// reinstalling the integration overwrites this file; add your own extensions beside it.
// HERDR_INTEGRATION_ID=pi
// HERDR_INTEGRATION_VERSION=8
//
// Reports pi's state (idle, working), its session and its exit to the pane's Herdr through
// "$HERDR_BIN_PATH", as Herdr's integration guide describes: only inside Herdr, one report
// at a time with a short timeout, only the newest pending state kept, failures ignored.

import { execFile } from "node:child_process";

const SOURCE = "herdr:pi";
const bin = process.env.HERDR_BIN_PATH ?? "";
const pane = process.env.HERDR_PANE_ID ?? "";
const inside =
  process.env.HERDR_ENV === "1" && bin !== "" && pane !== "" && !!process.env.HERDR_SOCKET_PATH;

let busy = false;
let waiting: string[] | null = null;
let counter = 0;

function seq(): string {
  counter = (counter + 1) % 1000;
  return String(Date.now() * 1000 + counter);
}

function send(args: string[]): void {
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

function sessionArgs(ctx: any): string[] {
  const id = ctx?.sessionManager?.getSessionId?.();
  const file = ctx?.sessionManager?.getSessionFile?.();
  const args: string[] = [];
  if (id) args.push("--agent-session-id", String(id));
  if (file) args.push("--agent-session-path", String(file));
  return args;
}

function report(state: string, ctx: any): void {
  send(["pane", "report-agent", pane, "--source", SOURCE, "--agent", "pi", "--state", state,
    "--seq", seq(), ...sessionArgs(ctx)]);
}

export default function (pi: any) {
  pi.on("session_start", (_event: unknown, ctx: any) => report("idle", ctx));
  pi.on("agent_start", (_event: unknown, ctx: any) => report("working", ctx));
  pi.on("agent_end", (_event: unknown, ctx: any) => report("idle", ctx));
  pi.on("session_shutdown", () =>
    send(["pane", "release-agent", pane, "--source", SOURCE, "--agent", "pi", "--seq", seq()]));
}
