"""OpenTelemetry traces over OTLP, only when the standard ``OTEL_*`` environment asks for them.

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) set, `install`
sets the OpenTelemetry SDK's tracer provider (a batch processor and the OTLP/HTTP protobuf
exporter, which read the rest of the ``OTEL_EXPORTER_OTLP_*`` variables themselves) and
instruments Django (a server span per request to Django's pages; the instrumentation's own
``OTEL_PYTHON_DJANGO_EXCLUDED_URLS`` is honoured, and without it the probes and ``/metrics`` are
left out). The MCP endpoints never pass through Django: their spans are the SDK's own, one per MCP
message (its ``OpenTelemetryMiddleware``, kept when ``MCPSITE_OTEL_SPANS`` is on, which it is by
default exactly when this exports).

Without those variables (or with ``OTEL_SDK_DISABLED=true``, or ``OTEL_TRACES_EXPORTER=none``)
nothing is imported or installed: the API's no-op provider stays, the SDK's middleware is dropped
from every tenant's server and Django's middleware list is untouched, so the hot path pays nothing.

This module imports no Django at import time: the settings read `exporting` for their default.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

logger = logging.getLogger(__name__)

DEFAULT_SERVICE_NAME = "mcpsite"
DEFAULT_EXCLUDED_URLS = "healthz,readyz,metrics"

_installed = False


def exporting(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment asks for traces to be exported (the OpenTelemetry variables)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return bool(environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def install(environ: Mapping[str, str] = os.environ) -> bool:
    """Export traces if the environment asks for it; True if installed (once per process).

    Call it before Django's handler is built (its middleware list is read then): the ASGI entry
    does, first thing.
    """
    global _installed
    if _installed:
        return True
    if not exporting(environ):
        return False
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    if environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf") != "http/protobuf":
        logger.warning("OTEL_EXPORTER_OTLP_PROTOCOL is not http/protobuf: traces are sent as http/protobuf anyway")
    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    provider = TracerProvider(resource=resource)  # flushed at exit
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    excluded = None
    if not (environ.get("OTEL_PYTHON_DJANGO_EXCLUDED_URLS") or environ.get("OTEL_PYTHON_EXCLUDED_URLS")):
        excluded = DEFAULT_EXCLUDED_URLS
    DjangoInstrumentor().instrument(tracer_provider=provider, excluded_urls=excluded)
    _installed = True
    logger.info("traces exported over OTLP as %s", resource.attributes.get(SERVICE_NAME))
    return True
