"""The composition root: the one place that imports every app and puts the site together.

`asgi` (the ASGI entry, its routing and lifespan), `registry` (one `MCPServer` per tenant in
use, built on its first request from its toolsets), `background` (what each process runs beside
the requests), `endpoint` (the tenant endpoint: 2026-07-28 POSTs on a short path) and `sessions`
(2025-11-25 sessions). Nothing below this package imports it; see ARCHITECTURE.md.
"""
