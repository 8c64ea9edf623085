// The view's side of MCP Apps (SEP-1865): JSON-RPC 2.0 over postMessage with the host, which
// renders this document in a sandboxed iframe. Inlined into every view and allowed by its hash:
// no script is loaded from anywhere. A view calls `mcpApp.start({...})` with its handlers.
"use strict";
const mcpApp = (() => {
  const pending = new Map();
  let nextId = 1;
  const handlers = {};
  const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      send({ id, method, params });
    });
  const notify = (method, params) => send({ method, params });

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && !message.method) {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message || "host error"));
      else waiting.resolve(message.result);
      return;
    }
    if (message.method === "ui/resource-teardown" || message.method === "ping") {
      send({ id: message.id, result: {} });
      return;
    }
    const handler = {
      "ui/notifications/tool-input": handlers.onInput,
      "ui/notifications/tool-result": handlers.onResult,
      "ui/notifications/tool-cancelled": handlers.onCancelled,
      "ui/notifications/host-context-changed": handlers.onContext,
    }[message.method];
    if (handler) handler(message.params || {});
    else if (message.id !== undefined) send({ id: message.id, error: { code: -32601, message: "Method not found" } });
  });

  const reportSize = () => {
    const root = document.documentElement;
    notify("ui/notifications/size-changed", { width: root.scrollWidth, height: root.scrollHeight });
  };

  return {
    async start(given) {
      Object.assign(handlers, given);
      const answer = await request("ui/initialize", {
        protocolVersion: "2026-01-26",
        appInfo: { name: "mcpsite-" + document.body.dataset.view, version: "1" },
        appCapabilities: {},
      });
      notify("ui/notifications/initialized", {});
      new ResizeObserver(reportSize).observe(document.body);
      return answer.hostContext || {};
    },
    // An app-only tool of this server, called by the host for the view: its structured answer.
    async call(name, args) {
      const result = await request("tools/call", { name, arguments: args });
      if (result.isError) {
        const text = (result.content || []).map((c) => c.text || "").join(" ");
        // The SDK says which tool failed; the person reading the card needs only why.
        throw new Error(text.replace(/^Error executing tool \S+: /, "") || "the call failed");
      }
      return result.structuredContent || {};
    },
    openLink(url) {
      return request("ui/open-link", { url });
    },
    textOf(result) {
      return (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    },
  };
})();

// Small DOM helpers every view uses; text goes in as text, never as markup.
const $ = (id) => document.getElementById(id);
const show = (id, text) => {
  const node = $(id);
  node.textContent = text == null ? "" : String(text);
  node.closest("[data-row]")?.toggleAttribute("hidden", text == null || text === "");
};

// Ask `read()` every `ms` until it says to stop (returns true) or fails; one call in flight at a time.
const everyUntil = (ms, read) => {
  let timer = null;
  const tick = async () => {
    timer = null;
    let done = false;
    try {
      done = await read();
    } catch (error) {
      // Refused or gone: the card says why and stops asking.
      show("error", error.message);
      document.body.dataset.status = "unavailable";
      if ($("badge")) Object.assign($("badge"), { textContent: "Unavailable" }).dataset.tone = "off";
      if ($("bar")) $("bar").hidden = true;
      done = true;
    }
    if (!done) timer = setTimeout(tick, ms);
  };
  return {
    now() {
      if (timer) clearTimeout(timer);
      tick();
    },
  };
};
const whenTime = (iso) => (iso ? new Date(iso).toLocaleString() : "");
