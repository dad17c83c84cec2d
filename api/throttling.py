"""Rate limits per token, per signed-in user, or per address, kept in the shared cache.

Rates come from ``settings.API_RATE_LIMITS`` at each request, so a test or an operator
can change them without a restart of DRF's settings.
"""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from .models import ApiToken


class ApiRateThrottle(SimpleRateThrottle):
    def get_rate(self):
        return None  # decided per request in allow_request, once the client is known

    def allow_request(self, request, view):
        if isinstance(request.auth, ApiToken):
            # The digest, not the row id: unique across databases sharing one cache.
            self.scope, ident = "token", request.auth.key_hash[:32]
        elif request.user and request.user.is_authenticated:
            self.scope, ident = "user", f"{request.user.pk}"
        else:
            self.scope, ident = "anon", self.get_ident(request)
        self.rate = settings.API_RATE_LIMITS[self.scope]
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.key = f"api-throttle:{self.scope}:{ident}"
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()
        if len(self.history) >= self.num_requests:
            return self.throttle_failure()
        return self.throttle_success()

    def get_cache_key(self, request, view):  # pragma: no cover - allow_request sets the key
        return self.key
