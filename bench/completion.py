"""Part 4: URL-mode completion latency, webhook -> the waiting client learns of it.

Two processes of ours on the same PostgreSQL and Redis: A serves the MCP call, B receives the
provider's webhook. Each sample pays a fresh booking's deposit (`pay_deposit`, tenant with the
`payments` toolset) and is timed from the moment the webhook's request starts to:

- modern (2026-07-28): the held retry round's response being read (raw HTTP, every body
  checked: round 1 must ask for the checkout URL, the retry must still be held when the webhook
  is posted and must answer "Booking <id> confirmed");
- legacy (2025-11-25): ``notifications/elicitation/complete`` reaching the SDK client's
  message handler (its call must then finish with the booking confirmed).

Every instant is a `time.perf_counter()` reading in this process, on its one event loop, taken
where the event happens (not when the sample's code next looks); `bench/latency.py` does the
arithmetic and stops the run on a negative interval. Samples run one after another. Also
reported: the webhook's own round trip, and how many completions reached the client before the
webhook's response did (B publishes before it answers, so the two are not ordered).
Prints one line ``BENCH_RESULT {json}``. Runs with mcpsite's settings (bookings are created and
the webhook is signed in process, as the sandbox provider does):

    python bench/completion.py MCP_URL WEBHOOK_URL TOKEN --tenant benchpay --mode modern --samples 100
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import secrets
import sys
import time
from collections.abc import Awaitable
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp_types import ElicitCompleteNotification, ElicitRequestParams, ElicitRequestURLParams, ElicitResult  # noqa: E402

from approvals.providers.sandbox import checkout_completed_event, signed_delivery  # noqa: E402
from bench.latency import Sample, summarise  # noqa: E402
from demo.models import Booking  # noqa: E402
from mcpsite.models import Tenant  # noqa: E402

DEPOSIT = Decimal("20.00")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}
# Long enough for the retry to reach its wait on the server (a few ms on loopback); checked below.
SETTLE_SECONDS = 0.1


class SampleFailed(Exception):
    pass


def bookings(tenant: str, count: int) -> list[int]:
    """Fresh bookings: a paid deposit is reused by a repeated call, so every sample needs its own."""
    owner = Tenant.objects.get(slug=tenant)
    made = Booking.objects.bulk_create(
        [Booking(tenant=owner, date=datetime.date(2027, 1, 1), party_size=2) for _ in range(count)]
    )
    return [b.pk for b in made]


def row_id(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def webhook_body(elicitation_id: str) -> tuple[bytes, dict[str, str]]:
    event = checkout_completed_event(
        elicitation_id=elicitation_id,
        provider_reference=f"cs_bench_{secrets.token_hex(8)}",
        amount=DEPOSIT,
        currency="EUR",
    )
    body, headers = signed_delivery(event)
    return body, {"Content-Type": "application/json", **headers}


async def post_webhook(http: httpx2.AsyncClient, url: str, elicitation_id: str) -> tuple[float, float]:
    """(request started, response read), `perf_counter` seconds; the delivery must complete the row."""
    body, headers = webhook_body(elicitation_id)
    sent = time.perf_counter()
    response = await http.post(url, content=body, headers=headers)
    done = time.perf_counter()
    if response.status_code != 200 or response.json().get("outcome") != "completed":
        raise SampleFailed(f"webhook answered {response.status_code} {response.text[:200]}")
    return sent, done


def decode(response: httpx2.Response) -> dict[str, Any]:
    if response.status_code != 200:
        raise SampleFailed(f"HTTP {response.status_code}: {response.text[:200]}")
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:") and ln[5:].strip()]
        messages = [json.loads(d) for d in data]
        text = json.dumps(next(m for m in messages if "id" in m))
    message = json.loads(text)
    if "result" not in message:
        raise SampleFailed(f"JSON-RPC error: {text[:200]}")
    result: dict[str, Any] = message["result"]
    return result


async def read_at(request: Awaitable[httpx2.Response]) -> tuple[httpx2.Response, float]:
    """The response and the instant it was read: taken here, as soon as the request's await returns,
    because the sample's code awaits the webhook first and would otherwise read the clock late."""
    response = await request
    return response, time.perf_counter()


