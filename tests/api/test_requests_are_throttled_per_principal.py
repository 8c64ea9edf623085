"""Each principal (machine client and the operator it acts for) has its own request budget
(`MCPSITE_API_RATE`): beyond it, 429 with Retry-After; another client of the same operator is
counted apart."""

from __future__ import annotations

from collections.abc import Callable

from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer


def test_a_principal_past_its_rate_gets_429_and_another_does_not(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    server = server_factory(MCPSITE_API_RATE="3/minute")
    try:
        first, second = (machine_client(server, "ops", ["keys:rotate"]) for _ in range(2))
        with api(server, first.token) as http:
            assert [http.get("/keys/").status_code for _ in range(3)] == [200, 200, 200]
            throttled = http.get("/keys/")
        assert throttled.status_code == 429
        assert throttled.json()["detail"].startswith("Request was throttled. Expected available in ")
        assert 0 < int(throttled.headers["retry-after"]) <= 60
        with api(server, second.token) as http:
            assert http.get("/keys/").status_code == 200
    finally:
        server.stop()
