from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings


# The one definition of a tenant's addresses, both ways.
def tenant_mcp_path(slug: str) -> str:
    return f"/t/{slug}/mcp"


def tenant_slug_of_path(path: str) -> str | None:
    """``/t/<slug>/mcp`` -> slug; anything else (another path, an empty slug, a slash in it) -> None."""
    if not path.startswith("/t/"):
        return None
    slug, sep, rest = path[3:].partition("/")
    return slug if sep and rest == "mcp" and slug else None


def tenant_resource_url(slug: str, site_root: str | None = None) -> str:
    """The RFC 8707 resource (and RFC 9728 resource identifier) of the tenant's endpoint."""
    return f"{(site_root or settings.SITE_ROOT).rstrip('/')}{tenant_mcp_path(slug)}"


def tenant_slug_of_resource(resource: str, site_root: str | None = None) -> str | None:
    """The slug whose `tenant_resource_url` is exactly `resource`, if it is one of ours."""
    root = (site_root or settings.SITE_ROOT).rstrip("/")
    return tenant_slug_of_path(resource[len(root) :]) if resource.startswith(f"{root}/") else None


def tenant_audience(slug: str) -> str:
    """The tenant's MCP server name, which is also its requestState audience."""
    return f"mcpsite:{slug}"


@dataclass(frozen=True)
class TenantInfo:
    """What a running tenant server knows about its tenant (its MCP lifespan state)."""

    id: int
    slug: str
    name: str
    public: bool
    toolsets: tuple[str, ...]
    version: str
    # The tenant's own call quotas (`mcp_server.quotas`); None: the site's defaults.
    call_quota: int | None = None
    call_quota_per_person: int | None = None

    @property
    def audience(self) -> str:
        return tenant_audience(self.slug)


class KnownToolset(Protocol):
    description: str


# Which toolsets exist is the framework's knowledge (tools_app discovers them at ready() and hands
# them here); the core checks and offers a tenant's list against them without importing the
# framework above it. The mapping is the framework's own, so a toolset found later is seen too.
_toolsets: Mapping[str, KnownToolset] = {}


def toolsets_provide(toolsets: Mapping[str, KnownToolset]) -> None:
    global _toolsets
    _toolsets = toolsets


def toolsets_known() -> Mapping[str, KnownToolset]:
    return _toolsets


def toolset_choices() -> list[tuple[str, str]]:
    return [(name, f"{name}: {ts.description}" if ts.description else name) for name, ts in sorted(_toolsets.items())]
