"""Production settings served over plain HTTP on 127.0.0.1: load tests and benchmarks only.

Everything is as in production (DEBUG off, PostgreSQL, Redis, persistent connections)
except what needs HTTPS: cookies are not marked Secure, and static files are served
without a collected manifest.
"""

import os

os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("SECURE_HSTS_SECONDS", "0")

from .settings import *  # noqa: E402,F401,F403

SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
