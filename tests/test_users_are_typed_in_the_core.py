"""The core says what a user is where it takes one (the user model's base, or the anonymous user),
so mypy checks what is read from it; no parameter named ``user`` is annotated ``Any``."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "mcpsite"


def test_no_user_parameter_in_the_core_is_typed_any() -> None:
    untyped = []
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                for argument in arguments:
                    if argument.arg == "user" and (
                        argument.annotation is None or ast.unparse(argument.annotation) == "Any"
                    ):
                        untyped.append(f"{path.relative_to(CORE.parent)}:{node.lineno} {node.name}")
    assert untyped == []
