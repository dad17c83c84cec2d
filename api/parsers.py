"""The API's JSON parser: DRF's, on the bounded loader (depth, numbers, storable text)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from attnquiz.input_limits import UnreadableJson, json_loads_bounded


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        if stream is None:
            return None
        # A body declared longer than DATA_UPLOAD_MAX_MEMORY_SIZE was answered 413 before any
        # view ran (attnquiz.input_limits.RequestSizeMiddleware); the stream holds no more.
        raw = stream.read(settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
        try:
            return json_loads_bounded(raw)
        except UnreadableJson as error:
            raise ParseError(f"JSON parse error - {error}") from None
