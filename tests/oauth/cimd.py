"""Client ID Metadata Documents for the tests: a real HTTP server on loopback serving JSON documents,
and the fetcher the test servers are told to use (``MCPSITE_OAUTH_CIMD_FETCHER``) to reach it.

A CIMD client_id is an https URL, and DOT's fetcher refuses loopback addresses (its SSRF guard), as
it must in production. The tests' documents live at ``https://127.0.0.1:<port>/...`` client ids; the
fetcher here reads them from this plain-http server at the same address, and nothing else."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import urllib3
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher

FETCHER = "tests.oauth.cimd.LoopbackHttpFetcher"


class LoopbackHttpFetcher(SafeMetadataFetcher):
    """Fetches an ``https://127.0.0.1:<port>/<path>`` client id over plain http (tests only);
    DOT's own checks of the response (status, JSON media type, size, a JSON object) still apply."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        parts = urlsplit(client_id)
        if parts.scheme != "https" or parts.hostname != "127.0.0.1" or not parts.port:
            raise CIMDError(f"the tests' fetcher reaches only https://127.0.0.1:<port> ids, not {client_id!r}")
        response = urllib3.request(
            "GET", f"http://127.0.0.1:{parts.port}{parts.path}", redirect=False, preload_content=False, timeout=5
        )
        try:
            document: tuple[dict[str, Any], int] = self._read_document(response)
            return document
        finally:
            response.release_conn()


class DocumentHost:
    """Serves `documents` (path -> JSON object) on 127.0.0.1; counts the fetches of each path."""

    def __init__(self) -> None:
        self.documents: dict[str, dict[str, Any]] = {}
        self.fetches: dict[str, int] = {}
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host.fetches[self.path] = host.fetches.get(self.path, 0) + 1
                document = host.documents.get(self.path)
                body = json.dumps(document).encode() if document is not None else b"{}"
                self.send_response(200 if document is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def client_id(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def serve(self, path: str, **metadata: Any) -> str:
        """Publish a document at `path` whose client_id is its URL (unless `metadata` says another)."""
        client_id = self.client_id(path)
        self.documents[path] = {"client_id": client_id, **metadata}
        return client_id

    def __enter__(self) -> DocumentHost:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
