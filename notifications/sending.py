"""One signed POST (Standard Webhooks), with no ORM: the senders run these on their own threads."""

from __future__ import annotations

import ipaddress
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx2
from standardwebhooks import Webhook

from notifications.addresses import EndpointRefused, IPAddress, check_url

EXCERPT_CHARS = 200


@dataclass(frozen=True)
class Outcome:
    """What one attempt got: a status code and the start of the body, or an error."""

    started_at: datetime
    duration_seconds: float
    status_code: int | None = None
    response_excerpt: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def body_of(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"), sort_keys=True)


def signed_headers(*, secret: str, msg_id: str, body: str, at: datetime) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "user-agent": "mcpsite-notifications",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, at, body),
    }


@dataclass(frozen=True)
class Pinned:
    """A request for `url` that connects to `address`, one the URL's host was checked to resolve
    to, however the name resolves by the time the connection opens (DNS rebinding). The receiver
    still sees its name: in ``Host``, and in TLS, where it is sent as SNI and the certificate is
    verified against it (httpx's ``sni_hostname`` request extension)."""

    url: httpx2.URL
    headers: dict[str, str]
    extensions: dict[str, Any]


def pinned(url: str, address: IPAddress) -> Pinned:
    named = httpx2.URL(url)
    try:
        ipaddress.ip_address(named.host)
    except ValueError:
        pass
    else:
        return Pinned(named, {}, {})  # an address already: nothing to look up, nothing to pin
    extensions: dict[str, Any] = {"sni_hostname": named.host} if named.scheme == "https" else {}
    return Pinned(named.copy_with(host=str(address)), {"host": named.netloc.decode("ascii")}, extensions)


def post(*, url: str, secret: str, msg_id: str, payload: dict[str, Any], timeout: float) -> Outcome:
    """Post once, to an address the URL's host was just checked to resolve to (`pinned`).
    Redirects are not followed (a 3xx is a failed attempt: the URL is the one that was checked),
    proxies from the environment are not used, and only the first bytes of the answer are read.
    Signed at send time: the receiver checks the timestamp is recent."""
    started_at, started = datetime.now(UTC), time.monotonic()
    try:
        # Checked again: the name may resolve elsewhere than when it was saved.
        target = pinned(url, check_url(url)[0])
        body = body_of(payload)
        headers = {**signed_headers(secret=secret, msg_id=msg_id, body=body, at=started_at), **target.headers}
        with (
            httpx2.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client,
            client.stream(
                "POST", target.url, content=body.encode(), headers=headers, extensions=target.extensions
            ) as response,
        ):
            excerpt = b""
            for chunk in response.iter_bytes():
                excerpt += chunk
                if len(excerpt) >= EXCERPT_CHARS:
                    break
    except EndpointRefused as exc:
        return Outcome(started_at, time.monotonic() - started, error=f"refused: {exc.reason}"[:300])
    except httpx2.TimeoutException:
        return Outcome(started_at, time.monotonic() - started, error=f"no answer within {timeout:g} s")
    except httpx2.HTTPError as exc:
        return Outcome(started_at, time.monotonic() - started, error=f"{type(exc).__name__}: {exc}"[:300])
    text = excerpt[:EXCERPT_CHARS].decode(errors="replace")
    return Outcome(started_at, time.monotonic() - started, status_code=response.status_code, response_excerpt=text)
