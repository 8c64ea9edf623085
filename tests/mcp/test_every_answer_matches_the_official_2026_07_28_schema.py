"""Every answer the server sends on the 2026-07-28 wire matches the official JSON schema of that
revision: tools/call (complete and `InputRequiredResult`), prompts/get, resources/read, the Tasks
extension's answers (the task a tools/call creates, tasks/get in every status with the inlined
`CallToolResult`, error or questions, tasks/update, tasks/cancel) and the errors.

The schema is the spec repository's `schema.json` as the official Python SDK vendors it in its
source distribution (pinned by hash in requirements.lock; `scripts/mcp-schema-install`, run by
`scripts/test`, puts it under `.cache/mcp-schema/`). The Tasks extension's own envelope is not in
the core schema; the official TypeScript Tasks client checks it
(`tests/tasks/test_the_official_typescript_tasks_client_settles_tasks.py`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

import httpx2
import mcp_types._v2026_07_28 as generated
from jsonschema import Draft202012Validator

from tests.conftest import LiveServer
from tests.mcp.clients import raw_post

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / ".cache" / "mcp-schema" / "2026-07-28.json"
TASKS = "io.modelcontextprotocol/tasks"
Message = dict[str, Any]


@functools.cache
def definitions() -> dict[str, Any]:
    assert SCHEMA.exists(), f"{SCHEMA} is missing: run scripts/mcp-schema-install (scripts/test does)"
    defs: dict[str, Any] = json.loads(SCHEMA.read_text())["$defs"]
    return defs


def violations(instance: Any, definition: str) -> list[str]:
    validator = Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": definitions()})
    return [
        f"{definition} at /{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(instance)
    ]


def post(
    url: str, method: str, params: dict[str, Any] | None = None, *, tasks: bool = True, **capabilities: Any
) -> Message:
    """One 2026-07-28 request with the headers it needs, answered as one JSON-RPC message;
    ``tasks``: the client declares the Tasks extension."""
    params = params or {}
    declared = {**capabilities, **({"extensions": {TASKS: {}}} if tasks else {})}
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": declared,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    headers = {"Mcp-Method": method}
    if method in ("tools/call", "prompts/get", "resources/read"):
        headers["Mcp-Name"] = str(params.get("name") or params.get("uri"))
    return message(raw_post(url, json.dumps(body).encode(), **headers))


def message(response: httpx2.Response) -> Message:
    body = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        body = [line[5:] for line in body.splitlines() if line.startswith("data:")][-1]
    parsed: Message = json.loads(body)
    return parsed


def result_violations(answer: Message, definition: str) -> list[str]:
    """A result message: the JSON-RPC envelope, then its result as the method's result type."""
    if "result" not in answer:
        return [f"expected a {definition}, got {answer}"]
    return violations(answer, "JSONRPCResultResponse") + violations(answer["result"], definition)


def tool_result_violations(answer: Message) -> list[str]:
    kind = answer.get("result", {}).get("resultType")
    return result_violations(answer, "InputRequiredResult" if kind == "input_required" else "CallToolResult")


def task_violations(answer: Message) -> list[str]:
    """A tasks/get answer: a `Result` whose inlined parts are the core types they stand for."""
    found = result_violations(answer, "Result")
    task = answer.get("result", {})
    inlined = {"completed": ("result", "CallToolResult"), "failed": ("error", "Error")}
    inlined["input_required"] = ("inputRequests", "InputRequests")
    if task.get("status") in inlined:
        field, definition = inlined[task["status"]]
        found += violations(task.get(field), definition) if field in task else [f"{task['status']} without {field}"]
    return found


def get(url: str, task_id: str) -> Message:
    return post(url, "tasks/get", {"taskId": task_id})


def settled(url: str, task_id: str, status: str, seen: list[Message], timeout: float = 30.0) -> Message:
    """Poll tasks/get until the task is in ``status``; every answer on the way is kept in ``seen``."""
    deadline = time.monotonic() + timeout
    while True:
        answer = get(url, task_id)
        seen.append(answer)
        if answer.get("result", {}).get("status") == status:
            return answer
        assert time.monotonic() < deadline, f"task still {answer} after {timeout}s"
        time.sleep(0.2)


def test_the_schema_is_the_one_the_sdks_types_were_generated_from() -> None:
    pinned = re.search(r"sha256 `([0-9a-f]{64})`", generated.__doc__ or "")
    assert pinned, generated.__doc__
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == pinned.group(1)


def test_a_completed_task_whose_result_lacks_its_result_type_is_caught() -> None:
    # What tasks/get answered before issue 24: the check would have failed it.
    task = {"resultType": "complete", "status": "completed", "result": {"content": [{"type": "text", "text": "done"}]}}
    answer: Message = {"jsonrpc": "2.0", "id": 1, "result": task}
    assert task_violations(answer) == ["CallToolResult at /: 'resultType' is a required property"]


