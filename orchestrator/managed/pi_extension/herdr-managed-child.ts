// fake pi: orchestrator.managed.pi_extension.fake_pi
/**
 * pytest-herdr's managed-child extension for pi (seed 002): makes a real pi session a managed
 * agent that a controller delegates to through the V4 file mailbox.
 *
 * It does nothing unless pi was started as a managed child (`PI_HERDSMAN_MAILBOX` set by the
 * controller, with the rest of the child environment: see orchestrator/managed/env.py). Then:
 *
 * - It starts the child-protocol bridge `$PI_HERDSMAN_PYTHON -m orchestrator.managed.child_cli`
 *   once and keeps it for the life of the pi process. Every protocol rule (which record is
 *   accepted when, the one result per assignment, state.json) lives in that Python bridge;
 *   this file only tells it what pi does and applies what it answers. Node never writes a
 *   mailbox record itself.
 * - At session start it says `hello` (pi's session id and file, the cwd, the pid); the
 *   bridge then writes the first state.json, the controller's proof that the child is up.
 * - Every 250 ms it polls the bridge and applies the actions it hands over: `start_turn` →
 *   a new user message; `steer` → pi's steering queue (delivered at the next steering
 *   boundary, never cancelling); `abort_and_start` → pi's native abort, then, once pi has
 *   settled, a new user message. An action naming its mailbox record (`id`) is injected as
 *   the control marker `__PI_HERDSMAN_AGENT_V4__:<id>`, which this extension's `input`
 *   handler turns back into the text, so the session holds the text and a marker typed by
 *   anyone else is dropped.
 * - It reports a pi operation's start (`turn_start`, at the first `agent_start` of a run)
 *   and end (`turn_end` with the last assistant message's text, at `agent_settled`: pi
 *   will not continue on its own, no retry or queued steer left; no text when pi aborted
 *   the run on its own, e.g. Escape in the pane), tool starts and ends, and the session
 *   file whenever it changes. The run an interrupt aborted ends with no text (the bridge
 *   posts nothing for it) and the interrupt's turn, a new operation, continues the same
 *   assignment.
 * - It registers the `ask_owner` tool: the only and final tool call of a turn; it posts the
 *   question through the bridge and ends the turn (`terminate`). pi's `--tools` allowlist
 *   (and `--no-tools`) unregisters every tool it does not name, extension tools included,
 *   and no extension can undo that: a controller that passes `--tools` must name
 *   `ask_owner` in it (`--tools ask_owner` for a child with no other tool).
 * - A `bash`/`powershell` call the model made without a timeout gets 600 s, so a hung
 *   command cannot keep a managed agent working forever.
 * - A delegating child (its definition lists `agents`: `PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS`
 *   is not `[]`) also gets the nine `agent_*` tools. Their names, descriptions and schemas
 *   come from `$PI_HERDSMAN_PYTHON -m orchestrator tools` and each call runs
 *   `$PI_HERDSMAN_PYTHON -m orchestrator call <tool> <json>` (no shell) with this process's
 *   environment, which makes the child its own controller (orchestrator/managed/delegation.py):
 *   one Python implementation serves the lead and every delegating child. A failed call
 *   (`ok: false`) is a failed tool call carrying the structured error's text.
 * - Context retirement (the controller's `contextRetirement`, `PI_HERDSMAN_CONTEXT_RETIREMENT`):
 *   when pi is about to compact the session itself (`session_before_compact`, reason
 *   `threshold` or `overflow`; a user's `/compact` is `manual`) during an assignment, the
 *   bridge marks the session retired (`sessionRetired` in state.json, before the result, so
 *   the controller marks the result retired and refuses `agent_continue` of the session). A
 *   `threshold` compaction is cancelled (an `overflow` one must proceed for the turn to go
 *   on), and every later model call of the run gets an instruction to stop new work and end
 *   with a self-contained handoff.
 *
 * Requests to the bridge are one JSON line each on its stdin, answered in order by one JSON
 * line on its stdout; they are sent one at a time in the order pi's events happened.
 */
