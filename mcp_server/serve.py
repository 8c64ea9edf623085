"""The web process: ``python -m mcp_server.serve [--host H] [--port P]``.

`scripts/run`, the live tests and the benchmark all start the server through here, so what is
tested and measured is what is deployed. It is uvicorn with two things a public server needs,
read from the settings:

- **A limit on the request head** (request line and headers, ``MCPSITE_MAX_REQUEST_HEAD``): a
  longer one gets ``431`` and the connection closes. httptools, uvicorn's fast parser, has no such
  limit (a 32 MB header was read whole), so `HeadLimitedHttpToolsProtocol` adds one; h11 has
  one, and gets the same number, but parses in Python, which costs on every request.
- **Time limits on a request's head and body, and a cap on connections per client address**
  (``MCPSITE_REQUEST_HEAD_TIMEOUT_SECONDS``, ``MCPSITE_REQUEST_BODY_TIMEOUT_SECONDS``,
  ``MCPSITE_MAX_CONNECTIONS_PER_ADDRESS``). uvicorn times out only an idle kept-alive connection
  (``timeout_keep_alive``): a connection that never finishes its head or body was held open for
  as long as the client liked, and 800 of them from one client stayed 70 s.
  `GuardedHttpToolsProtocol` closes them and caps how many one address holds open.
- **The standard library's event loop** (``MCPSITE_EVENT_LOOP``, ``uvloop`` to choose it). uvicorn
  picks uvloop when it is installed, and at saturation uvloop runs newly arrived requests ahead of
  the ones whose answers are ready (MagicStack/uvloop#123): at 64 concurrent calls a few in a
  hundred were answered 0.3-1.3 s late, the same with a trivial app, against 0.05-0.15 s on the
  standard loop (bench/README.md).
- **Forwarded headers only from known proxies** (``MCPSITE_TRUSTED_PROXIES``). uvicorn believes
  ``X-Forwarded-For`` from 127.0.0.1 unless told otherwise, so any local client, or any client
  behind a proxy that passes the header through, chose the address the registration limit (and
  the sign-in throttle) count against. With no trusted proxy the header is ignored.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
from typing import Any, ClassVar

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from mcpsite.logs import TRUSTED_PEER

# When the configuration names no limit (a plain `uvicorn --http mcp_server.serve:...`); the
# settings' default is the same.
DEFAULT_MAX_HEAD = 64 * 1024
# After refusing a head, read (and drop) what the client is still sending for this long, so it
# gets to read the 431: closing with unread data makes the kernel answer with a reset instead.
LINGER_SECONDS = 2.0
REFUSAL = b"Request line and headers too large.\n"


class HeadLimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a limit on the request head (uvicorn's
    ``h11_max_incomplete_event_size``, so one setting serves both parsers).

    Two counts, both cheap: the bytes received while a head is still open, which stops a header
    that keeps growing (httptools buffers a header until it ends); and the exact size of the
    request line and headers once the head is complete, which catches a long head that arrived
    in one read.
    """

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.max_head = config.h11_max_incomplete_event_size or DEFAULT_MAX_HEAD
        self.reading_head = True
        self.head_received = 0  # bytes received since the current head began (an upper bound)
        self.head_size = 0  # the current head's request line and headers, as parsed
        self.refused = False

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return  # lingering after a 431: drop the rest of the request
        if self.reading_head:
            self.head_received += len(data)
        super().data_received(data)
        if self.reading_head and self.head_received > self.max_head and not self.refused:
            self.refuse_head()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.head_size = 0

    def on_url(self, url: bytes) -> None:
        self.head_size += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_size += len(name) + len(value) + 4  # ": " and CRLF
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self.reading_head = False
        if not self.refused and self.head_size > self.max_head:
            self.refuse_head()
        if not self.refused:
            super().on_headers_complete()

    # Once refused, the rest of what this read holds (a body, a pipelined request) is dropped.
    def on_body(self, body: bytes) -> None:
        if not self.refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if not self.refused:
            super().on_message_complete()
            self.reading_head, self.head_received = True, 0

    def refuse_head(self) -> None:
        self.refused = True
        self.logger.warning("Request head larger than %d bytes refused (431).", self.max_head)
        self._unset_keepalive_if_required()
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: text/plain; charset=utf-8\r\n"
            b"content-length: " + str(len(REFUSAL)).encode() + b"\r\nconnection: close\r\n\r\n" + REFUSAL
        )
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
TIMED_OUT = b"Request not received in time.\n"
TOO_MANY = b"Too many open connections from this address.\n"


