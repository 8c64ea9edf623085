"""Where an endpoint may point: a public https address, never this machine or its private network.

Endpoint URLs are set by operators, so an unchecked one would let them make the server call
its own admin, a cloud metadata service (169.254.169.254) or anything else on its network (SSRF).
The URL is checked when it is saved and again before every attempt (DNS may have changed).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from notifications.conf import notifications_settings
from notifications.exceptions import NotificationsError


class EndpointRefused(NotificationsError, ValueError):
    """The URL may not receive notifications; `reason` says why (shown to staff, recorded on attempts)."""

    def __init__(self, *, url: str, reason: str) -> None:
        super().__init__(reason)
        self.url = url
        self.reason = reason


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValueError(f"{host} does not resolve ({exc})") from None
    found: list[IPAddress] = []
    for *_, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        found.append(address)
    return found


def check_url(url: str) -> None:
    """Raise `EndpointRefused` unless `url` is https to public addresses only (or, with the
    ``ALLOW_LOOPBACK`` test switch, http or https to loopback)."""
    parts = urlsplit(url)
    if parts.scheme not in {"https", "http"}:
        raise EndpointRefused(url=url, reason="Only https URLs may receive notifications.")
    if parts.username is not None or parts.password is not None:
        raise EndpointRefused(url=url, reason="The URL may not carry a user name or password.")
    host = parts.hostname
    if not host:
        raise EndpointRefused(url=url, reason="The URL names no host.")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = _addresses(host, port)
    except ValueError as exc:
        raise EndpointRefused(url=url, reason=str(exc)) from None
    allow_loopback = notifications_settings()["ALLOW_LOOPBACK"]
    for address in addresses:
        if address.is_loopback and allow_loopback:
            continue
        if address.is_loopback or not address.is_global or address.is_multicast:
            raise EndpointRefused(url=url, reason=f"{host} is a private, loopback or reserved address ({address}).")
    if parts.scheme == "http" and not (allow_loopback and all(a.is_loopback for a in addresses)):
        raise EndpointRefused(url=url, reason="Only https URLs may receive notifications.")
