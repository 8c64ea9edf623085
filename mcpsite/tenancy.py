from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


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
