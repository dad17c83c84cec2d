"""Let the registered LMSs show attnquiz in an iframe, and nobody else.

LMSs open LTI tools inside an iframe, which ``X_FRAME_OPTIONS = "DENY"`` forbids. With
``LTI_FRAME_ANCESTORS`` (a list of LMS origins, e.g. ``["https://canvas.example.edu"]``)
set, every response instead carries ``Content-Security-Policy: frame-ancestors 'self'
<origins>``, which browsers honour in place of X-Frame-Options. Unset, nothing changes.

List it *after* ``XFrameOptionsMiddleware`` in ``MIDDLEWARE``: its response phase then
runs first and marks the response exempt.
"""

from django.conf import settings


class LmsFramingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        origins = getattr(settings, "LTI_FRAME_ANCESTORS", None)
        if origins:
            directive = "frame-ancestors 'self' " + " ".join(origins)
            existing = response.headers.get("Content-Security-Policy")
            response.headers["Content-Security-Policy"] = (
                f"{existing}; {directive}" if existing else directive
            )
            response.xframe_options_exempt = True
        return response