import { execFile, execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

type Json = Record<string, unknown>;

interface SessionManagerLike {
  getSessionFile(): string | undefined;
  getSessionId(): string | undefined;
}
interface ContextLike {
  cwd: string;
  isIdle(): boolean;
  abort(): void;
  sessionManager: SessionManagerLike;
  ui?: {
    notify?(message: string, level?: string): void;
    getEditorText?(): string;
    setEditorText?(text: string): void;
  };
}
interface PiLike {
  on(event: string, handler: (event: any, ctx: ContextLike) => unknown): void;
  registerTool(tool: Json): void;
  sendUserMessage(content: string, options?: { deliverAs?: "steer" | "followUp" }): void;
}
interface Action {
  do: string;
  text: string;
  /** the mailbox record's id, when the bridge names it: the text goes in under the marker */
  id?: string;
}

const POLL_MS = 250;
/** protocol V4's control marker (orchestrator.managed.mailbox.MARKER) */
const MARKER = "__PI_HERDSMAN_AGENT_V4__:";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DEFAULT_SHELL_TIMEOUT_S = 600;
const SHELL_TOOLS = new Set(["bash", "powershell"]);
const STDERR_KEEP = 4096;
const ASK_REFUSED = "Agent cannot ask its owner";
const RETIRED_INSTRUCTION =
  "Your session was retired after context pressure: it will not be continued. Start no new " +
  "work. Finish the current coherent operation, resolve any running dependent work, and end " +
  "your turn with a self-contained handoff: the work done, the current state, the files " +
  "touched, the validation run, open issues and the next steps.";
const ASK_ALONE =
  "Call ask_owner alone as the final tool call of the turn, then stop; no other tool call " +
  "may come with it.";

/** The bridge: one Python process per pi process, kept across pi's session replacements. */
class Bridge {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: Array<(answer: Json) => void> = [];
  private buffered = "";
  private stderrTail = "";
  private chain: Promise<unknown> = Promise.resolve();
  dead: string | undefined;

  constructor(python: string) {
    this.child = spawn(python, ["-m", "orchestrator.managed.child_cli"], {
      env: process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => this.read(chunk));
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_KEEP);
    });
    this.child.on("error", (error) => this.fail(`bridge did not start: ${error.message}`));
    this.child.on("exit", (code, signal) =>
      this.fail(`bridge exited (${signal ?? code}): ${this.stderrTail.trim() || "no output"}`),
    );
    this.child.stdin.on("error", () => undefined); // a dead bridge is reported by "exit"
  }

  private read(chunk: string): void {
    this.buffered += chunk;
    let newline = this.buffered.indexOf("\n");
    while (newline >= 0) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      newline = this.buffered.indexOf("\n");
      if (line.trim() === "") continue;
      let answer: Json;
      try {
        answer = JSON.parse(line) as Json;
      } catch {
        const message = `bad bridge line: ${line.slice(0, 200)}`;
        answer = { ok: false, error: { category: "internal_failure", message } };
      }
      this.waiting.shift()?.(answer);
    }
  }

  private fail(reason: string): void {
    if (this.dead !== undefined) return;
    this.dead = reason;
    for (const resolve of this.waiting.splice(0)) {
      resolve({ ok: false, error: { category: "internal_failure", message: reason } });
    }
  }

  /** Send one request after every earlier one was answered; its answer. */
  request(request: Json): Promise<Json> {
    const next = this.chain.then(
      () =>
        new Promise<Json>((resolve) => {
          if (this.dead !== undefined) {
            resolve({ ok: false, error: { category: "internal_failure", message: this.dead } });
            return;
          }
          this.waiting.push(resolve);
          this.child.stdin.write(JSON.stringify(request) + "\n");
        }),
    );
    this.chain = next;
    return next;
  }

  close(): void {
    this.child.stdin.end();
  }
}

