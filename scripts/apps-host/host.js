// The test host page of tests/apps: renders an MCP Apps view the way a host does, with the
// official SDK's AppBridge (`@modelcontextprotocol/ext-apps/app-bridge`) over postMessage with a
// sandboxed iframe. The host's MCP connection is its backend (tests/apps/host.py, a real MCP
// client): what the view asks of the server (tools/call, resources/read) is posted there.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

async function backend(method, params) {
  const response = await fetch("/mcp", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ method, params }),
  });
  const answer = await response.json();
  if (answer.error) throw new Error(answer.error.message);
  return answer.result;
}

const host = {
  links: [],
  bridge: null,
  initialized: false,
  // Mount `html` (a ui:// resource's text) for a call of `tool` (its tools/list entry); a host
  // need not tell the view which tool was called (`toolInfo` is optional), so one may not.
  async mount(html, tool, args, sayWhichTool = true) {
    document.getElementById("call").textContent = `${tool.name}(${JSON.stringify(args)})`;
    const frame = document.createElement("iframe");
    frame.id = "view";
    frame.setAttribute("sandbox", "allow-scripts"); // no same origin, no popups, no forms
    document.getElementById("slot").replaceChildren(frame);
    const bridge = new AppBridge(
      null,
      { name: "mcpsite-test-host", version: "1.0.0" },
      { serverTools: {}, serverResources: {}, openLinks: {} },
      {
        hostContext: {
          ...(sayWhichTool ? { toolInfo: { tool } } : {}),
          theme: "light",
          displayMode: "inline",
          platform: "web",
        },
      },
    );
    bridge.oncalltool = (params) => backend("tools/call", params);
    bridge.onreadresource = (params) => backend("resources/read", params);
    bridge.onopenlink = async ({ url }) => {
      host.links.push(url);
      return {};
    };
    bridge.onsizechange = ({ height }) => {
      if (height) frame.style.height = `${Math.ceil(height)}px`;
    };
    const initialized = new Promise((resolve) => {
      bridge.oninitialized = resolve;
    });
    // Listening before the document loads: its first message is ui/initialize.
    await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
    frame.srcdoc = html;
    await initialized;
    host.bridge = bridge;
    host.initialized = true;
    await bridge.sendToolInput({ arguments: args });
  },
  result(result) {
    return host.bridge.sendToolResult(result);
  },
};
window.host = host;
