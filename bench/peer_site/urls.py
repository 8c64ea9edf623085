from __future__ import annotations

from django.urls import path

from bench.peer_site.tools import server

urlpatterns = [path("mcp", server)]