def _close_with(transport: asyncio.Transport, status: bytes, body: bytes) -> None:
    transport.write(
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body
    )
    transport.close()


class GuardedHttpToolsProtocol(HeadLimitedHttpToolsProtocol):
    """The head-limited protocol with time limits on a request's head and body, and a cap on the
    connections one client address holds open (see the module docstring). Build it with
    `configured` (`uvicorn_options` does): uvicorn makes one instance per connection and hands
    it nothing of ours.

    - The head must arrive within ``head_timeout`` of the connection opening, or of its first
      byte on a kept-alive connection (an idle kept-alive connection is uvicorn's own
      ``timeout_keep_alive``); otherwise ``408`` and the connection closes.
    - The body must arrive within ``body_timeout`` of the head; otherwise the connection closes
      and the app, waiting for the body, sees the client leave (one INFO line, nothing answered).
    - A timer is armed only when a head or body is still incomplete after a read, so a request
      that arrives in one read (almost all) arms none; the connection's first head arms one.
    - An address is the peer's IP address, an IPv6 one by its /64 (one host commonly holds a
      whole /64). Connections from a trusted proxy are not capped: every client behind it
      shares its address, and a cap would lock them all out at once; the proxy caps per client
      (nginx ``limit_conn``), and the time limits still apply to what it forwards.
    """

    head_timeout: ClassVar[float] = 10.0
    body_timeout: ClassVar[float] = 30.0
    max_per_address: ClassVar[int] = 128
    uncapped: ClassVar[tuple[Network, ...] | None] = ()  # None: every address (a ``*`` proxy)
    open_per_address: ClassVar[dict[str, int]] = {}
    refusing: ClassVar[set[str]] = set()  # addresses told about in the log since they hit the cap

    @classmethod
    def configured(
        cls, *, head_timeout: float, body_timeout: float, max_per_address: int, trusted_proxies: list[str]
    ) -> type[GuardedHttpToolsProtocol]:
        uncapped: list[Network] = []
        for proxy in trusted_proxies:
            if proxy == "*":
                return cls._subclass(head_timeout, body_timeout, max_per_address, None)
            try:
                uncapped.append(ipaddress.ip_network(proxy, strict=False))
            except ValueError:
                pass  # a unix socket's name: such connections have no address to count
        return cls._subclass(head_timeout, body_timeout, max_per_address, tuple(uncapped))

    @classmethod
    def _subclass(
        cls, head_timeout: float, body_timeout: float, max_per_address: int, uncapped: tuple[Network, ...] | None
    ) -> type[GuardedHttpToolsProtocol]:
        attributes: dict[str, Any] = {
            "head_timeout": head_timeout,
            "body_timeout": body_timeout,
            "max_per_address": max_per_address,
            "uncapped": uncapped,
            "open_per_address": {},
            "refusing": set(),
        }
        return type(cls.__name__, (cls,), attributes)

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.address: str | None = None  # counted against, while open
        self.trusted_peer = False  # issue 29: a trusted proxy's requests are marked (`mcpsite.logs`)
        self.head_timer: asyncio.TimerHandle | None = None
        self.body_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.trusted_peer = self.from_trusted_proxy()
        address = self.counted_address()
        if address is not None:
            held = self.open_per_address.get(address, 0)
            if held >= self.max_per_address:
                self.refuse_connection(address)
                return
            self.open_per_address[address] = held + 1
            self.address = address
        self.head_timer = self.loop.call_later(self.head_timeout, self.head_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        self.cancel_timers()
        if self.address is not None:
            left = self.open_per_address[self.address] - 1
            if left:
                self.open_per_address[self.address] = left
            else:
                del self.open_per_address[self.address]
            if left < self.max_per_address:
                self.refusing.discard(self.address)
            self.address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.refused or self.transport.is_closing():
            return
        if self.reading_head:
            if self.head_received and self.head_timer is None:
                self.head_timer = self.loop.call_later(self.head_timeout, self.head_timed_out)
        elif self.body_timer is None:
            self.body_timer = self.loop.call_later(self.body_timeout, self.body_timed_out)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.trusted_peer:
            self.scope[TRUSTED_PEER] = True  # type: ignore[literal-required]

    def on_headers_complete(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        if self.body_timer is not None:
            self.body_timer.cancel()
            self.body_timer = None
        super().on_message_complete()

    def refuse_head(self) -> None:
        self.cancel_timers()
        super().refuse_head()

    def cancel_timers(self) -> None:
        for timer in (self.head_timer, self.body_timer):
            if timer is not None:
                timer.cancel()
        self.head_timer = self.body_timer = None

    def from_trusted_proxy(self) -> bool:
        """The peer is one of ``MCPSITE_TRUSTED_PROXIES`` (uvicorn believes its forwarded headers)."""
        if self.uncapped is None:
            return True
        try:
            peer = ipaddress.ip_address(self.client[0]) if self.client else None
        except ValueError:
            return False
        return peer is not None and any(peer in network for network in self.uncapped)

    def counted_address(self) -> str | None:
        if self.client is None:
            return None  # a unix socket
        try:
            peer = ipaddress.ip_address(self.client[0])
        except ValueError:
            return None
        if self.uncapped is None or any(peer in network for network in self.uncapped):
            return None
        if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is None:
            return str(ipaddress.IPv6Network((peer, 64), strict=False))
        return str(peer.ipv4_mapped if isinstance(peer, ipaddress.IPv6Address) else peer)

    def refuse_connection(self, address: str) -> None:
        self.refused = True  # whatever arrives before the close is dropped
        if address not in self.refusing:
            self.refusing.add(address)
            self.logger.warning(
                "%s holds %d open connections (MCPSITE_MAX_CONNECTIONS_PER_ADDRESS); refusing more with 429.",
                address,
                self.max_per_address,
            )
        _close_with(self.transport, b"429 Too Many Requests", TOO_MANY)

    def head_timed_out(self) -> None:
        self.head_timer = None
        if self.transport.is_closing():
            return
        self.logger.info(
            "Closed a connection from %s: no request head within %g s.", self.client_host(), self.head_timeout
        )
        self.refused = True
        if self.cycle is None or self.cycle.response_complete:
            _close_with(self.transport, b"408 Request Timeout", TIMED_OUT)
        else:
            self.transport.close()  # a response is on its way: nothing can be written in its middle

    def body_timed_out(self) -> None:
        self.body_timer = None
        if self.transport.is_closing():
            return
        self.logger.info(
            "Closed a connection from %s: request body not received within %g s.", self.client_host(), self.body_timeout
        )
        self.transport.close()  # the app waiting for the body sees the client leave

    def client_host(self) -> str:
        return self.client[0] if self.client else "?"


def uvicorn_options() -> dict[str, Any]:
    """Everything but the app, host and port, from the settings."""
    from django.conf import settings

    trusted: list[str] = settings.MCPSITE["TRUSTED_PROXIES"]
    return {
        "http": GuardedHttpToolsProtocol.configured(
            head_timeout=settings.MCPSITE["REQUEST_HEAD_TIMEOUT_SECONDS"],
            body_timeout=settings.MCPSITE["REQUEST_BODY_TIMEOUT_SECONDS"],
            max_per_address=settings.MCPSITE["MAX_CONNECTIONS_PER_ADDRESS"],
            trusted_proxies=trusted,
        ),
        "h11_max_incomplete_event_size": settings.MCPSITE["MAX_REQUEST_HEAD"],
        # Off without a trusted proxy: uvicorn's default would believe 127.0.0.1.
        "proxy_headers": bool(trusted),
        "forwarded_allow_ips": trusted,
        "access_log": False,
        # JSON logs: uvicorn's own lines go through the root handler too, not a plain one of its own.
        **({"log_config": None} if settings.LOG_FORMAT == "json" else {}),
        "timeout_graceful_shutdown": settings.MCPSITE["SHUTDOWN_GRACE_SECONDS"],
        "loop": settings.MCPSITE["EVENT_LOOP"],
    }


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    parser = argparse.ArgumentParser(prog="python -m mcp_server.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=settings.PORT)
    # The benchmark's bare-SDK baseline is served through here too, so both run the same server.
    parser.add_argument("--app", default="mcp_server.asgi:application")
    args = parser.parse_args(argv)

    import django
    import uvicorn
    from django.core.management.base import SystemCheckError

    from mcpsite.checks import refuse_to_start_misconfigured

    django.setup()
    try:
        refuse_to_start_misconfigured()  # deployed without a key-encryption key, with a default secret ...
    except SystemCheckError as error:
        raise SystemExit(str(error)) from None

    uvicorn.run(args.app, host=args.host, port=args.port, **uvicorn_options())


if __name__ == "__main__":
    main()
