"""Rate limits per token, per signed-in user, or per address: a token bucket per client on
the same atomic Redis script as the answer limit (``grading.throttle.token_take``).

A rate "N/min" lets N requests through at once and then one every minute/N: concurrent
requests cannot overshoot it (the take is one Lua script on Redis), and with Redis
unreachable each process keeps its own bucket instead of failing the request.

Rates come from ``settings.API_RATE_LIMITS`` at each request, so a test or an operator
can change them without a restart of DRF's settings.
"""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from grading.throttle import token_take

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
        self.seconds_to_wait = token_take(
            key=f"api:{self.scope}:{ident}",
            burst=self.num_requests,
            per_second=self.num_requests / self.duration,
        )
        return self.seconds_to_wait == 0

    def wait(self):
        return self.seconds_to_wait

    def get_cache_key(self, request, view):  # pragma: no cover - token_take keys the bucket
        return None
