"""A parameter named `user` in approvals and the framework says what it is (a staff user, or
whoever is signed in), never `Any`, so mypy checks what the services are handed."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_users_are_typed_in_approvals_and_the_framework() -> None:
    untyped: set[str] = set()
    for app in ("approvals", "tools_app"):
        for path in (ROOT / app).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                untyped.update(
                    f"{path.relative_to(ROOT)}:{argument.lineno} {node.name}"
                    for argument in arguments
                    if argument.arg == "user"
                    and (argument.annotation is None or ast.unparse(argument.annotation) == "Any")
                )
    assert untyped == set()
