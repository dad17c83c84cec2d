"""The load-test settings with no middleware at all: ``bench_http``'s second bare reference.

A gunicorn on these settings answers ``/healthz/live/`` through Django's handler, URL
resolver and view alone, so the page figures can be divided by a view with the whole
middleware stack and by one with none, in the same run. Benchmarks only.
"""

from .load_settings import *  # noqa: F401,F403

MIDDLEWARE: list[str] = []