const BRIDGE_KEY = Symbol.for("pytest-herdr.managed-child.bridge");
type Registry = { [BRIDGE_KEY]?: { bridge: Bridge; greeted: boolean } };

function sharedBridge(python: string): { bridge: Bridge; greeted: boolean } {
  const registry = globalThis as Registry;
  registry[BRIDGE_KEY] ??= { bridge: new Bridge(python), greeted: false };
  return registry[BRIDGE_KEY]!;
}

function errorText(answer: Json): string {
  const error = answer.error as { category?: string; message?: string } | undefined;
  return `${error?.category ?? "internal_failure"}: ${error?.message ?? "bridge request failed"}`;
}

function textOf(message: any): string | null {
  if (!message || !Array.isArray(message.content)) return null;
  const text = message.content
    .filter((part: any) => part?.type === "text" && typeof part.text === "string")
    .map((part: any) => part.text as string)
    .join("");
  return text === "" ? null : text;
}

function toolCallCount(message: any): number {
  if (!message || !Array.isArray(message.content)) return 0;
  return message.content.filter((part: any) => part?.type === "toolCall").length;
}

/** `files` of an ask as `<file name=… bytes=… />` references: readable regular files only. */
function fileReferences(files: unknown, cwd: string): string {
  if (files === undefined) return "";
  if (!Array.isArray(files)) throw new Error("files must be an array of paths");
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const entry of files) {
    if (typeof entry !== "string" || entry.trim() === "") {
      throw new Error("files entries must be paths");
    }
    let canonical: string;
    let size: number;
    try {
      canonical = realpathSync(isAbsolute(entry) ? entry : resolve(cwd, entry));
      const info = statSync(canonical);
      if (!info.isFile()) throw new Error("not a regular file");
      size = info.size;
    } catch (error) {
      throw new Error(`Cannot read file ${entry}: ${(error as Error).message}`);
    }
    if (seen.has(canonical)) continue;
    seen.add(canonical);
    const name = canonical.replace(
      /[&"<>\u0000-\u001f]/g,
      (c) => `&#x${c.charCodeAt(0).toString(16).padStart(2, "0")};`,
    );
    lines.push(`<file name="${name}" bytes="${size}" />`);
  }
  return lines.join("\n");
}

/** The definitions this child may delegate to (`[]`: a leaf; unreadable: a leaf too). */
function allowedDefinitions(raw: string | undefined): string[] {
  try {
    const value = JSON.parse(raw ?? "[]");
    return Array.isArray(value) ? value.filter((v) => typeof v === "string") : [];
  } catch {
    return [];
  }
}

const MANAGED_CALL_TIMEOUT_MS = 120_000;
const MANAGED_OUTPUT_LIMIT = 16 * 1024 * 1024;

/** The nine managed-agent tools as the orchestrator lists them (none when it cannot). */
function managedTools(python: string): Json[] {
  try {
    const out = execFileSync(python, ["-m", "orchestrator", "tools"], {
      env: process.env,
      encoding: "utf8",
      timeout: 30_000,
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: MANAGED_OUTPUT_LIMIT,
    });
    const listed = JSON.parse(out)?.tools;
    return Array.isArray(listed)
      ? listed.filter((t: any) => typeof t?.name === "string" && t.name.startsWith("agent_"))
      : [];
  } catch {
    return [];
  }
}

/** One managed-agent tool call through `python -m orchestrator call` (its JSON answer). */
function callManaged(python: string, name: string, params: unknown): Promise<Json> {
  return new Promise((resolveCall, reject) => {
    execFile(
      python,
      ["-m", "orchestrator", "call", name, JSON.stringify(params ?? {})],
      { env: process.env, timeout: MANAGED_CALL_TIMEOUT_MS, maxBuffer: MANAGED_OUTPUT_LIMIT },
      (error, stdout, stderr) => {
        const line = String(stdout).trim().split("\n").pop() ?? "";
        try {
          resolveCall(JSON.parse(line) as Json);
        } catch {
          const why = String(stderr).trim().slice(-STDERR_KEEP) || String(error ?? "no answer");
          reject(new Error(`${name} could not be run: ${why}`));
        }
      },
    );
  });
}

