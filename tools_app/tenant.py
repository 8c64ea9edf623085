"""What a running tenant server knows of its tenant: the one thing of the core the framework needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools_app.urlmode.store import UrlStepStore


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
    # Where this server's URL-mode steps are kept: handed in by the composer with the lifespan
    # state (`mcp_server.compose.serving`), never registered. Not part of what the tenant is.
    url_steps: UrlStepStore | None = field(default=None, compare=False, repr=False)

    @property
    def audience(self) -> str:
        return tenant_audience(self.slug)
