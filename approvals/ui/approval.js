// The approval card: who must decide, the status, the decision and its note; polls while pending.
const WORDS = {
  none: ["Opening…", "wait"],
  pending: ["Waiting for a decision", "wait"],
  completed: ["Approved", "ok"],
  declined: ["Denied", "bad"],
  cancelled: ["Cancelled", "off"],
  expired: ["Expired", "off"],
};
let call = null;
let page = "";

const render = (card) => {
  const [words, tone] = WORDS[card.status] || [card.status, "off"];
  document.body.dataset.status = card.status;
  $("badge").textContent = words;
  $("badge").dataset.tone = tone;
  show("amount", card.amount ? `${card.amount} ${card.currency}` : "");
  show("description", card.description);
  show("decider", card.decider);
  page = card.url;
  show("url", card.url);
  show("decision", card.decision);
  show("decided-by", card.decided_by);
  show("note", card.note ? `“${card.note}”` : "");
  show("expires", card.status === "pending" ? whenTime(card.expires_at) : "");
  show("ended", whenTime(card.ended_at));
  return card.status !== "none" && card.status !== "pending";
};
const poll = everyUntil(1000, async () => render(await mcpApp.call("step_status", call)));

$("url").addEventListener("click", (event) => {
  event.preventDefault();
  if (page) mcpApp.openLink(page);
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
