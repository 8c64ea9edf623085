"""The layers of ARCHITECTURE.md, held by reading every import (``ast``, lazy ones included).

One top-level package per layer, bottom to top: the framework (`tools_app`: it imports only the
SDK), the core (`mcpsite`), the apps (`approvals` and `audit`, then `notifications`, `mcp_tasks`
and `operator_api` above them), the toolsets (`demo`: tools are application code, so they may use
approvals), the composition root (`mcp_server`, with the process command `mcp_server.serve`) and,
beside it, the Django project (`config`: settings, URLs, the Celery app), which nothing imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.packages import OURS

ROOT = Path(__file__).resolve().parent.parent

# package -> the packages its modules may import
APPS = {"approvals", "audit", "notifications", "mcp_tasks", "operator_api"}
ALLOWED: dict[str, set[str]] = {
    "tools_app": {"tools_app"},
    "mcpsite": {"tools_app", "mcpsite"},
    "approvals": {"tools_app", "mcpsite", "approvals"},
    # The tool-call audit log: its layer reads the core's log context and the framework's digest.
    "audit": {"tools_app", "mcpsite", "audit"},
    "notifications": {"tools_app", "mcpsite", "approvals", "notifications"},
    # A task's run is audited as a call (its tool layers include the audit layer).
    "mcp_tasks": {"tools_app", "mcpsite", "approvals", "audit", "mcp_tasks"},
    "operator_api": {"tools_app", "mcpsite", "approvals", "audit", "mcp_tasks", "operator_api"},
    # Toolsets may use the apps (ARCHITECTURE.md, layer 4): `payments` opens approvals rows, and
    # `long_running` offers mcp_tasks' task view (MCP Apps, issue 30).
    "demo": {"tools_app", "mcpsite", "approvals", "mcp_tasks", "demo"},
    "mcp_server": {"tools_app", "mcpsite", *APPS, "demo", "mcp_server"},
    "config": {"tools_app", "mcpsite", *APPS, "demo", "config"},
}
PACKAGES = OURS

# No exceptions: where a lower layer needs something of the root (a task's run, its tenant's
# server), the root is named by a setting (``settings.TASKS["SERVER_FOR"]``), as Django's are.


def layer_of(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in ALLOWED else None  # None: the standard library or a third party


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names.add(target)
            # `from mcpsite import serving` imports the submodule, not just a name
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def violations() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = module_name(path)
            own = layer_of(module)
            assert own is not None
            tree = ast.parse(path.read_text(), filename=str(path))
            for target in sorted(imported(tree, module, path.name == "__init__.py")):
                other = layer_of(target)
                if other is None or other in ALLOWED[own]:
                    continue
                found.append(f"{module} ({own}) imports {target} ({other})")
    return found


def test_every_package_of_ours_has_its_layer() -> None:
    assert tuple(ALLOWED) == OURS


def test_no_module_imports_against_the_layers() -> None:
    assert violations() == []


def test_the_layers_are_read_as_documented() -> None:
    assert layer_of("mcp_server.registry") == "mcp_server"
    assert layer_of("mcp_server.serve") == "mcp_server"
    assert layer_of("mcpsite.broadcast") == "mcpsite"
    assert layer_of("tools_app.toolsets") == "tools_app"
    assert layer_of("demo.tools.payments") == "demo"
    assert layer_of("approvals.completion_wait") == "approvals"
    assert layer_of("django.conf") is None
