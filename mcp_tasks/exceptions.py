"""The one base of the errors mcp_tasks raises on purpose (as each app has: see ARCHITECTURE.md)."""

from __future__ import annotations


class McpTasksError(Exception):
    """Base of mcp_tasks' errors (each carries its data: the reason, the limit...)."""
