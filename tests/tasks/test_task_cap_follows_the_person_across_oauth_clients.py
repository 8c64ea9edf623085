"""The cap of live tasks counts the person (the token's user at the tenant), not the OAuth client:
a second client of the same user, or a fresh one registered for the purpose, finds the cap
already taken, while another user of the same tenant is not held back. Each task still belongs to
the client that started it."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from oauth2_provider.models import Application

from mcp_tasks.models import Task
from tests.conftest import Cast, LiveServer
from tests.tasks.conftest import error, result, rpc, serve, start

SLUG = "reports-person"


def client_token(server: LiveServer, cast: Cast, name: str) -> str:
    """A token for `name` through an OAuth client of its own (an assistant, a task runner, ...)."""
    client = Application.objects.create(
        name=f"client {uuid.uuid4().hex[:8]}",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
    )
    return cast.token(server, name, SLUG, application=client)


def test_a_second_oauth_client_of_the_same_user_finds_the_cap_taken(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    server = server_factory(MCPSITE_TASKS_MAX_LIVE_PER_PRINCIPAL="2")
    url = serve(server, SLUG, ["alice", "bob"], cast)
    assistant, runner = client_token(server, cast, "alice"), client_token(server, cast, "alice")
    first = start(url, assistant, seconds=30)
    start(url, runner, seconds=30)
    rows = Task.objects.count()

    fresh = client_token(server, cast, "alice")  # a client registered just to get a fresh cap
    refused = rpc(url, "tools/call", {"name": "long_report", "arguments": {"seconds": 30}}, fresh)

    assert error(refused) == {
        "code": -32600,
        "message": "You have 2 unfinished tasks here, the most allowed at once. "
        "Wait for one to end or cancel one (tasks/cancel), then call again.",
        "data": {"reason": "too_many_tasks", "limit": 2},
    }
    assert Task.objects.count() == rows
    # Another user of the same tenant is not held back by alice's tasks.
    start(url, client_token(server, cast, "bob"), seconds=0)
    # The task is still the starting client's own: another client of alice's does not see it.
    assert error(rpc(url, "tasks/cancel", {"taskId": first}, runner)) == {"code": -32602, "message": "Unknown taskId"}
    result(rpc(url, "tasks/cancel", {"taskId": first}, assistant))
    start(url, runner, seconds=0)
