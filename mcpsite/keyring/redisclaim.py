"""Single-use claims in Redis (``SET key 1 NX PXAT exp``) on one pipelined connection per process.

The claim is on every 2026-07-28 retry. Through redis-py's asyncio client it cost ~200 µs of CPU a
claim (connection pool checkout and release, health check, retry wrapper, command packing,
response parser: `bench/inproc.py`, a microbenchmark of the bare command, 2026-12-03) for one
command with two possible answers. This client writes the command on one connection and reads
the answer in the protocol callback, ~20 µs. Concurrent claims share the connection: Redis answers
in order, so each write appends a waiter to a FIFO and each reply resolves the oldest one
(pipelining without batching: nothing waits for anything but its own answer).

The call quotas (`mcp_server.quotas`) use the same client, one more such connection per
process, for their one ``EVAL`` per share of a budget, whose script answers one integer:
`RedisClaims.evaluate`.

It fails closed, as before: a connection error, a refused handshake or any reply other than
``+OK`` (claimed) or a nil (claimed before) raises `ClaimUnavailable`, and the round is refused
rather than risk a replay. A lost connection fails every claim in flight; the next claim
reconnects. A waiter that gives up (its request cancelled) leaves its place in the FIFO, so the
replies that follow still find their own waiters.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Any, cast

from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection, parse_url

from mcpsite.exceptions import McpsiteError


class ClaimUnavailable(McpsiteError):
    """Redis did not say whether the claim is new: treat the state as spent (fail closed)."""


def _command(*parts: bytes) -> bytes:
    head = b"*%d\r\n" % len(parts)
    return head + b"".join(b"$%d\r\n%s\r\n" % (len(part), part) for part in parts)


def _claim_command(key: str, until_ms: int) -> bytes:
    return _command(b"SET", key.encode(), b"1", b"NX", b"PXAT", b"%d" % until_ms)


class _Replies(asyncio.Protocol):
    """One connection's replies, in order, to the waiters that wrote their commands."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiters: deque[asyncio.Future[Any]] = deque()
        self.buffer = b""
        self.outgoing: list[bytes] = []
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not its subclasses

    def send(self, command: bytes, *, now: bool = False) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Any] = loop.create_future()
        if now and not self.waiters and not self.outgoing and self.transport is not None and not self.closed:
            # Nothing in flight to share a write with: on its way before the caller goes on working.
            self.waiters.append(waiter)
            self.transport.write(command)
            return waiter
        self.waiters.append(waiter)
        # Written once the running callbacks yield, together with the claims the other requests
        # of this loop turn made meanwhile: one write() (a loopback send that wakes Redis: the
        # costliest step of a claim in py-spy) for many claims under load, one for one at c=1.
        if not self.outgoing:
            loop.call_soon(self._flush)
        self.outgoing.append(command)
        return waiter

    def _flush(self) -> None:
        outgoing, self.outgoing = self.outgoing, []
        if self.transport is not None and not self.closed:
            self.transport.write(b"".join(outgoing))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n")) >= 0:
            line, self.buffer = self.buffer[:end], self.buffer[end + 2 :]
            if not self.waiters:
                self._fail(ClaimUnavailable(f"unrequested reply from Redis: {line[:80]!r}"))
                return
            waiter = self.waiters.popleft()
            outcome: bool | int
            if line == b"+OK":
                outcome = True
            elif line in (b"$-1", b"_"):  # nil: the key exists (RESP2, RESP3)
                outcome = False
            elif line[:1] == b":" and line[1:].lstrip(b"-").isdigit():  # an integer: a quota's `evaluate`
                outcome = int(line[1:])
            else:  # an error (-ERR, -NOAUTH ...) or a reply no claim gives: the stream is not ours to trust
                self._fail(ClaimUnavailable(f"Redis answered {line[:200]!r}"), first=waiter)
                return
            if not waiter.done():
                waiter.set_result(outcome)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(ClaimUnavailable(f"connection to Redis lost: {exc or 'closed'}"))

    def _fail(self, error: ClaimUnavailable, *, first: asyncio.Future[Any] | None = None) -> None:
        self.closed = True
        for waiter in ([first] if first is not None else []) + list(self.waiters):
            if not waiter.done():
                waiter.set_exception(error)
        self.waiters.clear()
        if self.transport is not None:
            self.transport.close()


