// installed by herdr-sim: the Herdr simulator's own opencode integration (TUI part).
// reinstalling the integration overwrites this file.
// HERDR_INTEGRATION_ID=opencode-tui
// HERDR_INTEGRATION_VERSION=10
//
// Reports the session the opencode TUI shows to the pane's Herdr, so a restored pane can
// reopen it: when the route moves to another session, one report-agent-session through
// "$HERDR_BIN_PATH" (only inside Herdr, short timeout, failures ignored).

import { execFile } from "node:child_process";

const bin = process.env.HERDR_BIN_PATH ?? "";
const pane = process.env.HERDR_PANE_ID ?? "";
const inside =
  process.env.HERDR_ENV === "1" && bin !== "" && pane !== "" && !!process.env.HERDR_SOCKET_PATH;

export default {
  id: "herdr-sim-tui-session",
  tui: async (api) => {
    if (!inside) return;
    let reported = null;
    const check = () => {
      const route = api?.route?.current;
      const session = route?.name === "session" ? route?.params?.sessionID : null;
      if (!session || session === reported) return;
      reported = session;
      execFile(bin, ["pane", "report-agent-session", pane, "--source", "herdr:opencode",
        "--agent", "opencode", "--seq", String(Date.now() * 1000),
        "--agent-session-id", String(session)], { timeout: 2000 }, () => {});
    };
    const timer = setInterval(check, 500);
    api?.lifecycle?.onDispose?.(() => clearInterval(timer));
  },
};
