"""Which scopes a token needs at a tenant: ``mcp`` for anything, and for a tool call every scope
its tool declares (`tools_app.toolsets.Toolset.tool`, ``scopes=[...]``).

Scope strings are site-wide in DOT (one ``OAUTH2_PROVIDER["SCOPES"]``), so the scopes toolsets
declare are added to DOT's through its scopes backend (`ToolScopes`), read from the framework's
discovered toolsets, with the words the consent page shows. A toolset may not declare one of the
site's own scopes (``mcp``, the operator API's): operator scopes never go to an MCP client.

Both MCP entries ask `scopes_missing` before a ``tools/call`` reaches the SDK (the tool is named in
the body) and answer 403 ``insufficient_scope`` naming every scope the call needs
(`mcpsite.auth.insufficient_scope`), so a client can re-authorize with them (step-up).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from oauth2_provider.scopes import SettingsScopes

MCP_SCOPE = "mcp"
"""The scope every call at a tenant needs (the challenge's first ask)."""


def _site_scopes() -> Mapping[str, str]:
    scopes = settings.OAUTH2_PROVIDER["SCOPES"]
    assert isinstance(scopes, dict)
    return scopes


def tool_scope_words() -> dict[str, str]:
    """Every scope a discovered toolset declares, with its words (the first toolset's, if two describe one)."""
    from tools_app.discovery import toolsets

    site = _site_scopes()
    words: dict[str, str] = {}
    for toolset in toolsets.values():
        for scope, text in toolset.scopes.items():
            if scope in site:
                raise ImproperlyConfigured(
                    f"toolset {toolset.name!r} declares scope {scope!r}, one of the site's own"
                    " (OAUTH2_PROVIDER['SCOPES']): a tool's scope needs a name of its own"
                )
            words.setdefault(scope, text)
    return words


def scopes_supported() -> list[str]:
    """What every tenant's protected resource metadata lists: ``mcp``, then every scope a toolset
    declares. Site-wide rather than per tenant: an unknown tenant answers exactly as a private one
    (`mcp_server.compose.build_stand_in`), metadata included, and which toolsets a tenant enables
    is told only to its members."""
    return [MCP_SCOPE, *sorted(tool_scope_words())]


def tenant_scopes(toolset_names: Iterable[str]) -> list[str]:
    """``mcp``, then every scope the tools of these toolsets need: what a token needs to call them all."""
    from tools_app.discovery import toolsets

    needed = {
        scope
        for name in toolset_names
        if name in toolsets
        for scopes in toolsets[name].tool_scopes().values()
        for scope in scopes
    }
    return [MCP_SCOPE, *sorted(needed)]


def tool_needs(toolset_names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Tool name -> every scope a call to it needs (``mcp`` first), for the tools of these toolsets
    that need more than ``mcp``; a tool not named here needs ``mcp`` only."""
    from tools_app.discovery import toolsets

    needs: dict[str, set[str]] = {}
    for name in toolset_names:
        toolset = toolsets.get(name)
        if toolset is None:
            continue
        for tool, scopes in toolset.tool_scopes().items():
            needs.setdefault(tool, set()).update(scopes)
    return {tool: (MCP_SCOPE, *sorted(scopes)) for tool, scopes in needs.items()}


def scopes_missing(
    needs: Mapping[str, tuple[str, ...]],
    body: Any,
    granted: Sequence[str],
    allowed: frozenset[str] | None = None,
) -> tuple[str, ...] | None:
    """Every scope the ``tools/call`` requests in `body` (one JSON-RPC message, or a batch: the
    union) need, when `granted` lacks any of them; None when nothing is missing (or nothing in
    the body is a tool call: the SDK answers whatever it is). A tool outside the caller's role
    (`allowed`, `mcpsite.roles`) needs nothing, as an unknown tool does: it is answered as one."""
    messages = body if isinstance(body, list) else [body]
    needed: list[str] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            continue
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        scopes = needs.get(name) if isinstance(name, str) and (allowed is None or name in allowed) else None
        if scopes is not None:
            needed.extend(scope for scope in scopes if scope not in needed)
    if any(scope not in granted for scope in needed):
        return tuple(needed)
    return None


class ToolScopes(SettingsScopes):
    """DOT's settings scopes plus the ones toolsets declare, which any client may ask for."""

    def get_all_scopes(self) -> dict[str, str]:
        return {**_site_scopes(), **tool_scope_words()}

    def get_available_scopes(
        self, application: Any = None, request: Any = None, *args: Any, **kwargs: Any
    ) -> list[str]:
        return [*super().get_available_scopes(application, request), *tool_scope_words()]
