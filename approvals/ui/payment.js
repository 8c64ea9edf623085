// The payment card: polls step_status (an app-only tool the host calls for it) while pending.
const WORDS = {
  none: ["Opening…", "wait"],
  pending: ["Waiting for payment", "wait"],
  completed: ["Paid", "ok"],
  declined: ["Declined", "bad"],
  cancelled: ["Cancelled", "off"],
  expired: ["Expired", "off"],
};
let call = null;
let checkout = "";

const render = (card) => {
  const [words, tone] = WORDS[card.status] || [card.status, "off"];
  document.body.dataset.status = card.status;
  $("badge").textContent = words;
  $("badge").dataset.tone = tone;
  show("amount", card.amount ? `${card.amount} ${card.currency}` : "");
  show("description", card.description);
  checkout = card.url;
  show("url", card.url);
  show("expires", card.status === "pending" ? whenTime(card.expires_at) : "");
  show("ended", whenTime(card.ended_at));
  return card.status !== "none" && card.status !== "pending";
};
const poll = everyUntil(1000, async () => render(await mcpApp.call("step_status", call)));

$("url").addEventListener("click", (event) => {
  event.preventDefault();
  if (checkout) mcpApp.openLink(checkout);
});
let toolName = "";
mcpApp
  .start({
    onInput(params) {
      call = { tool: toolName, arguments: params.arguments || {} };
      poll.now();
    },
    onResult(result) {
      show("result", mcpApp.textOf(result));
      if (call) poll.now();
    },
  })
  .then((context) => {
    toolName = context.toolInfo?.tool?.name || "";
  });
