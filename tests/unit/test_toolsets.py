"""Tool modules: discovery, and no form elicitation may ask for a secret.

No `from __future__ import annotations` here: the resolvers are local functions, and their
annotations must be real objects for the registration-time walk to see them.
"""

from typing import Annotated

import pytest
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver.resolve import Resolve
from pydantic import BaseModel, Field

from mcpsite.tenancy import toolset_choices
from tools_app.discovery import toolsets
from tools_app.sensitive import UnsafeElicitation
from tools_app.toolsets import Elicit, Toolset


class Login(BaseModel):
    username: str
    password: str


class CardForm(BaseModel):
    card_number: str = Field(description="16 digits")


class ApiKeyForm(BaseModel):
    key: str = Field(alias="apiKey")


class Harmless(BaseModel):
    region: str
    ok: bool
    spinner: str  # contains "pin" but is not one


def test_demo_module_is_discovered_as_a_toolset() -> None:
    assert "demo" in toolsets
    assert ("demo", f"demo: {toolsets['demo'].description}") in toolset_choices()


@pytest.mark.parametrize("schema", [Login, CardForm, ApiKeyForm])
def test_a_tool_whose_resolver_asks_for_a_secret_is_refused_at_registration(schema: type[BaseModel]) -> None:
    async def ask() -> Elicit[schema]:  # type: ignore[valid-type]
        raise AssertionError("never runs")

    async def sign_in(value: Annotated[schema, Resolve(ask)]) -> str:  # type: ignore[valid-type]
        return "never"

    with pytest.raises(UnsafeElicitation, match="asks for a secret"):
        Toolset("unsafe").tool()(sign_in)


def test_a_nested_resolver_asking_for_a_secret_is_refused_too() -> None:
    async def login() -> Login | Elicit[Login]:
        raise AssertionError("never runs")

    async def session(user: Annotated[Login, Resolve(login)]) -> str:
        return user.username

    async def act(s: Annotated[str, Resolve(session)]) -> str:
        return s

    with pytest.raises(UnsafeElicitation):
        Toolset("unsafe").prompt()(act)


def test_an_unannotated_resolver_is_refused_when_it_asks() -> None:
    with pytest.raises(UnsafeElicitation, match="'password'"):
        Elicit("Your password?", Login)


def test_harmless_forms_are_accepted() -> None:
    async def ask() -> Elicit[Harmless]:
        return Elicit("Which region?", Harmless)

    async def go(value: Annotated[Harmless, Resolve(ask)]) -> str:
        return value.region

    toolset = Toolset("fine")
    assert toolset.tool()(go) is go
    assert issubclass(Elicit("Which region?", Harmless).schema, Harmless)


def test_a_form_schema_renders_once_and_as_the_sdk_renders_it() -> None:
    schema = Elicit("Which region?", Harmless).schema
    assert schema is Elicit("Again?", Harmless).schema  # one subclass per form model
    assert schema.__name__ == "Harmless"
    first = render_elicitation_schema(schema)
    assert first == render_elicitation_schema(Harmless)
    first["properties"]["region"]["title"] = "changed by a caller"
    assert render_elicitation_schema(schema) == render_elicitation_schema(Harmless)  # each caller gets a copy
    answer = schema.model_validate({"region": "eu-west-1", "ok": True, "spinner": "slow"})
    assert isinstance(answer, Harmless) and answer.region == "eu-west-1"