function registerManagedTools(pi: PiLike, python: string): void {
  for (const tool of managedTools(python)) {
    const name = String(tool.name);
    pi.registerTool({
      name,
      label: name,
      description: String(tool.description ?? name),
      parameters: tool.inputSchema,
      async execute(_id: string, params: unknown) {
        const answer = await callManaged(python, name, params);
        const text = typeof answer.text === "string" ? answer.text : JSON.stringify(answer);
        if (answer.ok !== true) throw new Error(text);
        return { content: [{ type: "text", text }], details: answer };
      },
    });
  }
}

export default function herdrManagedChild(pi: PiLike): void {
  const env = process.env;
  if (!env.PI_HERDSMAN_MAILBOX) return; // not a managed child: nothing at all
  const python = env.PI_HERDSMAN_PYTHON ?? "";

  let ctx: ContextLike | undefined;
  let shared: { bridge: Bridge; greeted: boolean } | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let polling = false;
  let running = false; // a pi operation (run) began (turn_start sent), its end not yet sent
  let asked = false; // this operation called ask_owner: it ends at the next settle
  let lastAssistantText: string | null = null;
  let lastAssistantToolCalls = 0;
  let restart: Action | undefined; // abort_and_start: the turn to start once pi settled
  let aborts = 0; // abort_and_start actions whose aborted operation has not been ended yet
  const injected = new Map<string, string>(); // marker id → the control's text
  let reportedFile = "";
  let retired = false; // the bridge retired this session (context pressure)

  function notify(message: string): void {
    try {
      ctx?.ui?.notify?.(`managed agent: ${message}`, "error");
    } catch {
      // a stale context after a session replacement: the next event brings a fresh one
    }
  }

  async function send(request: Json): Promise<Json> {
    if (shared === undefined) {
      return { ok: false, error: { category: "internal_failure", message: "bridge not started" } };
    }
    const answer = await shared.bridge.request(request);
    if (answer.ok !== true && request.op !== "ask") {
      notify(`${String(request.op)} refused: ${errorText(answer)}`);
    }
    return answer;
  }

  function reportSessionFile(): void {
    const file = ctx?.sessionManager.getSessionFile();
    if (typeof file !== "string" || !file.startsWith("/") || file === reportedFile) return;
    reportedFile = file;
    void send({ op: "event", event: "session_file", path: file });
  }

  /** Give pi a control's text as a user message: under the marker `MARKER<record id>` when
   * the record is named (the `input` handler below puts the text back), else as it is. */
  function deliver(action: Action, deliverAs?: "steer" | "followUp"): void {
    const options = deliverAs === undefined ? undefined : { deliverAs };
    if (typeof action.id === "string" && UUID.test(action.id)) {
      injected.set(action.id, action.text);
      pi.sendUserMessage(MARKER + action.id, options);
    } else {
      pi.sendUserMessage(action.text, options);
    }
  }

  function idle(): boolean {
    return ctx === undefined || ctx.isIdle();
  }

  function apply(action: Action): void {
    if (typeof action?.text !== "string") return;
    if (action.do === "start_turn") {
      deliver(action, idle() ? undefined : "followUp");
    } else if (action.do === "steer") {
      deliver(action, idle() ? undefined : "steer");
    } else if (action.do === "abort_and_start") {
      // The bridge hands this only while an operation works (or was just started), and
      // wants exactly one turn_end, posting nothing, for each operation aborted: the
      // running one, and an earlier interrupt's turn this one supersedes before it began.
      aborts += 1;
      restart = action; // delivered from agent_settled, once the abort took effect
      if (running || !idle()) abortNatively();
      else settleAborted(); // nothing of pi's runs yet: end the aborted start at once
    } else {
      notify(`unknown bridge action ${String(action.do)}`);
    }
  }

  async function poll(): Promise<void> {
    if (polling || shared === undefined || shared.bridge.dead !== undefined) return;
    // Nothing is taken between an operation's last step and its reported end: after an ask
    // (the reply must start the next turn, not join the one that asked) and while pi is
    // already idle but its settle is still being handled.
    if (asked || (running && idle())) return;
    polling = true;
    try {
      const answer = await shared.bridge.request({ op: "poll" });
      if (answer.ok !== true) return;
      const actions = Array.isArray(answer.actions) ? (answer.actions as Action[]) : [];
      for (const action of actions) apply(action);
    } finally {
      polling = false;
    }
  }

  pi.on("session_start", async (_event, eventCtx) => {
    ctx = eventCtx;
    if (!python.startsWith("/")) {
      // no interpreter to run the bridge with: no hello, so the controller sees the child
      // never became ready (pane_not_ready) instead of a child that half works
      notify("PI_HERDSMAN_PYTHON is not an absolute interpreter path: not managed");
      return;
    }
    shared = sharedBridge(python);
    if (!shared.greeted) {
      shared.greeted = true;
      const file = eventCtx.sessionManager.getSessionFile();
      const answer = await send({
        op: "hello",
        piSessionId: eventCtx.sessionManager.getSessionId() ?? null,
        piSessionFile: typeof file === "string" && file.startsWith("/") ? file : null,
        cwd: eventCtx.cwd,
        pid: process.pid,
      });
      if (answer.ok !== true) return; // (notified) no polling for a child the bridge refused
      if (typeof file === "string") reportedFile = file;
    } else {
      reportSessionFile(); // a replaced session (reload, resume) in the same pi process
    }
    if (timer === undefined) timer = setInterval(() => void poll(), POLL_MS);
    void poll();
  });

  // a marker we injected becomes its control's text before pi reads it; a marker that is
  // not ours (typed, or its text already used) never reaches the model
  pi.on("input", (event) => {
    if (typeof event?.text !== "string" || !event.text.startsWith(MARKER)) return undefined;
    const id = event.text.slice(MARKER.length);
    const text = event.source === "extension" ? injected.get(id) : undefined;
    if (text === undefined) return { action: "handled" };
    injected.delete(id);
    return { action: "transform", text };
  });

  pi.on("session_shutdown", (event) => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    if (event?.reason === "quit") shared?.bridge.close();
  });

  pi.on("agent_start", (_event, eventCtx) => {
    ctx = eventCtx;
    if (!running) {
      running = true;
      lastAssistantText = null;
      void send({ op: "event", event: "turn_start" });
    }
    reportSessionFile();
  });

  pi.on("message_end", (event) => {
    if (event?.message?.role !== "assistant") return;
    lastAssistantText = textOf(event.message);
    lastAssistantToolCalls = toolCallCount(event.message);
  });

  pi.on("tool_execution_start", () => void send({ op: "event", event: "tool_start" }));
  pi.on("tool_execution_end", () => void send({ op: "event", event: "tool_end" }));

  pi.on("tool_call", (event) => {
    const input = event?.input;
    if (!SHELL_TOOLS.has(event?.toolName) || typeof input !== "object" || input === null) return;
    if (input.timeout === undefined || input.timeout === null) {
      input.timeout = DEFAULT_SHELL_TIMEOUT_S;
    }
  });

  /** pi's native abort. In the terminal UI it also drops the queued steers, which is what
   * an interrupt wants, but puts their text into the editor: the editor is set back to what
   * it held, so a superseded steer is not left there to be sent by the next Enter. */
  function abortNatively(): void {
    let editor: string | undefined;
    try {
      editor = ctx?.ui?.getEditorText?.();
    } catch {
      editor = undefined;
    }
    ctx!.abort();
    if (editor === undefined) return;
    try {
      ctx?.ui?.setEditorText?.(editor);
    } catch {
      // no editor in this mode: nothing was put there either
    }
  }

  /** End every operation our aborts stopped (one turn_end each, no text), then start the
   * interrupt's turn: the same assignment goes on. */
  function settleAborted(): void {
    running = false;
    asked = false;
    lastAssistantText = null;
    for (; aborts > 0; aborts -= 1) {
      void send({ op: "event", event: "turn_end", assistantText: null });
    }
    const action = restart!;
    restart = undefined;
    deliver(action); // from agent_settled: runs once every settled handler finished
  }

  pi.on("agent_settled", (event, eventCtx) => {
    ctx = eventCtx;
    reportSessionFile();
    if (restart !== undefined) {
      settleAborted();
      return;
    }
    if (!running) return;
    running = false;
    asked = false;
    // a run pi aborted on its own (Escape in the pane) ends without a final text
    const text = event?.aborted === true ? null : lastAssistantText;
    void send({ op: "event", event: "turn_end", assistantText: text });
  });

  if (isAbsolute(python) && allowedDefinitions(env.PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS).length > 0) {
    registerManagedTools(pi, python);
  }
  pi.on("session_before_compact", async (event) => {
    const reason = event?.reason;
    if (typeof reason !== "string" || reason === "manual") return undefined;
    const answer = await send({ op: "event", event: "compact", reason });
    if (answer.ok !== true) return undefined;
    retired = retired || answer.retired === true;
    return answer.cancel === true ? { cancel: true } : undefined;
  });

  // a retired session's later model calls see the handoff instruction (not persisted)
  pi.on("context", (event) => {
    if (!retired || !running || !Array.isArray(event?.messages)) return undefined;
    const instruction = {
      role: "user",
      content: [{ type: "text", text: RETIRED_INSTRUCTION }],
      timestamp: Date.now(),
    };
    return { messages: [...event.messages, instruction] };
  });

  pi.registerTool({
    name: "ask_owner",
    label: "Ask owner",
    description:
      "Ask your direct owner for a decision you need to continue. Call it alone as the final " +
      "tool call of the turn, then stop: the assignment waits for the owner's reply, which " +
      "arrives as your next message. Only one question may be outstanding.",
    promptSnippet: "Ask your owner a question when you cannot continue without a decision",
    parameters: {
      type: "object",
      properties: {
        question: { type: "string", minLength: 1, description: "The question for your owner" },
        files: {
          type: "array",
          items: { type: "string" },
          description: "Paths of files the owner should look at (optional)",
        },
      },
      required: ["question"],
      additionalProperties: false,
    },
    async execute(
      _id: string,
      params: any,
      _signal: unknown,
      _onUpdate: unknown,
      toolCtx: ContextLike,
    ) {
      const question = typeof params?.question === "string" ? params.question.trim() : "";
      if (question === "") throw new Error("ask_owner needs a non-empty question");
      if (lastAssistantToolCalls !== 1) throw new Error(ASK_ALONE);
      const references = fileReferences(params?.files, toolCtx?.cwd ?? ctx?.cwd ?? process.cwd());
      const text = references === "" ? question : `${references}\n\n${question}`;
      const answer = await send({ op: "ask", question: text });
      if (answer.ok !== true) {
        // the bridge's refusals already say "Agent cannot ask its owner: <reason>"
        const reason = errorText(answer);
        throw new Error(reason.includes(ASK_REFUSED) ? reason : `${ASK_REFUSED}: ${reason}`);
      }
      asked = true;
      return {
        content: [
          {
            type: "text",
            text:
              "The question was sent to your owner. This assignment is blocked until the " +
              "reply, which resumes it automatically. Stop now.",
          },
        ],
        details: { askId: answer.askId },
        terminate: true,
      };
    },
  });
}
