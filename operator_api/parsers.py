"""The API's JSON parser: DRF's, with a bound on nesting (`mcpsite.jsonbody`).

DRF's parser turns a `ValueError` into a 400 but not the `RecursionError` a body of 100,000 ``[``
raises, which ended in a 500 with a traceback; no body the API takes nests more than a few levels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from mcpsite.jsonbody import JSONTooDeep, json_depth_check


class BoundedJSONParser(JSONParser):
    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
            json_depth_check(data)
        except (RecursionError, JSONTooDeep):
            raise ParseError(f"JSON parse error - {JSONTooDeep()}") from None
        return data
