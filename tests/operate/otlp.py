"""A small OTLP/HTTP receiver: it decodes each ``/v1/traces`` export (protobuf, gzip or not) with
the OpenTelemetry protocol's own messages and keeps the spans it got."""

from __future__ import annotations

import gzip
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    scope: str
    kind: int
    service: str
    attributes: dict[str, Any]
    trace_id: bytes


def _value(any_value: Any) -> Any:
    return getattr(any_value, any_value.WhichOneof("value")) if any_value.WhichOneof("value") else None


@dataclass
class OtlpReceiver:
    spans: list[ReceivedSpan] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def start(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)  # raises on anything but a trace export
                receiver.take(self.path, request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def take(self, path: str, request: ExportTraceServiceRequest) -> None:
        self.paths.append(path)
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        ReceivedSpan(
                            name=span.name,
                            scope=scope_spans.scope.name,
                            kind=span.kind,
                            service=str(resource.get("service.name")),
                            attributes={a.key: _value(a.value) for a in span.attributes},
                            trace_id=span.trace_id,
                        )
                    )

    def wait_for(self, predicate: Any, timeout: float = 15.0) -> ReceivedSpan:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for span in list(self.spans):
                if predicate(span):
                    return span
            time.sleep(0.05)
        raise AssertionError(f"no such span within {timeout}s; got {[(s.scope, s.name) for s in self.spans]}")

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
