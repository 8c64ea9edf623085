"""The conformance toolset and what its fixtures share: real (tiny) media files and the
questions several fixtures ask."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

from mcp.server.mcpserver import Context
from mcp_types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    SamplingMessage,
    TextContent,
)

from tools_app.toolsets import Toolset

toolset = Toolset(description="Fixtures for the official MCP conformance suite (both protocol generations)")


def _png_1x1_red() -> bytes:
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    pixel_row = b"\x00\xff\x00\x00"  # filter byte, then one RGB pixel
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixel_row)) + chunk(b"IEND", b"")
    )


def _wav_silence() -> bytes:
    samples = b"\x80" * 80  # 10 ms of 8 kHz, 8-bit mono silence
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, 8000, 8000, 1, 8)
    riff = b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVE"
    return riff + b"fmt " + fmt + b"data" + struct.pack("<I", len(samples)) + samples


# The suite decodes media and checks the MIME type, so these are real (tiny) files.
PNG = _png_1x1_red()
PNG_B64 = base64.b64encode(PNG).decode()
WAV_B64 = base64.b64encode(_wav_silence()).decode()


def text_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)])


def form_question(message: str, properties: dict[str, Any], required: list[str]) -> ElicitRequest:
    schema = {"type": "object", "properties": properties, "required": required}
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def sampling_question(prompt: str, max_tokens: int) -> CreateMessageRequest:
    message = SamplingMessage(role="user", content=TextContent(text=prompt))
    return CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=max_tokens))


def ask_name() -> ElicitRequest:
    return form_question("What is your name?", {"name": {"type": "string"}}, ["name"])


def ask_ok() -> ElicitRequest:
    return form_question("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])


def accepted(response: object) -> dict[str, Any] | None:
    """The form content of an accepted elicitation response; None for anything else."""
    if isinstance(response, ElicitResult) and response.action == "accept":
        return dict(response.content or {})
    return None


def declared(ctx: Context, capability: str) -> bool:
    capabilities = ctx.client_capabilities
    return capabilities is not None and getattr(capabilities, capability, None) is not None
