"""The same two tools as demo/tools/bench.py, written the django-mcpz way."""

from __future__ import annotations

import functools
import os
from http import HTTPStatus
from typing import Any

import msgspec
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django_mcpz.bearer_tokens.auth import token_auth
from django_mcpz.server import MCPServer, elicit


@functools.cache
def _bench_user() -> Any:
    return get_user_model().objects.get(username="bench")


def memory_auth(request: HttpRequest) -> HttpResponse | None:
    """The bare SDK's pairing: one known token, checked in memory (no query per call)."""
    if request.headers.get("Authorization") != _EXPECTED:
        return HttpResponse(status=HTTPStatus.UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"})
    request.user = _bench_user()
    return None


_EXPECTED = f"Bearer {os.environ.get('BENCH_TOKEN', '')}"
# BENCH_PEER_AUTH=db: the package's own bearer tokens (one query per call); memory: like the bare SDK.
_AUTH = {"db": token_auth, "memory": memory_auth}[os.environ.get("BENCH_PEER_AUTH", "memory")]
server = MCPServer(name="bench-peer", version="1", auth=_AUTH)


class EchoParams(msgspec.Struct):
    text: str


@server.tool(description="Return the text (the plain-call benchmark).")
def echo(request: Any, params: EchoParams) -> str:
    return f"echo: {params.text}"


class GreetParams(msgspec.Struct):
    name: str


class Colour(msgspec.Struct):
    colour: str


@server.tool(description="Greet someone in a colour they pick (the two-round benchmark: one form question).")
def greet(request: Any, params: GreetParams) -> str:
    colour = elicit(request, "Which colour?", Colour)
    return f"hello {params.name} in {colour.colour}"
