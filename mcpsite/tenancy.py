from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.conf import settings

from tools_app import discovery
from tools_app.toolsets import Toolset


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


# Which toolsets exist is the framework's knowledge (tools_app discovers them at ready()); the
# core checks and offers a tenant's list against that mapping, so a toolset found later is seen too.
def toolsets_known() -> Mapping[str, Toolset]:
    return discovery.toolsets


def toolset_choices() -> list[tuple[str, str]]:
    return [
        (name, f"{name}: {ts.description}" if ts.description else name) for name, ts in sorted(toolsets_known().items())
    ]


def tools_of(toolset_names: Iterable[str]) -> frozenset[str]:
    """Every tool name of these toolsets (an unknown toolset has none)."""
    known = toolsets_known()
    return frozenset(tool for name in toolset_names if name in known for tool in known[name].tool_names())


def with_their_views_tools(names: frozenset[str]) -> frozenset[str]:
    """`names` and the app-only tools of every MCP Apps view one of them shows: a host showing a
    call's view calls those for it, so whoever may call the tool may use its view."""
    return names.union(*(toolset.app_tools_shown_with(names) for toolset in toolsets_known().values()))


def tool_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    """Every tool, grouped by its toolset (a role's tools in the admin)."""
    return [(name, [(tool, tool) for tool in ts.tool_names()]) for name, ts in sorted(toolsets_known().items())]
