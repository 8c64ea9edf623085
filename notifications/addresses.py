"""Where an endpoint may point: a public https address, never this machine or its private network.

Endpoint URLs are set by operators, so an unchecked one would let them make the server call
its own admin, a cloud metadata service (169.254.169.254) or anything else on its network (SSRF).
The URL is checked when it is saved and again before every attempt (DNS may have changed), and
an attempt connects to the address that was checked (`notifications.sending`), so a name that
resolves elsewhere on a second lookup (DNS rebinding) cannot redirect it.

An IPv6 address may carry an IPv4 one (IPv4-mapped ``::ffff:0:0/96``, NAT64 ``64:ff9b::/96``,
6to4 ``2002::/16``): the IPv4 address it carries is the one judged. Forms that are never a
public destination (IPv4-compatible ``::/96``, local-use NAT64 ``64:ff9b:1::/48``, site-local
``fec0::/10``) are refused whatever they carry; Python 3.11's `is_global` calls them global.
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

# Not reachable on the public internet (IANA's special-purpose registry), though `is_global`
# (Python 3.11) says they are.
_NEVER_PUBLIC = (
    ipaddress.IPv6Network("::/96"),  # IPv4-compatible, deprecated (RFC 4291 2.5.5.1)
    ipaddress.IPv6Network("64:ff9b:1::/48"),  # local-use NAT64 (RFC 8215)
    ipaddress.IPv6Network("fec0::/10"),  # site-local, deprecated (RFC 3879): a private network
    ipaddress.IPv6Network("3fff::/20"),  # documentation (RFC 9637)
    ipaddress.IPv6Network("5f00::/16"),  # SRv6 segment identifiers (RFC 9602)
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # well-known prefix (RFC 6052): the last 32 bits


def carried(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (NAT64 well-known prefix, 6to4), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def is_public(address: IPAddress) -> bool:
    """A global unicast address, judged by the IPv4 address it carries if it carries one."""
    inner = carried(address)
    if inner is not None:
        return is_public(inner)
    if isinstance(address, ipaddress.IPv6Address) and any(address in network for network in _NEVER_PUBLIC):
        return False
    return address.is_global and not address.is_multicast


def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValueError(f"{host} does not resolve ({exc})") from None
    found: list[IPAddress] = []
    for *_, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # what a dual-stack socket connects to
        found.append(address)
    return found


def check_url(url: str) -> list[IPAddress]:
    """The addresses `url`'s host resolves to, all checked; `EndpointRefused` unless the URL is
    https to public addresses only (or, with the ``ALLOW_LOOPBACK`` test switch, http or https
    to loopback). Connect to one of these, never to a second lookup's answer."""
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
    if not addresses:
        raise EndpointRefused(url=url, reason=f"{host} does not resolve (no address).")
    allow_loopback = notifications_settings()["ALLOW_LOOPBACK"]
    for address in addresses:
        if address.is_loopback and allow_loopback:
            continue
        if not is_public(address):
            inner = carried(address)
            shown = f"{address}, which carries {inner}" if inner is not None else f"{address}"
            raise EndpointRefused(url=url, reason=f"{host} is a private, loopback or reserved address ({shown}).")
    if parts.scheme == "http" and not (allow_loopback and all(a.is_loopback for a in addresses)):
        raise EndpointRefused(url=url, reason="Only https URLs may receive notifications.")
    return addresses