def test_tool_prompt_and_resource_answers_match_the_schema(conformance_url: str) -> None:
    url = conformance_url
    found: dict[str, list[str]] = {}

    def call(params: dict[str, Any], **kwargs: Any) -> Message:
        return post(url, "tools/call", params, tasks=False, **kwargs)

    found["tools/call, a complete result"] = tool_result_violations(call({"name": "test_multiple_content_types"}))
    found["tools/call, an isError result"] = tool_result_violations(call({"name": "test_error_handling"}))
    asked = call({"name": "test_input_required_result_elicitation"}, elicitation={"form": {}})
    found["tools/call, an InputRequiredResult"] = tool_result_violations(asked)
    assert asked["result"]["resultType"] == "input_required", asked
    prompt = {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}
    answer = post(url, "prompts/get", prompt, tasks=False)
    found["prompts/get"] = result_violations(answer, "GetPromptResult")
    for uri in ("test://static-text", "test://static-binary", "test://template/7/data"):
        answer = post(url, "resources/read", {"uri": uri}, tasks=False)
        found[f"resources/read {uri}"] = result_violations(answer, "ReadResourceResult")

    assert {case: errors for case, errors in found.items() if errors} == {}


def test_task_answers_match_the_schema_in_every_status(conformance_url: str) -> None:
    url = conformance_url
    found: dict[str, list[str]] = {}
    gets: list[Message] = []

    def create(tool: str, **arguments: Any) -> str:
        answer = post(url, "tools/call", {"name": tool, "arguments": arguments})
        found[f"tools/call {tool} (creates a task)"] = result_violations(answer, "Result")
        assert answer["result"]["resultType"] == "task", answer
        task_id: str = answer["result"]["taskId"]
        return task_id

    settled(url, create("slow_compute", seconds=0.5), "completed", gets)
    settled(url, create("failing_job"), "completed", gets)  # a tool error: completed, isError
    settled(url, create("protocol_error_job"), "failed", gets)

    asking = create("confirm_delete", filename="a.txt")
    settled(url, asking, "input_required", gets)
    answers = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    update = post(url, "tasks/update", {"taskId": asking, "inputResponses": answers})
    found["tasks/update"] = result_violations(update, "Result")
    settled(url, asking, "completed", gets)

    running = create("slow_compute", seconds=60)
    cancel = post(url, "tasks/cancel", {"taskId": running})
    found["tasks/cancel"] = result_violations(cancel, "Result")
    settled(url, running, "cancelled", gets)

    for answer in gets:
        found[f"tasks/get, {answer.get('result', {}).get('status')}"] = task_violations(answer)
    assert {"working", "input_required", "completed", "failed", "cancelled"} <= {
        answer["result"]["status"] for answer in gets
    }
    assert {case: errors for case, errors in found.items() if errors} == {}


def test_error_answers_match_the_schema(conformance_url: str, live: LiveServer) -> None:
    url = conformance_url
    found: dict[str, list[str]] = {}

    def error_violations(answer: Message, definition: str) -> list[str]:
        if "error" not in answer:
            return [f"expected an error, got {answer}"]
        return violations(answer, "JSONRPCErrorResponse") + violations(answer, definition)

    unknown = post(url, "tasks/get", {"taskId": "tsk_" + "x" * 43})
    found["tasks/get, an unknown task (-32602)"] = error_violations(unknown, "JSONRPCErrorResponse")
    refused = post(url, "tools/call", {"name": "failing_job"}, tasks=False)
    found["a task-only tool without the extension (-32021)"] = error_violations(
        refused, "MissingRequiredClientCapabilityError"
    )
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "greet", "arguments": {}, "_meta": meta},
    }
    mismatch = raw_post(url, json.dumps(body).encode(), **{"Mcp-Method": "tools/call", "Mcp-Name": "other"})
    found["a header that does not match the body (-32020)"] = error_violations(message(mismatch), "HeaderMismatchError")
    unknown_method = post(url, "tasks/list")
    found["a method the server does not serve (-32601)"] = error_violations(unknown_method, "JSONRPCErrorResponse")
    tampered = post(url, "tools/call", {"name": "greet", "arguments": {"name": "a"}, "requestState": "x"})
    found["a requestState that does not open (-32602)"] = error_violations(tampered, "JSONRPCErrorResponse")
    invalid = post(url, "tools/call", {"name": "greet", "arguments": {}}, tasks=False)
    found["a tool's invalid arguments"] = (
        tool_result_violations(invalid) if "result" in invalid else error_violations(invalid, "JSONRPCErrorResponse")
    )

    assert [unknown["error"]["code"], refused["error"]["code"], message(mismatch)["error"]["code"]] == [
        -32602,
        -32021,
        -32020,
    ]
    assert unknown_method["error"]["code"] == -32601 and tampered["error"]["code"] == -32602
    assert {case: errors for case, errors in found.items() if errors} == {}
