"""The benchmark's toolset (`bench/run`): the same two tools the bare-SDK and django-mcpz baselines
serve, so the three servers differ only in what hosts them.

Keep these in step with `bench/bare_app.py` and `bench/peer_site/tools.py`.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver.resolve import Resolve
from pydantic import BaseModel, Field

from tools_app.toolsets import Elicit, Toolset

toolset = Toolset(description="Benchmark tools: echo (plain call), greet (one form question)")


@toolset.tool()
async def echo(text: str) -> str:
    """Return the text (the plain-call benchmark)."""
    return f"echo: {text}"


class Colour(BaseModel):
    colour: str = Field(description="A colour")


async def ask_colour() -> Elicit[Colour]:
    return Elicit("Which colour?", Colour)


@toolset.tool()
async def greet(name: str, colour: Annotated[Colour, Resolve(ask_colour)]) -> str:
    """Greet someone in a colour they pick (the two-round benchmark: one form question)."""
    return f"hello {name} in {colour.colour}"
