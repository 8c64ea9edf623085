"""The OpenAPI 3 schema is served at /api/v1/schema/, and /api/v1/docs/ shows it as a page that
loads in a browser with no request failing and nothing fetched from another host (no CDN)."""

from __future__ import annotations

from typing import Any

import httpx2
import yaml

from tests.conftest import LiveServer


def test_the_schema_is_openapi_3_and_names_each_operations_scope(server: LiveServer) -> None:
    response = httpx2.get(f"{server.url}/api/v1/schema/", headers={"Accept": "application/json"}, timeout=30)
    assert response.status_code == 200
    schema = response.json() if "json" in response.headers["content-type"] else yaml.safe_load(response.text)
    assert schema["openapi"].startswith("3.")
    approve = schema["paths"]["/api/v1/elicitations/{id}/approve/"]["post"]
    assert approve["security"] == [{"oauth2": ["approvals:write"]}]
    assert "`approvals.change_elicitation`" in approve["description"]
    flows = schema["components"]["securitySchemes"]["oauth2"]["flows"]
    assert flows["clientCredentials"]["tokenUrl"] == "/o/token/"
    assert "material" not in schema["components"]["schemas"]["Key"]["properties"]


def test_the_docs_page_loads_offline_in_a_browser(server: LiveServer, page: Any) -> None:
    requests: list[str] = []
    failures: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("requestfailed", lambda request: failures.append(f"{request.url}: {request.failure}"))

    def on_response(response: Any) -> None:
        if response.status >= 400:
            failures.append(f"{response.url}: {response.status}")

    page.on("response", on_response)
    response = page.goto(f"{server.url}/api/v1/docs/")
    page.wait_for_load_state("networkidle")
    assert response.status == 200
    assert failures == []
    assert all(url.startswith(server.url) for url in requests), requests
    assert page.title() == "mcpsite operator API"
    assert (
        page.locator("#elicitations_approve_create").inner_text().startswith("POST /api/v1/elicitations/{id}/approve/")
    )
    schema = page.request.get(page.eval_on_selector("#schema-link", "a => a.href"))
    assert (schema.status, schema.url) == (200, f"{server.url}/api/v1/schema/")
    assert yaml.safe_load(schema.text())["info"]["title"] == "mcpsite operator API"
