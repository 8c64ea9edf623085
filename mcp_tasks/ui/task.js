// The task card: polls task_view_status while the task is live; Cancel calls task_view_cancel
// (the host bridge forwards tools/call for the view, and no tasks/* method).
const WORDS = {
  working: ["Working", "wait"],
  input_required: ["Needs input", "wait"],
  completed: ["Completed", "ok"],
  failed: ["Failed", "bad"],
  cancelled: ["Cancelled", "off"],
};
let taskId = "";

const render = (card) => {
  const [words, tone] = WORDS[card.status] || [card.status, "off"];
  const live = card.status === "working" || card.status === "input_required";
  document.body.dataset.status = card.status;
  $("title").textContent = `Task: ${card.tool}`;
  $("badge").textContent = words;
  $("badge").dataset.tone = tone;
  $("bar").dataset.tone = tone;
  $("bar").dataset.state = live ? card.status : "ended";
  const run = card.max_attempts > 1 ? `, run ${Math.max(card.attempt, 1)} of ${card.max_attempts}` : "";
  show("progress", (live ? `Running for ${card.seconds}s` : `Ended after ${card.seconds}s`) + run);
  show("waiting", card.waiting_for.join(", "));
  show("started", whenTime(card.created_at));
  show("task-id", card.task_id);
  show("result", card.result);
  show("error", card.error);
  $("cancel").hidden = !live;
  return !live;
};
const poll = everyUntil(1000, async () => render(await mcpApp.call("task_view_status", { task_id: taskId })));

$("cancel").addEventListener("click", async () => {
  $("cancel").disabled = true;
  try {
    render(await mcpApp.call("task_view_cancel", { task_id: taskId }));
  } catch (error) {
    show("error", error.message);
  } finally {
    $("cancel").disabled = false;
  }
});
mcpApp.start({
  onInput(params) {
    taskId = (params.arguments || {}).task_id || "";
    poll.now();
  },
  onResult() {
    if (taskId) poll.now();
  },
});
