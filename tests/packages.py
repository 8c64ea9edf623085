"""Our top-level packages, bottom layer first: the one list the structural tests read."""

OURS = (
    "tools_app",
    "mcpsite",
    "approvals",
    "audit",
    "notifications",
    "mcp_tasks",
    "operator_api",
    "demo",
    "mcp_server",
    "config",
)