class RedisClaims:
    """``claim(key, until_ms)``: True the first time `key` is claimed, False after (see module doc)."""

    def __init__(self, url: str) -> None:
        options = cast(dict[str, Any], parse_url(url))
        self._host: str = options.get("host", "localhost")
        self._port: int = options.get("port", 6379)
        self._path: str | None = options.get("path")
        self._tls = options.get("connection_class") is SSLConnection
        self._unix = options.get("connection_class") is UnixDomainSocketConnection
        handshake: list[bytes] = []
        if options.get("password") is not None:
            credentials = (
                [options["username"], options["password"]] if options.get("username") else [options["password"]]
            )
            handshake.append(_command(b"AUTH", *(str(part).encode() for part in credentials)))
        if options.get("db"):
            handshake.append(_command(b"SELECT", str(int(options["db"])).encode()))
        self._handshake = handshake
        self._replies: _Replies | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connecting: asyncio.Lock | None = None

    async def claim(self, key: str, until_ms: int) -> bool:
        replies = self._replies
        if replies is None or replies.closed or self._loop is not asyncio.get_running_loop():
            replies = await self._connect()
        claimed = await replies.send(_claim_command(key, until_ms))
        if not isinstance(claimed, bool):
            raise ClaimUnavailable(f"Redis answered {claimed!r} to a claim")
        return claimed

    async def evaluate(self, script: bytes, keys: list[str], args: list[int]) -> int:
        """``EVAL script`` on this connection, for a script that answers one integer; anything
        else raises `ClaimUnavailable`, as does a connection that is not there."""
        replies = self._replies
        if replies is None or replies.closed or self._loop is not asyncio.get_running_loop():
            replies = await self._connect()
        command = _command(
            b"EVAL", script, b"%d" % len(keys), *(key.encode() for key in keys), *(b"%d" % arg for arg in args)
        )
        answer = await replies.send(command)
        if isinstance(answer, bool):
            raise ClaimUnavailable(f"Redis answered {answer!r} to a script")
        return int(answer)

    def claim_soon(self, key: str, until_ms: int) -> asyncio.Future[bool]:
        """`claim`, already under way when this returns, so the caller can work while Redis answers
        (`RefuseReplayedState` lets the SDK validate the request meanwhile; nothing of the tool
        runs before the answer). With no other claim in flight the command is written at once
        (at c=1 the loop would otherwise sit idle for the round trip); with others, it joins this
        loop turn's one write, as `claim` does. Without a live connection it connects first, in a
        task. The answer, and every failure, is `claim`'s."""
        replies = self._replies
        if replies is None or replies.closed or self._loop is not asyncio.get_running_loop():
            return asyncio.ensure_future(self.claim(key, until_ms))
        return replies.send(_claim_command(key, until_ms), now=True)

    async def _connect(self) -> _Replies:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (a test's, a restarted server's): start afresh
            self._loop, self._replies, self._connecting = loop, None, asyncio.Lock()
        assert self._connecting is not None
        async with self._connecting:  # one connect for all the claims that find no connection
            replies = self._replies
            if replies is not None and not replies.closed:
                return replies
            try:
                if self._unix:
                    assert self._path is not None
                    _, replies = await loop.create_unix_connection(_Replies, self._path)
                else:
                    tls = ssl.create_default_context() if self._tls else None
                    _, replies = await loop.create_connection(_Replies, self._host, self._port, ssl=tls)
                for command in self._handshake:
                    await replies.send(command)
            except (OSError, ClaimUnavailable) as exc:
                raise ClaimUnavailable(f"cannot reach Redis for the claim: {exc}") from exc
            self._replies = replies
            return replies
