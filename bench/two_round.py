"""Load generator for the two-round call: round 1 gets `input_required` with a requestState, the
client answers the form and retries, and the final text is checked. Every response is checked.

A deliberately small HTTP/1.1 keep-alive client on asyncio (uvloop), one connection per
concurrent caller: an off-the-shelf client would cost more CPU than the servers it measures.
Prints one line ``BENCH_RESULT {json}``; latencies are per completed call (both rounds).

    python bench/two_round.py URL TOKEN --concurrency 16 --duration 5 --warmup 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from typing import Any
from urllib.parse import urlsplit

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
ARGUMENTS = {"name": "ann"}
ANSWER = {"colour": "blue"}
EXPECT = "hello ann in blue"


class CallFailed(Exception):
    pass


class Connection:
    def __init__(self, host: str, port: int, path: str, token: str) -> None:
        self.host, self.port, self.path = host, port, path
        self.head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            f"Mcp-Method: tools/call\r\nMcp-Name: greet\r\nAuthorization: Bearer {token}\r\n"
        ).encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def post(self, body: bytes) -> dict[str, Any]:
        assert self.reader is not None and self.writer is not None
        self.writer.write(self.head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, _, header_block = head.partition(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        headers = {}
        for line in header_block.split(b"\r\n"):
            if line:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                parts.append(chunk[:-2])
            payload = b"".join(parts)
        else:
            payload = await self.reader.readexactly(int(headers[b"content-length"]))
        if status != 200:
            raise CallFailed(f"HTTP {status}: {payload[:200]!r}")
        if headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            raise CallFailed("unexpected SSE response")
        message = json.loads(payload)
        if "result" not in message:
            raise CallFailed(f"JSON-RPC error: {payload[:200]!r}")
        result: dict[str, Any] = message["result"]
        return result


def body(params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": META}}).encode()


ROUND_1 = body({"name": "greet", "arguments": ARGUMENTS})


async def one_call(conn: Connection) -> None:
    first = await conn.post(ROUND_1)
    if first.get("resultType") != "input_required" or not first.get("requestState"):
        raise CallFailed(f"round 1 did not ask: {first}")
    (key,) = first["inputRequests"]
    retry = body(
        {
            "name": "greet",
            "arguments": ARGUMENTS,
            "inputResponses": {key: {"action": "accept", "content": ANSWER}},
            "requestState": first["requestState"],
        }
    )
    final = await conn.post(retry)
    if final.get("resultType", "complete") != "complete" or final.get("isError"):
        raise CallFailed(f"retry failed: {final}")
    if final["content"][0]["text"] != EXPECT:
        raise CallFailed(f"wrong answer: {final['content']}")


async def run(url: str, token: str, concurrency: int, duration: float, warmup: float) -> dict[str, Any]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    conns = [Connection(parts.hostname, parts.port, parts.path, token) for _ in range(concurrency)]
    await asyncio.gather(*(c.open() for c in conns))
    start = time.perf_counter() + warmup
    end = start + duration
    latencies: list[float] = []
    errors: list[str] = []

    async def caller(conn: Connection) -> None:
        while True:
            t0 = time.perf_counter()
            if t0 >= end:
                return
            try:
                await one_call(conn)
            except (CallFailed, OSError, asyncio.IncompleteReadError, ValueError, KeyError) as exc:
                errors.append(repr(exc)[:300])
                if len(errors) > 50:
                    return
                await conn.open()
                continue
            t1 = time.perf_counter()
            if t0 >= start and t1 <= end:
                latencies.append(t1 - t0)

    await asyncio.gather(*(caller(c) for c in conns))
    for c in conns:
        if c.writer is not None:
            c.writer.close()
    latencies.sort()

    def pct(p: float) -> float:
        if not latencies:
            return float("nan")
        return latencies[min(len(latencies) - 1, max(0, math.ceil(p / 100 * len(latencies)) - 1))] * 1e6

    return {
        "calls": len(latencies),
        "duration_us": duration * 1e6,
        "errors": len(errors),
        "error_samples": errors[:3],
        "latency_us": {str(p): pct(p) for p in (50, 75, 90, 95, 99, 99.9)},
        "latency_max_us": latencies[-1] * 1e6 if latencies else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("token")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    args = parser.parse_args()
    import uvloop  # in the lock (uvicorn[standard])

    result = uvloop.run(run(args.url, args.token, args.concurrency, args.duration, args.warmup))
    print("BENCH_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
