"""The fixtures the official MCP conformance suite calls (`@modelcontextprotocol/conformance`).

Names, arguments and replies are the suite's, not ours: a scenario looks a tool, prompt or
resource up by name and compares what comes back. Both protocol generations are covered:
2025-11-25 tools ask the client mid-call over the session (`session`), 2026-07-28 tools
answer with an `InputRequiredResult` and read the client's `input_responses` on the retry
(`input_required`).

Protocol methods a toolset cannot provide (`completion/complete`, `resources/subscribe`,
`logging/setLevel`) are served for every tenant by `mcpsite.protocol_methods`.

One toolset (`shared.toolset`), found by discovery here in the package; each module below adds
its fixtures to it when imported.
"""

from __future__ import annotations

# Importing a module is what adds its fixtures to the toolset.
from demo.tools.conformance import content, input_required, prompts, resources, session, stateless, tasks  # noqa: F401
from demo.tools.conformance.shared import toolset

__all__ = ["toolset"]
