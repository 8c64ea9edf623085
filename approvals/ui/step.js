// A URL-mode step's card (the payment and approval views): polls step_status, an app-only tool
// the host calls for it, while the step is pending; each view shows the fields its markup has.
const KIND = document.querySelector("main").dataset.kind;
const WORDS = {
  none: ["Opening…", "wait"],
  pending: [KIND === "payment" ? "Waiting for payment" : "Waiting for a decision", "wait"],
  completed: [KIND === "payment" ? "Paid" : "Approved", "ok"],
  declined: [KIND === "payment" ? "Declined" : "Denied", "bad"],
  cancelled: ["Cancelled", "off"],
  expired: ["Expired", "off"],
};
let call = null;
let toolName = "";
let link = "";
const field = (id, text) => {
  if ($(id)) show(id, text);
};

const render = (card) => {
  const [words, tone] = WORDS[card.status] || [card.status, "off"];
  document.body.dataset.status = card.status;
  $("badge").textContent = words;
  $("badge").dataset.tone = tone;
  field("amount", card.amount ? `${card.amount} ${card.currency}` : "");
  field("description", card.description);
  field("decider", card.decider);
  field("decision", card.decision);
  field("decided-by", card.decided_by);
  field("note", card.note ? `“${card.note}”` : "");
  link = card.url;
  field("url", card.url);
  field("expires", card.status === "pending" ? whenTime(card.expires_at) : "");
  field("ended", whenTime(card.ended_at));
  return card.status !== "none" && card.status !== "pending";
};
const poll = everyUntil(1000, async () => render(await mcpApp.call("step_status", call)));

// The sandbox opens nothing itself: the host opens the page (ui/open-link) if it agrees.
$("url").addEventListener("click", (event) => {
  event.preventDefault();
  if (link) mcpApp.openLink(link);
});
mcpApp
  .start({
    onInput(params) {
      call = { tool: toolName, view: document.body.dataset.view, arguments: params.arguments || {} };
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
