"""The web process: ``python -m mcpsite.serve [--host H] [--port P]``.

`scripts/run`, the live tests and the benchmark all start the server through here, so what is
tested and measured is what is deployed. It is uvicorn with two things a public server needs,
read from the settings:

- **A limit on the request head** (request line and headers, ``MCPSITE_MAX_REQUEST_HEAD``): a
  longer one gets ``431`` and the connection closes. httptools, uvicorn's fast parser, has no such
  limit (a 32 MB header was read whole), so `HeadLimitedHttpToolsProtocol` adds one; h11 has
  one, and gets the same number, but parses in Python, which costs on every request.
- **Forwarded headers only from known proxies** (``MCPSITE_TRUSTED_PROXIES``). uvicorn believes
  ``X-Forwarded-For`` from 127.0.0.1 unless told otherwise, so any local client, or any client
  behind a proxy that passes the header through, chose the address the registration limit (and
  the sign-in throttle) count against. With no trusted proxy the header is ignored.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

# When the configuration names no limit (a plain `uvicorn --http mcpsite.serve:...`); the
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


def uvicorn_options() -> dict[str, Any]:
    """Everything but the app, host and port, from the settings."""
    from django.conf import settings

    trusted: list[str] = settings.MCPSITE["TRUSTED_PROXIES"]
    return {
        "http": HeadLimitedHttpToolsProtocol,
        "h11_max_incomplete_event_size": settings.MCPSITE["MAX_REQUEST_HEAD"],
        # Off without a trusted proxy: uvicorn's default would believe 127.0.0.1.
        "proxy_headers": bool(trusted),
        "forwarded_allow_ips": trusted,
        "access_log": False,
        "timeout_graceful_shutdown": settings.MCPSITE["SHUTDOWN_GRACE_SECONDS"],
    }


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    from django.conf import settings

    parser = argparse.ArgumentParser(prog="python -m mcpsite.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=settings.PORT)
    # The benchmark's bare-SDK baseline is served through here too, so both run the same server.
    parser.add_argument("--app", default="mcpsite.serving.asgi:application")
    args = parser.parse_args(argv)

    import uvicorn

    uvicorn.run(args.app, host=args.host, port=args.port, **uvicorn_options())


if __name__ == "__main__":
    main()
