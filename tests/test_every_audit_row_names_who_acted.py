"""Who acted is recorded one way: every model of ours holding a user as ``actor`` is an audit row
built on `mcpsite.actors.ActedBy` (the user, the way it came as a choice, the OAuth client), and no
service of ours takes a free-text ``source`` or ``via`` of who acted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.apps import apps

from mcpsite.actors import ActedBy, Via
from tests.packages import OURS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("model", [m for m in apps.get_models() if m.__module__.split(".")[0] in OURS], ids=str)
def test_a_model_naming_who_acted_records_it_as_an_actor(model: type) -> None:
    fields = {field.name for field in model._meta.get_fields()}  # type: ignore[attr-defined]
    if "actor" in fields or "via" in fields:
        assert issubclass(model, ActedBy)
        assert model._meta.get_field("via").choices == Via.choices


def test_no_service_takes_who_acted_as_free_text() -> None:
    loose = []
    for package in OURS:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    for argument in [*node.args.args, *node.args.kwonlyargs]:
                        if argument.arg in {"source", "via", "oauth_client"}:
                            loose.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({argument.arg})")
    assert loose == []
