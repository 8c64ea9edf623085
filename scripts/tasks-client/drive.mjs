// Drive one tool call through the official TypeScript MCP client and its Tasks extension
// (`@modelcontextprotocol/ext-tasks`), on the 2026-07-28 wire, and report what it saw.
//
//   node drive.mjs '{"url": "...", "token": "...", "tool": "long_report", "arguments": {...},
//                    "cancelWhen": "working", "inputAction": "accept"}'
//
// Every line on stdout is one JSON object: {"event": "task", "task": {...}} for each task state
// the client observed, {"event": "input", "request": {...}} for each question handed to the
// application, then one {"event": "outcome", ...} with how the client settled the call (its
// status, the result or the error message). `cancelWhen`: cancel the task (tasks/cancel, through
// the client) once it is seen in that status. `inputAction`: how the application answers a
// question (a URL-mode one: "accept" = the user opened the link). Exit status 0 whenever the
// client settled; the test reads the outcome.
//
// The SDK's Client speaks 2026-07-28 itself (server/discover, `versionNegotiation` pinned); the
// task traffic (tools/call, tasks/*) goes through `rawDispatch`, the host's own request path,
// which ext-tasks requires for that generation: here one fetch per request, with the headers the
// 2026-07-28 Streamable HTTP transport sends.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";

const PROTOCOL_VERSION = "2026-07-28";
const options = JSON.parse(process.argv[2]);
const auth = options.token ? { Authorization: `Bearer ${options.token}` } : {};
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const capabilities = { elicitation: { form: {}, url: {} } };
const clientInfo = { name: "mcpsite-tasks-driver", version: "1.0.0" };
const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: { pin: PROTOCOL_VERSION } } });
await client.connect(new StreamableHTTPClientTransport(new URL(options.url), { requestInit: { headers: auth } }));

let nextId = 1;
async function rawDispatch(request, dispatchOptions = {}) {
  const body = { jsonrpc: "2.0", id: nextId++, ...request };
  const headers = {
    ...auth,
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL_VERSION,
    "Mcp-Method": body.method,
  };
  const name = body.params?.name ?? body.params?.taskId;
  if (typeof name === "string") headers["Mcp-Name"] = name;
  const response = await fetch(options.url, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: dispatchOptions.signal,
  });
  let text = await response.text();
  if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const data = text.split("\n").filter((line) => line.startsWith("data:"));
    text = data.length ? data[data.length - 1].slice(5) : "";
  }
  const message = JSON.parse(text);
  return "error" in message ? { kind: "error", error: message.error } : { kind: "result", result: message.result };
}

const session = createTaskSessionFromClient(client, {
  endpointId: options.url,
  rawDispatch,
  v2RequestFraming: { protocolVersion: PROTOCOL_VERSION, clientInfo, clientCapabilities: capabilities },
  onInputRequest: async (request) => {
    say({ event: "input", request });
    return { action: options.inputAction ?? "accept" };
  },
});

try {
  const execution = await session.callTool(options.tool, options.arguments ?? {}, { task: { preference: "require" } });
  let cancelled = false;
  const { outcome } = await execution.settle({
    onEvent: async (event) => {
      if (event.type !== "task") return;
      say({ event: "task", task: { taskId: event.task.taskId, status: event.task.status } });
      if (options.cancelWhen === event.task.status && !cancelled) {
        cancelled = true;
        await execution.cancel();
      }
    },
  });
  say({
    event: "outcome",
    kind: execution.kind,
    status: outcome.status,
    ...(outcome.status === "completed" ? { result: outcome.result } : {}),
    ...(outcome.status === "failed" ? { error: String(outcome.error?.message ?? outcome.error) } : {}),
  });
} finally {
  await session.close();
  await client.close();
}
