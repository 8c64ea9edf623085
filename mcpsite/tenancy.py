from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TenantInfo:
    """What a running tenant server knows about its tenant (its MCP lifespan state)."""

    id: int
    slug: str
    name: str
    public: bool
    toolsets: tuple[str, ...]
    version: str

    @property
    def audience(self) -> str:
        return f"mcpsite:{self.slug}"