async def modern_sample(http: httpx2.AsyncClient, mcp_url: str, webhook_url: str, token: str, booking: int) -> Sample:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "pay_deposit",
        "Authorization": f"Bearer {token}",
    }
    params: dict[str, Any] = {"name": "pay_deposit", "arguments": {"booking_id": booking}}

    def body(extra: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, **extra, "_meta": META}}

    first = decode(await http.post(mcp_url, json=body({}), headers=headers))
    if first.get("resultType") != "input_required":
        raise SampleFailed(f"round 1 answered {first}")
    ((key, request),) = first["inputRequests"].items()
    if request["params"].get("mode") != "url":
        raise SampleFailed(f"round 1 asked {request}")
    elicitation_id = row_id(request["params"]["url"])
    retry = body({"inputResponses": {key: {"action": "accept"}}, "requestState": first["requestState"]})
    held = asyncio.ensure_future(read_at(http.post(mcp_url, json=retry, headers=headers)))
    await asyncio.sleep(SETTLE_SECONDS)
    if held.done():
        raise SampleFailed(f"the retry was not held: {held.result()[0].text[:200]}")
    sent, done = await post_webhook(http, webhook_url, elicitation_id)
    response, answered = await held
    final = decode(response)
    text = (final.get("content") or [{}])[0].get("text", "")
    if not text.startswith(f"Booking {booking} confirmed"):
        raise SampleFailed(f"the held round answered {final}")
    return Sample(sent=sent, responded=done, arrived=answered)


async def run_modern(args: argparse.Namespace, ids: list[int]) -> list[Sample]:
    samples = []
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)) as http:
        for booking in ids:
            samples.append(await modern_sample(http, args.mcp_url, args.webhook_url, args.token, booking))
    return samples


async def run_legacy(args: argparse.Namespace, ids: list[int]) -> list[Sample]:
    """One 2025-11-25 session (as a client keeps one), one call per sample."""
    asked: asyncio.Queue[ElicitRequestURLParams] = asyncio.Queue()
    completed: dict[str, float] = {}
    arrived = asyncio.Event()

    async def on_elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
        if not isinstance(params, ElicitRequestURLParams):
            raise SampleFailed(f"expected a URL-mode question, got {params}")
        asked.put_nowait(params)
        return ElicitResult(action="accept")

    async def on_message(message: Any) -> None:
        # The SDK calls this on our event loop (its session's receive task), so the reading is
        # the same clock as post_webhook's, taken when the notification is handed to us.
        if isinstance(message, ElicitCompleteNotification):
            completed[message.params.elicitation_id] = time.perf_counter()
            arrived.set()

    samples = []
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {args.token}"}, timeout=httpx2.Timeout(60.0))
    hooks = httpx2.AsyncClient(timeout=httpx2.Timeout(60.0))
    async with (
        http,
        hooks,
        Client(
            streamable_http_client(args.mcp_url, http_client=http),
            mode="legacy",
            elicitation_callback=on_elicit,
            message_handler=on_message,
        ) as client,
    ):
        for booking in ids:
            arrived.clear()
            call = asyncio.ensure_future(client.call_tool("pay_deposit", {"booking_id": booking}))
            question = await asyncio.wait_for(asked.get(), 30)
            elicitation_id = question.elicitation_id or row_id(question.url)
            await asyncio.sleep(SETTLE_SECONDS)  # the server notes the session once our answer lands
            if call.done():
                raise SampleFailed(f"the call did not wait: {call.result()}")
            sent, done = await post_webhook(hooks, args.webhook_url, elicitation_id)
            with anyio.fail_after(30):
                while elicitation_id not in completed:
                    await arrived.wait()
                    arrived.clear()
            result = await asyncio.wait_for(call, 30)
            text = getattr(result.content[0], "text", "")
            if not text.startswith(f"Booking {booking} confirmed"):
                raise SampleFailed(f"the call answered {text!r}")
            samples.append(Sample(sent=sent, responded=done, arrived=completed[elicitation_id]))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mcp_url")
    parser.add_argument("webhook_url")
    parser.add_argument("token")
    parser.add_argument("--tenant", default="benchpay")
    parser.add_argument("--mode", choices=["modern", "legacy"], default="modern")
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    ids = bookings(args.tenant, args.samples + args.warmup)
    run = run_modern if args.mode == "modern" else run_legacy
    started = time.perf_counter()
    samples = anyio.run(run, args, ids)[args.warmup :]
    result = {"mode": args.mode, **summarise(samples), "seconds": round(time.perf_counter() - started, 2)}
    print("BENCH_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
