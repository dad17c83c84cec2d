"""What each middleware costs per request: the stack with and without it, in one process.

A signed-in student asks ``--requests`` times for a page that reads ``request.user`` (as
every page does) and returns a few bytes, through Django's own request handler, first
with the whole ``MIDDLEWARE`` list and then with each middleware left out in turn;
rounds alternate the stacks. The figure for a middleware is the median CPU time per
request of the stack without it subtracted from that of the full stack: what removing it
would save. Run on the load settings (``attnquiz.load_settings``), with Redis for the
cached sessions. Benchmarks only.
"""

from __future__ import annotations

import statistics
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import include, path


def _reads_the_user(request):
    user = getattr(request, "user", None)  # absent when the stack leaves out authentication
    return HttpResponse("ok" if user is not None and user.is_authenticated else "anonymous", content_type="text/plain")


# Left out together with the session middleware: they cannot run without it.
NEED_SESSIONS = (
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
)
SESSIONS = "django.contrib.sessions.middleware.SessionMiddleware"

urlpatterns = [path("bench/", _reads_the_user), path("", include("attnquiz.urls"))]


class Command(BaseCommand):
    help = "CPU per request of the full middleware stack, and what leaving out each one saves."

    def add_arguments(self, parser):
        parser.add_argument("--requests", type=int, default=1000)
        parser.add_argument("--rounds", type=int, default=3)

    def handle(self, *args, requests, rounds, **options):
        user, _ = get_user_model().objects.get_or_create(username="bench-middleware")
        full = list(settings.MIDDLEWARE)
        stacks = {"(full stack)": full, "(none)": []}
        stacks.update({name: self.without(full, name) for name in full})
        timings: dict[str, list[float]] = {name: [] for name in stacks}
        for _ in range(rounds):
            for name, middleware in stacks.items():
                timings[name].append(self.cpu_per_request(middleware, user, requests))
        base = statistics.median(timings["(full stack)"])
        self.stdout.write(
            f"CPU per request, median of {rounds} rounds of {requests} (this process, Django's handler, "
            f"no HTTP server): full stack {1000 * base:.3f} ms, no middleware "
            f"{1000 * statistics.median(timings['(none)']):.3f} ms\n"
            f"{'middleware':<72}{'saves ms':>10}"
        )
        for name in full:
            saved = base - statistics.median(timings[name])
            label = f"{name} (+ auth, messages)" if name == SESSIONS else name
            self.stdout.write(f"{label:<72}{1000 * saved:>10.3f}")

    @staticmethod
    def without(full: list[str], name: str) -> list[str]:
        left_out = {name, *NEED_SESSIONS} if name == SESSIONS else {name}
        return [middleware for middleware in full if middleware not in left_out]

    def cpu_per_request(self, middleware: list[str], user, requests: int) -> float:
        with override_settings(MIDDLEWARE=middleware, ROOT_URLCONF=__name__):
            client = Client(HTTP_HOST="127.0.0.1")
            if "django.contrib.sessions.middleware.SessionMiddleware" in middleware:
                client.force_login(user)
            client.get("/bench/")  # builds the handler's middleware chain
            started = time.process_time()
            for _ in range(requests):
                client.get("/bench/")
            return (time.process_time() - started) / requests
