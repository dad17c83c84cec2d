"""Response headers that limit what a page may do: Content-Security-Policy and Permissions-Policy.

The policy itself is ``CONTENT_SECURITY_POLICY`` in settings (django-csp's format);
``frame-ancestors`` is decided per response by ``lti.middleware.frame_ancestors`` — the
same function that decides whether ``X-Frame-Options`` is relaxed — so the two headers
never disagree.
"""

from __future__ import annotations

from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings

from lti.middleware import frame_ancestors


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, with frame-ancestors from the LMS framing setting and a
    Permissions-Policy header on every response."""

    def get_policy_parts(self, request, response, report_only: bool = False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only=report_only)
        replace = dict(parts.replace or {})
        replace.setdefault("frame-ancestors", frame_ancestors())
        parts.replace = replace
        return parts

    def process_response(self, request, response):
        response = super().process_response(request, response)
        policy = getattr(settings, "PERMISSIONS_POLICY", None)
        if policy and "Permissions-Policy" not in response:
            response["Permissions-Policy"] = ", ".join(
                f"{feature}=({' '.join(allowed)})" for feature, allowed in policy.items()
            )
        return response
