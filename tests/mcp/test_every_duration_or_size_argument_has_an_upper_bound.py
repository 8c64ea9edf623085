"""Every tool argument that sets how long something takes or how much of something there is has
an upper bound in the schema a client is shown (and the SDK validates against): an anonymous
caller of a public tenant must not be able to ask for a million-second sleep. Checked on the
wire, over every toolset at once."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_tasks.models import Task
from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post
from tests.tasks.conftest import result, rpc
from tools_app.discovery import autodiscover

# Argument names that set a duration or a size ("party_size", "seconds", "max_tokens", "limit"...).
DURATION_OR_SIZE = re.compile(
    r"second|minute|hour|_ms$|timeout|duration|delay|interval|size|count|limit|max|length|bytes|tokens|amount_of|number"
)
NUMERIC = {"integer", "number"}


def numeric_arguments(schema: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every numeric property of the schema (its own and those of its $defs), with where it is."""
    for name, prop in (schema.get("properties") or {}).items():
        branches = [prop, *prop.get("anyOf", []), *prop.get("oneOf", [])]
        for branch in branches:
            if branch.get("type") in NUMERIC:
                yield f"{where}.{name}", branch
    for name, definition in (schema.get("$defs") or {}).items():
        yield from numeric_arguments(definition, f"{where}.$defs.{name}")


def test_every_numeric_duration_or_size_argument_of_every_toolset_has_a_maximum(live: LiveServer, cast: Cast) -> None:
    every = sorted(autodiscover())
    tenant, _ = Tenant.objects.update_or_create(
        slug="every-toolset", defaults={"name": "Every toolset", "toolsets": every, "public": True, "enabled": True}
    )
    url = live.mcp_url(tenant.slug)
    deadline = time.monotonic() + 10  # the registry hears of the new tenant within a second, or on its 5 s poll
    while True:
        response = modern_post(url, "tools/list")
        if response.status_code == 200 and "slow_compute" in response.text and "long_report" in response.text:
            break
        assert time.monotonic() < deadline, f"{url} does not serve every toolset: {response.text[:300]}"
        time.sleep(0.1)
    tools = json.loads(response.text)["result"]["tools"]

    checked, unbounded = [], []
    for tool in tools:
        for where, schema in numeric_arguments(tool["inputSchema"], tool["name"]):
            if not DURATION_OR_SIZE.search(where.rsplit(".", 1)[-1]):
                continue
            checked.append(where)
            if "maximum" not in schema and "exclusiveMaximum" not in schema:
                unbounded.append(where)

    assert {"slow_compute.seconds", "long_report.seconds", "resilient_report.seconds"} <= set(checked), checked
    assert unbounded == [], f"no upper bound: {unbounded}"


@pytest.mark.parametrize("as_task", [False, True], ids=["plain call", "with the Tasks extension"])
def test_a_million_second_sleep_on_the_public_conformance_tenant_is_refused_naming_the_bound(
    conformance_url: str, as_task: bool
) -> None:
    call = {"name": "slow_compute", "arguments": {"seconds": 1e6}}
    before = Task.objects.count()

    answer = result(rpc(conformance_url, "tools/call", call, tasks=as_task))

    # the SDK's answer to arguments that do not validate, at once: no task was made, nothing sleeps
    assert (answer["resultType"], answer["isError"]) == ("complete", True), answer
    text = answer["content"][0]["text"]
    assert "seconds" in text and "Input should be less than or equal to 300" in text, text
    assert Task.objects.count() == before
