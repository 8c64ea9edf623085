"""The framework (`tools_app`, its tool modules aside) sits below `approvals`: it imports nothing of
it, and learns where URL-mode steps are kept from the store approvals registers when it is ready."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORK = ROOT / "tools_app"


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            modules.add(node.module)
    return modules


def test_the_framework_imports_nothing_of_approvals() -> None:
    framework = [
        path
        for path in FRAMEWORK.rglob("*.py")
        if not path.is_relative_to(FRAMEWORK / "tools") and not path.is_relative_to(FRAMEWORK / "migrations")
    ]
    reaching_up = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in framework
        for module in imported_modules(path)
        if module == "approvals" or module.startswith("approvals.")
    }
    assert framework
    assert reaching_up == set()


def test_a_tenants_server_is_handed_approvals_store_of_url_steps() -> None:
    # Imported here, so the test above reports what reaches up even where this store is missing.
    from approvals.step_store import ElicitationStepStore
    from mcp_server.compose import serving
    from tools_app.tenant import TenantInfo

    info = TenantInfo(id=1, slug="acme", name="Acme", public=False, toolsets=("payments",), version="v1")
    state = serving(info)
    assert isinstance(state.url_steps, ElicitationStepStore)
    assert state == info  # what the server is handed is not part of what the tenant is
