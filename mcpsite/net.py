"""Who a per-address limit counts: `address_bucket`.

An IPv4 address is one client (or one NAT: as good as it gets). An IPv6 host is handed a whole
/64 (RFC 6177; SLAAC and privacy addresses pick any of its 2**64 interface ids), so counting the
exact IPv6 address gives anyone a fresh budget per request; its /64 is what one site holds. An
IPv4-mapped IPv6 address (``::ffff:198.51.100.7``, what a dual-stack socket reports for an IPv4
peer) is that IPv4 address, so both spellings share one budget.
"""

from __future__ import annotations

import ipaddress

IPV6_BUCKET_PREFIX = 64


def address_bucket(address: str) -> str:
    """The key a per-address limit counts `address` under: the IPv4 address, or the IPv6 /64
    (``2001:db8:1:2::/64``). Anything that is not an IP address (``-``, a unix socket path) is
    returned as given: its own bucket."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv4Address):
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    host_bits = 128 - IPV6_BUCKET_PREFIX
    # From the integer: a scoped address (fe80::1%eth0) keeps no zone in its network.
    return str(ipaddress.IPv6Network(((int(ip) >> host_bits) << host_bits, IPV6_BUCKET_PREFIX)))
