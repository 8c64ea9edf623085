"""``tasks/update`` checks answers to the task's open questions before recording them: one that
does not parse as a response is refused (-32602) and the task keeps waiting; answers to keys the
task did not ask are ignored (acked, nothing changes)."""

from __future__ import annotations

from tests.tasks.conftest import error, result, rpc, start, wait_for


def test_a_malformed_answer_is_refused_and_the_task_keeps_waiting(conformance_url: str) -> None:
    task_id = start(conformance_url, None, "confirm_delete", filename="kept.txt")
    wait_for(conformance_url, None, task_id, "input_required")

    refused = rpc(conformance_url, "tasks/update", {"taskId": task_id, "inputResponses": {"confirm": "yes"}})
    ignored = rpc(conformance_url, "tasks/update", {"taskId": task_id, "inputResponses": {"other": {"x": 1}}})

    assert error(refused) == {"code": -32602, "message": "inputResponses do not answer the task's inputRequests"}
    assert result(ignored)["resultType"] == "complete"
    waiting = result(rpc(conformance_url, "tasks/get", {"taskId": task_id}))
    assert (waiting["status"], list(waiting["inputRequests"])) == ("input_required", ["confirm"])

    answer = {"confirm": {"action": "accept", "content": {"confirm": False}}}
    result(rpc(conformance_url, "tasks/update", {"taskId": task_id, "inputResponses": answer}))
    done = wait_for(conformance_url, None, task_id, "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "Kept kept.txt"}]
