"""Let the registered LMSs show attnquiz in an iframe, and nobody else.

LMSs open LTI tools inside an iframe, which ``X_FRAME_OPTIONS = "DENY"`` forbids. With
``LTI_FRAME_ANCESTORS`` (a list of LMS origins, e.g. ``["https://canvas.example.edu"]``)
set, every response instead carries ``frame-ancestors 'self' <origins>`` in its
Content-Security-Policy, which browsers honour in place of X-Frame-Options, and no
X-Frame-Options header. Unset, responses say ``X-Frame-Options: DENY`` and
``frame-ancestors 'none'``.

``frame_ancestors`` is the one place that decides; ``attnquiz.security`` writes it into
the CSP. List ``LmsFramingMiddleware`` *after* ``XFrameOptionsMiddleware`` in
``MIDDLEWARE``: its response phase then runs first and marks the response exempt.
"""

from django.conf import settings


def frame_ancestors() -> list[str]:
    """The CSP ``frame-ancestors`` sources: the configured LMS origins, or none at all."""
    origins = list(getattr(settings, "LTI_FRAME_ANCESTORS", None) or [])
    return ["'self'", *origins] if origins else ["'none'"]


class LmsFramingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if frame_ancestors() != ["'none'"]:
            response.xframe_options_exempt = True
        return response
