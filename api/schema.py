"""How the API describes itself: the token scheme, and problem responses on every operation."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from .problems import PROBLEM_CONTENT_TYPE

COMMON_PROBLEMS = {
    "400": "The request is not valid.",
    "401": "No credentials, or a token that is unknown, expired or revoked.",
    "403": "Your role (or a read-only token) does not allow this.",
    "404": "No such object, or you may not see it.",
    "429": "Rate limit reached; retry after the `Retry-After` seconds.",
}


class ProblemSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="A URN naming the kind of problem.")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Field errors: field (dotted path) -> messages.",
    )


class SpecProblemSerializer(ProblemSerializer):
    issues = serializers.ListField(
        child=serializers.DictField(), required=False,
        help_text="Problems in an exercise file: {line, path, message}.",
    )


def _is_problem(serializer) -> bool:
    inner = serializer.response if isinstance(serializer, OpenApiResponse) else serializer
    inner = inner if isinstance(inner, type) else type(inner)
    return issubclass(inner, ProblemSerializer)


class ApiAutoSchema(AutoSchema):
    def _get_response_for_code(self, serializer, status_code, media_types=None, direction="response"):
        if _is_problem(serializer):
            media_types = [PROBLEM_CONTENT_TYPE]  # errors are problem documents, whatever the view says
        return super()._get_response_for_code(serializer, status_code, media_types, direction)

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code, description in COMMON_PROBLEMS.items():
            if code not in responses:
                response = self._get_response_for_code(ProblemSerializer, code)
                response["description"] = description
                responses[code] = response
        return dict(sorted(responses.items()))


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token (`aq_…`) from /api/tokens/.",
        }
